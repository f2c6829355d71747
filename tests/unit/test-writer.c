// SPDX-License-Identifier: MIT
/*
 * The trace writer on hand-made rows, read back: memory that does not grow
 * with the rows, rows out of time order refused (per table, across chunks,
 * and once finished nothing at all), strings and ops at their edges and a
 * file with no rows, and the task table folded from a known process tree,
 * finished or rebuilt from an unfinished file.  The round trips of generated
 * streams are test-roundtrip.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ift-trace.h"
#include "rowgen.h"

#if SANITIZED
/* from <sanitizer/allocator_interface.h>, which not every compiler ships */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

static long maxrss_kb(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/*
 * What the process holds.  Under ASan, RSS also counts the quarantine, where
 * freed blocks wait (up to 256 MB) before reuse: qsort's temporary buffer,
 * allocated and freed for every chunk, fills it.  The allocator's count of
 * live bytes is the honest figure there.
 */
static long held_kb(void)
{
#if SANITIZED
	return (long)(__sanitizer_get_current_allocated_bytes() / 1024);
#else
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
#endif
}

/*
 * Appending many rows must not grow memory with the row count.  The writer
 * keeps at most chunk_rows rows per table (default 16384 x 15 columns x 8 B,
 * under 2 MB a table, 12 MB for all six) plus one chunk's encode, compress
 * and zstd buffers; what grows with the trace is the index, about 20 bytes
 * a chunk (a few KB here).  Keeping the rows would take 9 x 8 B a row:
 * 360 MB for 5M rows (144 MB for the 2M of the slower sanitizer build), so a
 * 64 MB bound separates the two with a wide margin either way.
 *
 * This runs first, while the process is small: ru_maxrss is a high-water mark
 * and an earlier, bigger test would hide growth.  What the process holds is
 * sampled as well, which does not depend on what ran before.
 */
static void test_bounded_memory(void **state)
{
	uint64_t n = SANITIZED ? 2000000 : 5000000;
	struct ift_writer *w;
	long max0 = 0, held0 = 0, peak = 0;
	char path[PATH_MAX];
	uint64_t row[IFT_SW_NR] = { 0 };

	(void)state;
	tpath(path, sizeof(path), "mem.trace");
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	/* one full chunk first, so the buffers of a chunk are all in place */
	for (uint64_t i = 0; i < n; i++) {
		if (i == 20000) {
			max0 = maxrss_kb();
			held0 = peak = held_kb();
		}
		if (i > 20000 && i % 65536 == 0) {
			long now = held_kb();

			if (now > peak)
				peak = now;
		}
		row[IFT_C_TS] = 1000 + i * 3;
		row[IFT_C_CPU] = i & 7;
		row[IFT_C_PID] = 4000 + (i & 31);
		row[IFT_C_TID] = row[IFT_C_PID];
		row[IFT_SW_PREV_STATE] = i % 3 ? 0 : 1;
		row[IFT_SW_PREV_PRIO] = 120;
		row[IFT_SW_NEXT_PID] = (i * 2654435761U) & 0xffff;
		row[IFT_SW_NEXT_TID] = row[IFT_SW_NEXT_PID];
		row[IFT_SW_NEXT_PRIO] = 120;
		assert_int_equal(ift_writer_append(w, IFT_T_SWITCHES, row), 0);
	}
	assert_int_equal(ift_writer_rows(w, IFT_T_SWITCHES), n);
	if (peak - held0 >= 64 * 1024 ||
	    (!SANITIZED && maxrss_kb() - max0 >= 64 * 1024))
		fail_msg("memory grew with the rows: maxrss %ld -> %ld KB, held %ld -> "
			 "%ld KB over %" PRIu64 " rows", max0, maxrss_kb(), held0,
			 peak, n);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);
	{
		struct ift_trace *t;

		assert_int_equal(ift_trace_open(path, 0, &t), 0);
		assert_int_equal(ift_trace_rows(t, IFT_T_SWITCHES), n);
		assert_int_equal(ift_trace_ts_max(t), 1000 + (n - 1) * 3);
		ift_trace_close(t);
	}
	assert_int_equal(unlink(path), 0);
}

