// SPDX-License-Identifier: MIT
/*
 * Call sites: which stacks a CUDA op was called from, and how much of the
 * op's time and of its tail each one accounts for.  A pass over `calls'
 * alone: only calls that carry a stack (record --stack) count, so the
 * shares hold whatever --stack-period sampled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-analyze.h"

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
		for (size_t i = first; i < ns; i++) {
			sites[i].share_calls = (double)sites[i].calls / (double)ncalls;
			sites[i].share_time = total ? (double)sites[i].total_ns / (double)total : 0;
			sites[i].share_tail = tail ? (double)sites[i].tail_ns / (double)tail : 0;
		}
		qsort(sites + first, ns - first, sizeof(*sites), by_total);
		if (top && ns - first > top)
			ns = first + top;
	}
	free(v);
	*out = sites;
	*nout = ns;
	return 0;
}
