// SPDX-License-Identifier: MIT
/*
 * A writer rotated into pieces (record --rotate), and the pieces read back
 * alone and joined (ift_trace_open_run()).  The same seeded rows go to one
 * writer that never rotates and to one that rotates every few thousand
 * rows, with the same strings, ops, libraries and metadata: each piece must
 * be a whole trace by itself, and the pieces joined must read as the one
 * file does, row for row, string for string, task for task.  Pieces that
 * are not one run, each once and none missing, are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "rowgen.h"

#define NROWS		60000
#define EVERY		7001	/* rows a piece */
#define NPIECES		((NROWS + EVERY - 1) / EVERY)

static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
static const struct ift_library lib = {
	.path = "/usr/local/cuda/lib64/libcudart.so.13", .build_id = bid,
	.build_id_len = sizeof(bid), .dev = 2049, .ino = 7, .functions = 42, .kind = "cudart",
};

static const struct wcfg cfg = {
	.seed = 99, .n = NROWS, .chunk_rows = 1000, .level = 1, .sane_tasks = true,
};

/* the strings' texts: another recording's may differ under one run id */
static const char *str_prefix = "string-";

/* what each piece was given: its first row's number */
static uint64_t piece_first[NPIECES + 2];

static void piece_path(char *out, size_t n, const char *run, unsigned k)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.%u.trace", run, k);
	tpath(out, n, name);
}

static void both(struct ift_writer *const *w, size_t nw, uint64_t new_str, uint64_t new_op)
{
	char s[64], opname[32];
	struct ift_op op = { opname, IFT_API_RUNTIME, 0, { NULL } };

	snprintf(s, sizeof(s), "%s%" PRIu64, str_prefix, new_str);
	snprintf(opname, sizeof(opname), "cudaOp%" PRIu64, new_op);
	for (size_t i = 0; i < nw; i++) {
		if (new_str)
			assert_int_equal(ift_writer_string(w[i], s), (int64_t)new_str);
		if (new_op)
			assert_int_equal(ift_writer_op(w[i], &op), (int)new_op);
	}
}

/*
 * The rows of CFG into ONE (NULL: none) and into the pieces RUN.1.trace,
 * RUN.2.trace, ... of run id ID, rotated every EVERY rows; the last piece
 * finished unless LEAVE_LAST (flushed, left as its .part).
 */
static void write_run(const char *one, const char *run, const char *id, bool leave_last)
{
	struct ift_writer_opts opts = { cfg.chunk_rows, cfg.level };
	struct ift_writer *w[2];
	char path[PATH_MAX];
	size_t nw = 0, rot;
	unsigned piece = 1;
	struct gen g;
	struct row r;

	piece_path(path, sizeof(path), run, piece);
	assert_non_null(w[nw++] = ift_writer_create(path, &opts));
	rot = 0;
	if (one)
		assert_non_null(w[nw++] = ift_writer_create(one, &opts));
	gen_init(&g, cfg.seed, cfg.n, cfg.mask);
	g.tasks_only_sane = cfg.sane_tasks;
	for (size_t i = 0; i < nw; i++) {
		assert_int_equal(ift_writer_meta(w[i], "cmdline", "train.py"), 0);
		assert_int_equal(ift_writer_meta(w[i], "record.start_ns", "0"), 0);
		assert_int_equal(ift_writer_library(w[i], &lib), 0);
	}
	assert_int_equal(ift_writer_meta(w[rot], "record.run_id", id), 0);
	assert_int_equal(ift_writer_meta(w[rot], "record.piece", "1"), 0);
	for (uint64_t s = 1; s <= INIT_STRINGS; s++)
		both(w, nw, s, 0);
	for (uint64_t o = 1; o <= INIT_OPS; o++)
		both(w, nw, 0, o);
	piece_first[1] = 0;
	for (uint64_t i = 0; i < cfg.n; i++) {
		if (i && i % EVERY == 0) {
			piece_path(path, sizeof(path), run, ++piece);
			assert_int_equal(ift_writer_rotate(w[rot], path), 0);
			assert_int_equal(ift_writer_metaf(w[rot], "record.piece", "%u", piece), 0);
			assert_int_equal(ift_writer_metaf(w[rot], "record.start_ns", "%" PRIu64,
							  g.ts), 0);
			piece_first[piece] = i;
		}
		gen_next(&g, &r);
		both(w, nw, g.new_str, g.new_op);
		for (size_t k = 0; k < nw; k++)
			assert_int_equal(ift_writer_append(w[k], r.table, r.v), 0);
	}
	piece_first[piece + 1] = cfg.n;
	assert_int_equal(piece, NPIECES);
	for (size_t k = 0; k < nw; k++) {
		if (k == rot && leave_last)
			assert_int_equal(ift_writer_flush(w[k]), 0);
		else
			assert_int_equal(ift_writer_finish(w[k]), 0);
		ift_writer_free(w[k]);
	}
}

