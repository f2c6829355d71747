// SPDX-License-Identifier: MIT
/*
 * The analyzer on traces built row by row with the writer API, where every
 * expected figure is known by construction: nearest-rank percentiles of a
 * known set, run-queue wait against blocked time for a hand-built sequence
 * of switches and wake-ups, nested calls counted once, the breakdown of one
 * call with its preemptors and their shares, errors by code, copies, page
 * allocations, names, roles, the window and the filters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-analyze.h"
#include "tracebuild.h"

static const struct ift_op_stats *op_named(const struct ift_op_stats *ops, size_t n,
					   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static const struct ift_op_stats *global_op(const struct tb *b, const char *name)
{
	return op_named(ift_analysis_op(b->a, 0), ift_analysis_op_count(b->a), name);
}

static const struct ift_thread_info *thread(const struct tb *b, uint32_t tid)
{
	const struct ift_thread_info *t = ift_analysis_thread_find(b->a, tid);

	assert_non_null(t);
	return t;
}

/* ---- percentiles ---------------------------------------------------- */

static void test_percentile_ranks(void **state)
{
	static const uint64_t v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static const uint64_t one[1] = { 42 };

	(void)state;
	/* ceil(P * N / 100), counted from 1 */
	assert_int_equal(ift_percentile(v, 10, 50), 5);
	assert_int_equal(ift_percentile(v, 10, 51), 6);
	assert_int_equal(ift_percentile(v, 10, 95), 10);
	assert_int_equal(ift_percentile(v, 10, 10), 1);
	assert_int_equal(ift_percentile(v, 10, 11), 2);
	assert_int_equal(ift_percentile(v, 10, 100), 10);
	assert_int_equal(ift_percentile(v, 10, 1), 1);
	assert_int_equal(ift_percentile(one, 1, 99), 42);
	assert_int_equal(ift_percentile(v, 0, 50), 0);
}

/*
 * 100 calls lasting 1..100 µs in a shuffled order, and 7 calls of another op
 * lasting 10..70 µs: p50/p95/p99 by nearest rank are known.
 */
static void test_op_percentiles(void **state)
{
	struct tb b;
	const struct ift_op_stats *s;
	unsigned perm[100];

	(void)state;
	tb_begin(&b, "pct", 1000 * MS);
	for (unsigned i = 0; i < 100; i++)
		perm[i] = (i * 37 + 11) % 100 + 1;	/* 37 is prime to 100 */
	sw(&b, 1 * MS, 0, 0, 0, S_RUN, 100, 100);
	for (unsigned i = 0; i < 100; i++)
		call(&b, 10 * MS + i * MS, 100, 100, OP_SYNC, perm[i] * US, 0, 0,
		     0x5000, 0, 0, 0, 0);
	for (unsigned i = 0; i < 7; i++)
		call(&b, 200 * MS + i * MS, 100, 100, OP_LAUNCH, (7 - i) * 10 * US, 0,
		     0, 0x400000, 0x5000, 0, 0, 0);
	tb_run(&b, NULL);

	s = global_op(&b, "cudaStreamSynchronize");
	assert_non_null(s);
	assert_int_equal(s->calls, 100);
	assert_int_equal(s->total_ns, 5050 * US);
	assert_int_equal(s->mean_ns, 50500);
	assert_int_equal(s->min_ns, 1 * US);
	assert_int_equal(s->p50_ns, 50 * US);
	assert_int_equal(s->p95_ns, 95 * US);
	assert_int_equal(s->p99_ns, 99 * US);
	assert_int_equal(s->max_ns, 100 * US);
	assert_int_equal(s->errors, 0);
	assert_int_equal(s->api, IFT_API_RUNTIME);

	s = global_op(&b, "cudaLaunchKernel");
	assert_non_null(s);
	assert_int_equal(s->calls, 7);
	assert_int_equal(s->p50_ns, 40 * US);	/* rank ceil(3.5) = 4 */
	assert_int_equal(s->p95_ns, 70 * US);	/* rank ceil(6.65) = 7 */
	assert_int_equal(s->p99_ns, 70 * US);
	assert_int_equal(s->mean_ns, 40 * US);

	/* most time first; the same figures per thread and per process */
	assert_string_equal(ift_analysis_op(b.a, 0)->name, "cudaStreamSynchronize");
	s = op_named(thread(&b, 100)->ops, thread(&b, 100)->nops, "cudaStreamSynchronize");
	assert_non_null(s);
	assert_int_equal(s->p95_ns, 95 * US);
	s = op_named(ift_analysis_process_find(b.a, 100)->ops,
		     ift_analysis_process_find(b.a, 100)->nops, "cudaLaunchKernel");
	assert_non_null(s);
	assert_int_equal(s->p50_ns, 40 * US);
	assert_int_equal(thread(&b, 100)->cuda_ns, 5050 * US + 280 * US);
	/* the thread's wall time: the whole recording */
	assert_int_equal(s->callers_wall_ns, 1000 * MS);
	tb_end(&b);
}

/* ---- the state machine ------------------------------------------------ */

struct ivsum {
	uint64_t ns[IFT_SCHED_EXITING + 1];
	unsigned n;
};

static void on_interval(void *ctx, const struct ift_analysis *a,
			const struct ift_interval *iv)
{
	struct ivsum *s = ctx;

	(void)a;
	assert_true(iv->end_ts > iv->start_ts);
	if (iv->tid == 100) {
		s->ns[iv->state] += iv->end_ts - iv->start_ts;
		s->n++;
	}
}

/*
 * Thread A (100) and B (200) on two CPUs, 100 ms:
 *   10 A in (cpu0)                    A unknown before: nothing counted
 *   20 A preempted (R) by B           A on 10, invol
 *   25 B sleeps (S), A in             A runnable 5; B on 5, vol
 *   40 A sleeps (S), idle             A on 15, vol
 *   45 B woken by an interrupt (cpu1) B blocked 20 (its sched_wakeup lost:
 *                                     queued at its sched_waking)
 *   46 B in on cpu1                   B runnable 1
 *   50 B wakes A (waking)             (A still blocked: not queued yet)
 *   52 sched_wakeup of A              A blocked 12, by B; queued
 *   53 A in on cpu0                   A runnable 1; stall 40..53 = 13
 *   58, 61 A allocates order 2, 0     16384 + 4096 bytes
 *   100 end                           A on 47, B on 54
 */
static void build_ab(struct tb *b)
{
	tb_begin(b, "ab", 100 * MS);
	task(b, 1 * MS, 100, 100, IFT_TASK_COMM, 0, 0, "worker-a");
	task(b, 1 * MS, 200, 200, IFT_TASK_COMM, 0, 0, "worker-b");
	sw(b, 10 * MS, 0, 0, 0, S_RUN, 100, 100);
	sw(b, 20 * MS, 0, 100, 100, S_PREEMPT, 200, 200);
	sw(b, 25 * MS, 0, 200, 200, S_SLEEP, 100, 100);
	sw(b, 40 * MS, 0, 100, 100, S_SLEEP, 0, 0);
	wk(b, 45 * MS, 1, 200, 200, IFT_WAKE_WAKING, 1, 0, 0);
	sw(b, 46 * MS, 1, 0, 0, S_RUN, 200, 200);
	wk(b, 50 * MS, 1, 100, 100, IFT_WAKE_WAKING, 0, 200, 200);
	wk(b, 52 * MS, 0, 100, 100, IFT_WAKE_WAKEUP, 0, 200, 200);
	sw(b, 53 * MS, 0, 0, 0, S_RUN, 100, 100);
	page(b, 58 * MS, 100, 100, 2);
	page(b, 61 * MS, 100, 100, 0);
}

/*
 * A wake-up onto an idle CPU whose switch-in is not written (the event pid
 * filter drops switches from the idle task): thread 100 sleeps at 10 ms on
 * cpu0, which goes idle; woken at 20 ms onto cpu0, it shows up running only
 * by its page allocation at 30 ms.  Nothing else was switched in on cpu0:
 * it ran from 20 ms.  Thread 200, woken at 40 ms onto cpu1 while idle, waits
 * there behind 300, which cpu1 switches to from idle at 41 ms; 200 shows up
 * at 50 ms: it waited until then.
 */
