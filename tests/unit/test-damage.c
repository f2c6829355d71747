// SPDX-License-Identifier: MIT
/*
 * Damaged, cut short and foreign files.  docs/trace-format.md promises that a
 * file cut at any byte is readable up to its last complete chunk, and that a
 * damaged file gives an error, never a crash or a wrong row.  One trace with
 * many chunks is written once; every test damages a copy of its bytes.
 *
 * Rows a damaged file yields are compared with the rows written, so a reader
 * that "recovers" garbage fails here just as one that crashes does (the
 * sanitizer build catches the crashes that do not show).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ift-trace.h"

#define MAXCOLS		16
#define ALL_TABLES	(((1U << IFT_T_NR) - 1) & ~1U)
#define HDR		64	/* file header */
#define SHDR		24	/* section header */
#define TRAILER		16
#define SEC_OPS		6
#define SEC_TASKS	8
#define SEC_CHUNK	4
#define SEC_INDEX	9

static char tmpdir[] = "/tmp/ift-damage.XXXXXX";
static char orig_path[PATH_MAX], work_path[PATH_MAX];

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: the same stream everywhere */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- the original trace ------------------------------------------------ */

struct table_rows {
	uint64_t (*v)[MAXCOLS];
	size_t n, cap;
};

struct section {
	uint64_t off, end;	/* header start, payload end */
	unsigned type;
};

/* What was written, and where its sections lie. */
static struct {
	uint8_t *bytes;
	size_t size;
	struct table_rows rows[IFT_T_NR];
	struct section *secs;
	size_t nsecs;
	uint64_t index_off;	/* INDEX section header */
	uint64_t tasks_end;	/* end of the TASKS section */
	uint64_t last_task_chunk_end;
	size_t nstrings;
	/* the original, opened: its chunk list and task table are the truth */
	struct ift_trace *t;
} O;

static void add_row(struct ift_writer *w, unsigned table, const uint64_t *row)
{
	struct table_rows *tr = &O.rows[table];

	assert_int_equal(ift_writer_append(w, table, row), 0);
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? tr->cap * 2 : 256;
		tr->v = realloc(tr->v, tr->cap * sizeof(*tr->v));
		assert_non_null(tr->v);
	}
	memset(tr->v[tr->n], 0, sizeof(tr->v[tr->n]));
	memcpy(tr->v[tr->n], row, ift_table_def(table)->ncols * sizeof(*row));
	tr->n++;
}

static void write_original(void)
{
	struct ift_writer_opts opts = { .chunk_rows = 16 };
	static const uint8_t bid[20] = { 1, 2, 3, 0, 5 };
	struct ift_library lib = { "/usr/lib/libcudart.so", bid, sizeof(bid),
				   1, 2, 3, "cudart" };
	struct ift_op op = { "cudaMemcpyAsync", IFT_API_RUNTIME, 3,
			     { "dst", "src", "bytes" } };
	struct ift_loss loss = { 1, 5, 0, 6, 1000 };
	uint64_t ts = 1000, nstr;
	struct ift_writer *w;
	char s[64];

	rng_state = 42;
	w = ift_writer_create(orig_path, &opts);
	assert_non_null(w);
	assert_int_equal(ift_writer_meta(w, "tool.version", "test-damage"), 0);
	assert_int_equal(ift_writer_op(w, &op), 1);
	assert_int_equal(ift_writer_library(w, &lib), 0);
	for (nstr = 1; nstr <= 8; nstr++) {
		snprintf(s, sizeof(s), "comm-%" PRIu64, nstr);
		assert_int_equal(ift_writer_string(w, s), (int64_t)nstr);
	}
	nstr--;
	for (int i = 0; i < 3000; i++) {
		unsigned table = 1 + (unsigned)below(IFT_T_NR - 1);
		uint64_t row[MAXCOLS] = { 0 };
		uint64_t tid = 100 + below(20);

		/* new strings and metadata keep arriving between chunks */
		if (i % 150 == 149) {
			snprintf(s, sizeof(s), "late-string-%d", i);
			assert_int_equal(ift_writer_string(w, s), (int64_t)++nstr);
			assert_int_equal(ift_writer_metaf(w, "progress", "%d", i), 0);
		}
		if (i == 1500)
			assert_int_equal(ift_writer_op(w, &op), 2);
		ts += below(3) ? below(5000) : 0;
		row[IFT_C_TS] = ts;
		row[IFT_C_CPU] = below(4);
		row[IFT_C_PID] = tid / 4 * 4;
		row[IFT_C_TID] = tid;
		for (unsigned c = IFT_C_COMMON_NR; c < ift_table_def(table)->ncols; c++)
			row[c] = below(4) ? below(100) : rnd();
		if (table == IFT_T_TASKS) {
			row[IFT_TK_KIND] = 1 + below(5);
			row[IFT_TK_CHILD_PID] = 100 + below(20);
			row[IFT_TK_CHILD_TID] = row[IFT_TK_CHILD_PID];
			row[IFT_TK_COMM] = below(nstr + 1);
			row[IFT_TK_FILE] = below(nstr + 1);
		} else if (table == IFT_T_SAMPLES) {
			row[IFT_SM_METRIC] = 1 + below(nstr);
			row[IFT_SM_VALUE] = (uint64_t)-(int64_t)below(10);
		}
		add_row(w, table, row);
	}
	assert_int_equal(ift_writer_loss(w, &loss), 0);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);
	O.nstrings = nstr;
}

