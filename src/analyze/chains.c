// SPDX-License-Identifier: MIT
/*
 * Causal chains.  Two kinds of window are where a CUDA thread loses time:
 *
 *   inside the slow calls of an op with a long tail (p99 >= ratio x p50 and
 *   p99 - p50 >= floor): each slow call's excess over p50 is split into the
 *   run-queue wait inside it (CPU contention), the on-CPU time it spent
 *   faulting in fresh pages (page-allocation pressure) and, for the ops that
 *   wait for the device, the rest (the device: GPU-bound);
 *
 *   before a call, in the gaps where the thread issued no CUDA work: time
 *   blocked there until another task woke it is waiting for input (data
 *   starvation), time runnable there is CPU contention on the feeding path,
 *   page faults there are page-allocation pressure on it.
 *
 * The gaps are measured during the analyzer's pass (its hooks), the slow
 * calls from the per-call breakdowns it keeps; both are bounded by the
 * number of calls.  The worst occurrence of each chain is then read again
 * from the trace (a window of a few ms) to say who ran on the CPUs then.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-chains.h"
#include "ift-words.h"
#include "analyze.h"
#include "util/array.h"

/* What a fresh page costs its thread (fault and zeroing) in a trace that
   does not say (host.page_fault_ns, sample/faultcost.c): a lower bound,
   1.5-9 us were measured on the 2-CPU VMs we test on. */
#define PAGE_COST_NS		1000ULL
/* A thread is GPU-bound when it spends this share of its active time
   waiting in the device-waiting ops. */
#define GPU_BOUND_PERMILLE	500
/* Gap causes below this share of the active time make no chain. */
#define GAP_MIN_PERMILLE	20
/* An op-tail cause must explain this share of the op's excess. */
#define PART_MIN_PERMILLE	100
#define MAX_PEERS		256

struct ch_peer {
	uint32_t tid, pid;
	uint64_t ns, count;
};

struct ch_peers {
	struct ch_peer *v;
	size_t n, cap;
};

/* A tally of call sites (record --stack): what each cost a chain. */
struct ch_site {
	uint64_t stack, calls, cost;
};

struct ch_sites {
	struct ch_site *v;
	size_t n, cap;
};

/* One gap: from the end of a thread's outermost call to its next one. */
struct ch_gap {
	uint64_t start, end;		/* trace clock */
	uint64_t blocked, fed;		/* blocked; of it, ended by another task */
	uint64_t runq;
	uint64_t excused;		/* of runq, behind the idle task or the recorder */
	uint64_t pages, page_bytes;
	uint32_t th;			/* az_thread index */
	uint32_t prev_op, next_op;
	uint32_t waker_tid, waker_pid;	/* ended its longest blocked wait */
	uint64_t waker_max;
	uint64_t next_stack;		/* the call site of the call ending it */
};

/* The system samples over some windows: their sums and counts. */
struct sysavg {
	uint64_t busy_sum, run_sum, nbusy, nrun;
};

/* One cause over a thread's gaps (or, merged, over the selected threads'). */
struct gapacc {
	uint64_t fed, runq, excused, pages, page_bytes, gaps, fed_gaps, blocked;
	uint64_t len;			/* the gaps' length in all */
	uint64_t oncpu, oncpu_gaps;	/* on CPU in gaps over the floor, less page faults */
	uint64_t cost;
	uint64_t worst_v;
	struct ch_gap worst;		/* valid when worst_v */
	uint64_t *op_cost;		/* by next op */
	size_t nops;
	struct ch_peers peers;
	struct ch_peers relays;		/* data starvation: the relays between */
	struct sysavg sys;
	struct ch_sites sites;		/* of the calls ending its gaps */
};

/* What a thread's closed gaps of one stage add up to. */
struct ch_stage {
	struct ch_peers wakers, preemptors, relays;
	struct gapacc *gacc;		/* by cause, once it had a gap */
};

/* An outermost call waiting for the device, clipped where it overlaps the
   thread's call before it (lost returns): counted from FROM. */
struct ch_devcall {
	size_t seq;
	uint64_t from;
};

struct ch_thread {
	struct ch_devcall *dev;		/* its open ones, in entry order */
	size_t ndev, capdev;
	uint64_t dev_until;		/* end of its latest one */
	bool active;			/* made an outermost call in the window */
	uint32_t last_op;
	uint64_t busy_until;		/* end of its latest outermost call */
	uint64_t first_call, last_end;
	const struct ift_loop_info *loop;	/* NULL: no calls seen before */
	struct ch_gap cur;		/* the gap now open */
	struct ch_peers gw, gp, gr;	/* in the open gap: wakers (the tasks
					   behind them), preemptors, relays */
	struct ch_stage stage[IFT_STAGE_TAIL + 1];	/* by enum ift_stage */
};

struct ch_cpu {
	uint64_t since;			/* its last switch */
	uint32_t tid, pid;		/* switched in then */
	bool known;
};

/* A call kept as the worst of something: a copy, with its attributions. */
struct ch_call {
	bool has;
	size_t seq;			/* entry order: the first of equals wins */
	uint64_t v;			/* what made it the worst */
	struct ift_call_info c;
	struct ift_call_attr *at;	/* c.nattr of them */
};

/* The system samples over the calls of a set: those before each call's end
   are summed as the call closes; the first at or after its end may still be
   incomplete (or not read yet), so it is counted by index and added when the
   pass is over. */
struct ch_pend {
	size_t idx;
	uint64_t n;
};

struct sysdefer {
	struct sysavg v;
	struct ch_pend *pend;
	size_t npend, cap;
};

/* The calls of one op, as they close: what its chains inside calls say. */
struct opacc {
	bool flagged;			/* its tail is long */
	const struct ift_op_stats *st;	/* set when building */
	uint64_t p50;			/* over the selected calls (a->opq) */
	uint64_t thr, excess, slow;
	uint64_t waiting;		/* calls with run-queue wait inside */
	uint64_t excused;		/* run-queue wait behind idle or the recorder */
	struct sysdefer sys_wait;	/* over those calls */
	uint64_t part[IFT_CAUSE_GPU_BOUND + 1];
	struct ch_call worst[IFT_CAUSE_GPU_BOUND + 1];
	uint64_t pages, page_bytes, runq, preempt;
	struct sysdefer sys;
	struct ch_peers ran;
	struct ch_sites sites[IFT_CAUSE_GPU_BOUND + 1];	/* of the calls behind
							   each cause */
};

/* The outermost steady calls that wait for the device, of every thread. */
struct devacc {
	uint64_t *wait;			/* by op: device time */
	uint64_t total, runq;
	struct ch_call worst;
};

struct ift_chains {
	struct ift_chain_opts o;
	struct opacc *opacc;		/* by op id, from the first event */
	size_t nopacc;
	struct devacc dev;
	struct ch_thread *th;
	size_t nth;
	struct ift_chain *chains;
	size_t nchains, capchains;
	void **blocks;
	size_t nblocks, capblocks;
	int err;			/* the first error in a hook */
	uint32_t *active;		/* az_thread indexes of the CUDA threads */
	size_t nactive, capactive;
	struct ch_cpu *cpu;		/* who runs where, as the switches say */
	size_t ncpu;

	/* while building */
	const struct ift_analysis *a;
	struct ift_trace *t;
	uint64_t start_ts;
	unsigned cpus;
	bool *sel;			/* by az_thread index: a listed CUDA thread */
	bool *waits;			/* by op id: waits_for_device() */
	uint32_t recorder;		/* the recorder's pid (meta), or 0 */
	uint64_t page_ns;		/* what a fresh page costs its thread */
	bool meta_read;
};

/* ---- memory --------------------------------------------------------- */

/* Zeroed memory that lives as long as the collector. */
static void *ch_alloc(struct ift_chains *c, size_t n, size_t size)
{
	void *p;

	if (ift_array_grow((void **)&c->blocks, &c->capblocks, c->nblocks + 1, sizeof(void *)) < 0)
		return NULL;
	p = calloc(n ? n : 1, size);
	if (p)
		c->blocks[c->nblocks++] = p;
	return p;
}

__attribute__((format(printf, 2, 3)))
static const char *ch_printf(struct ift_chains *c, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = ch_alloc(c, (size_t)n + 1, 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int peer_add(struct ch_peers *p, uint32_t tid, uint32_t pid, uint64_t ns,
		    uint64_t count)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].tid == tid)
			break;
	if (i == p->n) {
		if (p->n == MAX_PEERS) {
			/* the rest share the last slot: "others" */
			i = p->n - 1;
			p->v[i].tid = UINT32_MAX;
			p->v[i].pid = UINT32_MAX;
		} else {
			if (ift_array_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) < 0)
				return -ENOMEM;
			p->v[p->n++] = (struct ch_peer){ .tid = tid, .pid = pid };
		}
	}
	p->v[i].ns += ns;
	p->v[i].count += count;
	return 0;
}

static int peers_merge(struct ch_peers *d, const struct ch_peers *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (peer_add(d, s->v[i].tid, s->v[i].pid, s->v[i].ns, s->v[i].count) < 0)
			return -ENOMEM;
	return 0;
}

static int cmp_site_id(const void *x, const void *y)
{
	const struct ch_site *p = x, *q = y;

	return (p->stack > q->stack) - (p->stack < q->stack);
}

/* One entry per site again: sorted by id, duplicates summed. */
static void sites_compact(struct ch_sites *s)
{
	size_t n = 0;

	if (s->n < 2)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_site_id);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].stack == s->v[n].stack) {
			s->v[n].calls += s->v[i].calls;
			s->v[n].cost += s->v[i].cost;
		} else {
			s->v[++n] = s->v[i];
		}
	}
	s->n = n + 1;
}

/*
 * Counts CALLS costing COST from site STACK (0: the call has none, not
 * counted).  Appended, and compacted when full, so the tally holds at most
 * twice the distinct sites: calls of one site often come in runs.
 */
static int site_add(struct ch_sites *s, uint64_t stack, uint64_t calls, uint64_t cost)
{
	if (!stack)
		return 0;
	if (s->n && s->v[s->n - 1].stack == stack) {
		s->v[s->n - 1].calls += calls;
		s->v[s->n - 1].cost += cost;
		return 0;
	}
	if (s->n == s->cap) {
		sites_compact(s);
		if ((!s->cap || s->n * 2 > s->cap) &&
		    ift_array_grow((void **)&s->v, &s->cap, s->cap * 2 + 1, sizeof(*s->v)) < 0)
			return -ENOMEM;
	}
	s->v[s->n++] = (struct ch_site){ stack, calls, cost };
	return 0;
}

static int sites_merge(struct ch_sites *d, const struct ch_sites *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (site_add(d, s->v[i].stack, s->v[i].calls, s->v[i].cost) < 0)
			return -ENOMEM;
	return 0;
}

