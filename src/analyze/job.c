// SPDX-License-Identifier: MIT
/*
 * The job of a NCCL communicator's ranks, over one trace or several
 * (include/ift-job.h): the ranks' collectives matched by their order, the
 * traces' clocks put on one, and who made whom wait.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-chains.h"
#include "ift-error.h"
#include "ift-job.h"
#include "ift-trace.h"
#include "util/array.h"

/* A rank's lateness below this (or twice the clocks' residual) is noise. */
#define JOB_LATE_MIN_NS		20000
#define JOB_STRAGGLERS_MAX	5
/* a straggler costs the job at least this share of its waiting */
#define JOB_STRAGGLER_PERMILLE	10

static const char *const collectives[] = {
	"ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather",
	"ncclReduceScatter",
};

bool ift_job_collective(const char *op)
{
	for (size_t i = 0; i < sizeof(collectives) / sizeof(collectives[0]); i++)
		if (!strcmp(op, collectives[i]))
			return true;
	return false;
}

/* One collective call of a process, on its trace's clock. */
struct coll {
	uint64_t ts, end;
	const char *op;
};

/* A process that called NCCL: a rank once its ncclCommInitRank is seen. */
struct proc {
	size_t trace;
	uint32_t pid, tid;
	int32_t rank, nranks;	/* nranks 0: no ncclCommInitRank */
	struct coll *v;
	size_t n, cap;
};

struct procs {
	struct proc *v;
	size_t n, cap;
};

static struct proc *proc_get(struct procs *p, size_t trace, uint32_t pid)
{
	struct proc *x;

	for (size_t i = p->n; i-- > 0; )
		if (p->v[i].trace == trace && p->v[i].pid == pid)
			return &p->v[i];
	if (ift_array_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) < 0)
		return NULL;
	x = &p->v[p->n++];
	memset(x, 0, sizeof(*x));
	x->trace = trace;
	x->pid = pid;
	return x;
}

static void procs_free(struct procs *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].v);
	free(p->v);
}

/* The value of OP's argument NAME in call ROW; false when OP has none. */
static bool arg_of(const struct ift_op *op, const uint64_t *row, const char *name,
		   int64_t *v)
{
	for (unsigned i = 0; i < op->nargs && i < IFT_CALL_MAX_ARGS; i++)
		if (op->args[i] && !strcmp(op->args[i], name)) {
			*v = (int64_t)row[IFT_CALL_A0 + i];
			return true;
		}
	return false;
}

/* Trace I's NCCL processes and their collectives, into P. */
static int read_calls(struct procs *p, size_t i, struct ift_trace *t)
{
	struct ift_cursor *cur = ift_cursor_new(t, 1U << IFT_T_CALLS, 0);
	struct ift_event ev;
	int ret;

	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		const struct ift_op *op = ift_trace_op(t, r[IFT_CALL_OP]);
		struct proc *x;
		int64_t rank, nranks;

		if (!op || op->api != IFT_API_NCCL || (r[IFT_CALL_FLAGS] & IFT_CALL_F_NO_RETURN))
			continue;
		if (!strncmp(op->name, "ncclCommInitRank", 16)) {
			if (r[IFT_CALL_RET] || !arg_of(op, r, "rank", &rank) ||
			    !arg_of(op, r, "nranks", &nranks) || nranks < 2 ||
			    rank < 0 || rank >= nranks || nranks > INT32_MAX)
				continue;
			if (!(x = proc_get(p, i, (uint32_t)r[IFT_C_PID]))) {
				ret = -ENOMEM;
				break;
			}
			/* the first communicator a process makes is its world's */
			if (!x->nranks) {
				x->rank = (int32_t)rank;
				x->nranks = (int32_t)nranks;
				x->tid = (uint32_t)r[IFT_C_TID];
			}
			continue;
		}
		if (!ift_job_collective(op->name))
			continue;
		if (!(x = proc_get(p, i, (uint32_t)r[IFT_C_PID]))) {
			ret = -ENOMEM;
			break;
		}
		if (ift_array_grow((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v)) < 0) {
			ret = -ENOMEM;
			break;
		}
		x->v[x->n++] = (struct coll){
			.ts = r[IFT_C_TS], .end = r[IFT_C_TS] + r[IFT_CALL_DUR], .op = op->name,
		};
	}
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int64_t i64_abs(int64_t v)
{
	return v < 0 ? -v : v;
}