static void read_file(const char *path, uint8_t **bytes, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*size = (size_t)st.st_size;
	*bytes = malloc(*size + 1);
	assert_non_null(*bytes);
	assert_int_equal(read(fd, *bytes, *size), (ssize_t)*size);
	close(fd);
}

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Walks the sections as the spec lays them out, independently of the reader. */
static void map_sections(void)
{
	uint64_t off = HDR;

	O.index_off = le64(O.bytes + O.size - TRAILER);
	assert_memory_equal(O.bytes + O.size - 8, "\x89IFTEND\n", 8);
	while (off < O.size - TRAILER) {
		struct section *s;

		assert_memory_equal(O.bytes + off, "ISEC", 4);
		O.secs = realloc(O.secs, (O.nsecs + 1) * sizeof(*O.secs));
		assert_non_null(O.secs);
		s = &O.secs[O.nsecs++];
		s->off = off;
		s->type = le16(O.bytes + off + 4);
		s->end = off + SHDR + le64(O.bytes + off + 8);
		if (s->type == SEC_TASKS)
			O.tasks_end = s->end;
		off = s->end;
	}
	assert_int_equal(off, O.size - TRAILER);
	assert_int_equal(O.secs[O.nsecs - 1].type, SEC_INDEX);
	assert_int_equal(O.secs[O.nsecs - 1].off, O.index_off);
	assert_true(O.tasks_end > 0);
}

/* ---- checking what a damaged file yields ------------------------------- */

static void row_assert_equal(unsigned table, const uint64_t *got,
			     const uint64_t *want, size_t nth, const char *how)
{
	const struct ift_table_def *def = ift_table_def(table);

	for (unsigned c = 0; c < def->ncols; c++)
		if (got[c] != want[c])
			fail_msg("%s: %s row %zu column %s: %#" PRIx64 " != %#" PRIx64,
				 how, def->name, nth, def->cols[c].name, got[c],
				 want[c]);
}

/*
 * The chunks T lists are a prefix of the original's (all of them when it
 * read the index), in the same places.  Returns the rows they hold, per table.
 */
static void check_chunk_list(struct ift_trace *t, uint64_t *rows)
{
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		size_t n = ift_trace_chunk_count(t, tb);

		assert_true(n <= ift_trace_chunk_count(O.t, tb));
		rows[tb] = 0;
		for (size_t i = 0; i < n; i++) {
			const struct ift_chunk_info *x = ift_trace_chunk_info(t, tb, i);
			const struct ift_chunk_info *y = ift_trace_chunk_info(O.t, tb, i);

			assert_int_equal(x->offset, y->offset);
			assert_int_equal(x->size, y->size);
			assert_int_equal(x->nrows, y->nrows);
			assert_true(x->ts_min == y->ts_min && x->ts_max == y->ts_max);
			rows[tb] += x->nrows;
		}
		assert_int_equal(ift_trace_rows(t, tb), rows[tb]);
	}
}

/*
 * Loads every chunk.  With STRICT each must load; otherwise a chunk may fail
 * with a clean error.  Every row that loads is the row written.  Returns the
 * number of chunks that failed.
 */
static size_t check_chunks(struct ift_trace *t, bool strict)
{
	struct ift_chunk c = { 0 };
	size_t failed = 0;

	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		size_t first = 0;

		for (size_t i = 0; i < ift_trace_chunk_count(t, tb); i++) {
			const struct ift_chunk_info *ci = ift_trace_chunk_info(t, tb, i);
			int ret = ift_trace_chunk_load(t, tb, i, &c);

			if (ret < 0) {
				assert_false(strict);
				assert_true(strlen(ift_strerror(ret)) > 0);
				failed++;
				first += ci->nrows;
				continue;
			}
			assert_int_equal(c.nrows, ci->nrows);
			for (uint32_t r = 0; r < c.nrows; r++) {
				uint64_t got[MAXCOLS];

				for (unsigned k = 0; k < c.ncols; k++)
					got[k] = c.col[k][r];
				assert_true(first + r < O.rows[tb].n);
				row_assert_equal(tb, got, O.rows[tb].v[first + r],
						 first + r, "chunk");
			}
			first += c.nrows;
		}
	}
	ift_chunk_release(&c);
	return failed;
}