static int cmp_peer(const void *x, const void *y)
{
	const struct ch_peer *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns < q->ns ? 1 : -1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

/* ---- during the pass ------------------------------------------------ */

static struct ch_thread *ch_thread(struct ift_chains *c, uint32_t idx)
{
	if (idx >= c->nth) {
		size_t cap = c->nth;

		if (ift_array_grow((void **)&c->th, &cap, (size_t)idx + 1, sizeof(*c->th)) < 0) {
			c->err = -ENOMEM;
			return NULL;
		}
		c->nth = cap;
	}
	return &c->th[idx];
}

/* The CUDA thread TID, or NULL: most events are other tasks', and there
   are few CUDA threads, so a scan beats a lookup. */
static struct ch_thread *active_thread(struct ift_chains *c, const struct ift_analysis *a,
				       uint64_t tid)
{
	for (size_t i = 0; i < c->nactive; i++)
		if (a->th[c->active[i]]->tid == tid)
			return &c->th[c->active[i]];
	return NULL;
}

/*
 * The cost of each cause in gap G.  Data starvation: blocked until another
 * task woke it, and, in a gap longer than FLOOR, its on-CPU time (it built
 * the input itself meanwhile).  CPU contention: runnable.  Page allocation:
 * its page faults at PAGE_NS a page, what this machine's faults cost while
 * it recorded.  A page touched costs more than its fault (the cache misses
 * that follow, the unmapping), so when the faults alone reach a quarter of
 * the on-CPU time the gap is taken as a page-fault storm and all its on-CPU
 * time counts.  Both sides are times measured on the same machine in the
 * same run, so load that slows every fault moves them together.
 */
static void gap_costs(const struct ch_gap *g, uint64_t floor, uint64_t page_ns,
		      uint64_t v[], uint64_t *oncpu)
{
	uint64_t len = g->end - g->start;
	uint64_t on = len > g->blocked + g->runq ? len - g->blocked - g->runq : 0;
	uint64_t pg = az_min(on, g->pages * page_ns);

	if (pg * 4 >= on)
		pg = on;
	memset(v, 0, (IFT_CAUSE_GPU_BOUND + 1) * sizeof(*v));
	*oncpu = len >= floor ? on - pg : 0;
	v[IFT_CAUSE_DATA_STARVATION] = g->fed + *oncpu;
	v[IFT_CAUSE_CPU_CONTENTION] = g->runq - az_min(g->runq, g->excused);
	v[IFT_CAUSE_PAGE_ALLOC] = pg;
}

/* Adds what G cost, by cause, to ACC (an array by cause), as C weighs it. */
static int gap_account(const struct ift_chains *c, struct gapacc *acc,
		       const struct ch_gap *g, size_t nops)
{
	const struct ift_sys_sample *smp = c->a->nsmp ? &c->a->smp[c->a->nsmp - 1] : NULL;
	uint64_t v[IFT_CAUSE_GPU_BOUND + 1], oncpu;

	gap_costs(g, c->o.tail_floor_ns, c->page_ns, v, &oncpu);
	for (int k = 1; k < IFT_CAUSE_GPU_BOUND; k++) {
		struct gapacc *x = &acc[k];

		x->gaps++;
		x->len += g->end - g->start;
		x->oncpu += oncpu;
		x->oncpu_gaps += oncpu > 0;
		x->blocked += g->blocked;
		x->fed += g->fed;
		x->fed_gaps += g->fed > 0;
		x->runq += g->runq;
		x->excused += g->excused;
		x->pages += g->pages;
		x->page_bytes += g->page_bytes;
		if (!v[k])
			continue;
		x->cost += v[k];
		if (site_add(&x->sites, g->next_stack, 1, v[k]) < 0)
			return -ENOMEM;
		if (!x->op_cost) {
			x->op_cost = calloc(nops, sizeof(uint64_t));
			if (!x->op_cost)
				return -ENOMEM;
			x->nops = nops;
		}
		x->op_cost[g->next_op < x->nops ? g->next_op : 0] += v[k];
		if (v[k] > x->worst_v) {
			x->worst_v = v[k];
			x->worst = *g;
		}
		if (smp && smp->busy_permille >= 0) {
			x->sys.busy_sum += (uint64_t)smp->busy_permille;
			x->sys.nbusy++;
		}
		if (smp && smp->running >= 0) {
			x->sys.run_sum += (uint64_t)smp->running;
			x->sys.nrun++;
		}
	}
	return 0;
}

static void gap_close(struct ift_chains *c, const struct ift_analysis *a,
		      struct ch_thread *ct, uint32_t idx, uint64_t ts, uint32_t op,
		      uint64_t stack)
{
	struct ch_gap *g = &ct->cur;
	/* a gap belongs to the stage of the call that ends it: the wait for
	   the loop's first batch is the start-up's */
	struct ch_stage *st = &ct->stage[ift_loop_stage(ct->loop, ts)];

	if (peers_merge(&st->wakers, &ct->gw) < 0 ||
	    peers_merge(&st->preemptors, &ct->gp) < 0 ||
	    peers_merge(&st->relays, &ct->gr) < 0) {
		c->err = -ENOMEM;
		return;
	}
	ct->gw.n = ct->gp.n = ct->gr.n = 0;
	if (ts <= ct->busy_until)
		return;
	g->start = ct->busy_until;
	g->end = ts;
	g->th = idx;
	g->prev_op = ct->last_op;
	g->next_op = op;
	g->next_stack = stack;
	if (!st->gacc && !(st->gacc = calloc(IFT_CAUSE_GPU_BOUND + 1, sizeof(*st->gacc)))) {
		c->err = -ENOMEM;
		return;
	}
	if (gap_account(c, st->gacc, g, ift_trace_op_count(a->t) + 1) < 0)
		c->err = -ENOMEM;
}

static bool waits_for_device(const char *name);

/* What the chains need before the first event: the metadata, the ops. */
static int ch_start(struct ift_chains *c, const struct ift_analysis *a)
{
	const char *v = ift_trace_meta(a->t, "recorder.pid");
	size_t nops = ift_trace_op_count(a->t) + 1;

	c->a = a;
	c->recorder = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	c->page_ns = a->sum.page_fault_ns ? a->sum.page_fault_ns : PAGE_COST_NS;
	c->meta_read = true;
	c->waits = calloc(nops, sizeof(*c->waits));
	c->opacc = calloc(nops, sizeof(*c->opacc));
	c->dev.wait = calloc(nops, sizeof(*c->dev.wait));
	if (!c->waits || !c->opacc || !c->dev.wait)
		return -ENOMEM;
	c->nopacc = nops;
	for (size_t i = 1; i < nops; i++)
		c->waits[i] = ift_trace_op(a->t, i) && waits_for_device(ift_trace_op(a->t, i)->name);
	for (size_t op = 0; op < nops && op < a->nopm; op++) {
		const struct az_opq *q = &a->opq[op];
		struct opacc *o = &c->opacc[op];
		double thr;

		o->p50 = q->p50_ns;
		if (q->calls < 2 || !q->p50_ns)
			continue;
		if ((double)q->p99_ns < c->o.tail_ratio * (double)q->p50_ns ||
		    q->p99_ns - q->p50_ns < c->o.tail_floor_ns)
			continue;
		o->flagged = true;
		thr = c->o.tail_ratio * (double)q->p50_ns;
		o->thr = az_max((uint64_t)thr, q->p50_ns + c->o.tail_floor_ns);
	}
	return 0;
}

/* TS of TID's calls is in its loop's steady state: the calls outside it
   are start-up or tail, which rank no chain. */
static bool steady(const struct ift_analysis *a, uint32_t tid, uint64_t ts)
{
	return ift_loop_stage(ift_analysis_loop(a, tid), ts) == IFT_STAGE_STEADY;
}

static bool outermost_call(uint32_t depth, uint32_t flags)
{
	return !depth && !(flags & IFT_CALL_F_NESTED);
}

/* Row R opens a call the GPU-bound chain counts: selected, outermost, an
   op that waits for the device, in the steady state. */
static bool dev_call(const struct ift_chains *c, const struct ift_analysis *a,
		     const uint64_t *r)
{
	uint64_t op = r[IFT_CALL_OP];

	return outermost_call((uint32_t)r[IFT_CALL_DEPTH], (uint32_t)r[IFT_CALL_FLAGS]) &&
	       op < c->nopacc && c->waits[op] && az_call_selected(a, r) &&
	       steady(a, (uint32_t)r[IFT_C_TID], r[IFT_C_TS]);
}

/* Calls of one thread that overlap (lost returns) count once: each from
   the end of the one before, in entry order, which is known only here. */
static int dev_open(struct ift_chains *c, struct ch_thread *ct, size_t seq, uint64_t ts,
		    uint64_t end)
{
	if (ift_array_grow((void **)&ct->dev, &ct->capdev, ct->ndev + 1, sizeof(*ct->dev)) < 0)
		return c->err = -ENOMEM;
	ct->dev[ct->ndev++] = (struct ch_devcall){ seq, az_max(ts, ct->dev_until) };
	ct->dev_until = az_max(ct->dev_until, end);
	return 0;
}

static void on_call(struct ift_chains *c, const struct ift_analysis *a, const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS], end = ts + r[IFT_CALL_DUR];
	const struct az_thread *th;
	struct ch_thread *ct;

	if (ts < a->lo || ts > a->hi)
		return;
	th = az_thread_lookup(a, (uint32_t)r[IFT_C_TID]);
	if (!th || !(ct = ch_thread(c, th->idx)))
		return;
	if (dev_call(c, a, r) && dev_open(c, ct, a->ncalls - 1, ts, end) < 0)
		return;
	if (ct->active && ts < ct->busy_until) {
		/* made inside the call before it (nested), or overlapping it */
		ct->busy_until = az_max(ct->busy_until, end);
		ct->last_end = ct->busy_until;
		return;
	}
	if (ct->active)
		gap_close(c, a, ct, th->idx, ts, (uint32_t)r[IFT_CALL_OP],
			  r[IFT_CALL_STACK]);
	memset(&ct->cur, 0, sizeof(ct->cur));
	if (!ct->active) {
		ct->first_call = ts;
		ct->loop = ift_analysis_loop(a, th->tid);
		if (ift_array_grow((void **)&c->active, &c->capactive, c->nactive + 1,
			 sizeof(*c->active)) < 0) {
			c->err = -ENOMEM;
			return;
		}
		c->active[c->nactive++] = th->idx;
	}
	ct->active = true;
	ct->busy_until = end;
	ct->last_end = end;
	ct->last_op = (uint32_t)r[IFT_CALL_OP];
}

/*
 * A wait for a CPU behind the idle task is no contention: the latency of a
 * wake-up, or a switch-in the kernel did not write (some VMs' idle CPUs).
 * One behind the recorder is the tracer's own cost, not the workload's.
 */
static bool excused(const struct ift_chains *c, uint32_t tid, uint32_t pid)
{
	return !tid || (c->recorder && pid == c->recorder);
}

/* CT waited for CPU CPU in [from, to] (clipped to its open gap): whoever was
   running there took that time from it. */
static void credit_wait(struct ift_chains *c, struct ch_thread *ct, uint32_t cpu,
			uint64_t from, uint64_t to)
{
	const struct ch_cpu *k;

	if (cpu >= c->ncpu || !c->cpu[cpu].known)
		return;
	k = &c->cpu[cpu];
	from = az_max(az_max(from, k->since), ct->busy_until);
	if (to <= from)
		return;
	if (excused(c, k->tid, k->pid))
		ct->cur.excused += to - from;
	else if (peer_add(&ct->gp, k->tid, k->pid, to - from, 1) < 0)
		c->err = -ENOMEM;
}

static void on_switch(struct ift_chains *c, const struct ift_analysis *a, const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS];
	uint32_t cpu = (uint32_t)r[IFT_C_CPU];
	struct ch_cpu *k;

	if (cpu >= AZ_MAX_CPUS)
		return;
	if (cpu >= c->ncpu) {
		size_t cap = c->ncpu;

		if (ift_array_grow((void **)&c->cpu, &cap, (size_t)cpu + 1, sizeof(*c->cpu)) < 0) {
			c->err = -ENOMEM;
			return;
		}
		c->ncpu = cap;
	}
	/* the CUDA threads still waiting here waited behind prev until now */
	for (size_t i = 0; i < c->nactive; i++) {
		const struct az_thread *th = a->th[c->active[i]];

		if (th->st == IFT_SCHED_RUNNABLE && th->cpu == cpu)
			credit_wait(c, &c->th[c->active[i]], cpu, th->since, ts);
	}
	k = &c->cpu[cpu];
	k->since = ts;
	k->tid = (uint32_t)r[IFT_SW_NEXT_TID];
	k->pid = (uint32_t)r[IFT_SW_NEXT_PID];
	k->known = true;
}

