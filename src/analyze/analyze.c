// SPDX-License-Identifier: MIT
/*
 * The analysis pass: one cursor over every table in time order feeds the
 * state machine (sched.c) and records the CUDA calls of the window; at the
 * end the threads, processes and op tables (stats.c) are built from them.
 *
 * Events before the window still drive the state machine, so a thread's
 * state at the window's start is known; only what happens inside the window
 * is counted.  After the window the pass goes on only until the last call
 * that began inside it has ended, so that call's breakdown is whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"

#define ALL_TABLES	(((1U << IFT_T_NR) - 1) & ~1U)

void *ift_az_alloc(struct ift_analysis *a, size_t n, size_t size)
{
	void *p;

	if (ift_array_grow((void **)&a->blocks, &a->capblocks, a->nblocks + 1,
			   sizeof(*a->blocks)) < 0)
		return NULL;
	p = calloc(n ? n : 1, size);
	if (p)
		a->blocks[a->nblocks++] = p;
	return p;
}

static int arg_index(const struct ift_op *op, const char *name)
{
	for (unsigned i = 0; i < op->nargs && i < IFT_CALL_MAX_ARGS; i++)
		if (op->args[i] && !strcmp(op->args[i], name))
			return (int)i;
	return -1;
}

/* An op that allocates or registers pinned host memory: the runtime's by
   name, the driver's with any version suffix (cuMemAllocHost_v2 ...). */
static bool is_host_alloc(const char *name)
{
	static const struct { const char *name; bool prefix; } ops[] = {
		{ "cudaHostAlloc", false }, { "cudaMallocHost", false },
		{ "cudaHostRegister", false }, { "cuMemHostAlloc", true },
		{ "cuMemAllocHost", true }, { "cuMemHostRegister", true },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].prefix ? !strncmp(name, ops[i].name, strlen(ops[i].name)) :
				    !strcmp(name, ops[i].name))
			return true;
	return false;
}

static int setup_ops(struct ift_analysis *a)
{
	size_t n = ift_trace_op_count(a->t);

	a->opm = calloc(n + 1, sizeof(*a->opm));
	if (!a->opm)
		return -ENOMEM;
	a->nopm = n + 1;
	for (size_t id = 0; id <= n; id++) {
		const struct ift_op *op = ift_trace_op(a->t, id);
		struct az_opmeta *m = &a->opm[id];

		m->bytes_arg = m->width_arg = m->height_arg = m->kind_arg = -1;
		m->fixed_dir = -1;
		m->selected = !a->opts.nops;
		if (!op)
			continue;
		for (size_t k = 0; k < a->opts.nops; k++)
			if (!strcmp(a->opts.ops[k], op->name))
				m->selected = true;
		m->bytes_arg = arg_index(op, "bytes");
		m->width_arg = arg_index(op, "width");
		m->height_arg = arg_index(op, "height");
		m->kind_arg = arg_index(op, "kind");
		m->copy = strstr(op->name, "Memcpy") != NULL;
		m->host_alloc = is_host_alloc(op->name);
		if (m->copy && m->kind_arg < 0) {
			/* the driver says the direction in the name */
			m->fixed_dir = strstr(op->name, "HtoD") ? IFT_COPY_H2D :
				       strstr(op->name, "DtoH") ? IFT_COPY_D2H :
				       strstr(op->name, "DtoD") ? IFT_COPY_D2D :
				       strstr(op->name, "HtoH") ? IFT_COPY_H2H :
				       IFT_COPY_DEFAULT;
		}
	}
	return 0;
}

bool ift_az_pid_match(const struct ift_analysis *a, uint32_t pid, uint32_t tid)
{
	if (!a->opts.npids)
		return true;
	for (size_t i = 0; i < a->opts.npids; i++)
		if (a->opts.pids[i] == pid || a->opts.pids[i] == tid)
			return true;
	return false;
}

/* what a fresh page cost, as the recorder measured it (sample/faultcost.c) */
static const char *const fault_keys[] = {
	"host.page_fault_ns.start", "host.page_fault_ns.stop",
};

