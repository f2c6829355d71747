// SPDX-License-Identifier: MIT
/*
 * Start-up, steady state and tail: before the analysis pass, one read of
 * the calls table gives each calling thread's sequence of outermost ops in
 * the window; az_loop_find() (loop.c) finds its training loop in it.  The
 * pass and its hooks can then tell, for any moment of a thread, which stage
 * it belongs to.  The sequences are freed once the loops are known: the
 * memory is four bytes per call, for as long as this step lasts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "../util/array.h"

struct seq {
	uint32_t tid;
	uint32_t *ops;
	size_t n, cap;
	uint64_t first_ts;
	size_t first, end;	/* the loop's calls [first, end), found */
	size_t seen;		/* calls met in the second read */
};

enum ift_stage ift_loop_stage(const struct ift_loop_info *l, uint64_t ts)
{
	if (!l || !l->period || ts <= l->from_ts)
		return IFT_STAGE_STARTUP;
	return ts > l->to_ts ? IFT_STAGE_TAIL : IFT_STAGE_STEADY;
}

const char *ift_stage_name(enum ift_stage stage)
{
	switch (stage) {
	case IFT_STAGE_STARTUP:
		return "startup";
	case IFT_STAGE_STEADY:
		return "steady";
	case IFT_STAGE_TAIL:
		return "tail";
	}
	return "";
}

static bool outermost(const uint64_t *r)
{
	return !r[IFT_CALL_DEPTH] && !(r[IFT_CALL_FLAGS] & IFT_CALL_F_NESTED);
}

static struct seq *seq_of(struct seq **v, size_t *n, size_t *cap, uint32_t tid,
			  uint64_t ts, size_t *last)
{
	if (*last < *n && (*v)[*last].tid == tid)
		return &(*v)[*last];
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].tid == tid) {
			*last = i;
			return &(*v)[i];
		}
	if (ift_array_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
		return NULL;
	(*v)[*n].tid = tid;
	(*v)[*n].first_ts = ts;
	*last = (*n)++;
	return &(*v)[*last];
}

/* Reads the window's calls twice: their ops, then the times of the calls
   that bound each loop. */
int az_phases_find(struct ift_analysis *a)
{
	struct seq *v = NULL;
	size_t n = 0, cap = 0, last = 0;
	struct ift_cursor *cur;
	struct ift_event ev;
	int ret = 0;

	cur = ift_cursor_new(a->t, 1U << IFT_T_CALLS, a->lo);
	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		struct seq *s;

		if (r[IFT_C_TS] > a->hi)
			break;
		if (r[IFT_C_TS] < a->lo || !outermost(r))
			continue;
		s = seq_of(&v, &n, &cap, (uint32_t)r[IFT_C_TID], r[IFT_C_TS], &last);
		if (!s || ift_array_grow((void **)&s->ops, &s->cap, s->n + 1,
					 sizeof(*s->ops)) < 0) {
			ret = -ENOMEM;
			break;
		}
		s->ops[s->n++] = (uint32_t)r[IFT_CALL_OP];
	}
	ift_cursor_free(cur);
	if (ret < 0)
		goto out;
	a->loops = calloc(n ? n : 1, sizeof(*a->loops));
	if (!a->loops) {
		ret = -ENOMEM;
		goto out;
	}
	a->nloops = n;
	for (size_t i = 0; i < n; i++) {
		struct az_loop l;

		ret = az_loop_find(v[i].ops, v[i].n, &l);
		if (ret < 0)
			goto out;
		a->loops[i].tid = v[i].tid;
		a->loops[i].info.calls = v[i].n;
		if (l.period && l.end > l.first) {
			a->loops[i].info.period = l.period;
			a->loops[i].info.iterations = l.iterations;
		}
		v[i].first = l.first;
		v[i].end = l.period ? l.end : 0;
	}
	if (!n)
		goto out;
	/* the second read: the entry of call FIRST and the end of the calls
	   up to END of each loop */
	cur = ift_cursor_new(a->t, 1U << IFT_T_CALLS, a->lo);
	if (!cur) {
		ret = -ENOMEM;
		goto out;
	}
	last = 0;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		uint32_t tid = (uint32_t)r[IFT_C_TID];
		struct ift_loop_info *li;
		size_t i = last;

		if (r[IFT_C_TS] > a->hi)
			break;
		if (r[IFT_C_TS] < a->lo || !outermost(r))
			continue;
		if (i >= n || v[i].tid != tid)
			for (i = 0; i < n && v[i].tid != tid; i++)
				;
		if (i == n)
			continue;
		last = i;
		li = &a->loops[i].info;
		if (li->period && v[i].seen == v[i].first)
			li->from_ts = r[IFT_C_TS];
		if (li->period && v[i].seen >= v[i].first && v[i].seen < v[i].end &&
		    r[IFT_C_TS] + r[IFT_CALL_DUR] > li->to_ts)
			li->to_ts = r[IFT_C_TS] + r[IFT_CALL_DUR];
		v[i].seen++;
	}
	ift_cursor_free(cur);
	for (size_t i = 0; i < n; i++) {
		struct ift_loop_info *li = &a->loops[i].info;

		li->from_ns = li->from_ts - az_min(li->from_ts, a->sum.start_ts);
		li->to_ns = li->to_ts - az_min(li->to_ts, a->sum.start_ts);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].ops);
	free(v);
	return ret < 0 ? ret : 0;
}

const struct ift_loop_info *ift_analysis_loop(const struct ift_analysis *a, uint32_t tid)
{
	for (size_t i = 0; i < a->nloops; i++)
		if (a->loops[i].tid == tid)
			return &a->loops[i].info;
	return NULL;
}