static void hook_event(void *ctx, const struct ift_analysis *a, const struct ift_event *ev)
{
	struct ift_chains *c = ctx;
	const uint64_t *r = ev->row;
	struct ch_thread *ct;

	if (c->err)
		return;
	if (!c->meta_read && (c->err = ch_start(c, a)) < 0)
		return;
	switch (ev->table) {
	case IFT_T_CALLS:
		on_call(c, a, r);
		break;
	case IFT_T_SWITCHES:
		if (c->nactive)
			on_switch(c, a, r);
		break;
	case IFT_T_PAGE_ALLOCS:
		ct = active_thread(c, a, r[IFT_C_TID]);
		if (ct && ct->active && r[IFT_C_TS] >= ct->busy_until &&
		    r[IFT_PG_ORDER] < 32) {
			ct->cur.pages += 1ULL << r[IFT_PG_ORDER];
			ct->cur.page_bytes += 4096ULL << r[IFT_PG_ORDER];
		}
		break;
	default:
		break;
	}
}

static void hook_interval(void *ctx, const struct ift_analysis *a,
			  const struct ift_interval *iv)
{
	struct ift_chains *c = ctx;
	struct ch_thread *ct;
	uint64_t s, ns;

	if (c->err || (iv->state != IFT_SCHED_BLOCKED && iv->state != IFT_SCHED_RUNNABLE))
		return;
	ct = active_thread(c, a, iv->tid);
	if (!ct)
		return;
	s = az_max(iv->start_ts, ct->busy_until);
	if (iv->end_ts <= s)
		return;
	ns = iv->end_ts - s;
	if (iv->state == IFT_SCHED_RUNNABLE) {
		/* the last stretch of the wait: the switch that ends it has not
		   reached on_switch() yet, so the CPU still names prev */
		ct->cur.runq += ns;
		credit_wait(c, ct, iv->cpu, iv->start_ts, iv->end_ts);
		return;
	}
	ct->cur.blocked += ns;
	if (!iv->by_tid || iv->by_tid == iv->tid)
		return;
	ct->cur.fed += ns;
	/* the task that did the work, past any relay (roles.c) */
	if (ns > ct->cur.waker_max) {
		ct->cur.waker_max = ns;
		ct->cur.waker_tid = iv->src_tid;
		ct->cur.waker_pid = iv->src_pid;
	}
	/* another process fed it as a whole: a DataLoader worker's wake-ups
	   come from its queue's feeder thread and others, not its main one */
	if (peer_add(&ct->gw, iv->src_pid && iv->src_pid != iv->pid ? iv->src_pid : iv->src_tid,
		     iv->src_pid, ns, 1) < 0 ||
	    (iv->relay_tid && peer_add(&ct->gr, iv->relay_tid, iv->relay_pid, ns, 1) < 0))
		c->err = -ENOMEM;
}

/* ---- the calls, as they close ---------------------------------------- */

/* Index of the first sample at or after TS. */
static size_t sample_at(const struct ift_chains *c, uint64_t ts)
{
	size_t lo = 0, hi = c->a->nsmp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->a->smp[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void sys_sample(const struct ift_sys_sample *m, uint64_t n, struct sysavg *v)
{
	if (m->busy_permille >= 0) {
		v->busy_sum += (uint64_t)m->busy_permille * n;
		v->nbusy += n;
	}
	if (m->running >= 0) {
		v->run_sum += (uint64_t)m->running * n;
		v->nrun += n;
	}
}

/* The samples of [S, E] and the first after it (as sys_add()), of a call
   that closed now. */
static int sys_defer(struct ift_chains *c, uint64_t s, uint64_t e, struct sysdefer *d)
{
	size_t i = sample_at(c, s);

	for (; i < c->a->nsmp && c->a->smp[i].ts < e; i++)
		sys_sample(&c->a->smp[i], 1, &d->v);
	if (d->npend && d->pend[d->npend - 1].idx == i) {
		d->pend[d->npend - 1].n++;
		return 0;
	}
	if (ift_array_grow((void **)&d->pend, &d->cap, d->npend + 1, sizeof(*d->pend)) < 0)
		return -ENOMEM;
	d->pend[d->npend++] = (struct ch_pend){ i, 1 };
	return 0;
}

/* The pass is over: the samples counted by index are all read. */
static void sys_resolve(const struct ift_chains *c, struct sysdefer *d)
{
	for (size_t k = 0; k < d->npend; k++)
		if (d->pend[k].idx < c->a->nsmp)
			sys_sample(&c->a->smp[d->pend[k].idx], d->pend[k].n, &d->v);
	free(d->pend);
	d->pend = NULL;
	d->npend = d->cap = 0;
}

/* CL (the SEQ-th call) is the worst of W so far by V: the first in entry
   order of the calls with the largest V, whatever order they close in. */
static int worst_keep(struct ch_call *w, const struct ift_call_info *cl,
		      const struct ift_call_attr *at, size_t seq, uint64_t v)
{
	struct ift_call_attr *copy = NULL;

	if (w->has && (v < w->v || (v == w->v && seq > w->seq)))
		return 0;
	if (cl->nattr && at) {
		copy = malloc(cl->nattr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, at, cl->nattr * sizeof(*copy));
	}
	free(w->at);
	*w = (struct ch_call){ .has = true, .seq = seq, .v = v, .c = *cl, .at = copy };
	if (!copy)
		w->c.nattr = 0;
	return 0;
}

static bool excused(const struct ift_chains *c, uint32_t tid, uint32_t pid);

/*
 * Splits call C's excess over P50 between the causes.
 */
static void split_call(const struct ift_call_info *cl, uint64_t p50, bool wait_op,
		       uint64_t page_ns, uint64_t part[])
{
	uint64_t e = cl->dur_ns - p50, rest, oc, pg;

	part[IFT_CAUSE_CPU_CONTENTION] = az_min(e, cl->runqueue_ns);
	rest = e - part[IFT_CAUSE_CPU_CONTENTION];
	oc = cl->on_cpu_ns > p50 ? cl->on_cpu_ns - p50 : 0;
	pg = cl->page_allocs ? az_min(az_min(rest, oc), cl->page_alloc_bytes / 4096 *
				     page_ns) : 0;
	part[IFT_CAUSE_PAGE_ALLOC] = pg;
	part[IFT_CAUSE_GPU_BOUND] = wait_op ? rest - pg : 0;
	part[IFT_CAUSE_DATA_STARVATION] = 0;
}

/*
 * Waiting for a CPU inside a call is host delay at any percentile (a
 * synchronize the device has ended, waiting to run): all of it is CPU
 * contention, tail or not.
 */
static int call_waited(struct ift_chains *c, struct opacc *o, const struct ift_call_info *cl,
		       const struct ift_call_attr *at, size_t seq)
{
	uint64_t exc = 0, rq;
	int ret = 0;

	for (uint32_t k = 0; at && k < cl->nattr && ret == 0; k++) {
		if (at[k].kind != IFT_ATTR_RAN)
			continue;
		if (excused(c, at[k].tid, at[k].pid))
			exc += at[k].ns;
		else
			ret = peer_add(&o->ran, at[k].tid, at[k].pid, at[k].ns, at[k].count);
	}
	if (ret < 0)
		return ret;
	rq = cl->runqueue_ns - az_min(cl->runqueue_ns, exc);
	o->excused += cl->runqueue_ns - rq;
	if (!rq)
		return 0;
	o->waiting++;
	o->runq += rq;
	o->preempt += cl->involuntary;
	if ((ret = site_add(&o->sites[IFT_CAUSE_CPU_CONTENTION], cl->stack, 1, rq)) < 0 ||
	    (ret = worst_keep(&o->worst[IFT_CAUSE_CPU_CONTENTION], cl, at, seq, rq)) < 0)
		return ret;
	return sys_defer(c, cl->ts, cl->ts + cl->dur_ns, &o->sys_wait);
}

/* A call in the long tail of its op: its excess over p50, split. */
static int call_slow(struct ift_chains *c, struct opacc *o, const struct ift_call_info *cl,
		     const struct ift_call_attr *at, size_t seq)
{
	uint64_t part[IFT_CAUSE_GPU_BOUND + 1];
	int ret;

	split_call(cl, o->p50, c->waits[cl->op], c->page_ns, part);
	o->slow++;
	o->excess += cl->dur_ns - o->p50;
	for (int k = IFT_CAUSE_PAGE_ALLOC; k <= IFT_CAUSE_GPU_BOUND; k++) {
		/* every slow call counts for the sites, its cost as split */
		if ((ret = site_add(&o->sites[k], cl->stack, 1, part[k])) < 0 ||
		    (ret = worst_keep(&o->worst[k], cl, at, seq, part[k])) < 0)
			return ret;
		o->part[k] += part[k];
	}
	o->pages += cl->page_allocs;
	o->page_bytes += cl->page_alloc_bytes;
	return sys_defer(c, cl->ts, cl->ts + cl->dur_ns, &o->sys);
}

/* A call that waits for the device, for the GPU-bound chain: its time but
   for its run-queue wait, from where its clip (dev_open()) says. */
static int call_device(struct ift_chains *c, const struct ift_analysis *a,
		       const struct ift_call_info *cl, size_t seq)
{
	const struct az_thread *th = az_thread_lookup(a, cl->tid);
	struct ch_thread *ct = th && th->idx < c->nth ? &c->th[th->idx] : NULL;
	uint64_t end = cl->ts + cl->dur_ns, from = cl->ts, v;
	size_t k;

	for (k = 0; ct && k < ct->ndev && ct->dev[k].seq != seq; k++)
		;
	if (ct && k < ct->ndev) {
		from = ct->dev[k].from;
		memmove(&ct->dev[k], &ct->dev[k + 1], (ct->ndev - k - 1) * sizeof(*ct->dev));
		ct->ndev--;
	}
	v = end > from ? end - from : 0;
	v = v > cl->runqueue_ns ? v - cl->runqueue_ns : 0;
	c->dev.wait[cl->op] += v;
	c->dev.total += v;
	c->dev.runq += cl->runqueue_ns;
	return worst_keep(&c->dev.worst, cl, NULL, seq, v);
}

static void hook_call(void *ctx, const struct ift_analysis *a, const struct ift_call_info *cl,
		      const struct ift_call_attr *at, size_t seq)
{
	struct ift_chains *c = ctx;
	struct opacc *o;
	int ret = 0;

	if (c->err || !cl->selected || cl->op >= c->nopacc || cl->op >= a->nopm ||
	    !a->opq[cl->op].calls || !steady(a, cl->tid, cl->ts))
		return;
	o = &c->opacc[cl->op];
	if (cl->runqueue_ns)
		ret = call_waited(c, o, cl, at, seq);
	if (ret >= 0 && o->flagged && cl->dur_ns >= o->thr)
		ret = call_slow(c, o, cl, at, seq);
	if (ret >= 0 && c->waits[cl->op] && outermost_call(cl->depth, cl->flags))
		ret = call_device(c, a, cl, seq);
	if (ret < 0)
		c->err = ret;
}

struct ift_chains *ift_chains_new(const struct ift_chain_opts *opts)
{
	struct ift_chains *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->o.tail_ratio = IFT_TAIL_RATIO_DEFAULT;
	c->o.tail_floor_ns = IFT_TAIL_FLOOR_DEFAULT;
	if (opts)
		c->o = *opts;
	return c;
}

void ift_chains_hooks(struct ift_chains *c, struct ift_analyze_hooks *h)
{
	h->ctx = c;
	h->event = hook_event;
	h->interval = hook_interval;
	h->call = hook_call;
}

/* ---- formatting ----------------------------------------------------- */

static const char *dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, true);
}

