/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_SPAN_H
#define IFT_UTIL_SPAN_H

/* Times on one clock (ns): the lesser and greater of two, and how much of
   one span lies in another. */
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

#endif
