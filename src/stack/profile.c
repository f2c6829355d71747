// SPDX-License-Identifier: MIT
/*
 * The profile's rows (record --profile), in time order.
 *
 * Each CPU's ring holds its samples in time order, but the rings are read
 * one after the other, so a batch can hold a sample of one CPU taken after
 * one of another CPU that the next batch brings.  A row waits here until
 * every ring was read past it (struct ring's DRAINED, less the margin),
 * then the rows are written sorted (util/held.h).  One that still comes
 * after a later row was written (a drain thread kept from its CPU for
 * longer than the margin) is counted in prof_late and not written: the
 * table's order is the writer's rule.
 */
#include <stddef.h>

#include "stack/capture.h"

static int by_ts(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int ift_stk_profile_add(struct ift_stacks *s, const struct prow *r)
{
	if (!s->prof.size)
		s->prof = (struct ift_held){ .size = sizeof(*r), .cmp = by_ts,
					     .ts_off = offsetof(struct prow, ts) };
	return ift_held_add(&s->prof, r);
}

static int emit(void *ctx, const void *v)
{
	struct ift_stacks *s = ctx;
	const struct prow *r = v;
	uint64_t row[IFT_PF_NR];

	row[IFT_C_TS] = r->ts;
	row[IFT_C_CPU] = r->cpu;
	row[IFT_C_PID] = r->pid;
	row[IFT_C_TID] = r->tid;
	row[IFT_PF_STACK] = r->stack;
	row[IFT_PF_FLAGS] = r->flags;
	return ift_writer_append(s->w, IFT_T_PROFILE, row);
}

int ift_stk_profile_write(struct ift_stacks *s, uint64_t below)
{
	return ift_held_release(&s->prof, below, emit, s);
}

int ift_stacks_profile_flush(struct ift_stacks *s)
{
	return s ? ift_stk_profile_write(s, UINT64_MAX) : 0;
}
