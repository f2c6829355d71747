// SPDX-License-Identifier: MIT
/*
 * Round trips through the trace file: rows written with ift_writer_* must
 * come back from ift_trace_chunk_load and from a cursor exactly as written,
 * with everything else the file carries (metadata, strings, ops, libraries,
 * loss counters, the task table), whichever way the file is opened, finished
 * or left unfinished.
 *
 * The rows come from rowgen.h's seeded generator and are regenerated for
 * checking rather than kept, so the multi-million-row case costs no memory
 * and every case checks every row.  The writer on hand-made rows (its limits,
 * the task table of a known process tree) is test-writer.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-trace.h"
#include "rowgen.h"

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* ---- the texts of the generator's strings and ops --------------------- */

/* The text of string ID: short, long, with spaces, quotes and UTF-8. */
static void str_of(uint64_t id, char *s, size_t size)
{
	if (id % 11 == 0)
		snprintf(s, size, "long-%" PRIu64 "-%0300d", id, 7);
	else if (id % 7 == 0)
		snprintf(s, size, "caf\xc3\xa9 \"q\" \xe2\x9c\x93 %" PRIu64, id);
	else
		snprintf(s, size, "s%" PRIu64, id);
}

struct op_text {
	char name[32];
	char args[IFT_CALL_MAX_ARGS][48];
	struct ift_op op;
};

static void op_of(uint64_t id, struct op_text *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "cudaOp%" PRIu64, id);
	o->op.name = o->name;
	o->op.api = id % 2 ? IFT_API_RUNTIME : IFT_API_DRIVER;
	o->op.nargs = (unsigned)(id % (IFT_CALL_MAX_ARGS + 1));
	for (unsigned a = 0; a < o->op.nargs; a++) {
		snprintf(o->args[a], sizeof(o->args[a]), "arg%u_of_%" PRIu64, a, id);
		o->op.args[a] = o->args[a];
	}
}

/* ---- writing ---------------------------------------------------------- */

static const uint8_t bid_a[20] = { 0xde, 0xad, 0, 0xef, 0, 0, 0, 1 };
static const struct ift_library lib_a = {
	.path = "/usr/local/cuda/lib64/libcudart.so.13", .build_id = bid_a,
	.build_id_len = sizeof(bid_a), .dev = 2049, .ino = 123456,
	.functions = 42, .kind = "cudart",
};
static const struct ift_library lib_b = {
	.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.1", .build_id = NULL,
	.build_id_len = 0, .dev = UINT64_MAX, .ino = 0,
	.functions = UINT64_MAX, .kind = "cuda",
};

static const struct ift_loss loss_first[] = {
	{ 0, 1, 2, 3, 4 }, { 1, 5, 6, 7, 8 },
};
static const struct ift_loss loss_last[] = {
	{ 0, 10, 20, 30, 40 }, { 3, 1ULL << 40, 0, 1ULL << 41, UINT64_MAX },
};

static void intern_check(struct ift_writer *w, uint64_t id)
{
	char s[400];

	str_of(id, s, sizeof(s));
	assert_int_equal(ift_writer_string(w, s), (int64_t)id);
}

static void op_check(struct ift_writer *w, uint64_t id)
{
	struct op_text o;

	op_of(id, &o);
	assert_int_equal(ift_writer_op(w, &o.op), (int)id);
}

