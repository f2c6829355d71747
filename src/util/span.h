/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_SPAN_H
#define IFT_UTIL_SPAN_H

/* Times on one clock (ns): the lesser and greater of two, and how much of
   one span lies in another; whether N bytes at an address lie in a range. */
#include <stdbool.h>
#include <stdint.h>

static inline uint64_t ift_min(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

static inline uint64_t ift_max(uint64_t x, uint64_t y)
{
	return x > y ? x : y;
}

/* Length of [s, e] inside [lo, hi]. */
static inline uint64_t ift_overlap(uint64_t s, uint64_t e, uint64_t lo, uint64_t hi)
{
	s = ift_max(s, lo);
	e = ift_min(e, hi);
	return e > s ? e - s : 0;
}

/*
 * Whether [ADDR, ADDR + N) lies inside [BASE, BASE + LEN), with no sum that
 * can wrap: an address a stack's garbage made (0xffffffffffffffc0) plus 8
 * must not come out small and pass.
 */
static inline bool ift_span_holds(uint64_t base, uint64_t len, uint64_t addr, uint64_t n)
{
	return addr >= base && n <= len && addr - base <= len - n;
}

#endif
