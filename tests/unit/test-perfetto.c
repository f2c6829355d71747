// SPDX-License-Identifier: MIT
/*
 * The Perfetto export of a trace built row by row: a driver call nested in
 * a runtime call, a child that outlasts its parent (clamped), a parent and
 * child that enter at the same ns (parent first), a switch out while
 * runnable inside a call (an ftrace line, and the call's run-queue time),
 * names with quotes, spaces and a byte that is not UTF-8, and a write error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json.h>
#include <stdlib.h>

#include "ift-export.h"
#include "tracebuild.h"

#define PID	100
#define TID	101
#define HOG	200

static void build(struct tb *b)
{
	tb_begin(b, "perfetto", 20 * MS);
	task(b, 0, PID, PID, IFT_TASK_COMM, 0, 0, "train");
	task(b, 0, TID, PID, IFT_TASK_COMM, 0, 0, "cuda \"main\" 1");
	task(b, 0, HOG, HOG, IFT_TASK_COMM, 0, 0, "hog\xff=x");
	sw(b, 10 * US, 0, HOG, HOG, S_SLEEP, TID, PID);
	/* cudaMemcpy [1 ms, 1.5 ms] holds cuMemcpyHtoD [1.1, 1.45] */
	call(b, 1 * MS, TID, PID, OP_MEMCPY, 500 * US, 0, 0, 0xdead0000, 0xbeef0000, 4096, 1, 0);
	call(b, 1100 * US, TID, PID, OP_HTOD, 350 * US, 0, 1, 0xdead0000, 0xbeef0000, 4096, 0, 0);
	/* preempted inside both, at 1.2 ms, back at 1.3 ms */
	sw(b, 1200 * US, 0, TID, PID, S_PREEMPT, HOG, HOG);
	wk(b, 1250 * US, 0, PID, PID, IFT_WAKE_WAKING, 1, HOG, HOG);
	sw(b, 1300 * US, 0, HOG, HOG, S_SLEEP, TID, PID);
	page(b, 1310 * US, TID, PID, 0);
	page(b, 1320 * US, TID, PID, 2);
	/* a child that outlasts its parent by 50 us */
	call(b, 3 * MS, TID, PID, OP_LAUNCH, 100 * US, 0, 0, 0x1000, 7, 0, 0, 0);
	call(b, 3050 * US, TID, PID, OP_CULAUNCH, 100 * US, 0, 1, 0x2000, 7, 0, 0, 0);
	/* the child's row first, both at 5 ms: the parent must still come first */
	call(b, 5 * MS, TID, PID, OP_CULAUNCH, 200 * US, 0, 1, 0x2000, 7, 0, 0, 0);
	call(b, 5 * MS, TID, PID, OP_LAUNCH, 300 * US, 3, 0, 0x1000, 7, 0, 0, 0);
	tb_run(b, NULL);
}

/* The export of B as text (freed by the caller). */
static char *export_text(struct tb *b)
{
	char *text = NULL, msg[128] = "";
	size_t len = 0;
	struct ift_export_opts opts = { .errbuf = msg, .errlen = sizeof(msg) };
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(ift_export_perfetto(b->t, f, &opts), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(msg, "");
	return text;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key '%s' in %s", key, json_object_to_json_string(o));
	return v;
}

/* The Nth event of phase PH named NAME (N from 0), and its index in *AT. */
static json_object *event(json_object *evs, const char *ph, const char *name, int n,
			  size_t *at)
{
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (strcmp(json_object_get_string(get(e, "ph")), ph) ||
		    strcmp(json_object_get_string(get(e, "name")), name) || n--)
			continue;
		if (at)
			*at = i;
		return e;
	}
	fail_msg("no %s event '%s'", ph, name);
	return NULL;
}

static int64_t arg_int(json_object *e, const char *key)
{
	return json_object_get_int64(get(get(e, "args"), key));
}