/*
 * The median of the returns' differences (trace 0's less trace J's, on
 * trace 0's clock less SHIFT0) over the pairs of ranks A of trace 0, B of
 * J in the K collectives, leaving out a pair whose collective's last
 * entrant is one of them (LAST: per collective, its rank index; NULL: keep
 * all), into *MED; its median distance into *RES.  False when no pair is
 * left.
 */
static bool returns_median(struct proc **rk, size_t nrk, size_t j, size_t k, int64_t base,
			   const size_t *last, int64_t *d, int64_t *med, uint64_t *res)
{
	size_t n = 0;

	for (size_t a = 0; a < nrk; a++)
		for (size_t b = 0; b < nrk; b++)
			for (size_t i = 0; rk[a]->trace == 0 && rk[b]->trace == j && i < k; i++)
				if (!last || (last[i] != a && last[i] != b))
					d[n++] = (int64_t)rk[a]->v[i].end -
						 ((int64_t)rk[b]->v[i].end + base);
	if (!n)
		return false;
	qsort(d, n, sizeof(*d), cmp_i64);
	*med = d[n / 2];
	for (size_t i = 0; i < n; i++)
		d[i] = i64_abs(d[i] - *med);
	qsort(d, n, sizeof(*d), cmp_i64);
	*res = (uint64_t)d[n / 2];
	return true;
}

/*
 * The least time, over the K collectives whose last entrant (LAST) is a
 * rank of trace TR, from its entry to the return of another rank of TR:
 * the quickest wake-up there, on one clock; 0 when none waited there.
 */
static int64_t wake_floor(struct proc **rk, size_t nrk, size_t tr, size_t k,
			  const size_t *last)
{
	int64_t w = INT64_MAX;

	for (size_t i = 0; i < k; i++) {
		if (rk[last[i]]->trace != tr)
			continue;
		for (size_t r = 0; r < nrk; r++) {
			int64_t x = (int64_t)rk[r]->v[i].end - (int64_t)rk[last[i]]->v[i].ts;

			if (r != last[i] && rk[r]->trace == tr && x >= 0 && x < w)
				w = x;
		}
	}
	return w == INT64_MAX ? 0 : w;
}

/*
 * The shift that puts trace J's clock on trace 0's (after the wall-clock
 * offsets), from the K collectives of ranks RK (by rank) of both traces.
 * A collective releases every rank that waited in it at once, when the
 * last one enters: the ranks that waited leave it together, within their
 * wake-ups, and the last one by its own way out, which is not a wake-up.
 * Both clocks bound the shift: a rank leaves a collective only after
 * every rank entered it.  The bound is tight, to within one wake-up, on
 * the side of the rank that entered last: HI when it was one of J's, LO
 * when one of trace 0's (the last entrant told by a first median over
 * every pair of returns: a straggler is late by far more than its error).
 * That wake-up is measured on one clock, in the last entrant's own trace:
 * the least time from its entry to the return of a rank there that
 * waited for it.  So the shift is the tight bound less that wake-up, the
 * middle of the two when each side had last entrants, and the median of
 * the waiting ranks' returns when neither bound holds; the residual is
 * how far those returns spread around it.  CLOCKS[J] filled.
 */
