// SPDX-License-Identifier: MIT
/*
 * The chains' part of the analyzer's pass (its hooks): the gaps of every
 * CUDA thread, from the end of one outermost call to the next, measured as
 * they close; and the calls, as they close, added up by op (run-queue wait
 * inside them, the slow tail split by cause) and for the GPU-bound chain.
 * Nothing here keeps a call but the worst of each kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "chains.h"
#include "util/array.h"

/* ---- during the pass ------------------------------------------------ */

struct ift_ch_thread *ift_ch_thread(struct ift_chains *c, uint32_t idx)
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

const struct ift_thread_info *ift_ch_thread_info(const struct ift_chains *c, uint32_t idx)
{
	return &c->a->th[idx]->info;
}

/*
 * The gaps and the active time are the feeding threads': the listed
 * thread with the most CUDA time in each process.  Another thread that
 * makes a call at start and one at exit did not starve.
 */
int ift_ch_select(struct ift_chains *c)
{
	const struct ift_analysis *a = c->a;

	c->sel = calloc(a->nth + 1, sizeof(*c->sel));
	if (!c->sel)
		return -ENOMEM;
	c->nsel = a->nth;
	for (size_t i = 0; i < a->nth; i++)
		c->sel[i] = a->th[i]->listed && a->th[i]->info.role == IFT_ROLE_CUDA_THREAD;
	return 0;
}

/* The CUDA thread TID, or NULL: most events are other tasks', and there
   are few CUDA threads, so a scan beats a lookup. */
