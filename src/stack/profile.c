// SPDX-License-Identifier: MIT
/*
 * The profile's rows (record --profile), in time order.
 *
 * Each CPU's ring holds its samples in time order, but the rings are read
 * one after the other, so a batch can hold a sample of one CPU taken after
 * one of another CPU that the next batch brings.  A row waits here until
 * every ring was read past it (struct ring's DRAINED, less the margin),
 * then the rows are written sorted.  One that still comes after a later row
 * was written (a drain thread kept from its CPU for longer than the margin)
 * is counted in prof_late and not written: the table's order is the
 * writer's rule.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "stack/capture.h"

int ift_stk_profile_add(struct ift_stacks *s, const struct prow *r)
{
	if (ift_array_grow((void **)&s->prof, &s->profcap, s->nprof + 1, sizeof(*s->prof)) < 0)
		return -ENOMEM;
	s->prof[s->nprof++] = *r;
	return 0;
}

static int by_ts(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int ift_stk_profile_write(struct ift_stacks *s, uint64_t below)
{
	size_t i, k = 0;
	int ret = 0;

	if (!s->nprof)
		return 0;
	qsort(s->prof, s->nprof, sizeof(*s->prof), by_ts);
	for (i = 0; i < s->nprof && s->prof[i].ts < below; i++) {
		const struct prow *r = &s->prof[i];
		uint64_t row[IFT_PF_NR];

		if (r->ts < s->prof_last) {
			s->st.prof_late++;
			continue;
		}
		row[IFT_C_TS] = r->ts;
		row[IFT_C_CPU] = r->cpu;
		row[IFT_C_PID] = r->pid;
		row[IFT_C_TID] = r->tid;
		row[IFT_PF_STACK] = r->stack;
		row[IFT_PF_FLAGS] = r->flags;
		if ((ret = ift_writer_append(s->w, IFT_T_PROFILE, row)) < 0)
			break;
		s->prof_last = r->ts;
	}
	/* what is left waits for the next read of the rings */
	for (; i < s->nprof; i++)
		s->prof[k++] = s->prof[i];
	s->nprof = k;
	return ret;
}

int ift_stacks_profile_flush(struct ift_stacks *s)
{
	return s ? ift_stk_profile_write(s, UINT64_MAX) : 0;
}