void ift_analysis_bounds(const struct ift_trace *t, uint64_t *start, uint64_t *end)
{
	uint64_t lo = ift_trace_ts_min(t), hi = ift_trace_ts_max(t), v;
	bool any = false;

	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		any |= ift_trace_rows(t, tb) != 0;
	/* the recording began before its first event and ended after its last */
	if (ift_trace_meta_u64(t, "record.start_ns", &v) && (!any || v <= lo))
		lo = v;
	if (ift_trace_meta_u64(t, "record.stop_ns", &v) && v >= lo && v >= hi)
		hi = v;
	*start = lo;
	*end = hi < lo ? lo : hi;
}

static int setup(struct ift_analysis *a)
{
	struct ift_analysis_summary *s = &a->sum;
	const char *scope = ift_trace_meta(a->t, "record.scope");
	const char *filter = ift_trace_meta(a->t, "record.filter");
	const char *pages = ift_trace_meta(a->t, "record.page_allocs");
	uint64_t lo, hi, v;

	ift_analysis_bounds(a->t, &lo, &hi);
	s->pieces = ift_trace_piece_count(a->t);
	s->start_ts = lo;
	s->end_ts = hi;
	s->command = ift_trace_meta(a->t, "cmdline");
	if (!s->command)
		s->command = "";
	s->lost_events = ift_trace_lost_events(a->t);
	if (ift_trace_meta_u64(a->t, "cpu.count", &v) && v < AZ_MAX_CPUS)
		s->cpus = (unsigned)v;
	/* measured at the start and the end of the recording: the larger is
	   nearer what the run met; a value past 1 ms a page is garbage */
	for (size_t i = 0; i < sizeof(fault_keys) / sizeof(fault_keys[0]); i++)
		if (ift_trace_meta_u64(a->t, fault_keys[i], &v) && v && v <= 1000000 &&
		    v > s->page_fault_ns)
			s->page_fault_ns = v;
	/* record/record.c: the traps of an entry and a return probe; past
	   10 ms a pair is garbage */
	if (ift_trace_meta_u64(a->t, "host.probe_ns", &v) && v <= 10000000)
		s->probe_ns = v;

	if (a->opts.has_to && a->opts.to_ns < a->opts.from_ns)
		return -EINVAL;
	a->lo = lo + ift_min(a->opts.from_ns, hi - lo);
	a->hi = a->opts.has_to ? lo + ift_min(a->opts.to_ns, hi - lo) : hi;
	a->read_from = a->opts.has_lead && a->lo - lo > a->opts.lead_ns ?
		       a->lo - a->opts.lead_ns : lo;
	s->from_ns = a->lo - lo;
	s->to_ns = a->hi - lo;
	a->site_open = a->hi >= hi;
	a->stacks = ift_trace_stack_count(a->t) != 0;
	a->py = ift_az_py_trace(a->t);
	s->duration_ns = a->hi - a->lo;
	s->page_allocs_counted = pages && !strcmp(pages, "count");
	s->page_counts_in = s->page_allocs_counted && a->lo == lo && a->hi == hi;
	if (s->page_allocs_counted && ift_trace_meta_u64(a->t, "kmem.count_dropped", &v))
		s->page_count_dropped = v;

	/* without a filter every task is the recording's own */
	a->all_followed = (scope && !strcmp(scope, "system")) || !filter ||
			  !strcmp(filter, "none");
	return setup_ops(a);
}

/* ---- rows -------------------------------------------------------- */

static uint64_t call_bytes(const struct az_opmeta *m, const uint64_t *r)
{
	uint64_t b;

	if (m->bytes_arg >= 0)
		return r[IFT_CALL_A0 + m->bytes_arg];
	if (m->width_arg >= 0 && m->height_arg >= 0) {
		if (__builtin_mul_overflow(r[IFT_CALL_A0 + m->width_arg],
					   r[IFT_CALL_A0 + m->height_arg], &b))
			return UINT64_MAX;
		return b;
	}
	return 0;
}

static int8_t copy_dir(const struct az_opmeta *m, const uint64_t *r)
{
	uint64_t kind;

	if (!m->copy)
		return -1;
	if (m->kind_arg < 0)
		return (int8_t)m->fixed_dir;
	/* cudaMemcpyKind: 0 host to host ... 4 default (unified addressing) */
	kind = r[IFT_CALL_A0 + m->kind_arg];
	return kind <= IFT_COPY_DEFAULT ? (int8_t)kind : IFT_COPY_OTHER;
}

