// SPDX-License-Identifier: MIT
/*
 * Op tables from the recorded calls: for the whole trace, per process and
 * per thread.  Every duration is kept until here, so percentiles are exact
 * (nearest rank over all calls of the set), never estimated.
 *
 * One way to build all three: sort (group, op, duration) keys, then each run
 * of equal (group, op) is one table row with its durations already sorted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

enum { BY_ALL, BY_THREAD, BY_PROCESS };

/* What a table row needs of a call, so the rows read no call record */
struct key {
	uint32_t op, call;
	uint64_t dur;
	uint64_t bytes;
	uint32_t th;		/* index in a->th */
	int8_t dir;		/* copy direction, or -1 */
	bool nested, failed;
};

/*
 * Sorts K by (op, duration), ties in call order, with a stable LSD radix sort
 * on 16-bit digits, skipping the digits every key shares (the high ones of
 * every duration, usually): a few linear passes instead of n log n
 * comparisons of the biggest array the report sorts.
 */
static int sort_keys(struct key *k, size_t n, struct key *tmp)
{
	struct key *src = k, *dst = tmp;
	size_t *count;

	if (n < 2)
		return 0;
	count = malloc(65536 * sizeof(*count));
	if (!count)
		return -ENOMEM;
	for (unsigned pass = 0; pass < 6; pass++) {
		/* passes 0-3: the duration's digits, 4-5: the op's */
		unsigned shift = pass < 4 ? pass * 16 : (pass - 4) * 16;
#define DIGIT(x) ((unsigned)((pass < 4 ? (x).dur : (uint64_t)(x).op) >> shift) & 0xffff)
		size_t sum = 0;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[DIGIT(src[i])]++;
		if (count[DIGIT(src[0])] == n)
			continue;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[DIGIT(src[i])]++] = src[i];
#undef DIGIT
		dst = src;
		src = src == k ? tmp : k;
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
	free(count);
	return 0;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;

	return p < q ? -1 : p > q;
}

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

static bool counted(const struct ift_analysis *a, size_t i)
{
	return a->calls[i].counted;	/* one rule for the tables and the outputs */
}

/* The group of thread TH (index in a->th) in table BY. */
static uint32_t group_of(const struct ift_analysis *a, int by, uint32_t th)
{
	return by == BY_ALL ? 0 : by == BY_THREAD ? th : a->th[th]->proc;
}

static void place(struct ift_analysis *a, int by, uint32_t g,
		  struct ift_op_stats *ops, size_t n)
{
	switch (by) {
	case BY_ALL:
		a->ops = ops;
		a->nops = n;
		break;
	case BY_THREAD:
		a->th[g]->info.ops = ops;
		a->th[g]->info.nops = n;
		break;
	default:
		a->procs[g].ops = ops;
		a->procs[g].nops = n;
		break;
	}
}

static void placed(const struct ift_analysis *a, int by, uint32_t g,
		   struct ift_op_stats **ops, size_t *n)
{
	switch (by) {
	case BY_ALL:
		*ops = a->ops;
		*n = a->nops;
		break;
	case BY_THREAD:
		*ops = (struct ift_op_stats *)a->th[g]->info.ops;
		*n = a->th[g]->info.nops;
		break;
	default:
		*ops = (struct ift_op_stats *)a->procs[g].ops;
		*n = a->procs[g].nops;
		break;
	}
}

