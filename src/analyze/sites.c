// SPDX-License-Identifier: MIT
/*
 * Call sites: which stacks a CUDA op was called from, and how much of the
 * op's time and of its tail each one accounts for.  Only calls that carry a
 * stack (record --stack) count, so the shares hold whatever --stack-period
 * sampled.  The report's are tallied during the analysis pass, by (op,
 * stack), against each op's p99 found before it (durs.c), with what the
 * Python call sites need (pysites.c): each op's coverage, and each site's
 * calls whose Python frames were read in flight; ift_sites_run() and
 * ift_py_sites_run() are passes over `calls' alone, for other windows and a
 * process's calls, and ift_analysis_sites_of() and
 * ift_analysis_py_sites_of() the same over the calls an analysis kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"

struct crow {
	uint64_t op, stack, dur, flags;
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

size_t ift_az_sites_finish(struct ift_site *sites, size_t first, size_t ns, uint64_t ncalls,
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

int ift_az_sites_call(struct ift_analysis *a, const struct ift_call_info *c,
		  const uint64_t *r)
{
	uint32_t op = c->op;
	uint64_t stack = c->stack, dur = c->dur_ns;
	struct az_site *x;
	bool tail;
	size_t h;
	int ret;

	if (c->flags & (IFT_CALL_F_PY | IFT_CALL_F_PY_LATE))
		a->py = true;
	if (op < a->nopm)
		ift_az_py_cover(&a->opq[op].py, c->flags, stack, dur);
	if (!ift_az_site_call(a, r))
		return 0;
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
	tail = op < a->nopm && dur >= a->opq[op].stack_p99;
	x->calls++;
	x->total_ns += dur;
	x->tail_calls += tail;
	x->tail_ns += tail ? dur : 0;
	if (c->flags & IFT_CALL_F_PY) {
		x->py.calls++;
		x->py.total_ns += dur;
		x->py.tail_calls += tail;
		x->py.tail_ns += tail ? dur : 0;
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

/*
 * The Python call sites from the tallies of the sites, before they are cut
 * to the top ones: the calls read in flight of every site, and each op's
 * coverage.
 */
static int py_build(struct ift_analysis *a, const struct az_site *v, size_t n)
{
	struct az_pyrow *rows = malloc((n ? n : 1) * sizeof(*rows));
	struct az_pycov *cov = calloc(a->nopm ? a->nopm : 1, sizeof(*cov));
	size_t nr = 0;
	int ret = -ENOMEM;

	if (rows && cov) {
		for (size_t i = 0; i < n; i++)
			if (v[i].py.calls) {
				rows[nr] = v[i].py;
				rows[nr].op = v[i].op;
				rows[nr++].stack = v[i].stack;
			}
		for (size_t op = 0; op < a->nopm; op++)
			cov[op] = a->opq[op].py;
		ret = ift_az_py_build(a->t, rows, nr, cov, a->nopm, IFT_SITES_TOP, &a->py_ops,
				  &a->npy_ops);
	}
	free(rows);
	free(cov);
	return ret;
}

