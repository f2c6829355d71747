// SPDX-License-Identifier: MIT
/*
 * A chain in words: its steps, numbers, tasks and advice, who ran on the
 * CPUs in its worst window (tallied in the pass: struct ch_win), and what
 * the roles of the tasks it names suggest doing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chains.h"
#include "util/array.h"
#include "util/buf.h"

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

/* "pt_data_worker 71% (4 tasks), train 20%, idle 9%" */
const char *ift_ch_usage_text(struct ift_chains *c, const struct usage *u, uint64_t ts)
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
		if (ift_ch_permille(ns, u->known_ns) < 10)
			break;
		len = ift_appendf(buf, sizeof(buf), len, "%s%s %u%%", shown ? ", " : "",
				  comm[0] ? comm : "?", (ift_ch_permille(ns, u->known_ns) + 5) / 10);
		if (ntask > 1)
			len = ift_appendf(buf, sizeof(buf), len, " (%" PRIu64 " tasks)", ntask);
		shown++;
		if (len >= sizeof(buf) - 1)
			break;
	}
	if (len < sizeof(buf) && u->idle_ns)
		snprintf(buf + len, sizeof(buf) - len, "%sidle %u%%", shown ? ", " : "",
			 (ift_ch_permille(u->idle_ns, u->known_ns) + 5) / 10);
	return ift_ch_printf(c, "%s", buf);
}

/* ---- building a chain ----------------------------------------------- */

void ift_ch_cb_step(struct cb *b, uint64_t ts, const char *layer, const char *text)
{
	if (text && b->nsteps < 16)
		b->steps[b->nsteps++] = (struct ift_chain_step){
			ts > b->c->start_ts ? ts - b->c->start_ts : 0, layer, text };
}

void ift_ch_cb_num(struct cb *b, const char *key, uint64_t v)
{
	if (b->nnums < 32)
		b->nums[b->nnums++] = (struct ift_chain_num){ key, v, false };
}

void ift_ch_cb_old_num(struct cb *b, const char *key, uint64_t v)
{
	if (b->nnums < 32)
		b->nums[b->nnums++] = (struct ift_chain_num){ key, v, true };
}

void ift_ch_cb_rec(struct cb *b, const char *text)
{
	if (text && b->nrecs < 8)
		b->recs[b->nrecs++] = text;
}

/* Peers P (sorted here) become tasks of RELATION, the top MAX of them. */
void ift_ch_cb_tasks(struct cb *b, const char *relation, struct ch_peers *p, size_t max)
{
	uint64_t total = 0;

	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), ift_ch_cmp_peer);
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
		t->role = ti && ti->role ? ti->role : pi ? pi->role : IFT_ROLE_NONE;
		t->role_evidence = ti && ti->role ? ti->role_evidence :
				   pi ? pi->role_evidence : NULL;
		t->outside = q->tid && q->tid != UINT32_MAX && !pi;
		t->count = q->count;
		t->ns = q->ns;
		t->share_permille = ift_ch_permille(q->ns, total);
	}
}

/* The relays among peers P: those that pass on enough to be one (roles.c);
   a thread that relayed a wake-up now and then is none. */
void ift_ch_cb_relays(struct cb *b, struct ch_peers *p)
{
	size_t n = b->ntasks, k = n;

	ift_ch_cb_tasks(b, "relayed", p, 3);
	for (size_t i = n; i < b->ntasks; i++)
		if (b->tasks[i].role == IFT_ROLE_RELAY ||
		    b->tasks[i].role == IFT_ROLE_PIN_MEMORY)
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

/* Python frames by file, function and line; one frame's entries most
   cost first, so its first is the site that gave it most. */
static int cmp_py_frame(const void *x, const void *y)
{
	const struct ift_chain_py_site *p = x, *q = y;
	int c = ift_py_frame_cmp(p->frame, q->frame);

	if (c)
		return c;
	if (p->cost_ns != q->cost_ns)
		return p->cost_ns < q->cost_ns ? 1 : -1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

static int cmp_py_cost(const void *x, const void *y)
{
	const struct ift_chain_py_site *p = x, *q = y;

	if (p->cost_ns != q->cost_ns)
		return p->cost_ns < q->cost_ns ? 1 : -1;
	if (p->calls != q->calls)
		return p->calls < q->calls ? 1 : -1;
	return ift_py_frame_cmp(p->frame, q->frame);
}

/*
 * The chain's Python call sites: every site of tally S (compacted) by its
 * innermost Python frame, the top ones by cost, and how many of the calls
 * (or gaps) with a site had Python frames.
 */
static void cb_py_sites(struct cb *b, const struct ch_sites *s)
{
	struct ift_chain_py_site *v;
	uint64_t cost = 0, calls = 0;
	size_t n = 0, m = 0;

	for (size_t i = 0; i < s->n; i++)
		b->site_calls += s->v[i].calls;
	if (!s->n)
		return;
	if (!(v = malloc(s->n * sizeof(*v)))) {
		b->nomem = true;
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ift_frame *f = ift_stack_py_top(ift_trace_stack(b->c->t,
									     s->v[i].stack));

		if (!f)
			continue;
		v[n++] = (struct ift_chain_py_site){ .frame = f, .stack = s->v[i].stack,
						     .calls = s->v[i].calls,
						     .cost_ns = s->v[i].cost };
		cost += s->v[i].cost;
		calls += s->v[i].calls;
	}
	b->py_calls = calls;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_py_frame);
	for (size_t i = 0; i < n; i++) {
		if (m && !ift_py_frame_cmp(v[i].frame, v[m - 1].frame)) {
			v[m - 1].calls += v[i].calls;
			v[m - 1].cost_ns += v[i].cost_ns;
		} else {
			v[m++] = v[i];
		}
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), cmp_py_cost);
	for (size_t i = 0; i < m && b->npy_sites < IFT_CHAIN_SITES; i++) {
		struct ift_chain_py_site *x = &b->py_sites[b->npy_sites++];

		*x = v[i];
		x->share_permille = cost ? ift_ch_permille(v[i].cost_ns, cost) :
				    ift_ch_permille(v[i].calls, calls);
	}
	free(v);
}