static void write_stream(const char *path, const struct wcfg *c)
{
	struct ift_writer_opts opts = { c->chunk_rows, c->level };
	struct ift_writer *w = ift_writer_create(path, &opts);
	uint64_t rows[IFT_T_NR] = { 0 };
	struct gen g;
	struct row r;

	assert_non_null(w);
	gen_init(&g, c->seed, c->n, c->mask);
	g.tasks_only_sane = c->sane_tasks;
	assert_int_equal(ift_writer_meta(w, "tool.version", "test-roundtrip"), 0);
	assert_int_equal(ift_writer_meta(w, "cmdline", "first"), 0);
	assert_int_equal(ift_writer_meta(w, "empty", NULL), 0);
	assert_int_equal(ift_writer_metaf(w, "utf8", "%s", "caf\xc3\xa9"), 0);
	for (uint64_t id = 1; id <= INIT_STRINGS; id++)
		intern_check(w, id);
	for (uint64_t id = 1; id <= INIT_OPS; id++)
		op_check(w, id);
	assert_int_equal(ift_writer_library(w, &lib_a), 0);

	for (uint64_t i = 0; i < c->n; i++) {
		gen_next(&g, &r);
		if (g.new_str)
			intern_check(w, g.new_str);
		if (g.new_op)
			op_check(w, g.new_op);
		if (i == c->n / 3) {
			/* in a later META section: the last value wins */
			assert_int_equal(ift_writer_meta(w, "cmdline", "second"), 0);
			assert_int_equal(ift_writer_library(w, &lib_b), 0);
			for (size_t k = 0; k < 2; k++)
				assert_int_equal(ift_writer_loss(w, &loss_first[k]), 0);
		}
		if (i == c->n / 2)
			assert_int_equal(ift_writer_flush(w), 0);
		assert_int_equal(ift_writer_append(w, r.table, r.v), 0);
		rows[r.table]++;
	}
	assert_int_equal(ift_writer_metaf(w, "record.stop_ns", "%" PRIu64, g.ts), 0);
	for (size_t k = 0; k < 2; k++)
		assert_int_equal(ift_writer_loss(w, &loss_last[k]), 0);
	for (unsigned t = 1; t < IFT_T_NR; t++)
		assert_int_equal(ift_writer_rows(w, t), rows[t]);
	if (c->finish) {
		assert_int_equal(ift_writer_finish(w), 0);
		assert_int_equal(ift_writer_bytes(w), file_size(path));
	} else {
		assert_int_equal(ift_writer_flush(w), 0);
	}
	ift_writer_free(w);
}

/* ---- a reference fold of the `tasks' rows, per the spec --------------- */

struct mtask {
	uint32_t tid, pid, ppid, flags;
	uint64_t start_ts, exit_ts;
	unsigned ncomms;
	uint64_t *cts, *cstr;
};

struct model {
	struct mtask *v;
	size_t n, cap;
};

static struct mtask *model_latest(struct model *m, uint32_t tid)
{
	for (size_t i = m->n; i-- > 0;)
		if (m->v[i].tid == tid)
			return &m->v[i];
	return NULL;
}

static struct mtask *model_add(struct model *m, uint32_t tid, uint32_t pid)
{
	struct mtask *k;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		assert_non_null(m->v);
	}
	k = &m->v[m->n++];
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	k->pid = pid;
	return k;
}

static void model_comm(struct mtask *k, uint64_t ts, uint64_t str)
{
	if (!str || (k->ncomms && k->cstr[k->ncomms - 1] == str))
		return;
	k->cts = realloc(k->cts, (k->ncomms + 1) * sizeof(*k->cts));
	k->cstr = realloc(k->cstr, (k->ncomms + 1) * sizeof(*k->cstr));
	assert_true(k->cts && k->cstr);
	k->cts[k->ncomms] = ts;
	k->cstr[k->ncomms++] = str;
}

/*
 * docs/trace-format.md, `tasks': fork/clone create child_tid (ppid: the
 * forking process, or the cloning thread's own ppid), unless child_tid's
 * latest task was begun by a comm row, neither started nor exited, with
 * child_pid and that ppid: that one is the child, seen before its fork row
 * (begun at its first name, or the fork if earlier); exec/comm/exit apply
 * to the row's tid, creating it if unknown (ppid from the row).  An exited task is gone, so a
 * later row about its tid is a new task; a kind we do not know is skipped.
 */
static void model_fold(struct model *m, const uint64_t *v)
{
	uint32_t tid = (uint32_t)v[IFT_C_TID];
	struct mtask *k, *parent;
	uint32_t ppid;

	switch (v[IFT_TK_KIND]) {
	case IFT_TASK_FORK:
	case IFT_TASK_CLONE:
		parent = model_latest(m, tid);
		ppid = v[IFT_TK_KIND] == IFT_TASK_FORK ? (uint32_t)v[IFT_C_PID] :
		       parent ? parent->ppid : 0;
		k = model_latest(m, (uint32_t)v[IFT_TK_CHILD_TID]);
		if (k && !k->flags && k->pid == (uint32_t)v[IFT_TK_CHILD_PID] && ppid &&
		    k->ppid == ppid) {
			k->start_ts = k->ncomms && k->cts[0] < v[IFT_C_TS] ? k->cts[0] :
									  v[IFT_C_TS];
		} else {
			k = model_add(m, (uint32_t)v[IFT_TK_CHILD_TID],
				      (uint32_t)v[IFT_TK_CHILD_PID]);
			k->start_ts = v[IFT_C_TS];
		}
		k->ppid = ppid;
		k->flags = IFT_TASK_F_STARTED;
		if (v[IFT_TK_KIND] == IFT_TASK_CLONE)
			k->flags |= IFT_TASK_F_THREAD;
		model_comm(k, v[IFT_C_TS], v[IFT_TK_COMM]);
		break;
	case IFT_TASK_EXEC:
	case IFT_TASK_COMM:
	case IFT_TASK_EXIT:
		k = model_latest(m, tid);
		if (!k || (k->flags & IFT_TASK_F_EXITED)) {
			k = model_add(m, tid, (uint32_t)v[IFT_C_PID]);
			k->ppid = (uint32_t)v[IFT_TK_PPID];
		}
		if (v[IFT_TK_KIND] == IFT_TASK_EXIT) {
			k->flags |= IFT_TASK_F_EXITED;
			k->exit_ts = v[IFT_C_TS];
		} else {
			model_comm(k, v[IFT_C_TS], v[IFT_TK_COMM]);
		}
		break;
	}
}