/*
 * The cursor over everything: the first ROWS[tb] rows of each table merged
 * by time, ties in table order.  With STRICT it must get through; otherwise
 * it may stop at a clean error, having yielded a prefix.
 */
static void check_cursor(struct ift_trace *t, const uint64_t *rows, bool strict)
{
	struct ift_cursor *cur = ift_cursor_new(t, ALL_TABLES, 0);
	size_t pos[IFT_T_NR] = { 0 }, nth = 0;
	struct ift_event ev;
	int ret;

	assert_non_null(cur);
	for (;;) {
		unsigned best = 0;

		for (unsigned tb = 1; tb < IFT_T_NR; tb++)
			if (pos[tb] < rows[tb] &&
			    (!best || O.rows[tb].v[pos[tb]][IFT_C_TS] <
				      O.rows[best].v[pos[best]][IFT_C_TS]))
				best = tb;
		ret = ift_cursor_next(cur, &ev);
		if (ret < 0 && !strict) {
			assert_true(strlen(ift_strerror(ret)) > 0);
			break;
		}
		if (!best) {
			assert_int_equal(ret, 0);
			break;
		}
		assert_int_equal(ret, 1);
		assert_int_equal(ev.table, best);
		row_assert_equal(best, ev.row, O.rows[best].v[pos[best]], nth,
				 "cursor");
		pos[best]++;
		nth++;
	}
	ift_cursor_free(cur);
}

/* Strings and ops a damaged file has are the original's first ones. */
static void check_dicts(struct ift_trace *t)
{
	uint64_t id;

	for (id = 1; ift_trace_string(t, id); id++)
		assert_string_equal(ift_trace_string(t, id),
				    ift_trace_string(O.t, id));
	assert_true(id - 1 <= O.nstrings);
	for (id = 1; id <= ift_trace_op_count(t); id++)
		assert_string_equal(ift_trace_op(t, id)->name,
				    ift_trace_op(O.t, id)->name);
}

static bool same_tasks(struct ift_trace *a, struct ift_trace *b)
{
	if (ift_trace_task_count(a) != ift_trace_task_count(b))
		return false;
	for (size_t i = 0; i < ift_trace_task_count(a); i++) {
		const struct ift_task *x = ift_trace_task(a, i);
		const struct ift_task *y = ift_trace_task(b, i);

		if (x->tid != y->tid || x->pid != y->pid || x->ppid != y->ppid ||
		    x->flags != y->flags || x->start_ts != y->start_ts ||
		    x->exit_ts != y->exit_ts || x->ncomms != y->ncomms)
			return false;
		for (unsigned c = 0; c < x->ncomms; c++)
			if (x->comms[c].ts != y->comms[c].ts ||
			    strcmp(x->comms[c].comm, y->comms[c].comm))
				return false;
	}
	return true;
}

/* ---- tests ------------------------------------------------------------- */

/* The original itself reads back exactly: the baseline for all that follows. */
static void test_original(void **state)
{
	uint64_t rows[IFT_T_NR];
	size_t nchunks = 0;

	(void)state;
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		assert_int_equal(ift_trace_rows(O.t, tb), O.rows[tb].n);
		nchunks += ift_trace_chunk_count(O.t, tb);
	}
	print_message("# %zu bytes, %zu sections, %zu chunks\n", O.size, O.nsecs,
		      nchunks);
	/* enough chunks and sections to cut between */
	assert_true(nchunks > 150);
	assert_true(O.nsecs > nchunks + 20);
	assert_true(ift_trace_recovery(O.t)->finished);
	assert_false(ift_trace_tasks_rebuilt(O.t));
	assert_true(ift_trace_task_count(O.t) > 10);
	check_chunk_list(O.t, rows);
	assert_int_equal(check_chunks(O.t, true), 0);
	check_cursor(O.t, rows, true);
	check_dicts(O.t);
}

/* The end of the last section that ends at or before CUT. */
static uint64_t good_bytes_at(uint64_t cut)
{
	uint64_t good = HDR;

	for (size_t i = 0; i < O.nsecs; i++)
		if (O.secs[i].end <= cut)
			good = O.secs[i].end;
	return good;
}

static void check_as_cut(struct ift_trace *t, uint64_t cut);

/*
 * Without its trailer a file is scanned whatever the flags say, so a cut file
 * is opened one way; the whole file (and a sample of cuts) every way.
 */