static void test_idle_wake(void **state)
{
	const struct ift_thread_info *t;
	struct tb b;

	(void)state;
	tb_begin(&b, "idlewake", 100 * MS);
	task(&b, 1 * MS, 100, 100, IFT_TASK_COMM, 0, 0, "a");
	task(&b, 1 * MS, 200, 200, IFT_TASK_COMM, 0, 0, "b");
	task(&b, 1 * MS, 300, 300, IFT_TASK_COMM, 0, 0, "c");
	sw(&b, 5 * MS, 0, 0, 0, S_RUN, 100, 100);
	sw(&b, 6 * MS, 1, 0, 0, S_RUN, 200, 200);
	sw(&b, 10 * MS, 0, 100, 100, S_SLEEP, 0, 0);
	sw(&b, 11 * MS, 1, 200, 200, S_SLEEP, 0, 0);
	wk(&b, 20 * MS, 1, 100, 100, IFT_WAKE_WAKEUP, 0, 0, 0);
	wk(&b, 40 * MS, 0, 200, 200, IFT_WAKE_WAKEUP, 1, 0, 0);
	sw(&b, 41 * MS, 1, 0, 0, S_RUN, 300, 300);
	page(&b, 30 * MS, 100, 100, 0);
	page(&b, 50 * MS, 200, 200, 0);
	tb_run(&b, NULL);
	t = thread(&b, 100);
	/* on 5..10 and 20..100, blocked 10..20, never waiting */
	assert_int_equal(t->sched.runqueue_wait_ns, 0);
	assert_int_equal(t->sched.blocked_ns, 10 * MS);
	assert_int_equal(t->sched.on_cpu_ns, 85 * MS);
	t = thread(&b, 200);
	/* waited 40..50 behind 300 */
	assert_int_equal(t->sched.runqueue_wait_ns, 10 * MS);
	assert_int_equal(t->sched.blocked_ns, 29 * MS);
	tb_end(&b);
}

static void test_runqueue_vs_blocked(void **state)
{
	struct ivsum iv = { { 0 }, 0 };
	struct ift_analyze_opts opts = {
		.hooks = { .ctx = &iv, .interval = on_interval },
	};
	const struct ift_thread_info *a, *bt;
	const struct ift_process_info *p;
	struct tb b;

	(void)state;
	build_ab(&b);
	tb_run(&b, &opts);

	a = thread(&b, 100);
	assert_int_equal(a->sched.on_cpu_ns, 72 * MS);
	assert_int_equal(a->sched.runqueue_wait_ns, 6 * MS);
	assert_int_equal(a->sched.blocked_ns, 12 * MS);
	assert_int_equal(a->sched.involuntary, 1);
	assert_int_equal(a->sched.voluntary, 1);
	assert_int_equal(a->sched.wakeups, 1);
	assert_int_equal(a->sched.max_off_cpu_ns, 13 * MS);
	assert_int_equal(a->sched.max_off_cpu_at, 40 * MS);
	assert_int_equal(a->sched.page_allocs, 2);
	assert_int_equal(a->sched.page_alloc_bytes, 16384 + 4096);
	/* alive the whole trace, but nothing is invented before 10 ms */
	assert_int_equal(a->end_ns - a->start_ns, 100 * MS);
	assert_int_equal(a->first_ns, 1 * MS);

	bt = thread(&b, 200);
	assert_int_equal(bt->sched.on_cpu_ns, 59 * MS);
	assert_int_equal(bt->sched.runqueue_wait_ns, 1 * MS);
	assert_int_equal(bt->sched.blocked_ns, 20 * MS);
	assert_int_equal(bt->sched.involuntary, 0);
	assert_int_equal(bt->sched.voluntary, 1);
	assert_int_equal(bt->sched.max_off_cpu_ns, 21 * MS);

	/* the hook sees the same intervals the figures were made of */
	assert_int_equal(iv.ns[IFT_SCHED_RUNNING], 72 * MS);
	assert_int_equal(iv.ns[IFT_SCHED_RUNNABLE], 6 * MS);
	assert_int_equal(iv.ns[IFT_SCHED_BLOCKED], 12 * MS);

	p = ift_analysis_process_find(b.a, 100);
	assert_non_null(p);
	assert_string_equal(p->comm, "worker-a");
	assert_int_equal(p->nthreads, 1);
	assert_int_equal(p->sched.on_cpu_ns, 72 * MS);
	assert_int_equal(ift_analysis_process_count(b.a), 2);
	tb_end(&b);
}

/*
 * A page allocation counts the recording machine's pages: host.page_size
 * (64 KiB on arm64 kernels so built), 4 KiB where the trace has none or a
 * value no kernel has.
 */
