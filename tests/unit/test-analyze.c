// SPDX-License-Identifier: MIT
/*
 * The analyzer on traces built row by row with the writer API, where every
 * expected figure is known by construction: nearest-rank percentiles of a
 * known set, run-queue wait against blocked time for a hand-built sequence
 * of switches and wake-ups, nested calls counted once, the breakdown of one
 * call with its preemptors and their shares, errors by code, copies, page
 * allocations, the window, a reused tid and an empty trace.  Processes,
 * names, roles and the filters are test-roles.c's.
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
#include "tbthread.h"

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
	/* the latency bins, the trace's table only: 1..100 us by 1-2-5 */
	assert_null(s->lat_bins);
	s = ift_analysis_op_find(b.a, "cudaStreamSynchronize");
	assert_non_null(s->lat_bins);
	{
		static const struct { uint64_t from; uint64_t calls; } want[] = {
			{ 1 * US, 1 }, { 2 * US, 3 }, { 5 * US, 5 }, { 10 * US, 10 },
			{ 20 * US, 30 }, { 50 * US, 50 }, { 100 * US, 1 },
		};
		uint64_t sum = 0;

		for (unsigned k = 0; k < IFT_LAT_BINS; k++)
			sum += s->lat_bins[k];
		assert_int_equal(sum, 100);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			assert_int_equal(s->lat_bins[ift_lat_bin(want[i].from)], want[i].calls);
	}
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
	sample_row(b, t, tid, pid, 0, metric, value);
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

/* ---- a reused tid, a large set, an empty trace, odd switches --------- */

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
		cmocka_unit_test(test_reused_tid_percentiles),
		cmocka_unit_test(test_large_percentiles),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_missing_switch_in),
		cmocka_unit_test(test_woken_before_switch_out),
	};

	return cmocka_run_group_tests_name("analyze", tests, tb_setup, tb_teardown);
}