static void check_cut(uint64_t cut, bool all_flags)
{
	static const unsigned flags[] = { 0, IFT_OPEN_NO_INDEX, IFT_OPEN_VERIFY };

	write_file(work_path, O.bytes, (size_t)cut);
	for (size_t f = 0; f < (all_flags ? 3 : 1); f++) {
		struct ift_trace *t;
		int ret = ift_trace_open(work_path, flags[f], &t);

		if (cut == 0) {
			assert_int_equal(ret, -IFT_E_EMPTY);
			continue;
		}
		if (cut < HDR) {
			assert_int_equal(ret, -IFT_E_TRUNCATED);
			assert_true(strlen(ift_strerror(ret)) > 0);
			continue;
		}
		/* a cut anywhere after the header opens, with what came before */
		if (ret < 0)
			fail_msg("cut at %" PRIu64 " of %zu (flags %u): %s", cut,
				 O.size, flags[f], ift_strerror(ret));
		check_as_cut(t, cut);
		ift_trace_close(t);
	}
}

/* T holds what a file cut at CUT holds: the sections before it, whole. */
static void check_as_cut(struct ift_trace *t, uint64_t cut)
{
	uint64_t good = good_bytes_at(cut), rows[IFT_T_NR];
	const struct ift_recovery *rec;

	rec = ift_trace_recovery(t);
	assert_int_equal(rec->file_size, cut);
	if (cut == O.size) {
		assert_true(rec->finished);
		assert_false(rec->damaged);
	} else {
		assert_false(rec->finished);
		assert_int_equal(rec->good_bytes, good);
		assert_int_equal(rec->damaged, good != cut);
		if (rec->damaged) {
			assert_true(rec->reason < 0);
			assert_true(strlen(ift_strerror(rec->reason)) > 0);
		}
	}
	check_chunk_list(t, rows);
	/* exactly the chunks that end by the cut: none lost, none invented */
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		size_t want = 0;

		for (size_t i = 0; i < ift_trace_chunk_count(O.t, tb); i++) {
			const struct ift_chunk_info *ci =
				ift_trace_chunk_info(O.t, tb, i);

			if (ci->offset + SHDR + ci->size <= cut)
				want++;
		}
		if (ift_trace_chunk_count(t, tb) != want)
			fail_msg("cut at %" PRIu64 ": table %u has %zu chunks, "
				 "%zu end before the cut", cut, tb,
				 ift_trace_chunk_count(t, tb), want);
	}
	assert_int_equal(check_chunks(t, true), 0);
	check_cursor(t, rows, true);
	check_dicts(t);
	/* the task table: the TASKS section, or rebuilt from the rows */
	assert_int_equal(ift_trace_tasks_rebuilt(t), cut < O.tasks_end);
	if (cut >= O.last_task_chunk_end && !same_tasks(t, O.t))
		fail_msg("cut at %" PRIu64 " (tasks at %" PRIu64 "): %zu tasks, not %zu", cut,
			 O.tasks_end, ift_trace_task_count(t), ift_trace_task_count(O.t));
}

/*
 * A file read while it is written (top following a recording): opened once
 * its header is there, then followed as it grows by pieces that end
 * anywhere, in a section's header or its payload.  After each follow it
 * holds what a file cut there holds, and once the trailer is in, what the
 * finished file holds.
 */