static int refine(struct ift_job_clock *clocks, size_t j, struct proc **rk, size_t nrk,
		  size_t k)
{
	struct ift_job_clock *c = &clocks[j];
	int64_t base = c->wall_offset_ns - clocks[0].wall_offset_ns;
	int64_t lo = INT64_MIN, hi = INT64_MAX, *d, first;
	size_t cap = 0, n0 = 0, nj = 0, *last;
	uint64_t res;

	for (size_t a = 0; a < nrk; a++)
		for (size_t b = 0; b < nrk; b++)
			if (rk[a]->trace == 0 && rk[b]->trace == j)
				cap += k;
	if (!cap)
		return 0;
	d = malloc(cap * sizeof(*d));
	last = malloc(k * sizeof(*last));
	if (!d || !last) {
		free(d);
		free(last);
		return -ENOMEM;
	}
	/* the bounds: B left after A entered; A left after B entered */
	for (size_t a = 0; a < nrk; a++)
		for (size_t b = 0; b < nrk; b++)
			for (size_t i = 0; rk[a]->trace == 0 && rk[b]->trace == j && i < k; i++) {
				const struct coll *x = &rk[a]->v[i], *y = &rk[b]->v[i];
				int64_t ye = (int64_t)y->end + base, ys = (int64_t)y->ts + base;

				if ((int64_t)x->ts - ye > lo)
					lo = (int64_t)x->ts - ye;
				if ((int64_t)x->end - ys < hi)
					hi = (int64_t)x->end - ys;
			}
	returns_median(rk, nrk, j, k, base, NULL, d, &first, &res);
	/* each collective's last entrant of the two traces, by that median */
	for (size_t i = 0; i < k; i++) {
		int64_t at = INT64_MIN;

		last[i] = SIZE_MAX;
		for (size_t r = 0; r < nrk; r++) {
			int64_t e = (int64_t)rk[r]->v[i].ts;

			if (rk[r]->trace == j)
				e += base + first;
			else if (rk[r]->trace)
				continue;
			if (e > at) {
				at = e;
				last[i] = r;
			}
		}
		if (rk[last[i]]->trace == j)
			nj++;
		else
			n0++;
	}
	c->lo_ns = lo;
	c->hi_ns = hi;
	if (!returns_median(rk, nrk, j, k, base, last, d, &c->shift_ns, &c->residual_ns)) {
		c->shift_ns = first;
		c->residual_ns = res;
	}
	if (lo <= hi) {
		int64_t w0 = wake_floor(rk, nrk, 0, k, last), wj = wake_floor(rk, nrk, j, k, last);

		c->shift_ns = n0 && nj ? (lo + w0) + ((hi - wj) - (lo + w0)) / 2 :
			      nj ? hi - wj : lo + w0;
		c->wake_ns = (uint64_t)(n0 && nj ? (w0 + wj) / 2 : nj ? wj : w0);
	}
	if (lo <= hi && c->shift_ns < lo)
		c->shift_ns = lo;
	if (lo <= hi && c->shift_ns > hi)
		c->shift_ns = hi;
	c->collectives = k;
	c->refined = true;
	free(d);
	free(last);
	return 0;
}

/* What the job's clock says of call time TS of a rank of trace TR. */
static int64_t job_ns(const struct ift_job *j, size_t tr, uint64_t ts)
{
	const struct ift_job_clock *c = &j->clocks[tr];

	return (int64_t)ts + c->wall_offset_ns - j->clocks[0].wall_offset_ns + c->shift_ns;
}

/* The costliest chain of R's trace on its process, not a healthy host's. */
static const struct ift_chain *cause_of(const struct ift_job_input *in,
					const struct ift_job_rank *r)
{
	const struct ift_chains *c = in[r->trace].r ? in[r->trace].r->c : NULL;
	size_t n = c ? ift_chains_count(c) : 0;

	for (size_t i = 0; i < n; i++) {
		const struct ift_chain *ch = ift_chains_get(c, i);

		if (ch->pid == r->pid && ch->cause != IFT_CAUSE_GPU_BOUND)
			return ch;
	}
	return NULL;
}

/* Per rank, its late collectives: how late, and which. */
struct lates {
	uint64_t *ns;
	const char **op;
	size_t n;
};