static const char *bytes_str(char *buf, size_t len, uint64_t b)
{
	if (b < (1ULL << 20))
		snprintf(buf, len, "%.1f KiB", (double)b / 1024);
	else if (b < (1ULL << 30))
		snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
	else
		snprintf(buf, len, "%.2f GiB", (double)b / (1 << 30));
	return buf;
}

static unsigned permille(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)((part * 1000 + whole / 2) / whole) : 0;
}

/* ---- evidence helpers ----------------------------------------------- */

const char *ift_cause_name(enum ift_cause cause)
{
	switch (cause) {
	case IFT_CAUSE_CPU_CONTENTION: return "cpu_contention";
	case IFT_CAUSE_DATA_STARVATION: return "data_starvation";
	case IFT_CAUSE_PAGE_ALLOC: return "page_alloc_pressure";
	case IFT_CAUSE_GPU_BOUND: return "gpu_bound";
	}
	return "unknown";
}

const char *ift_severity_name(enum ift_severity sev)
{
	switch (sev) {
	case IFT_SEV_HIGH: return "HIGH";
	case IFT_SEV_MEDIUM: return "MEDIUM";
	case IFT_SEV_LOW: return "LOW";
	}
	return "LOW";
}

const char *ift_phase_name(enum ift_phase phase)
{
	return phase == IFT_PHASE_BEFORE ? "before" : "inside";
}

/* The ops that wait for the device: time in them past the run-queue is the
   GPU's, not the host's. */
static bool waits_for_device(const char *name)
{
	return strstr(name, "Synchronize") || strstr(name, "Synchronise") ||
	       !strcmp(name, "cudaStreamWaitEvent") || !strcmp(name, "cuStreamWaitEvent");
}

static const char *op_name(const struct ift_chains *c, uint32_t op)
{
	const struct ift_op *o = ift_trace_op(c->t, op);

	return o ? o->name : "?";
}


static void sys_add(const struct ift_chains *c, uint64_t s, uint64_t e, struct sysavg *v)
{
	size_t lo = 0, hi = c->a->nsmp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->a->smp[mid].ts < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < c->a->nsmp; i++) {
		if (c->a->smp[i].busy_permille >= 0) {
			v->busy_sum += (uint64_t)c->a->smp[i].busy_permille;
			v->nbusy++;
		}
		if (c->a->smp[i].running >= 0) {
			v->run_sum += (uint64_t)c->a->smp[i].running;
			v->nrun++;
		}
		if (c->a->smp[i].ts >= e)
			break;
	}
}

/* Who ran on the CPUs in [from, to] (trace clock), read from the trace. */
struct usage_task {
	uint32_t tid, pid;
	uint64_t ns, preempted;
};

struct usage {
	struct usage_task *v;
	size_t n, cap;
	uint64_t idle_ns, known_ns;	/* CPU time seen, of it idle */
};

static struct usage_task *usage_task(struct usage *u, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].tid == tid)
			return &u->v[i];
	if (u->n == 4096 || ift_array_grow((void **)&u->v, &u->cap, u->n + 1, sizeof(*u->v)) < 0)
		return NULL;
	u->v[u->n] = (struct usage_task){ .tid = tid, .pid = pid };
	return &u->v[u->n++];
}

static void usage_credit(struct usage *u, uint32_t tid, uint32_t pid, uint64_t ns)
{
	struct usage_task *ut;

	u->known_ns += ns;
	if (!tid) {
		u->idle_ns += ns;
		return;
	}
	ut = usage_task(u, tid, pid);
	if (ut)
		ut->ns += ns;
}

static int cmp_usage(const void *x, const void *y)
{
	const struct usage_task *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns < q->ns ? 1 : -1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

static int window_usage(struct ift_chains *c, uint64_t from, uint64_t to, struct usage *u)
{
	struct ift_cursor *cur;
	struct ift_event ev;
	uint64_t *last;
	uint32_t (*who)[2];
	unsigned ncpu = c->cpus ? c->cpus : 1;
	int ret;

	memset(u, 0, sizeof(*u));
	last = calloc(ncpu, sizeof(*last));
	who = calloc(ncpu, sizeof(*who));
	cur = ift_cursor_new(c->t, 1U << IFT_T_SWITCHES, from);
	if (!last || !who || !cur) {
		ret = -ENOMEM;
		goto out;
	}
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		uint64_t ts = r[IFT_C_TS], cpu = r[IFT_C_CPU];
		struct usage_task *ut;

		if (ts > to)
			break;
		if (ts < from || cpu >= ncpu)
			continue;
		/* before the first switch on a CPU, its prev was running */
		usage_credit(u, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID],
			     ts - (last[cpu] ? last[cpu] : from));
		last[cpu] = ts;
		who[cpu][0] = (uint32_t)r[IFT_SW_NEXT_TID];
		who[cpu][1] = (uint32_t)r[IFT_SW_NEXT_PID];
		if ((r[IFT_SW_PREV_STATE] & 0xff) == 0 && r[IFT_C_TID] &&
		    (ut = usage_task(u, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID])))
			ut->preempted++;
	}
	if (ret >= 0) {
		ret = 0;
		for (unsigned i = 0; i < ncpu; i++)
			if (last[i])
				usage_credit(u, who[i][0], who[i][1], to - last[i]);
		if (u->n)
			qsort(u->v, u->n, sizeof(*u->v), cmp_usage);
	}
out:
	ift_cursor_free(cur);
	free(last);
	free(who);
	return ret;
}

/* "pt_data_worker 71% (4 tasks), train 20%, idle 9%" */
static const char *usage_text(struct ift_chains *c, const struct usage *u, uint64_t ts)
{
	char buf[512];
	size_t len = 0;
	bool done[4096] = { false };
	unsigned shown = 0;

	buf[0] = 0;
	if (!u->known_ns)
		return NULL;
	for (size_t i = 0; i < u->n && shown < 3; i++) {
		const char *comm;
		uint64_t ns = 0, ntask = 0;

		if (done[i])
			continue;
		comm = ift_analysis_comm(c->a, u->v[i].tid, ts);
		for (size_t j = i; j < u->n; j++) {
			if (done[j] || strcmp(comm, ift_analysis_comm(c->a, u->v[j].tid, ts)))
				continue;
			done[j] = true;
			ns += u->v[j].ns;
			ntask++;
		}
		if (permille(ns, u->known_ns) < 10)
			break;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %u%%",
					shown ? ", " : "", comm[0] ? comm : "?",
					(permille(ns, u->known_ns) + 5) / 10);
		if (ntask > 1 && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, " (%" PRIu64
						" tasks)", ntask);
		shown++;
		if (len >= sizeof(buf))
			break;
	}
	if (len < sizeof(buf) && u->idle_ns)
		snprintf(buf + len, sizeof(buf) - len, "%sidle %u%%", shown ? ", " : "",
			 (permille(u->idle_ns, u->known_ns) + 5) / 10);
	return ch_printf(c, "%s", buf);
}

/* ---- building a chain ----------------------------------------------- */

static bool is_role(const char *role, const char *want)
{
	return role && !strcmp(role, want);
}

struct cb {
	struct ift_chains *c;
	struct ift_chain *ch;
	struct ift_chain_step steps[16];
	struct ift_chain_num nums[32];
	struct ift_chain_task tasks[16];
	const char *recs[8];
	struct ift_chain_site sites[IFT_CHAIN_SITES];
	size_t nsteps, nnums, ntasks, nrecs, nsites;
};

static void cb_step(struct cb *b, uint64_t ts, const char *layer, const char *text)
{
	if (text && b->nsteps < 16)
		b->steps[b->nsteps++] = (struct ift_chain_step){
			ts > b->c->start_ts ? ts - b->c->start_ts : 0, layer, text };
}

static void cb_num(struct cb *b, const char *key, uint64_t v)
{
	if (b->nnums < 32)
		b->nums[b->nnums++] = (struct ift_chain_num){ key, v };
}

static void cb_rec(struct cb *b, const char *text)
{
	if (text && b->nrecs < 8)
		b->recs[b->nrecs++] = text;
}

/* Peers P (sorted here) become tasks of RELATION, the top MAX of them. */
static void cb_tasks(struct cb *b, const char *relation, struct ch_peers *p, size_t max)
{
	uint64_t total = 0;

	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), cmp_peer);
	for (size_t i = 0; i < p->n; i++)
		total += p->v[i].ns;
	for (size_t i = 0; i < p->n && i < max && b->ntasks < 16; i++) {
		const struct ch_peer *q = &p->v[i];
		const struct ift_thread_info *ti = ift_analysis_thread_find(b->c->a, q->tid);
		const struct ift_process_info *pi = ift_analysis_process_find(b->c->a, q->pid);
		struct ift_chain_task *t = &b->tasks[b->ntasks++];

		t->relation = relation;
		t->tid = q->tid;
		t->pid = q->pid;
		/* its latest name: a worker is renamed after its fork, and the
		   worst window may start before it */
		t->comm = q->tid == UINT32_MAX ? "(others)" :
			  ift_analysis_comm(b->c->a, q->tid, UINT64_MAX);
		t->role = ti && ti->role ? ti->role : pi ? pi->role : NULL;
		t->role_evidence = ti && ti->role ? ti->role_evidence :
				   pi ? pi->role_evidence : NULL;
		t->outside = q->tid && q->tid != UINT32_MAX && !pi;
		t->count = q->count;
		t->ns = q->ns;
		t->share_permille = permille(q->ns, total);
	}
}

/* The relays among peers P: those that pass on enough to be one (roles.c);
   a thread that relayed a wake-up now and then is none. */
static void cb_relays(struct cb *b, struct ch_peers *p)
{
	size_t n = b->ntasks, k = n;

	cb_tasks(b, "relayed", p, 3);
	for (size_t i = n; i < b->ntasks; i++)
		if (is_role(b->tasks[i].role, "relay") ||
		    is_role(b->tasks[i].role, "pin-memory thread"))
			b->tasks[k++] = b->tasks[i];
	b->ntasks = k;
}

static int cmp_site_cost(const void *x, const void *y)
{
	const struct ch_site *p = x, *q = y;

	if (p->cost != q->cost)
		return p->cost < q->cost ? 1 : -1;
	if (p->calls != q->calls)
		return p->calls < q->calls ? 1 : -1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

/* The top sites of tally S (sorted here) become the chain's. */
static void cb_sites(struct cb *b, struct ch_sites *s)
{
	uint64_t cost = 0, calls = 0;

	sites_compact(s);
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_site_cost);
	for (size_t i = 0; i < s->n; i++) {
		cost += s->v[i].cost;
		calls += s->v[i].calls;
	}
	for (size_t i = 0; i < s->n && b->nsites < IFT_CHAIN_SITES; i++) {
		struct ift_chain_site *x = &b->sites[b->nsites++];

		x->stack = s->v[i].stack;
		x->frames = ift_trace_stack(b->c->t, x->stack);
		x->calls = s->v[i].calls;
		x->cost_ns = s->v[i].cost;
		x->share_permille = cost ? permille(s->v[i].cost, cost) :
				    permille(s->v[i].calls, calls);
	}
}

