// SPDX-License-Identifier: MIT
/*
 * Python call sites (record --py-stack): which lines of Python made an op's
 * calls, and how much time those calls took.  A call site's Python frames
 * follow its native ones; the innermost of them is the line that made the
 * call, so every site sharing it (the same line reaching the op through
 * different native code) is one Python call site.  Only calls whose Python
 * frames were read while they were in flight (IFT_CALL_F_PY) have them in
 * their site; each op says how many of its calls did, and how many had
 * theirs read only after they returned (IFT_CALL_F_PY_LATE), so a reader
 * knows what the sites cover.  The report's rows are tallied in the
 * analysis pass with the call sites (sites.c); ift_py_sites_run() reads
 * `calls' alone; both end here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-words.h"
#include "analyze.h"

bool ift_az_py_trace(struct ift_trace *t)
{
	size_t n = ift_trace_stack_count(t);

	if (ift_trace_meta(t, "py.read"))
		return true;
	/* Python frames come last in a site */
	for (uint64_t id = 1; id <= n; id++) {
		const struct ift_stack *st = ift_trace_stack(t, id);

		if (st && st->nframes && st->frames[st->nframes - 1].flags & IFT_FRAME_F_PYSRC)
			return true;
	}
	return false;
}

/* A row with the Python frame that keys it. */
struct keyed {
	const struct ift_frame *frame;
	struct az_pyrow r;
};