static void test_out_of_order(void **state)
{
	struct ift_writer_opts opts = { .chunk_rows = 4 };
	uint64_t row[MAXCOLS] = { 0 };
	struct ift_writer *w;
	struct ift_trace *t;
	struct ift_chunk ch = { 0 };
	char path[PATH_MAX];
	static const uint64_t want_ts[] = { 100, 100, 150, 200, 200 };

	(void)state;
	tpath(path, sizeof(path), "order.trace");
	w = ift_writer_create(path, &opts);
	assert_non_null(w);
	row[IFT_C_TS] = 100;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), 0);
	row[IFT_C_TS] = 99;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), -IFT_E_ORDER);
	assert_int_equal(ift_writer_rows(w, IFT_T_CALLS), 1);
	/* equal times are in order */
	row[IFT_C_TS] = 100;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), 0);
	/* each table has its own order: an older row in another table is fine */
	row[IFT_C_TS] = 5;
	assert_int_equal(ift_writer_append(w, IFT_T_SWITCHES, row), 0);
	row[IFT_C_TS] = 150;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), 0);
	row[IFT_C_TS] = 200;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), 0);
	/* across a chunk boundary (4 rows were just written out) too */
	row[IFT_C_TS] = 199;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), -IFT_E_ORDER);
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), -IFT_E_ORDER);
	row[IFT_C_TS] = 0;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), -IFT_E_ORDER);
	row[IFT_C_TS] = 200;
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), 0);
	/* a refused `tasks' row is not folded into the task table either */
	row[IFT_C_TS] = 50;
	row[IFT_C_PID] = row[IFT_C_TID] = 7;
	row[IFT_TK_KIND] = IFT_TASK_EXIT;
	assert_int_equal(ift_writer_append(w, IFT_T_TASKS, row), 0);
	row[IFT_C_TS] = 49;
	row[IFT_C_PID] = row[IFT_C_TID] = 8;
	row[IFT_TK_KIND] = IFT_TASK_FORK;
	row[IFT_TK_CHILD_PID] = row[IFT_TK_CHILD_TID] = 9;
	assert_int_equal(ift_writer_append(w, IFT_T_TASKS, row), -IFT_E_ORDER);
	/* tables that do not exist */
	assert_int_equal(ift_writer_append(w, 0, row), -IFT_E_NO_TABLE);
	assert_int_equal(ift_writer_append(w, IFT_T_NR, row), -IFT_E_NO_TABLE);
	assert_int_equal(ift_writer_rows(w, IFT_T_CALLS), 5);
	assert_int_equal(ift_writer_finish(w), 0);
	/* once finished, nothing more goes in */
	assert_int_equal(ift_writer_append(w, IFT_T_CALLS, row), -IFT_E_FINISHED);
	assert_int_equal(ift_writer_flush(w), -IFT_E_FINISHED);
	assert_int_equal(ift_writer_finish(w), -IFT_E_FINISHED);
	assert_int_equal(ift_writer_meta(w, "k", "v"), -IFT_E_FINISHED);
	ift_writer_free(w);

	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	assert_int_equal(ift_trace_rows(t, IFT_T_CALLS), 5);
	assert_int_equal(ift_trace_rows(t, IFT_T_SWITCHES), 1);
	assert_int_equal(ift_trace_chunk_count(t, IFT_T_CALLS), 2);
	for (size_t i = 0, k = 0; i < 2; i++) {
		assert_int_equal(ift_trace_chunk_load(t, IFT_T_CALLS, i, &ch), 0);
		for (uint32_t j = 0; j < ch.nrows; j++, k++)
			assert_int_equal(ch.col[IFT_C_TS][j], want_ts[k]);
	}
	ift_chunk_release(&ch);
	assert_int_equal(ift_trace_task_count(t), 1);
	assert_int_equal(ift_trace_task(t, 0)->tid, 7);
	assert_null(ift_trace_task_find(t, 9, 100));
	ift_trace_close(t);
	assert_int_equal(unlink(path), 0);
}

/* Strings, ops and their edge cases through the API. */
static void test_writer_api_edges(void **state)
{
	struct ift_op bad = { "x", IFT_API_RUNTIME, IFT_CALL_MAX_ARGS + 1 };
	struct ift_op noname = { "", IFT_API_RUNTIME, 0 };
	struct ift_writer *w;
	struct ift_trace *t;
	char path[PATH_MAX];

	(void)state;
	tpath(path, sizeof(path), "api.trace");
	/* a directory that does not exist: NULL and errno */
	errno = 0;
	assert_null(ift_writer_create("/nonexistent-dir/x/y.trace", NULL));
	assert_int_equal(errno, ENOENT);

	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	assert_int_equal(ift_writer_string(w, NULL), 0);
	assert_int_equal(ift_writer_string(w, ""), 0);
	assert_int_equal(ift_writer_string(w, "a"), 1);
	assert_int_equal(ift_writer_string(w, "b"), 2);
	assert_int_equal(ift_writer_string(w, "a"), 1);
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "many-%d", i);
		assert_int_equal(ift_writer_string(w, s), 3 + i);
	}
	/* lookups still find the first ones after the table grew */
	assert_int_equal(ift_writer_string(w, "b"), 2);
	assert_int_equal(ift_writer_string(w, "many-0"), 3);
	assert_int_equal(ift_writer_op(w, &bad), -EINVAL);
	assert_int_equal(ift_writer_op(w, &noname), -EINVAL);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);

	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	assert_string_equal(ift_trace_string(t, 1), "a");
	assert_string_equal(ift_trace_string(t, 2), "b");
	assert_string_equal(ift_trace_string(t, 5002), "many-4999");
	assert_null(ift_trace_string(t, 5003));
	assert_int_equal(ift_trace_op_count(t), 0);
	/* no rows at all */
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		assert_int_equal(ift_trace_rows(t, tb), 0);
		assert_int_equal(ift_trace_chunk_count(t, tb), 0);
	}
	assert_int_equal(check_cursor(t, &(struct wcfg){ .seed = 1 },
				      ALL_TABLES, 0), 0);
	assert_int_equal(ift_trace_task_count(t), 0);
	assert_int_equal(ift_trace_meta_count(t), 0);
	assert_false(ift_trace_tasks_rebuilt(t));
	ift_trace_close(t);
	assert_int_equal(unlink(path), 0);
}

