// SPDX-License-Identifier: MIT
/*
 * Start-up, steady state and tail: the calls' read before the analysis pass
 * (plan.c) gives each calling thread's sequence of outermost ops in the
 * window (ift_az_phases_row()); ift_az_loop_find() (loop.c) finds its
 * training loop in it (ift_az_phases_loops()).  The plan's second read of
 * the calls gives the entry of each iteration's first call
 * (ift_az_phases_bound()), so that warm-up iterations (warmup()) go to the
 * start-up.  The pass and its hooks
 * can then tell, for any moment of a thread, which stage it belongs to.
 * The sequences are freed once the loops are known: the memory is four
 * bytes per call and eight per iteration, for as long as this step lasts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"
#include "util/tidmap.h"

struct seq {
	uint32_t tid;
	uint32_t *ops;
	size_t n, cap;
	uint64_t first_ts;
	size_t first, end;	/* the loop's calls [first, end), found */
	size_t seen;		/* calls met in the second read */
	uint64_t *starts;	/* each iteration's first entry */
};

/* An iteration this many times the median at the loop's start is warm-up. */
#define WARMUP_FACTOR	4

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

static struct seq *seq_of(struct az_seqs *q, uint32_t tid, uint64_t ts)
{
	if (q->last < q->n && q->v[q->last].tid == tid)
		return &q->v[q->last];
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i].tid == tid) {
			q->last = i;
			return &q->v[i];
		}
	if (ift_array_grow((void **)&q->v, &q->cap, q->n + 1, sizeof(*q->v)) < 0)
		return NULL;
	memset(&q->v[q->n], 0, sizeof(*q->v));
	q->v[q->n].tid = tid;
	q->v[q->n].first_ts = ts;
	q->last = q->n++;
	return &q->v[q->last];
}

int ift_az_phases_row(struct az_seqs *q, const uint64_t *r)
{
	struct seq *s;

	if (!outermost(r))
		return 0;
	s = seq_of(q, (uint32_t)r[IFT_C_TID], r[IFT_C_TS]);
	if (!s || ift_array_grow((void **)&s->ops, &s->cap, s->n + 1, sizeof(*s->ops)) < 0)
		return -ENOMEM;
	s->ops[s->n++] = (uint32_t)r[IFT_CALL_OP];
	return 0;
}

void ift_az_seqs_release(struct az_seqs *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->v[i].ops);
		free(q->v[i].starts);
	}
	free(q->v);
	memset(q, 0, sizeof(*q));
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return (p > q) - (p < q);
}

/*
 * The first iterations of a loop are often no steady state yet: the first
 * batch waits for the workers to start, the allocator grows, kernels are
 * tuned (on the H200, 5.5 s of a DataLoader's 7 iterations).  Leading
 * iterations over WARMUP_FACTOR times the median are start-up (warm-up),
 * as long as AZ_LOOP_MIN_ITERS are left; L's steady state then begins at
 * the first one that is not.  STARTS: each iteration's first entry.
 */
static int warmup(struct ift_loop_info *l, const uint64_t *starts)
{
	uint64_t n = l->iterations, *d, med;
	uint64_t k = 0;

	l->from_ts = starts[0];
	if (n <= AZ_LOOP_MIN_ITERS)
		return 0;
	d = malloc(n * 2 * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? starts[i + 1] : l->to_ts;

		d[i] = end > starts[i] ? end - starts[i] : 0;
		d[n + i] = d[i];
	}
	qsort(d + n, n, sizeof(*d), cmp_u64);
	med = d[n + n / 2];
	while (n - k > AZ_LOOP_MIN_ITERS && d[k] / WARMUP_FACTOR > med)
		k++;
	free(d);
	l->warmup = k;
	l->iterations -= k;
	l->from_ts = starts[k];
	return 0;
}


int ift_az_phases_loops(struct ift_analysis *a, struct az_seqs *q)
{
	struct seq *v = q->v;

	a->loops = calloc(q->n ? q->n : 1, sizeof(*a->loops));
	if (!a->loops)
		return -ENOMEM;
	a->nloops = q->n;
	for (size_t i = 0; i < q->n; i++) {
		struct az_loop l;
		int ret = ift_az_loop_find(v[i].ops, v[i].n, &l);

		if (ret < 0)
			return ret;
		a->loops[i].tid = v[i].tid;
		if ((ret = ift_tidmap_set(&a->lmap, v[i].tid, i)) < 0)
			return ret;
		a->loops[i].info.calls = v[i].n;
		if (l.period && l.end > l.first) {
			a->loops[i].info.period = l.period;
			a->loops[i].info.iterations = l.iterations;
		}
		v[i].first = l.first;
		v[i].end = l.period ? l.end : 0;
		if (l.period && !(v[i].starts = calloc(l.iterations, sizeof(uint64_t))))
			return -ENOMEM;
		free(v[i].ops);		/* the loop is found: the ops go */
		v[i].ops = NULL;
	}
	q->last = 0;
	return 0;
}

int ift_az_phases_bound(struct ift_analysis *a, struct az_seqs *q, const uint64_t *r)
{
	uint32_t tid = (uint32_t)r[IFT_C_TID];
	struct ift_loop_info *li;
	struct seq *v = q->v;
	size_t i = q->last;

	if (!outermost(r))
		return 0;
	if (i >= q->n || v[i].tid != tid)
		for (i = 0; i < q->n && v[i].tid != tid; i++)
			;
	if (i == q->n)
		return 0;
	q->last = i;
	li = &a->loops[i].info;
	/* the entry of call FIRST and of each iteration after it, and the end
	   of the calls up to END */
	if (li->period && v[i].seen >= v[i].first &&
	    (v[i].seen - v[i].first) % li->period == 0 &&
	    (v[i].seen - v[i].first) / li->period < li->iterations)
		v[i].starts[(v[i].seen - v[i].first) / li->period] = r[IFT_C_TS];
	if (li->period && v[i].seen >= v[i].first && v[i].seen < v[i].end &&
	    r[IFT_C_TS] + r[IFT_CALL_DUR] > li->to_ts)
		li->to_ts = r[IFT_C_TS] + r[IFT_CALL_DUR];
	v[i].seen++;
	return 0;
}

int ift_az_phases_finish(struct ift_analysis *a, struct az_seqs *q)
{
	int ret = 0;

	for (size_t i = 0; i < q->n && ret >= 0; i++) {
		struct ift_loop_info *li = &a->loops[i].info;

		if (li->period)
			ret = warmup(li, q->v[i].starts);
		li->from_ns = li->from_ts - ift_min(li->from_ts, a->sum.start_ts);
		li->to_ns = li->to_ts - ift_min(li->to_ts, a->sum.start_ts);
	}
	ift_az_seqs_release(q);
	return ret < 0 ? ret : 0;
}

const struct ift_loop_info *ift_analysis_loop(const struct ift_analysis *a, uint32_t tid)
{
	size_t i;

	return ift_tidmap_get(&a->lmap, tid, &i) ? &a->loops[i].info : NULL;
}