static int stragglers(struct ift_job *j, const struct ift_job_input *in, struct lates *l)
{
	size_t n = 0;

	if (!(j->stragglers = calloc(j->nranks, sizeof(*j->stragglers))))
		return -ENOMEM;
	for (size_t r = 0; r < j->nranks; r++) {
		const struct ift_job_rank *rk = &j->ranks[r];
		struct ift_job_straggler *s = &j->stragglers[n];
		size_t best = 0;

		if (!rk->last || !j->waited_ns ||
		    rk->cost_ns * 1000 < (uint64_t)JOB_STRAGGLER_PERMILLE * j->waited_ns)
			continue;
		s->rank = r;
		s->last = rk->last;
		s->late_ns = rk->late_ns;
		s->cost_ns = rk->cost_ns;
		s->share_permille = (uint32_t)(rk->cost_ns * 1000 / j->waited_ns);
		/* the op it was late for most often */
		for (size_t i = 0; i < l[r].n; i++) {
			size_t c = 0, cb = 0;

			for (size_t x = 0; x < l[r].n; x++) {
				c += !strcmp(l[r].op[x], l[r].op[i]);
				cb += !strcmp(l[r].op[x], l[r].op[best]);
			}
			if (c > cb)
				best = i;
		}
		s->op = l[r].n ? l[r].op[best] : "";
		qsort(l[r].ns, l[r].n, sizeof(*l[r].ns), cmp_u64);
		s->late_p50_ns = l[r].n ? l[r].ns[l[r].n / 2] : 0;
		s->cause = cause_of(in, rk);
		n++;
	}
	/* most cost first; ties by rank */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && j->stragglers[b].cost_ns >
					    j->stragglers[b - 1].cost_ns; b--) {
			struct ift_job_straggler t = j->stragglers[b];

			j->stragglers[b] = j->stragglers[b - 1];
			j->stragglers[b - 1] = t;
		}
	j->nstragglers = n < JOB_STRAGGLERS_MAX ? n : JOB_STRAGGLERS_MAX;
	return 0;
}

/*
 * Who waited for whom in each of the K collectives of ranks RK (by rank):
 * every rank but the last one in waited there, its whole time inside (the
 * wake-up after the release too: it slept because it came early); the
 * last one made each wait from its own entry to the last's (no longer than
 * it stayed inside), its cost; FLOOR_NS: a lateness below it is noise.
 */
static int waits(struct ift_job *j, struct proc **rk, size_t k, uint64_t floor_ns,
		 struct lates *l)
{
	for (size_t r = 0; r < j->nranks; r++)
		if (!(l[r].ns = malloc(k * sizeof(*l[r].ns))) ||
		    !(l[r].op = malloc(k * sizeof(*l[r].op))))
			return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		size_t last = 0;
		int64_t second = INT64_MIN, e_last;

		for (size_t r = 1; r < j->nranks; r++)
			if (job_ns(j, rk[r]->trace, rk[r]->v[i].ts) >
			    job_ns(j, rk[last]->trace, rk[last]->v[i].ts))
				last = r;
		e_last = job_ns(j, rk[last]->trace, rk[last]->v[i].ts);
		for (size_t r = 0; r < j->nranks; r++) {
			struct ift_job_rank *x = &j->ranks[r];
			const struct coll *c = &rk[r]->v[i];
			int64_t e = job_ns(j, rk[r]->trace, c->ts);
			uint64_t in = c->end - c->ts, w;

			x->collectives++;
			x->in_ns += in;
			if (r == last)
				continue;
			if (e > second)
				second = e;
			w = e_last > e ? (uint64_t)(e_last - e) : 0;
			if (w > in)
				w = in;
			x->waited_ns += in;
			j->waited_ns += in;
			j->ranks[last].cost_ns += w;
		}
		if (second != INT64_MIN && (uint64_t)(e_last - second) >= floor_ns) {
			struct ift_job_rank *x = &j->ranks[last];

			x->last++;
			x->late_ns += (uint64_t)(e_last - second);
			l[last].ns[l[last].n] = (uint64_t)(e_last - second);
			l[last].op[l[last].n++] = rk[last]->v[i].op;
		}
	}
	return 0;
}

/* The communicator size most processes of P were made with. */
static int32_t world_of(const struct procs *p)
{
	int32_t best = 0;
	size_t bn = 0;

	for (size_t i = 0; i < p->n; i++) {
		size_t c = 0;

		for (size_t x = 0; x < p->n; x++)
			c += p->v[x].nranks && p->v[x].nranks == p->v[i].nranks;
		if (p->v[i].nranks && c > bn) {
			bn = c;
			best = p->v[i].nranks;
		}
	}
	return bn >= 2 ? best : 0;
}