/*
 * A hand-made process tree with a known fold: fork, exec, clone, rename,
 * exit, tid reuse, a task seen only by its exec and seen again after its
 * exit, an unknown kind.
 */
/* test_task_table's trace: which record of a reused tid, and which name,
   at a time; tid 0 is every output's IFT_IDLE_COMM. */
static void check_task_lookups(const struct ift_trace *t)
{
	const struct ift_task *k;

	k = ift_trace_task_find(t, 201, 45);
	assert_non_null(k);
	assert_int_equal(k->pid, 200);
	assert_string_equal(ift_task_comm_at(k, 49), "python3");
	assert_string_equal(ift_task_comm_at(k, 50), "pt_data_worker");
	assert_string_equal(ift_task_comm_at(k, 1000), "pt_data_worker");
	assert_string_equal(ift_task_comm_at(k, 0), "python3");
	k = ift_trace_task_find(t, 201, 75);
	assert_non_null(k);
	assert_int_equal(k->pid, 201);
	k = ift_trace_task_find(t, 200, 25);
	assert_string_equal(ift_task_comm_at(k, 25), "bash");
	assert_string_equal(ift_task_comm_at(k, 30), "python3");
	k = ift_trace_task_find(t, 300, 100);
	assert_non_null(k);
	assert_int_equal(k->flags & IFT_TASK_F_EXITED, 0);
	k = ift_trace_task_find(t, 400, 5);
	assert_non_null(k);
	assert_string_equal(ift_task_comm_at(k, 500), "");
	assert_null(ift_trace_task_find(t, 999, 10));
	assert_null(ift_trace_task_find(t, 0, 10));
	assert_string_equal(ift_trace_comm(t, 0, 10), IFT_IDLE_COMM);
	assert_string_equal(ift_trace_comm(t, 201, 55), "pt_data_worker");
	assert_string_equal(ift_trace_comm(t, 999, 10), "");
}