static int cb_finish(struct cb *b)
{
	struct ift_chains *c = b->c;
	struct ift_chain *ch = b->ch;
	void *p;

	ch->nsteps = b->nsteps;
	ch->nnums = b->nnums;
	ch->ntasks = b->ntasks;
	ch->nrecs = b->nrecs;
	if (!(p = ch_alloc(c, b->nsteps, sizeof(*b->steps))))
		return -ENOMEM;
	memcpy(p, b->steps, b->nsteps * sizeof(*b->steps));
	ch->steps = p;
	if (!(p = ch_alloc(c, b->nnums, sizeof(*b->nums))))
		return -ENOMEM;
	memcpy(p, b->nums, b->nnums * sizeof(*b->nums));
	ch->nums = p;
	if (!(p = ch_alloc(c, b->ntasks, sizeof(*b->tasks))))
		return -ENOMEM;
	memcpy(p, b->tasks, b->ntasks * sizeof(*b->tasks));
	ch->tasks = p;
	if (!(p = ch_alloc(c, b->nrecs, sizeof(*b->recs))))
		return -ENOMEM;
	memcpy(p, b->recs, b->nrecs * sizeof(*b->recs));
	ch->recs = p;
	ch->nsites = b->nsites;
	if (b->nsites) {
		if (!(p = ch_alloc(c, b->nsites, sizeof(*b->sites))))
			return -ENOMEM;
		memcpy(p, b->sites, b->nsites * sizeof(*b->sites));
		ch->sites = p;
	}
	if (!ch->summary)
		return -ENOMEM;
	return 0;
}

/* Severity is the steady state's: a start-up or tail chain is LOW. */
static struct ift_chain *chain_new(struct ift_chains *c, enum ift_cause cause,
				   enum ift_phase phase, enum ift_stage stage,
				   const char *op, uint64_t cost, uint64_t wall)
{
	struct ift_chain *ch;
	unsigned share = permille(cost, wall);

	if (ift_array_grow((void **)&c->chains, &c->capchains, c->nchains + 1, sizeof(*c->chains)) < 0)
		return NULL;
	ch = &c->chains[c->nchains++];
	memset(ch, 0, sizeof(*ch));
	ch->cause = cause;
	ch->phase = phase;
	ch->op = op;
	ch->cost_ns = cost;
	ch->wall_ns = wall;
	ch->stage = stage;
	ch->severity = cause == IFT_CAUSE_GPU_BOUND || stage != IFT_STAGE_STEADY ? IFT_SEV_LOW :
		       share >= IFT_SEV_HIGH_PERMILLE ? IFT_SEV_HIGH :
		       share >= IFT_SEV_MEDIUM_PERMILLE ? IFT_SEV_MEDIUM : IFT_SEV_LOW;
	return ch;
}

/* ---- what the roles of the preemptors or wakers suggest ------------- */

struct who {
	unsigned workers;		/* input worker processes in the analysis */
	unsigned threads;		/* input threads among the tasks */
	unsigned worker_share;		/* permille of the peers' ns by feeders */
	unsigned outside_share;		/* by tasks outside the traced processes */
	unsigned noutside;		/* how many of them */
	unsigned same_share;		/* by threads of the CUDA process */
	const struct ift_chain_task *outside;	/* the top one */
	const struct ift_chain_task *same;
};

static void who_of(const struct cb *b, const char *relation, uint32_t cuda_pid,
		   struct who *w)
{
	const struct ift_analysis *a = b->c->a;

	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < ift_analysis_process_count(a); i++)
		w->workers += is_role(ift_analysis_process(a, i)->role, "input worker");
	for (size_t i = 0; i < b->ntasks; i++) {
		const struct ift_chain_task *t = &b->tasks[i];

		if (strcmp(t->relation, relation))
			continue;
		if (is_role(t->role, "input worker") || is_role(t->role, "input thread") ||
		    is_role(t->role, "pin-memory thread")) {
			w->worker_share += t->share_permille;
			w->threads += is_role(t->role, "input thread");
		} else if (t->outside) {
			w->outside_share += t->share_permille;
			w->noutside++;
			if (!w->outside)
				w->outside = t;
		} else if (t->pid == cuda_pid) {
			w->same_share += t->share_permille;
			if (!w->same)
				w->same = t;
		}
	}
}

static void recommend_cpu(struct cb *b, uint32_t cuda_pid)
{
	struct ift_chains *c = b->c;
	struct who w;
	unsigned cpus = c->cpus ? c->cpus : 1;

	who_of(b, "preempted", cuda_pid, &w);
	if (w.worker_share >= 300 && w.workers) {
		cb_rec(b, ch_printf(c, "%u input workers + 1 feeding thread on %u CPUs: use "
				    "num_workers=%u and persistent_workers=True",
				    w.workers, cpus, cpus > 1 ? cpus - 1 : 1));
		cb_rec(b, ch_printf(c, "for a dataset already in memory as a tensor, index it "
				    "directly (x[idx[i:i+batch]]) instead of a DataLoader"));
	}
	if (w.outside_share >= 300 && w.outside && w.noutside == 1)
		cb_rec(b, ch_printf(c, "pid %u (%s), outside the traced processes, took %u%% of "
				    "the wait: move it off these CPUs (taskset -acp, a cpuset "
				    "cgroup) or lower its priority (renice -n 19 -p %u)",
				    w.outside->pid, w.outside->comm,
				    (w.outside_share + 5) / 10, w.outside->pid));
	else if (w.outside_share >= 300 && w.outside)
		cb_rec(b, ch_printf(c, "%u tasks outside the traced processes took %u%% of the "
				    "wait, pid %u (%s) the most (%u%%): move them off these CPUs "
				    "(taskset -acp, a cpuset cgroup) or lower their priority "
				    "(renice -n 19 -p %u ...)", w.noutside,
				    (w.outside_share + 5) / 10, w.outside->pid, w.outside->comm,
				    (w.outside->share_permille + 5) / 10, w.outside->pid));
	if (w.same_share >= 300 && w.same)
		cb_rec(b, ch_printf(c, "threads of the CUDA process (%s) compete with the launch "
				    "thread: cap them at %u (torch.set_num_threads(%u), "
				    "OMP_NUM_THREADS=%u)", w.same->comm, cpus > 1 ? cpus - 1 : 1,
				    cpus > 1 ? cpus - 1 : 1, cpus > 1 ? cpus - 1 : 1));
	if (!b->nrecs)
		cb_rec(b, ch_printf(c, "keep the CUDA-calling thread on a CPU of its own: fewer "
				    "busy tasks than the %u CPUs, or a higher priority for it "
				    "(renice -n -5, chrt)", cpus));
}

/* ---- chains from slow calls ----------------------------------------- */

static int slow_chain(struct ift_chains *c, struct opacc *o, enum ift_cause cause,
		      uint64_t wall)
{
	const struct ift_analysis *a = c->a;
	const struct ift_call_info *w = &o->worst[cause].c;
	const struct ift_op_stats *st = o->st;
	const char *tcomm = ift_analysis_comm(a, w->tid, w->ts);
	struct ift_chain *ch = chain_new(c, cause, IFT_PHASE_INSIDE, IFT_STAGE_STEADY,
					 st->name, o->part[cause], wall);
	struct cb b = { .c = c, .ch = ch };
	char d1[32], d2[32], d3[32], d4[32];
	struct sysavg sv = { 0 };
	struct usage u;
	const char *ut;
	unsigned busy, ratio10;
	int ret;

	if (!ch)
		return -ENOMEM;
	ch->pid = w->pid;
	ch->tid = w->tid;
	ch->p50_ns = st->p50_ns;
	ch->p99_ns = st->p99_ns;
	ch->tail_ratio = st->p50_ns ? (double)st->p99_ns / (double)st->p50_ns : 0;
	ratio10 = st->p50_ns ? (unsigned)(st->p99_ns * 10 / st->p50_ns) : 0;

	{
		/* contention: over the calls that waited; else the slow ones */
		const struct sysavg *sy = cause == IFT_CAUSE_CPU_CONTENTION ? &o->sys_wait.v :
					  &o->sys.v;

		cb_num(&b, "calls", st->calls);
		cb_num(&b, "waiting_calls", o->waiting);
		cb_num(&b, "slow_calls", o->slow);
		cb_num(&b, "slow_threshold_ns", o->thr);
		cb_num(&b, "excess_ns", o->excess);
		cb_num(&b, "cause_ns", o->part[cause]);
		cb_num(&b, "runqueue_wait_ns", o->runq);
		cb_num(&b, "excused_ns", o->excused);
		cb_num(&b, "preemptions", o->preempt);
		cb_num(&b, "page_allocs", o->pages);
		cb_num(&b, "page_alloc_bytes", o->page_bytes);
		cb_num(&b, "page_fault_ns", c->page_ns);
		if (sy->nbusy)
			cb_num(&b, "cpu_busy_permille", sy->busy_sum / sy->nbusy);
		if (sy->nrun)
			cb_num(&b, "runnable_milli", sy->run_sum * 1000 / sy->nrun);
	}
	cb_num(&b, "cpus", c->cpus);
	cb_tasks(&b, "preempted", &o->ran, 6);
	cb_sites(&b, &o->sites[cause]);

	/* the worst occurrence */
	sys_add(c, w->ts, w->ts + w->dur_ns, &sv);
	busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
	if (sv.nbusy || sv.nrun)
		cb_step(&b, w->ts, "system", ch_printf(c, "CPUs %u%% busy, %.1f tasks runnable "
					     "on %u CPUs", (busy + 5) / 10,
					     sv.nrun ? (double)sv.run_sum / (double)sv.nrun : 0.0,
					     c->cpus));
	cb_step(&b, w->ts, "cuda", ch_printf(c, "%s (tid %u) enters %s", tcomm, w->tid,
					     st->name));
	ret = window_usage(c, w->ts, w->ts + w->dur_ns, &u);
	if (ret < 0)
		return ret;
	ut = usage_text(c, &u, w->ts + w->dur_ns);
	free(u.v);
	if (ut)
		cb_step(&b, w->ts, "system", ch_printf(c, "on the CPUs meanwhile: %s", ut));
	if (w->involuntary || w->runqueue_ns) {
		const struct ift_call_attr *at = o->worst[cause].at;
		const char *by = NULL;

		for (uint32_t i = 0; at && i < w->nattr; i++)
			if (at[i].kind == IFT_ATTR_RAN && at[i].tid) {
				by = ift_analysis_comm(a, at[i].tid, w->ts);
				break;
			}
		if (w->involuntary)
			cb_step(&b, w->ts, "host", ch_printf(c, "preempted %u time%s, %s waiting "
						     "for a CPU%s%s%s", w->involuntary,
						     w->involuntary > 1 ? "s" : "",
						     dur(d1, sizeof(d1), w->runqueue_ns),
						     by ? " while " : "", by ? by : "",
						     by ? " ran" : ""));
		else
			cb_step(&b, w->ts, "host", ch_printf(c, "woken, then %s waiting for a "
						     "CPU%s%s%s", dur(d1, sizeof(d1),
								     w->runqueue_ns),
						     by ? " while " : "", by ? by : "",
						     by ? " ran" : ""));
	}
	if (w->page_allocs)
		cb_step(&b, w->ts, "host", ch_printf(c, "%u page allocations (%s) by the calling "
					     "thread", w->page_allocs,
					     bytes_str(d1, sizeof(d1), w->page_alloc_bytes)));
	if (w->blocked_ns)
		cb_step(&b, w->ts, "host", ch_printf(c, "blocked %s", dur(d1, sizeof(d1),
								       w->blocked_ns)));
	cb_step(&b, w->ts + w->dur_ns, "cuda",
		ch_printf(c, "%s returns after %s (p50 %s)", st->name,
			  dur(d1, sizeof(d1), w->dur_ns), dur(d2, sizeof(d2), st->p50_ns)));

	switch (cause) {
	case IFT_CAUSE_CPU_CONTENTION: {
		const struct ift_chain_task *top = b.ntasks ? &b.tasks[0] : NULL;

		ch->summary = ch_printf(c, "CPU contention -> %s (tid %u) waited %s for a CPU "
					"inside %" PRIu64 " calls (%" PRIu64 " preemption%s)%s%s "
					"-> %s p99 %s (%u.%ux p50)", tcomm, w->tid,
					dur(d3, sizeof(d3), o->runq), o->waiting, o->preempt,
					o->preempt == 1 ? "" : "s",
					top ? ", the CPU taken by " : "", top ? top->comm : "",
					st->name, dur(d1, sizeof(d1), st->p99_ns), ratio10 / 10,
					ratio10 % 10);
		recommend_cpu(&b, w->pid);
		break;
	}
	case IFT_CAUSE_PAGE_ALLOC:
		ch->summary = ch_printf(c, "page-allocation pressure -> %" PRIu64 " pages (%s) "
					"faulted in by %s inside slow calls -> %s p99 %s "
					"(%u.%ux p50), about %s lost", o->pages,
					bytes_str(d1, sizeof(d1), o->page_bytes), tcomm, st->name,
					dur(d2, sizeof(d2), st->p99_ns), ratio10 / 10, ratio10 % 10,
					dur(d3, sizeof(d3), o->part[cause]));
		cb_rec(&b, ch_printf(c, "allocate the host buffers once and reuse them: %s "
				     "of fresh pages per slow call", bytes_str(d4, sizeof(d4),
				     o->slow ? o->page_bytes / o->slow : 0)));
		cb_rec(&b, ch_printf(c, "copy from pinned memory (cudaMallocHost, "
				     "pin_memory=True): no staging through pageable pages"));
		break;
	default:
		ch->summary = ch_printf(c, "GPU-bound -> %s waits for the device: its tail "
					"(p99 %s, %u.%ux p50) is device time, the host was not "
					"in the way", st->name, dur(d1, sizeof(d1), st->p99_ns),
					ratio10 / 10, ratio10 % 10);
		cb_rec(&b, ch_printf(c, "nothing to change on the host: to go faster, make the "
				     "GPU work cheaper (kernels, precision, batch size)"));
		break;
	}
	return cb_finish(&b);
}