static struct ift_ch_thread *active_thread(struct ift_chains *c, const struct ift_analysis *a,
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
 * same run, so load that slows every fault moves them together.  Where the
 * profile sampled the thread in the gap, its samples in a page fault are a
 * measure of the faults' time too, taken where it is the larger: their
 * share of the gap's samples, less two standard deviations of their count
 * (Poisson), so that a few samples decide nothing.  An emulated CPU that
 * the host takes away mid-fault stretches the faults past what the
 * measured cost a page says, and the samples see it.
 *
 * The tracer's own cost comes out first: a gap holds the end of the return
 * probe's trap of the call before it and the start of the entry probe's of
 * the call after, at most one pair (PROBE_NS, as the recorder timed it): on
 * the CPU, and the program's own time in none of it: 2-4 us, which must
 * not lift a gap of the program's just under the floor over it.  So does
 * the steal in its running time: the hypervisor's, not the program's, and
 * CPU contention as much as a wait in the run queue is (*STOLEN: what of
 * it counted).
 */
static void gap_costs(const struct ch_gap *g, uint64_t floor, uint64_t page_ns,
		      uint64_t probe_ns, uint64_t v[], uint64_t *oncpu, uint64_t *stolen)
{
	uint64_t len = g->end - g->start;
	uint64_t on = len > g->blocked + g->runq ? len - g->blocked - g->runq : 0;
	uint64_t probes = ift_min(on, probe_ns), pg;

	on -= probes;
	len -= probes;
	*stolen = ift_min(on, g->stolen);
	on -= *stolen;
	len -= *stolen;
	pg = ift_min(on, g->pages * page_ns);
	if (g->fault_samples > 4) {
		double f = (double)g->fault_samples;
		uint64_t sampled = (uint64_t)((double)on * (f - 2.0 * sqrt(f)) / g->samples);

		pg = ift_max(pg, sampled);
	}
	if (pg * 4 >= on)
		pg = on;
	memset(v, 0, (IFT_CAUSE_GPU_BOUND + 1) * sizeof(*v));
	*oncpu = len >= floor ? on - pg : 0;
	v[IFT_CAUSE_DATA_STARVATION] = g->fed + *oncpu;
	v[IFT_CAUSE_CPU_CONTENTION] = g->runq - ift_min(g->runq, g->excused) + *stolen;
	v[IFT_CAUSE_PAGE_ALLOC] = pg;
}

/* Adds what G, a gap of a thread of PID in STAGE, cost, by cause, to ACC
   (an array by cause), as C weighs it; U: who ran on the CPUs in it. */
static int gap_account(struct ift_chains *c, struct gapacc *acc, uint32_t pid,
		       enum ift_stage stage, const struct ch_gap *g, const struct usage *u,
		       size_t nops)
{
	const struct ift_sys_sample *smp = c->a->nsmp ? &c->a->smp[c->a->nsmp - 1] : NULL;
	uint64_t v[IFT_CAUSE_GPU_BOUND + 1], oncpu, stolen;
	struct ch_gpu gpu[IFT_CAUSE_GPU_BOUND + 1] = { 0 };

	gap_costs(g, c->o.tail_floor_ns, c->page_ns, c->probe_ns, v, &oncpu, &stolen);
	if (ift_ch_gpu_window(c, pid, stage, g->start, g->end, v, gpu) < 0)
		return -ENOMEM;
	for (int k = 1; k < IFT_CAUSE_GPU_BOUND; k++) {
		struct gapacc *x = &acc[k];

		x->gaps++;
		x->len += g->end - g->start;
		x->oncpu += oncpu;
		x->oncpu_gaps += oncpu > 0;
		x->blocked += g->blocked;
		x->blocked_io += g->blocked_io;
		x->fed += g->fed;
		x->fed_gaps += g->fed > 0;
		x->runq += g->runq;
		x->excused += g->excused;
		x->stolen += stolen;
		x->pages += g->pages;
		x->page_bytes += g->page_bytes;
		if (!v[k])
			continue;
		x->cost += v[k];
		ift_ch_gpu_merge(&x->gpu, &gpu[k]);
		if (ift_ch_site_add(&x->sites, g->next_stack, 1, v[k]) < 0)
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
			if (ift_ch_usage_keep(&x->worst_u, u) < 0)
				return -ENOMEM;
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
		      struct ift_ch_thread *ct, uint32_t idx, uint64_t ts, uint32_t op,
		      uint64_t stack)
{
	struct ch_gap *g = &ct->cur;
	/* a gap belongs to the stage of the call that ends it: the wait for
	   the loop's first batch is the start-up's */
	enum ift_stage stage = ift_loop_stage(ct->loop, ts);
	struct ch_stage *st = &ct->stage[stage];

	if (ift_ch_peers_merge(&st->wakers, &ct->gw) < 0 ||
	    ift_ch_peers_merge(&st->preemptors, &ct->gp) < 0 ||
	    ift_ch_peers_merge(&st->relays, &ct->gr) < 0) {
		c->err = -ENOMEM;
		return;
	}
	ct->gw.n = ct->gp.n = ct->gr.n = 0;
	if (ts <= ct->busy_until)
		return;
	{
		/* the run it makes the call in has not ended: no interval yet */
		const struct az_thread *th = a->th[idx];

		if (th->st == IFT_SCHED_RUNNING)
			g->stolen += ift_az_steal_ns(a, th->cpu, ift_max(th->since, ct->busy_until),
						     ts);
	}
	g->start = ct->busy_until;
	g->end = ts;
	ct->gwin.to = ts;
	ift_ch_win_end(c, &ct->gwin);
	g->th = idx;
	g->prev_op = ct->last_op;
	g->next_op = op;
	g->next_stack = stack;
	if (!st->gacc && !(st->gacc = calloc(IFT_CAUSE_GPU_BOUND + 1, sizeof(*st->gacc)))) {
		c->err = -ENOMEM;
		return;
	}
	if (gap_account(c, st->gacc, a->th[idx]->pid, stage, g, &ct->gwin.u,
			ift_trace_op_count(a->t) + 1) < 0)
		c->err = -ENOMEM;
}

/* What the chains need before the first event: the metadata, the ops. */
int ift_ch_start(struct ift_chains *c, const struct ift_analysis *a)
{
	const char *v = ift_trace_meta(a->t, "recorder.pid");
	size_t nops = ift_trace_op_count(a->t) + 1;

	c->a = a;
	c->recorder = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	c->page_ns = a->sum.page_fault_ns ? a->sum.page_fault_ns : PAGE_COST_NS;
	c->probe_ns = a->sum.probe_ns;
	c->meta_read = true;
	c->waits = calloc(nops, sizeof(*c->waits));
	c->opacc = calloc(nops, sizeof(*c->opacc));
	c->dev.wait = calloc(nops, sizeof(*c->dev.wait));
	if (!c->waits || !c->opacc || !c->dev.wait)
		return -ENOMEM;
	c->nopacc = nops;
	for (size_t i = 1; i < nops; i++)
		c->waits[i] = ift_trace_op(a->t, i) && ift_ch_waits_for_device(ift_trace_op(a->t, i)->name);
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
		o->thr = ift_max((uint64_t)thr, q->p50_ns + c->o.tail_floor_ns);
	}
	return 0;
}

/* TS of TID's calls is in its loop's steady state: the calls outside it
   are start-up or tail, which rank no chain. */
bool ift_ch_steady(const struct ift_analysis *a, uint32_t tid, uint64_t ts)
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
	       op < c->nopacc && c->waits[op] && ift_az_call_selected(a, r) &&
	       ift_ch_steady(a, (uint32_t)r[IFT_C_TID], r[IFT_C_TS]);
}

