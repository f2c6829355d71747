// SPDX-License-Identifier: MIT
/*
 * close_range() does it in one call (Linux 5.11); before that, the
 * descriptors /proc/self/fd lists, read with getdents64 (no malloc), or
 * without /proc every possible one.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fds.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static void one(int fd, bool cloexec)
{
	if (cloexec)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	else
		close(fd);
}

#ifdef SYS_close_range
static bool by_range(int keep, bool cloexec)
{
	unsigned flags = cloexec ? CLOSE_RANGE_CLOEXEC : 0;

	if (keep < 3)
		return syscall(SYS_close_range, 3U, ~0U, flags) == 0;
	if (keep > 3 && syscall(SYS_close_range, 3U, (unsigned)keep - 1, flags))
		return false;
	return syscall(SYS_close_range, (unsigned)keep + 1, ~0U, flags) == 0;
}
#endif

/* What is done to each descriptor: marked, closed, or closed after a call. */
struct act {
	bool cloexec;
	void (*before)(void *ctx);
	void *ctx;
};

static void act_on(const struct act *a, int fd)
{
	if (a->before) {
		if (fcntl(fd, F_GETFD) < 0)
			return;		/* not open: nothing to wait for */
		a->before(a->ctx);
	}
	one(fd, a->cloexec);
}

static void each_fd(int keep, const struct act *a)
{
	char buf[1024];
	struct rlimit rl;
	long n, max;
	int dir;

	dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		/* closing while listing: getdents64 goes on from its offset */
		while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
				int fd = 0;
				const char *p = d->name;

				off += d->reclen;
				if (*p < '0' || *p > '9')
					continue;
				for (; *p >= '0' && *p <= '9'; p++)
					fd = fd * 10 + (*p - '0');
				if (fd > 2 && fd != dir && fd != keep)
					act_on(a, fd);
			}
		}
		close(dir);
		if (n == 0)
			return;
	}
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	      rl.rlim_cur < (1U << 20) ? (long)rl.rlim_cur : 1L << 20;
	for (long fd = 3; fd < max; fd++)
		if (fd != keep)
			act_on(a, (int)fd);
}

void ift_fds_above2(int keep, bool cloexec)
{
	const struct act a = { .cloexec = cloexec };

#ifdef SYS_close_range
	if (by_range(keep, cloexec))
		return;
#endif
	each_fd(keep, &a);
}

void ift_fds_close_each(int keep, void (*before)(void *ctx), void *ctx)
{
	const struct act a = { .before = before, .ctx = ctx };

	each_fd(keep, &a);
}