/* The chains inside the calls of each op, from what the calls added up to
   as they closed (hook_call()). */
static int slow_chains(struct ift_chains *c, uint64_t wall)
{
	const struct ift_analysis *a = c->a;
	int ret = 0;

	for (size_t i = 0; i < ift_analysis_op_count(a); i++) {
		const struct ift_op_stats *st = ift_analysis_op(a, i);

		if (st->op < c->nopacc)
			c->opacc[st->op].st = st;
	}
	for (size_t op = 0; op < c->nopacc && ret >= 0; op++) {
		struct opacc *o = &c->opacc[op];

		sys_resolve(c, &o->sys_wait);
		sys_resolve(c, &o->sys);
		if (!o->st)
			continue;
		if (o->runq && o->runq >= c->o.tail_floor_ns &&
		    permille(o->runq, wall) >= GAP_MIN_PERMILLE) {
			o->part[IFT_CAUSE_CPU_CONTENTION] = o->runq;
			ret = slow_chain(c, o, IFT_CAUSE_CPU_CONTENTION, wall);
		}
		if (!o->flagged || !o->slow)
			continue;
		for (int k = IFT_CAUSE_PAGE_ALLOC; k <= IFT_CAUSE_GPU_BOUND && ret >= 0; k++) {
			if (permille(o->part[k], o->excess) < PART_MIN_PERMILLE ||
			    o->part[k] < c->o.tail_floor_ns)
				continue;
			ret = slow_chain(c, o, (enum ift_cause)k, wall);
		}
	}
	return ret;
}

/* ---- chains from the gaps ------------------------------------------- */

static uint32_t top_op(const struct gapacc *g)
{
	uint32_t best = 0;

	for (size_t i = 1; i < g->nops; i++)
		if (g->op_cost[i] > g->op_cost[best])
			best = (uint32_t)i;
	return best;
}

/*
 * The fix for data starvation, chosen by what the feeders did (docs/report.md,
 * "How a fix is chosen"), each quoting the figures that chose it.
 */
static void recommend_data(struct cb *b, uint32_t cuda_pid, uint64_t fed, uint64_t oncpu,
			   uint64_t wall)
{
	struct ift_chains *c = b->c;
	const struct ift_analysis *a = c->a;
	unsigned cpus = c->cpus ? c->cpus : 1, want = cpus > 1 ? cpus - 1 : 1;
	uint64_t wrq = 0, won = 0, wblk = 0, wio = 0, all;
	unsigned rq_pct, blk_pct, io_pct, on_pct;
	struct who w;

	who_of(b, "woke", cuda_pid, &w);
	/*
	 * Each worker's busiest thread is the one building batches; its
	 * others (a queue's feeder thread, a library's pool) sleep most of
	 * the time and would make every worker look blocked.
	 */
	for (size_t i = 0; i < ift_analysis_process_count(a); i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);
		const struct ift_sched_stats *bt = NULL;

		if (!is_role(p->role, "input worker"))
			continue;
		for (size_t k = 0; k < p->nthreads; k++)
			if (!bt || p->threads[k]->sched.on_cpu_ns > bt->on_cpu_ns)
				bt = &p->threads[k]->sched;
		if (!bt)
			continue;
		wrq += bt->runqueue_wait_ns;
		won += bt->on_cpu_ns;
		wblk += bt->blocked_ns;
		wio += bt->blocked_io_ns;
	}
	cb_num(b, "workers", w.workers);
	cb_num(b, "input_threads", w.threads);
	cb_num(b, "workers_on_cpu_ns", won);
	cb_num(b, "workers_runqueue_wait_ns", wrq);
	cb_num(b, "workers_blocked_ns", wblk);
	cb_num(b, "workers_blocked_io_ns", wio);
	all = won + wrq + wblk;
	rq_pct = (permille(wrq, won + wrq) + 5) / 10;	/* of the time they wanted a CPU */
	blk_pct = (permille(wblk, all) + 5) / 10;
	io_pct = (permille(wio, all) + 5) / 10;
	on_pct = (permille(won, all) + 5) / 10;
	if (oncpu > fed) {
		cb_rec(b, ch_printf(c, "the thread feeding the GPU builds each batch itself (%u%% "
				    "of its active time on CPU between calls, no worker feeds it): "
				    "build batches in parallel with a loader that has workers "
				    "(DataLoader num_workers=%u, persistent_workers=True); for a "
				    "tensor already in memory, index a whole batch at once "
				    "(x[idx[i:i+batch]]) instead of per-sample __getitem__",
				    (permille(oncpu, wall) + 5) / 10, want));
	} else if (w.workers && io_pct >= 20) {
		cb_rec(b, ch_printf(c, "the %u input workers spend %u%% of their time blocked in "
				    "I/O (uninterruptible sleep): raise num_workers or "
				    "prefetch_factor so more reads are in flight, or move the data "
				    "to faster storage or memory", w.workers, io_pct));
	} else if (w.workers && rq_pct >= 20) {
		cb_rec(b, ch_printf(c, "%u input workers + 1 feeding thread on %u CPUs: the "
				    "workers wait for a CPU %u%% of the time they want one; use "
				    "num_workers=%u and persistent_workers=True", w.workers, cpus,
				    rq_pct, want));
		cb_rec(b, ch_printf(c, "make each batch cheaper to build: for a dataset already "
				    "in memory as a tensor, index a batch at once (x[idx[i:i+batch]], "
				    "a sampler yielding index batches with batch_size=None, or "
				    "__getitems__): no per-sample __getitem__ and collate"));
	} else if (w.workers && on_pct >= 50) {
		cb_rec(b, ch_printf(c, "the %u input workers are on CPU %u%% of their time and "
				    "blocked in I/O %u%%: the per-sample work is the cost; index a "
				    "batch at once (an in-memory tensor indexed per batch, a sampler "
				    "yielding index batches with batch_size=None, or __getitems__)",
				    w.workers, on_pct, io_pct));
		if (w.workers < want)
			cb_rec(b, ch_printf(c, "then raise num_workers from %u towards %u (CPUs - 1) "
					    "and prefetch_factor", w.workers, want));
	} else if (w.workers) {
		cb_rec(b, ch_printf(c, "the %u input workers are blocked %u%% of their time, not "
				    "in I/O (waiting for work, or for a socket), on CPU %u%%: they "
				    "are not short of CPU; raise prefetch_factor so more batches are "
				    "in flight, and see what the feeding thread does between batches "
				    "(%u%% of its active time on CPU there)", w.workers, blk_pct,
				    on_pct, (permille(oncpu, wall) + 5) / 10));
	} else if (w.threads) {
		cb_rec(b, ch_printf(c, "%u thread%s of the training process build%s its batches "
				    "and share its GIL with the feeding thread: build them in worker "
				    "processes instead (DataLoader num_workers=%u, or a "
				    "multiprocessing pool)", w.threads, w.threads == 1 ? "" : "s",
				    w.threads == 1 ? "s" : "", want));
	} else {
		cb_rec(b, ch_printf(c, "the thread feeding the GPU waits %u%% of its time for "
				    "input: prepare the next batch ahead (a prefetching loader "
				    "or a second stream) so the wait overlaps GPU work",
				    (permille(fed, wall) + 5) / 10));
	}
}

/*
 * A start-up or tail chain: what the thread did between its calls before
 * its training loop began, or after it ended.  It is paid once, not every
 * step, so it says so instead of a fix for the steady state.
 */
static int stage_chain(struct cb *b, const struct gapacc *g, enum ift_cause cause,
		       enum ift_stage stage, const struct az_thread *th, const char *tcomm,
		       const char *op, uint64_t cost, uint64_t wall)
{
	struct ift_chains *c = b->c;
	const struct ift_loop_info *l = ift_analysis_loop(c->a, th->tid);
	const struct ift_chain_task *top = b->ntasks ? &b->tasks[0] : NULL;
	bool startup = stage == IFT_STAGE_STARTUP;
	char d1[32], d2[32];
	const char *what;
	double at;

	switch (cause) {
	case IFT_CAUSE_DATA_STARVATION:
		what = g->fed >= g->oncpu ?
		       ch_printf(c, "blocked %s waiting for input%s%s", dur(d1, sizeof(d1), g->fed),
				 top ? " from " : "", top ? top->comm : "") :
		       ch_printf(c, "%s on CPU between CUDA calls (building its input, the "
				 "dataset, the model)", dur(d1, sizeof(d1), g->oncpu));
		break;
	case IFT_CAUSE_CPU_CONTENTION:
		what = ch_printf(c, "waited %s for a CPU%s%s", dur(d1, sizeof(d1), cost),
				 top ? ", preempted by " : "", top ? top->comm : "");
		break;
	default:
		what = ch_printf(c, "faulted in %" PRIu64 " fresh pages (%s)", g->pages,
				 bytes_str(d1, sizeof(d1), g->page_bytes));
		break;
	}
	if (!l || !l->period) {
		b->ch->summary = ch_printf(c, "start-up (no training loop found) -> %s (tid %u) "
					   "%s, %u%% of its active time -> %s issued late",
					   tcomm, th->tid, what ? what : "",
					   (permille(cost, wall) + 5) / 10, op);
		cb_rec(b, ch_printf(c, "no repeating sequence of CUDA calls: the run is all "
				    "start-up, paid once; record a longer run to see its steady "
				    "state"));
		return cb_finish(b);
	}
	at = (double)((startup ? l->from_ts : l->to_ts) - az_min(c->start_ts,
			startup ? l->from_ts : l->to_ts)) / 1e9;
	b->ch->summary = ch_printf(c, "%s -> %s (tid %u) %s %s the training loop %s at "
				   "%.3f s (%s, %u%% of the time %s it) -> %s issued late",
				   startup ? "start-up" : "tail", tcomm, th->tid, what ? what : "",
				   startup ? "before" : "after", startup ? "began" : "ended", at,
				   dur(d2, sizeof(d2), cost), (permille(cost, wall) + 5) / 10,
				   startup ? "before" : "after", op);
	cb_num(b, startup ? "loop_from_ns" : "loop_to_ns",
	       (uint64_t)(at * 1e9 + 0.5));
	cb_rec(b, ch_printf(c, "paid once %s the training loop, not at every step: the "
			    "steady state is judged apart; %s",
			    startup ? "before" : "after",
			    startup ? "to start sooner, cache what is built before the loop (the "
				      "dataset as a saved tensor, compiled kernels) between runs" :
				      "to end sooner, make the work after the loop (evaluation, "
				      "saving) cheaper or less frequent"));
	return cb_finish(b);
}