/* Fills S from the run K[0..n) of one (group, op), durations ascending. */
static int fill(struct ift_analysis *a, struct ift_op_stats *s,
		const struct key *k, size_t n, uint64_t *durs, int64_t *rets,
		uint32_t *stamp, uint32_t run)
{
	const struct az_opmeta *m = &a->opm[k[0].op < a->nopm ? k[0].op : 0];
	const struct ift_op *op = ift_trace_op(a->t, k[0].op);
	size_t nerr = 0, ncodes = 0;
	struct ift_err_count *errs;

	s->op = k[0].op;
	s->name = op ? op->name : "unknown_op";
	s->api = op ? op->api : IFT_API_RUNTIME;
	s->copy = m->copy;
	s->calls = n;
	s->min_ns = k[0].dur;
	s->max_ns = k[n - 1].dur;
	for (size_t i = 0; i < n; i++) {
		durs[i] = k[i].dur;
		s->total_ns += k[i].dur;
		s->nested_calls += k[i].nested;
		if (k[i].failed)
			rets[nerr++] = a->calls[k[i].call].ret;
		if (k[i].bytes > UINT64_MAX - s->bytes)
			s->bytes = UINT64_MAX;
		else
			s->bytes += k[i].bytes;
		if (k[i].dir >= 0) {
			s->dir[k[i].dir].calls++;
			s->dir[k[i].dir].bytes += k[i].bytes;
			s->dir[k[i].dir].total_ns += k[i].dur;
		}
		/* each calling thread's wall time once */
		if (stamp[k[i].th] != run) {
			const struct az_thread *th = a->th[k[i].th];

			stamp[k[i].th] = run;
			s->callers_wall_ns += th->info.end_ns - th->info.start_ns;
		}
	}
	s->errors = nerr;
	s->mean_ns = s->total_ns / n;
	s->p50_ns = ift_percentile(durs, n, 50);
	s->p95_ns = ift_percentile(durs, n, 95);
	s->p99_ns = ift_percentile(durs, n, 99);
	if (!nerr)
		return 0;
	qsort(rets, nerr, sizeof(*rets), cmp_i64);
	for (size_t i = 0; i < nerr; i++)
		ncodes += !i || rets[i] != rets[i - 1];
	errs = az_alloc(a, ncodes, sizeof(*errs));
	if (!errs)
		return -ENOMEM;
	ncodes = 0;
	for (size_t i = 0; i < nerr; i++) {
		if (!i || rets[i] != rets[i - 1])
			errs[ncodes++].ret = rets[i];
		errs[ncodes - 1].calls++;
	}
	qsort(errs, ncodes, sizeof(*errs), cmp_err);
	s->errs = errs;
	s->nerrs = ncodes;
	return 0;
}

/* Nested calls under the calls of each row: the parent's row lists them. */
static int add_inner(struct ift_analysis *a, int by)
{
	for (size_t i = 0; i < a->ncalls; i++) {
		const struct ift_call_info *c = &a->calls[i];
		struct ift_op_stats *ops, *s = NULL;
		struct ift_inner_op *in;
		size_t n, p;

		if (!c->parent)
			continue;
		p = c->parent - 1;
		if (!counted(a, p))
			continue;
		placed(a, by, group_of(a, by, a->call_th[p]), &ops, &n);
		for (size_t k = 0; k < n && !s; k++)
			if (ops[k].op == a->calls[p].op)
				s = &ops[k];
		if (!s)
			continue;
		in = (struct ift_inner_op *)s->inner;
		for (size_t k = 0; k < s->ninner; k++) {
			if (in[k].op == c->op) {
				in[k].calls++;
				in[k].total_ns += c->dur_ns;
				goto next;
			}
		}
		/* few distinct ops ever nest: grow one at a time */
		in = az_alloc(a, s->ninner + 1, sizeof(*in));
		if (!in)
			return -ENOMEM;
		if (s->ninner)
			memcpy(in, s->inner, s->ninner * sizeof(*in));
		in[s->ninner] = (struct ift_inner_op){
			.op = c->op, .calls = 1, .total_ns = c->dur_ns,
		};
		in[s->ninner].name = ift_trace_op(a->t, c->op) ?
				     ift_trace_op(a->t, c->op)->name : "unknown_op";
		s->inner = in;
		s->ninner++;
next:;
	}
	return 0;
}

/*
 * Distributes the keys K (sorted by op, duration) by group, keeping that
 * order inside each group: a stable counting sort, so the three tables cost
 * one comparison sort.  OUT gets the keys, GRP their groups.
 */
static int by_group(struct ift_analysis *a, int by, const struct key *k, size_t n,
		    struct key *out, uint32_t *grp)
{
	size_t ngroups = by == BY_THREAD ? a->nth : a->nprocs;
	size_t *start = calloc(ngroups + 1, sizeof(*start));

