// SPDX-License-Identifier: MIT
/*
 * The per-thread scheduler state machine, driven by sched_switch and the
 * wake-ups, and the breakdown of every CUDA call by it.
 *
 * A switch-out with prev_state R or R+ leaves the thread runnable (it waits
 * in a run queue: involuntary), any other state leaves it blocked (it sleeps
 * until a wake-up: voluntary); a wake-up makes a blocked thread runnable; a
 * switch-in makes it run.  A wake-up takes two events where the kernel has
 * both: sched_waking, on the waker's CPU, names the waker, and sched_wakeup,
 * when the thread is put on its run queue (on the target CPU, from the IPI of
 * a remote wake-up), starts its run-queue wait, as the kernel's schedstat
 * run_delay starts at the enqueue: the stretch between them is still blocked,
 * by that waker.  Time is counted only between two events that both
 * say where the thread is: before its first event it is UNKNOWN and nothing
 * is invented.  A row that shows a thread as current (a call, a page
 * allocation, waking someone) proves it runs, which ends UNKNOWN early.
 *
 * While a thread waits in a run queue inside a call, every task that runs on
 * the CPU it waits for is credited with that stretch: the CPU is known from
 * the switch-out (preempted) or from the wake-up's target CPU, and the task
 * running there is the prev of the next switch on that CPU.  Only threads in a
 * call are watched that way, so the cost stays with the calls.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "ift-words.h"
#include "util/array.h"

/* ---- threads by tid ------------------------------------------------- */

struct az_thread *ift_az_thread_lookup(const struct ift_analysis *a, uint32_t tid)
{
	struct az_thread *th = a->tcache[tid & (AZ_TCACHE - 1)];
	size_t i;

	if (th && th->tid == tid)
		return th;
	if (!ift_tidmap_get(&a->tids, tid, &i))
		return NULL;
	th = a->th[i];
	/* a cache, not state: lookups stay logically const */
	((struct ift_analysis *)(uintptr_t)a)->tcache[tid & (AZ_TCACHE - 1)] = th;
	return th;
}

struct az_thread *ift_az_thread_new(struct ift_analysis *a, uint32_t tid, uint32_t pid)
{
	struct az_thread *th;

	if (ift_array_grow((void **)&a->th, &a->capth, a->nth + 1, sizeof(*a->th)) < 0)
		return NULL;
	th = calloc(1, sizeof(*th));
	/* the later thread of a reused tid wins: it is the one alive now */
	if (!th || ift_tidmap_set(&a->tids, tid, a->nth) < 0) {
		free(th);
		return NULL;
	}
	th->idx = (uint32_t)a->nth;
	th->tid = tid;
	th->pid = pid;
	a->th[a->nth++] = th;
	a->tcache[tid & (AZ_TCACHE - 1)] = th;	/* a reused tid: the new thread */
	return th;
}

struct az_thread *ift_az_thread_get(struct ift_analysis *a, uint32_t tid, uint32_t pid)
{
	struct az_thread *th = ift_az_thread_lookup(a, tid);

	if (!th)
		return ift_az_thread_new(a, tid, pid);
	/* a row naming only the tid (pid 0) must not erase what we know */
	if (pid && !th->pid)
		th->pid = pid;
	return th;
}

void ift_az_thread_seen(struct az_thread *th, uint64_t ts)
{
	if (!th->seen) {
		th->seen = true;
		th->first_ts = ts;
	}
	th->last_ts = ts;
}

struct az_thread *ift_az_thread_at(struct ift_analysis *a, uint32_t tid, uint32_t pid,
			       uint64_t ts)
{
	struct az_thread *th = ift_az_thread_get(a, tid, pid);

	if (th)
		ift_az_thread_seen(th, ts);
	return th;
}

/* ---- calls -------------------------------------------------------- */

static void call_add(struct ift_call_info *c, unsigned st, uint64_t ns)
{
	switch (st) {
	case IFT_SCHED_RUNNING:
		c->on_cpu_ns += ns;
		break;
	case IFT_SCHED_RUNNABLE:
		c->runqueue_wait_ns += ns;
		break;
	case IFT_SCHED_BLOCKED:
		c->blocked_ns += ns;
		break;
	}
}