static void model_release(struct model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].cts);
		free(m->v[i].cstr);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static void model_of_stream(struct model *m, const struct wcfg *c)
{
	struct gen g;
	struct row r;

	memset(m, 0, sizeof(*m));
	gen_init(&g, c->seed, c->n, c->mask);
	g.tasks_only_sane = c->sane_tasks;
	for (uint64_t i = 0; i < c->n; i++) {
		gen_next(&g, &r);
		if (r.table == IFT_T_TASKS)
			model_fold(m, r.v);
	}
}

/*
 * Records of one tid can tie on start time (two never seen starting), so
 * both sides are compared in one total order of all their fields.
 */
static int cmp_mtask(const void *a, const void *b)
{
	const struct mtask *x = a, *y = b;

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(tid);
	CMP(start_ts);
	CMP(pid);
	CMP(ppid);
	CMP(flags);
	CMP(exit_ts);
	CMP(ncomms);
	for (unsigned i = 0; i < x->ncomms; i++) {
		CMP(cts[i]);
		CMP(cstr[i]);
	}
#undef CMP
	return 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The trace's task table, as a model (comms turned back into string ids). */
static void model_of_trace(struct model *m, const struct ift_trace *t)
{
	const char **byname;
	size_t nstr = 0;

	/* strings are unique, so a comm's text names its id */
	while (ift_trace_string(t, nstr + 1))
		nstr++;
	byname = malloc((nstr + 1) * sizeof(*byname));
	assert_non_null(byname);
	for (size_t i = 0; i < nstr; i++)
		byname[i] = ift_trace_string(t, i + 1);
	qsort(byname, nstr, sizeof(*byname), cmp_strp);

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < ift_trace_task_count(t); i++) {
		const struct ift_task *tk = ift_trace_task(t, i);
		struct mtask *k;

		assert_non_null(tk);
		if (i) {
			const struct ift_task *prev = ift_trace_task(t, i - 1);

			/* sorted by tid, then start time */
			assert_true(prev->tid < tk->tid ||
				    (prev->tid == tk->tid &&
				     prev->start_ts <= tk->start_ts));
		}
		k = model_add(m, tk->tid, tk->pid);
		k->ppid = tk->ppid;
		k->flags = tk->flags;
		k->start_ts = tk->start_ts;
		k->exit_ts = tk->exit_ts;
		for (unsigned c = 0; c < tk->ncomms; c++) {
			const char **hit;
			uint64_t id = 0;

			assert_non_null(tk->comms[c].comm);
			hit = bsearch(&tk->comms[c].comm, byname, nstr,
				      sizeof(*byname), cmp_strp);
			assert_non_null(hit);
			/* the trace hands out its own copies: find the id */
			for (uint64_t cand = 1; cand <= nstr && !id; cand++)
				if (ift_trace_string(t, cand) == *hit)
					id = cand;
			assert_true(id != 0);
			model_comm(k, tk->comms[c].ts, id);
		}
		assert_int_equal(k->ncomms, tk->ncomms);
	}
	free(byname);
}

static void model_assert_equal(struct model *a, struct model *b)
{
	qsort(a->v, a->n, sizeof(*a->v), cmp_mtask);
	qsort(b->v, b->n, sizeof(*b->v), cmp_mtask);
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		if (cmp_mtask(&a->v[i], &b->v[i]))
			fail_msg("task %zu differs: tid %u/%u pid %u/%u ppid %u/%u "
				 "flags %u/%u ncomms %u/%u", i, a->v[i].tid,
				 b->v[i].tid, a->v[i].pid, b->v[i].pid,
				 a->v[i].ppid, b->v[i].ppid, a->v[i].flags,
				 b->v[i].flags, a->v[i].ncomms, b->v[i].ncomms);
}

/* ---- checking --------------------------------------------------------- */

