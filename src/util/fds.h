/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_FDS_H
#define IFT_UTIL_FDS_H

/*
 * What a forked child of the recorder does with the descriptors it got: the
 * traced command marks them close-on-exec before it executes
 * (record/child.c), the teardown helper closes them (probe/session.c).
 */
#include <stdbool.h>

/*
 * Every descriptor above 2 but KEEP (-1: none) closed, or marked
 * close-on-exec when CLOEXEC.  Async-signal-safe and malloc-free: it runs
 * in a child forked from threads.
 */
void ift_fds_above2(int keep, bool cloexec);

/*
 * Every descriptor above 2 but KEEP closed one at a time, BEFORE(CTX)
 * called before each: for a teardown whose every close may hold a kernel
 * lock that others wait for (probe/session.c).  As ift_fds_above2() for
 * where it may run, if BEFORE is.
 */
void ift_fds_close_each(int keep, void (*before)(void *ctx), void *ctx);

#endif
