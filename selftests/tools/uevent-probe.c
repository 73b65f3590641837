// SPDX-License-Identifier: GPL-2.0
/*
 * uevent-probe: for every "add" uevent of a disk whose name starts with a
 * prefix, check at once, before anything else runs in this process, that
 * the given sysfs files of the disk exist: what a udev rule reading them at
 * that event would see.
 *
 * It busy-polls the uevent netlink socket so that it looks as soon as the
 * kernel has broadcast the event, not after a scheduler delay.
 *
 * usage: uevent-probe READY_FILE PREFIX COUNT TIMEOUT_S FILE...
 *   creates READY_FILE once listening; prints one line per matching disk:
 *   "add <disk> ok" or "add <disk> missing <file>"; exits 0 after COUNT
 *   disks, 1 on timeout or error.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	char buf[8192], path[4096];
	int fd, seen = 0, count, nfiles;
	double deadline;

	if (argc < 6) {
		fprintf(stderr, "usage: %s READY PREFIX COUNT TIMEOUT_S FILE...\n", argv[0]);
		return 2;
	}
	count = atoi(argv[3]);
	deadline = now() + atof(argv[4]);
	nfiles = argc - 5;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("uevent socket");
		return 1;
	}
	close(open(argv[1], O_CREAT | O_WRONLY, 0644));

	while (seen < count) {
		const char *action = NULL, *devpath = NULL, *devname = NULL;
		ssize_t len = recv(fd, buf, sizeof(buf) - 1, 0);

		if (len < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				perror("recv");
				return 1;
			}
			if (now() > deadline) {
				fprintf(stderr, "timeout after %d of %d disks\n", seen, count);
				return 1;
			}
			continue;
		}
		buf[len] = '\0';
		for (char *p = buf; p < buf + len; p += strlen(p) + 1) {
			if (!strncmp(p, "ACTION=", 7))
				action = p + 7;
			else if (!strncmp(p, "DEVPATH=", 8))
				devpath = p + 8;
			else if (!strncmp(p, "DEVNAME=", 8))
				devname = p + 8;
		}
		if (!action || !devpath || !devname || strcmp(action, "add") ||
		    strncmp(devname, argv[2], strlen(argv[2])) || strchr(devname, 'p'))
			continue;
		/* Look first, print afterwards: printing takes time. */
		int missing = -1;

		for (int i = 0; i < nfiles && missing < 0; i++) {
			struct stat st;

			snprintf(path, sizeof(path), "/sys%s/%s", devpath, argv[5 + i]);
			if (stat(path, &st))
				missing = i;
		}
		if (missing < 0)
			printf("add %s ok\n", devname);
		else
			printf("add %s missing %s\n", devname, argv[5 + missing]);
		fflush(stdout);
		seen++;
	}
	return 0;
}