static int gap_chain(struct ift_chains *c, struct gapacc *g, enum ift_cause cause,
		     enum ift_stage stage, uint64_t cost, uint64_t wall)
{
	const struct ift_analysis *a = c->a;
	const struct ch_gap *w = &g->worst;
	const struct az_thread *th = a->th[w->th];
	const char *op = op_name(c, top_op(g));
	const char *tcomm = ift_analysis_comm(a, th->tid, w->start);
	struct ift_chain *ch = chain_new(c, cause, IFT_PHASE_BEFORE, stage, op, cost, wall);
	struct cb b = { .c = c, .ch = ch };
	char d1[32], d2[32], d3[32];
	struct sysavg sv = { 0 };
	struct usage u;
	const char *ut;
	const struct ift_op_stats *st = NULL;
	unsigned busy;
	int ret;

	if (!ch)
		return -ENOMEM;
	for (size_t i = 0; i < ift_analysis_op_count(a); i++)
		if (!strcmp(ift_analysis_op(a, i)->name, op))
			st = ift_analysis_op(a, i);
	ch->pid = th->pid;
	ch->tid = th->tid;
	if (st) {
		ch->p50_ns = st->p50_ns;
		ch->p99_ns = st->p99_ns;
		ch->tail_ratio = st->p50_ns ? (double)st->p99_ns / (double)st->p50_ns : 0;
	}
	cb_num(&b, "gaps", g->gaps);
	cb_num(&b, "gaps_ns", g->len);
	cb_num(&b, "blocked_ns", g->blocked);
	cb_num(&b, "fed_ns", g->fed);
	cb_num(&b, "fed_gaps", g->fed_gaps);
	cb_num(&b, "on_cpu_ns", g->oncpu);
	cb_num(&b, "on_cpu_gaps", g->oncpu_gaps);
	cb_num(&b, "runqueue_wait_ns", g->runq - az_min(g->runq, g->excused));
	cb_num(&b, "excused_ns", g->excused);
	cb_num(&b, "page_allocs", g->pages);
	cb_num(&b, "page_alloc_bytes", g->page_bytes);
	cb_num(&b, "page_fault_ns", c->page_ns);
	cb_num(&b, "cause_ns", cost);
	if (g->sys.nbusy)
		cb_num(&b, "cpu_busy_permille", g->sys.busy_sum / g->sys.nbusy);
	if (g->sys.nrun)
		cb_num(&b, "runnable_milli", g->sys.run_sum * 1000 / g->sys.nrun);
	cb_num(&b, "cpus", c->cpus);
	cb_tasks(&b, cause == IFT_CAUSE_CPU_CONTENTION ? "preempted" : "woke", &g->peers, 6);
	if (cause == IFT_CAUSE_DATA_STARVATION)
		cb_relays(&b, &g->relays);
	cb_sites(&b, &g->sites);

	/* the worst gap */
	cb_step(&b, w->start, "cuda", ch_printf(c, "%s returns; %s (tid %u) issues no CUDA "
						"work", op_name(c, w->prev_op), tcomm, th->tid));
	sys_add(c, w->start, w->end, &sv);
	busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
	if (sv.nbusy || sv.nrun)
		cb_step(&b, w->start, "system", ch_printf(c, "CPUs %u%% busy, %.1f tasks "
					      "runnable on %u CPUs", (busy + 5) / 10,
					      sv.nrun ? (double)sv.run_sum / (double)sv.nrun : 0.0,
					      c->cpus));
	ret = window_usage(c, w->start, w->end, &u);
	if (ret < 0)
		return ret;
	ut = usage_text(c, &u, w->end);
	if (ut) {
		uint64_t pre = 0;

		for (size_t i = 0; i < u.n; i++) {
			const struct ift_process_info *pi = ift_analysis_process_find(a, u.v[i].pid);

			if (pi && is_role(pi->role, "input worker"))
				pre += u.v[i].preempted;
		}
		cb_step(&b, w->start, "system", ch_printf(c, "on the CPUs meanwhile: %s", ut));
		if (pre)
			cb_step(&b, w->start, "host", ch_printf(c, "input workers preempted %"
						      PRIu64 " time%s in this gap", pre,
						      pre == 1 ? "" : "s"));
	}
	free(u.v);
	if (w->runq)
		cb_step(&b, w->start, "host", ch_printf(c, "%s waits %s for a CPU", tcomm,
							dur(d1, sizeof(d1), w->runq)));
	if (w->pages)
		cb_step(&b, w->start, "host", ch_printf(c, "%s faults in %" PRIu64 " pages (%s)",
							tcomm, w->pages,
							bytes_str(d1, sizeof(d1), w->page_bytes)));
	if (w->fed)
		cb_step(&b, w->end, "host", ch_printf(c, "%s blocked %s, woken by %s (pid %u)",
						      tcomm, dur(d1, sizeof(d1), w->blocked),
						      ift_analysis_comm(a, w->waker_tid, w->end),
						      w->waker_pid));
	cb_step(&b, w->end, "cuda", ch_printf(c, "%s issued %s after the previous call "
					      "returned: no work from this thread meanwhile",
					      op_name(c, w->next_op),
					      dur(d1, sizeof(d1), w->end - w->start)));

	/*
	 * One gap that holds most of the cost is often no steady state at all
	 * but the start-up (imports, building the dataset after the model went
	 * to the device): seen on the H200 (docs/gpu-validation.md).  Say so,
	 * and how to look past it, before any fix.
	 */
	cb_num(&b, "worst_gap_ns", g->worst_v);
	if (stage != IFT_STAGE_STEADY)
		return stage_chain(&b, g, cause, stage, th, tcomm, op, cost, wall);
	if (g->worst_v * 2 > cost) {
		uint64_t end = w->end > c->start_ts ? w->end - c->start_ts : 0;

		cb_rec(&b, ch_printf(c, "one gap (%.3f s to %.3f s) holds %u%% of this cost: if "
				     "that is the start-up (imports, loading the dataset), see the "
				     "steady state alone with --from %.3fs",
				     (double)(w->start > c->start_ts ? w->start - c->start_ts : 0) / 1e9,
				     (double)end / 1e9, (permille(g->worst_v, cost) + 5) / 10,
				     (double)((end + 999999) / 1000000) / 1e3));
	}

	switch (cause) {
	case IFT_CAUSE_DATA_STARVATION: {
		const struct ift_chain_task *top = b.ntasks ? &b.tasks[0] : NULL;

		if (g->fed >= g->oncpu)
			ch->summary = ch_printf(c, "data starvation -> %s (tid %u) blocked %s "
						"in %" PRIu64 " gaps waiting for input%s%s%s%s "
						"(%u%% of its active time in all) -> no CUDA work "
						"issued before %s", tcomm, th->tid,
						dur(d1, sizeof(d1), g->fed), g->fed_gaps,
						top ? " from " : "", top ? top->comm : "",
						g->oncpu ? ", and " : "",
						g->oncpu ? ch_printf(c, "%s on CPU building it",
								     dur(d2, sizeof(d2),
									 g->oncpu)) : "",
						(permille(cost, wall) + 5) / 10, op);
		else
			ch->summary = ch_printf(c, "data starvation -> %s (tid %u) built its input "
						"itself: %s on CPU between CUDA calls (%u%% of its "
						"active time, %" PRIu64 " gaps over %s) -> no CUDA "
						"work issued before %s", tcomm, th->tid,
						dur(d1, sizeof(d1), g->oncpu),
						(permille(g->oncpu, wall) + 5) / 10, g->oncpu_gaps,
						dur(d2, sizeof(d2), c->o.tail_floor_ns), op);
		recommend_data(&b, th->pid, g->fed, g->oncpu, wall);
		break;
	}
	case IFT_CAUSE_CPU_CONTENTION: {
		const struct ift_chain_task *top = b.ntasks ? &b.tasks[0] : NULL;

		ch->summary = ch_printf(c, "CPU contention -> %s (tid %u) waited %s for a CPU "
					"between CUDA calls%s%s -> %s issued late",
					tcomm, th->tid, dur(d1, sizeof(d1), cost),
					top ? ", preempted by " : "", top ? top->comm : "", op);
		recommend_cpu(&b, th->pid);
		break;
	}
	default:
		ch->summary = ch_printf(c, "page-allocation pressure -> %s (tid %u) faulted in "
					"%" PRIu64 " fresh pages (%s) between CUDA calls, about "
					"%s -> %s issued late", tcomm, th->tid, g->pages,
					bytes_str(d1, sizeof(d1), g->page_bytes),
					dur(d2, sizeof(d2), cost), op);
		cb_rec(&b, ch_printf(c, "allocate the host buffers once and reuse them "
				     "(%s of fresh pages per gap now)",
				     bytes_str(d3, sizeof(d3), g->gaps ? g->page_bytes / g->gaps : 0)));
		cb_rec(&b, ch_printf(c, "keep freed memory in the process instead of returning "
				     "it to the kernel (MALLOC_TRIM_THRESHOLD_ and "
				     "MALLOC_MMAP_THRESHOLD_ above the buffer size)"));
		break;
	}
	return cb_finish(&b);
}

static bool thread_selected(const struct ift_chains *c, size_t idx)
{
	return idx < c->a->nth && c->sel[idx];
}

/* The chains of the gaps of STAGE, whose active time is WALL; a cause
   makes one when it costs GATE_PERMILLE of GATE at least. */
