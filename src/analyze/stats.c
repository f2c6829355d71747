// SPDX-License-Identifier: MIT
/*
 * Op tables: for the whole trace, per process and per thread.  Each call
 * counts as it opens into its thread's row of its op (struct az_tops);
 * nothing of a call is kept but its duration (durs.c).  A thread's table is
 * its rows; a process's and the trace's sum the rows of their threads, and
 * their percentiles are exact, nearest rank over the durations of every
 * call of the set, never estimated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"

static const unsigned pct[] = { 50, 95, 99 };

static int tops_of(struct ift_analysis *a, struct az_thread *th, uint32_t op,
		   struct az_tops **out)
{
	struct az_tops *t;
	struct az_durs *d;

	if (!th->topix && !(th->topix = calloc(a->nopm, sizeof(*th->topix))))
		return -ENOMEM;
	if (th->topix[op]) {
		*out = &th->tops[th->topix[op] - 1];
		return 0;
	}
	/* the first call of this op by this thread: its segment starts at
	   what the earlier lives of its tid took */
	d = ift_az_durs_of(a, th->tid, op);
	if (!d)
		return -IFT_E_CORRUPT;
	if (ift_array_grow((void **)&th->tops, &th->captops, th->ntops + 1,
			   sizeof(*th->tops)) < 0)
		return -ENOMEM;
	t = &th->tops[th->ntops];
	t->op = op;
	t->durs = d->v + d->used;
	t->min = UINT64_MAX;
	th->topix[op] = (uint32_t)++th->ntops;
	*out = t;
	return 0;
}

static int inner_add(struct ift_analysis *a, struct az_tops *t, uint32_t op,
		     uint64_t calls, uint64_t ns)
{
	const struct ift_op *o;

	for (size_t i = 0; i < t->ninner; i++)
		if (t->inner[i].op == op) {
			t->inner[i].calls += calls;
			t->inner[i].total_ns += ns;
			return 0;
		}
	if (ift_array_grow((void **)&t->inner, &t->capinner, t->ninner + 1,
			   sizeof(*t->inner)) < 0)
		return -ENOMEM;
	o = ift_trace_op(a->t, op);
	t->inner[t->ninner++] = (struct ift_inner_op){
		.op = op, .name = o ? o->name : "unknown_op", .calls = calls, .total_ns = ns,
	};
	return 0;
}

static int err_add(struct az_tops *t, int64_t ret, uint64_t calls)
{
	for (size_t i = 0; i < t->nerrs; i++)
		if (t->errs[i].ret == ret) {
			t->errs[i].calls += calls;
			return 0;
		}
	if (ift_array_grow((void **)&t->errs, &t->caperrs, t->nerrs + 1, sizeof(*t->errs)) < 0)
		return -ENOMEM;
	t->errs[t->nerrs++] = (struct ift_err_count){ .ret = ret, .calls = calls };
	return 0;
}

static uint64_t sat_add(uint64_t x, uint64_t y)
{
	return y > UINT64_MAX - x ? UINT64_MAX : x + y;
}

int ift_az_stats_call(struct ift_analysis *a, struct az_thread *th,
		  const struct ift_call_info *c, const struct ift_call_info *parent)
{
	struct az_durs *d;
	struct az_tops *t;
	int ret;

	/* nested calls under the calls of a row: the parent's row lists them */
	if (parent && parent->selected) {
		if ((ret = tops_of(a, th, parent->op, &t)) < 0 ||
		    (ret = inner_add(a, t, c->op, 1, c->dur_ns)) < 0)
			return ret;
	}
	if (!c->selected)
		return 0;
	if ((ret = tops_of(a, th, c->op, &t)) < 0)
		return ret;
	/* the pass meets the calls the census counted, in the same order */
	d = ift_az_durs_of(a, th->tid, c->op);
	if (!d || d->used >= d->n || d->v[d->used] != c->dur_ns ||
	    t->durs + t->calls != d->v + d->used)
		return -IFT_E_CORRUPT;
	d->used++;
	t->calls++;
	t->total += c->dur_ns;
	t->min = ift_min(t->min, c->dur_ns);
	t->max = ift_max(t->max, c->dur_ns);
	t->nested += c->depth || (c->flags & IFT_CALL_F_NESTED);
	t->bytes = sat_add(t->bytes, c->bytes);
	if (c->copy_dir >= 0 && c->copy_dir < IFT_COPY_NR) {
		t->dir[c->copy_dir].calls++;
		t->dir[c->copy_dir].bytes += c->bytes;
		t->dir[c->copy_dir].total_ns += c->dur_ns;
	}
	return c->ret ? err_add(t, c->ret, 1) : 0;
}