static void test_follow_growing(void **state)
{
	uint64_t cut = HDR, last = HDR;
	struct ift_trace *t;
	int fd, grows = 0;

	(void)state;
	rng_state = 11;
	write_file(work_path, O.bytes, HDR);
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	fd = open(work_path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	while (cut < O.size) {
		uint64_t next = cut + 1 + below(below(4) ? 300 : 3000);
		bool grew;

		if (next > O.size)
			next = O.size;
		assert_int_equal(write(fd, O.bytes + cut, (size_t)(next - cut)),
				 (ssize_t)(next - cut));
		cut = next;
		assert_int_equal(ift_trace_follow(t, &grew), 0);
		assert_int_equal(grew, good_bytes_at(cut) > last);
		grows += grew;
		last = good_bytes_at(cut);
		check_as_cut(t, cut);
	}
	assert_true(ift_trace_recovery(t)->finished);
	print_message("# %d follows grew the trace\n", grows);
	assert_true(grows > 50);
	/* finished: nothing more is read, and a file that shrank is refused */
	assert_int_equal(ift_trace_follow(t, &(bool){ false }), 0);
	ift_trace_close(t);
	close(fd);
	write_file(work_path, O.bytes, (size_t)O.size / 2);
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	assert_int_equal(truncate(work_path, (off_t)O.size / 4), 0);
	assert_int_equal(ift_trace_follow(t, &(bool){ false }), -IFT_E_REPLACED);
	ift_trace_close(t);
}

static void test_truncate_at_boundaries(void **state)
{
	(void)state;
	check_cut(0, true);
	check_cut(HDR, true);
	for (size_t i = 0; i < O.nsecs; i++) {
		bool all = i % 16 == 0;

		/* in the header, right after it, in the payload, at the end */
		check_cut(O.secs[i].off + 1, all);
		check_cut(O.secs[i].off + SHDR, all);
		check_cut(O.secs[i].end - 1, all);
		check_cut(O.secs[i].end, all);
	}
	check_cut(O.size - 8, true);
	check_cut(O.size - 1, true);
	check_cut(O.size, true);
}

static void test_truncate_at_random(void **state)
{
	(void)state;
	rng_state = 7;
	for (int i = 0; i < 200; i++)
		check_cut(below(O.size), i % 8 == 0);
	for (uint64_t cut = 1; cut < HDR + 2; cut++)
		check_cut(cut, false);
}

/* One byte changed at POS: never a crash, never a wrong row. */
static void check_flip(size_t pos, uint8_t mask)
{
	static const unsigned flags[] = { 0, IFT_OPEN_NO_INDEX, IFT_OPEN_VERIFY };

	O.bytes[pos] ^= mask;
	write_file(work_path, O.bytes, O.size);
	O.bytes[pos] ^= mask;
	for (size_t f = 0; f < 3; f++) {
		uint64_t rows[IFT_T_NR];
		struct ift_trace *t;
		int ret = ift_trace_open(work_path, flags[f], &t);

		if (pos < 8) {
			assert_int_equal(ret, -IFT_E_NOT_TRACE);
			continue;
		}
		if (pos < HDR) {
			/* the header checksum covers it, or it is the checksum */
			assert_int_equal(ret, -IFT_E_HEADER);
			continue;
		}
		/*
		 * After the header, the reader keeps what precedes the damage:
		 * opening must succeed.
		 */
		if (ret < 0)
			fail_msg("byte %zu ^ %#x (flags %u): %s", pos, mask, flags[f],
				 ift_strerror(ret));
		check_chunk_list(t, rows);
		check_chunks(t, false);
		check_cursor(t, rows, false);
		check_dicts(t);
		if (ift_trace_recovery(t)->damaged)
			assert_true(ift_trace_recovery(t)->good_bytes <= pos);
		ift_trace_close(t);
	}
}

static uint8_t flip_mask(void)
{
	return (uint8_t)(1 + below(255));
}

static void test_flip_bytes(void **state)
{
	struct section *idx = &O.secs[O.nsecs - 1];

	(void)state;
	rng_state = 8;
	/* the whole header, the trailer, the index */
	for (size_t pos = 0; pos < HDR; pos++)
		check_flip(pos, flip_mask());
	for (size_t pos = O.size - TRAILER; pos < O.size; pos++)
		check_flip(pos, flip_mask());
	for (int i = 0; i < 60; i++)
		check_flip((size_t)(idx->off + below(idx->end - idx->off)),
			   flip_mask());
	/* section headers of chunks and of the rest */
	for (int i = 0; i < 60; i++) {
		struct section *s = &O.secs[below(O.nsecs)];

		check_flip((size_t)(s->off + below(SHDR)), flip_mask());
	}
	/* anywhere: mostly chunk payloads */
	for (int i = 0; i < 300; i++)
		check_flip((size_t)(HDR + below(O.size - HDR)), flip_mask());
}

/* A chunk listed in the index but damaged fails alone, with a clean error. */
static void test_damaged_chunk_through_index(void **state)
{
	const struct ift_chunk_info *ci = ift_trace_chunk_info(O.t, IFT_T_CALLS, 3);
	struct ift_chunk c = { 0 };
	uint64_t rows[IFT_T_NR];
	struct ift_trace *t;

	(void)state;
	assert_non_null(ci);
	O.bytes[ci->offset + SHDR + ci->size / 2] ^= 0x40;
	write_file(work_path, O.bytes, O.size);
	O.bytes[ci->offset + SHDR + ci->size / 2] ^= 0x40;

	/* the index is intact: the file opens finished, with every chunk */
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	assert_true(ift_trace_recovery(t)->finished);
	check_chunk_list(t, rows);
	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		assert_int_equal(rows[tb], O.rows[tb].n);
	assert_int_equal(ift_trace_chunk_load(t, IFT_T_CALLS, 3, &c),
			 -IFT_E_CHECKSUM);
	ift_chunk_release(&c);
	assert_int_equal(check_chunks(t, false), 1);
	check_cursor(t, rows, false);
	ift_trace_close(t);

	/* a scan stops there, keeping everything before it */
	assert_int_equal(ift_trace_open(work_path, IFT_OPEN_VERIFY, &t), 0);
	assert_true(ift_trace_recovery(t)->damaged);
	assert_int_equal(ift_trace_recovery(t)->good_bytes, ci->offset);
	assert_int_equal(ift_trace_recovery(t)->reason, -IFT_E_CHECKSUM);
	assert_int_equal(ift_trace_chunk_count(t, IFT_T_CALLS), 3);
	assert_int_equal(check_chunks(t, true), 0);
	ift_trace_close(t);
}

static void expect_open(const char *path, int want)
{
	struct ift_trace *t = (struct ift_trace *)&t;	/* must be reset */
	int ret = ift_trace_open(path, 0, &t);

	if (ret != want)
		fail_msg("'%s': got %d (%s), want %d (%s)", path, ret,
			 ift_strerror(ret), want, ift_strerror(want));
	assert_null(t);
	assert_true(strlen(ift_strerror(ret)) > 0);
	assert_int_equal(ift_trace_open(path, IFT_OPEN_NO_INDEX, &t), want);
}

static void test_not_traces(void **state)
{
	static const char text[] =
		"this is a plain text file, long enough to fill a header and more\n"
		"second line\n";

	(void)state;
	write_file(work_path, "", 0);
	expect_open(work_path, -IFT_E_EMPTY);
	write_file(work_path, text, sizeof(text) - 1);
	expect_open(work_path, -IFT_E_NOT_TRACE);
	write_file(work_path, "hi\n", 3);
	expect_open(work_path, -IFT_E_NOT_TRACE);
	write_file(work_path, "\x89IFT\r\n\x1a", 7);	/* a trace, cut short */
	expect_open(work_path, -IFT_E_TRUNCATED);
	write_file(work_path, "\x89IFX", 4);
	expect_open(work_path, -IFT_E_NOT_TRACE);
	if (access("/bin/true", R_OK) == 0)
		expect_open("/bin/true", -IFT_E_NOT_TRACE);
	expect_open(tmpdir, -EISDIR);
	expect_open("/nonexistent/trace", -ENOENT);
	/* part of the header only */
	write_file(work_path, O.bytes, 30);
	expect_open(work_path, -IFT_E_TRUNCATED);
	write_file(work_path, O.bytes, HDR - 1);
	expect_open(work_path, -IFT_E_TRUNCATED);
}

/* The header with field AT set to V (of SIZE bytes) and its crc redone. */
static void patched_header(size_t at, unsigned size, uint64_t v)
{
	uint8_t *b = malloc(O.size);

	assert_non_null(b);
	memcpy(b, O.bytes, O.size);
	if (size == 2)
		put_le16(b + at, (uint16_t)v);
	else if (size == 4)
		put_le32(b + at, (uint32_t)v);
	else
		put_le64(b + at, v);
	put_le32(b + 60, (uint32_t)crc32(0, b, 60));
	write_file(work_path, b, O.size);
	free(b);
}

static void test_header_versions(void **state)
{
	struct ift_trace *t;

	(void)state;
	/* min_version 99: this reader is too old */
	patched_header(10, 2, 99);
	expect_open(work_path, -IFT_E_TOO_NEW);
	patched_header(10, 2, IFT_FORMAT_VERSION + 1);
	expect_open(work_path, -IFT_E_TOO_NEW);
	/* a newer writer that old readers can still read */
	patched_header(8, 2, 99);
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	assert_int_equal(ift_trace_version(t), 99);
	assert_int_equal(ift_trace_rows(t, IFT_T_CALLS), O.rows[IFT_T_CALLS].n);
	ift_trace_close(t);
	/* a required feature bit we do not know; an optional one is fine */
	patched_header(16, 8, 1ULL << 7);
	expect_open(work_path, -IFT_E_FEATURE);
	patched_header(16, 8, 1ULL << 63);
	expect_open(work_path, -IFT_E_FEATURE);
	patched_header(24, 8, UINT64_MAX);
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	assert_true(ift_trace_recovery(t)->finished);
	ift_trace_close(t);
	/* big-endian, or anything else */
	patched_header(32, 4, 0x0D0C0B0AU);
	expect_open(work_path, -IFT_E_BYTE_ORDER);
	/* a header too small to be one, or larger than the file */
	patched_header(12, 4, 32);
	expect_open(work_path, -IFT_E_HEADER);
	patched_header(12, 4, 0);
	expect_open(work_path, -IFT_E_HEADER);
	patched_header(12, 4, UINT32_MAX);
	expect_open(work_path, -IFT_E_TRUNCATED);
}

/*
 * A newer writer may grow the header: header_size says where the first
 * section starts, and a reader skips to it.
 */
static void test_header_size(void **state)
{
	size_t grow = 40, n = O.size + grow;
	uint8_t *b = malloc(n);
	uint64_t rows[IFT_T_NR];
	struct ift_trace *t;

	(void)state;
	assert_non_null(b);
	memcpy(b, O.bytes, HDR);
	memset(b + HDR, 0xee, grow);	/* fields this reader does not know */
	memcpy(b + HDR + grow, O.bytes + HDR, O.size - HDR);
	put_le32(b + 12, HDR + (uint32_t)grow);
	put_le32(b + 60, (uint32_t)crc32(0, b, 60));
	write_file(work_path, b, n);
	free(b);
	for (unsigned f = 0; f <= IFT_OPEN_NO_INDEX; f++) {
		assert_int_equal(ift_trace_open(work_path, f, &t), 0);
		assert_false(ift_trace_recovery(t)->damaged);
		assert_int_equal(ift_trace_recovery(t)->good_bytes, n);
		for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
			rows[tb] = ift_trace_rows(t, tb);
			assert_int_equal(rows[tb], O.rows[tb].n);
		}
		assert_int_equal(check_chunks(t, true), 0);
		check_cursor(t, rows, true);
		assert_true(same_tasks(t, O.t));
		ift_trace_close(t);
	}
	/* only a header, however large, is an empty trace */
	b = calloc(1, 200);
	assert_non_null(b);
	memcpy(b, O.bytes, HDR);
	put_le32(b + 12, 200);
	put_le32(b + 60, (uint32_t)crc32(0, b, 60));
	write_file(work_path, b, 200);
	free(b);
	assert_int_equal(ift_trace_open(work_path, 0, &t), 0);
	assert_false(ift_trace_recovery(t)->damaged);
	assert_int_equal(ift_trace_rows(t, IFT_T_CALLS), 0);
	ift_trace_close(t);
}