static int attr_add(struct az_open *o, uint32_t tid, uint32_t pid, uint32_t kind,
		    uint64_t ns)
{
	for (uint32_t i = 0; i < o->nattr; i++) {
		if (o->attr[i].tid == tid && o->attr[i].kind == kind) {
			o->attr[i].count++;
			o->attr[i].ns += ns;
			return 0;
		}
	}
	if (ift_array_grow((void **)&o->attr, &o->cap, (size_t)o->nattr + 1, sizeof(*o->attr)) < 0)
		return -ENOMEM;
	o->attr[o->nattr++] = (struct ift_call_attr){
		.tid = tid, .pid = pid, .kind = kind, .count = 1, .ns = ns,
	};
	return 0;
}

static int cmp_attr(const void *x, const void *y)
{
	const struct ift_call_attr *p = x, *q = y;

	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	if (p->ns != q->ns)
		return p->ns > q->ns ? -1 : 1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

/* The call's breakdown is complete: its attributions go to the shared pool. */
static int call_finish(struct ift_analysis *a, struct az_open *o)
{
	struct ift_call_info *c = &o->c;

	if (o->nattr)
		qsort(o->attr, o->nattr, sizeof(*o->attr), cmp_attr);
	c->nattr = o->nattr;
	if (a->opts.keep_calls && o->nattr) {
		if (ift_array_grow((void **)&a->attrs, &a->capattrs, a->nattrs + o->nattr,
				   sizeof(*a->attrs)) < 0)
			return -ENOMEM;
		c->attr_first = (uint32_t)a->nattrs;
		memcpy(a->attrs + a->nattrs, o->attr, o->nattr * sizeof(*o->attr));
		a->nattrs += o->nattr;
	}
	if (a->opts.keep_calls)
		a->calls[o->seq] = *c;
	if (a->opts.hooks.call)
		a->opts.hooks.call(a->opts.hooks.ctx, a, c, o->nattr ? o->attr : NULL, o->seq);
	free(o->attr);
	o->attr = NULL;
	o->nattr = o->cap = 0;
	return 0;
}

static void wait_del(struct ift_analysis *a, struct az_thread *th);

/*
 * Calls of TH that ended by TS get the part of the current state up to their
 * end, and are done.  The state itself goes on.
 */
int ift_az_calls_expire(struct ift_analysis *a, struct az_thread *th, uint64_t ts)
{
	uint32_t k = 0;
	int ret;

	/* the common case, on every switch: no call open */
	if (!th->nopen)
		return 0;
	for (uint32_t i = 0; i < th->nopen; i++) {
		struct az_open *o = &th->open[i];

		if (o->end > ts) {
			th->open[k++] = *o;
			continue;
		}
		call_add(&o->c, th->st, ift_overlap(th->since, o->end, o->ts, o->end));
		ret = call_finish(a, o);
		if (ret < 0)
			return ret;
	}
	th->nopen = k;
	if (!k)
		wait_del(a, th);
	return 0;
}

int ift_az_call_open(struct ift_analysis *a, struct az_thread *th,
		 const struct ift_call_info *call, uint32_t seq)
{
	int ret;

	ret = ift_az_calls_expire(a, th, call->ts);
	if (ret < 0)
		return ret;
	if (ift_array_grow((void **)&th->open, &th->capopen, (size_t)th->nopen + 1,
			   sizeof(*th->open)) < 0)
		return -ENOMEM;
	th->open[th->nopen] = (struct az_open){
		.c = *call, .seq = seq, .ts = call->ts, .end = call->ts + call->dur_ns,
	};
	if ((call->depth || (call->flags & IFT_CALL_F_NESTED)) && th->nopen)
		th->open[th->nopen].c.parent = th->open[th->nopen - 1].seq + 1;
	th->nopen++;
	return 0;
}

void ift_az_call_page(struct az_thread *th, uint64_t ts,
		  uint64_t bytes)
{
	for (uint32_t i = 0; i < th->nopen; i++) {
		struct az_open *o = &th->open[i];

		if (ts >= o->ts && ts <= o->end) {
			o->c.page_allocs++;
			o->c.page_alloc_bytes += bytes;
		}
	}
}

/* ---- run-queue waiters per CPU ---------------------------------------- */

static int cpu_grow(struct ift_analysis *a, uint32_t cpu)
{
	size_t n = a->ncpu ? a->ncpu : 8;
	struct az_cpu *v;

	if (cpu < a->ncpu)
		return 0;
	if (cpu >= AZ_MAX_CPUS)
		return -IFT_E_CORRUPT;
	while (n <= cpu)
		n *= 2;
	v = realloc(a->cpu, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + a->ncpu, 0, (n - a->ncpu) * sizeof(*v));
	a->cpu = v;
	a->ncpu = n;
	return 0;
}

/* TH waits for CPU inside a call: who runs there from now on is credited. */
static int wait_add(struct ift_analysis *a, struct az_thread *th, uint32_t cpu)
{
	struct az_cpu *c;

	th->cpu = cpu;
	if (!th->nopen || th->in_wait)
		return 0;
	/* a CPU number no machine has: keep the thread, skip the crediting */
	if (cpu_grow(a, cpu) < 0)
		return cpu >= AZ_MAX_CPUS ? 0 : -ENOMEM;
	c = &a->cpu[cpu];
	if (ift_array_grow((void **)&c->wait, &c->cap, (size_t)c->nwait + 1, sizeof(*c->wait)) < 0)
		return -ENOMEM;
	c->wait[c->nwait++] = th->idx;
	th->in_wait = true;
	return 0;
}

static void wait_del(struct ift_analysis *a, struct az_thread *th)
{
	struct az_cpu *c;

	if (!th->in_wait)
		return;
	th->in_wait = false;
	c = &a->cpu[th->cpu];
	for (uint32_t i = 0; i < c->nwait; i++) {
		if (c->wait[i] == th->idx) {
			c->wait[i] = c->wait[--c->nwait];
			return;
		}
	}
}

/* TID ran where TH waited, from TH's last credit to TS. */
static int credit(struct az_thread *th, uint64_t ts, uint32_t tid, uint32_t pid)
{
	uint64_t s = th->credited;
	int ret;

	if (ts <= s)
		return 0;
	th->credited = ts;
	for (uint32_t i = 0; i < th->nopen; i++) {
		struct az_open *o = &th->open[i];
		uint64_t ns = ift_overlap(s, ts, o->ts, o->end);

		if (ns && (ret = attr_add(o, tid, pid, IFT_ATTR_RAN, ns)) < 0)
			return ret;
	}
	return 0;
}

/* ---- state intervals ------------------------------------------------ */

/*
 * Ends TH's current state at TS: the stretch counts for the thread (inside
 * the window) and for each of its open calls (whole).  BY names who ended
 * or caused it, for the hook.
 */
static void th_close(struct ift_analysis *a, struct az_thread *th, uint64_t ts,
		     const struct az_by *by)
{
	static const struct az_by nobody;

	struct ift_sched_stats *s = &th->info.sched;
	uint64_t from = th->since, ns;

	if (ts <= from)
		return;
	th->since = ts;
	ns = ift_overlap(from, ts, a->lo, a->hi);
	switch (th->st) {
	case IFT_SCHED_RUNNING:
		s->on_cpu_ns += ns;
		break;
	case IFT_SCHED_RUNNABLE:
		s->runqueue_wait_ns += ns;
		break;
	case IFT_SCHED_BLOCKED:
		s->blocked_ns += ns;
		if (th->io_sleep)
			s->blocked_io_ns += ns;
		break;
	default:
		/* UNKNOWN, EXITING: no time to count */
		return;
	}
	for (uint32_t i = 0; i < th->nopen; i++) {
		struct az_open *o = &th->open[i];

		call_add(&o->c, th->st, ift_overlap(from, ts, o->ts, o->end));
	}
	if (a->opts.hooks.interval) {
		struct ift_interval iv;

		if (!by)
			by = &nobody;
		iv = (struct ift_interval){
			.tid = th->tid, .pid = th->pid, .state = th->st,
			.start_ts = from, .end_ts = ts, .cpu = th->cpu,
			.io = th->st == IFT_SCHED_BLOCKED && th->io_sleep,
			.by_tid = by->tid, .by_pid = by->pid,
			.src_tid = by->src_tid, .src_pid = by->src_pid,
			.relay_tid = by->relay_tid, .relay_pid = by->relay_pid,
		};

		a->opts.hooks.interval(a->opts.hooks.ctx, a, &iv);
	}
}

static void th_set(struct az_thread *th, unsigned st, uint64_t ts)
{
	th->st = (uint8_t)st;
	th->since = ts;
	th->waking = false;
}

static bool in_window(const struct ift_analysis *a, uint64_t ts)
{
	return ts >= a->lo && ts <= a->hi;
}

/* A row shows TH as current on CPU at TS. */
static int switch_in(struct ift_analysis *a, struct az_thread *n, uint64_t ts,
		     uint32_t cpu, uint32_t ptid, uint32_t ppid);
static int wake(struct ift_analysis *a, struct az_thread *th, uint64_t ts,
		const struct az_by *by, uint32_t target);

/* TH runs after a sched_waking with no sched_wakeup (lost): it was queued
   at its sched_waking. */
static int wakeup_lost(struct ift_analysis *a, struct az_thread *th)
{
	if (!th->waking || (th->st != IFT_SCHED_BLOCKED && th->st != IFT_SCHED_UNKNOWN))
		return 0;
	return wake(a, th, th->waking_ts, &th->waking_by, th->waking_cpu);
}

/*
 * When runnable TH, proven running now with no switch-in seen, began to
 * run: at its wake-up when that put it on an idle CPU where nothing was
 * switched since (the CPU took it at once, and the switch from the idle
 * task was not written: the event pid filter judges it by the idle task,
 * seen on 6.18), else only now.
 */
static uint64_t ran_since(const struct ift_analysis *a, const struct az_thread *th,
			  uint64_t now)
{
	if (th->idle_woken && th->cpu < a->ncpu && a->cpu[th->cpu].last_switch <= th->since)
		return th->since;
	return now;
}

int ift_az_sched_running(struct ift_analysis *a, struct az_thread *th, uint64_t ts,
		     uint32_t cpu)
{
	int ret = wakeup_lost(a, th);

	if (ret < 0)
		return ret;
	if (th->st == IFT_SCHED_UNKNOWN) {
		th_set(th, IFT_SCHED_RUNNING, ts);
		th->cpu = cpu;
	} else if (th->st == IFT_SCHED_RUNNABLE && ts >= th->since && !th->exited) {
		/*
		 * It runs, yet no switch put it on a CPU: some kernels (a VM's,
		 * seen here on an idle CPU) write no sched_switch from the idle
		 * task.  Its wait ends at the first proof that it runs, or at
		 * its wake-up (ran_since()).
		 */
		return switch_in(a, th, ran_since(a, th, ts), cpu, 0, 0);
	}
	return 0;
}

/* The off-CPU stretch that ends at TS: the thread's and its calls' worst. */
static void stall_end(struct ift_analysis *a, struct az_thread *th, uint64_t ts)
{
	struct ift_sched_stats *s = &th->info.sched;
	uint64_t ns;

	if (!th->off_known)
		return;
	th->off_known = false;
	ns = ift_overlap(th->off_since, ts, a->lo, a->hi);
	if (ns > s->max_off_cpu_ns) {
		s->max_off_cpu_ns = ns;
		s->max_off_cpu_at = ift_max(th->off_since, a->lo) - a->sum.start_ts;
	}
	for (uint32_t i = 0; i < th->nopen; i++) {
		struct az_open *o = &th->open[i];
		struct ift_call_info *c = &o->c;

		ns = ift_overlap(th->off_since, ts, o->ts, o->end);
		if (ns > c->max_off_cpu_ns)
			c->max_off_cpu_ns = ns;
	}
}

static int switch_out(struct ift_analysis *a, struct az_thread *p, uint64_t ts,
		      uint32_t cpu, bool invol, bool io, uint32_t ntid, uint32_t npid)
{
	int ret;

	ift_az_thread_seen(p, ts);
	/* a switch-in we did not see: what it was until now still counts,
	   and it ran from its wake-up onto an idle CPU */
	if (p->st == IFT_SCHED_RUNNABLE && cpu == p->cpu && ran_since(a, p, ts) < ts &&
	    (ret = switch_in(a, p, ran_since(a, p, ts), cpu, 0, 0)) < 0)
		return ret;
	wait_del(a, p);
	th_close(a, p, ts, NULL);
	if (in_window(a, ts)) {
		if (invol)
			p->info.sched.involuntary++;
		else
			p->info.sched.voluntary++;
	}
	for (uint32_t i = 0; i < p->nopen; i++) {
		struct az_open *o = &p->open[i];

		if (ts >= o->ts && ts < o->end) {
			if (invol)
				o->c.involuntary++;
			else
				o->c.voluntary++;
		}
	}
	ret = ift_az_calls_expire(a, p, ts);
	if (ret < 0)
		return ret;
	if (p->exited) {
		/*
		 * Past its exit a task still blocks and runs (exit_mm, a futex
		 * wake-up...) until its last switch: the switches count, as the
		 * kernel counts them, but none of that time is the thread's.
		 */
		th_set(p, IFT_SCHED_EXITING, ts);
		p->off_known = false;
		return 0;
	}
	if (invol || !p->waking) {
		th_set(p, invol ? IFT_SCHED_RUNNABLE : IFT_SCHED_BLOCKED, ts);
	} else {
		/* woken on its way here: blocked until its sched_wakeup */
		p->st = IFT_SCHED_BLOCKED;
		p->since = p->waking_ts = ts;
		if (in_window(a, ts))
			p->info.sched.wakeups++;
	}
	p->io_sleep = io;
	p->off_since = ts;
	p->off_known = true;
	p->cpu = cpu;
	p->credited = ts;
	p->by_tid = invol ? ntid : 0;
	p->by_pid = invol ? npid : 0;
	return invol ? wait_add(a, p, cpu) : 0;
}

static int switch_in(struct ift_analysis *a, struct az_thread *n, uint64_t ts,
		     uint32_t cpu, uint32_t ptid, uint32_t ppid)
{
	int ret;

	ift_az_thread_seen(n, ts);
	if (n->exited) {
		n->cpu = cpu;
		return 0;
	}
	ret = wakeup_lost(a, n);
	if (ret < 0)
		return ret;
	switch (n->st) {
	case IFT_SCHED_RUNNABLE:
		/* the last stretch of the wait: behind the task it follows */
		if (n->nopen && (ret = credit(n, ts, ptid, ppid)) < 0)
			return ret;
		wait_del(a, n);
		th_close(a, n, ts, &(struct az_by){ .tid = n->by_tid, .pid = n->by_pid });
		break;
	case IFT_SCHED_BLOCKED:
		/* no wake-up seen (lost, or at the same ns): all of it blocked */
		th_close(a, n, ts, NULL);
		break;
	case IFT_SCHED_RUNNING:
		/* a switch-out we did not see: count on */
		th_close(a, n, ts, NULL);
		break;
	default:
		break;
	}
	stall_end(a, n, ts);
	th_set(n, IFT_SCHED_RUNNING, ts);
	n->cpu = cpu;
	n->idle_woken = false;
	n->by_tid = n->by_pid = 0;
	return ift_az_calls_expire(a, n, ts);
}

int ift_az_sched_switch(struct ift_analysis *a, const uint64_t *row)
{
	uint64_t ts = row[IFT_C_TS];
	uint32_t cpu = (uint32_t)row[IFT_C_CPU];
	uint32_t ptid = (uint32_t)row[IFT_C_TID], ppid = (uint32_t)row[IFT_C_PID];
	uint32_t ntid = (uint32_t)row[IFT_SW_NEXT_TID];
	uint32_t npid = (uint32_t)row[IFT_SW_NEXT_PID];
	bool invol = ift_task_state_runnable(row[IFT_SW_PREV_STATE]);
	bool io = ift_task_state_io(row[IFT_SW_PREV_STATE]);
	struct az_thread *p, *n;
	int ret;

	/* whoever waited for this CPU waited behind prev until now */
	if (cpu < a->ncpu) {
		struct az_cpu *c = &a->cpu[cpu];

		for (uint32_t i = 0; i < c->nwait; i++) {
			struct az_thread *w = a->th[c->wait[i]];

			if (w->tid != ptid && (ret = credit(w, ts, ptid, ppid)) < 0)
				return ret;
		}
	}
	if (ptid) {
		p = ift_az_thread_get(a, ptid, ppid);
		if (!p)
			return -ENOMEM;
		ret = switch_out(a, p, ts, cpu, invol, io, ntid, npid);
		if (ret < 0)
			return ret;
	}
	if (ntid) {
		n = ift_az_thread_get(a, ntid, npid);
		if (!n)
			return -ENOMEM;
		ret = switch_in(a, n, ts, cpu, ptid, ppid);
		if (ret < 0)
			return ret;
	}
	if (cpu_grow(a, cpu) == 0) {
		a->cpu[cpu].idle = !ntid;
		a->cpu[cpu].last_switch = ts;
	}
	return 0;
}

/*
 * TH, blocked or not yet known, is queued on TARGET at TS: its blocked
 * stretch ends there, by BY (ift_az_roles_wake() has followed it back), and its
 * run-queue wait begins.
 */
static int wake(struct ift_analysis *a, struct az_thread *th, uint64_t ts,
		const struct az_by *by, uint32_t target)
{
	int ret;

	if (th->st == IFT_SCHED_BLOCKED) {
		/* the blocked part of each open call ends here, by this waker */
		for (uint32_t i = 0; i < th->nopen; i++) {
			struct az_open *o = &th->open[i];
			uint64_t ns = ift_overlap(th->since, ts, o->ts, o->end);

			if (ns && (ret = attr_add(o, by->tid, by->pid, IFT_ATTR_WOKE, ns)) < 0)
				return ret;
		}
		th_close(a, th, ts, by);
	}
	th_set(th, IFT_SCHED_RUNNABLE, ts);
	th->credited = ts;
	th->by_tid = th->by_pid = 0;
	th->idle_woken = target < a->ncpu && a->cpu[target].idle;
	return wait_add(a, th, target);
}

/* A sched_waking of TH at TS by BY, to be queued on TARGET, its
   sched_wakeup still to come. */
static void waking_set(struct az_thread *th, uint64_t ts, const struct az_by *by,
		       uint32_t target)
{
	th->waking = true;
	th->waking_ts = ts;
	th->waking_by = *by;
	th->waking_cpu = target;
}

int ift_az_sched_wakeup(struct ift_analysis *a, const uint64_t *row)
{
	uint64_t ts = row[IFT_C_TS], kind = row[IFT_WK_KIND];
	uint32_t tid = (uint32_t)row[IFT_C_TID], pid = (uint32_t)row[IFT_C_PID];
	uint32_t wtid = (uint32_t)row[IFT_WK_WAKER_TID];
	uint32_t wpid = (uint32_t)row[IFT_WK_WAKER_PID];
	uint32_t target = (uint32_t)row[IFT_WK_TARGET_CPU];
	struct az_by by = { .tid = wtid, .pid = wpid };
	struct az_thread *th, *w;
	int ret;

	if (wtid && wtid != tid) {
		w = ift_az_thread_at(a, wtid, wpid, ts);
		if (!w)
			return -ENOMEM;
		ret = ift_az_sched_running(a, w, ts, (uint32_t)row[IFT_C_CPU]);
		if (ret < 0)
			return ret;
	}
	if (!tid)
		return 0;
	th = ift_az_thread_at(a, tid, pid, ts);
	if (!th)
		return -ENOMEM;
	if (th->exited) {
		/* a reused tid we saw no fork for starts a new life */
		if (kind != IFT_WAKE_WAKEUP_NEW)
			return 0;
		th->exited = false;
		th_set(th, IFT_SCHED_UNKNOWN, ts);
	}
	switch (th->st) {
	case IFT_SCHED_BLOCKED:
	case IFT_SCHED_UNKNOWN:
		if (kind == IFT_WAKE_WAKING) {
			/*
			 * The waker is known now, the enqueue comes with
			 * sched_wakeup.  Whose work the waker passes on (a relay's
			 * latest waker) is followed back now, as it is now.
			 */
			if (th->waking)
				return 0;
			if (th->st == IFT_SCHED_BLOCKED &&
			    (ret = ift_az_roles_wake(a, th, th->since, ts, &by)) < 0)
				return ret;
			if (in_window(a, ts))
				th->info.sched.wakeups++;
			waking_set(th, ts, &by, target);
			return 0;
		}
		/* from a remote wake-up's IPI: the waker is sched_waking's */
		if (th->waking)
			return wake(a, th, ts, &th->waking_by, target);
		/* a kernel without sched_waking (before 4.3) */
		if (kind != IFT_WAKE_WAKEUP_NEW && in_window(a, ts))
			th->info.sched.wakeups++;
		if (th->st == IFT_SCHED_BLOCKED &&
		    (ret = ift_az_roles_wake(a, th, th->since, ts, &by)) < 0)
			return ret;
		return wake(a, th, ts, &by, target);
	case IFT_SCHED_RUNNABLE:
		/* woken while it waits already: the CPU it is queued on */
		if (th->in_wait && th->cpu != target) {
			wait_del(a, th);
			return wait_add(a, th, target);
		}
		th->cpu = target;
		return 0;
	case IFT_SCHED_RUNNING:
		/*
		 * Woken while still on its CPU, on its way to sleep: its
		 * switch-out may follow, then the sched_wakeup that queues it
		 * (from an IPI, no waker of its own).  Its sched_wakeup while
		 * it still runs says it never slept.
		 */
		if (kind != IFT_WAKE_WAKING) {
			th->waking = false;
			return 0;
		}
		if (!th->waking) {
			ret = ift_az_roles_wake(a, th, ts, ts, &by);
			if (ret < 0)
				return ret;
			waking_set(th, ts, &by, target);
		}
		return 0;
	default:
		return 0;
	}
}

int ift_az_sched_exit(struct ift_analysis *a, struct az_thread *th, uint64_t ts)
{
	ift_az_thread_seen(th, ts);
	ift_az_sched_running(a, th, ts, th->cpu);
	wait_del(a, th);
	th_close(a, th, ts, NULL);
	th->exited = true;
	th->exit_ts = ts;
	th->off_known = false;
	/* switches may follow (or not: the kernel's pid filter forgets an
	   exiting task), and none of their time is the thread's */
	th_set(th, IFT_SCHED_EXITING, ts);
	return ift_az_calls_expire(a, th, ts);
}

/* The pass stopped at STOP: finish every call, close every state. */
int ift_az_sched_finish(struct ift_analysis *a, uint64_t stop)
{
	int ret;

	for (size_t i = 0; i < a->nth; i++) {
		struct az_thread *th = a->th[i];

		/* nothing happened to the thread between its last event and
		   STOP, which is past the end of every call in the window */
		if (th->nopen && (ret = ift_az_calls_expire(a, th, UINT64_MAX)) < 0)
			return ret;
		if (th->off_known && th->st != IFT_SCHED_RUNNING) {
			/* a stall still open: it lasted at least this long */
			uint64_t ns = ift_overlap(th->off_since, stop, a->lo, a->hi);

			if (ns > th->info.sched.max_off_cpu_ns) {
				th->info.sched.max_off_cpu_ns = ns;
				th->info.sched.max_off_cpu_at =
					ift_max(th->off_since, a->lo) - a->sum.start_ts;
			}
		}
		th_close(a, th, stop, NULL);
		if ((ret = ift_az_roles_gap_end(th)) < 0)
			return ret;
	}
	return 0;
}

void ift_az_sched_release(struct ift_analysis *a)
{
	for (size_t i = 0; i < a->nth; i++) {
		for (uint32_t k = 0; k < a->th[i]->nopen; k++)
			free(a->th[i]->open[k].attr);
		free(a->th[i]->open);
		ift_az_roles_release(&a->th[i]->roles);
		ift_az_stats_release(a->th[i]);
		free(a->th[i]);
	}
	free(a->th);
	ift_tidmap_release(&a->tids);
	for (size_t i = 0; i < a->ncpu; i++)
		free(a->cpu[i].wait);
	free(a->cpu);
	a->th = NULL;
	a->cpu = NULL;
	a->nth = a->ncpu = 0;
}