static void test_task_table(void **state)
{
	enum { BASH = 1, PY, WORKER, FILE_PY, KWORKER };
	static const char *const strs[] = {
		NULL, "bash", "python3", "pt_data_worker", "/usr/bin/python3",
		"kworker",
	};
	/* ts, pid, tid, kind, child_pid, child_tid, comm, file, ppid */
	static const uint64_t rows[][9] = {
		{ 10, 100, 100, IFT_TASK_COMM, 0, 0, BASH, 0 },
		{ 20, 100, 100, IFT_TASK_FORK, 200, 200, BASH, 0 },
		{ 30, 200, 200, IFT_TASK_EXEC, 0, 0, PY, FILE_PY },
		{ 40, 200, 200, IFT_TASK_CLONE, 200, 201, PY, 0 },
		{ 50, 200, 201, IFT_TASK_COMM, 0, 0, WORKER, 0 },
		{ 55, 200, 201, IFT_TASK_COMM, 0, 0, WORKER, 0 },	/* no change */
		{ 60, 200, 201, IFT_TASK_EXIT, 0, 0, 0, 0 },
		{ 70, 200, 200, IFT_TASK_FORK, 201, 201, PY, 0 },	/* tid reuse */
		{ 80, 300, 300, IFT_TASK_EXEC, 0, 0, KWORKER, FILE_PY },
		{ 90, 300, 300, IFT_TASK_EXIT, 0, 0, 0, 0 },
		{ 95, 300, 300, IFT_TASK_COMM, 0, 0, KWORKER, 0 },	/* again */
		{ 100, 100, 100, IFT_TASK_EXIT, 0, 0, 0, 0 },
		{ 110, 100, 100, 77, 1, 2, BASH, 0 },			/* unknown */
		{ 120, 400, 400, IFT_TASK_COMM, 0, 0, 0, 0 },		/* no name */
		/* seen (parent 200 by /proc) before its fork row, committed late */
		{ 130, 500, 500, IFT_TASK_COMM, 0, 0, PY, 0, 200 },
		{ 132, 200, 200, IFT_TASK_FORK, 500, 500, PY, 0 },
		/* an earlier task of tid 600, its exit unseen: another parent */
		{ 140, 600, 600, IFT_TASK_COMM, 0, 0, BASH, 0, 1 },
		{ 150, 200, 200, IFT_TASK_FORK, 600, 600, PY, 0 },
	};
	/* tid, pid, ppid, flags, start, exit, comms (ts, id)... */
	static const struct {
		uint32_t tid, pid, ppid, flags;
		uint64_t start, exit;
		unsigned ncomms;
		uint64_t c[3][2];
	} want[] = {
		{ 100, 100, 0, IFT_TASK_F_EXITED, 0, 100, 1, { { 10, BASH } } },
		{ 200, 200, 100, IFT_TASK_F_STARTED, 20, 0, 2,
		  { { 20, BASH }, { 30, PY } } },
		{ 201, 200, 100, IFT_TASK_F_STARTED | IFT_TASK_F_THREAD |
		  IFT_TASK_F_EXITED, 40, 60, 2, { { 40, PY }, { 50, WORKER } } },
		{ 201, 201, 200, IFT_TASK_F_STARTED, 70, 0, 1, { { 70, PY } } },
		/*
		 * Tied on tid and start time: they must keep the order they
		 * began in, or ift_trace_task_find returns the exited one.
		 */
		{ 300, 300, 0, IFT_TASK_F_EXITED, 0, 90, 1, { { 80, KWORKER } } },
		{ 300, 300, 0, 0, 0, 0, 1, { { 95, KWORKER } } },
		{ 400, 400, 0, 0, 0, 0, 0, { { 0 } } },
		{ 500, 500, 200, IFT_TASK_F_STARTED, 130, 0, 1, { { 130, PY } } },
		{ 600, 600, 1, 0, 0, 0, 1, { { 140, BASH } } },
		{ 600, 600, 200, IFT_TASK_F_STARTED, 150, 0, 1, { { 150, PY } } },
	};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	struct ift_writer_opts opts = { .chunk_rows = 3 };

	(void)state;
	for (int finish = 1; finish >= 0; finish--) {
		char path[PATH_MAX], part[PATH_MAX + 8];
		struct ift_writer *w;
		struct ift_trace *t;
		const struct ift_task *k;

		tpath(path, sizeof(path), "tasks.trace");
		snprintf(part, sizeof(part), "%s%s", path, IFT_PART_SUFFIX);
		w = ift_writer_create(path, &opts);
		assert_non_null(w);
		for (int s = 1; s <= KWORKER; s++)
			assert_int_equal(ift_writer_string(w, strs[s]), s);
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			uint64_t r[IFT_TK_NR] = { rows[i][0], 0, rows[i][1],
						  rows[i][2], rows[i][3],
						  rows[i][4], rows[i][5],
						  rows[i][6], rows[i][7],
						  rows[i][8] };

			assert_int_equal(ift_writer_append(w, IFT_T_TASKS, r), 0);
		}
		if (finish) {
			assert_int_equal(ift_writer_finish(w), 0);
		} else {
			assert_int_equal(ift_writer_flush(w), 0);
		}
		ift_writer_free(w);

		assert_int_equal(ift_trace_open(finish ? path : part, 0, &t), 0);
		assert_int_equal(ift_trace_tasks_rebuilt(t), !finish);
		assert_int_equal(ift_trace_task_count(t), nwant);
		for (size_t i = 0; i < nwant; i++) {
			k = ift_trace_task(t, i);
			assert_non_null(k);
			assert_int_equal(k->tid, want[i].tid);
			assert_int_equal(k->pid, want[i].pid);
			assert_int_equal(k->ppid, want[i].ppid);
			assert_int_equal(k->flags, want[i].flags);
			assert_int_equal(k->start_ts, want[i].start);
			assert_int_equal(k->exit_ts, want[i].exit);
			assert_int_equal(k->ncomms, want[i].ncomms);
			for (unsigned c = 0; c < k->ncomms; c++) {
				assert_int_equal(k->comms[c].ts, want[i].c[c][0]);
				assert_string_equal(k->comms[c].comm,
						    strs[want[i].c[c][1]]);
			}
		}
		assert_null(ift_trace_task(t, nwant));

		check_task_lookups(t);
		ift_trace_close(t);
		assert_int_equal(unlink(finish ? path : part), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_memory),	/* first: see there */
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_writer_api_edges),
		cmocka_unit_test(test_task_table),
	};

	return cmocka_run_group_tests_name("writer", tests, rg_setup, rg_teardown);
}