/* Walks the chunks of one table in order, checking each as it loads. */
struct walk {
	struct ift_trace *t;
	unsigned table;
	size_t chunk;
	uint32_t row;
	bool loaded;
	struct ift_chunk c;
	uint64_t buf[MAXCOLS];
};

static const uint64_t *walk_next(struct walk *w)
{
	const struct ift_chunk_info *ci;

	while (!w->loaded || w->row == w->c.nrows) {
		if (w->loaded)
			w->chunk++;
		if (w->chunk >= ift_trace_chunk_count(w->t, w->table))
			return NULL;
		ci = ift_trace_chunk_info(w->t, w->table, w->chunk);
		assert_non_null(ci);
		assert_int_equal(ift_trace_chunk_load(w->t, w->table, w->chunk,
						      &w->c), 0);
		assert_int_equal(w->c.table, w->table);
		assert_int_equal(w->c.nrows, ci->nrows);
		assert_int_equal(w->c.ncols, ift_table_def(w->table)->ncols);
		assert_true(w->c.nrows >= 1);
		/* the chunk's rows span exactly what its info says */
		assert_true(w->c.col[IFT_C_TS][0] == ci->ts_min);
		assert_true(w->c.col[IFT_C_TS][w->c.nrows - 1] == ci->ts_max);
		w->loaded = true;
		w->row = 0;
	}
	for (unsigned c = 0; c < w->c.ncols; c++)
		w->buf[c] = w->c.col[c][w->row];
	w->row++;
	return w->buf;
}

/* Every row, per table, through ift_trace_chunk_load. */
static void check_rows(struct ift_trace *t, const struct wcfg *c)
{
	struct walk w[IFT_T_NR];
	uint64_t nth[IFT_T_NR] = { 0 };
	struct gen g;
	struct row r;

	memset(w, 0, sizeof(w));
	for (unsigned k = 1; k < IFT_T_NR; k++) {
		w[k].t = t;
		w[k].table = k;
	}
	gen_init(&g, c->seed, c->n, c->mask);
	g.tasks_only_sane = c->sane_tasks;
	for (uint64_t i = 0; i < c->n; i++) {
		const uint64_t *got;

		gen_next(&g, &r);
		got = walk_next(&w[r.table]);
		if (!got)
			fail_msg("table %u ends after %" PRIu64 " rows", r.table,
				 nth[r.table]);
		row_assert_equal(r.table, got, r.v, nth[r.table]++, "chunk");
	}
	for (unsigned k = 1; k < IFT_T_NR; k++) {
		assert_null(walk_next(&w[k]));
		assert_int_equal(ift_trace_rows(t, k), nth[k]);
		ift_chunk_release(&w[k].c);
	}
}

