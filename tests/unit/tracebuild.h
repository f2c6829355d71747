/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_TRACEBUILD_H
#define IFT_TESTS_TRACEBUILD_H
/*
 * Traces built row by row with the writer API, for the analyzer's tests:
 * every expected figure is known by construction.  Include after cmocka.h;
 * run the group with tb_setup and tb_teardown (they make and remove tmpdir).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ift-analyze.h"

#define T0	1000000000ULL		/* the recording starts here */
#define US	1000ULL
#define MS	1000000ULL
#define S_RUN	0ULL			/* prev_state R */
#define S_PREEMPT 0x100ULL		/* R+ */
#define S_SLEEP	1ULL			/* S */
#define S_IO	2ULL			/* D */

static char tmpdir[] = "/tmp/ift-tracebuild.XXXXXX";

/* ---- a trace, row by row --------------------------------------------- */

enum { OP_MEMCPY = 1, OP_LAUNCH, OP_CULAUNCH, OP_SYNC, OP_MALLOC, OP_MEMCPY2D,
       OP_HTOD, OP_HOSTALLOC, OP_NR };

struct tb {
	struct ift_writer *w;
	char path[256];
	int op[OP_NR];
	struct ift_trace *t;
	struct ift_analysis *a;
	uint64_t stack;		/* the call site call() gives its rows; 0: none */
};

static void tb_begin(struct tb *b, const char *name, uint64_t stop)
{
	static const struct ift_op ops[OP_NR] = {
		[OP_MEMCPY] = { "cudaMemcpy", IFT_API_RUNTIME, 4,
				{ "dst", "src", "bytes", "kind" } },
		[OP_LAUNCH] = { "cudaLaunchKernel", IFT_API_RUNTIME, 2, { "func", "stream" } },
		[OP_CULAUNCH] = { "cuLaunchKernel", IFT_API_DRIVER, 2, { "func", "stream" } },
		[OP_SYNC] = { "cudaStreamSynchronize", IFT_API_RUNTIME, 1, { "stream" } },
		[OP_MALLOC] = { "cudaMalloc", IFT_API_RUNTIME, 1, { "bytes" } },
		[OP_MEMCPY2D] = { "cudaMemcpy2D", IFT_API_RUNTIME, 5,
				  { "dst", "src", "width", "height", "kind" } },
		[OP_HTOD] = { "cuMemcpyHtoD_v2", IFT_API_DRIVER, 3, { "dst", "src", "bytes" } },
		[OP_HOSTALLOC] = { "cudaHostAlloc", IFT_API_RUNTIME, 2, { "ptr", "bytes" } },
	};

	memset(b, 0, sizeof(*b));
	snprintf(b->path, sizeof(b->path), "%s/%s.trace", tmpdir, name);
	b->w = ift_writer_create(b->path, NULL);
	assert_non_null(b->w);
	assert_int_equal(ift_writer_meta(b->w, "cmdline", "./train --test"), 0);
	assert_int_equal(ift_writer_metaf(b->w, "record.start_ns", "%llu",
					  (unsigned long long)T0), 0);
	assert_int_equal(ift_writer_metaf(b->w, "record.stop_ns", "%llu",
					  (unsigned long long)(T0 + stop)), 0);
	assert_int_equal(ift_writer_meta(b->w, "cpu.count", "2"), 0);
	for (int i = 1; i < OP_NR; i++) {
		b->op[i] = ift_writer_op(b->w, &ops[i]);
		assert_true(b->op[i] > 0);
	}
}

static void add(struct tb *b, unsigned table, const uint64_t *row)
{
	assert_int_equal(ift_writer_append(b->w, table, row), 0);
}

/* prev (ptid/ppid, leaving in STATE) -> next, on CPU at T0 + T */
static void sw(struct tb *b, uint64_t t, uint64_t cpu, uint64_t ptid, uint64_t ppid,
	       uint64_t state, uint64_t ntid, uint64_t npid)
{
	uint64_t r[IFT_SW_NR] = { T0 + t, cpu, ppid, ptid, state, 120, npid, ntid, 120 };

	add(b, IFT_T_SWITCHES, r);
}

static void wk(struct tb *b, uint64_t t, uint64_t cpu, uint64_t tid, uint64_t pid,
	       uint64_t kind, uint64_t target, uint64_t wtid, uint64_t wpid)
{
	uint64_t r[IFT_WK_NR] = { T0 + t, cpu, pid, tid, kind, 120, target, wpid, wtid };

	add(b, IFT_T_WAKEUPS, r);
}