/* The top sites of tally S (sorted here) become the chain's, and its
   Python call sites. */
void ift_ch_cb_sites(struct cb *b, struct ch_sites *s)
{
	uint64_t cost = 0, calls = 0;

	ift_ch_sites_compact(s);
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
		x->share_permille = cost ? ift_ch_permille(s->v[i].cost, cost) :
				    ift_ch_permille(s->v[i].calls, calls);
	}
	cb_py_sites(b, s);
}

int ift_ch_cb_finish(struct cb *b)
{
	struct ift_chains *c = b->c;
	struct ift_chain *ch = b->ch;
	void *p;

	ch->nsteps = b->nsteps;
	ch->nnums = b->nnums;
	ch->ntasks = b->ntasks;
	ch->nrecs = b->nrecs;
	if (!(p = ift_ch_alloc(c, b->nsteps, sizeof(*b->steps))))
		return -ENOMEM;
	memcpy(p, b->steps, b->nsteps * sizeof(*b->steps));
	ch->steps = p;
	if (!(p = ift_ch_alloc(c, b->nnums, sizeof(*b->nums))))
		return -ENOMEM;
	memcpy(p, b->nums, b->nnums * sizeof(*b->nums));
	ch->nums = p;
	if (!(p = ift_ch_alloc(c, b->ntasks, sizeof(*b->tasks))))
		return -ENOMEM;
	memcpy(p, b->tasks, b->ntasks * sizeof(*b->tasks));
	ch->tasks = p;
	if (!(p = ift_ch_alloc(c, b->nrecs, sizeof(*b->recs))))
		return -ENOMEM;
	memcpy(p, b->recs, b->nrecs * sizeof(*b->recs));
	ch->recs = p;
	ch->nsites = b->nsites;
	if (b->nsites) {
		if (!(p = ift_ch_alloc(c, b->nsites, sizeof(*b->sites))))
			return -ENOMEM;
		memcpy(p, b->sites, b->nsites * sizeof(*b->sites));
		ch->sites = p;
	}
	ch->site_calls = b->site_calls;
	ch->py_calls = b->py_calls;
	ch->npy_sites = b->npy_sites;
	if (b->npy_sites) {
		if (!(p = ift_ch_alloc(c, b->npy_sites, sizeof(*b->py_sites))))
			return -ENOMEM;
		memcpy(p, b->py_sites, b->npy_sites * sizeof(*b->py_sites));
		ch->py_sites = p;
	}
	if (b->nomem)
		return -ENOMEM;
	if (!ch->summary)
		return -ENOMEM;
	return 0;
}

/* Severity is the steady state's: a start-up or tail chain is LOW. */
struct ift_chain *ift_ch_chain_new(struct ift_chains *c, enum ift_cause cause,
				   enum ift_phase phase, enum ift_stage stage,
				   const char *op, uint64_t cost, uint64_t wall)
{
	struct ift_chain *ch;
	unsigned share = ift_ch_permille(cost, wall);

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
	ch->py = c->a && ift_analysis_py(c->a);
	ch->severity = cause == IFT_CAUSE_GPU_BOUND || stage != IFT_STAGE_STEADY ? IFT_SEV_LOW :
		       share >= IFT_SEV_HIGH_PERMILLE ? IFT_SEV_HIGH :
		       share >= IFT_SEV_MEDIUM_PERMILLE ? IFT_SEV_MEDIUM : IFT_SEV_LOW;
	return ch;
}

/* "the N input workers", in C's memory */
static const char *workers_who(struct ift_chains *c, unsigned n)
{
	return ift_ch_printf(c, "the %u input worker%s", n, n == 1 ? "" : "s");
}

/*
 * The most input worker processes that ran at once: a loader that is made
 * again each epoch has its workers counted once, not once an epoch.
 */