static void check_dicts(struct ift_trace *t, const struct wcfg *c)
{
	static const char *const keys[] = {
		"tool.version", "cmdline", "empty", "utf8", "record.stop_ns",
	};
	const char *k, *v;
	struct op_text o;
	char s[400];
	struct gen g;

	/* what the generator declared: one more at every multiple of EVERY */
	gen_init(&g, c->seed, c->n, c->mask);
	if (c->n) {
		g.nstr += (c->n - 1) / STRING_EVERY;
		g.nops += (c->n - 1) / OP_EVERY;
	}

	assert_int_equal(ift_trace_version(t), IFT_FORMAT_VERSION);
	assert_int_equal(ift_trace_meta_count(t), 5);
	for (size_t i = 0; i < 5; i++) {
		ift_trace_meta_at(t, i, &k, &v);
		assert_string_equal(k, keys[i]);	/* first-seen order */
		assert_string_equal(v, ift_trace_meta(t, keys[i]));
	}
	assert_string_equal(ift_trace_meta(t, "tool.version"), "test-roundtrip");
	assert_string_equal(ift_trace_meta(t, "cmdline"), "second");
	assert_string_equal(ift_trace_meta(t, "empty"), "");
	assert_string_equal(ift_trace_meta(t, "utf8"), "caf\xc3\xa9");
	snprintf(s, sizeof(s), "%" PRIu64, c->n ? UINT64_MAX : 0);
	assert_string_equal(ift_trace_meta(t, "record.stop_ns"), s);
	assert_null(ift_trace_meta(t, "no.such.key"));

	assert_string_equal(ift_trace_string(t, 0), "");
	for (uint64_t id = 1; id <= g.nstr; id++) {
		const char *got = ift_trace_string(t, id);

		str_of(id, s, sizeof(s));
		assert_non_null(got);
		assert_string_equal(got, s);
	}
	assert_null(ift_trace_string(t, g.nstr + 1));
	assert_null(ift_trace_string(t, UINT64_MAX));

	assert_int_equal(ift_trace_op_count(t), g.nops);
	assert_null(ift_trace_op(t, 0));
	assert_null(ift_trace_op(t, g.nops + 1));
	for (uint64_t id = 1; id <= g.nops; id++) {
		const struct ift_op *op = ift_trace_op(t, id);

		op_of(id, &o);
		assert_non_null(op);
		assert_string_equal(op->name, o.op.name);
		assert_int_equal(op->api, o.op.api);
		assert_int_equal(op->nargs, o.op.nargs);
		for (unsigned a = 0; a < op->nargs; a++)
			assert_string_equal(op->args[a], o.op.args[a]);
	}

	assert_int_equal(ift_trace_library_count(t), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct ift_library *want = i ? &lib_b : &lib_a;
		const struct ift_library *got = ift_trace_library(t, i);

		assert_non_null(got);
		assert_string_equal(got->path, want->path);
		assert_string_equal(got->kind, want->kind);
		assert_int_equal(got->build_id_len, want->build_id_len);
		if (want->build_id_len)
			assert_memory_equal(got->build_id, want->build_id,
					    want->build_id_len);
		assert_true(got->dev == want->dev && got->ino == want->ino);
		assert_true(got->functions == want->functions);
	}
	assert_null(ift_trace_library(t, 2));

	/* loss counters are written when the writer finishes */
	if (!c->finish) {
		assert_int_equal(ift_trace_loss_count(t), 0);
		assert_int_equal(ift_trace_lost_events(t), 0);
		return;
	}
	assert_int_equal(ift_trace_loss_count(t), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct ift_loss *l = ift_trace_loss(t, i), *want;

		assert_non_null(l);
		want = l->cpu == 0 ? &loss_last[0] : l->cpu == 1 ? &loss_first[1] :
		       &loss_last[1];
		assert_int_equal(l->cpu, want->cpu);
		assert_true(l->overrun == want->overrun);
		assert_true(l->commit_overrun == want->commit_overrun);
		assert_true(l->dropped == want->dropped);
		assert_true(l->read == want->read);
	}
	assert_null(ift_trace_loss(t, 3));
	assert_int_equal(ift_trace_lost_events(t),
			 10 + 30 + 5 + 7 + (1ULL << 40) + (1ULL << 41));
}

static void check_tasks(struct ift_trace *t, const struct wcfg *c)
{
	struct model want, got;

	model_of_stream(&want, c);
	model_of_trace(&got, t);
	model_assert_equal(&want, &got);
	model_release(&want);
	model_release(&got);
	assert_int_equal(ift_trace_tasks_rebuilt(t), !c->finish);
}

/* ift_trace_chunk_seek against the chunk list, and the cursor from TS. */
static void check_seek(struct ift_trace *t, const struct wcfg *c, uint64_t ts)
{
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		size_t i = ift_trace_chunk_seek(t, tb, ts);
		size_t n = ift_trace_chunk_count(t, tb);

		assert_true(i <= n);
		/* every chunk before it ends before TS: nothing is skipped */
		if (i > 0)
			assert_true(ift_trace_chunk_info(t, tb, i - 1)->ts_max < ts);
		/* and it is the first: nothing before TS is read needlessly */
		if (i < n)
			assert_true(ift_trace_chunk_info(t, tb, i)->ts_max >= ts);
	}
	check_cursor(t, c, ALL_TABLES, ts);
}

static void check_recovery_finished(struct ift_trace *t, const char *path,
				    bool finished)
{
	const struct ift_recovery *rec = ift_trace_recovery(t);

	assert_int_equal(rec->finished, finished);
	assert_false(rec->damaged);
	assert_int_equal(rec->file_size, file_size(path));
	assert_int_equal(rec->good_bytes, rec->file_size);
	assert_int_equal(rec->reason, 0);
}

/* Two opens of one file agree on everything but how they were opened. */
static void check_same_chunks(struct ift_trace *a, struct ift_trace *b)
{
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		assert_int_equal(ift_trace_chunk_count(a, tb),
				 ift_trace_chunk_count(b, tb));
		assert_int_equal(ift_trace_rows(a, tb), ift_trace_rows(b, tb));
		for (size_t i = 0; i < ift_trace_chunk_count(a, tb); i++) {
			const struct ift_chunk_info *x = ift_trace_chunk_info(a, tb, i);
			const struct ift_chunk_info *y = ift_trace_chunk_info(b, tb, i);

			assert_int_equal(x->table, y->table);
			assert_int_equal(x->nrows, y->nrows);
			assert_true(x->ts_min == y->ts_min && x->ts_max == y->ts_max);
			assert_int_equal(x->offset, y->offset);
			assert_int_equal(x->size, y->size);
		}
	}
	assert_int_equal(ift_trace_ts_min(a), ift_trace_ts_min(b));
	assert_int_equal(ift_trace_ts_max(a), ift_trace_ts_max(b));
}

