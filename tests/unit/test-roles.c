// SPDX-License-Identifier: MIT
/*
 * The analyzer's processes, their names and the roles of their tasks, on
 * traces built row by row with the writer API (tracebuild.h), where every
 * expected figure is known by construction: a process tree whose roles come
 * from what its tasks do, named or not (CUDA thread, pin-memory thread,
 * input worker), input threads beside a kernel thread, a relay beside a
 * poller, the shares that make a feeder, siblings that feed little, a fork
 * row committed late, and the filters by pid and by op.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-analyze.h"
#include "tracebuild.h"
#include "tbthread.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_processes_and_roles),
		cmocka_unit_test(test_input_thread_beside_kthread),
		cmocka_unit_test(test_kthread_is_no_source),
		cmocka_unit_test(test_relay_beside_poller),
		cmocka_unit_test(test_input_share_of_traced),
		cmocka_unit_test(test_input_thread_sibling),
		cmocka_unit_test(test_input_worker_sibling),
		cmocka_unit_test(test_input_worker_sibling_twice),
		cmocka_unit_test(test_late_fork_row),
		cmocka_unit_test(test_filters),
	};

	return cmocka_run_group_tests_name("roles", tests, tb_setup, tb_teardown);
}