static unsigned workers_at_once(const struct ift_analysis *a)
{
	unsigned most = 0;

	for (size_t i = 0; i < ift_analysis_process_count(a); i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);
		unsigned n = 0;

		if (p->role != IFT_ROLE_INPUT_WORKER)
			continue;
		/* the most at once is reached at some worker's start */
		for (size_t k = 0; k < ift_analysis_process_count(a); k++) {
			const struct ift_process_info *q = ift_analysis_process(a, k);

			n += q->role == IFT_ROLE_INPUT_WORKER && q->start_ns <= p->start_ns &&
			     q->end_ns > p->start_ns;
		}
		if (n > most)
			most = n;
	}
	return most;
}

static void who_of(const struct cb *b, const char *relation, uint32_t cuda_pid,
		   struct who *w)
{
	const struct ift_analysis *a = b->c->a;

	memset(w, 0, sizeof(*w));
	w->workers = workers_at_once(a);
	for (size_t i = 0; i < b->ntasks; i++) {
		const struct ift_chain_task *t = &b->tasks[i];

		if (strcmp(t->relation, relation))
			continue;
		if (t->role == IFT_ROLE_INPUT_WORKER || t->role == IFT_ROLE_INPUT_THREAD ||
		    t->role == IFT_ROLE_PIN_MEMORY) {
			w->worker_share += t->share_permille;
			w->threads += t->role == IFT_ROLE_INPUT_THREAD;
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

void ift_ch_recommend_cpu(struct cb *b, uint32_t cuda_pid)
{
	struct ift_chains *c = b->c;
	struct who w;
	unsigned cpus = c->cpus ? c->cpus : 1;

	who_of(b, "preempted", cuda_pid, &w);
	if (w.worker_share >= 300 && w.workers) {
		ift_ch_cb_rec(b, ift_ch_printf(c, "%u input workers + 1 feeding thread on %u CPUs: use "
				    "num_workers=%u and persistent_workers=True",
				    w.workers, cpus, cpus > 1 ? cpus - 1 : 1));
		ift_ch_cb_rec(b, ift_ch_printf(c, "for a dataset already in memory as a tensor, index it "
				    "directly (x[idx[i:i+batch]]) instead of a DataLoader"));
	}
	if (w.outside_share >= 300 && w.outside && w.noutside == 1)
		ift_ch_cb_rec(b, ift_ch_printf(c, "pid %u (%s), outside the traced processes, took %u%% of "
				    "the wait: move it off these CPUs (taskset -acp, a cpuset "
				    "cgroup) or lower its priority (renice -n 19 -p %u)",
				    w.outside->pid, w.outside->comm,
				    (w.outside_share + 5) / 10, w.outside->pid));
	else if (w.outside_share >= 300 && w.outside)
		ift_ch_cb_rec(b, ift_ch_printf(c, "%u tasks outside the traced processes took %u%% of the "
				    "wait, pid %u (%s) the most (%u%%): move them off these CPUs "
				    "(taskset -acp, a cpuset cgroup) or lower their priority "
				    "(renice -n 19 -p %u ...)", w.noutside,
				    (w.outside_share + 5) / 10, w.outside->pid, w.outside->comm,
				    (w.outside->share_permille + 5) / 10, w.outside->pid));
	if (w.same_share >= 300 && w.same)
		ift_ch_cb_rec(b, ift_ch_printf(c, "threads of the CUDA process (%s) compete with the launch "
				    "thread: cap them at %u (torch.set_num_threads(%u), "
				    "OMP_NUM_THREADS=%u)", w.same->comm, cpus > 1 ? cpus - 1 : 1,
				    cpus > 1 ? cpus - 1 : 1, cpus > 1 ? cpus - 1 : 1));
	if (!b->nrecs)
		ift_ch_cb_rec(b, ift_ch_printf(c, "keep the CUDA-calling thread on a CPU of its own: fewer "
				    "busy tasks than the %u CPUs, or a higher priority for it "
				    "(renice -n -5, chrt)", cpus));
}

/* ---- chains from the gaps ------------------------------------------- */

uint32_t ift_ch_top_op(const struct gapacc *g)
{
	uint32_t best = 0;

	for (size_t i = 1; i < g->nops; i++)
		if (g->op_cost[i] > g->op_cost[best])
			best = (uint32_t)i;
	return best;
}

/* What the profile found each kind of work to be, and its fix. */
static const struct {
	const char *what;	/* "spent N% of their CPU ..." */
	const char *cost;	/* "... is the cost", before the frame that showed it */
	const char *fix;
} works[] = {
	[IFT_WORK_DECODE] = { "decoding", "decoding is the cost",
		"decode each sample once and keep it decoded (a cache of arrays), use a "
		"faster decoder (Pillow-SIMD, Image.draft for JPEG, torchvision.io.decode_jpeg), "
		"or decode on the GPU (torchvision.io.decode_jpeg(device='cuda'), DALI)" },
	[IFT_WORK_TRANSFORM] = { "in transforms", "the transform is the cost",
		"apply it to whole batches on the GPU (torchvision.transforms.v2 on batched "
		"tensors), or cache its output where it is not random" },
	[IFT_WORK_COLLATE] = { "collating", "collate is the cost",
		"build each batch whole (a sampler yielding index batches with "
		"batch_size=None, or __getitems__) instead of collating per-sample tensors" },
	[IFT_WORK_INDEXING] = { "indexing a tensor a sample at a time", "indexing is the cost",
		"for a dataset already in memory as a tensor, index a batch at once "
		"(x[idx[i:i+batch]], a sampler yielding index batches with batch_size=None, "
		"or __getitems__)" },
	[IFT_WORK_KERNEL] = { "in the kernel",
		"the kernel's time is page faults and system calls",
		"reuse buffers across batches (preallocated arrays, one pinned buffer) "
		"instead of allocating per sample, and read files in larger blocks" },
	[IFT_WORK_PYTHON] = { "in their own Python", "the per-sample Python is the cost",
		"do it on whole batches (numpy or torch operations over the batch) instead "
		"of a Python loop per sample" },
};

/*
 * The finding of the profile of ROLE's threads, WHO by name, as two
 * recommendations: what their CPU went to, quoting the line (and the
 * user's line that called it) or the function, and the fix for that kind
 * of work.  False, and nothing said, without a profile or a finding.
 */
static bool profile_fix(struct cb *b, enum ift_role role, const char *who)
{
	struct ift_chains *c = b->c;
	const struct ift_prof_group *g = ift_profile_group(ift_analysis_profile(c->a), role);
	struct ift_prof_finding f;
	char fr[512], caller[512] = "";

	if (!g)
		return false;
	b->ch->profile = g;
	ift_profile_finding(g, &f);
	if (f.work == IFT_WORK_UNKNOWN)
		return false;
	ift_func_format(f.top->frame, fr, sizeof(fr));
	if (f.top->caller) {
		memcpy(caller, ", called from ", 15);
		ift_frame_format(f.top->caller, caller + 14, sizeof(caller) - 14);
	}
	ift_ch_cb_rec(b, ift_ch_printf(c, "%s spent %u%% of their CPU %s (%" PRIu64 " of %" PRIu64
				       " samples), the most at %s%s (%" PRIu64 ")", who,
				       (ift_ch_permille(f.samples, g->samples) + 5) / 10,
				       works[f.work].what, f.samples, g->samples, fr, caller,
				       f.top->self));
	ift_ch_cb_rec(b, ift_ch_printf(c, "%s (%s): %s", works[f.work].cost, fr,
				       works[f.work].fix));
	return true;
}

/*
 * The fix for data starvation, chosen by what the feeders did (docs/report.md,
 * "How a fix is chosen"), each quoting the figures that chose it.
 */
void ift_ch_recommend_data(struct cb *b, uint32_t cuda_pid, uint64_t fed, uint64_t oncpu,
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

		if (p->role != IFT_ROLE_INPUT_WORKER)
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
	ift_ch_cb_num(b, "workers", w.workers);
	ift_ch_cb_num(b, "input_threads", w.threads);
	ift_ch_cb_num(b, "workers_on_cpu_ns", won);
	ift_ch_cb_num(b, "workers_runqueue_wait_ns", wrq);
	ift_ch_cb_num(b, "workers_blocked_ns", wblk);
	ift_ch_cb_num(b, "workers_blocked_io_ns", wio);
	all = won + wrq + wblk;
	rq_pct = (ift_ch_permille(wrq, won + wrq) + 5) / 10;	/* of the time they wanted a CPU */
	blk_pct = (ift_ch_permille(wblk, all) + 5) / 10;
	io_pct = (ift_ch_permille(wio, all) + 5) / 10;
	on_pct = (ift_ch_permille(won, all) + 5) / 10;
	if (oncpu > fed) {
		ift_ch_cb_rec(b, ift_ch_printf(c, "the thread feeding the GPU builds each batch itself (%u%% "
				    "of its active time on CPU between calls, no worker feeds it): "
				    "build batches in parallel with a loader that has workers "
				    "(DataLoader num_workers=%u, persistent_workers=True)",
				    (ift_ch_permille(oncpu, wall) + 5) / 10, want));
		if (!profile_fix(b, IFT_ROLE_CUDA_THREAD, "the threads feeding the GPU"))
			ift_ch_cb_rec(b, ift_ch_printf(c, "for a tensor already in memory, index a "
					    "whole batch at once (x[idx[i:i+batch]]) instead of "
					    "per-sample __getitem__"));
	} else if (w.workers && io_pct >= 20) {
		ift_ch_cb_rec(b, ift_ch_printf(c, "the %u input workers spend %u%% of their time blocked in "
				    "I/O (uninterruptible sleep): raise num_workers or "
				    "prefetch_factor so more reads are in flight, or move the data "
				    "to faster storage or memory", w.workers, io_pct));
	} else if (w.workers && rq_pct >= 20) {
		ift_ch_cb_rec(b, ift_ch_printf(c, "%u input workers + 1 feeding thread on %u CPUs: the "
				    "workers wait for a CPU %u%% of the time they want one; use "
				    "num_workers=%u and persistent_workers=True", w.workers, cpus,
				    rq_pct, want));
		if (!profile_fix(b, IFT_ROLE_INPUT_WORKER, workers_who(c, w.workers)))
			ift_ch_cb_rec(b, ift_ch_printf(c, "make each batch cheaper to build: for a dataset "
					    "already in memory as a tensor, index a batch at once "
					    "(x[idx[i:i+batch]], a sampler yielding index batches with "
					    "batch_size=None, or __getitems__): no per-sample "
					    "__getitem__ and collate"));
	} else if (w.workers && on_pct >= 50) {
		if (!profile_fix(b, IFT_ROLE_INPUT_WORKER, workers_who(c, w.workers)))
			ift_ch_cb_rec(b, ift_ch_printf(c, "the %u input workers are on CPU %u%% of their "
					    "time and blocked in I/O %u%%: the per-sample work is the "
					    "cost; index a batch at once (an in-memory tensor indexed "
					    "per batch, a sampler yielding index batches with "
					    "batch_size=None, or __getitems__)", w.workers, on_pct,
					    io_pct));
		if (w.workers < want)
			ift_ch_cb_rec(b, ift_ch_printf(c, "then raise num_workers from %u towards %u (CPUs - 1) "
					    "and prefetch_factor", w.workers, want));
	} else if (w.workers) {
		ift_ch_cb_rec(b, ift_ch_printf(c, "the %u input workers are blocked %u%% of their time, not "
				    "in I/O (waiting for work, or for a socket), on CPU %u%%: they "
				    "are not short of CPU; raise prefetch_factor so more batches are "
				    "in flight, and see what the feeding thread does between batches "
				    "(%u%% of its active time on CPU there)", w.workers, blk_pct,
				    on_pct, (ift_ch_permille(oncpu, wall) + 5) / 10));
	} else if (w.threads) {
		profile_fix(b, IFT_ROLE_INPUT_THREAD, "the input threads");
		ift_ch_cb_rec(b, ift_ch_printf(c, "%u thread%s of the training process build%s its batches "
				    "and share%s its GIL with the feeding thread: build them in "
				    "worker processes instead (DataLoader num_workers=%u, or a "
				    "multiprocessing pool)", w.threads, w.threads == 1 ? "" : "s",
				    w.threads == 1 ? "s" : "", w.threads == 1 ? "s" : "", want));
	} else {
		ift_ch_cb_rec(b, ift_ch_printf(c, "the thread feeding the GPU waits %u%% of its time for "
				    "input: prepare the next batch ahead (a prefetching loader "
				    "or a second stream) so the wait overlaps GPU work",
				    (ift_ch_permille(fed, wall) + 5) / 10));
	}
}

/*
 * A start-up or tail chain: what the thread did between its calls before
 * its training loop began, or after it ended.  It is paid once, not every
 * step, so it says so instead of a fix for the steady state.
 */
int ift_ch_stage_chain(struct cb *b, const struct gapacc *g, enum ift_cause cause,
		       enum ift_stage stage, const struct ift_thread_info *th, const char *tcomm,
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
		       ift_ch_printf(c, "blocked %s waiting for input%s%s", ift_ch_dur(d1, sizeof(d1), g->fed),
				 top ? " from " : "", top ? top->comm : "") :
		       ift_ch_printf(c, "%s on CPU between CUDA calls (building its input, the "
				 "dataset, the model)", ift_ch_dur(d1, sizeof(d1), g->oncpu));
		break;
	case IFT_CAUSE_CPU_CONTENTION:
		what = ift_ch_printf(c, "waited %s for a CPU%s%s", ift_ch_dur(d1, sizeof(d1), cost),
				 top ? ", preempted by " : "", top ? top->comm : "");
		break;
	default:
		what = ift_ch_printf(c, "faulted in %" PRIu64 " fresh pages (%s)", g->pages,
				 ift_ch_bytes_str(d1, sizeof(d1), g->page_bytes));
		break;
	}
	if (!l || !l->period) {
		b->ch->summary = ift_ch_printf(c, "start-up (no training loop found) -> %s (tid %u) "
					   "%s, %u%% of its active time -> %s issued late",
					   tcomm, th->tid, what ? what : "",
					   (ift_ch_permille(cost, wall) + 5) / 10, op);
		ift_ch_cb_rec(b, ift_ch_printf(c, "no repeating sequence of CUDA calls: the run is all "
				    "start-up, paid once; record a longer run to see its steady "
				    "state"));
		return ift_ch_cb_finish(b);
	}
	at = (double)((startup ? l->from_ts : l->to_ts) - ift_min(c->start_ts,
			startup ? l->from_ts : l->to_ts)) / 1e9;
	b->ch->summary = ift_ch_printf(c, "%s -> %s (tid %u) %s %s the training loop %s at "
				   "%.3f s (%s, %u%% of the time %s it) -> %s issued late",
				   startup ? "start-up" : "tail", tcomm, th->tid, what ? what : "",
				   startup ? "before" : "after", startup ? "began" : "ended", at,
				   ift_ch_dur(d2, sizeof(d2), cost), (ift_ch_permille(cost, wall) + 5) / 10,
				   startup ? "before" : "after", op);
	ift_ch_cb_num(b, startup ? "loop_from_ns" : "loop_to_ns",
	       (uint64_t)(at * 1e9 + 0.5));
	ift_ch_cb_rec(b, ift_ch_printf(c, "paid once %s the training loop, not at every step: the "
			    "steady state is judged apart; %s",
			    startup ? "before" : "after",
			    startup ? "to start sooner, cache what is built before the loop (the "
				      "dataset as a saved tensor, compiled kernels) between runs" :
				      "to end sooner, make the work after the loop (evaluation, "
				      "saving) cheaper or less frequent"));
	return ift_ch_cb_finish(b);
}

/* The steps of gap W of thread TH (named TCOMM then), the worst of its
   chain, with U on the CPUs meanwhile. */
void ift_ch_gap_steps(struct cb *b, const struct ch_gap *w, const struct usage *u,
		     const struct ift_thread_info *th, const char *tcomm)
{
	struct ift_chains *c = b->c;
	const struct ift_analysis *a = c->a;
	char d1[32];
	struct sysavg sv = { 0 };
	const char *ut;
	unsigned busy;

	ift_ch_cb_step(b, w->start, "cuda", ift_ch_printf(c, "%s returns; %s (tid %u) issues no CUDA "
						"work", ift_ch_op_name(c, w->prev_op), tcomm, th->tid));
	ift_ch_sys_add(c, w->start, w->end, &sv);
	busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
	if (sv.nbusy || sv.nrun)
		ift_ch_cb_step(b, w->start, "system", ift_ch_printf(c, "CPUs %u%% busy, %.1f tasks "
					      "runnable on %u CPUs", (busy + 5) / 10,
					      sv.nrun ? (double)sv.run_sum / (double)sv.nrun : 0.0,
					      c->cpus));
	ut = ift_ch_usage_text(c, u, w->end);
	if (ut) {
		uint64_t pre = 0;

		for (size_t i = 0; i < u->n; i++) {
			const struct ift_process_info *pi = ift_analysis_process_find(a, u->v[i].pid);

			if (pi && pi->role == IFT_ROLE_INPUT_WORKER)
				pre += u->v[i].preempted;
		}
		ift_ch_cb_step(b, w->start, "system", ift_ch_printf(c, "on the CPUs meanwhile: %s", ut));
		if (pre)
			ift_ch_cb_step(b, w->start, "host", ift_ch_printf(c, "input workers preempted %"
						      PRIu64 " time%s in this gap", pre,
						      pre == 1 ? "" : "s"));
	}
	if (w->runq)
		ift_ch_cb_step(b, w->start, "host", ift_ch_printf(c, "%s waits %s for a CPU", tcomm,
							ift_ch_dur(d1, sizeof(d1), w->runq)));
	if (w->pages)
		ift_ch_cb_step(b, w->start, "host", ift_ch_printf(c, "%s faults in %" PRIu64 " pages (%s)",
							tcomm, w->pages,
							ift_ch_bytes_str(d1, sizeof(d1), w->page_bytes)));
	if (w->fed)
		ift_ch_cb_step(b, w->end, "host", ift_ch_printf(c, "%s blocked %s, woken by %s (pid %u)",
						      tcomm, ift_ch_dur(d1, sizeof(d1), w->blocked),
						      ift_analysis_comm(a, w->waker_tid, w->end),
						      w->waker_pid));
	ift_ch_cb_step(b, w->end, "cuda", ift_ch_printf(c, "%s issued %s after the previous call "
					      "returned: no work from this thread meanwhile",
					      ift_ch_op_name(c, w->next_op),
					      ift_ch_dur(d1, sizeof(d1), w->end - w->start)));
}

/* What data starvation, CPU contention or page-allocation pressure in
   the gaps of TH comes to, and what to do. */
void ift_ch_gap_summary(struct cb *b, const struct gapacc *g, enum ift_cause cause,
		    const struct ift_thread_info *th, const char *tcomm, const char *op,
		    uint64_t cost, uint64_t wall)
{
	struct ift_chains *c = b->c;
	struct ift_chain *ch = b->ch;
	char d1[32], d2[32], d3[32];

	switch (cause) {
	case IFT_CAUSE_DATA_STARVATION: {
		const struct ift_chain_task *top = b->ntasks ? &b->tasks[0] : NULL;

		if (g->fed >= g->oncpu)
			ch->summary = ift_ch_printf(c, "data starvation -> %s (tid %u) blocked %s "
						"in %" PRIu64 " gaps waiting for input%s%s%s%s "
						"(%u%% of its active time in all) -> no CUDA work "
						"issued before %s", tcomm, th->tid,
						ift_ch_dur(d1, sizeof(d1), g->fed), g->fed_gaps,
						top ? " from " : "", top ? top->comm : "",
						g->oncpu ? ", and " : "",
						g->oncpu ? ift_ch_printf(c, "%s on CPU building it",
								     ift_ch_dur(d2, sizeof(d2),
									 g->oncpu)) : "",
						(ift_ch_permille(cost, wall) + 5) / 10, op);
		else
			ch->summary = ift_ch_printf(c, "data starvation -> %s (tid %u) built its input "
						"itself: %s on CPU between CUDA calls (%u%% of its "
						"active time, %" PRIu64 " gaps over %s) -> no CUDA "
						"work issued before %s", tcomm, th->tid,
						ift_ch_dur(d1, sizeof(d1), g->oncpu),
						(ift_ch_permille(g->oncpu, wall) + 5) / 10, g->oncpu_gaps,
						ift_ch_dur(d2, sizeof(d2), c->o.tail_floor_ns), op);
		ift_ch_recommend_data(b, th->pid, g->fed, g->oncpu, wall);
		break;
	}
	case IFT_CAUSE_CPU_CONTENTION: {
		const struct ift_chain_task *top = b->ntasks ? &b->tasks[0] : NULL;

		ch->summary = ift_ch_printf(c, "CPU contention -> %s (tid %u) waited %s for a CPU "
					"between CUDA calls%s%s%s%s -> %s issued late",
					tcomm, th->tid, ift_ch_dur(d1, sizeof(d1), cost),
					g->stolen ? ", " : "",
					g->stolen ? ift_ch_printf(c, "%s of it running on a CPU the "
								  "hypervisor took (steal)",
								  ift_ch_dur(d2, sizeof(d2),
									     g->stolen)) : "",
					top ? ", preempted by " : "", top ? top->comm : "", op);
		/* steal is the host's: nothing in the guest gives that time back */
		if (ift_ch_permille(g->stolen, cost) >= 300)
			ift_ch_cb_rec(b, ift_ch_printf(c, "the hypervisor took %u%% of this time from the "
					     "VM's CPUs (steal): its vCPUs share physical CPUs with "
					     "other guests; ask for dedicated cores (an instance "
					     "without CPU overcommit) or fewer busy guests on the host",
					     (ift_ch_permille(g->stolen, cost) + 5) / 10));
		ift_ch_recommend_cpu(b, th->pid);
		break;
	}
	default:
		ch->summary = ift_ch_printf(c, "page-allocation pressure -> %s (tid %u) faulted in "
					"%" PRIu64 " fresh pages (%s) between CUDA calls, about "
					"%s -> %s issued late", tcomm, th->tid, g->pages,
					ift_ch_bytes_str(d1, sizeof(d1), g->page_bytes),
					ift_ch_dur(d2, sizeof(d2), cost), op);
		ift_ch_cb_rec(b, ift_ch_printf(c, "allocate the host buffers once and reuse them "
				     "(%s of fresh pages per gap now)",
				     ift_ch_bytes_str(d3, sizeof(d3), g->gaps ? g->page_bytes / g->gaps : 0)));
		ift_ch_cb_rec(b, ift_ch_printf(c, "keep freed memory in the process instead of returning "
				     "it to the kernel (MALLOC_TRIM_THRESHOLD_ and "
				     "MALLOC_MMAP_THRESHOLD_ above the buffer size)"));
		break;
	}
}

/* The steps of the worst call of op O for CAUSE. */
void ift_ch_slow_steps(struct cb *b, const struct opacc *o, enum ift_cause cause)
{
	struct ift_chains *c = b->c;
	const struct ift_analysis *a = c->a;
	const struct ift_call_info *w = &o->worst[cause].c;
	const struct ift_op_stats *st = o->st;
	const char *tcomm = ift_analysis_comm(a, w->tid, w->ts);
	char d1[32], d2[32];
	struct sysavg sv = { 0 };
	const char *ut;
	unsigned busy;

	ift_ch_sys_add(c, w->ts, w->ts + w->dur_ns, &sv);
	busy = sv.nbusy ? (unsigned)(sv.busy_sum / sv.nbusy) : 0;
	if (sv.nbusy || sv.nrun)
		ift_ch_cb_step(b, w->ts, "system", ift_ch_printf(c, "CPUs %u%% busy, %.1f tasks runnable "
					     "on %u CPUs", (busy + 5) / 10,
					     sv.nrun ? (double)sv.run_sum / (double)sv.nrun : 0.0,
					     c->cpus));
	ift_ch_cb_step(b, w->ts, "cuda", ift_ch_printf(c, "%s (tid %u) enters %s", tcomm, w->tid,
					     st->name));
	ut = ift_ch_usage_text(c, &o->worst[cause].u, w->ts + w->dur_ns);
	if (ut)
		ift_ch_cb_step(b, w->ts, "system", ift_ch_printf(c, "on the CPUs meanwhile: %s", ut));
	if (w->involuntary || w->runqueue_wait_ns) {
		const struct ift_call_attr *at = o->worst[cause].at;
		const char *by = NULL;

		for (uint32_t i = 0; at && i < w->nattr; i++)
			if (at[i].kind == IFT_ATTR_RAN && at[i].tid) {
				by = ift_analysis_comm(a, at[i].tid, w->ts);
				break;
			}
		if (w->involuntary)
			ift_ch_cb_step(b, w->ts, "host", ift_ch_printf(c, "preempted %u time%s, %s waiting "
						     "for a CPU%s%s%s", w->involuntary,
						     w->involuntary > 1 ? "s" : "",
						     ift_ch_dur(d1, sizeof(d1), w->runqueue_wait_ns),
						     by ? " while " : "", by ? by : "",
						     by ? " ran" : ""));
		else
			ift_ch_cb_step(b, w->ts, "host", ift_ch_printf(c, "woken, then %s waiting for a "
						     "CPU%s%s%s", ift_ch_dur(d1, sizeof(d1),
								     w->runqueue_wait_ns),
						     by ? " while " : "", by ? by : "",
						     by ? " ran" : ""));
	}
	if (w->page_allocs)
		ift_ch_cb_step(b, w->ts, "host", ift_ch_printf(c, "%u page allocations (%s) by the calling "
					     "thread", w->page_allocs,
					     ift_ch_bytes_str(d1, sizeof(d1), w->page_alloc_bytes)));
	if (w->blocked_ns)
		ift_ch_cb_step(b, w->ts, "host", ift_ch_printf(c, "blocked %s", ift_ch_dur(d1, sizeof(d1),
								       w->blocked_ns)));
	ift_ch_cb_step(b, w->ts + w->dur_ns, "cuda",
		ift_ch_printf(c, "%s returns after %s (p50 %s)", st->name,
			  ift_ch_dur(d1, sizeof(d1), w->dur_ns), ift_ch_dur(d2, sizeof(d2), st->p50_ns)));
}

/* What CAUSE in the calls of op O comes to, and what to do. */
void ift_ch_slow_summary(struct cb *b, const struct opacc *o, enum ift_cause cause)
{
	struct ift_chains *c = b->c;
	struct ift_chain *ch = b->ch;
	const struct ift_call_info *w = &o->worst[cause].c;
	const struct ift_op_stats *st = o->st;
	const char *tcomm = ift_analysis_comm(c->a, w->tid, w->ts);
	unsigned ratio10 = st->p50_ns ? (unsigned)(st->p99_ns * 10 / st->p50_ns) : 0;
	char d1[32], d2[32], d3[32], d4[32];

	switch (cause) {
	case IFT_CAUSE_CPU_CONTENTION: {
		const struct ift_chain_task *top = b->ntasks ? &b->tasks[0] : NULL;

		ch->summary = ift_ch_printf(c, "CPU contention -> %s (tid %u) waited %s for a CPU "
					"inside %" PRIu64 " calls (%" PRIu64 " preemption%s)%s%s "
					"-> %s p99 %s (%u.%ux p50)", tcomm, w->tid,
					ift_ch_dur(d3, sizeof(d3), o->runq), o->waiting, o->preempt,
					o->preempt == 1 ? "" : "s",
					top ? ", the CPU taken by " : "", top ? top->comm : "",
					st->name, ift_ch_dur(d1, sizeof(d1), st->p99_ns), ratio10 / 10,
					ratio10 % 10);
		ift_ch_recommend_cpu(b, w->pid);
		break;
	}
	case IFT_CAUSE_PAGE_ALLOC:
		ch->summary = ift_ch_printf(c, "page-allocation pressure -> %" PRIu64 " pages (%s) "
					"faulted in by %s inside slow calls -> %s p99 %s "
					"(%u.%ux p50), about %s lost", o->pages,
					ift_ch_bytes_str(d1, sizeof(d1), o->page_bytes), tcomm, st->name,
					ift_ch_dur(d2, sizeof(d2), st->p99_ns), ratio10 / 10, ratio10 % 10,
					ift_ch_dur(d3, sizeof(d3), o->part[cause]));
		ift_ch_cb_rec(b, ift_ch_printf(c, "allocate the host buffers once and reuse them: %s "
				     "of fresh pages per slow call", ift_ch_bytes_str(d4, sizeof(d4),
				     o->slow ? o->page_bytes / o->slow : 0)));
		ift_ch_cb_rec(b, ift_ch_printf(c, "copy from pinned memory (cudaMallocHost, "
				     "pin_memory=True): no staging through pageable pages"));
		break;
	default:
		ch->summary = ift_ch_printf(c, "GPU-bound -> %s waits for the device: its tail "
					"(p99 %s, %u.%ux p50) is device time, the host was not "
					"in the way", st->name, ift_ch_dur(d1, sizeof(d1), st->p99_ns),
					ratio10 / 10, ratio10 % 10);
		ift_ch_cb_rec(b, ift_ch_printf(c, "nothing to change on the host: to go faster, make the "
				     "GPU work cheaper (kernels, precision, batch size)"));
		break;
	}
}
