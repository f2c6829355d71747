// SPDX-License-Identifier: MIT
/*
 * The SQLite export and the read-only query on traces built row by row:
 * every row count, every resolved name and every figure of the views is
 * known by construction, and checked by reading the database back with
 * plain SQL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "ift-export.h"
#include "tracebuild.h"

#define CUDA	100		/* the CUDA process, and its launch thread 101 */
#define HOG	500		/* a CPU hog outside it */
#define WORKER	700		/* a loader worker the CUDA process forks */

static char errbuf[256];
static struct ift_export_opts xopts = { .errbuf = errbuf, .errlen = sizeof(errbuf) };

/* One integer from SQL on DB; fails the test on any SQL error. */
static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: no row (%s)", sql, sqlite3_errmsg(db));
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		fail_msg("%s: NULL", sql);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* One string from SQL, copied into a static buffer. */
static const char *q_str(sqlite3 *db, const char *sql)
{
	static char buf[512];
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	snprintf(buf, sizeof(buf), "%s",
		 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "(null)");
	sqlite3_finalize(st);
	return buf;
}

/*
 * The trace: process 100 (python3, thread 101 renamed "launch"), a hog 500
 * outside it, a worker 700 forked by 100 that allocates pages and exits.
 *
 *   1 ms     comm rows for 100, 500; clone 101 from 100; fork 700 from 100
 *   2 ms     101 renames itself "launch"
 *   5 ms     cpu0: idle -> 101
 *   10..20   101 in cudaStreamSynchronize (stream 7)
 *   12       101 preempted (R+) by the hog 500 on cpu0
 *   15       500 sleeps, 101 back on cpu0: 3 ms in the run queue, all 500's
 *   21..22   101 calls cudaLaunchKernel, which nests cuLaunchKernel 21.1..21.6
 *   25       700 allocates order 0 and order 2
 *   26       700 woken by 101 (wakeup) on cpu1
 *   40       a sample: cpu.busy_permille of cpu1 = 750
 *   52..68   101 in 9 more synchronizes of 1..9 ms, the 8 ms one failing
 *   80       700 exits
 */
static void build(struct tb *b, const char *name)
{
	tb_begin(b, name, 100 * MS);
	task(b, 1 * MS, CUDA, CUDA, IFT_TASK_COMM, 0, 0, "python3");
	task(b, 1 * MS, HOG, HOG, IFT_TASK_COMM, 0, 0, "stress-ng");
	task(b, 1 * MS, CUDA, CUDA, IFT_TASK_CLONE, CUDA + 1, CUDA, "python3");
	task(b, 1 * MS, CUDA, CUDA, IFT_TASK_FORK, WORKER, WORKER, "python3");
	task(b, 2 * MS, CUDA + 1, CUDA, IFT_TASK_COMM, 0, 0, "launch");
	sw(b, 5 * MS, 0, 0, 0, S_RUN, CUDA + 1, CUDA);
	call(b, 10 * MS, CUDA + 1, CUDA, OP_SYNC, 10 * MS, 0, 0, 7, 0, 0, 0, 0);
	sw(b, 12 * MS, 0, CUDA + 1, CUDA, S_PREEMPT, HOG, HOG);
	sw(b, 15 * MS, 0, HOG, HOG, S_SLEEP, CUDA + 1, CUDA);
	call(b, 21 * MS, CUDA + 1, CUDA, OP_LAUNCH, 1 * MS, 0, 0, 0xf00, 7, 0, 0, 0);
	call(b, 21 * MS + 100 * US, CUDA + 1, CUDA, OP_CULAUNCH, 500 * US, 0, 1,
	     0xf01, 7, 0, 0, 0);
	page(b, 25 * MS, WORKER, WORKER, 0);
	page(b, 25 * MS + 1, WORKER, WORKER, 2);
	wk(b, 26 * MS, 0, WORKER, WORKER, IFT_WAKE_WAKEUP, 1, CUDA + 1, CUDA);
	{
		int64_t m = ift_writer_string(b->w, "cpu.busy_permille");
		uint64_t r[IFT_SM_NR] = { T0 + 40 * MS, 0, 0, 0, 0, 2, 750 };

		assert_true(m > 0);
		r[IFT_SM_METRIC] = (uint64_t)m;
		add(b, IFT_T_SAMPLES, r);
	}
	/* sync durations 1..9 ms more, for the percentiles: with the 10 ms
	   one, n = 10, p50 = the 5th = 5 ms, p95 = p99 = the 10th = 10 ms;
	   the one at 66 fails with 700 */
	for (uint64_t k = 1; k <= 9; k++)
		call(b, (50 + 2 * k) * MS, CUDA + 1, CUDA, OP_SYNC, k * MS,
		     k == 8 ? 700 : 0, 0, 7, 0, 0, 0, 0);
	task(b, 80 * MS, WORKER, WORKER, IFT_TASK_EXIT, 0, 0, "");
	assert_int_equal(ift_writer_finish(b->w), 0);
	ift_writer_free(b->w);
	b->w = NULL;
	assert_int_equal(ift_trace_open(b->path, 0, &b->t), 0);
}