	if (!start)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		start[group_of(a, by, k[i].th) + 1]++;
	for (size_t g = 0; g < ngroups; g++)
		start[g + 1] += start[g];
	for (size_t i = 0; i < n; i++) {
		uint32_t g = group_of(a, by, k[i].th);

		grp[start[g]] = g;
		out[start[g]++] = k[i];
	}
	free(start);
	return 0;
}

static int build(struct ift_analysis *a, int by, const struct key *sorted, size_t n,
		 struct key *k, uint32_t *grp, uint64_t *durs, int64_t *rets,
		 uint32_t *stamp)
{
	struct ift_op_stats *all;
	size_t nruns = 0, r = 0;
	int ret = 0;

	if (by == BY_ALL) {
		memcpy(k, sorted, n * sizeof(*k));
		memset(grp, 0, n * sizeof(*grp));
	} else if ((ret = by_group(a, by, sorted, n, k, grp)) < 0) {
		return ret;
	}
	for (size_t i = 0; i < n; i++)
		nruns += !i || grp[i] != grp[i - 1] || k[i].op != k[i - 1].op;
	all = az_alloc(a, nruns, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		size_t g0 = r;
		uint32_t g = grp[i];

		while (i < n && grp[i] == g) {
			size_t j = i;

			while (j < n && grp[j] == g && k[j].op == k[i].op)
				j++;
			ret = fill(a, &all[r], k + i, j - i, durs, rets, stamp,
				   (uint32_t)r + 1);
			if (ret < 0)
				return ret;
			r++;
			i = j;
		}
		qsort(all + g0, r - g0, sizeof(*all), cmp_ops);
		place(a, by, g, all + g0, r - g0);
	}
	if (by == BY_ALL && !n)
		place(a, by, 0, all, 0);
	ret = add_inner(a, by);
	for (size_t i = 0; ret >= 0 && i < nruns; i++)
		if (all[i].ninner > 1)
			qsort((void *)all[i].inner, all[i].ninner, sizeof(*all[i].inner),
			      cmp_inner);
	return ret;
}

int az_build_ops(struct ift_analysis *a)
{
	size_t n = 0, cap = a->ncalls ? a->ncalls : 1;
	struct key *sorted = malloc(cap * sizeof(*sorted));
	struct key *k = malloc(cap * sizeof(*k));
	uint32_t *grp = malloc(cap * sizeof(*grp));
	uint64_t *durs = malloc(cap * sizeof(*durs));
	int64_t *rets = malloc(cap * sizeof(*rets));
	uint32_t *stamp = calloc(a->nth ? a->nth : 1, sizeof(*stamp));
	int ret = -ENOMEM;

	if (!sorted || !k || !grp || !durs || !rets || !stamp)
		goto out;
	for (size_t i = 0; i < a->ncalls; i++) {
		const struct ift_call_info *c = &a->calls[i];

		if (!counted(a, i))
			continue;
		sorted[n++] = (struct key){
			.op = c->op, .call = (uint32_t)i, .dur = c->dur_ns,
			.bytes = c->bytes, .th = a->call_th[i],
			.dir = c->copy_dir < IFT_COPY_NR ? c->copy_dir : -1,
			.nested = c->depth || (c->flags & IFT_CALL_F_NESTED),
			.failed = c->ret != 0,
		};
	}
	/* K is free until the tables are built: the sort's scratch */
	ret = sort_keys(sorted, n, k);
	for (int by = BY_ALL; ret >= 0 && by <= BY_PROCESS; by++) {
		/* run numbers restart: the stamps must not match an old run */
		memset(stamp, 0, (a->nth ? a->nth : 1) * sizeof(*stamp));
		ret = build(a, by, sorted, n, k, grp, durs, rets, stamp);
		if (ret < 0)
			break;
	}
out:
	free(sorted);
	free(k);
	free(grp);
	free(durs);
	free(rets);
	free(stamp);
	return ret;
}