/* Calls of one thread that overlap (lost returns) count once: each from
   the end of the one before, in entry order, which is known only here. */
static int dev_open(struct ift_chains *c, struct ift_ch_thread *ct, size_t seq, uint64_t ts,
		    uint64_t end)
{
	if (ift_array_grow((void **)&ct->dev, &ct->capdev, ct->ndev + 1, sizeof(*ct->dev)) < 0)
		return c->err = -ENOMEM;
	ct->dev[ct->ndev++] = (struct ch_devcall){ seq, ift_max(ts, ct->dev_until) };
	ct->dev_until = ift_max(ct->dev_until, end);
	return 0;
}

/* The window of CT's call SEQ, [TS, END]: hook_call() takes it. */
static int win_open(struct ift_chains *c, struct ift_ch_thread *ct, size_t seq, uint64_t ts,
		    uint64_t end)
{
	if (ift_array_grow((void **)&ct->cwin, &ct->capcwin, ct->ncwin + 1, sizeof(*ct->cwin)) < 0)
		return c->err = -ENOMEM;
	ift_ch_win_open(&ct->cwin[ct->ncwin++], seq, ts, end);
	return 0;
}

/*
 * The window of call SEQ of thread TID, ended (the pass is past it), and
 * taken off the thread's open ones: valid until the thread's next call
 * opens one; NULL if it had none (a call the chains did not see open).
 */
static const struct usage *win_take(struct ift_chains *c, const struct ift_analysis *a,
				    uint32_t tid, size_t seq)
{
	const struct az_thread *th = ift_az_thread_lookup(a, tid);
	struct ift_ch_thread *ct = th && th->idx < c->nth ? &c->th[th->idx] : NULL;
	struct ch_win w;

	for (size_t k = 0; ct && k < ct->ncwin; k++) {
		if (ct->cwin[k].seq != seq)
			continue;
		ift_ch_win_end(c, &ct->cwin[k]);
		/* swapped past the last open one, its buffer kept */
		w = ct->cwin[k];
		ct->cwin[k] = ct->cwin[--ct->ncwin];
		ct->cwin[ct->ncwin] = w;
		return &ct->cwin[ct->ncwin].u;
	}
	return NULL;
}

static void on_call(struct ift_chains *c, const struct ift_analysis *a, const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS], end = ts + r[IFT_CALL_DUR];
	const struct az_thread *th;
	struct ift_ch_thread *ct;

	if (ts < a->lo || ts > a->hi)
		return;
	th = ift_az_thread_lookup(a, (uint32_t)r[IFT_C_TID]);
	if (!th || !(ct = ift_ch_thread(c, th->idx)))
		return;
	if (dev_call(c, a, r) && dev_open(c, ct, a->ncalls - 1, ts, end) < 0)
		return;
	if (win_open(c, ct, a->ncalls - 1, ts, end) < 0)
		return;
	if (ct->active && ts < ct->busy_until) {
		/* made inside the call before it (nested), or overlapping it */
		ct->busy_until = ift_max(ct->busy_until, end);
		ct->last_end = ct->busy_until;
		ct->gwin.from = ct->busy_until;
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
	/* the next gap's: its end is the next outermost call's entry */
	ift_ch_win_open(&ct->gwin, 0, end, UINT64_MAX);
}

/* CT waited for CPU CPU in [from, to] (clipped to its open gap): whoever was
   running there took that time from it. */