int ift_az_sites_build(struct ift_analysis *a)
{
	struct az_site *v = a->stab;
	size_t n = 0, ns = 0;
	int ret;

	for (size_t i = 0; i < a->capstab; i++)
		if (a->stab[i].calls)
			v[n++] = a->stab[i];
	if ((ret = py_build(a, v, n)) < 0)
		return ret;
	a->sites = ift_az_alloc(a, n, sizeof(*a->sites));
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
		ns = ift_az_sites_finish(a->sites, first, ns, ncalls, total, tail, IFT_SITES_TOP);
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

const struct ift_py_op *ift_analysis_py_sites(const struct ift_analysis *a, size_t *n)
{
	*n = a->npy_ops;
	return a->py_ops;
}

bool ift_analysis_py(const struct ift_analysis *a)
{
	return a->py;
}

/* Where the calls come from: the trace's calls table read again, or, with
   A, the calls an analysis kept (opts.keep_calls): no read. */
struct csrc {
	struct ift_trace *t;
	const struct ift_analysis *a;
	uint64_t from_ts, to_ts;
	uint32_t pid;
};

/* One call (OP, FLAGS, STACK, DUR): its coverage into COV, and, when it
   carries a site, a row of *V. */
static int crow_add(struct crow **v, size_t *n, size_t *cap, struct az_pycov *cov, size_t ncov,
		    uint64_t op, uint64_t flags, uint64_t stack, uint64_t dur)
{
	if (cov && op < ncov)
		ift_az_py_cover(&cov[op], (uint32_t)flags, stack, dur);
	if (!stack)
		return 0;
	if (ift_array_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = (struct crow){ op, stack, dur, flags };
	return 0;
}

static int calls_read_trace(const struct csrc *src, struct crow **v, size_t *n, size_t *cap,
			    struct az_pycov *cov, size_t ncov)
{
	struct ift_cursor *cur = ift_cursor_new(src->t, 1U << IFT_T_CALLS, src->from_ts);
	struct ift_event ev;
	int ret;

	if (!cur)
		return -errno;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;

		if (r[IFT_C_TS] >= src->to_ts)
			break;
		if (src->pid && r[IFT_C_PID] != src->pid && r[IFT_C_TID] != src->pid)
			continue;
		if ((ret = crow_add(v, n, cap, cov, ncov, r[IFT_CALL_OP], r[IFT_CALL_FLAGS],
				    r[IFT_CALL_STACK], r[IFT_CALL_DUR])) < 0)
			break;
	}
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}

static int calls_kept(const struct csrc *src, struct crow **v, size_t *n, size_t *cap,
		      struct az_pycov *cov, size_t ncov)
{
	const struct ift_analysis *a = src->a;

	for (size_t i = 0; i < ift_analysis_call_count(a); i++) {
		const struct ift_call_info *c = &a->calls[i];
		int ret;

		if (c->ts < src->from_ts || c->ts >= src->to_ts ||
		    (src->pid && c->pid != src->pid && c->tid != src->pid))
			continue;
		if ((ret = crow_add(v, n, cap, cov, ncov, c->op, c->flags, c->stack,
				    c->dur_ns)) < 0)
			return ret;
	}
	return 0;
}

/*
 * The calls of SRC that carry a site, into *OUT (*NOUT of them, freed by
 * the caller), and, when COV is not NULL, every call's Python coverage by
 * op id below NCOV.  0 or a negative error.
 */
static int calls_read(const struct csrc *src, struct crow **out, size_t *nout,
		      struct az_pycov *cov, size_t ncov)
{
	struct crow *v = NULL;
	size_t n = 0, cap = 0;
	int ret = src->a ? calls_kept(src, &v, &n, &cap, cov, ncov) :
			   calls_read_trace(src, &v, &n, &cap, cov, ncov);

	if (ret < 0) {
		free(v);
		v = NULL;
		n = 0;
	}
	*out = v;
	*nout = n;
	return ret;
}

/* The p99 (nearest rank) of V[0..N), sorted by duration. */
static uint64_t crow_p99(const struct crow *v, size_t n)
{
	return v[ift_nearest_rank(n, 99)].dur;
}

static int sites_of(const struct csrc *src, unsigned top, struct ift_site **out,
		    size_t *nout)
{
	struct ift_trace *t = src->t;
	struct crow *v;
	struct ift_site *sites = NULL;
	size_t n, ns = 0;
	int ret;

	*out = NULL;
	*nout = 0;
	if (!ift_trace_stack_count(t))
		return 0;
	if ((ret = calls_read(src, &v, &n, NULL, 0)) < 0 || !n) {
		free(v);
		return ret;
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
		p99 = crow_p99(v + a, ncalls);
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
		ns = ift_az_sites_finish(sites, first, ns, ncalls, total, tail, top);
	}
	free(v);
	*out = sites;
	*nout = ns;
	return 0;
}

int ift_sites_run(struct ift_trace *t, uint64_t from_ts, uint64_t to_ts,
		  uint32_t pid, unsigned top, struct ift_site **out, size_t *nout)
{
	const struct csrc src = { t, NULL, from_ts, to_ts, pid };

	return sites_of(&src, top, out, nout);
}

/* The calls A kept of PID, in its sites' window: [lo, hi), or all after lo
   when the window reaches the trace's end, as the pass tallies them. */
static struct csrc kept_of(const struct ift_analysis *a, uint32_t pid)
{
	return (struct csrc){ a->t, a, a->lo, a->site_open ? UINT64_MAX : a->hi, pid };
}

int ift_analysis_sites_of(const struct ift_analysis *a, uint32_t pid, unsigned top,
			  struct ift_site **out, size_t *nout)
{
	const struct csrc src = kept_of(a, pid);

	return sites_of(&src, top, out, nout);
}

static int py_sites_of(const struct csrc *src, unsigned top, struct ift_py_op **out,
		       size_t *nout)
{
	struct ift_trace *t = src->t;
	size_t ncov = ift_trace_op_count(t) + 1, n, nr = 0;
	struct az_pycov *cov = calloc(ncov, sizeof(*cov));
	struct az_pyrow *rows = NULL;
	struct crow *v = NULL;
	int ret;

	*out = NULL;
	*nout = 0;
	if (!cov)
		return -ENOMEM;
	ret = calls_read(src, &v, &n, cov, ncov);
	if (ret >= 0 && n && !(rows = malloc(n * sizeof(*rows))))
		ret = -ENOMEM;
	if (ret < 0)
		goto out;
	/* per op: its p99 over its calls with a site, as ift_sites_run()'s;
	   one row a call read in flight, summed by ift_az_py_build() */
	if (n > 1)
		qsort(v, n, sizeof(*v), by_op_dur);
	for (size_t a = 0, b; a < n; a = b) {
		uint64_t p99;

		for (b = a; b < n && v[b].op == v[a].op; b++)
			;
		p99 = crow_p99(v + a, b - a);
		for (size_t i = a; i < b; i++)
			if (v[i].flags & IFT_CALL_F_PY)
				rows[nr++] = (struct az_pyrow){
					.op = (uint32_t)v[i].op, .stack = v[i].stack,
					.calls = 1, .total_ns = v[i].dur,
					.tail_calls = v[i].dur >= p99,
					.tail_ns = v[i].dur >= p99 ? v[i].dur : 0,
				};
	}
	ret = ift_az_py_build(t, rows, nr, cov, ncov, top, out, nout);
out:
	free(v);
	free(rows);
	free(cov);
	return ret;
}

int ift_py_sites_run(struct ift_trace *t, uint64_t from_ts, uint64_t to_ts,
		     uint32_t pid, unsigned top, struct ift_py_op **out, size_t *nout)
{
	const struct csrc src = { t, NULL, from_ts, to_ts, pid };

	return py_sites_of(&src, top, out, nout);
}

int ift_analysis_py_sites_of(const struct ift_analysis *a, uint32_t pid, unsigned top,
			     struct ift_py_op **out, size_t *nout)
{
	const struct csrc src = kept_of(a, pid);

	return py_sites_of(&src, top, out, nout);
}
