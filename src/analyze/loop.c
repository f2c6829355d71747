// SPDX-License-Identifier: MIT
/* PLACEHOLDER until wt-loop lands: the longest exact repeat, periods <= 64. */
#include <errno.h>
#include "analyze.h"

int az_loop_find(const uint32_t *ops, size_t n, struct az_loop *out)
{
	size_t best = 0, bs = 0;
	uint32_t bp = 0;

	*out = (struct az_loop){ 0 };
	for (uint32_t p = 1; p <= 64 && (size_t)p * 3 <= n; p++) {
		size_t run = 0, s = 0;

		for (size_t i = 0; i + p < n; i++) {
			if (ops[i] == ops[i + p]) {
				if (!run)
					s = i;
				run++;
				if (run > best) {
					best = run;
					bs = s;
					bp = p;
				}
			} else {
				run = 0;
			}
		}
	}
	if (!bp || (best + bp) / bp < 3)
		return 0;
	out->period = bp;
	out->first = bs;
	out->end = bs + (best + bp) / bp * bp;
	out->iterations = (best + bp) / bp;
	return 0;
}