/* Room for call SEQ in the calls kept for ift_analysis_call(). */
static int keep_room(struct ift_analysis *a, size_t seq)
{
	size_t cap = a->capcalls;

	if (ift_array_grow((void **)&a->calls, &cap, seq + 1, sizeof(*a->calls)) < 0)
		return -ENOMEM;
	if (cap != a->capcalls) {
		uint32_t *w = realloc(a->call_th, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		a->call_th = w;
		a->capcalls = cap;
	}
	return 0;
}

static int on_call(struct ift_analysis *a, const uint64_t *r, bool in)
{
	uint32_t tid = (uint32_t)r[IFT_C_TID], pid = (uint32_t)r[IFT_C_PID];
	uint64_t ts = r[IFT_C_TS], op = r[IFT_CALL_OP];
	const struct az_opmeta *m = op < a->nopm ? &a->opm[op] : &a->opm[0];
	struct ift_call_info c;
	struct az_thread *th;
	uint32_t seq;
	int ret;

	th = ift_az_thread_at(a, tid, pid, ts);
	if (!th)
		return -ENOMEM;
	th->subject = true;
	th->called = true;
	if (!th->nopen && (ret = ift_az_roles_gap_end(th)) < 0)
		return ret;
	ret = ift_az_sched_running(a, th, ts, (uint32_t)r[IFT_C_CPU]);
	if (ret < 0)
		return ret;
	if (m->host_alloc)
		th->host_alloc_calls++;
	if (!in)
		return ift_az_calls_expire(a, th, ts);
	if (a->ncalls >= UINT32_MAX - 1)
		return -IFT_E_LIMIT;
	c = (struct ift_call_info){
		.ts = ts, .dur_ns = ift_az_call_dur(r), .ret = (int64_t)r[IFT_CALL_RET],
		.tid = tid, .pid = pid, .op = (uint32_t)op,
		.flags = (uint32_t)r[IFT_CALL_FLAGS], .depth = (uint32_t)r[IFT_CALL_DEPTH],
		.selected = ift_az_call_selected(a, r),
		.bytes = call_bytes(m, r),
		.copy_dir = copy_dir(m, r),
		.stack = r[IFT_CALL_STACK],
	};
	seq = (uint32_t)a->ncalls++;
	if (a->opts.keep_calls) {
		if ((ret = keep_room(a, seq)) < 0)
			return ret;
		a->call_th[seq] = th->idx;
	}
	a->sum.calls++;
	a->max_end = ift_max(a->max_end, ts + c.dur_ns);
	if (!c.depth && !(c.flags & IFT_CALL_F_NESTED)) {
		th->cuda_ns_all += c.dur_ns;
		th->cuda_calls_all++;
		/* the CUDA figures of a thread count its selected calls only */
		if (c.selected) {
			th->info.cuda_calls++;
			th->info.cuda_ns += c.dur_ns;
		}
	}
	if (ift_az_site_window(a, r) && (ret = ift_az_sites_call(a, &c, r)) < 0)
		return ret;
	ret = ift_az_call_open(a, th, &c, seq);
	if (ret < 0)
		return ret;
	return ift_az_stats_call(a, th, &th->open[th->nopen - 1].c,
			     th->open[th->nopen - 1].c.parent ? &th->open[th->nopen - 2].c :
								 NULL);
}

static int on_page(struct ift_analysis *a, const uint64_t *r, bool in)
{
	uint64_t ts = r[IFT_C_TS], order = r[IFT_PG_ORDER], bytes;
	struct az_thread *th;
	int ret;

	th = ift_az_thread_at(a, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID], ts);
	if (!th)
		return -ENOMEM;
	th->subject = true;
	ret = ift_az_sched_running(a, th, ts, (uint32_t)r[IFT_C_CPU]);
	if (ret < 0)
		return ret;
	/* the machine's pages: a corrupt order counts none */
	bytes = ift_trace_alloc_bytes(a->t, order);
	if (in) {
		th->info.sched.page_allocs++;
		th->info.sched.page_alloc_bytes += bytes;
	}
	ift_az_call_page(th, ts, bytes);
	return 0;
}

