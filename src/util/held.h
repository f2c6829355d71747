/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_HELD_H
#define IFT_UTIL_HELD_H

/*
 * Rows that come a little out of time order (perf rings read one after the
 * other, a helper's records stamped before they arrive), held until a
 * watermark says no earlier one can come, then handed on sorted.  A row
 * that still comes after a later one was handed on is counted as late and
 * dropped: a trace table's rows are in time order.
 *
 * Rows are SIZE bytes with a uint64_t time at TS_OFF; CMP orders them
 * (time first).  Zero it and set those three before the first add.
 */
#include <stddef.h>
#include <stdint.h>

struct ift_held {
	size_t size, ts_off;
	int (*cmp)(const void *, const void *);
	void *v;
	size_t n, cap;
	uint64_t last;		/* the newest row's time handed on */
	uint64_t late;		/* rows dropped for coming after it */
};

/* Holds a copy of ROW; 0 or -ENOMEM. */
int ift_held_add(struct ift_held *h, const void *row);

/*
 * Hands the rows older than BELOW to EMIT in order (UINT64_MAX: all),
 * skipping and counting the late; the rest wait.  Returns 0, or EMIT's
 * first negative return (the rows after it wait too).
 */
int ift_held_release(struct ift_held *h, uint64_t below,
		     int (*emit)(void *ctx, const void *row), void *ctx);

void ift_held_free(struct ift_held *h);

#endif