static void credit_wait(struct ift_chains *c, struct ift_ch_thread *ct, uint32_t cpu,
			uint64_t from, uint64_t to)
{
	const struct ch_cpu *k;

	if (cpu >= c->ncpu || !c->cpu[cpu].known)
		return;
	k = &c->cpu[cpu];
	from = ift_max(ift_max(from, k->since), ct->busy_until);
	if (to <= from)
		return;
	if (ift_ch_excused(c, k->tid, k->pid))
		ct->cur.excused += to - from;
	else if (ift_ch_peer_add(&ct->gp, k->tid, k->pid, to - from, 1) < 0)
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
		struct ift_ch_thread *ct = &c->th[c->active[i]];

		if (th->st == IFT_SCHED_RUNNABLE && th->cpu == cpu)
			credit_wait(c, ct, cpu, th->since, ts);
		/* and their windows saw prev run until now */
		ift_ch_win_switch(c, &ct->gwin, cpu, r);
		for (size_t w = 0; w < ct->ncwin; w++)
			ift_ch_win_switch(c, &ct->cwin[w], cpu, r);
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
	struct ift_ch_thread *ct;

	if (c->err)
		return;
	if (!c->meta_read && (c->err = ift_ch_start(c, a)) < 0)
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
		    r[IFT_PG_ORDER] < IFT_PAGE_ORDER_MAX) {
			ct->cur.pages += 1ULL << r[IFT_PG_ORDER];
			ct->cur.page_bytes += ift_trace_alloc_bytes(a->t, r[IFT_PG_ORDER]);
		}
		break;
	case IFT_T_PROFILE:
		ct = active_thread(c, a, r[IFT_C_TID]);
		if (ct && ct->active && r[IFT_C_TS] >= ct->busy_until) {
			ct->cur.samples++;
			ct->cur.fault_samples += !!(r[IFT_PF_FLAGS] & IFT_PF_F_FAULT);
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
	struct ift_ch_thread *ct;
	uint64_t s, ns;

	if (c->err || (iv->state != IFT_SCHED_BLOCKED && iv->state != IFT_SCHED_RUNNABLE &&
		       iv->state != IFT_SCHED_RUNNING))
		return;
	ct = active_thread(c, a, iv->tid);
	if (!ct)
		return;
	s = ift_max(iv->start_ts, ct->busy_until);
	if (iv->end_ts <= s)
		return;
	ns = iv->end_ts - s;
	if (iv->state == IFT_SCHED_RUNNING) {
		ct->cur.stolen += ift_az_steal_ns(a, iv->cpu, s, iv->end_ts);
		return;
	}
	if (iv->state == IFT_SCHED_RUNNABLE) {
		/* the last stretch of the wait: the switch that ends it has not
		   reached on_switch() yet, so the CPU still names prev */
		ct->cur.runq += ns;
		credit_wait(c, ct, iv->cpu, iv->start_ts, iv->end_ts);
		return;
	}
	ct->cur.blocked += ns;
	if (iv->io)
		ct->cur.blocked_io += ns;
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
	if (ift_ch_peer_add(&ct->gw, iv->src_pid && iv->src_pid != iv->pid ? iv->src_pid : iv->src_tid,
		     iv->src_pid, ns, 1) < 0 ||
	    (iv->relay_tid && ift_ch_peer_add(&ct->gr, iv->relay_tid, iv->relay_pid, ns, 1) < 0))
		c->err = -ENOMEM;
}

/* CL (the SEQ-th call) is the worst of W so far by V: the first in entry
   order of the calls with the largest V, whatever order they close in.  U:
   who ran on the CPUs meanwhile, or NULL. */
static int worst_keep(struct ch_call *w, const struct ift_call_info *cl,
		      const struct ift_call_attr *at, const struct usage *u, size_t seq,
		      uint64_t v)
{
	static const struct usage none;
	struct ift_call_attr *copy = NULL;
	struct usage keep = w->u;

	if (w->has && (v < w->v || (v == w->v && seq > w->seq)))
		return 0;
	if (cl->nattr && at) {
		copy = malloc(cl->nattr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, at, cl->nattr * sizeof(*copy));
	}
	if (ift_ch_usage_keep(&keep, u ? u : &none) < 0) {
		free(copy);
		return -ENOMEM;
	}
	free(w->at);
	*w = (struct ch_call){ .has = true, .seq = seq, .v = v, .c = *cl, .at = copy, .u = keep };
	if (!copy)
		w->c.nattr = 0;
	return 0;
}

/*
 * Splits call C's excess over P50 between the causes.
 */
