// SPDX-License-Identifier: MIT
/*
 * Call sites: which stacks a CUDA op was called from, and how much of the
 * op's time and of its tail each one accounts for.  Only calls that carry a
 * stack (record --stack) count, so the shares hold whatever --stack-period
 * sampled.  The report's are tallied during the analysis pass, by (op,
 * stack), against each op's p99 found before it (durs.c);
 * ift_sites_run() is a pass over `calls' alone, for other windows and a
 * process's calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

struct crow {
	uint64_t op, stack, dur;
};

static int by_op_dur(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

static int by_op_stack(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

static int by_total(const void *a, const void *b)
{
	const struct ift_site *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

size_t az_sites_finish(struct ift_site *sites, size_t first, size_t ns, uint64_t ncalls,
		       uint64_t total, uint64_t tail, unsigned top)
{
	for (size_t i = first; i < ns; i++) {
		sites[i].share_calls = ncalls ? (double)sites[i].calls / (double)ncalls : 0;
		sites[i].share_time = total ? (double)sites[i].total_ns / (double)total : 0;
		sites[i].share_tail = tail ? (double)sites[i].tail_ns / (double)tail : 0;
	}
	qsort(sites + first, ns - first, sizeof(*sites), by_total);
	return top && ns - first > top ? first + top : ns;
}

/* ---- in the analysis pass ------------------------------------------ */

static size_t site_hash(uint32_t op, uint64_t stack, size_t cap)
{
	uint64_t k = (stack ^ ((uint64_t)op << 48)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(k >> 32) & (cap - 1);
}

static int tally_grow(struct ift_analysis *a)
{
	size_t cap = a->capstab ? a->capstab * 2 : 256;
	struct az_site *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->capstab; i++) {
		size_t h;

		if (!a->stab[i].calls)
			continue;
		for (h = site_hash(a->stab[i].op, a->stab[i].stack, cap); v[h].calls;
		     h = (h + 1) & (cap - 1))
			;
		v[h] = a->stab[i];
	}
	free(a->stab);
	a->stab = v;
	a->capstab = cap;
	return 0;
}

int az_sites_call(struct ift_analysis *a, uint32_t op, uint64_t stack, uint64_t dur)
{
	struct az_site *x;
	size_t h;
	int ret;

	if ((a->nstab + 1) * 2 > a->capstab && (ret = tally_grow(a)) < 0)
		return ret;
	for (h = site_hash(op, stack, a->capstab);
	     a->stab[h].calls && (a->stab[h].op != op || a->stab[h].stack != stack);
	     h = (h + 1) & (a->capstab - 1))
		;
	x = &a->stab[h];
	if (!x->calls) {
		x->op = op;
		x->stack = stack;
		a->nstab++;
	}
	x->calls++;
	x->total_ns += dur;
	if (op < a->nopm && dur >= a->opq[op].stack_p99) {
		x->tail_calls++;
		x->tail_ns += dur;
	}
	return 0;
}

static int by_op(const void *x, const void *y)
{
	const struct az_site *p = x, *q = y;

	if (p->op != q->op)
		return p->op < q->op ? -1 : 1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

int az_sites_build(struct ift_analysis *a)
{
	struct az_site *v = a->stab;
	size_t n = 0, ns = 0;

	for (size_t i = 0; i < a->capstab; i++)
		if (a->stab[i].calls)
			v[n++] = a->stab[i];
	a->sites = az_alloc(a, n, sizeof(*a->sites));
	if (!a->sites)
		return -ENOMEM;
	if (n > 1)
		qsort(v, n, sizeof(*v), by_op);
	for (size_t i = 0, j; i < n; i = j) {
		const struct ift_op *op = ift_trace_op(a->t, v[i].op);
		uint64_t total = 0, tail = 0, ncalls = 0;
		size_t first = ns;

		for (j = i; j < n && v[j].op == v[i].op; j++) {
			a->sites[ns++] = (struct ift_site){
				.op = op ? op->name : "", .stack = v[j].stack,
				.calls = v[j].calls, .total_ns = v[j].total_ns,
				.tail_calls = v[j].tail_calls, .tail_ns = v[j].tail_ns,
			};
			total += v[j].total_ns;
			tail += v[j].tail_ns;
			ncalls += v[j].calls;
		}
		ns = az_sites_finish(a->sites, first, ns, ncalls, total, tail, IFT_SITES_TOP);
	}
	a->nsites = ns;
	free(a->stab);
	a->stab = NULL;
	a->nstab = a->capstab = 0;
	return 0;
}

const struct ift_site *ift_analysis_sites(const struct ift_analysis *a, size_t *n)
{
	*n = a->nsites;
	return a->sites;
}

int ift_sites_run(struct ift_trace *t, uint64_t from_ts, uint64_t to_ts,
		  uint32_t pid, unsigned top, struct ift_site **out, size_t *nout)
{
	struct ift_cursor *cur;
	struct ift_event ev;
	struct crow *v = NULL;
	struct ift_site *sites = NULL;
	size_t n = 0, cap = 0, ns = 0;
	int ret;

	*out = NULL;
	*nout = 0;
	if (!ift_trace_stack_count(t))
		return 0;
	cur = ift_cursor_new(t, 1U << IFT_T_CALLS, from_ts);
	if (!cur)
		return -errno;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;

		if (r[IFT_C_TS] >= to_ts)
			break;
		if (!r[IFT_CALL_STACK] || (pid && r[IFT_C_PID] != pid && r[IFT_C_TID] != pid))
			continue;
		if (n == cap) {
			struct crow *x = realloc(v, (cap = cap ? cap * 2 : 1024) * sizeof(*x));

			if (!x) {
				ret = -ENOMEM;
				break;
			}
			v = x;
		}
		v[n].op = r[IFT_CALL_OP];
		v[n].stack = r[IFT_CALL_STACK];
		v[n].dur = r[IFT_CALL_DUR];
		n++;
	}
	ift_cursor_free(cur);
	if (ret < 0 || !n) {
		free(v);
		return ret < 0 ? ret : 0;
	}
	sites = calloc(n, sizeof(*sites));
	if (!sites) {
		free(v);
		return -ENOMEM;
	}
	/* per op: its p99 (nearest rank), then its sites */
	qsort(v, n, sizeof(*v), by_op_dur);
	for (size_t a = 0, b; a < n; a = b) {
		uint64_t total = 0, tail = 0, p99, ncalls;
		const struct ift_op *op = ift_trace_op(t, v[a].op);
		size_t first = ns;

		for (b = a; b < n && v[b].op == v[a].op; b++)
			total += v[b].dur;
		ncalls = b - a;
		p99 = v[a + (size_t)((ncalls * 99 + 99) / 100) - 1].dur;
		for (size_t i = a; i < b; i++)
			if (v[i].dur >= p99)
				tail += v[i].dur;
		qsort(v + a, ncalls, sizeof(*v), by_op_stack);
		for (size_t i = a; i < b; i++) {
			struct ift_site *s;

			if (i == a || v[i].stack != v[i - 1].stack) {
				/* cleared: a previous op's sites past TOP were
				   dropped here, with their counts */
				s = &sites[ns++];
				memset(s, 0, sizeof(*s));
				s->op = op ? op->name : "";
				s->stack = v[i].stack;
			}
			s = &sites[ns - 1];
			s->calls++;
			s->total_ns += v[i].dur;
			if (v[i].dur >= p99) {
				s->tail_calls++;
				s->tail_ns += v[i].dur;
			}
		}
		ns = az_sites_finish(sites, first, ns, ncalls, total, tail, top);
	}
	free(v);
	*out = sites;
	*nout = ns;
	return 0;
}
