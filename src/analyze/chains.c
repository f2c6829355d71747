// SPDX-License-Identifier: MIT
/*
 * Causal chains, found from the numbers the pass added up.  Two kinds of
 * window are where a CUDA thread loses time:
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
 * Both are measured during the analyzer's pass (its hooks, chains-pass.c):
 * the gaps as they close, the calls as they close, added up by op; nothing
 * grows with the calls.  The worst occurrence of each chain is then read
 * again from the trace (a window of a few ms) to say who ran on the CPUs
 * then.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chains.h"
#include "util/array.h"

/* ---- chains from slow calls ----------------------------------------- */

static int slow_chain(struct ift_chains *c, struct opacc *o, enum ift_cause cause,
		      uint64_t wall)
{
	const struct ift_call_info *w = &o->worst[cause].c;
	const struct ift_op_stats *st = o->st;
	struct ift_chain *ch = ift_ch_chain_new(c, cause, IFT_PHASE_INSIDE, IFT_STAGE_STEADY,
					 st->name, o->part[cause], wall);
	struct cb b = { .c = c, .ch = ch };

	if (!ch)
		return -ENOMEM;
	ch->pid = w->pid;
	ch->tid = w->tid;
	ift_ch_gpu_chain(c, ch, &o->gpu[cause]);
	ch->p50_ns = st->p50_ns;
	ch->p99_ns = st->p99_ns;
	ch->tail_ratio = st->p50_ns ? (double)st->p99_ns / (double)st->p50_ns : 0;

	{
		/* contention: over the calls that waited; else the slow ones */
		const struct sysavg *sy = cause == IFT_CAUSE_CPU_CONTENTION ? &o->sys_wait.v :
					  &o->sys.v;

		ift_ch_cb_num(&b, "calls", st->calls);
		ift_ch_cb_num(&b, "waiting_calls", o->waiting);
		ift_ch_cb_num(&b, "slow_calls", o->slow);
		ift_ch_cb_num(&b, "slow_threshold_ns", o->thr);
		ift_ch_cb_num(&b, "excess_ns", o->excess);
		ift_ch_cb_num(&b, "cause_ns", o->part[cause]);
		ift_ch_cb_num(&b, "runqueue_wait_ns", o->runq);
		ift_ch_cb_num(&b, "excused_ns", o->excused);
		ift_ch_cb_num(&b, "involuntary_switches", o->preempt);
		ift_ch_cb_old_num(&b, "preemptions", o->preempt);
		ift_ch_cb_num(&b, "page_allocs", o->pages);
		ift_ch_cb_num(&b, "page_alloc_bytes", o->page_bytes);
		ift_ch_cb_num(&b, "page_fault_ns", c->page_ns);
		if (sy->nbusy)
			ift_ch_cb_num(&b, "cpu_busy_permille", sy->busy_sum / sy->nbusy);
		if (sy->nrun)
			ift_ch_cb_num(&b, "runnable_milli", sy->run_sum * 1000 / sy->nrun);
	}
	ift_ch_cb_num(&b, "cpus", c->cpus);
	ift_ch_cb_tasks(&b, "preempted", &o->ran, 6);
	ift_ch_cb_sites(&b, &o->sites[cause]);

	ift_ch_slow_steps(&b, o, cause);
	ift_ch_slow_summary(&b, o, cause);
	return ift_ch_cb_finish(&b);
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

		ift_ch_sys_resolve(c, &o->sys_wait);
		ift_ch_sys_resolve(c, &o->sys);
		if (!o->st)
			continue;
		if (o->runq && o->runq >= c->o.tail_floor_ns &&
		    ift_ch_permille(o->runq, wall) >= GAP_MIN_PERMILLE) {
			o->part[IFT_CAUSE_CPU_CONTENTION] = o->runq;
			ret = slow_chain(c, o, IFT_CAUSE_CPU_CONTENTION, wall);
		}
		if (!o->flagged || !o->slow)
			continue;
		for (int k = IFT_CAUSE_PAGE_ALLOC; k <= IFT_CAUSE_GPU_BOUND && ret >= 0; k++) {
			if (ift_ch_permille(o->part[k], o->excess) < PART_MIN_PERMILLE ||
			    o->part[k] < c->o.tail_floor_ns)
				continue;
			ret = slow_chain(c, o, (enum ift_cause)k, wall);
		}
	}
	return ret;
}

