// SPDX-License-Identifier: GPL-2.0
/*
 * insmod-once: load a module with one finit_module() call.
 *
 * busybox's insmod calls init_module() with the file's image whenever
 * finit_module() fails, for any reason, so a module whose init refuses its
 * parameters runs init twice and logs each refusal twice. The selftests
 * count and read those log lines; lib.sh's insmod is this program.
 *
 * usage: insmod-once FILE [PARAM=VALUE ...]
 *   exits 0 if the module loaded; 1 with busybox's message otherwise
 *   ("insmod: can't insert 'FILE': <strerror>"); 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: insmod-once FILE [PARAM=VALUE ...]\n");
		return 2;
	}
	/* The parameters, space-separated, as insmod passes them. */
	size_t len = 1;
	for (int i = 2; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *params = calloc(1, len);
	if (!params) {
		perror("insmod-once");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		if (i > 2)
			strcat(params, " ");
		strcat(params, argv[i]);
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, params, 0) != 0) {
		fprintf(stderr, "insmod: can't insert '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