void ift_az_stats_release(struct az_thread *th)
{
	for (size_t i = 0; i < th->ntops; i++) {
		free(th->tops[i].errs);
		free(th->tops[i].inner);
	}
	free(th->tops);
	free(th->topix);
}

/* ---- the tables ------------------------------------------------------- */

static int cmp_err(const void *x, const void *y)
{
	const struct ift_err_count *p = x, *q = y;

	if (p->calls != q->calls)
		return p->calls > q->calls ? -1 : 1;
	return p->ret < q->ret ? -1 : p->ret > q->ret;
}

static int cmp_ops(const void *x, const void *y)
{
	const struct ift_op_stats *p = x, *q = y;

	if (p->total_ns != q->total_ns)
		return p->total_ns > q->total_ns ? -1 : 1;
	return p->op < q->op ? -1 : p->op > q->op;
}

static int cmp_inner(const void *x, const void *y)
{
	const struct ift_inner_op *p = x, *q = y;

	if (p->total_ns != q->total_ns)
		return p->total_ns > q->total_ns ? -1 : 1;
	return p->op < q->op ? -1 : p->op > q->op;
}

/* The rows of one op over a set of threads, with their threads. */
struct rows {
	struct az_tops **t;
	struct az_thread **th;
	struct az_seg *seg;
	size_t n;
};

/* The errors and the inner ops of ROWS, summed into one row of the
   analysis' lifetime. */
static int fill_lists(struct ift_analysis *a, struct ift_op_stats *s, const struct rows *r)
{
	struct az_tops sum = { 0 };
	int ret = 0;

	for (size_t i = 0; i < r->n && ret >= 0; i++) {
		for (size_t k = 0; k < r->t[i]->nerrs && ret >= 0; k++)
			ret = err_add(&sum, r->t[i]->errs[k].ret, r->t[i]->errs[k].calls);
		for (size_t k = 0; k < r->t[i]->ninner && ret >= 0; k++)
			ret = inner_add(a, &sum, r->t[i]->inner[k].op, r->t[i]->inner[k].calls,
					r->t[i]->inner[k].total_ns);
	}
	if (ret >= 0 && sum.nerrs) {
		struct ift_err_count *e = ift_az_alloc(a, sum.nerrs, sizeof(*e));

		if (!e) {
			ret = -ENOMEM;
		} else {
			memcpy(e, sum.errs, sum.nerrs * sizeof(*e));
			qsort(e, sum.nerrs, sizeof(*e), cmp_err);
			s->errs = e;
			s->nerrs = sum.nerrs;
		}
	}
	if (ret >= 0 && sum.ninner) {
		struct ift_inner_op *in = ift_az_alloc(a, sum.ninner, sizeof(*in));

		if (!in) {
			ret = -ENOMEM;
		} else {
			memcpy(in, sum.inner, sum.ninner * sizeof(*in));
			qsort(in, sum.ninner, sizeof(*in), cmp_inner);
			s->inner = in;
			s->ninner = sum.ninner;
		}
	}
	free(sum.errs);
	free(sum.inner);
	return ret;
}

/* Fills S, the row of op OP over the rows R of its threads. */
static int fill(struct ift_analysis *a, struct ift_op_stats *s, uint32_t op,
		const struct rows *r)
{
	const struct az_opmeta *m = &a->opm[op < a->nopm ? op : 0];
	const struct ift_op *o = ift_trace_op(a->t, op);
	uint64_t q[3];
	int ret;

	s->op = op;
	s->name = o ? o->name : "unknown_op";
	s->api = o ? o->api : IFT_API_RUNTIME;
	s->copy = m->copy;
	s->min_ns = UINT64_MAX;
	for (size_t i = 0; i < r->n; i++) {
		const struct az_tops *t = r->t[i];

		s->calls += t->calls;
		s->nested_calls += t->nested;
		s->total_ns += t->total;
		s->min_ns = ift_min(s->min_ns, t->min);
		s->max_ns = ift_max(s->max_ns, t->max);
		s->bytes = sat_add(s->bytes, t->bytes);
		for (int k = 0; k < IFT_COPY_NR; k++) {
			s->dir[k].calls += t->dir[k].calls;
			s->dir[k].bytes += t->dir[k].bytes;
			s->dir[k].total_ns += t->dir[k].total_ns;
		}
		for (size_t k = 0; k < t->nerrs; k++)
			s->errors += t->errs[k].calls;
		/* each calling thread's wall time once */
		s->callers_wall_ns += r->th[i]->info.end_ns - r->th[i]->info.start_ns;
		r->seg[i] = (struct az_seg){ t->durs, t->calls };
	}
	s->mean_ns = s->calls ? s->total_ns / s->calls : 0;
	if (!s->calls)
		s->min_ns = 0;
	if ((ret = ift_az_quantiles(r->seg, r->n, pct, 3, q)) < 0)
		return ret;
	s->p50_ns = q[0];
	s->p95_ns = q[1];
	s->p99_ns = q[2];
	return fill_lists(a, s, r);
}

