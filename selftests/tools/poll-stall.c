// SPDX-License-Identifier: GPL-2.0
/*
 * poll-stall: a poller that stops polling. Submits COUNT direct 4 KiB
 * reads of DEV (STRIDE KiB apart, 64 by default: apart, the block layer
 * cannot merge them; 4 makes them adjacent, and io_uring plugs three or
 * more, so they merge) on an io_uring set up with
 * IORING_SETUP_IOPOLL (polled I/O: they complete only when someone polls
 * the device's poll queue), prints "submitted N", then does not poll for
 * SECONDS seconds, or until SIGUSR1: without IORING_ENTER_GETEVENTS
 * io_uring never calls the driver's poll. Then it reaps the COUNT
 * completions and prints "res R" for each (a negative errno for a failed
 * read, e.g. -110 for ETIMEDOUT).
 *
 * Raw system calls: the guest has no liburing.
 *
 * usage: poll-stall DEV COUNT SECONDS [STRIDE]
 *   exits 0 after printing every completion, 1 with a message on an
 *   error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* SIGUSR1 only has to interrupt sleep(). */
static void wake(int sig)
{
	(void)sig;
}

static int die(const char *what)
{
	fprintf(stderr, "poll-stall: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: poll-stall DEV COUNT SECONDS [STRIDE]\n");
		return 2;
	}
	unsigned count = strtoul(argv[2], NULL, 0);
	unsigned secs = strtoul(argv[3], NULL, 0);
	unsigned long long stride = argc == 5 ? strtoull(argv[4], NULL, 0) * 1024 : 65536;
	if (count == 0 || count > 64) {
		fprintf(stderr, "poll-stall: COUNT must be 1..64\n");
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake;
	if (sigaction(SIGUSR1, &sa, NULL))
		return die("sigaction");
	int fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0)
		return die(argv[1]);
	void *buf;
	if (posix_memalign(&buf, 4096, (size_t)count * 4096))
		return die("posix_memalign");

	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_IOPOLL;
	int ring = syscall(__NR_io_uring_setup, 64, &p);
	if (ring < 0)
		return die("io_uring_setup");
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(*sqes),
					 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
					 IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return die("mmap");

	unsigned *sq_tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	unsigned *sq_array = (unsigned *)(sq + p.sq_off.array);
	unsigned tail = *sq_tail;
	for (unsigned i = 0; i < count; i++) {
		unsigned idx = (tail + i) & *sq_mask;
		struct io_uring_sqe *sqe = &sqes[idx];
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_READ;
		sqe->fd = fd;
		sqe->addr = (unsigned long)buf + (size_t)i * 4096;
		sqe->len = 4096;
		sqe->off = i * stride;
		sqe->user_data = i;
		sq_array[idx] = idx;
	}
	/* Release: the kernel sees the entries before the new tail. */
	atomic_store_explicit((_Atomic unsigned *)sq_tail, tail + count, memory_order_release);
	/* No IORING_ENTER_GETEVENTS: submit only, never poll. */
	int n = syscall(__NR_io_uring_enter, ring, count, 0, 0, NULL, 0);
	if (n < 0)
		return die("io_uring_enter (submit)");
	printf("submitted %d\n", n);
	fflush(stdout);
	sleep(secs);

	unsigned *cq_head = (unsigned *)(cq + p.cq_off.head);
	unsigned *cq_tail = (unsigned *)(cq + p.cq_off.tail);
	unsigned *cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	unsigned seen = 0;
	while (seen < (unsigned)n) {
		unsigned head = *cq_head;
		unsigned t = atomic_load_explicit((_Atomic unsigned *)cq_tail, memory_order_acquire);
		if (head == t) {
			/* Polls now: what is still parked completes. */
			if (syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL,
				    0) < 0 && errno != EINTR)
				return die("io_uring_enter (reap)");
			continue;
		}
		for (; head != t; head++, seen++)
			printf("res %d\n", cqes[head & *cq_mask].res);
		atomic_store_explicit((_Atomic unsigned *)cq_head, head, memory_order_release);
	}
	fflush(stdout);
	return 0;
}