static int gap_chain(struct ift_chains *c, struct gapacc *g, enum ift_cause cause,
		     enum ift_stage stage, uint64_t cost, uint64_t wall)
{
	const struct ift_analysis *a = c->a;
	const struct ch_gap *w = &g->worst;
	const struct ift_thread_info *th = ift_ch_thread_info(c, w->th);
	const char *op = ift_ch_op_name(c, ift_ch_top_op(g));
	const char *tcomm = ift_analysis_comm(a, th->tid, w->start);
	struct ift_chain *ch = ift_ch_chain_new(c, cause, IFT_PHASE_BEFORE, stage, op, cost, wall);
	struct cb b = { .c = c, .ch = ch };
	const struct ift_op_stats *st = NULL;

	if (!ch)
		return -ENOMEM;
	for (size_t i = 0; i < ift_analysis_op_count(a); i++)
		if (!strcmp(ift_analysis_op(a, i)->name, op))
			st = ift_analysis_op(a, i);
	ch->pid = th->pid;
	ch->tid = th->tid;
	ift_ch_gpu_chain(c, ch, &g->gpu);
	if (st) {
		ch->p50_ns = st->p50_ns;
		ch->p99_ns = st->p99_ns;
		ch->tail_ratio = st->p50_ns ? (double)st->p99_ns / (double)st->p50_ns : 0;
	}
	ift_ch_cb_num(&b, "gaps", g->gaps);
	ift_ch_cb_num(&b, "gaps_ns", g->len);
	ift_ch_cb_num(&b, "blocked_ns", g->blocked);
	ift_ch_cb_num(&b, "blocked_io_ns", g->blocked_io);
	ift_ch_cb_num(&b, "fed_ns", g->fed);
	ift_ch_cb_num(&b, "fed_gaps", g->fed_gaps);
	ift_ch_cb_num(&b, "on_cpu_ns", g->oncpu);
	ift_ch_cb_num(&b, "on_cpu_gaps", g->oncpu_gaps);
	ift_ch_cb_num(&b, "runqueue_wait_ns", g->runq - ift_min(g->runq, g->excused));
	ift_ch_cb_num(&b, "excused_ns", g->excused);
	ift_ch_cb_num(&b, "steal_ns", g->stolen);
	ift_ch_cb_num(&b, "page_allocs", g->pages);
	ift_ch_cb_num(&b, "page_alloc_bytes", g->page_bytes);
	ift_ch_cb_num(&b, "page_fault_ns", c->page_ns);
	if (c->probe_ns)
		ift_ch_cb_num(&b, "probe_ns", c->probe_ns);
	ift_ch_cb_num(&b, "cause_ns", cost);
	if (g->sys.nbusy)
		ift_ch_cb_num(&b, "cpu_busy_permille", g->sys.busy_sum / g->sys.nbusy);
	if (g->sys.nrun)
		ift_ch_cb_num(&b, "runnable_milli", g->sys.run_sum * 1000 / g->sys.nrun);
	ift_ch_cb_num(&b, "cpus", c->cpus);
	ift_ch_cb_tasks(&b, cause == IFT_CAUSE_CPU_CONTENTION ? "preempted" : "woke", &g->peers, 6);
	if (cause == IFT_CAUSE_DATA_STARVATION)
		ift_ch_cb_relays(&b, &g->relays);
	ift_ch_cb_sites(&b, &g->sites);

	ift_ch_gap_steps(&b, w, &g->worst_u, th, tcomm);
	/*
	 * One gap that holds most of the cost is often no steady state at all
	 * but the start-up (imports, building the dataset after the model went
	 * to the device): seen on the H200 (docs/gpu-validation.md).  Say so,
	 * and how to look past it, before any fix.
	 */
	ift_ch_cb_num(&b, "worst_gap_ns", g->worst_v);
	if (stage != IFT_STAGE_STEADY)
		return ift_ch_stage_chain(&b, g, cause, stage, th, tcomm, op, cost, wall);
	if (g->worst_v * 2 > cost) {
		uint64_t end = w->end > c->start_ts ? w->end - c->start_ts : 0;

		ift_ch_cb_rec(&b, ift_ch_printf(c, "one gap (%.3f s to %.3f s) holds %u%% of this cost: if "
				     "that is the start-up (imports, loading the dataset), see the "
				     "steady state alone with --from %.3fs",
				     (double)(w->start > c->start_ts ? w->start - c->start_ts : 0) / 1e9,
				     (double)end / 1e9, (ift_ch_permille(g->worst_v, cost) + 5) / 10,
				     (double)((end + 999999) / 1000000) / 1e3));
	}

