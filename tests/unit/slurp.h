/* SPDX-License-Identifier: MIT */
#ifndef IFT_TEST_SLURP_H
#define IFT_TEST_SLURP_H

/* A file's whole text, NUL-ended (the caller frees it), or NULL where it
   cannot be opened; for cmocka tests (a failed allocation fails the test). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	close(fd);
	buf[len] = 0;
	return buf;
}

#endif