static void call(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid, int op,
		 uint64_t dur, int64_t ret, uint64_t depth, uint64_t a0, uint64_t a1,
		 uint64_t a2, uint64_t a3, uint64_t a4)
{
	uint64_t r[IFT_CALL_NR] = {
		T0 + t, 0, pid, tid, (uint64_t)b->op[op], dur, (uint64_t)ret,
		depth ? IFT_CALL_F_NESTED : 0, depth, a0, a1, a2, a3, a4, 0, b->stack,
	};

	add(b, IFT_T_CALLS, r);
}

static inline void page(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid, uint64_t order)
{
	uint64_t r[IFT_PG_NR] = { T0 + t, 0, pid, tid, order, 0xcc0, 1 };

	add(b, IFT_T_PAGE_ALLOCS, r);
}

/* A samples row of METRIC, VALUE at T0 + T: task TID's, or with TID 0 the
   system's, of SCOPE (0: all CPUs, N + 1: CPU N) */
static inline void sample_row(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid,
			      uint64_t scope, const char *metric, uint64_t value)
{
	int64_t id = ift_writer_string(b->w, metric);
	uint64_t r[IFT_SM_NR] = { T0 + t, 0, pid, tid, 0, scope, value };

	assert_true(id >= 0);
	r[IFT_SM_METRIC] = (uint64_t)id;
	add(b, IFT_T_SAMPLES, r);
}

static void task(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid, uint64_t kind,
		 uint64_t ctid, uint64_t cpid, const char *comm)
{
	int64_t id = ift_writer_string(b->w, comm);
	uint64_t r[IFT_TK_NR] = { T0 + t, 0, pid, tid, kind, cpid, ctid, 0, 0 };

	assert_true(id >= 0);
	r[IFT_TK_COMM] = (uint64_t)id;
	add(b, IFT_T_TASKS, r);
}

/* The `comm' row the decoder writes when it first sees TID: its tgid PID
   and parent PPID as /proc gave them. */
static inline void task_seen(struct tb *b, uint64_t t, uint64_t tid, uint64_t pid, uint64_t ppid,
			     const char *comm)
{
	int64_t id = ift_writer_string(b->w, comm);
	uint64_t r[IFT_TK_NR] = { T0 + t, 0, pid, tid, IFT_TASK_COMM, 0, 0, 0, 0, ppid };

	assert_true(id >= 0);
	r[IFT_TK_COMM] = (uint64_t)id;
	add(b, IFT_T_TASKS, r);
}

/* Two op tables are the same, field by field. */
static void tb_same_ops(const struct ift_op_stats *x, size_t nx,
			const struct ift_op_stats *y, size_t ny)
{
	assert_int_equal(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		assert_int_equal(x[i].op, y[i].op);
		assert_int_equal(x[i].calls, y[i].calls);
		assert_int_equal(x[i].nested_calls, y[i].nested_calls);
		assert_int_equal(x[i].errors, y[i].errors);
		assert_int_equal(x[i].total_ns, y[i].total_ns);
		assert_int_equal(x[i].min_ns, y[i].min_ns);
		assert_int_equal(x[i].p50_ns, y[i].p50_ns);
		assert_int_equal(x[i].p95_ns, y[i].p95_ns);
		assert_int_equal(x[i].p99_ns, y[i].p99_ns);
		assert_int_equal(x[i].max_ns, y[i].max_ns);
		assert_int_equal(x[i].bytes, y[i].bytes);
		assert_int_equal(x[i].callers_wall_ns, y[i].callers_wall_ns);
		assert_int_equal(x[i].nerrs, y[i].nerrs);
		assert_int_equal(x[i].ninner, y[i].ninner);
	}
}

/*
 * What the model holds for the outputs, against the calls it kept: each op
 * of the trace's table has the counted calls of that op in its latency
 * bins, and ift_analysis_slow_calls() gives exactly those calls, slowest
 * first, the earlier of equals first.
 */