/* Exports B's trace to NAME.db in the test's directory and opens it. */
static sqlite3 *export(struct tb *b, const char *name, char *path, size_t len)
{
	sqlite3 *db;

	snprintf(path, len, "%s/%s.db", tmpdir, name);
	/* B's name, for this export only: B lives in the caller's frame */
	xopts.source = b->path;
	if (ift_export_sqlite(b->t, path, &xopts) < 0)
		fail_msg("export: %s", errbuf);
	xopts.source = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

static void test_rows(void **state)
{
	char path[512];
	struct tb b;
	sqlite3 *db;

	(void)state;
	build(&b, "rows");
	db = export(&b, "rows", path, sizeof(path));

	/* every row of every table, none sampled */
	assert_int_equal(q_int(db, "SELECT count(*) FROM calls"), 12);
	assert_int_equal(q_int(db, "SELECT count(*) FROM switches"), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM wakeups"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM page_allocs"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM task_events"), 6);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM ops"), OP_NR - 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM events"), 25);

	/* a call: names resolved, times raw, arguments as built */
	assert_int_equal(q_int(db, "SELECT ts FROM calls WHERE id = 1"), T0 + 10 * MS);
	assert_int_equal(q_int(db, "SELECT dur_ns FROM calls WHERE id = 1"), 10 * MS);
	assert_string_equal(q_str(db, "SELECT op FROM calls WHERE id = 1"),
			    "cudaStreamSynchronize");
	assert_string_equal(q_str(db, "SELECT comm FROM calls WHERE id = 1"), "launch");
	assert_int_equal(q_int(db, "SELECT a0 FROM calls WHERE id = 1"), 7);
	assert_int_equal(q_int(db, "SELECT a1 IS NULL FROM calls WHERE id = 1"), 1);
	assert_int_equal(q_int(db, "SELECT ret FROM calls WHERE op = 'cudaStreamSynchronize'"
				   " AND dur_ns = 8000000"), 700);
	/* the nested call points at its parent */
	assert_int_equal(q_int(db, "SELECT parent_id FROM calls WHERE op = 'cuLaunchKernel'"),
			 q_int(db, "SELECT id FROM calls WHERE op = 'cudaLaunchKernel'"));
	assert_int_equal(q_int(db, "SELECT depth FROM calls WHERE op = 'cuLaunchKernel'"), 1);

	/* the first call's split: 3 ms waiting for the CPU the hog had */
	assert_int_equal(q_int(db, "SELECT runqueue_wait_ns FROM calls WHERE id = 1"), 3 * MS);
	assert_int_equal(q_int(db, "SELECT runqueue_ns FROM calls WHERE id = 1"), 3 * MS);
	assert_int_equal(q_int(db, "SELECT on_cpu_ns FROM calls WHERE id = 1"), 7 * MS);
	assert_int_equal(q_int(db, "SELECT blocked_ns FROM calls WHERE id = 1"), 0);
	assert_int_equal(q_int(db, "SELECT involuntary_switches FROM calls WHERE id = 1"), 1);
	assert_int_equal(q_int(db, "SELECT involuntary FROM calls WHERE id = 1"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM call_attrs WHERE call_id = 1"), 1);
	assert_string_equal(q_str(db, "SELECT relation || ' ' || tid || ' ' || comm || ' ' || ns"
				      " FROM call_attrs WHERE call_id = 1"),
			    "ran 500 stress-ng 3000000");

	/* switches: states as letters, the preempted flag, both names */
	assert_string_equal(q_str(db, "SELECT state FROM switches WHERE tid = 101"), "R+");
	assert_int_equal(q_int(db, "SELECT preempted FROM switches WHERE tid = 101"), 1);
	assert_int_equal(q_int(db, "SELECT preempted FROM switches WHERE tid = 500"), 0);
	assert_string_equal(q_str(db, "SELECT comm || '>' || next_comm FROM switches"
				      " WHERE tid = 101"), "launch>stress-ng");
	assert_string_equal(q_str(db, "SELECT comm FROM switches WHERE tid = 0"), "<idle>");

	/* wake-up, pages, task events, samples */
	assert_string_equal(q_str(db, "SELECT kind || ' ' || comm || ' by ' || waker_comm"
				      " FROM wakeups"), "wakeup python3 by launch");
	assert_int_equal(q_int(db, "SELECT sum(bytes) FROM page_allocs"), 4096 + 16384);
	assert_string_equal(q_str(db, "SELECT group_concat(kind, ',') FROM"
				      " (SELECT kind FROM task_events ORDER BY rowid)"),
			    "comm,comm,clone,fork,comm,exit");
	assert_string_equal(q_str(db, "SELECT metric || ' ' || scope || ' ' || cpu || ' ' || value"
				      " FROM samples"), "cpu.busy_permille 2 1 750");

	/* the trace row, and meta */
	assert_int_equal(q_int(db, "SELECT start_ts FROM trace"), T0);
	assert_int_equal(q_int(db, "SELECT duration_ns FROM trace"), 100 * MS);
	assert_int_equal(q_int(db, "SELECT value FROM meta WHERE key = 'trace.start_ts'"), T0);
	assert_string_equal(q_str(db, "SELECT value FROM meta WHERE key = 'cmdline'"),
			    "./train --test");
	assert_string_equal(q_str(db, "SELECT path FROM trace"), b.path);
	assert_int_equal(q_int(db, "SELECT min(t_ns) FROM events"), 1 * MS);

	sqlite3_close(db);
	unlink(path);
	tb_end(&b);
}

static void test_tasks(void **state)
{
	char path[512];
	struct tb b;
	sqlite3 *db;

	(void)state;
	build(&b, "tasks");
	db = export(&b, "tasks", path, sizeof(path));

	/* threads: 100, 101, 500, 700; 101 a thread with two names */
	assert_int_equal(q_int(db, "SELECT count(*) FROM threads"), 4);
	assert_string_equal(q_str(db, "SELECT comm FROM threads WHERE tid = 101"), "launch");
	assert_int_equal(q_int(db, "SELECT is_thread FROM threads WHERE tid = 101"), 1);
	assert_int_equal(q_int(db, "SELECT pid FROM threads WHERE tid = 101"), CUDA);
	assert_int_equal(q_int(db, "SELECT start_ts FROM threads WHERE tid = 101"), T0 + MS);
	assert_int_equal(q_int(db, "SELECT exit_ts FROM threads WHERE tid = 700"), T0 + 80 * MS);
	assert_int_equal(q_int(db, "SELECT start_ts IS NULL FROM threads WHERE tid = 100"), 1);
	assert_string_equal(q_str(db, "SELECT group_concat(comm, ',') FROM"
				      " (SELECT comm FROM thread_names WHERE tid = 101 ORDER BY ts)"),
			    "python3,launch");
	/* the analysis' figures: 101 is the CUDA thread, 3 ms in the run queue */
	assert_string_equal(q_str(db, "SELECT role FROM threads WHERE tid = 101"), "cuda thread");
	assert_int_equal(q_int(db, "SELECT runqueue_wait_ns FROM threads WHERE tid = 101"),
			 3 * MS);
	assert_int_equal(q_int(db, "SELECT involuntary_switches FROM threads WHERE tid = 101"), 1);
	assert_int_equal(q_int(db, "SELECT involuntary FROM threads WHERE tid = 101"), 1);
	assert_int_equal(q_int(db, "SELECT page_allocs FROM threads WHERE tid = 700"), 2);

	/* processes: 100, 500, 700; the worker's parent is 100 */
	assert_int_equal(q_int(db, "SELECT count(*) FROM processes"), 3);
	assert_int_equal(q_int(db, "SELECT ppid FROM processes WHERE pid = 700"), CUDA);
	assert_string_equal(q_str(db, "SELECT comm FROM processes WHERE pid = 100"), "python3");
	assert_string_equal(q_str(db, "SELECT role FROM processes WHERE pid = 100"),
			    "cuda process");

	/* the per-process view: what report prints for process 100 */
	assert_int_equal(q_int(db, "SELECT cuda_calls FROM process_summary WHERE pid = 100"),
			 11);	/* the nested driver call is not counted twice */
	assert_int_equal(q_int(db, "SELECT cuda_ns FROM process_summary WHERE pid = 100"),
			 10 * MS + 1 * MS + 45 * MS);
	assert_int_equal(q_int(db, "SELECT runqueue_wait_ns FROM process_summary"
				   " WHERE pid = 100"), 3 * MS);
	assert_int_equal(q_int(db, "SELECT pid FROM process_summary LIMIT 1"), CUDA);
	sqlite3_close(db);
	unlink(path);
	tb_end(&b);
}

/* The views against the numbers built in, and against the analyzer's own. */
static void test_views(void **state)
{
	const struct ift_op_stats *s = NULL;
	char path[512];
	struct tb b;
	sqlite3 *db;

	(void)state;
	build(&b, "views");
	db = export(&b, "views", path, sizeof(path));

#define SYNC_ROW(col) "SELECT " col " FROM op_summary WHERE op = 'cudaStreamSynchronize'"
	assert_int_equal(q_int(db, SYNC_ROW("calls")), 10);
	assert_int_equal(q_int(db, SYNC_ROW("errors")), 1);
	assert_int_equal(q_int(db, SYNC_ROW("total_ns")), 55 * MS);
	assert_int_equal(q_int(db, SYNC_ROW("mean_ns")), 5500 * US);
	assert_int_equal(q_int(db, SYNC_ROW("min_ns")), 1 * MS);
	assert_int_equal(q_int(db, SYNC_ROW("p50_ns")), 5 * MS);
	assert_int_equal(q_int(db, SYNC_ROW("p95_ns")), 10 * MS);
	assert_int_equal(q_int(db, SYNC_ROW("p99_ns")), 10 * MS);
	assert_int_equal(q_int(db, SYNC_ROW("max_ns")), 10 * MS);
	assert_int_equal(q_int(db, "SELECT nested_calls FROM op_summary"
				   " WHERE op = 'cuLaunchKernel'"), 1);
	/* most time first */
	assert_string_equal(q_str(db, "SELECT op FROM op_summary LIMIT 1"),
			    "cudaStreamSynchronize");
	assert_int_equal(q_int(db, "SELECT p50_ns FROM process_op_summary WHERE pid = 100"
				   " AND op = 'cudaStreamSynchronize'"), 5 * MS);
	assert_int_equal(q_int(db, "SELECT calls FROM thread_op_summary WHERE tid = 101"
				   " AND op = 'cudaLaunchKernel'"), 1);

	/* the same figures as the analyzer's, op by op */
	tb_run(&b, NULL);
	for (size_t i = 0; i < ift_analysis_op_count(b.a); i++) {
		char sql[256];

		s = ift_analysis_op(b.a, i);
		snprintf(sql, sizeof(sql), "SELECT calls * 1000000000000 + p50_ns"
			 " FROM op_summary WHERE op = '%s'", s->name);
		assert_int_equal(q_int(db, sql), s->calls * 1000000000000ULL + s->p50_ns);
		snprintf(sql, sizeof(sql), "SELECT p99_ns FROM op_summary WHERE op = '%s'",
			 s->name);
		assert_int_equal(q_int(db, sql), s->p99_ns);
	}
	assert_non_null(s);
	sqlite3_close(db);
	unlink(path);
	tb_end(&b);
}

static void test_query_read_only(void **state)
{
	static const char *const writes[] = {
		"INSERT INTO meta VALUES('x', 'y')",
		"UPDATE calls SET dur_ns = 0",
		"DELETE FROM calls",
		"DROP TABLE calls",
		"CREATE TABLE x(a)",
		"CREATE TEMP TABLE x(a)",
		"ATTACH DATABASE ':memory:' AS other",
		"PRAGMA user_version = 3",
		"PRAGMA journal_mode = WAL",
		"BEGIN",
		"VACUUM",
		"REINDEX",
		"ANALYZE",
		"WITH x AS (SELECT 1) INSERT INTO meta SELECT 'a', 'b' FROM x",
	};
	struct ift_query *q;
	sqlite3_stmt *st;
	char path[512];
	struct tb b;
	sqlite3 *db;

	(void)state;
	build(&b, "query");
	db = export(&b, "query", path, sizeof(path));
	sqlite3_close(db);

	/* the trace itself, through a temporary export, and the database */
	for (int from_db = 0; from_db < 2; from_db++) {
		if (from_db) {
			assert_true(ift_query_is_db(path));
			assert_int_equal(ift_query_open_db(path, &xopts, &q), 0);
		} else {
			assert_false(ift_query_is_db(b.path));
			assert_int_equal(ift_query_open_trace(b.t, &xopts, &q), 0);
		}
		assert_int_equal(ift_query_prepare(q, "SELECT count(*) FROM calls;  ",
						   &xopts, &st), 0);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int64(st, 0), 12);
		sqlite3_finalize(st);
		assert_int_equal(ift_query_prepare(q, "PRAGMA table_info(calls)", &xopts, &st), 0);
		sqlite3_finalize(st);

		for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
			int ret = ift_query_prepare(q, writes[i], &xopts, &st);

			if (ret != -IFT_E_READONLY)
				fail_msg("'%s' not refused: %d %s", writes[i], ret, errbuf);
			assert_null(st);
		}
		assert_int_equal(ift_query_prepare(q, "SELECT 1; DELETE FROM calls", &xopts, &st),
				 -EINVAL);
		assert_int_equal(ift_query_prepare(q, "SELEC 1", &xopts, &st), -IFT_E_SQL);
		assert_non_null(strstr(errbuf, "syntax error"));
		assert_int_equal(ift_query_prepare(q, "SELECT * FROM nope", &xopts, &st),
				 -IFT_E_SQL);
		assert_non_null(strstr(errbuf, "no such table: nope"));
		ift_query_free(q);
	}
	/* nothing was written: the rows are all there */
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(q_int(db, "SELECT count(*) FROM calls"), 12);
	assert_int_equal(q_int(db, "SELECT count(*) FROM meta WHERE key = 'x'"), 0);
	sqlite3_close(db);
	unlink(path);
	tb_end(&b);
}

static void test_errors(void **state)
{
	char path[512];
	struct stat st;
	struct tb b;

	(void)state;
	build(&b, "errors");
	/* a directory that does not exist: errno, and nothing left */
	snprintf(path, sizeof(path), "%s/no/such/dir/x.db", tmpdir);
	assert_int_equal(ift_export_sqlite(b.t, path, &xopts), -ENOENT);
	assert_non_null(strstr(errbuf, "x.db"));
	/* the database replaces what was there, and leaves no .part */
	snprintf(path, sizeof(path), "%s/replaced.db", tmpdir);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("old", f);
		fclose(f);
	}
	assert_int_equal(ift_export_sqlite(b.t, path, &xopts), 0);
	assert_true(ift_query_is_db(path));
	snprintf(path, sizeof(path), "%s/replaced.db.part", tmpdir);
	assert_int_equal(stat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/replaced.db", tmpdir);
	unlink(path);
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_query_read_only),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("sqlite", tests, tb_setup, tb_teardown);
}