static int on_task(struct ift_analysis *a, const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS];
	uint32_t tid = (uint32_t)r[IFT_C_TID], pid = (uint32_t)r[IFT_C_PID];
	uint32_t ctid = (uint32_t)r[IFT_TK_CHILD_TID];
	uint32_t cpid = (uint32_t)r[IFT_TK_CHILD_PID];
	struct az_thread *th, *child;
	int ret;

	if (!tid)
		return 0;
	th = ift_az_thread_at(a, tid, pid, ts);
	if (!th)
		return -ENOMEM;
	switch (r[IFT_TK_KIND]) {
	case IFT_TASK_FORK:
	case IFT_TASK_CLONE:
		ret = ift_az_sched_running(a, th, ts, (uint32_t)r[IFT_C_CPU]);
		if (ret < 0 || !ctid)
			return ret;
		/*
		 * A tid seen before and exited is a task that died: this one is
		 * new.  Seen and alive, it is this very task, whose fork row
		 * came after its first events: the decoder keeps an event
		 * committed late (a preempted vCPU) at the merge point, and the
		 * parent's fork may be one.
		 */
		child = ift_az_thread_lookup(a, ctid);
		if (child && child->seen && child->exited)
			child = ift_az_thread_new(a, ctid, cpid);
		else if (!child)
			child = ift_az_thread_new(a, ctid, cpid);
		if (!child)
			return -ENOMEM;
		child->pid = cpid;
		ift_az_thread_seen(child, ts);
		return 0;
	case IFT_TASK_EXEC:
		th->execed = true;
		return ift_az_sched_running(a, th, ts, (uint32_t)r[IFT_C_CPU]);
	case IFT_TASK_EXIT:
		return ift_az_sched_exit(a, th, ts);
	default:
		/* a name given at first sight or on a rename: no running proof */
		return 0;
	}
}

/*
 * A task's sample: with record --page-allocs=count, a thread's allocations
 * (kmem.page_allocs) and their bytes (kmem.page_alloc_bytes) over the whole
 * recording, one row each at its end; other metrics are not known here.
 */
static int on_task_sample(struct ift_analysis *a, const uint64_t *r, const char *m)
{
	bool bytes = !strcmp(m, "kmem.page_alloc_bytes");
	struct az_thread *th;

	if (!a->sum.page_counts_in || (!bytes && strcmp(m, "kmem.page_allocs")))
		return 0;
	th = ift_az_thread_at(a, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID], r[IFT_C_TS]);
	if (!th)
		return -ENOMEM;
	if (bytes)
		th->info.sched.page_alloc_bytes += r[IFT_SM_VALUE];
	else
		th->info.sched.page_allocs += r[IFT_SM_VALUE];
	return 0;
}

/* A system sample: the metrics of one moment, one row each. */
static int on_sample(struct ift_analysis *a, const uint64_t *r)
{
	const char *m = ift_trace_string(a->t, r[IFT_SM_METRIC]);
	struct ift_sys_sample *s;
	bool busy;

	if (!m)
		return 0;
	if (ift_sample_of_task(r))
		return on_task_sample(a, r, m);
	if (r[IFT_SM_SCOPE] != 0)
		return 0;
	busy = !strcmp(m, "cpu.busy_permille");
	if (!busy && strcmp(m, "procs.running"))
		return 0;
	if (!a->nsmp || a->smp[a->nsmp - 1].ts != r[IFT_C_TS]) {
		if (ift_array_grow((void **)&a->smp, &a->capsmp, a->nsmp + 1, sizeof(*a->smp)) < 0)
			return -ENOMEM;
		a->smp[a->nsmp++] = (struct ift_sys_sample){ r[IFT_C_TS], -1, -1 };
	}
	s = &a->smp[a->nsmp - 1];
	if (busy)
		s->busy_permille = (int64_t)r[IFT_SM_VALUE];
	else
		s->running = (int64_t)r[IFT_SM_VALUE];
	return 0;
}

