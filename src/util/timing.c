// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <time.h>

#include "timing.h"

uint64_t ift_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int64_t ift_wall_offset_ns(void)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;

	for (int i = 0; i < 5; i++) {
		struct timespec rt;
		uint64_t a = ift_mono_ns(), b;

		clock_gettime(CLOCK_REALTIME, &rt);
		b = ift_mono_ns();
		if (b - a < best) {
			best = b - a;
			off = ((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec) - (int64_t)(a + (b - a) / 2);
		}
	}
	return off;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

uint64_t ift_min_u64(const uint64_t *v, size_t n)
{
	uint64_t m = v[0];

	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

uint64_t ift_median_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}