static void tb_model_of_calls(const struct ift_analysis *a)
{
	for (size_t k = 0; k < ift_analysis_op_count(a); k++) {
		const struct ift_op_stats *s = ift_analysis_op(a, k);
		uint64_t bins[IFT_LAT_BINS] = { 0 }, n = 0;
		size_t *idx, m;

		for (size_t i = 0; i < ift_analysis_call_count(a); i++) {
			const struct ift_call_info *c = ift_analysis_call(a, i);

			if (c->counted && c->op == s->op) {
				bins[ift_lat_bin(c->dur_ns)]++;
				n++;
			}
		}
		assert_non_null(s->lat_bins);
		assert_memory_equal(bins, s->lat_bins, sizeof(bins));
		assert_int_equal(ift_analysis_slow_calls(a, s->op, 0, &idx, &m), 0);
		assert_int_equal(m, n);
		for (size_t i = 0; i < m; i++) {
			const struct ift_call_info *c = ift_analysis_call(a, idx[i]);

			assert_true(c->counted && c->op == s->op);
			if (i) {
				const struct ift_call_info *p = ift_analysis_call(a, idx[i - 1]);

				assert_true(p->dur_ns > c->dur_ns ||
					    (p->dur_ns == c->dur_ns && p->ts <= c->ts));
			}
		}
		free(idx);
	}
}

/* A's window on the trace clock, as the *_run() passes take it. */
static void tb_window(const struct ift_analysis *a, uint64_t *from, uint64_t *to)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	uint64_t span = s->end_ts - s->start_ts;

	*from = s->start_ts + s->from_ns;
	*to = s->to_ns >= span ? UINT64_MAX : s->start_ts + s->to_ns;
}

/* The site lists GOT and WANT are the same, field by field. */
static void tb_same_site_list(const struct ift_site *got, size_t ngot,
			      const struct ift_site *want, size_t nwant)
{
	assert_int_equal(ngot, nwant);
	for (size_t i = 0; i < ngot; i++) {
		assert_string_equal(got[i].op, want[i].op);
		assert_int_equal(got[i].stack, want[i].stack);
		assert_int_equal(got[i].calls, want[i].calls);
		assert_int_equal(got[i].total_ns, want[i].total_ns);
		assert_int_equal(got[i].tail_calls, want[i].tail_calls);
		assert_int_equal(got[i].tail_ns, want[i].tail_ns);
		assert_true(got[i].share_time == want[i].share_time);
		assert_true(got[i].share_tail == want[i].share_tail);
	}
}

/* The Python site lists GOT and WANT are the same, field by field. */
static void tb_same_py_list(const struct ift_py_op *got, size_t ngot,
			    const struct ift_py_op *want, size_t nwant)
{
	assert_int_equal(ngot, nwant);
	for (size_t i = 0; i < ngot; i++) {
		assert_string_equal(got[i].op, want[i].op);
		assert_int_equal(got[i].calls, want[i].calls);
		assert_int_equal(got[i].stack_calls, want[i].stack_calls);
		assert_int_equal(got[i].in_flight, want[i].in_flight);
		assert_int_equal(got[i].in_flight_ns, want[i].in_flight_ns);
		assert_int_equal(got[i].late, want[i].late);
		assert_int_equal(got[i].all_sites, want[i].all_sites);
		assert_int_equal(got[i].nsites, want[i].nsites);
		for (size_t j = 0; j < got[i].nsites; j++) {
			const struct ift_py_site *x = &got[i].sites[j], *y = &want[i].sites[j];

			assert_ptr_equal(x->frame, y->frame);
			assert_int_equal(x->calls, y->calls);
			assert_int_equal(x->total_ns, y->total_ns);
			assert_int_equal(x->tail_calls, y->tail_calls);
			assert_int_equal(x->tail_ns, y->tail_ns);
			assert_int_equal(x->stack, y->stack);
			assert_int_equal(x->stacks, y->stacks);
			assert_true(x->share_time == y->share_time);
		}
	}
}

/* The sites A tallied in its pass are those a pass over the calls of its
   window gives. */
static void tb_same_sites(struct tb *b, const struct ift_analysis *a)
{
	struct ift_site *want;
	const struct ift_site *got;
	size_t nwant, ngot;
	uint64_t from, to;

	tb_window(a, &from, &to);
	assert_int_equal(ift_sites_run(b->t, from, to, 0, IFT_SITES_TOP, &want, &nwant), 0);
	got = ift_analysis_sites(a, &ngot);
	tb_same_site_list(got, ngot, want, nwant);
	free(want);
}

/* The Python call sites A tallied in its pass are those a pass over the
   calls of its window gives, field by field. */