/* S->lat_bins: the calls of the rows R per latency bin, from their
   durations (the trace's table only: 456 bytes an op). */
static int lat_bins(struct ift_analysis *a, struct ift_op_stats *s, const struct rows *r)
{
	uint64_t *bins = ift_az_alloc(a, IFT_LAT_BINS, sizeof(*bins));

	if (!bins)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		for (uint64_t k = 0; k < r->t[i]->calls; k++)
			bins[ift_lat_bin(r->t[i]->durs[k])]++;
	s->lat_bins = bins;
	return 0;
}

/*
 * The table of threads TH[0..N) (one thread, a process, every shown
 * thread): a row per op any of them called, most time first.  A row of one
 * thread's calls is that thread's row, already made.  With BINS, each row
 * has its latency bins.
 */
static int table(struct ift_analysis *a, struct az_thread **th, size_t n, bool bins,
		 struct rows *r, const struct ift_op_stats **out, size_t *nout)
{
	struct ift_op_stats *rows;
	size_t nrows = 0, k = 0;
	int ret = 0;

	for (size_t op = 0; op < a->nopm; op++)
		for (size_t i = 0; i < n; i++)
			if (th[i]->topix && th[i]->topix[op]) {
				nrows++;
				break;
			}
	rows = ift_az_alloc(a, nrows, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t op = 0; op < a->nopm && ret >= 0; op++) {
		r->n = 0;
		for (size_t i = 0; i < n; i++)
			if (th[i]->topix && th[i]->topix[op]) {
				r->t[r->n] = &th[i]->tops[th[i]->topix[op] - 1];
				r->th[r->n++] = th[i];
			}
		if (!r->n)
			continue;
		if (r->n == 1 && n > 1) {
			const struct ift_thread_info *ti = &r->th[0]->info;

			for (size_t j = 0; j < ti->nops; j++)
				if (ti->ops[j].op == op)
					rows[k] = ti->ops[j];
		}
		if (!rows[k].calls)
			ret = fill(a, &rows[k], (uint32_t)op, r);
		if (ret >= 0 && bins)
			ret = lat_bins(a, &rows[k], r);
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_ops);
	*out = rows;
	*nout = k;
	return ret;
}

int ift_az_build_ops(struct ift_analysis *a)
{
	size_t n = a->nsel ? a->nsel : 1;
	struct rows r = {
		.t = calloc(n, sizeof(*r.t)), .th = calloc(n, sizeof(*r.th)),
		.seg = calloc(n, sizeof(*r.seg)),
	};
	struct az_thread **all = calloc(n, sizeof(*all)), **grp = calloc(n, sizeof(*grp));
	int ret = -ENOMEM;

	if (!r.t || !r.th || !r.seg || !all || !grp)
		goto out;
	ret = 0;
	for (size_t i = 0; i < a->nsel; i++)
		all[i] = ift_az_thread_of(a->sel[i]);
	for (size_t i = 0; i < a->nsel && ret >= 0; i++)
		ret = table(a, &all[i], 1, false, &r, &all[i]->info.ops, &all[i]->info.nops);
	for (size_t p = 0; p < a->nprocs && ret >= 0; p++) {
		struct ift_process_info *pi = &a->procs[p];

		for (size_t i = 0; i < pi->nthreads; i++)
			grp[i] = ift_az_thread_of(pi->threads[i]);
		ret = table(a, grp, pi->nthreads, false, &r, &pi->ops, &pi->nops);
	}
	if (ret >= 0)
		ret = table(a, all, a->nsel, true, &r, &a->ops, &a->nops);
out:
	free(r.t);
	free(r.th);
	free(r.seg);
	free(all);
	free(grp);
	return ret;
}