static void split_call(const struct ift_call_info *cl, uint64_t p50, bool wait_op,
		       uint64_t page_ns, uint64_t page_size, uint64_t part[])
{
	uint64_t e = cl->dur_ns - p50, rest, oc, pg;

	part[IFT_CAUSE_CPU_CONTENTION] = ift_min(e, cl->runqueue_wait_ns);
	rest = e - part[IFT_CAUSE_CPU_CONTENTION];
	oc = cl->on_cpu_ns > p50 ? cl->on_cpu_ns - p50 : 0;
	pg = cl->page_allocs ? ift_min(ift_min(rest, oc), cl->page_alloc_bytes / page_size *
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
		       const struct ift_call_attr *at, const struct usage *u, size_t seq)
{
	uint64_t exc = 0, rq;
	int ret = 0;

	for (uint32_t k = 0; at && k < cl->nattr && ret == 0; k++) {
		if (at[k].kind != IFT_ATTR_RAN)
			continue;
		if (ift_ch_excused(c, at[k].tid, at[k].pid))
			exc += at[k].ns;
		else
			ret = ift_ch_peer_add(&o->ran, at[k].tid, at[k].pid, at[k].ns, at[k].count);
	}
	if (ret < 0)
		return ret;
	rq = cl->runqueue_wait_ns - ift_min(cl->runqueue_wait_ns, exc);
	o->excused += cl->runqueue_wait_ns - rq;
	if (!rq)
		return 0;
	o->waiting++;
	o->runq += rq;
	o->preempt += cl->involuntary;
	{
		uint64_t cost[IFT_CAUSE_GPU_BOUND + 1] = { [IFT_CAUSE_CPU_CONTENTION] = rq };

		if ((ret = ift_ch_gpu_window(c, cl->pid, IFT_STAGE_STEADY, cl->ts,
					     cl->ts + cl->dur_ns, cost, o->gpu)) < 0)
			return ret;
	}
	if ((ret = ift_ch_site_add(&o->sites[IFT_CAUSE_CPU_CONTENTION], cl->stack, 1, rq)) < 0 ||
	    (ret = worst_keep(&o->worst[IFT_CAUSE_CPU_CONTENTION], cl, at, u, seq, rq)) < 0)
		return ret;
	return ift_ch_sys_defer(c, cl->ts, cl->ts + cl->dur_ns, &o->sys_wait);
}

/* A call in the long tail of its op: its excess over p50, split. */
static int call_slow(struct ift_chains *c, struct opacc *o, const struct ift_call_info *cl,
		     const struct ift_call_attr *at, const struct usage *u, size_t seq)
{
	uint64_t part[IFT_CAUSE_GPU_BOUND + 1];
	int ret;

	split_call(cl, o->p50, c->waits[cl->op], c->page_ns, ift_trace_page_size(c->a->t), part);
	/* its run-queue wait took its share in call_waited() */
	part[IFT_CAUSE_CPU_CONTENTION] = 0;
	if ((ret = ift_ch_gpu_window(c, cl->pid, IFT_STAGE_STEADY, cl->ts, cl->ts + cl->dur_ns,
				     part, o->gpu)) < 0)
		return ret;
	o->slow++;
	o->excess += cl->dur_ns - o->p50;
	for (int k = IFT_CAUSE_PAGE_ALLOC; k <= IFT_CAUSE_GPU_BOUND; k++) {
		/* every slow call counts for the sites, its cost as split */
		if ((ret = ift_ch_site_add(&o->sites[k], cl->stack, 1, part[k])) < 0 ||
		    (ret = worst_keep(&o->worst[k], cl, at, u, seq, part[k])) < 0)
			return ret;
		o->part[k] += part[k];
	}
	o->pages += cl->page_allocs;
	o->page_bytes += cl->page_alloc_bytes;
	return ift_ch_sys_defer(c, cl->ts, cl->ts + cl->dur_ns, &o->sys);
}

/* A call that waits for the device, for the GPU-bound chain: its time but
   for its run-queue wait, from where its clip (dev_open()) says. */
static int call_device(struct ift_chains *c, const struct ift_analysis *a,
		       const struct ift_call_info *cl, size_t seq)
{
	const struct az_thread *th = ift_az_thread_lookup(a, cl->tid);
	struct ift_ch_thread *ct = th && th->idx < c->nth ? &c->th[th->idx] : NULL;
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
	v = v > cl->runqueue_wait_ns ? v - cl->runqueue_wait_ns : 0;
	{
		uint64_t cost[IFT_CAUSE_GPU_BOUND + 1] = { [IFT_CAUSE_GPU_BOUND] = v };
		int ret = ift_ch_gpu_window(c, cl->pid, IFT_STAGE_STEADY, from, end, cost,
					    c->dev.gpu);

		if (ret < 0)
			return ret;
	}
	c->dev.wait[cl->op] += v;
	c->dev.total += v;
	c->dev.runq += cl->runqueue_wait_ns;
	return worst_keep(&c->dev.worst, cl, NULL, NULL, seq, v);
}

static void hook_call(void *ctx, const struct ift_analysis *a, const struct ift_call_info *cl,
		      const struct ift_call_attr *at, size_t seq)
{
	struct ift_chains *c = ctx;
	const struct usage *u;
	struct opacc *o;
	int ret = 0;

	if (c->err)
		return;
	u = win_take(c, a, cl->tid, seq);
	if (!cl->selected || cl->op >= c->nopacc || cl->op >= a->nopm ||
	    !a->opq[cl->op].calls || !ift_ch_steady(a, cl->tid, cl->ts))
		return;
	o = &c->opacc[cl->op];
	if (cl->runqueue_wait_ns)
		ret = call_waited(c, o, cl, at, u, seq);
	if (ret >= 0 && o->flagged && cl->dur_ns >= o->thr)
		ret = call_slow(c, o, cl, at, u, seq);
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