static int run_pass(struct ift_analysis *a)
{
	struct ift_cursor *cur;
	struct ift_event ev;
	uint64_t stop = a->sum.end_ts, maxcpu = 0;
	int ret;

	/* NVML's samples were read before (ift_az_gpu_read()) */
	cur = ift_cursor_new(a->t, ALL_TABLES & ~(1U << IFT_T_GPU), a->read_from);
	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		uint64_t ts = r[IFT_C_TS];
		bool in = ts >= a->lo && ts <= a->hi;

		/* past the window and past every call that began in it */
		if (ts > a->hi && ts > a->max_end) {
			stop = ts;
			break;
		}
		/* the profile's samples are the recorder's, not events */
		if (in && ev.table != IFT_T_PROFILE) {
			a->sum.events++;
			if (ev.table != IFT_T_CALLS)
				a->sum.host_events++;
			if (ev.table != IFT_T_SAMPLES && r[IFT_C_CPU] > maxcpu)
				maxcpu = r[IFT_C_CPU];
		}
		switch (ev.table) {
		case IFT_T_CALLS:
			ret = on_call(a, r, in);
			break;
		case IFT_T_SWITCHES:
			ret = ift_az_sched_switch(a, r);
			break;
		case IFT_T_WAKEUPS:
			ret = ift_az_sched_wakeup(a, r);
			break;
		case IFT_T_PAGE_ALLOCS:
			ret = on_page(a, r, in);
			break;
		case IFT_T_TASKS:
			ret = on_task(a, r);
			break;
		case IFT_T_SAMPLES:
			ret = on_sample(a, r);
			break;
		case IFT_T_PROFILE:
			ret = in ? ift_az_profile_row(a, r) : 0;
			break;
		default:
			ret = 0;
			break;
		}
		if (ret < 0)
			break;
		if (a->opts.hooks.event)
			a->opts.hooks.event(a->opts.hooks.ctx, a, &ev);
	}
	ift_cursor_free(cur);
	if (ret < 0)
		return ret;
	if (!a->sum.cpus && a->sum.events)
		a->sum.cpus = (unsigned)ift_min(maxcpu + 1, AZ_MAX_CPUS);
	return ift_az_sched_finish(a, ift_max(stop, a->hi));
}

/* ---- results ------------------------------------------------------ */

static bool followed(const struct ift_analysis *a, const struct az_thread *th,
		     const struct ift_task *task)
{
	uint32_t pid = th->pid;

	if (a->all_followed || th->subject || th->execed)
		return true;
	if (task && (task->flags & IFT_TASK_F_STARTED))
		return true;
	/* a process given with -p: its pid is in the metadata, all of them
	   in one value, separated by spaces */
	for (const char *v = ift_trace_meta(a->t, "record.pid"); v && *v;) {
		char *end;
		unsigned long p = strtoul(v, &end, 10);

		if (end == v)
			break;
		if (p == pid)
			return true;
		v = end;
	}
	return false;
}

bool ift_az_thread_followed(const struct ift_analysis *a, const struct az_thread *th,
			uint64_t ts)
{
	return followed(a, th, ift_trace_task_find(a->t, th->tid, ts));
}

/* Fills a thread's public part; false when it is not shown. */
static bool thread_info(struct ift_analysis *a, struct az_thread *th)
{
	const struct ift_loop_info *loop;
	struct ift_thread_info *ti = &th->info;
	const struct ift_task *task;
	uint64_t s, e, start = a->sum.start_ts;

	if (!th->seen || !th->tid)
		return false;
	task = ift_trace_task_find(a->t, th->tid, th->first_ts);
	ti->tid = th->tid;
	ti->pid = th->pid ? th->pid : task ? task->pid : th->tid;
	th->pid = ti->pid;
	ti->ppid = task ? task->ppid : 0;
	ti->task = task;
	ti->started = task && (task->flags & IFT_TASK_F_STARTED);
	ti->exited = th->exited || (task && (task->flags & IFT_TASK_F_EXITED));
	s = ti->started ? ift_max(task->start_ts, a->lo) : a->lo;
	e = th->exited ? th->exit_ts :
	    task && (task->flags & IFT_TASK_F_EXITED) ? task->exit_ts : a->hi;
	e = ift_min(e, a->hi);
	ti->first_ns = th->first_ts - start;
	if ((loop = ift_analysis_loop(a, th->tid)))
		ti->loop = *loop;
	ti->last_ns = th->last_ts - start;
	if (th->first_ts > a->hi || s > e || e < a->lo)
		return false;
	ti->start_ns = s - start;
	ti->end_ns = e - start;
	th->followed = followed(a, th, task);
	return th->followed && ift_az_pid_match(a, ti->pid, ti->tid);
}