static void tb_same_py_sites(struct tb *b, const struct ift_analysis *a)
{
	struct ift_py_op *want;
	const struct ift_py_op *got;
	size_t nwant, ngot;
	uint64_t from, to;

	tb_window(a, &from, &to);
	assert_int_equal(ift_py_sites_run(b->t, from, to, 0, IFT_SITES_TOP, &want, &nwant), 0);
	got = ift_analysis_py_sites(a, &ngot);
	tb_same_py_list(got, ngot, want, nwant);
	free(want);
}

/* The sites of the calls A kept, of every task and of each process, are
   those passes over its window's calls give, and read nothing again. */
static void tb_sites_of_kept(struct tb *b, const struct ift_analysis *a)
{
	uint64_t from, to, reads = ift_trace_reads(b->t, IFT_T_CALLS);

	tb_window(a, &from, &to);
	for (size_t p = 0; p <= ift_analysis_process_count(a); p++) {
		uint32_t pid = p ? ift_analysis_process(a, p - 1)->pid : 0;
		struct ift_site *got, *want;
		struct ift_py_op *pgot, *pwant;
		size_t ngot, nwant;

		assert_int_equal(ift_analysis_sites_of(a, pid, 0, &got, &ngot), 0);
		assert_int_equal(ift_trace_reads(b->t, IFT_T_CALLS), reads);
		assert_int_equal(ift_sites_run(b->t, from, to, pid, 0, &want, &nwant), 0);
		reads = ift_trace_reads(b->t, IFT_T_CALLS);
		tb_same_site_list(got, ngot, want, nwant);
		free(got);
		free(want);
		assert_int_equal(ift_analysis_py_sites_of(a, pid, 0, &pgot, &ngot), 0);
		assert_int_equal(ift_trace_reads(b->t, IFT_T_CALLS), reads);
		assert_int_equal(ift_py_sites_run(b->t, from, to, pid, 0, &pwant, &nwant), 0);
		reads = ift_trace_reads(b->t, IFT_T_CALLS);
		tb_same_py_list(pgot, ngot, pwant, nwant);
		free(pgot);
		free(pwant);
	}
}

/*
 * Analyzes the trace with OPTS (NULL: none) into b->a, keeping the calls
 * (tests look at them), and first without, and without OPTS's hooks:
 * keeping the calls must change nothing else, every op table the same.
 */
static inline void tb_run(struct tb *b, const struct ift_analyze_opts *opts)
{
	struct ift_analyze_opts o = { 0 };
	struct ift_analysis *lean;

	if (b->w) {
		assert_int_equal(ift_writer_finish(b->w), 0);
		ift_writer_free(b->w);
		b->w = NULL;
	}
	if (!b->t)
		assert_int_equal(ift_trace_open(b->path, 0, &b->t), 0);
	ift_analysis_free(b->a);
	b->a = NULL;
	if (opts)
		o = *opts;
	o.keep_calls = false;
	o.hooks = (struct ift_analyze_hooks){ 0 };	/* the test's: once */
	assert_int_equal(ift_analysis_run(b->t, &o, &lean), 0);
	assert_int_equal(ift_analysis_call_count(lean), 0);
	if (opts)
		o.hooks = opts->hooks;
	o.keep_calls = true;
	assert_int_equal(ift_analysis_run(b->t, &o, &b->a), 0);
	assert_int_equal(ift_analysis_thread_count(lean), ift_analysis_thread_count(b->a));
	tb_same_ops(ift_analysis_op(lean, 0), ift_analysis_op_count(lean),
		    ift_analysis_op(b->a, 0), ift_analysis_op_count(b->a));
	for (size_t i = 0; i < ift_analysis_thread_count(b->a); i++)
		tb_same_ops(ift_analysis_thread(lean, i)->ops, ift_analysis_thread(lean, i)->nops,
			    ift_analysis_thread(b->a, i)->ops, ift_analysis_thread(b->a, i)->nops);
	tb_same_sites(b, lean);
	tb_same_py_sites(b, lean);
	tb_model_of_calls(b->a);
	tb_sites_of_kept(b, b->a);
	ift_analysis_free(lean);
}

static void tb_end(struct tb *b)
{
	ift_analysis_free(b->a);
	ift_trace_close(b->t);
	unlink(b->path);
}

/* The group setup and teardown of a test that builds traces. */
static int tb_setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int tb_teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

#endif