/*
 * Everything, once per way of opening: through the index (finished files),
 * by scanning the sections, and scanning with every checksum checked.
 */
static void check_file(const char *path, const struct wcfg *c, bool rows_each)
{
	static const unsigned flags[] = { 0, IFT_OPEN_NO_INDEX, IFT_OPEN_VERIFY };
	struct ift_trace *first = NULL;

	for (size_t f = 0; f < 3; f++) {
		struct ift_trace *t;

		assert_int_equal(ift_trace_open(path, flags[f], &t), 0);
		check_recovery_finished(t, path, c->finish);
		check_dicts(t, c);
		check_tasks(t, c);
		if (f == 0 || rows_each) {
			check_rows(t, c);
			check_cursor(t, c, ALL_TABLES, 0);
		}
		if (f == 0) {
			first = t;
			continue;
		}
		check_same_chunks(first, t);
		ift_trace_close(t);
	}
	ift_trace_close(first);
}

static void roundtrip(const char *name, const struct wcfg *c, bool rows_each)
{
	char path[PATH_MAX];

	tpath(path, sizeof(path), name);
	write_stream(path, c);
	assert_true(file_exists(path));
	assert_false(file_exists(strcat(path, IFT_PART_SUFFIX)));
	tpath(path, sizeof(path), name);
	check_file(path, c, rows_each);
	assert_int_equal(unlink(path), 0);
}

/* ---- the tests -------------------------------------------------------- */

/* Tiny chunks: thousands of them, interleaved with STRINGS and OPS sections. */
static void test_many_small_chunks(void **state)
{
	struct wcfg c = { .seed = 11, .n = 20000, .chunk_rows = 7, .level = -1,
			  .finish = true };

	(void)state;
	roundtrip("small.trace", &c, true);
}

static void test_chunks_of_100_zstd(void **state)
{
	struct wcfg c = { .seed = 12, .n = 60000, .chunk_rows = 100, .level = 0,
			  .finish = true };

	(void)state;
	roundtrip("c100.trace", &c, true);
}

/* The same rows with and without zstd: same content, smaller with it. */
static void test_zstd_off_and_on(void **state)
{
	struct wcfg c = { .seed = 13, .n = 50000, .chunk_rows = 2000, .level = -1,
			  .finish = true };
	char a[PATH_MAX], b[PATH_MAX];

	(void)state;
	tpath(a, sizeof(a), "plain.trace");
	tpath(b, sizeof(b), "zstd.trace");
	write_stream(a, &c);
	check_file(a, &c, false);
	c.level = 9;
	write_stream(b, &c);
	check_file(b, &c, false);
	assert_true(file_size(b) < file_size(a));
	assert_int_equal(unlink(a), 0);
	assert_int_equal(unlink(b), 0);
}

/* Millions of rows at the default chunk size. */
static void test_millions(void **state)
{
	const char *env = getenv("IFT_TEST_ROWS");
	struct wcfg c = { .seed = 14, .n = SANITIZED ? 1000000 : 3000000,
			  .finish = true, .sane_tasks = true };
	char path[PATH_MAX];
	struct ift_trace *t, *u;

	(void)state;
	if (env && *env)
		c.n = strtoull(env, NULL, 0);
	tpath(path, sizeof(path), "big.trace");
	write_stream(path, &c);
	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	check_recovery_finished(t, path, true);
	check_dicts(t, &c);
	check_tasks(t, &c);
	check_rows(t, &c);
	assert_int_equal(check_cursor(t, &c, ALL_TABLES, 0), c.n);
	/* the scan finds what the index lists */
	assert_int_equal(ift_trace_open(path, IFT_OPEN_VERIFY, &u), 0);
	check_same_chunks(t, u);
	ift_trace_close(u);
	ift_trace_close(t);
	assert_int_equal(unlink(path), 0);
}