/* A section of TYPE and FLAGS with valid checksums, inserted at AT. */
static size_t insert_section(uint8_t **out, size_t at, unsigned type,
			     unsigned flags, const char *payload)
{
	size_t plen = strlen(payload), n = O.size + SHDR + plen;
	uint8_t *b = malloc(n), *h;

	assert_non_null(b);
	memcpy(b, O.bytes, at);
	h = b + at;
	memcpy(h, "ISEC", 4);
	put_le16(h + 4, (uint16_t)type);
	put_le16(h + 6, (uint16_t)flags);
	put_le64(h + 8, plen);
	put_le32(h + 16, (uint32_t)crc32(0, (const uint8_t *)payload, (uInt)plen));
	put_le32(h + 20, (uint32_t)crc32(0, h, 20));
	memcpy(h + SHDR, payload, plen);
	memcpy(h + SHDR + plen, O.bytes + at, O.size - at);
	*out = b;
	return n;
}

static void test_unknown_sections(void **state)
{
	/* right after the header, and between two chunks mid-file */
	size_t mid = 0, ats[2] = { HDR, 0 };
	uint64_t rows[IFT_T_NR];

	(void)state;
	for (size_t i = O.nsecs / 2; i < O.nsecs && !mid; i++)
		if (O.secs[i].type == SEC_CHUNK && O.secs[i + 1].type == SEC_CHUNK)
			mid = (size_t)O.secs[i].end;
	assert_true(mid > 0);
	ats[1] = mid;

	for (size_t k = 0; k < 2; k++) {
		struct ift_trace *t, *u;
		uint8_t *b;
		size_t n;

		/* optional: skipped, everything else read */
		n = insert_section(&b, ats[k], 0x1234, 0, "from a newer writer");
		write_file(work_path, b, n);
		free(b);
		assert_int_equal(ift_trace_open(work_path, IFT_OPEN_NO_INDEX, &t), 0);
		assert_false(ift_trace_recovery(t)->damaged);
		assert_int_equal(ift_trace_recovery(t)->good_bytes, n);
		/* the chunks moved, so compare rows rather than chunk offsets */
		for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
			rows[tb] = ift_trace_rows(t, tb);
			assert_int_equal(rows[tb], O.rows[tb].n);
		}
		assert_int_equal(check_chunks(t, true), 0);
		check_cursor(t, rows, true);
		/* the index no longer matches: a plain open scans too */
		assert_int_equal(ift_trace_open(work_path, 0, &u), 0);
		for (unsigned tb = 1; tb < IFT_T_NR; tb++)
			assert_int_equal(ift_trace_chunk_count(u, tb),
					 ift_trace_chunk_count(t, tb));
		assert_true(same_tasks(t, O.t));
		assert_string_equal(ift_trace_meta(t, "tool.version"), "test-damage");
		ift_trace_close(u);
		ift_trace_close(t);

		/* required: this reader must refuse the file */
		n = insert_section(&b, ats[k], 0x1234, 1, "from a newer writer");
		write_file(work_path, b, n);
		free(b);
		expect_open(work_path, -IFT_E_FEATURE);
		assert_int_equal(ift_trace_open(work_path, IFT_OPEN_VERIFY, &t),
				 -IFT_E_FEATURE);
		/* and type 0 is no type we know either */
		n = insert_section(&b, ats[k], 0, 1, "");
		write_file(work_path, b, n);
		free(b);
		expect_open(work_path, -IFT_E_FEATURE);
	}
}

