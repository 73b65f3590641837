// SPDX-License-Identifier: GPL-2.0
/*
 * sector-io: one direct (O_DIRECT), synchronous read or write of whole
 * 512-byte sectors, for tests that must hit exact sectors (busybox dd has
 * no O_DIRECT and reads through the page cache, a page at a time).
 *
 * usage: sector-io read DEV SECTOR COUNT [OUT]   data to OUT (or stdout)
 *        sector-io write DEV SECTOR COUNT IN     data from IN
 *        sector-io dsync DEV SECTOR COUNT IN     a write with O_DSYNC: FUA,
 *                                                or write + flush
 *        sector-io flush DEV                     fsync: a cache flush
 *   exits 0 if the whole transfer succeeded; 3 with a message if the
 *   device failed it with EIO (what a test of I/O errors expects); 2 on
 *   bad usage; 1 with a message on any other failure (a short transfer
 *   included).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "sector-io: %s: %s\n", what, strerror(errno));
	return 1;
}

/* A failed transfer: 3 for the device's EIO, 1 for anything else. */
static int io_failed(const char *what, ssize_t n)
{
	if (n >= 0) {
		fprintf(stderr, "sector-io: %s: short transfer (%zd bytes)\n", what, n);
		return 1;
	}
	int eio = errno == EIO;
	die(what);
	return eio ? 3 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "flush")) {
		int fd = open(argv[2], O_WRONLY);
		if (fd < 0)
			return die(argv[2]);
		if (fsync(fd))
			return die("fsync");
		return 0;
	}
	/* "" for no operation: the usage check below catches it. */
	const char *op = argc > 1 ? argv[1] : "";
	int dsync = !strcmp(op, "dsync");
	int write_op = dsync || !strcmp(op, "write");
	if (argc < 5 || (!write_op && strcmp(op, "read")) || (write_op && argc < 6)) {
		fprintf(stderr, "usage: sector-io read|write|dsync DEV SECTOR COUNT [FILE], sector-io flush DEV\n");
		return 2;
	}
	off_t off = strtoll(argv[3], NULL, 0) * 512;
	size_t len = strtoull(argv[4], NULL, 0) * 512;
	void *buf;

	if (posix_memalign(&buf, 4096, len ? len : 512))
		return die("posix_memalign");
	int fd = open(argv[2], (write_op ? O_WRONLY : O_RDONLY) | O_DIRECT | (dsync ? O_DSYNC : 0));
	if (fd < 0)
		return die(argv[2]);
	if (write_op) {
		int in = open(argv[5], O_RDONLY);
		if (in < 0 || read(in, buf, len) != (ssize_t)len)
			return die(argv[5]);
		close(in);
		ssize_t n = pwrite(fd, buf, len, off);
		if (n != (ssize_t)len)
			return io_failed("pwrite", n);
		return 0;
	}
	ssize_t n = pread(fd, buf, len, off);
	if (n != (ssize_t)len)
		return io_failed("pread", n);
	int out = argc > 5 ? open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (out < 0 || write(out, buf, len) != (ssize_t)len)
		return die("output");
	return 0;
}