/* A cursor and chunk_seek from many start times skip exactly the rows before. */
static void test_seek_and_cursor_from(void **state)
{
	struct wcfg c = { .seed = 15, .n = 12000, .chunk_rows = 13, .level = -1,
			  .finish = true };
	char path[PATH_MAX];
	struct ift_trace *t;
	struct gen g;
	struct row r;
	uint64_t froms[40], nfrom = 0, total;

	(void)state;
	tpath(path, sizeof(path), "seek.trace");
	write_stream(path, &c);
	assert_int_equal(ift_trace_open(path, 0, &t), 0);

	/* the edges, and times taken from rows: runs of ties and their neighbours */
	froms[nfrom++] = 0;
	froms[nfrom++] = 1;
	froms[nfrom++] = UINT64_MAX;
	froms[nfrom++] = UINT64_MAX - 1;
	gen_init(&g, c.seed, c.n, 0);
	for (uint64_t i = 0; i < c.n; i++) {
		gen_next(&g, &r);
		if (i % 997 == 500 && nfrom + 3 <= 40) {
			froms[nfrom++] = r.v[IFT_C_TS];
			froms[nfrom++] = r.v[IFT_C_TS] + 1;
			froms[nfrom++] = r.v[IFT_C_TS] - 1;
		}
	}
	/* the first and last times of chunks: where seek changes its answer */
	for (unsigned tb = 1; tb < IFT_T_NR && nfrom + 2 <= 40; tb += 2) {
		const struct ift_chunk_info *ci = ift_trace_chunk_info(t, tb, 5);

		assert_non_null(ci);
		froms[nfrom++] = ci->ts_min;
		froms[nfrom++] = ci->ts_max;
	}
	for (uint64_t k = 0; k < nfrom; k++)
		check_seek(t, &c, froms[k]);

	/* the counts add up: rows before FROM plus rows from it are all rows */
	total = check_cursor(t, &c, ALL_TABLES, 0);
	assert_int_equal(total, c.n);
	assert_int_equal(check_cursor(t, &c, ALL_TABLES, UINT64_MAX), 4);
	/* a mask of some tables only */
	assert_int_equal(check_cursor(t, &c, 1U << IFT_T_TASKS, 0),
			 ift_trace_rows(t, IFT_T_TASKS));
	check_cursor(t, &c, (1U << IFT_T_CALLS) | (1U << IFT_T_SAMPLES), froms[5]);
	assert_int_equal(check_cursor(t, &c, 0, 0), 0);
	/* on a table that does not exist */
	assert_int_equal(ift_trace_chunk_seek(t, 0, 5), 0);
	assert_int_equal(ift_trace_chunk_seek(t, IFT_T_NR, 5), 0);
	ift_trace_close(t);
	assert_int_equal(unlink(path), 0);
}

/* One row a chunk, and one chunk spanning the whole clock. */
static void test_extreme_times(void **state)
{
	struct wcfg c = { .seed = 17, .n = 700, .chunk_rows = 1, .level = 0,
			  .finish = true };
	struct ift_writer_opts opts = { .chunk_rows = 100 };
	const struct ift_chunk_info *ci;
	uint64_t row[MAXCOLS] = { 0 };
	struct ift_writer *w;
	struct ift_trace *t;
	char path[PATH_MAX];

	(void)state;
	roundtrip("one-row-chunks.trace", &c, false);

	tpath(path, sizeof(path), "extreme.trace");
	w = ift_writer_create(path, &opts);
	assert_non_null(w);
	row[IFT_C_TS] = 0;
	assert_int_equal(ift_writer_append(w, IFT_T_SAMPLES, row), 0);
	row[IFT_C_TS] = UINT64_MAX;
	row[IFT_SM_VALUE] = (uint64_t)INT64_MIN;
	assert_int_equal(ift_writer_append(w, IFT_T_SAMPLES, row), 0);
	/* a table whose rows all sit at the last nanosecond */
	for (int i = 0; i < 3; i++)
		assert_int_equal(ift_writer_append(w, IFT_T_WAKEUPS, row), 0);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);

	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	ci = ift_trace_chunk_info(t, IFT_T_SAMPLES, 0);
	assert_non_null(ci);
	assert_true(ci->ts_min == 0 && ci->ts_max == UINT64_MAX);
	ci = ift_trace_chunk_info(t, IFT_T_WAKEUPS, 0);
	assert_non_null(ci);
	assert_true(ci->ts_min == UINT64_MAX && ci->ts_max == UINT64_MAX);
	assert_true(ift_trace_ts_min(t) == 0);
	assert_true(ift_trace_ts_max(t) == UINT64_MAX);
	assert_int_equal(ift_trace_chunk_seek(t, IFT_T_SAMPLES, UINT64_MAX), 0);
	assert_int_equal(ift_trace_chunk_seek(t, IFT_T_WAKEUPS, UINT64_MAX), 0);
	{
		struct ift_cursor *cur = ift_cursor_new(t, ALL_TABLES, UINT64_MAX);
		struct ift_event ev;
		unsigned want[] = { IFT_T_WAKEUPS, IFT_T_WAKEUPS, IFT_T_WAKEUPS,
				    IFT_T_SAMPLES };

		assert_non_null(cur);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(ift_cursor_next(cur, &ev), 1);
			assert_int_equal(ev.table, want[i]);
			assert_true(ev.row[IFT_C_TS] == UINT64_MAX);
		}
		assert_int_equal(ift_cursor_next(cur, &ev), 0);
		ift_cursor_free(cur);
	}
	ift_trace_close(t);

	/* only rows at 2^64 - 1: that is the earliest time too */
	w = ift_writer_create(path, &opts);
	assert_non_null(w);
	assert_int_equal(ift_writer_append(w, IFT_T_WAKEUPS, row), 0);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);
	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	assert_true(ift_trace_ts_min(t) == UINT64_MAX);
	assert_true(ift_trace_ts_max(t) == UINT64_MAX);
	ift_trace_close(t);
	assert_int_equal(unlink(path), 0);
}

