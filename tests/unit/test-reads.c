// SPDX-License-Identifier: MIT
/*
 * The analysis's read plan (src/analyze/plan.c), counted: on a built trace,
 * ift_trace_reads() says how many times each table was read by a report's
 * analysis and its chains, and the counts are the plan's.  And the join of
 * a calls row to its call of the model, by index, that every exporter uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ift-chains.h"
#include "tracebuild.h"

#define CUDA	100
#define WORKER	200

/*
 * ITERS iterations of memcpy, launch, sync on the CUDA thread (CPU 0); with
 * STARVE, a 5 ms sleep before each memcpy that the worker's wake-up ends,
 * the worker on CPU 1 until 100 us after it.  Returns the end.
 */
static uint64_t build(struct tb *b, int iters, bool starve)
{
	uint64_t t = 1 * MS;

	task(b, 1 * US, CUDA, CUDA, IFT_TASK_COMM, 0, 0, "train");
	task(b, 2 * US, CUDA, CUDA, IFT_TASK_FORK, WORKER, WORKER, "train");
	task(b, 3 * US, WORKER, WORKER, IFT_TASK_COMM, 0, 0, "pt_data_worker");
	sw(b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	sample_row(b, 400 * US, 0, 0, 1, "cpu.steal_permille", 0);
	for (int i = 0; i < iters; i++) {
		if (starve && i) {
			/* CPU 0 idles while the worker runs on CPU 1 and wakes it */
			sw(b, t, 0, CUDA, CUDA, S_SLEEP, 0, 0);
			sw(b, t + 1 * US, 1, 0, 0, S_RUN, WORKER, WORKER);
			wk(b, t + 5 * MS - 2 * US, 1, CUDA, CUDA, IFT_WAKE_WAKING, 0, WORKER, WORKER);
			sw(b, t + 5 * MS, 0, 0, 0, S_RUN, CUDA, CUDA);
			sw(b, t + 5 * MS + 100 * US, 1, WORKER, WORKER, S_SLEEP, 0, 0);
			t += 5 * MS + 10 * US;
		}
		call(b, t, CUDA, CUDA, OP_MEMCPY, 200 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 210 * US;
		call(b, t, CUDA, CUDA, OP_LAUNCH, 10 * US, 0, 0, 7, 0, 0, 0, 0);
		t += 20 * US;
		call(b, t, CUDA, CUDA, OP_SYNC, 300 * US, 0, 0, 0, 0, 0, 0, 0);
		t += 310 * US;
	}
	return t;
}

struct counted {
	uint64_t calls, switches, wakeups;
	size_t chains, loops;
	char meanwhile[128];	/* the first chain's "on the CPUs meanwhile" */
};

/* The trace at B's path through one analysis and its chains, counted. */
static struct counted count(struct tb *b)
{
	struct ift_analyze_opts opts = { 0 };
	struct ift_chains *c = ift_chains_new(NULL);
	struct counted n = { 0 };

	assert_int_equal(ift_writer_finish(b->w), 0);
	ift_writer_free(b->w);
	b->w = NULL;
	assert_int_equal(ift_trace_open(b->path, 0, &b->t), 0);
	assert_int_equal(ift_trace_reads(b->t, IFT_T_CALLS), 0);
	assert_non_null(c);
	ift_chains_hooks(c, &opts.hooks);
	assert_int_equal(ift_analysis_run(b->t, &opts, &b->a), 0);
	n.calls = ift_trace_reads(b->t, IFT_T_CALLS);
	/* the pass reads every table once */
	assert_int_equal(ift_trace_reads(b->t, IFT_T_SWITCHES), 1);
	assert_int_equal(ift_trace_reads(b->t, IFT_T_TASKS), 1);
	/* and the samples once before it, for the CPUs' steal */
	assert_int_equal(ift_trace_reads(b->t, IFT_T_SAMPLES), 2);
	assert_int_equal(ift_chains_build(c, b->a, b->t), 0);
	n.switches = ift_trace_reads(b->t, IFT_T_SWITCHES);
	n.wakeups = ift_trace_reads(b->t, IFT_T_WAKEUPS);
	n.chains = ift_chains_count(c);
	for (size_t i = 0; n.chains && i < ift_chains_get(c, 0)->nsteps; i++) {
		const char *text = ift_chains_get(c, 0)->steps[i].text;

		if (!strncmp(text, "on the CPUs meanwhile: ", 23))
			snprintf(n.meanwhile, sizeof(n.meanwhile), "%s", text + 23);
	}
	for (size_t i = 0; i < ift_analysis_thread_count(b->a); i++) {
		const struct ift_loop_info *l =
			ift_analysis_loop(b->a, ift_analysis_thread(b->a, i)->tid);

		n.loops += l && l->period;
	}
	/* the chains read no call again */
	assert_int_equal(ift_trace_reads(b->t, IFT_T_CALLS), n.calls);
	ift_chains_free(c);
	return n;
}

/* A loop: the calls twice before the pass (counted, then stored, with the
   times that bound the loop's iterations), once in the pass. */
static void test_loop(void **state)
{
	struct counted n;
	struct tb b;

	(void)state;
	tb_begin(&b, "loop", 1000 * MS);
	build(&b, 40, false);
	n = count(&b);
	assert_int_equal(n.loops, 1);
	assert_int_equal(n.calls, 3);
	assert_int_equal(n.switches, 1);
	tb_end(&b);
}

/* No loop (two iterations are none): the same reads. */
static void test_no_loop(void **state)
{
	struct counted n;
	struct tb b;

	(void)state;
	tb_begin(&b, "noloop", 1000 * MS);
	build(&b, 2, false);
	n = count(&b);
	assert_int_equal(n.loops, 0);
	assert_int_equal(n.calls, 3);
	tb_end(&b);
}

/*
 * A starving loop: its chains name who ran in their worst window, tallied
 * in the pass, not read again.  Each starved gap runs from the sync's end
 * to the next memcpy, 5,020 us.  CPU 0: train 10 us, idle 5 ms, train 10
 * us (from its switch in to the window's end).  CPU 1: idle 11 us (from
 * the window's start), then the worker, which goes on past the window's
 * end: 5,009 us in it.  Of the 10,040 us: the worker 49.9% and idle
 * 49.9%; train (0.2%) is under the 1% a name needs.
 */
static void test_chain(void **state)
{
	struct counted n;
	struct tb b;

	(void)state;
	tb_begin(&b, "starve", 1000 * MS);
	build(&b, 40, true);
	n = count(&b);
	assert_int_equal(n.loops, 1);
	assert_int_equal(n.calls, 3);
	assert_true(n.chains >= 1);
	assert_int_equal(n.switches, 1);
	assert_string_equal(n.meanwhile, "pt_data_worker 50%, idle 50%");
	assert_int_equal(n.wakeups, 1);
	tb_end(&b);
}

/* Each calls row joins its call of the model by its index (what the
   exporters do), checked against the row's values. */
static void test_rows(void **state)
{
	struct ift_analyze_opts opts = { .keep_calls = true };
	struct ift_cursor *cur;
	struct ift_event ev;
	uint64_t row = 0, r2[IFT_CALL_NR];
	struct tb b;
	int ret;

	(void)state;
	tb_begin(&b, "rows", 1000 * MS);
	build(&b, 10, true);
	/* two calls at one time on two threads: the index, not the time, joins */
	call(&b, 400 * MS, CUDA, CUDA, OP_SYNC, 10 * US, 0, 0, 0, 0, 0, 0, 0);
	call(&b, 400 * MS, WORKER, WORKER, OP_SYNC, 20 * US, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(ift_writer_finish(b.w), 0);
	ift_writer_free(b.w);
	b.w = NULL;
	assert_int_equal(ift_trace_open(b.path, 0, &b.t), 0);
	assert_int_equal(ift_analysis_run(b.t, &opts, &b.a), 0);
	cur = ift_cursor_new(b.t, 1U << IFT_T_CALLS, 0);
	assert_non_null(cur);
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const struct ift_call_info *c = ift_analysis_call_of_row(b.a, row, ev.row);

		assert_non_null(c);
		assert_int_equal(c->dur_ns, ev.row[IFT_CALL_DUR]);
		/* another row's values at this index: no join */
		memcpy(r2, ev.row, sizeof(r2));
		r2[IFT_C_TID] ^= 1;
		assert_null(ift_analysis_call_of_row(b.a, row, r2));
		row++;
	}
	assert_int_equal(ret, 0);
	ift_cursor_free(cur);
	assert_int_equal(row, ift_analysis_call_count(b.a));
	assert_int_equal(row, 10 * 3 + 2);
	assert_null(ift_analysis_call_of_row(b.a, row, r2));
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_no_loop),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_rows),
	};

	return cmocka_run_group_tests(tests, tb_setup, tb_teardown);
}