static void test_slices(void **state)
{
	struct tb b;
	char *text;
	json_object *root, *evs, *e, *p;
	size_t at_parent, at_child;

	(void)state;
	build(&b);
	text = export_text(&b);
	root = json_tokener_parse(text);
	assert_non_null(root);
	evs = get(root, "traceEvents");

	/* exact microseconds, three decimals: T0 + 1.1 ms */
	assert_non_null(strstr(text, "\"name\":\"cuMemcpyHtoD_v2\",\"ts\":1001100.000,"
				     "\"pid\":100,\"tid\":101,\"dur\":350.000,"));
	e = event(evs, "X", "cudaMemcpy", 0, NULL);
	assert_int_equal(arg_int(e, "dur_ns"), 500 * US);
	assert_int_equal(arg_int(e, "arg.bytes"), 4096);
	assert_string_equal(json_object_get_string(get(get(e, "args"), "arg.dst")), "0xdead0000");
	assert_string_equal(json_object_get_string(get(get(e, "args"), "direction")), "H2D");
	assert_string_equal(json_object_get_string(get(e, "cat")), "cuda.runtime");
	/* preempted 100 us inside it, as the analysis counts it */
	assert_int_equal(arg_int(e, "runqueue_wait_ns"), 100 * US);
	assert_int_equal(arg_int(e, "involuntary_switches"), 1);
	assert_int_equal(arg_int(e, "runqueue_ns"), 100 * US);	/* names of 0.1 */
	assert_int_equal(arg_int(e, "involuntary"), 1);
	e = event(evs, "X", "cuMemcpyHtoD_v2", 0, NULL);
	assert_string_equal(json_object_get_string(get(e, "cat")), "cuda.driver");
	assert_int_equal(arg_int(e, "depth"), 1);

	/* the child that outlasted its parent ends with it, and says so */
	e = event(evs, "X", "cuLaunchKernel", 0, NULL);
	assert_true(json_object_get_double(get(e, "dur")) == 50.0);
	assert_int_equal(arg_int(e, "dur_ns"), 100 * US);
	assert_true(json_object_get_boolean(get(get(e, "args"), "clamped_to_parent")));

	/* same entry ns: the parent (longer, depth 0) first, the child inside */
	p = event(evs, "X", "cudaLaunchKernel", 1, &at_parent);
	e = event(evs, "X", "cuLaunchKernel", 1, &at_child);
	assert_true(at_parent < at_child);
	assert_true(json_object_get_double(get(p, "ts")) == json_object_get_double(get(e, "ts")));
	assert_true(json_object_get_double(get(e, "dur")) == 200.0);
	assert_int_equal(arg_int(p, "ret"), 3);

	/* names: decoded exactly, the invalid byte replaced */
	e = event(evs, "M", "thread_name", 1, NULL);
	assert_string_equal(json_object_get_string(get(get(e, "args"), "name")), "cuda \"main\" 1");
	e = event(evs, "M", "process_name", 1, NULL);
	assert_string_equal(json_object_get_string(get(get(e, "args"), "name")), "hog\xef\xbf\xbd=x");

	/* the page rate: two allocations in the first 10 ms bin, then zero */
	e = event(evs, "C", "page_allocs", 0, NULL);
	assert_true(json_object_get_double(get(get(e, "args"), "per_s")) == 200.0);
	e = event(evs, "C", "page_allocs", 1, NULL);
	assert_true(json_object_get_double(get(get(e, "args"), "per_s")) == 0.0);
	assert_true(json_object_get_double(get(e, "ts")) == 1010000.0);

	json_object_put(root);
	free(text);
	tb_end(&b);
}

static void test_sched_lines(void **state)
{
	struct tb b;
	char *text;
	json_object *root;
	const char *sys;

	(void)state;
	build(&b);
	text = export_text(&b);
	root = json_tokener_parse(text);
	assert_non_null(root);
	sys = json_object_get_string(get(root, "systemTraceEvents"));

	/* switched out runnable (R+): the line Perfetto turns into "Runnable
	   (Preempted)"; names split on nothing: spaces and '=' are '_' */
	assert_non_null(strstr(sys, "\ncuda_\"main\"_1-101 (100) [000] .... 1.001200000: "
				    "sched_switch: prev_comm=cuda_\"main\"_1 prev_pid=101 "
				    "prev_prio=120 prev_state=R+ ==> next_comm=hog\xef\xbf\xbd" "_x "
				    "next_pid=200 next_prio=120\n"));
	assert_non_null(strstr(sys, "\nhog\xef\xbf\xbd" "_x-200 (200) [000] .... 1.001250000: "
				    "sched_waking: comm=train pid=100 prio=120 target_cpu=001\n"));
	assert_non_null(strstr(sys, "\nhog\xef\xbf\xbd" "_x-200 (200) [000] .... 1.000010000: sched_switch: "
				    "prev_comm=hog\xef\xbf\xbd" "_x prev_pid=200 prev_prio=120 prev_state=S"));
	/* three switches and a wake-up, once each */
	{
		int lines = 0;

		for (const char *s = sys; (s = strstr(s, ": sched_")); s++)
			lines++;
		assert_int_equal(lines, 4);
	}
	json_object_put(root);
	free(text);
	tb_end(&b);
}

static void test_write_error(void **state)
{
	struct tb b;
	char msg[128] = "";
	struct ift_export_opts opts = { .errbuf = msg, .errlen = sizeof(msg) };
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	build(&b);
	assert_int_equal(ift_export_perfetto(b.t, f, &opts), -ENOSPC);
	assert_non_null(strstr(msg, "cannot write"));
	fclose(f);
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_sched_lines),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, tb_setup, tb_teardown);
}