static void test_page_size(void **state)
{
	static const struct { const char *v; uint64_t page; } cases[] = {
		{ "65536", 65536 }, { "16384", 16384 }, { "4096", 4096 }, { NULL, 4096 },
		{ "12288", 4096 }, { "131072", 4096 }, { "64k", 4096 }, { "", 4096 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb b;

		build_ab(&b);
		if (cases[i].v)
			assert_int_equal(ift_writer_meta(b.w, "host.page_size", cases[i].v), 0);
		tb_run(&b, NULL);
		assert_int_equal(ift_trace_page_size(b.t), cases[i].page);
		assert_int_equal(ift_trace_alloc_bytes(b.t, 3), cases[i].page << 3);
		assert_int_equal(ift_trace_alloc_bytes(b.t, IFT_PAGE_ORDER_MAX), 0);
		/* the orders 2 and 0 of build_ab */
		assert_int_equal(thread(&b, 100)->sched.page_alloc_bytes, cases[i].page * 5);
		tb_end(&b);
	}
}

/* The same trace seen through --from 30ms --to 60ms. */
static void test_window(void **state)
{
	struct ift_analyze_opts opts = { .from_ns = 30 * MS, .to_ns = 60 * MS,
					 .has_to = true };
	const struct ift_thread_info *a;
	struct tb b;

	(void)state;
	build_ab(&b);
	tb_run(&b, &opts);
	a = thread(&b, 100);
	/* on 30..40 and 53..60, blocked 40..52, runnable 52..53 */
	assert_int_equal(a->sched.on_cpu_ns, 17 * MS);
	assert_int_equal(a->sched.blocked_ns, 12 * MS);
	assert_int_equal(a->sched.runqueue_wait_ns, 1 * MS);
	assert_int_equal(a->sched.involuntary, 0);
	assert_int_equal(a->sched.voluntary, 1);
	assert_int_equal(a->sched.page_allocs, 1);
	assert_int_equal(a->sched.page_alloc_bytes, 16384);
	assert_int_equal(a->start_ns, 30 * MS);
	assert_int_equal(a->end_ns, 60 * MS);
	assert_int_equal(ift_analysis_summary(b.a)->duration_ns, 30 * MS);
	/* rows at 40, 45, 46, 50, 52, 53, 58 */
	assert_int_equal(ift_analysis_summary(b.a)->events, 7);
	tb_end(&b);
}

/* A samples row of METRIC, VALUE: TID's own (--page-allocs=count), or the
   system's with TID 0 */
static void sample(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid, const char *metric,
		   uint64_t value)
{
	int64_t id = ift_writer_string(b->w, metric);
	uint64_t r[IFT_SM_NR] = { T0 + t, 0, pid, tid, 0, 0, value };

	assert_true(id >= 0);
	r[IFT_SM_METRIC] = (uint64_t)id;
	add(b, IFT_T_SAMPLES, r);
}

/*
 * record --page-allocs=count: build_ab's two rows of thread 100 plus the
 * kernel's counts at the end, 30 pages (20 order 0, 10 order 2: 245,760
 * bytes) for thread 100 and 7 for 200, and a system sample of the same
 * name, which is no thread's.  Over the whole recording each thread has
 * its rows and its count; in a window the counts (of the whole recording)
 * are left out and the summary says so.
 */
static void build_counted(struct tb *b)
{
	build_ab(b);
	assert_int_equal(ift_writer_meta(b->w, "record.page_allocs", "count"), 0);
	assert_int_equal(ift_writer_meta(b->w, "kmem.count_dropped", "3"), 0);
	sample(b, 99 * MS, 0, 0, "kmem.page_allocs", 1000);
	sample(b, 99 * MS, 0, 0, "cpu.busy_permille", 400);
	sample(b, 100 * MS, 100, 100, "kmem.page_allocs", 30);
	sample(b, 100 * MS, 100, 100, "kmem.page_alloc_bytes", 20 * 4096 + 10 * 16384);
	sample(b, 100 * MS, 200, 200, "kmem.page_allocs", 7);
	sample(b, 100 * MS, 200, 200, "kmem.page_alloc_bytes", 7 * 4096);
	/* a task metric the analyzer does not know is no count */
	sample(b, 100 * MS, 200, 200, "kmem.other", 500);
}

static void test_page_counts(void **state)
{
	struct ift_analyze_opts win = { .from_ns = 30 * MS, .to_ns = 60 * MS, .has_to = true };
	const struct ift_analysis_summary *s;
	const struct ift_thread_info *idle;
	const struct ift_sys_sample *smp;
	size_t nsmp;
	struct tb b;

	(void)state;
	build_counted(&b);
	tb_run(&b, NULL);
	s = ift_analysis_summary(b.a);
	assert_true(s->page_allocs_counted && s->page_counts_in);
	assert_int_equal(s->page_count_dropped, 3);
	assert_int_equal(thread(&b, 100)->sched.page_allocs, 2 + 30);
	assert_int_equal(thread(&b, 100)->sched.page_alloc_bytes,
			 16384 + 4096 + 20 * 4096 + 10 * 16384);
	assert_int_equal(thread(&b, 200)->sched.page_allocs, 7);
	assert_int_equal(thread(&b, 200)->sched.page_alloc_bytes, 7 * 4096);
	assert_int_equal(ift_analysis_process_find(b.a, 200)->sched.page_allocs, 7);
	/* the system's rows are no task's: the busy CPUs a sample, the count
	   of tid 0 nobody's */
	idle = ift_analysis_thread_find(b.a, 0);
	assert_true(!idle || idle->sched.page_allocs == 0);
	smp = ift_analysis_samples(b.a, &nsmp);
	assert_int_equal(nsmp, 1);
	assert_int_equal(smp[0].ts, T0 + 99 * MS);
	tb_end(&b);

	build_counted(&b);
	tb_run(&b, &win);
	s = ift_analysis_summary(b.a);
	assert_true(s->page_allocs_counted && !s->page_counts_in);
	assert_int_equal(thread(&b, 100)->sched.page_allocs, 1);
	assert_int_equal(thread(&b, 200)->sched.page_allocs, 0);
	tb_end(&b);
}

/* ---- nested calls ------------------------------------------------------ */

static void test_nested_not_double_counted(void **state)
{
	const struct ift_op_stats *rt, *drv;
	const struct ift_thread_info *t;
	struct tb b;

	(void)state;
	tb_begin(&b, "nested", 100 * MS);
	sw(&b, 1 * MS, 0, 0, 0, S_RUN, 300, 300);
	for (unsigned i = 0; i < 3; i++) {
		call(&b, 10 * MS + i * MS, 300, 300, OP_LAUNCH, 100 * US, 0, 0,
		     0x400000, 0x5000, 0, 0, 0);
		call(&b, 10 * MS + i * MS + 10 * US, 300, 300, OP_CULAUNCH, 50 * US, 0, 1,
		     0x400000, 0x5000, 0, 0, 0);
	}
	tb_run(&b, NULL);

	rt = global_op(&b, "cudaLaunchKernel");
	drv = global_op(&b, "cuLaunchKernel");
	assert_non_null(rt);
	assert_non_null(drv);
	assert_int_equal(rt->calls, 3);
	assert_int_equal(rt->nested_calls, 0);
	assert_int_equal(rt->total_ns, 300 * US);
	assert_int_equal(drv->calls, 3);
	assert_int_equal(drv->nested_calls, 3);
	assert_int_equal(drv->total_ns, 150 * US);
	assert_int_equal(drv->api, IFT_API_DRIVER);
	/* listed under the runtime call */
	assert_int_equal(rt->ninner, 1);
	assert_string_equal(rt->inner[0].name, "cuLaunchKernel");
	assert_int_equal(rt->inner[0].calls, 3);
	assert_int_equal(rt->inner[0].total_ns, 150 * US);
	/* and counted once in the thread's CUDA time */
	t = thread(&b, 300);
	assert_int_equal(t->cuda_ns, 300 * US);
	assert_int_equal(t->cuda_calls, 3);
	assert_int_equal(ift_analysis_process_find(b.a, 300)->cuda_ns, 300 * US);
	assert_string_equal(ift_role_name(t->role), "cuda thread");
	/* the call records link the nested call to its parent */
	assert_int_equal(ift_analysis_call_count(b.a), 6);
	assert_int_equal(ift_analysis_call(b.a, 1)->parent, 1);
	assert_int_equal(ift_analysis_call(b.a, 0)->parent, 0);
	tb_end(&b);
}

/* ---- inside a call -------------------------------------------------- */

/*
 * Thread A (100) in cudaMemcpy from 10 to 20 ms:
 *   12    A preempted (R) by P (500) on cpu0      runnable from here
 *   15    P preempted (R+) by Q (600) on cpu0     P ran 3 ms of it
 *   16    Q sleeps, A in                          Q ran 1 ms; on again
 *   16.5  A allocates order 1 (8 KiB)
 *   17    A sleeps                                blocked from here
 *   18.5  W (700) wakes A onto cpu1 (sched_waking) still blocked, by W
 *   18.6  A queued on cpu1 by the IPI (sched_wakeup, no waker)
 *                                                 blocked 1.6 ms, by W
 *   18.8  X (800) preempted by Y (900) on cpu1    X ran 0.2 ms of the wait
 *   19    Y sleeps, A in on cpu1                  Y ran 0.2 ms
 *   20    the call returns
 * on CPU 2 + 1 + 1 = 4 ms, run queue 4 + 0.4 = 4.4 ms, blocked 1.6 ms.
 */
static void test_call_breakdown(void **state)
{
	const struct ift_call_info *c;
	const struct ift_call_attr *at;
	struct tb b;

	(void)state;
	tb_begin(&b, "inside", 100 * MS);
	task(&b, 1 * MS, 500, 500, IFT_TASK_COMM, 0, 0, "stress-ng");
	task(&b, 1 * MS, 600, 600, IFT_TASK_COMM, 0, 0, "kworker/0:1");
	task(&b, 1 * MS, 700, 700, IFT_TASK_COMM, 0, 0, "pt_data_worker");
	sw(&b, 5 * MS, 0, 0, 0, S_RUN, 100, 100);
	sw(&b, 6 * MS, 1, 0, 0, S_RUN, 800, 800);
	call(&b, 10 * MS, 100, 100, OP_MEMCPY, 10 * MS, 0, 0, 0x7000, 0x5000,
	     1 << 20, 1, 0);
	sw(&b, 12 * MS, 0, 100, 100, S_PREEMPT, 500, 500);
	sw(&b, 15 * MS, 0, 500, 500, S_PREEMPT, 600, 600);
	sw(&b, 16 * MS, 0, 600, 600, S_SLEEP, 100, 100);
	page(&b, 16 * MS + 500 * US, 100, 100, 1);
	sw(&b, 17 * MS, 0, 100, 100, S_SLEEP, 0, 0);
	wk(&b, 18 * MS + 500 * US, 0, 100, 100, IFT_WAKE_WAKING, 1, 700, 700);
	wk(&b, 18 * MS + 600 * US, 1, 100, 100, IFT_WAKE_WAKEUP, 1, 0, 0);
	sw(&b, 18 * MS + 800 * US, 1, 800, 800, S_RUN, 900, 900);
	sw(&b, 19 * MS, 1, 900, 900, S_SLEEP, 100, 100);
	tb_run(&b, NULL);

	assert_int_equal(ift_analysis_call_count(b.a), 1);
	c = ift_analysis_call(b.a, 0);
	assert_int_equal(c->dur_ns, 10 * MS);
	assert_int_equal(c->on_cpu_ns, 4 * MS);
	assert_int_equal(c->runqueue_wait_ns, 4400 * US);
	assert_int_equal(c->blocked_ns, 1600 * US);
	assert_int_equal(c->involuntary, 1);
	assert_int_equal(c->voluntary, 1);
	assert_int_equal(c->max_off_cpu_ns, 4 * MS);
	assert_int_equal(c->page_allocs, 1);
	assert_int_equal(c->page_alloc_bytes, 8192);
	assert_int_equal(c->bytes, 1 << 20);
	assert_int_equal(c->copy_dir, IFT_COPY_H2D);

	/* who ran while it waited, most first, then who woke it */
	assert_int_equal(c->nattr, 5);
	at = ift_analysis_call_attrs(b.a, c);
	assert_non_null(at);
	assert_int_equal(at[0].kind, IFT_ATTR_RAN);
	assert_int_equal(at[0].tid, 500);
	assert_int_equal(at[0].ns, 3 * MS);
	assert_string_equal(ift_analysis_comm(b.a, at[0].tid, c->ts), "stress-ng");
	assert_int_equal(at[1].tid, 600);
	assert_int_equal(at[1].ns, 1 * MS);
	assert_int_equal(at[2].tid, 800);
	assert_int_equal(at[2].ns, 200 * US);
	assert_int_equal(at[3].tid, 900);
	assert_int_equal(at[3].ns, 200 * US);
	assert_int_equal(at[4].kind, IFT_ATTR_WOKE);
	assert_int_equal(at[4].tid, 700);
	assert_int_equal(at[4].ns, 1600 * US);
	assert_int_equal(at[4].count, 1);
	/* the shares of the run-queue wait add up to all of it */
	assert_int_equal(at[0].ns + at[1].ns + at[2].ns + at[3].ns, c->runqueue_wait_ns);
	tb_end(&b);
}

/* ---- errors, copies ------------------------------------------------- */

static void test_errors_by_code(void **state)
{
	static const int64_t rets[] = { 0, 2, 0, 2, 100, 2, 0, -1 };
	const struct ift_op_stats *s;
	struct tb b;

	(void)state;
	tb_begin(&b, "errors", 100 * MS);
	for (unsigned i = 0; i < sizeof(rets) / sizeof(rets[0]); i++)
		call(&b, 10 * MS + i * MS, 100, 100, OP_MALLOC, 10 * US, rets[i], 0,
		     4096, 0, 0, 0, 0);
	tb_run(&b, NULL);
	s = global_op(&b, "cudaMalloc");
	assert_non_null(s);
	assert_int_equal(s->calls, 8);
	assert_int_equal(s->errors, 5);
	assert_int_equal(s->nerrs, 3);
	assert_int_equal(s->errs[0].ret, 2);
	assert_int_equal(s->errs[0].calls, 3);
	assert_int_equal(s->errs[1].ret, -1);
	assert_int_equal(s->errs[1].calls, 1);
	assert_int_equal(s->errs[2].ret, 100);
	assert_int_equal(s->errs[2].calls, 1);
	assert_false(s->copy);
	tb_end(&b);
}

static void test_copies(void **state)
{
	const struct ift_op_stats *s;
	struct tb b;

	(void)state;
	tb_begin(&b, "copies", 100 * MS);
	call(&b, 10 * MS, 100, 100, OP_MEMCPY, 1 * MS, 0, 0, 1, 2, 1 << 20, 1, 0);
	call(&b, 12 * MS, 100, 100, OP_MEMCPY, 1 * MS, 0, 0, 1, 2, 1 << 20, 1, 0);
	call(&b, 14 * MS, 100, 100, OP_MEMCPY, 2 * MS, 0, 0, 1, 2, 2 << 20, 2, 0);
	call(&b, 20 * MS, 100, 100, OP_MEMCPY2D, 1 * MS, 0, 0, 1, 2, 1000, 10, 3);
	call(&b, 30 * MS, 100, 100, OP_HTOD, 1 * MS, 0, 0, 1, 2, 4096, 0, 0);
	tb_run(&b, NULL);

	s = global_op(&b, "cudaMemcpy");
	assert_non_null(s);
	assert_true(s->copy);
	assert_int_equal(s->bytes, 4 << 20);
	assert_int_equal(s->dir[IFT_COPY_H2D].calls, 2);
	assert_int_equal(s->dir[IFT_COPY_H2D].bytes, 2 << 20);
	assert_int_equal(s->dir[IFT_COPY_H2D].total_ns, 2 * MS);
	assert_int_equal(s->dir[IFT_COPY_D2H].bytes, 2 << 20);
	assert_int_equal(s->dir[IFT_COPY_D2D].calls, 0);
	s = global_op(&b, "cudaMemcpy2D");
	assert_non_null(s);
	assert_int_equal(s->bytes, 10000);
	assert_int_equal(s->dir[IFT_COPY_D2D].bytes, 10000);
	s = global_op(&b, "cuMemcpyHtoD_v2");
	assert_non_null(s);
	assert_int_equal(s->dir[IFT_COPY_H2D].bytes, 4096);
	tb_end(&b);
}

/* ---- processes, names, roles, filters ------------------------------- */

/*
 * python3 (4242) with a CUDA thread 4243 and a pin-memory thread 4244,
 * forks a worker 4250 that exits at 80 ms; an unrelated process 9000
 * calls cudaMalloc.  The roles come from what they do: three times the
 * CUDA thread sleeps after a launch (1.5 ms after it begins) until 4244
 * wakes it (at 6 ms), 4244 having been woken by the worker during that wait
 * (at 5 ms) and having allocated pinned memory once (cudaHostAlloc): the
 * worker fed it through a pin-memory thread.  NAMED gives them PyTorch 2's names, which only
 * confirm: without them the roles are the same.
 */
static void build_tree(struct tb *b, bool named)
{
	tb_begin(b, named ? "tree" : "tree-unnamed", 100 * MS);
	task(b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	task(b, 2 * MS, 4242, 4242, IFT_TASK_CLONE, 4243, 4242, "python3");
	task(b, 3 * MS, 4243, 4242, IFT_TASK_COMM, 0, 0, "pt_main_thread");
	task(b, 4 * MS, 4242, 4242, IFT_TASK_CLONE, 4244, 4242, "python3");
	if (named)
		task(b, 5 * MS, 4244, 4242, IFT_TASK_COMM, 0, 0, "pt_data_pin");
	task(b, 6 * MS, 4242, 4242, IFT_TASK_FORK, 4250, 4250, "python3");
	if (named)
		task(b, 7 * MS, 4250, 4250, IFT_TASK_COMM, 0, 0, "pt_data_worker");
	task(b, 8 * MS, 9000, 9000, IFT_TASK_COMM, 0, 0, "other");
	wk(b, 9 * MS, 0, 4250, 4250, IFT_WAKE_WAKEUP_NEW, 1, 4242, 4242);
	sw(b, 10 * MS, 1, 0, 0, S_RUN, 4250, 4250);
	for (uint64_t k = 0; k < 3; k++) {
		uint64_t at = 20 * MS + k * 10 * MS;

		call(b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
		sw(b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, 4244, 4242);
		if (!k)
			call(b, at + 2 * MS, 4244, 4242, OP_HOSTALLOC, 100 * US, 0, 0, 1, 4096,
			     0, 0, 0);
		sw(b, at + 3 * MS, 0, 4244, 4242, S_SLEEP, 0, 0);
		wk(b, at + 5 * MS, 1, 4244, 4242, IFT_WAKE_WAKEUP, 0, 4250, 4250);
		sw(b, at + 5500 * US, 0, 0, 0, S_RUN, 4244, 4242);
		wk(b, at + 6 * MS, 0, 4243, 4242, IFT_WAKE_WAKEUP, 0, 4244, 4242);
		sw(b, at + 6500 * US, 0, 4244, 4242, S_SLEEP, 4243, 4242);
	}
	call(b, 50 * MS, 9000, 9000, OP_MALLOC, 5 * MS, 0, 0, 4096, 0, 0, 0, 0);
	page(b, 40 * MS, 4250, 4250, 0);
	task(b, 80 * MS, 4250, 4250, IFT_TASK_EXIT, 0, 0, named ? "pt_data_worker" : "python3");
}

static void check_roles(struct tb *b, bool named)
{
	const struct ift_role_evidence *ev;
	const struct ift_process_info *p, *w;
	const struct ift_thread_info *t;

	assert_int_equal(ift_analysis_process_count(b->a), 3);
	/* most CUDA time first */
	assert_int_equal(ift_analysis_process(b->a, 0)->pid, 9000);
	p = ift_analysis_process_find(b->a, 4242);
	assert_non_null(p);
	assert_string_equal(p->comm, "python3");
	assert_int_equal(p->nthreads, 3);
	assert_string_equal(ift_role_name(p->role), "cuda process");
	assert_int_equal(p->cuda_ns, 3100 * US);
	assert_int_equal(p->cuda_calls, 4);
	assert_int_equal(p->nops, 2);
	t = thread(b, 4243);
	assert_string_equal(ift_role_name(t->role), "cuda thread");
	assert_string_equal(t->role_evidence->behaviour, "cuda calls");
	assert_int_equal(t->role_evidence->calls, 3);
	assert_ptr_equal(p->role_evidence, t->role_evidence);
	/* 4244 was woken by the worker inside 4243's wait, then woke 4243 */
	t = thread(b, 4244);
	assert_string_equal(ift_role_name(t->role), "pin-memory thread");
	ev = t->role_evidence;
	assert_string_equal(ev->behaviour, "relayed");
	assert_int_equal(ev->cuda_tid, 4243);
	assert_int_equal(ev->wakeups, 3);
	assert_int_equal(ev->ns, 3 * 4500 * US);
	assert_int_equal(ev->from_pid, 4250);
	assert_int_equal(ev->calls, 1);
	if (named)
		assert_string_equal(ev->name, "pt_data_pin");
	else
		assert_null(ev->name);
	t = thread(b, 4243);
	assert_int_equal(t->task->ncomms, 2);
	assert_string_equal(t->task->comms[1].comm, "pt_main_thread");
	assert_true(t->started);
	assert_int_equal(t->start_ns, 2 * MS);

	w = ift_analysis_process_find(b->a, 4250);
	assert_non_null(w);
	assert_int_equal(w->ppid, 4242);
	assert_int_equal(w->nnames, named ? 2 : 1);
	assert_string_equal(w->names[0], "python3");
	assert_string_equal(ift_role_name(w->role), "input worker");
	ev = w->role_evidence;
	assert_non_null(ev);
	assert_string_equal(ev->behaviour, "fed");
	assert_int_equal(ev->cuda_tid, 4243);
	assert_int_equal(ev->wakeups, 3);
	assert_int_equal(ev->relayed_wakeups, 3);
	assert_int_equal(ev->via_tid, 4244);
	assert_int_equal(ev->forked_from, 4242);
	if (named)
		assert_string_equal(ev->name, "pt_data_worker");
	else
		assert_null(ev->name);
	assert_int_equal(w->start_ns, 6 * MS);
	assert_int_equal(w->end_ns, 80 * MS);
	/* runnable 9..10, on 10..80: nothing after its exit */
	assert_int_equal(w->sched.runqueue_wait_ns, 1 * MS);
	assert_int_equal(w->sched.on_cpu_ns, 70 * MS);
	assert_int_equal(w->sched.page_allocs, 1);
	/* the unrelated caller is a CUDA thread of its own */
	assert_string_equal(ift_role_name(thread(b, 9000)->role), "cuda thread");
}

static void test_processes_and_roles(void **state)
{
	struct tb b;

	(void)state;
	build_tree(&b, true);
	tb_run(&b, NULL);
	check_roles(&b, true);
	tb_end(&b);
	build_tree(&b, false);
	tb_run(&b, NULL);
	check_roles(&b, false);
	tb_end(&b);
}

/*
 * python3 (4242, recorded with -p) has a CUDA thread 4243 and an input
 * thread 4244; the CUDA thread makes N calls, each followed by a 3 ms wait
 * that 4244 ends every EVERY-th time and khugepaged (41, not traced: it
 * gives back the mmap lock it took to collapse the process's pages) ends
 * otherwise.  With KWAKES, khugepaged also ends 4244's own wait (for the
 * mmap lock, on a fault) just before 4244 ends the CUDA thread's.
 */
static void build_kthread_at(struct tb *b, const char *name, uint64_t n, uint64_t every,
			     bool kwakes)
{
	tb_begin(b, name, (n + 2) * 10 * MS);
	assert_int_equal(ift_writer_meta(b->w, "record.filter", "kernel"), 0);
	assert_int_equal(ift_writer_meta(b->w, "record.pid", "4242"), 0);
	task(b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	task(b, 2 * MS, 4242, 4242, IFT_TASK_CLONE, 4243, 4242, "python3");
	task(b, 3 * MS, 4242, 4242, IFT_TASK_CLONE, 4244, 4242, "python3");
	task(b, 4 * MS, 41, 41, IFT_TASK_COMM, 0, 0, "khugepaged");
	for (uint64_t k = 0; k < n; k++) {
		uint64_t at = 10 * MS + k * 10 * MS;
		uint32_t by = k % every ? 41 : 4244;

		call(b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
		if (kwakes && by == 4244)
			wk(b, at + 1400 * US, 1, 4244, 4242, IFT_WAKE_WAKEUP, 0, 41, 41);
		sw(b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, by, by == 41 ? 41 : 4242);
		wk(b, at + 4500 * US, 0, 4243, 4242, IFT_WAKE_WAKEUP, 0, by, by == 41 ? 41 : 4242);
		sw(b, at + 5 * MS, 0, by, by == 41 ? 41 : 4242, S_SLEEP, 4243, 4242);
	}
	tb_run(b, NULL);
}

static void build_kthread(struct tb *b, const char *name, uint64_t n, uint64_t every)
{
	build_kthread_at(b, name, n, every, false);
}

/*
 * Of the CUDA thread's nine waits, 4244 ends three (its batches) and
 * khugepaged six.  The process's own threads end a third of the waits, but
 * khugepaged is no other process feeding it: 4244 is the input thread.
 * Counted as one, it took the role away (a 6.1 guest's t411).
 */
static void test_input_thread_beside_kthread(void **state)
{
	struct tb b;

	(void)state;
	build_kthread(&b, "kthread", 9, 3);
	assert_string_equal(ift_role_name(thread(&b, 4243)->role), "cuda thread");
	assert_int_not_equal(thread(&b, 4244)->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(thread(&b, 4244)->role), "input thread");
	assert_int_equal(thread(&b, 4244)->role_evidence->wakeups, 3);
	tb_end(&b);
}

/*
 * khugepaged also wakes the input thread (its fault waited for the mmap
 * lock) right before each batch it hands over: that is no input passed on
 * from another process, as a relay's is (a 6.1 guest's t411, 71.5% of the
 * waits credited to khugepaged, three of four executors without a role).
 * A task outside the trace is no source.
 */
static void test_kthread_is_no_source(void **state)
{
	struct tb b;

	(void)state;
	build_kthread_at(&b, "kthread-relay", 9, 3, true);
	assert_int_not_equal(thread(&b, 4244)->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(thread(&b, 4244)->role), "input thread");
	assert_int_equal(thread(&b, 4244)->role_evidence->wakeups, 3);
	tb_end(&b);
}

/*
 * multiprocessing.Pool: python3 (4242) has a CUDA thread 4243, a result
 * handler 4244 and a worker handler 4245, both polling the pipe that the
 * worker process 4250 writes its results to.  Ten times the CUDA thread
 * sleeps after a launch until a batch comes: the worker, woken at 4 ms,
 * wakes both handlers, then sleeps; 4244 reads the result and wakes the
 * CUDA thread at 6 ms, but twice 4245 does (the GIL handed back, after
 * 4244 slept).  The worker handler passes on 20% of the fed time, a
 * relay's share, yet every write that woke it woke 4244 too, which passed
 * on more: 4244 is the relay, 4245 none.  SHARED false wakes 4245 in a
 * stint of the worker's of its own (it switches out in between): then 4245
 * is a relay of its own, as a second loader's pin-memory thread is.
 */
static void build_pool(struct tb *b, bool shared)
{
	tb_begin(b, shared ? "pool" : "pool-apart", 130 * MS);
	task(b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	for (uint32_t t = 4243; t <= 4245; t++)
		task(b, 2 * MS + (t - 4243) * US, 4242, 4242, IFT_TASK_CLONE, t, 4242, "python3");
	task(b, 3 * MS, 4242, 4242, IFT_TASK_FORK, 4250, 4250, "python3");
	sw(b, 4 * MS, 1, 4244, 4242, S_SLEEP, 4245, 4242);
	sw(b, 5 * MS, 1, 4245, 4242, S_SLEEP, 0, 0);
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t at = 20 * MS + k * 10 * MS;
		bool gil = k % 5 == 4;
		uint32_t first = gil ? 4244 : 4245, second = gil ? 4245 : 4244;

		call(b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
		sw(b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, 0, 0);
		wk(b, at + 3900 * US, 1, 4250, 4250, IFT_WAKE_WAKEUP, 1, 0, 0);
		sw(b, at + 4 * MS, 1, 0, 0, S_RUN, 4250, 4250);
		wk(b, at + 4500 * US, 1, 4245, 4242, IFT_WAKE_WAKEUP, 1, 4250, 4250);
		if (!shared) {
			sw(b, at + 4600 * US, 1, 4250, 4250, S_SLEEP, 0, 0);
			wk(b, at + 4700 * US, 1, 4250, 4250, IFT_WAKE_WAKEUP, 1, 0, 0);
			sw(b, at + 4800 * US, 1, 0, 0, S_RUN, 4250, 4250);
		}
		wk(b, at + 4900 * US, 1, 4244, 4242, IFT_WAKE_WAKEUP, 1, 4250, 4250);
		sw(b, at + 5200 * US, 1, 4250, 4250, S_SLEEP, first, 4242);
		sw(b, at + 5500 * US, 1, first, 4242, S_SLEEP, second, 4242);
		wk(b, at + 6 * MS, 1, 4243, 4242, IFT_WAKE_WAKEUP, 0, second, 4242);
		sw(b, at + 6200 * US, 0, 0, 0, S_RUN, 4243, 4242);
		sw(b, at + 6500 * US, 1, second, 4242, S_SLEEP, 0, 0);
	}
}

static void test_relay_beside_poller(void **state)
{
	const struct ift_role_evidence *ev;
	struct tb b;

	(void)state;
	build_pool(&b, true);
	tb_run(&b, NULL);
	assert_string_equal(ift_role_name(thread(&b, 4243)->role), "cuda thread");
	assert_int_not_equal(thread(&b, 4244)->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(thread(&b, 4244)->role), "relay");
	ev = thread(&b, 4244)->role_evidence;
	assert_int_equal(ev->wakeups, 8);
	assert_int_equal(ev->ns, 8 * 4500 * US);
	assert_int_equal(ev->from_pid, 4250);
	assert_int_equal(thread(&b, 4245)->role, IFT_ROLE_NONE);
	/* the worker fed all ten waits, through either */
	ev = ift_analysis_process_find(b.a, 4250)->role_evidence;
	assert_non_null(ev);
	assert_int_equal(ev->wakeups, 10);
	assert_int_equal(ev->relayed_wakeups, 10);
	assert_int_equal(ev->via_tid, 4244);
	tb_end(&b);

	build_pool(&b, false);
	tb_run(&b, NULL);
	assert_string_equal(ift_role_name(thread(&b, 4244)->role), "relay");
	assert_int_not_equal(thread(&b, 4245)->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(thread(&b, 4245)->role), "relay");
	assert_int_equal(thread(&b, 4245)->role_evidence->wakeups, 2);
	tb_end(&b);
}

/*
 * The shares that make a feeder are of the waits the program's own tasks
 * ended: of 64 waits khugepaged ends 61 and 4244 the other 3, 4.7% of all
 * of them but all that the program fed it.  Under emulation (a 6.1 guest's
 * t411, 54% of the waits ended by khugepaged) 2 of 4 input threads fell
 * under the share.
 */
static void test_input_share_of_traced(void **state)
{
	struct tb b;

	(void)state;
	build_kthread(&b, "kthread-most", 64, 30);
	assert_int_not_equal(thread(&b, 4244)->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(thread(&b, 4244)->role), "input thread");
	assert_int_equal(thread(&b, 4244)->role_evidence->wakeups, 3);
	tb_end(&b);
}

/*
 * Four executor threads of the CUDA process build its batches (a
 * ThreadPoolExecutor); of the 104 waits they end 46, 25, 25 and 4, and a
 * fifth thread, handing the GIL back, ends 4 more.  The last executor
 * (4247) wakes the CUDA thread 0.1 ms into each of its waits: 0.1% of the
 * blocked time, under the 1% that makes a feeder of any task, as the GIL
 * hand-back ends 3.8%, under the 5% of an input thread.  But 4247 builds
 * batches: on a CPU, beside its own wake-ups, 3 ms after most waits, more
 * than half the time the least busy input thread spent there.  It is an
 * input thread too; the GIL hand-back (4248, only its wake-ups' CPU) is
 * none.  Seen in 5.10 guests' t411: one executor of four ended 4.4%, then
 * 0.8%, of the waits, on a CPU as long as the others.
 */
static void test_input_thread_sibling(void **state)
{
	static const struct { uint32_t tid; uint64_t waits; } by[] = {
		{ 4244, 46 }, { 4245, 25 }, { 4246, 25 }, { 4247, 4 }, { 4248, 4 },
	};
	struct tb b;
	uint64_t k = 0;

	(void)state;
	tb_begin(&b, "sibling", 1100 * MS);
	assert_int_equal(ift_writer_meta(b.w, "record.filter", "kernel"), 0);
	assert_int_equal(ift_writer_meta(b.w, "record.pid", "4242"), 0);
	task(&b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	for (uint32_t t = 4243; t <= 4248; t++)
		task(&b, 2 * MS + (t - 4243) * US, 4242, 4242, IFT_TASK_CLONE, t, 4242, "python3");
	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		for (uint64_t n = 0; n < by[i].waits; n++, k++) {
			uint64_t at = 10 * MS + k * 10 * MS;
			uint32_t w = by[i].tid;

			call(&b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
			sw(&b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, w, 4242);
			wk(&b, at + (w == 4247 ? 1600 : 4500) * US, 0, 4243, 4242, IFT_WAKE_WAKEUP,
			   0, w, 4242);
			sw(&b, at + 5 * MS, 0, w, 4242, S_SLEEP, 4243, 4242);
			/* 4247 builds a batch on CPU 1 after the first 30 waits */
			if (k >= 30)
				continue;
			wk(&b, at + 5900 * US, 1, 4247, 4242, IFT_WAKE_WAKEUP, 1, 0, 0);
			sw(&b, at + 6 * MS, 1, 0, 0, S_RUN, 4247, 4242);
			sw(&b, at + 9 * MS, 1, 4247, 4242, S_SLEEP, 0, 0);
		}
	}
	call(&b, 10 * MS + k * 10 * MS, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
	tb_run(&b, NULL);
	for (uint32_t t = 4244; t <= 4247; t++) {
		assert_int_not_equal(thread(&b, t)->role, IFT_ROLE_NONE);
		assert_string_equal(ift_role_name(thread(&b, t)->role), "input thread");
	}
	assert_int_equal(thread(&b, 4247)->role_evidence->wakeups, 4);
	assert_int_equal(thread(&b, 4248)->role, IFT_ROLE_NONE);
	tb_end(&b);
}

/*
 * The same with DataLoader-like worker processes: python3 4242 forks 4250
 * to 4253 and 4260; of the CUDA thread's waits the workers end 46, 25, 25
 * and WAITS, and 4260 ends 4 more.  4253 wakes it 0.1 ms into each of its
 * waits (0.1% of the blocked time, under the 1% that makes a feeder) but
 * builds batches, on a CPU more than half as long as the least busy worker;
 * 4260 (a resource tracker, say) only wakes it.  4253 is an input worker
 * too, 4260 none.  Seen in a 6.12 guest's t400: one worker of four ended
 * 0.13% of the waits, on a CPU as long as the others; in CI's t411 one
 * ended only 2, under the 3 wake-ups that make a feeder, and had no role.
 */
static void worker_sibling(uint64_t waits)
{
	const struct { uint32_t pid; uint64_t waits; } by[] = {
		{ 4250, 46 }, { 4251, 25 }, { 4252, 25 }, { 4253, waits }, { 4260, 4 },
	};
	struct tb b;
	uint64_t k = 0;

	tb_begin(&b, "worker-sibling", 1100 * MS);
	assert_int_equal(ift_writer_meta(b.w, "record.filter", "kernel"), 0);
	assert_int_equal(ift_writer_meta(b.w, "record.pid", "4242"), 0);
	task(&b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	task(&b, 2 * MS, 4242, 4242, IFT_TASK_CLONE, 4243, 4242, "python3");
	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++)
		task(&b, 3 * MS + i * US, 4242, 4242, IFT_TASK_FORK, by[i].pid, by[i].pid,
		     "python3");
	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		for (uint64_t n = 0; n < by[i].waits; n++, k++) {
			uint64_t at = 10 * MS + k * 10 * MS;
			uint32_t w = by[i].pid;

			call(&b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
			sw(&b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, w, w);
			wk(&b, at + (w >= 4253 ? 1600 : 4500) * US, 0, 4243, 4242, IFT_WAKE_WAKEUP,
			   0, w, w);
			sw(&b, at + 5 * MS, 0, w, w, S_SLEEP, 4243, 4242);
			/* 4253 builds a batch on CPU 1 after the first 30 waits */
			if (k >= 30)
				continue;
			wk(&b, at + 5900 * US, 1, 4253, 4253, IFT_WAKE_WAKEUP, 1, 0, 0);
			sw(&b, at + 6 * MS, 1, 0, 0, S_RUN, 4253, 4253);
			sw(&b, at + 9 * MS, 1, 4253, 4253, S_SLEEP, 0, 0);
		}
	}
	call(&b, 10 * MS + k * 10 * MS, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
	tb_run(&b, NULL);
	for (uint32_t w = 4250; w <= 4253; w++) {
		const struct ift_process_info *p = ift_analysis_process_find(b.a, w);

		assert_non_null(p);
		assert_int_not_equal(p->role, IFT_ROLE_NONE);
		assert_string_equal(ift_role_name(p->role), "input worker");
		assert_int_equal(p->role_evidence->forked_from, 4242);
	}
	assert_int_equal(ift_analysis_process_find(b.a, 4253)->role_evidence->wakeups, waits);
	assert_int_equal(ift_analysis_process_find(b.a, 4260)->role, IFT_ROLE_NONE);
	tb_end(&b);
}

static void test_input_worker_sibling(void **state)
{
	(void)state;
	worker_sibling(4);
}

static void test_input_worker_sibling_twice(void **state)
{
	(void)state;
	worker_sibling(2);
	worker_sibling(1);
}

/*
 * A worker whose fork row comes after its first events: the decoder keeps
 * an event committed late (a vCPU held off after reserving it) at the merge
 * point, and the parent's fork was one.  The worker 4250 runs and wakes the
 * CUDA thread three times before the row that forks it; it is still one
 * task (its tid never exited), the input worker that fed the CUDA thread.
 * Taken for a reused tid, it was two, and the one listed had no role
 * (t400 in a 6.1 guest: 3 of 4 workers).
 */
static void test_late_fork_row(void **state)
{
	const struct ift_process_info *w;
	struct tb b;

	(void)state;
	tb_begin(&b, "late-fork", 100 * MS);
	assert_int_equal(ift_writer_meta(b.w, "record.filter", "kernel"), 0);
	assert_int_equal(ift_writer_meta(b.w, "record.pid", "4242"), 0);
	task(&b, 1 * MS, 4242, 4242, IFT_TASK_COMM, 0, 0, "python3");
	task(&b, 2 * MS, 4242, 4242, IFT_TASK_CLONE, 4243, 4242, "python3");
	/* the decoder names the worker at first sight, its parent from /proc */
	task_seen(&b, 3 * MS, 4250, 4250, 4242, "python3");
	sw(&b, 3 * MS, 1, 0, 0, S_RUN, 4250, 4250);
	for (uint64_t k = 0; k < 3; k++) {
		uint64_t at = 10 * MS + k * 10 * MS;

		call(&b, at, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
		sw(&b, at + 1500 * US, 0, 4243, 4242, S_SLEEP, 0, 0);
		wk(&b, at + 5 * MS, 1, 4243, 4242, IFT_WAKE_WAKEUP, 0, 4250, 4250);
		sw(&b, at + 5500 * US, 0, 0, 0, S_RUN, 4243, 4242);
		if (k == 1)	/* the fork, committed late */
			task(&b, at + 6 * MS, 4242, 4242, IFT_TASK_FORK, 4250, 4250, "python3");
	}
	call(&b, 50 * MS, 4243, 4242, OP_LAUNCH, 1 * MS, 0, 0, 1, 2, 0, 0, 0);
	tb_run(&b, NULL);
	w = ift_analysis_process_find(b.a, 4250);
	assert_non_null(w);
	assert_int_equal(w->nthreads, 1);
	assert_int_equal(w->ppid, 4242);
	assert_int_not_equal(w->role, IFT_ROLE_NONE);
	assert_string_equal(ift_role_name(w->role), "input worker");
	assert_int_equal(w->role_evidence->wakeups, 3);
	assert_int_equal(w->role_evidence->forked_from, 4242);
	tb_end(&b);
}

/*
 * A tid reused for a new task: each life is a thread of its own, with the
 * percentiles of its own calls, though both lives' durations are kept in
 * one array of the tid (the first life's calls, then the second's).
 */
static void test_reused_tid_percentiles(void **state)
{
	const struct ift_thread_info *life[2] = { NULL, NULL };
	const struct ift_op_stats *op;
	size_t n = 0;
	struct tb b;

	(void)state;
	tb_begin(&b, "reused-tid", 200 * MS);
	task(&b, 1 * MS, 400, 400, IFT_TASK_COMM, 0, 0, "python3");
	task(&b, 2 * MS, 400, 400, IFT_TASK_FORK, 500, 500, "python3");
	for (uint64_t k = 1; k <= 3; k++)
		call(&b, k * 10 * MS, 500, 500, OP_LAUNCH, k * MS, 0, 0, 1, 2, 0, 0, 0);
	task(&b, 40 * MS, 500, 500, IFT_TASK_EXIT, 0, 0, "python3");
	task(&b, 50 * MS, 400, 400, IFT_TASK_FORK, 500, 500, "python3");
	for (uint64_t k = 1; k <= 4; k++)
		call(&b, 40 * MS + k * 20 * MS, 500, 500, OP_LAUNCH, k * 10 * MS, 0, 0, 1, 2,
		     0, 0, 0);
	tb_run(&b, NULL);
	for (size_t i = 0; i < ift_analysis_thread_count(b.a); i++)
		if (ift_analysis_thread(b.a, i)->tid == 500 && n < 2)
			life[n++] = ift_analysis_thread(b.a, i);
	assert_int_equal(n, 2);
	/* by tid, then first event: the first life first */
	assert_int_equal(life[0]->nops, 1);
	assert_int_equal(life[0]->ops[0].calls, 3);
	assert_int_equal(life[0]->ops[0].min_ns, 1 * MS);
	assert_int_equal(life[0]->ops[0].p50_ns, 2 * MS);
	assert_int_equal(life[0]->ops[0].p99_ns, 3 * MS);
	assert_int_equal(life[1]->nops, 1);
	assert_int_equal(life[1]->ops[0].calls, 4);
	assert_int_equal(life[1]->ops[0].min_ns, 10 * MS);
	assert_int_equal(life[1]->ops[0].p50_ns, 20 * MS);
	assert_int_equal(life[1]->ops[0].p99_ns, 40 * MS);
	/* the trace: the 7 calls, nearest rank 4 of 7 */
	op = ift_analysis_op(b.a, 0);
	assert_int_equal(op->calls, 7);
	assert_int_equal(op->p50_ns, 10 * MS);
	assert_int_equal(op->p95_ns, 40 * MS);
	assert_int_equal(op->total_ns, 106 * MS);
	tb_end(&b);
}

/*
 * Percentiles of a large set are selected digit by digit, not sorted: 10,006
 * calls whose durations are 1..10,006 us in a scrambled order (k * 7919 mod
 * 10,007 is a permutation), nearest ranks 5,003, 9,506 and 9,906.
 */
static void test_large_percentiles(void **state)
{
	const uint64_t n = 10006;
	const struct ift_op_stats *op;
	struct tb b;

	(void)state;
	tb_begin(&b, "large", (n + 2) * 11 * MS);
	for (uint64_t k = 1; k <= n; k++)
		call(&b, k * 11 * MS, 600, 600, OP_LAUNCH, (k * 7919 % 10007) * US, 0, 0, 1, 2,
		     0, 0, 0);
	tb_run(&b, NULL);
	op = ift_analysis_op(b.a, 0);
	assert_int_equal(op->calls, n);
	assert_int_equal(op->min_ns, 1 * US);
	assert_int_equal(op->max_ns, n * US);
	assert_int_equal(op->p50_ns, 5003 * US);
	assert_int_equal(op->p95_ns, 9506 * US);
	assert_int_equal(op->p99_ns, 9906 * US);
	assert_int_equal(ift_analysis_thread_find(b.a, 600)->ops[0].p99_ns, 9906 * US);
	tb_end(&b);
}

static void test_filters(void **state)
{
	static const uint32_t pids[] = { 4250, 4243 };
	static const char *const ops[] = { "cudaMalloc" };
	struct ift_analyze_opts opts = { .pids = pids, .npids = 2 };
	struct tb b;

	(void)state;
	build_tree(&b, true);
	/* a pid or a tid */
	tb_run(&b, &opts);
	assert_int_equal(ift_analysis_process_count(b.a), 2);
	assert_non_null(ift_analysis_process_find(b.a, 4242));
	assert_non_null(ift_analysis_process_find(b.a, 4250));
	assert_int_equal(ift_analysis_process_find(b.a, 4242)->nthreads, 1);
	assert_int_equal(ift_analysis_op_count(b.a), 1);
	assert_string_equal(ift_analysis_op(b.a, 0)->name, "cudaLaunchKernel");

	/* an op: that op only, and the processes that called it */
	opts = (struct ift_analyze_opts){ .ops = ops, .nops = 1 };
	tb_run(&b, &opts);
	assert_int_equal(ift_analysis_op_count(b.a), 1);
	assert_string_equal(ift_analysis_op(b.a, 0)->name, "cudaMalloc");
	assert_int_equal(ift_analysis_process_count(b.a), 1);
	assert_int_equal(ift_analysis_process(b.a, 0)->pid, 9000);
	/* the calls stay, marked */
	assert_int_equal(ift_analysis_call_count(b.a), 5);
	assert_false(ift_analysis_call(b.a, 0)->selected);
	assert_true(ift_analysis_call(b.a, 4)->selected);
	tb_end(&b);
}

/* An empty trace and one with a window past its end analyze to nothing. */
static void test_empty(void **state)
{
	struct ift_analyze_opts opts = { .from_ns = 500 * MS };
	struct tb b;

	(void)state;
	tb_begin(&b, "empty", 100 * MS);
	tb_run(&b, NULL);
	assert_int_equal(ift_analysis_op_count(b.a), 0);
	assert_int_equal(ift_analysis_process_count(b.a), 0);
	assert_int_equal(ift_analysis_summary(b.a)->duration_ns, 100 * MS);
	tb_end(&b);

	build_ab(&b);
	tb_run(&b, &opts);
	assert_int_equal(ift_analysis_summary(b.a)->duration_ns, 0);
	assert_int_equal(ift_analysis_summary(b.a)->events, 0);
	tb_end(&b);
}

/*
 * Woken on its way to sleep: W (700) on cpu1 wakes A (100) while A is still
 * on cpu0 (sched_waking at 10 ms), A is switched out S at 10.2 ms, and the
 * IPI queues it at 10.5 ms (sched_wakeup, no waker); A runs again at 11 ms,
 * inside a cudaStreamSynchronize from 9 to 12 ms.  A was blocked 0.3 ms, by
 * W, and waited 0.5 ms for the CPU; one wake-up.
 */
static void test_woken_before_switch_out(void **state)
{
	const struct ift_thread_info *t;
	const struct ift_call_attr *at;
	const struct ift_call_info *c;
	struct tb b;

	(void)state;
	tb_begin(&b, "wokenrunning", 20 * MS);
	task(&b, 1 * MS, 700, 700, IFT_TASK_COMM, 0, 0, "pt_data_worker");
	sw(&b, 5 * MS, 0, 0, 0, S_RUN, 100, 100);
	sw(&b, 6 * MS, 1, 0, 0, S_RUN, 700, 700);
	call(&b, 9 * MS, 100, 100, OP_SYNC, 3 * MS, 0, 0, 0, 0, 0, 0, 0);
	wk(&b, 10 * MS, 1, 100, 100, IFT_WAKE_WAKING, 0, 700, 700);
	sw(&b, 10 * MS + 200 * US, 0, 100, 100, S_SLEEP, 0, 0);
	wk(&b, 10 * MS + 500 * US, 0, 100, 100, IFT_WAKE_WAKEUP, 0, 0, 0);
	sw(&b, 11 * MS, 0, 0, 0, S_RUN, 100, 100);
	tb_run(&b, NULL);
	t = thread(&b, 100);
	assert_int_equal(t->sched.blocked_ns, 300 * US);
	assert_int_equal(t->sched.runqueue_wait_ns, 500 * US);
	assert_int_equal(t->sched.wakeups, 1);
	c = ift_analysis_call(b.a, 0);
	assert_int_equal(c->blocked_ns, 300 * US);
	at = ift_analysis_call_attrs(b.a, c);
	assert_non_null(at);
	assert_int_equal(at[c->nattr - 1].kind, IFT_ATTR_WOKE);
	assert_int_equal(at[c->nattr - 1].tid, 700);
	assert_int_equal(at[c->nattr - 1].ns, 300 * US);
	tb_end(&b);
}

/*
 * Some kernels write no sched_switch out of the idle task: a thread woken
 * onto an idle CPU is never switched in.  Its wait ends at the first event
 * that shows it running (here a CUDA call), not at its next switch-out.
 */
static void test_missing_switch_in(void **state)
{
	const struct ift_thread_info *t;
	struct tb b;

	(void)state;
	tb_begin(&b, "noswitchin", 40 * MS);
	sw(&b, 5 * MS, 0, 0, 0, S_RUN, 100, 100);
	sw(&b, 10 * MS, 0, 100, 100, S_SLEEP, 0, 0);
	wk(&b, 20 * MS, 1, 100, 100, IFT_WAKE_WAKING, 1, 0, 0);
	call(&b, 21 * MS, 100, 100, OP_SYNC, 1 * MS, 0, 0, 0, 0, 0, 0, 0);
	sw(&b, 30 * MS, 1, 100, 100, S_SLEEP, 0, 0);
	tb_run(&b, NULL);
	t = thread(&b, 100);
	assert_int_equal(t->sched.blocked_ns, 10 * MS + 10 * MS);
	assert_int_equal(t->sched.runqueue_wait_ns, 1 * MS);
	assert_int_equal(t->sched.on_cpu_ns, 5 * MS + 9 * MS);
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_ranks),
		cmocka_unit_test(test_op_percentiles),
		cmocka_unit_test(test_runqueue_vs_blocked),
		cmocka_unit_test(test_idle_wake),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_page_size),
		cmocka_unit_test(test_page_counts),
		cmocka_unit_test(test_nested_not_double_counted),
		cmocka_unit_test(test_call_breakdown),
		cmocka_unit_test(test_errors_by_code),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_processes_and_roles),
		cmocka_unit_test(test_input_thread_beside_kthread),
		cmocka_unit_test(test_kthread_is_no_source),
		cmocka_unit_test(test_relay_beside_poller),
		cmocka_unit_test(test_input_share_of_traced),
		cmocka_unit_test(test_input_thread_sibling),
		cmocka_unit_test(test_input_worker_sibling),
		cmocka_unit_test(test_input_worker_sibling_twice),
		cmocka_unit_test(test_late_fork_row),
		cmocka_unit_test(test_reused_tid_percentiles),
		cmocka_unit_test(test_large_percentiles),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_missing_switch_in),
		cmocka_unit_test(test_woken_before_switch_out),
	};

	return cmocka_run_group_tests_name("analyze", tests, tb_setup, tb_teardown);
}