static int cmp_thread(const void *x, const void *y)
{
	const struct az_thread *p = *(struct az_thread *const *)x;
	const struct az_thread *q = *(struct az_thread *const *)y;

	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return p->first_ts < q->first_ts ? -1 : p->first_ts > q->first_ts;
}

static void sched_sum(struct ift_sched_stats *d, const struct ift_sched_stats *s)
{
	d->on_cpu_ns += s->on_cpu_ns;
	d->runqueue_wait_ns += s->runqueue_wait_ns;
	d->blocked_ns += s->blocked_ns;
	d->involuntary += s->involuntary;
	d->voluntary += s->voluntary;
	d->wakeups += s->wakeups;
	d->page_allocs += s->page_allocs;
	d->page_alloc_bytes += s->page_alloc_bytes;
	if (s->max_off_cpu_ns > d->max_off_cpu_ns) {
		d->max_off_cpu_ns = s->max_off_cpu_ns;
		d->max_off_cpu_at = s->max_off_cpu_at;
	}
}

static int process_info(struct ift_analysis *a, struct ift_process_info *p,
			struct az_thread **th, size_t n)
{
	const struct ift_task *task = NULL;
	struct az_thread *cuda = NULL;
	const struct ift_thread_info **tv;
	uint64_t first = UINT64_MAX;

	tv = ift_az_alloc(a, n, sizeof(*tv));
	if (!tv)
		return -ENOMEM;
	p->pid = th[0]->pid;
	p->start_ns = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		struct ift_thread_info *ti = &th[i]->info;

		tv[i] = ti;
		th[i]->proc = (uint32_t)(p - a->procs);
		sched_sum(&p->sched, &ti->sched);
		p->cuda_calls += ti->cuda_calls;
		p->cuda_ns += ti->cuda_ns;
		p->start_ns = ift_min(p->start_ns, ti->start_ns);
		p->end_ns = ift_max(p->end_ns, ti->end_ns);
		first = ift_min(first, th[i]->first_ts);
		if (ti->tid == p->pid)
			task = ti->task;
		if (th[i]->cuda_ns_all && (!cuda || th[i]->cuda_ns_all > cuda->cuda_ns_all))
			cuda = th[i];
	}
	p->threads = tv;
	p->nthreads = n;
	/* the process is named by its leader, even when the leader is not
	   among the threads shown */
	if (!task)
		task = ift_trace_task_find(a->t, p->pid, first);
	if (!task)
		task = th[0]->info.task;
	if (task && task->ncomms) {
		const char **names = ift_az_alloc(a, task->ncomms, sizeof(*names));

		if (!names)
			return -ENOMEM;
		for (unsigned i = 0; i < task->ncomms; i++)
			names[i] = task->comms[i].comm;
		p->names = names;
		p->nnames = task->ncomms;
		p->comm = names[task->ncomms - 1];
	} else {
		p->comm = "";
	}
	p->ppid = task ? task->ppid : th[0]->info.ppid;
	/* the other roles come from what the threads did (roles.c) */
	if (cuda) {
		cuda->info.role = IFT_ROLE_CUDA_THREAD;
		p->role = IFT_ROLE_CUDA_PROCESS;
	}
	return 0;
}