/*
 * A writer that flushes and is freed without finishing (a killed recorder)
 * leaves PATH.part: every flushed row is in it, the rows appended after the
 * flush are not, and the task table rebuilt from the `tasks' rows equals the
 * TASKS section the finished file got.
 */
static void test_unfinished(void **state)
{
	struct wcfg c = { .seed = 16, .n = 30000, .chunk_rows = 500,
			  .level = 0 };
	char path[PATH_MAX], part[PATH_MAX + 8], fin[PATH_MAX];
	struct ift_trace *t, *tf;
	struct ift_writer *w;
	struct model a, b;

	(void)state;
	tpath(path, sizeof(path), "unfinished.trace");
	snprintf(part, sizeof(part), "%s%s", path, IFT_PART_SUFFIX);
	tpath(fin, sizeof(fin), "finished.trace");

	write_stream(path, &c);
	assert_true(file_exists(part));
	assert_false(file_exists(path));
	check_file(part, &c, true);

	/* the same stream, finished, for its TASKS section */
	c.finish = true;
	write_stream(fin, &c);
	assert_int_equal(ift_trace_open(part, 0, &t), 0);
	assert_int_equal(ift_trace_open(fin, 0, &tf), 0);
	assert_true(ift_trace_tasks_rebuilt(t));
	assert_false(ift_trace_tasks_rebuilt(tf));
	assert_true(ift_trace_task_count(t) > 100);
	model_of_trace(&a, t);
	model_of_trace(&b, tf);
	model_assert_equal(&a, &b);
	model_release(&a);
	model_release(&b);
	ift_trace_close(t);
	ift_trace_close(tf);
	assert_int_equal(unlink(part), 0);
	assert_int_equal(unlink(fin), 0);

	/* rows after the last flush are lost, and only they */
	w = ift_writer_create(path, &(struct ift_writer_opts){ .chunk_rows = 100 });
	assert_non_null(w);
	for (uint64_t i = 0; i < 1050; i++) {
		uint64_t r[IFT_PG_NR] = { i, 1, 2, 3, i % 11, 0x100cca, 1 };

		assert_int_equal(ift_writer_append(w, IFT_T_PAGE_ALLOCS, r), 0);
		if (i == 1019)
			assert_int_equal(ift_writer_flush(w), 0);
	}
	ift_writer_free(w);
	assert_false(file_exists(path));
	assert_int_equal(ift_trace_open(part, 0, &t), 0);
	assert_int_equal(ift_trace_rows(t, IFT_T_PAGE_ALLOCS), 1020);
	assert_int_equal(ift_trace_chunk_count(t, IFT_T_PAGE_ALLOCS), 11);
	assert_int_equal(ift_trace_ts_max(t), 1019);
	check_recovery_finished(t, part, false);
	ift_trace_close(t);
	assert_int_equal(unlink(part), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_small_chunks),
		cmocka_unit_test(test_chunks_of_100_zstd),
		cmocka_unit_test(test_zstd_off_and_on),
		cmocka_unit_test(test_millions),
		cmocka_unit_test(test_seek_and_cursor_from),
		cmocka_unit_test(test_extreme_times),
		cmocka_unit_test(test_unfinished),
	};

	return cmocka_run_group_tests_name("roundtrip", tests, rg_setup, rg_teardown);
}