static int gap_chains(struct ift_chains *c, enum ift_stage stage, uint64_t wall,
		      uint64_t gate)
{
	const struct ift_analysis *a = c->a;
	size_t nops = ift_trace_op_count(c->t) + 1;
	struct gapacc acc[IFT_CAUSE_GPU_BOUND + 1];
	int ret = 0;

	memset(acc, 0, sizeof(acc));
	for (int k = 1; k <= IFT_CAUSE_GPU_BOUND; k++) {
		acc[k].nops = nops;
		if (!(acc[k].op_cost = calloc(nops, sizeof(uint64_t)))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	/* the selected CUDA threads' gaps, and who woke or preempted them */
	for (size_t i = 0; i < a->nth && i < c->nth; i++) {
		const struct ch_thread *ct = &c->th[i];
		const struct ch_stage *st = &ct->stage[stage];

		if (!ct->active || !thread_selected(c, i))
			continue;
		if (peers_merge(&acc[IFT_CAUSE_DATA_STARVATION].peers, &st->wakers) < 0 ||
		    peers_merge(&acc[IFT_CAUSE_DATA_STARVATION].relays, &st->relays) < 0 ||
		    peers_merge(&acc[IFT_CAUSE_CPU_CONTENTION].peers, &st->preemptors) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		for (int k = 1; st->gacc && k < IFT_CAUSE_GPU_BOUND; k++) {
			const struct gapacc *y = &st->gacc[k];
			struct gapacc *x = &acc[k];

			x->gaps += y->gaps;
			x->len += y->len;
			x->blocked += y->blocked;
			x->fed += y->fed;
			x->fed_gaps += y->fed_gaps;
			x->oncpu += y->oncpu;
			x->oncpu_gaps += y->oncpu_gaps;
			x->runq += y->runq;
			x->excused += y->excused;
			x->pages += y->pages;
			x->page_bytes += y->page_bytes;
			x->cost += y->cost;
			x->sys.busy_sum += y->sys.busy_sum;
			x->sys.nbusy += y->sys.nbusy;
			x->sys.run_sum += y->sys.run_sum;
			x->sys.nrun += y->sys.nrun;
			for (size_t op = 0; op < y->nops && op < nops; op++)
				x->op_cost[op] += y->op_cost[op];
			if (sites_merge(&x->sites, &y->sites) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (y->worst_v > x->worst_v) {
				x->worst_v = y->worst_v;
				x->worst = y->worst;
			}
		}
	}
	{
		static const enum ift_cause causes[] = {
			IFT_CAUSE_DATA_STARVATION, IFT_CAUSE_CPU_CONTENTION, IFT_CAUSE_PAGE_ALLOC,
		};

		for (size_t k = 0; k < sizeof(causes) / sizeof(causes[0]); k++) {
			enum ift_cause cause = causes[k];
			struct gapacc *x = &acc[cause];

			if (!x->worst_v || x->cost < c->o.tail_floor_ns ||
			    permille(x->cost, gate) < GAP_MIN_PERMILLE)
				continue;
			ret = gap_chain(c, x, cause, stage, x->cost, wall);
			if (ret < 0)
				goto out;
		}
	}
out:
	for (int k = 1; k <= IFT_CAUSE_GPU_BOUND; k++) {
		free(acc[k].op_cost);
		free(acc[k].peers.v);
		free(acc[k].relays.v);
		free(acc[k].sites.v);
	}
	return ret;
}

/* ---- the healthy case ----------------------------------------------- */

static int gpu_bound_chain(struct ift_chains *c, uint64_t wall)
{
	const struct ift_analysis *a = c->a;
	const struct ift_call_info *worst = c->dev.worst.has ? &c->dev.worst.c : NULL;
	uint64_t total = c->dev.total, runq = c->dev.runq;
	uint32_t best = 0;
	int ret = 0;
	size_t tail = 0;	/* the tail chain of the same op, + 1 */

	for (size_t i = 1; i < c->nopacc; i++)
		if (c->dev.wait[i] > c->dev.wait[best])
			best = (uint32_t)i;
	if (!worst || permille(total, wall) < GPU_BOUND_PERMILLE)
		return 0;

	/*
	 * One chain per (op, cause): where a tail chain said the op's tail is
	 * device time, this one, which says more (the whole op, its device
	 * wait and run-queue wait as every gpu_bound chain gives them), takes
	 * its place and keeps its call sites.
	 */
	for (size_t i = 0; i < c->nchains; i++)
		if (c->chains[i].cause == IFT_CAUSE_GPU_BOUND &&
		    !strcmp(c->chains[i].op, op_name(c, best)))
			tail = i + 1;
	{
		const char *op = op_name(c, best);
		struct ift_chain *ch = chain_new(c, IFT_CAUSE_GPU_BOUND, IFT_PHASE_INSIDE,
						 IFT_STAGE_STEADY, op, total, wall);
		struct cb b = { .c = c, .ch = ch };
		struct sysavg sv = { 0 };
		char d1[32];
		unsigned busy;

		if (!ch)
			return -ENOMEM;
		for (size_t i = 0; i < ift_analysis_op_count(a); i++) {
			const struct ift_op_stats *st = ift_analysis_op(a, i);

			if (!strcmp(st->name, op)) {
				ch->p50_ns = st->p50_ns;
				ch->p99_ns = st->p99_ns;
				ch->tail_ratio = st->p50_ns ? (double)st->p99_ns /
							      (double)st->p50_ns : 0;
			}
		}
		ch->pid = worst->pid;
		ch->tid = worst->tid;
		for (size_t i = 0; i < c->nth && i < a->nth; i++)
			if (c->th[i].active && thread_selected(c, i))
				sys_add(c, c->th[i].first_call, c->th[i].last_end, &sv);
		busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
		cb_num(&b, "device_wait_ns", total);
		cb_num(&b, "runqueue_wait_ns", runq);
		if (sv.nbusy)
			cb_num(&b, "cpu_busy_permille", busy);
		cb_num(&b, "cpus", c->cpus);
		cb_step(&b, worst->ts, "cuda", ch_printf(c, "%s enters %s",
					      ift_analysis_comm(a, worst->tid, worst->ts),
					      op_name(c, worst->op)));
		cb_step(&b, worst->ts + worst->dur_ns, "cuda",
			ch_printf(c, "%s returns after %s, %s of it waiting for a CPU",
				  op_name(c, worst->op), dur(d1, sizeof(d1), worst->dur_ns),
				  worst->runqueue_ns ? "some" : "none"));
		ch->summary = ch_printf(c, "GPU-bound -> the CUDA threads spent %u%% of their "
					"active time waiting for the device in %s, the CPUs %u%% "
					"busy -> the host keeps the GPU fed; nothing to fix on "
					"the host", (permille(total, wall) + 5) / 10, op,
					(busy + 5) / 10);
		cb_rec(&b, ch_printf(c, "to go faster, make the GPU work cheaper (kernels, "
				     "mixed precision, fused ops) or use a faster GPU; more "
				     "loader workers or CPU will not help"));
		if ((ret = cb_finish(&b)) < 0 || !tail)
			return ret;
		ch->sites = c->chains[tail - 1].sites;
		ch->nsites = c->chains[tail - 1].nsites;
		memmove(&c->chains[tail - 1], &c->chains[tail],
			(c->nchains - tail) * sizeof(*c->chains));
		c->nchains--;
	}
	return ret;
}

/* ---- the whole ------------------------------------------------------ */

static int cmp_chain(const void *x, const void *y)
{
	const struct ift_chain *p = x, *q = y;

	if (p->severity != q->severity)
		return p->severity < q->severity ? 1 : -1;
	if ((p->stage == IFT_STAGE_STEADY) != (q->stage == IFT_STAGE_STEADY))
		return p->stage == IFT_STAGE_STEADY ? -1 : 1;
	if (p->cost_ns != q->cost_ns)
		return p->cost_ns < q->cost_ns ? 1 : -1;
	return (int)p->cause - (int)q->cause;
}

int ift_chains_build(struct ift_chains *c, const struct ift_analysis *a,
		     struct ift_trace *t)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	uint64_t wall[IFT_STAGE_TAIL + 1] = { 0 };
	int ret = 0;

	if (c->err)
		return c->err;
	c->a = a;
	c->t = t;
	c->start_ts = s->start_ts;
	c->cpus = s->cpus;
	c->sel = calloc(a->nth + 1, sizeof(*c->sel));
	if (!c->sel)
		return -ENOMEM;
	if (!c->meta_read && (ret = ch_start(c, a)) < 0)
		return ret;
	for (size_t i = 0; i < ift_analysis_thread_count(a); i++) {
		/* the public part is the first member of the analyzer's thread */
		const struct az_thread *th =
			(const struct az_thread *)(const void *)ift_analysis_thread(a, i);

		/*
		 * The gaps and the active time are the feeding threads': the
		 * thread with the most CUDA time in each process.  Another thread
		 * that makes a call at start and one at exit did not starve.
		 */
		if (th->idx < a->nth && th->info.role && !strcmp(th->info.role, "cuda thread"))
			c->sel[th->idx] = true;
	}
	/* the active time of the selected CUDA threads, first call to last
	   end, by stage */
	for (size_t i = 0; i < c->nth && i < a->nth; i++) {
		const struct ch_thread *ct = &c->th[i];
		const struct ift_loop_info *l = ct->loop;

		if (!ct->active || !thread_selected(c, i))
			continue;
		if (!l || !l->period) {
			wall[IFT_STAGE_STARTUP] += ct->last_end - ct->first_call;
			continue;
		}
		wall[IFT_STAGE_STARTUP] += az_overlap(ct->first_call, ct->last_end, 0, l->from_ts);
		wall[IFT_STAGE_STEADY] += az_overlap(ct->first_call, ct->last_end, l->from_ts,
						     l->to_ts);
		wall[IFT_STAGE_TAIL] += az_overlap(ct->first_call, ct->last_end, l->to_ts,
						   UINT64_MAX);
	}
	if (wall[IFT_STAGE_STEADY]) {
		ret = slow_chains(c, wall[IFT_STAGE_STEADY]);
		if (ret >= 0)
			ret = gap_chains(c, IFT_STAGE_STEADY, wall[IFT_STAGE_STEADY],
					 wall[IFT_STAGE_STEADY]);
		if (ret >= 0)
			ret = gpu_bound_chain(c, wall[IFT_STAGE_STEADY]);
		if (ret < 0)
			return ret;
	}
	/* the start-up and the tail, apart: their share of their own time, and
	   never above LOW; only what counts in the whole run makes a chain */
	for (int k = IFT_STAGE_STARTUP; k <= IFT_STAGE_TAIL; k += 2) {
		uint64_t all = wall[IFT_STAGE_STARTUP] + wall[IFT_STAGE_STEADY] +
			       wall[IFT_STAGE_TAIL];

		if (wall[k] && (ret = gap_chains(c, (enum ift_stage)k, wall[k], all)) < 0)
			return ret;
	}
	if (c->nchains > 1)
		qsort(c->chains, c->nchains, sizeof(*c->chains), cmp_chain);
	return 0;
}

size_t ift_chains_count(const struct ift_chains *c)
{
	return c->nchains;
}

const struct ift_chain *ift_chains_get(const struct ift_chains *c, size_t i)
{
	return i < c->nchains ? &c->chains[i] : NULL;
}

void ift_chains_free(struct ift_chains *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nth; i++) {
		free(c->th[i].dev);
		free(c->th[i].gw.v);
		free(c->th[i].gp.v);
		free(c->th[i].gr.v);
		for (int s = 0; s <= IFT_STAGE_TAIL; s++) {
			struct ch_stage *st = &c->th[i].stage[s];

			free(st->wakers.v);
			free(st->preemptors.v);
			free(st->relays.v);
			for (int k = 0; st->gacc && k <= IFT_CAUSE_GPU_BOUND; k++) {
				free(st->gacc[k].op_cost);
				free(st->gacc[k].sites.v);
			}
			free(st->gacc);
		}
	}
	for (size_t i = 0; i < c->nblocks; i++)
		free(c->blocks[i]);
	free(c->blocks);
	free(c->th);
	free(c->sel);
	free(c->waits);
	for (size_t op = 0; op < c->nopacc; op++) {
		struct opacc *o = &c->opacc[op];

		free(o->ran.v);
		free(o->sys.pend);
		free(o->sys_wait.pend);
		for (int k = 0; k <= IFT_CAUSE_GPU_BOUND; k++) {
			free(o->sites[k].v);
			free(o->worst[k].at);
		}
	}
	free(c->opacc);
	free(c->dev.wait);
	free(c->dev.worst.at);
	free(c->active);
	free(c->cpu);
	free(c->chains);
	free(c);
}