static bool same_tasks(struct ift_trace *a, struct ift_trace *b)
{
	if (ift_trace_task_count(a) != ift_trace_task_count(b))
		return false;
	for (size_t i = 0; i < ift_trace_task_count(a); i++) {
		const struct ift_task *x = ift_trace_task(a, i), *y = ift_trace_task(b, i);

		if (x->tid != y->tid || x->pid != y->pid || x->start_ts != y->start_ts ||
		    x->exit_ts != y->exit_ts || x->ncomms != y->ncomms)
			return false;
		for (unsigned c = 0; c < x->ncomms; c++)
			if (strcmp(x->comms[c].comm, y->comms[c].comm))
				return false;
	}
	return true;
}

/* Each piece alone: a whole trace of its own rows, with the run's dictionaries so far. */
static void test_pieces_alone(void **state)
{
	char one[PATH_MAX], path[PATH_MAX];
	struct ift_trace *o;

	(void)state;
	tpath(one, sizeof(one), "one.trace");
	write_run(one, "a", "run-a", false);
	assert_int_equal(ift_trace_open(one, 0, &o), 0);
	for (unsigned k = 1; k <= NPIECES; k++) {
		struct ift_trace *t;
		uint64_t rows = 0;
		char want[32];

		piece_path(path, sizeof(path), "a", k);
		assert_int_equal(ift_trace_open(path, IFT_OPEN_VERIFY, &t), 0);
		assert_true(ift_trace_recovery(t)->finished);
		assert_true(ift_trace_is_piece(t));
		snprintf(want, sizeof(want), "%u", k);
		assert_string_equal(ift_trace_meta(t, "record.piece"), want);
		assert_string_equal(ift_trace_meta(t, "record.run_id"), "run-a");
		assert_string_equal(ift_trace_meta(t, "cmdline"), "train.py");
		assert_int_equal(ift_trace_library_count(t), 1);
		assert_true(ift_trace_op_count(t) >= INIT_OPS);
		assert_string_equal(ift_trace_string(t, 1), "string-1");
		for (unsigned tb = 1; tb < IFT_T_NR; tb++)
			rows += ift_trace_rows(t, tb);
		assert_int_equal(rows, piece_first[k + 1] - piece_first[k]);
		/* the task table of the run so far, in the pieces after the first too */
		assert_false(ift_trace_tasks_rebuilt(t));
		assert_true(ift_trace_task_count(t) > 0);
		if (k == NPIECES)
			assert_true(same_tasks(t, o));
		ift_trace_close(t);
	}
	ift_trace_close(o);
}

/* The pieces joined, given in any order, read as the one file. */
static void test_joined_is_one(void **state)
{
	char one[PATH_MAX], paths[NPIECES][PATH_MAX];
	const char *v[NPIECES];
	struct ift_trace *o, *t;
	size_t bad, chunks = 0, ochunks = 0;

	(void)state;
	tpath(one, sizeof(one), "one.trace");
	write_run(one, "b", "run-b", false);
	for (unsigned k = 0; k < NPIECES; k++) {
		piece_path(paths[k], sizeof(paths[k]), "b", k + 1);
		v[NPIECES - 1 - k] = paths[k];	/* given last first */
	}
	assert_int_equal(ift_trace_open_run(v, NPIECES, &t, &bad), 0);
	assert_int_equal(ift_trace_open(one, 0, &o), 0);
	assert_true(ift_trace_recovery(t)->finished);
	assert_int_equal(check_cursor(t, &cfg, ALL_TABLES, 0), NROWS);
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		assert_int_equal(ift_trace_rows(t, tb), ift_trace_rows(o, tb));
		chunks += ift_trace_chunk_count(t, tb);
		ochunks += ift_trace_chunk_count(o, tb);
	}
	/* a piece's last chunk of each table is a partial one */
	assert_true(chunks >= ochunks);
	assert_true(chunks <= ochunks + (size_t)NPIECES * (IFT_T_NR - 1));
	assert_int_equal(ift_trace_op_count(t), ift_trace_op_count(o));
	for (uint64_t id = 1; ift_trace_string(o, id); id++)
		assert_string_equal(ift_trace_string(t, id), ift_trace_string(o, id));
	assert_null(ift_trace_string(t, 1 + INIT_STRINGS + NROWS / STRING_EVERY));
	assert_true(same_tasks(t, o));
	assert_string_equal(ift_trace_meta(t, "record.start_ns"), "0");
	ift_trace_close(o);
	ift_trace_close(t);
}