static int cmp_proc(const void *x, const void *y)
{
	const struct ift_process_info *p = x, *q = y;

	if (p->cuda_ns != q->cuda_ns)
		return p->cuda_ns > q->cuda_ns ? -1 : 1;
	if (ift_sched_off_cpu(&p->sched) != ift_sched_off_cpu(&q->sched))
		return ift_sched_off_cpu(&p->sched) > ift_sched_off_cpu(&q->sched) ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

static int cmp_info_tid(const void *x, const void *y)
{
	const struct ift_thread_info *p = *(const struct ift_thread_info *const *)x;
	const struct ift_thread_info *q = *(const struct ift_thread_info *const *)y;

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return p->first_ns < q->first_ns ? -1 : p->first_ns > q->first_ns;
}

static int build_results(struct ift_analysis *a)
{
	struct az_thread **v;
	size_t n = 0, np = 0;
	int ret = 0;

	v = calloc(a->nth ? a->nth : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->nth; i++) {
		a->th[i]->listed = thread_info(a, a->th[i]);
		if (a->th[i]->listed)
			v[n++] = a->th[i];
	}
	qsort(v, n, sizeof(*v), cmp_thread);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool any = !a->opts.nops;

		while (j < n && v[j]->pid == v[i]->pid)
			any |= v[j++]->info.cuda_calls > 0;
		/* with --op, the processes that made those calls */
		if (!any)
			for (size_t k = i; k < j; k++)
				v[k]->listed = false;
		else
			np++;
		i = j;
	}
	a->procs = ift_az_alloc(a, np, sizeof(*a->procs));
	a->sel = ift_az_alloc(a, n, sizeof(*a->sel));
	if (!a->procs || !a->sel) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && v[j]->pid == v[i]->pid)
			j++;
		if (v[i]->listed) {
			ret = process_info(a, &a->procs[a->nprocs++], v + i, j - i);
			if (ret < 0)
				break;
			for (size_t k = i; k < j; k++)
				a->sel[a->nsel++] = &v[k]->info;
		}
		i = j;
	}
	free(v);
	if (ret >= 0)
		ret = ift_az_roles_assign(a);
	if (ret < 0)
		return ret;
	/* the calls the op tables count, for outputs that draw them one by one */
	for (size_t i = 0; a->opts.keep_calls && i < a->ncalls; i++)
		a->calls[i].counted = a->calls[i].selected && a->th[a->call_th[i]]->listed;
	ret = ift_az_build_ops(a);
	if (ret >= 0)
		ret = ift_az_sites_build(a);
	if (ret >= 0)
		ret = ift_az_profile_build(a);
	if (ret < 0)
		return ret;
	/* sorted after the op tables, which index processes by position */
	qsort(a->procs, a->nprocs, sizeof(*a->procs), cmp_proc);
	qsort(a->sel, a->nsel, sizeof(*a->sel), cmp_info_tid);
	return 0;
}

int ift_analysis_run(struct ift_trace *t, const struct ift_analyze_opts *opts,
		     struct ift_analysis **out)
{
	struct ift_analysis *a = calloc(1, sizeof(*a));
	int ret;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->t = t;
	if (opts)
		a->opts = *opts;
	ret = setup(a);
	if (ret >= 0)
		ret = ift_az_plan_read(a);	/* the reads before the pass */
	if (ret >= 0)
		ret = run_pass(a);
	if (ret >= 0)
		ret = build_results(a);
	if (ret < 0) {
		ift_analysis_free(a);
		return ret;
	}
	*out = a;
	return 0;
}

void ift_analysis_free(struct ift_analysis *a)
{
	if (!a)
		return;
	ift_az_sched_release(a);
	ift_az_durs_release(a);
	for (size_t i = 0; i < a->nblocks; i++)
		free(a->blocks[i]);
	free(a->blocks);
	free(a->py_ops);
	free(a->opm);
	free(a->calls);
	free(a->call_th);
	free(a->attrs);
	free(a->loops);
	ift_tidmap_release(&a->lmap);
	free(a->smp);
	ift_az_steal_free(a);
	ift_az_profile_release(a);
	ift_az_gpu_release(a);
	free(a);
}

const struct ift_analysis_summary *ift_analysis_summary(const struct ift_analysis *a)
{
	return &a->sum;
}

size_t ift_analysis_op_count(const struct ift_analysis *a)
{
	return a->nops;
}

const struct ift_op_stats *ift_analysis_op(const struct ift_analysis *a, size_t i)
{
	return i < a->nops ? &a->ops[i] : NULL;
}

const struct ift_op_stats *ift_analysis_op_find(const struct ift_analysis *a,
						const char *name)
{
	for (size_t i = 0; i < a->nops; i++)
		if (!strcmp(a->ops[i].name, name))
			return &a->ops[i];
	return NULL;
}

size_t ift_analysis_process_count(const struct ift_analysis *a)
{
	return a->nprocs;
}

const struct ift_process_info *ift_analysis_process(const struct ift_analysis *a,
						    size_t i)
{
	return i < a->nprocs ? &a->procs[i] : NULL;
}

const struct ift_process_info *ift_analysis_process_find(const struct ift_analysis *a,
							 uint32_t pid)
{
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].pid == pid)
			return &a->procs[i];
	return NULL;
}

size_t ift_analysis_thread_count(const struct ift_analysis *a)
{
	return a->nsel;
}