int ift_job_run(const struct ift_job_input *in, size_t n, struct ift_job **out)
{
	struct procs p = { 0 };
	struct proc **rk = NULL;
	struct lates *l = NULL;
	struct ift_job *j = NULL;
	uint64_t floor_ns = JOB_LATE_MIN_NS;
	size_t k = SIZE_MAX, nrk = 0;
	int ret = 0;

	*out = NULL;
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = read_calls(&p, i, in[i].t);
	if (ret < 0)
		goto out;
	if (!(j = calloc(1, sizeof(*j))) || !(j->clocks = calloc(n, sizeof(*j->clocks)))) {
		ret = -ENOMEM;
		goto out;
	}
	j->ntraces = n;
	for (size_t i = 0; i < n; i++) {
		const char *h = ift_trace_meta(in[i].t, "host.name");
		const char *w = ift_trace_meta(in[i].t, "clock.wall_offset_ns");

		j->clocks[i].host = h ? h : "";
		j->clocks[i].wall_offset_ns = w ? strtoll(w, NULL, 10) : 0;
	}
	if (!(j->world = world_of(&p)))
		goto out;
	/* the ranks, by rank: each once */
	if (!(rk = calloc((size_t)j->world, sizeof(*rk)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p.n; i++) {
		struct proc *x = &p.v[i];

		if (x->nranks != j->world)
			continue;
		if (rk[x->rank]) {
			ret = -IFT_E_JOB;
			goto out;
		}
		rk[x->rank] = x;
	}
	/* ranks not recorded leave gaps: the job is of those that were */
	for (int32_t r = 0; r < j->world; r++)
		if (rk[r])
			rk[nrk++] = rk[r];
	if (nrk < 2)
		goto out;
	/* collectives matched while every rank called the same one */
	for (size_t r = 0; r < nrk; r++)
		if (rk[r]->n < k)
			k = rk[r]->n;
	for (size_t i = 0; i < k; i++)
		for (size_t r = 1; r < nrk; r++)
			if (strcmp(rk[r]->v[i].op, rk[0]->v[i].op)) {
				k = i;
				break;
			}
	for (size_t r = 0; r < nrk; r++)
		j->unmatched += rk[r]->n - k;
	j->collectives = k;
	for (size_t i = 1; i < n && ret >= 0; i++)
		ret = refine(j->clocks, i, rk, nrk, k);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (2 * j->clocks[i].residual_ns > floor_ns)
			floor_ns = 2 * j->clocks[i].residual_ns;
	if (!(j->ranks = calloc(nrk, sizeof(*j->ranks))) || !(l = calloc(nrk, sizeof(*l)))) {
		ret = -ENOMEM;
		goto out;
	}
	j->nranks = nrk;
	for (size_t r = 0; r < nrk; r++)
		j->ranks[r] = (struct ift_job_rank){
			.trace = rk[r]->trace, .host = j->clocks[rk[r]->trace].host,
			.pid = rk[r]->pid, .tid = rk[r]->tid, .rank = rk[r]->rank,
		};
	if ((ret = waits(j, rk, k, floor_ns, l)) < 0 || (ret = stragglers(j, in, l)) < 0)
		goto out;
	*out = j;
	j = NULL;
out:
	for (size_t r = 0; l && r < nrk; r++) {
		free(l[r].ns);
		free(l[r].op);
	}
	free(l);
	free(rk);
	procs_free(&p);
	ift_job_free(j);
	return ret;
}

int ift_job_ranks(struct ift_trace *t, struct ift_rank **out, size_t *n)
{
	struct procs p = { 0 };
	int ret = read_calls(&p, 0, t);

	*out = NULL;
	*n = 0;
	if (ret >= 0 && p.n && !(*out = calloc(p.n, sizeof(**out))))
		ret = -ENOMEM;
	for (size_t i = 0; ret >= 0 && i < p.n; i++)
		if (p.v[i].nranks)
			(*out)[(*n)++] = (struct ift_rank){
				p.v[i].pid, p.v[i].rank, p.v[i].nranks,
			};
	procs_free(&p);
	return ret;
}

const struct ift_job_rank *ift_job_rank_of(const struct ift_job *j, int32_t r)
{
	for (size_t i = 0; j && i < j->nranks; i++)
		if (j->ranks[i].rank == r)
			return &j->ranks[i];
	return NULL;
}

void ift_job_free(struct ift_job *j)
{
	if (!j)
		return;
	free(j->clocks);
	free(j->ranks);
	free(j->stragglers);
	free(j);
}