/* A recorder killed in its last piece: the rows flushed, the tasks from every row. */
static void test_last_unfinished(void **state)
{
	char paths[NPIECES][PATH_MAX];
	const char *v[NPIECES];
	struct ift_trace *t;
	size_t bad;

	(void)state;
	write_run(NULL, "c", "run-c", true);
	for (unsigned k = 0; k < NPIECES; k++) {
		piece_path(paths[k], sizeof(paths[k]), "c", k + 1);
		if (k + 1 == NPIECES)
			strcat(paths[k], ".part");
		v[k] = paths[k];
	}
	assert_int_equal(ift_trace_open_run(v, NPIECES, &t, &bad), 0);
	assert_false(ift_trace_recovery(t)->finished);
	assert_true(ift_trace_tasks_rebuilt(t));
	assert_true(ift_trace_task_count(t) > 0);
	assert_int_equal(check_cursor(t, &cfg, ALL_TABLES, 0), NROWS);
	ift_trace_close(t);
}

/*
 * A piece writes a table's schema with its first chunk of it: the last
 * piece here has rows of one table only, and every earlier piece's rows of
 * the others must still read (their columns are mapped from the piece that
 * has the schema).
 */
static void test_table_missing_last(void **state)
{
	struct ift_writer_opts opts = { 64, 1 };
	char p1[PATH_MAX], p2[PATH_MAX];
	const char *v[2] = { p1, p2 };
	uint64_t row[MAXCOLS] = { 0 }, rows = 0;
	struct ift_writer *w;
	struct ift_trace *t;
	struct ift_cursor *cur;
	struct ift_event ev;
	size_t bad;

	(void)state;
	piece_path(p1, sizeof(p1), "h", 1);
	piece_path(p2, sizeof(p2), "h", 2);
	assert_non_null(w = ift_writer_create(p1, &opts));
	assert_int_equal(ift_writer_meta(w, "record.run_id", "run-h"), 0);
	assert_int_equal(ift_writer_meta(w, "record.piece", "1"), 0);
	for (uint64_t i = 0; i < 300; i++) {
		row[IFT_C_TS] = 1000 + i;
		row[IFT_C_TID] = 7;
		assert_int_equal(ift_writer_append(w, i % 2 ? IFT_T_SWITCHES : IFT_T_WAKEUPS,
						   row), 0);
	}
	assert_int_equal(ift_writer_rotate(w, p2), 0);
	assert_int_equal(ift_writer_meta(w, "record.piece", "2"), 0);
	for (uint64_t i = 300; i < 400; i++) {
		row[IFT_C_TS] = 1000 + i;
		assert_int_equal(ift_writer_append(w, IFT_T_SWITCHES, row), 0);
	}
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);
	assert_int_equal(ift_trace_open_run(v, 2, &t, &bad), 0);
	assert_non_null(cur = ift_cursor_new(t, ALL_TABLES, 0));
	while (ift_cursor_next(cur, &ev) > 0) {
		assert_int_equal(ev.row[IFT_C_TID], 7);
		rows++;
	}
	assert_int_equal(rows, 400);
	ift_cursor_free(cur);
	ift_trace_close(t);
}

static void expect_refused(const char *const *v, size_t n)
{
	struct ift_trace *t = (struct ift_trace *)&t;
	size_t bad;

	assert_int_equal(ift_trace_open_run(v, n, &t, &bad), -IFT_E_PIECES);
	assert_null(t);
}

static void test_refused(void **state)
{
	char a[4][PATH_MAX], b2[PATH_MAX], one[PATH_MAX];
	const char *v[4];

	(void)state;
	write_run(NULL, "d", "run-d", false);
	write_run(NULL, "e", "run-e", false);
	for (unsigned k = 0; k < 4; k++)
		piece_path(a[k], sizeof(a[k]), "d", k + 1);
	piece_path(b2, sizeof(b2), "e", 2);
	tpath(one, sizeof(one), "one.trace");
	/* a piece missing in the middle */
	v[0] = a[0], v[1] = a[2];
	expect_refused(v, 2);
	/* one piece twice */
	v[0] = a[0], v[1] = a[1], v[2] = a[1];
	expect_refused(v, 3);
	/* a piece of another run */
	v[0] = a[0], v[1] = b2;
	expect_refused(v, 2);
	/* a run id reused by another recording: its strings are not the run's */
	str_prefix = "other-";
	write_run(NULL, "g", "run-d", false);
	str_prefix = "string-";
	piece_path(b2, sizeof(b2), "g", 2);
	v[0] = a[0], v[1] = b2;
	expect_refused(v, 2);
	/* a trace that is no piece */
	write_run(one, "f", "run-f", false);
	v[0] = one;
	expect_refused(v, 1);
	/* consecutive pieces that are not the first are a run of their own */
	v[0] = a[3], v[1] = a[2];
	{
		struct ift_trace *t;
		size_t bad;

		assert_int_equal(ift_trace_open_run(v, 2, &t, &bad), 0);
		ift_trace_close(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces_alone),
		cmocka_unit_test(test_joined_is_one),
		cmocka_unit_test(test_last_unfinished),
		cmocka_unit_test(test_table_missing_last),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests_name("rotate", tests, rg_setup, rg_teardown);
}