/*
 * An op's argument names become keys (JSON members, SQL columns): a name
 * that is no identifier is damage, though its checksums hold, and the writer
 * writes none.
 */
static void test_arg_names(void **state)
{
	static const char *bad[] = { "\xfftr", "1st", "a b", "d\"y", "", "dst\n",
		"x123456789012345678901234567890123456789012345678901234567890123" };
	struct ift_writer_opts opts = { 0 };
	struct ift_op op = { "cudaFree", IFT_API_RUNTIME, 1, { "ptr" } };
	const struct section *ops = NULL;
	char part[PATH_MAX + 8];
	struct ift_writer *w;

	(void)state;
	w = ift_writer_create(work_path, &opts);
	assert_non_null(w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		op.args[0] = bad[i];
		assert_int_equal(ift_writer_op(w, &op), -EINVAL);
	}
	op.args[0] = "x12345678901234567890123456789012345678901234567890123456789012";
	assert_int_equal(ift_writer_op(w, &op), 1);
	ift_writer_free(w);	/* unfinished: leaves PATH.part */
	snprintf(part, sizeof(part), "%s.part", work_path);
	assert_int_equal(unlink(part), 0);

	/* "dst" in the original's ops section, each bad byte with CRCs redone */
	for (size_t i = 0; i < O.nsecs && !ops; i++)
		if (O.secs[i].type == SEC_OPS)
			ops = &O.secs[i];
	assert_non_null(ops);
	for (const char *c = "\xff \"/.-\x80\x01"; *c; c++) {
		uint8_t *b = malloc(O.size), *h = NULL, *p;
		size_t plen = (size_t)(ops->end - ops->off - SHDR);
		struct ift_trace *t;

		assert_non_null(b);
		memcpy(b, O.bytes, O.size);
		h = b + ops->off;
		p = memmem(h + SHDR, plen, "\003dst", 4);
		assert_non_null(p);
		p[2] = (uint8_t)*c;
		put_le32(h + 16, (uint32_t)crc32(0, h + SHDR, (uInt)plen));
		put_le32(h + 20, (uint32_t)crc32(0, h, 20));
		write_file(work_path, b, O.size);
		free(b);
		assert_int_equal(ift_trace_open(work_path, IFT_OPEN_VERIFY, &t), 0);
		assert_true(ift_trace_recovery(t)->damaged);
		assert_int_equal(ift_trace_recovery(t)->good_bytes, ops->off);
		assert_int_equal(ift_trace_recovery(t)->reason, -IFT_E_CORRUPT);
		assert_null(ift_trace_op(t, 1));
		ift_trace_close(t);
	}
}