const struct ift_thread_info *ift_analysis_thread(const struct ift_analysis *a,
						  size_t i)
{
	return i < a->nsel ? a->sel[i] : NULL;
}

const struct ift_thread_info *ift_analysis_thread_find(const struct ift_analysis *a,
						       uint32_t tid)
{
	const struct ift_thread_info *best = NULL;

	/* the latest life of a reused tid */
	for (size_t i = 0; i < a->nsel; i++)
		if (a->sel[i]->tid == tid)
			best = a->sel[i];
	return best;
}

size_t ift_analysis_call_count(const struct ift_analysis *a)
{
	return a->opts.keep_calls ? a->ncalls : 0;
}

const struct ift_call_info *ift_analysis_call(const struct ift_analysis *a, size_t i)
{
	return i < ift_analysis_call_count(a) ? &a->calls[i] : NULL;
}

struct slow {
	uint64_t dur, ts;
	size_t i;
};

static int cmp_slow(const void *x, const void *y)
{
	const struct slow *p = x, *q = y;

	if (p->dur != q->dur)
		return p->dur > q->dur ? -1 : 1;
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

int ift_analysis_slow_calls(const struct ift_analysis *a, uint32_t op, uint32_t pid,
			    size_t **idx, size_t *n)
{
	size_t nc = ift_analysis_call_count(a), k = 0;
	struct slow *v = malloc((nc ? nc : 1) * sizeof(*v));

	*idx = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nc; i++) {
		const struct ift_call_info *c = &a->calls[i];

		if (c->counted && c->op == op && (!pid || c->pid == pid || c->tid == pid))
			v[k++] = (struct slow){ c->dur_ns, c->ts, i };
	}
	if (k) {
		qsort(v, k, sizeof(*v), cmp_slow);
		*idx = malloc(k * sizeof(**idx));
		if (!*idx) {
			free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < k; i++)
			(*idx)[i] = v[i].i;
	}
	*n = k;
	free(v);
	return 0;
}

const struct ift_call_info *ift_analysis_call_of_row(const struct ift_analysis *a,
						     uint64_t row, const uint64_t *r)
{
	const struct ift_call_info *c = row < SIZE_MAX ? ift_analysis_call(a, (size_t)row) : NULL;

	if (!c || c->ts != r[IFT_C_TS] || c->tid != r[IFT_C_TID] || c->op != r[IFT_CALL_OP] ||
	    c->depth != r[IFT_CALL_DEPTH])
		return NULL;
	return c;
}

const struct ift_call_attr *ift_analysis_call_attrs(const struct ift_analysis *a,
						    const struct ift_call_info *c)
{
	if (!c->nattr || c->attr_first + (size_t)c->nattr > a->nattrs)
		return NULL;
	return &a->attrs[c->attr_first];
}

const struct ift_sys_sample *ift_analysis_samples(const struct ift_analysis *a, size_t *n)
{
	*n = a->nsmp;
	return a->smp;
}

const char *ift_analysis_comm(const struct ift_analysis *a, uint32_t tid,
			      uint64_t ts)
{
	return ift_trace_comm(a->t, tid, ts);
}

enum ift_sched_state ift_analysis_state(const struct ift_analysis *a, uint32_t tid)
{
	const struct az_thread *th = ift_az_thread_lookup(a, tid);

	return th ? (enum ift_sched_state)th->st : IFT_SCHED_UNKNOWN;
}

uint64_t ift_lat_edge(unsigned k)
{
	static const uint64_t m125[] = { 1, 2, 5 };
	uint64_t v;

	if (k > IFT_LAT_BINS)
		k = IFT_LAT_BINS;
	v = m125[k % 3];
	for (unsigned d = 0; d < k / 3; d++)
		v *= 10;
	return v;
}

unsigned ift_lat_bin(uint64_t ns)
{
	unsigned k = 0;

	while (k + 1 < IFT_LAT_BINS && ift_lat_edge(k + 1) <= ns)
		k++;
	return k;
}

size_t ift_nearest_rank(size_t n, unsigned p)
{
	uint64_t rank = ((uint64_t)(p > 100 ? 100 : p) * n + 99) / 100;

	return rank ? (size_t)rank - 1 : 0;
}

uint64_t ift_percentile(const uint64_t *sorted, size_t n, unsigned p)
{
	return n ? sorted[ift_nearest_rank(n, p)] : 0;
}