static int by_op_stack(const void *x, const void *y)
{
	const struct az_pyrow *p = x, *q = y;

	if (p->op != q->op)
		return p->op < q->op ? -1 : 1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

/* By op, then Python frame; a frame's rows most time first, so its first
   row is the site that gave it most. */
static int by_op_frame(const void *x, const void *y)
{
	const struct keyed *p = x, *q = y;
	int c;

	if (p->r.op != q->r.op)
		return p->r.op < q->r.op ? -1 : 1;
	if ((c = ift_py_frame_cmp(p->frame, q->frame)))
		return c;
	if (p->r.total_ns != q->r.total_ns)
		return p->r.total_ns > q->r.total_ns ? -1 : 1;
	return (p->r.stack > q->r.stack) - (p->r.stack < q->r.stack);
}

/* Most total time first; ties by calls, then by file, function and line,
   so that equal sites come in one order. */
static int by_total(const void *x, const void *y)
{
	const struct ift_py_site *p = x, *q = y;

	if (p->total_ns != q->total_ns)
		return p->total_ns > q->total_ns ? -1 : 1;
	if (p->calls != q->calls)
		return p->calls > q->calls ? -1 : 1;
	return ift_py_frame_cmp(p->frame, q->frame);
}

static int by_in_flight(const void *x, const void *y)
{
	const struct ift_py_op *p = x, *q = y;

	if (p->in_flight_ns != q->in_flight_ns)
		return p->in_flight_ns > q->in_flight_ns ? -1 : 1;
	return (p->op_id > q->op_id) - (p->op_id < q->op_id);
}

/* ROWS summed by (op, stack), each keyed by its site's innermost Python
   frame: into *OUT (*N of them), without the rows whose site has none. */
static int keyed_rows(struct ift_trace *t, struct az_pyrow *rows, size_t n,
		      struct keyed **out, size_t *nout)
{
	struct keyed *k = malloc((n ? n : 1) * sizeof(*k));
	size_t nk = 0;

	*out = k;
	*nout = 0;
	if (!k)
		return -ENOMEM;
	if (n > 1)
		qsort(rows, n, sizeof(*rows), by_op_stack);
	for (size_t i = 0, j; i < n; i = j) {
		struct az_pyrow sum = rows[i];

		for (j = i + 1; j < n && rows[j].op == rows[i].op &&
		     rows[j].stack == rows[i].stack; j++) {
			sum.calls += rows[j].calls;
			sum.total_ns += rows[j].total_ns;
			sum.tail_calls += rows[j].tail_calls;
			sum.tail_ns += rows[j].tail_ns;
		}
		/* a site without a Python frame under a call flagged as read
		   in flight: a damaged file; the coverage still counts it */
		k[nk].frame = ift_stack_py_top(ift_trace_stack(t, sum.stack));
		if (k[nk].frame) {
			k[nk].r = sum;
			nk++;
		}
	}
	*nout = nk;
	return 0;
}

int ift_az_py_build(struct ift_trace *t, struct az_pyrow *rows, size_t n,
		const struct az_pycov *cov, size_t ncov, unsigned top,
		struct ift_py_op **out, size_t *nout)
{
	struct ift_py_site *all = NULL, *sites;
	uint32_t *allop = NULL;
	struct ift_py_op *ops;
	struct keyed *k;
	size_t nk, nall = 0, nops = 0, kept = 0;
	char *block = NULL;
	int ret;

	*out = NULL;
	*nout = 0;
	if ((ret = keyed_rows(t, rows, n, &k, &nk)) < 0)
		return ret;
	if (nk > 1)
		qsort(k, nk, sizeof(*k), by_op_frame);
	all = calloc(nk ? nk : 1, sizeof(*all));
	allop = malloc((nk ? nk : 1) * sizeof(*allop));
	if (!all || !allop)
		goto nomem;
	/* one Python call site per (op, frame), an op's adjacent, in op order */
	for (size_t i = 0; i < nk; i++) {
		struct ift_py_site *s;

		if (!i || k[i].r.op != k[i - 1].r.op || ift_py_frame_cmp(k[i].frame, k[i - 1].frame)) {
			s = &all[nall];
			allop[nall++] = k[i].r.op;
			s->frame = k[i].frame;
			s->stack = k[i].r.stack;	/* its site with most time */
		}
		s = &all[nall - 1];
		s->calls += k[i].r.calls;
		s->total_ns += k[i].r.total_ns;
		s->tail_calls += k[i].r.tail_calls;
		s->tail_ns += k[i].r.tail_ns;
		s->stacks++;
	}
	for (size_t op = 0; op < ncov; op++)
		nops += cov[op].in_flight || cov[op].late;
	/* the ops, then their sites, in one block the caller frees */
	block = calloc(1, nops * sizeof(*ops) + nall * sizeof(*sites) + 1);
	if (!block)
		goto nomem;
	ops = (struct ift_py_op *)(void *)block;
	sites = (struct ift_py_site *)(void *)(block + nops * sizeof(*ops));
	nops = 0;
	for (size_t op = 0, i = 0, j; op < ncov; op++, i = j) {
		const struct ift_op *def = ift_trace_op(t, op);
		struct ift_py_op *o = &ops[nops];

		while (i < nall && allop[i] < op)
			i++;	/* an op id past the coverage: a damaged file */
		for (j = i; j < nall && allop[j] == op; j++)
			all[j].share_time = cov[op].in_flight_ns ?
				(double)all[j].total_ns / (double)cov[op].in_flight_ns : 0;
		if (!cov[op].in_flight && !cov[op].late)
			continue;
		if (j - i > 1)
			qsort(all + i, j - i, sizeof(*all), by_total);
		*o = (struct ift_py_op){
			.op = def ? def->name : "", .op_id = (uint32_t)op,
			.calls = cov[op].calls, .stack_calls = cov[op].stack_calls,
			.in_flight = cov[op].in_flight, .in_flight_ns = cov[op].in_flight_ns,
			.late = cov[op].late, .all_sites = j - i,
			.nsites = top && j - i > top ? top : j - i, .sites = sites + kept,
		};
		memcpy(sites + kept, all + i, o->nsites * sizeof(*sites));
		kept += o->nsites;
		nops++;
	}
	if (nops > 1)
		qsort(ops, nops, sizeof(*ops), by_in_flight);
	free(k);
	free(all);
	free(allop);
	if (!nops) {
		free(block);
		return 0;
	}
	*out = ops;
	*nout = nops;
	return 0;
nomem:
	free(k);
	free(all);
	free(allop);
	free(block);
	return -ENOMEM;
}