static int setup(void **state)
{
	size_t n;

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(orig_path, sizeof(orig_path), "%s/orig.trace", tmpdir);
	snprintf(work_path, sizeof(work_path), "%s/work.trace", tmpdir);
	write_original();
	read_file(orig_path, &O.bytes, &O.size);
	map_sections();
	if (ift_trace_open(orig_path, 0, &O.t) < 0)
		return -1;
	n = ift_trace_chunk_count(O.t, IFT_T_TASKS);
	if (!n)
		return -1;
	{
		const struct ift_chunk_info *ci =
			ift_trace_chunk_info(O.t, IFT_T_TASKS, n - 1);

		O.last_task_chunk_end = ci->offset + SHDR + ci->size;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ift_trace_close(O.t);
	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		free(O.rows[tb].v);
	free(O.bytes);
	free(O.secs);
	unlink(orig_path);
	unlink(work_path);
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_original),
		cmocka_unit_test(test_truncate_at_boundaries),
		cmocka_unit_test(test_truncate_at_random),
		cmocka_unit_test(test_follow_growing),
		cmocka_unit_test(test_flip_bytes),
		cmocka_unit_test(test_damaged_chunk_through_index),
		cmocka_unit_test(test_not_traces),
		cmocka_unit_test(test_header_versions),
		cmocka_unit_test(test_header_size),
		cmocka_unit_test(test_unknown_sections),
		cmocka_unit_test(test_arg_names),
	};

	return cmocka_run_group_tests_name("damage", tests, setup, teardown);
}