	ift_ch_gap_summary(&b, g, cause, th, tcomm, op, cost, wall);
	return ift_ch_cb_finish(&b);
}

static bool thread_selected(const struct ift_chains *c, size_t idx)
{
	return idx < c->nsel && c->sel[idx];
}

/* The chains of the gaps of STAGE, whose active time is WALL; a cause
   makes one when it costs GATE_PERMILLE of GATE at least. */
static int gap_chains(struct ift_chains *c, enum ift_stage stage, uint64_t wall,
		      uint64_t gate)
{
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
	for (size_t i = 0; i < c->nth; i++) {
		const struct ift_ch_thread *ct = &c->th[i];
		const struct ch_stage *st = &ct->stage[stage];

		if (!ct->active || !thread_selected(c, i))
			continue;
		if (ift_ch_peers_merge(&acc[IFT_CAUSE_DATA_STARVATION].peers, &st->wakers) < 0 ||
		    ift_ch_peers_merge(&acc[IFT_CAUSE_DATA_STARVATION].relays, &st->relays) < 0 ||
		    ift_ch_peers_merge(&acc[IFT_CAUSE_CPU_CONTENTION].peers, &st->preemptors) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		for (int k = 1; st->gacc && k < IFT_CAUSE_GPU_BOUND; k++) {
			const struct gapacc *y = &st->gacc[k];
			struct gapacc *x = &acc[k];

			x->gaps += y->gaps;
			x->len += y->len;
			x->blocked += y->blocked;
			x->blocked_io += y->blocked_io;
			x->fed += y->fed;
			x->fed_gaps += y->fed_gaps;
			x->oncpu += y->oncpu;
			x->oncpu_gaps += y->oncpu_gaps;
			x->runq += y->runq;
			x->excused += y->excused;
			x->stolen += y->stolen;
			x->pages += y->pages;
			x->page_bytes += y->page_bytes;
			x->cost += y->cost;
			ift_ch_gpu_merge(&x->gpu, &y->gpu);
			x->sys.busy_sum += y->sys.busy_sum;
			x->sys.nbusy += y->sys.nbusy;
			x->sys.run_sum += y->sys.run_sum;
			x->sys.nrun += y->sys.nrun;
			for (size_t op = 0; op < y->nops && op < nops; op++)
				x->op_cost[op] += y->op_cost[op];
			if (ift_ch_sites_merge(&x->sites, &y->sites) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (y->worst_v > x->worst_v) {
				x->worst_v = y->worst_v;
				x->worst = y->worst;
				x->worst_u = y->worst_u;	/* borrowed */
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
			    ift_ch_permille(x->cost, gate) < GAP_MIN_PERMILLE)
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

	const struct ift_gpu_use *gu = ift_analysis_gpu(a);
	const struct ift_gpu_time *gs = &gu->counted[IFT_STAGE_STEADY];
	/* NVML's measure of the steady state, where there is one */
	unsigned gbusy = gu->measured ? ift_ch_permille(gs->busy_ns, gs->covered_ns) : 0;
	bool gmeasured = gu->measured && gs->covered_ns;

	for (size_t i = 1; i < c->nopacc; i++)
		if (c->dev.wait[i] > c->dev.wait[best])
			best = (uint32_t)i;
	/* the CUDA threads waited for the device most of their time, or the
	   GPU was measured busy all but a tenth of it */
	if (!worst || (ift_ch_permille(total, wall) < GPU_BOUND_PERMILLE &&
		       (!gmeasured || gbusy < IFT_GPU_BUSY_PERMILLE)))
		return 0;

	/*
	 * One chain per (op, cause): where a tail chain said the op's tail is
	 * device time, this one, which says more (the whole op, its device
	 * wait and run-queue wait as every gpu_bound chain gives them), takes
	 * its place and keeps its call sites.
	 */
	for (size_t i = 0; i < c->nchains; i++)
		if (c->chains[i].cause == IFT_CAUSE_GPU_BOUND &&
		    !strcmp(c->chains[i].op, ift_ch_op_name(c, best)))
			tail = i + 1;
	{
		const char *op = ift_ch_op_name(c, best);
		struct ift_chain *ch = ift_ch_chain_new(c, IFT_CAUSE_GPU_BOUND, IFT_PHASE_INSIDE,
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
		ift_ch_gpu_chain(c, ch, &c->dev.gpu[IFT_CAUSE_GPU_BOUND]);
		for (size_t i = 0; i < c->nth; i++)
			if (c->th[i].active && thread_selected(c, i))
				ift_ch_sys_add(c, c->th[i].first_call, c->th[i].last_end, &sv);
		busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
		ift_ch_cb_num(&b, "device_wait_ns", total);
		ift_ch_cb_num(&b, "runqueue_wait_ns", runq);
		if (gmeasured)
			ift_ch_cb_num(&b, "gpu_busy_permille", gbusy);
		if (sv.nbusy)
			ift_ch_cb_num(&b, "cpu_busy_permille", busy);
		ift_ch_cb_num(&b, "cpus", c->cpus);
		ift_ch_cb_step(&b, worst->ts, "cuda", ift_ch_printf(c, "%s enters %s",
					      ift_analysis_comm(a, worst->tid, worst->ts),
					      ift_ch_op_name(c, worst->op)));
		ift_ch_cb_step(&b, worst->ts + worst->dur_ns, "cuda",
			ift_ch_printf(c, "%s returns after %s, %s of it waiting for a CPU",
				  ift_ch_op_name(c, worst->op), ift_ch_dur(d1, sizeof(d1), worst->dur_ns),
				  worst->runqueue_wait_ns ? "some" : "none"));
		ch->summary = ift_ch_printf(c, "GPU-bound -> %sthe CUDA threads spent %u%% of their "
					"active time waiting for the device in %s, the CPUs %u%% "
					"busy -> the host keeps the GPU fed; nothing to fix on "
					"the host", gmeasured ? ift_ch_printf(c, "the GPU busy "
					"%u%% of the steady state (NVML), " , (gbusy + 5) / 10) :
					"", (ift_ch_permille(total, wall) + 5) / 10, op,
					(busy + 5) / 10);
		ift_ch_cb_rec(&b, ift_ch_printf(c, "to go faster, make the GPU work cheaper (kernels, "
				     "mixed precision, fused ops) or use a faster GPU; more "
				     "loader workers or CPU will not help"));
		if ((ret = ift_ch_cb_finish(&b)) < 0 || !tail)
			return ret;
		ch->sites = c->chains[tail - 1].sites;
		ch->nsites = c->chains[tail - 1].nsites;
		ch->site_calls = c->chains[tail - 1].site_calls;
		ch->py_calls = c->chains[tail - 1].py_calls;
		ch->py_sites = c->chains[tail - 1].py_sites;
		ch->npy_sites = c->chains[tail - 1].npy_sites;
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
	/* the host was slow, but the GPU did not wait: it cost the GPU nothing */
	if (p->gpu.not_waiting != q->gpu.not_waiting)
		return p->gpu.not_waiting ? 1 : -1;
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
	if ((ret = ift_ch_select(c)) < 0)
		return ret;
	if (!c->meta_read && (ret = ift_ch_start(c, a)) < 0)
		return ret;
	/* the active time of the selected CUDA threads, first call to last
	   end, by stage */
	for (size_t i = 0; i < c->nth; i++) {
		const struct ift_ch_thread *ct = &c->th[i];
		const struct ift_loop_info *l = ct->loop;

		if (!ct->active || !thread_selected(c, i))
			continue;
		if (!l || !l->period) {
			wall[IFT_STAGE_STARTUP] += ct->last_end - ct->first_call;
			continue;
		}
		wall[IFT_STAGE_STARTUP] += ift_overlap(ct->first_call, ct->last_end, 0, l->from_ts);
		wall[IFT_STAGE_STEADY] += ift_overlap(ct->first_call, ct->last_end, l->from_ts,
						     l->to_ts);
		wall[IFT_STAGE_TAIL] += ift_overlap(ct->first_call, ct->last_end, l->to_ts,
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
		free(c->th[i].gwin.u.v);
		for (size_t k = 0; k < c->th[i].capcwin; k++)
			free(c->th[i].cwin[k].u.v);
		free(c->th[i].cwin);
		for (int s = 0; s <= IFT_STAGE_TAIL; s++) {
			struct ch_stage *st = &c->th[i].stage[s];

			free(st->wakers.v);
			free(st->preemptors.v);
			free(st->relays.v);
			for (int k = 0; st->gacc && k <= IFT_CAUSE_GPU_BOUND; k++) {
				free(st->gacc[k].op_cost);
				free(st->gacc[k].sites.v);
				free(st->gacc[k].worst_u.v);
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
			free(o->worst[k].u.v);
		}
	}
	free(c->opacc);
	free(c->dev.wait);
	free(c->dev.worst.at);
	free(c->dev.worst.u.v);
	free(c->active);
	free(c->cpu);
	free(c->gpu_left);
	free(c->chains);
	free(c);
}
