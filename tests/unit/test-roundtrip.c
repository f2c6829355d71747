// SPDX-License-Identifier: MIT
/*
 * Round trips through the trace file: rows written with ift_writer_* must
 * come back from ift_trace_chunk_load and from a cursor exactly as written,
 * with everything else the file carries (metadata, strings, ops, libraries,
 * loss counters, the task table).
 *
 * The rows come from a seeded generator and are regenerated for checking
 * rather than kept, so the multi-million-row case costs no memory and every
 * case checks every row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-trace.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#if SANITIZED
/* from <sanitizer/allocator_interface.h>, which not every compiler ships */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#define MAXCOLS		16
#define ALL_TABLES	(((1U << IFT_T_NR) - 1) & ~1U)

static char tmpdir[] = "/tmp/ift-roundtrip.XXXXXX";

static void tpath(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

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

/* ---- the row generator ------------------------------------------------ */

/*
 * splitmix64 drives everything, so one seed gives one stream.  Strings and
 * ops are declared at fixed row numbers, independent of the random stream,
 * so a checker knows which ids exist without a writer.
 */
#define INIT_STRINGS	40
#define INIT_OPS	3
#define STRING_EVERY	7919
#define OP_EVERY	50021
#define NPOOL		40

struct gen {
	uint64_t rng;
	uint64_t i, n;		/* next row, rows in all */
	uint64_t ts;
	uint64_t nstr, nops;	/* ids 1..nstr / 1..nops are declared */
	uint64_t new_str;	/* set by gen_next: intern this id first */
	uint64_t new_op;
	unsigned mask;		/* tables generated */
	bool tasks_only_sane;	/* task kinds 1..5 and 32-bit ids only */
};

struct row {
	unsigned table;
	uint64_t v[MAXCOLS];
};

static uint64_t g_rnd(struct gen *g)
{
	uint64_t z = (g->rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t g_below(struct gen *g, uint64_t n)
{
	return n ? g_rnd(g) % n : 0;
}

static void gen_init(struct gen *g, uint64_t seed, uint64_t n, unsigned mask)
{
	memset(g, 0, sizeof(*g));
	g->rng = seed;
	g->n = n;
	g->nstr = INIT_STRINGS;
	g->nops = INIT_OPS;
	g->mask = mask ? mask : ALL_TABLES;
}

/* Any u64, with the edges over-represented. */
static uint64_t g_u64(struct gen *g)
{
	switch (g_below(g, 16)) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: return g_rnd(g);
	case 3: return 1ULL << 63;
	case 4: return UINT64_MAX - g_below(g, 3);
	case 5: case 6: case 7: case 8: return g_below(g, 1000);
	default: return 0x7f0000000000ULL + g_below(g, 64) * 4096;
	}
}

/* An i64 as stored: negatives, INT64_MIN/MAX, small return codes. */
static uint64_t g_i64(struct gen *g)
{
	switch (g_below(g, 8)) {
	case 0: return (uint64_t)INT64_MIN;
	case 1: return (uint64_t)INT64_MAX;
	case 2: return (uint64_t)-(int64_t)g_below(g, 100);
	case 3: return (uint64_t)-1;
	case 4: return 0;
	default: return (uint64_t)((int64_t)g_below(g, 1000) - 500);
	}
}

/*
 * A thread id and its tgid.  The tgid is a function of the tid except in a
 * few rows, so chunks come out both ways (FUNC and plain columns).
 */
static void g_task(struct gen *g, uint64_t *pid, uint64_t *tid)
{
	uint64_t k = g_below(g, NPOOL);

	*tid = 1000 + k;
	*pid = 1000 + k / 4 * 4;
	if (g_below(g, 4096) == 0)
		*pid = g->tasks_only_sane ? 1 + g_below(g, 50000) : g_u64(g);
	if (g_below(g, 8192) == 0 && !g->tasks_only_sane)
		*tid = g_below(g, 2) ? 0 : UINT64_MAX;
}

static uint64_t g_str(struct gen *g)
{
	return g_below(g, 8) ? 1 + g_below(g, g->nstr) : 0;
}

static void gen_next(struct gen *g, struct row *r)
{
	uint64_t *v = r->v;
	unsigned t;

	g->new_str = g->new_op = 0;
	if (g->i && g->i % STRING_EVERY == 0)
		g->new_str = ++g->nstr;
	if (g->i && g->i % OP_EVERY == 0)
		g->new_op = ++g->nops;
	do
		t = 1 + (unsigned)g_below(g, IFT_T_NR - 1);
	while (!(g->mask & (1U << t)));

	/* ties (same ts) in about a quarter of the rows; the end at 2^64 - 1 */
	if (g->i == 0)
		g->ts = 0;
	else if (g->i + 4 >= g->n)
		g->ts = UINT64_MAX;
	else if (g_below(g, 4))
		g->ts += g_below(g, 3000);
	g->i++;

	memset(r, 0, sizeof(*r));
	r->table = t;
	v[IFT_C_TS] = g->ts;
	v[IFT_C_CPU] = g_below(g, 32) ? g_below(g, 64) : g_u64(g);
	g_task(g, &v[IFT_C_PID], &v[IFT_C_TID]);
	switch (t) {
	case IFT_T_CALLS:
		v[IFT_CALL_OP] = g_below(g, 64) ? 1 + g_below(g, g->nops) : 0;
		v[IFT_CALL_DUR] = g_below(g, 16) ? g_below(g, 1000000) : g_u64(g);
		v[IFT_CALL_RET] = g_i64(g);
		v[IFT_CALL_FLAGS] = g_below(g, 4);
		v[IFT_CALL_DEPTH] = g_below(g, 3);
		for (unsigned a = 0; a < IFT_CALL_MAX_ARGS; a++)
			v[IFT_CALL_A0 + a] = g_below(g, 3) ? g_u64(g) : 0;
		break;
	case IFT_T_SWITCHES:
		v[IFT_SW_PREV_STATE] = g_below(g, 3) ? 0 : g_u64(g);
		v[IFT_SW_PREV_PRIO] = 100 + g_below(g, 40);
		g_task(g, &v[IFT_SW_NEXT_PID], &v[IFT_SW_NEXT_TID]);
		v[IFT_SW_NEXT_PRIO] = 120;
		break;
	case IFT_T_WAKEUPS:
		v[IFT_WK_KIND] = 1 + g_below(g, 3);
		v[IFT_WK_PRIO] = g_u64(g);
		v[IFT_WK_TARGET_CPU] = g_below(g, 64);
		g_task(g, &v[IFT_WK_WAKER_PID], &v[IFT_WK_WAKER_TID]);
		break;
	case IFT_T_PAGE_ALLOCS:
		v[IFT_PG_ORDER] = g_below(g, 11);
		v[IFT_PG_GFP] = g_u64(g);
		v[IFT_PG_MIGRATETYPE] = g_below(g, 6);
		break;
	case IFT_T_TASKS:
		v[IFT_TK_KIND] = 1 + g_below(g, 5);
		if (!g->tasks_only_sane && g_below(g, 32) == 0)
			v[IFT_TK_KIND] = g_below(g, 2) ? 0 : 99;
		g_task(g, &v[IFT_TK_CHILD_PID], &v[IFT_TK_CHILD_TID]);
		v[IFT_TK_COMM] = g_str(g);
		v[IFT_TK_FILE] = g_str(g);
		/* a parent known for a task not seen starting, or not */
		if (v[IFT_TK_KIND] != IFT_TASK_FORK && v[IFT_TK_KIND] != IFT_TASK_CLONE)
			v[IFT_TK_PPID] = g_below(g, 2) ? g_below(g, 1000) : 0;
		break;
	case IFT_T_SAMPLES:
		v[IFT_C_PID] = v[IFT_C_TID] = 0;
		v[IFT_SM_METRIC] = 1 + g_below(g, g->nstr);
		v[IFT_SM_SCOPE] = g_below(g, 9);
		v[IFT_SM_VALUE] = g_i64(g);
		break;
	}
}

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

struct wcfg {
	uint64_t seed, n;
	unsigned chunk_rows;
	int level;
	unsigned mask;
	bool finish;		/* else flush and free, leaving PATH.part */
	bool sane_tasks;
};

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

static void row_assert_equal(unsigned table, const uint64_t *got,
			     const uint64_t *want, uint64_t nth, const char *how)
{
	const struct ift_table_def *def = ift_table_def(table);

	for (unsigned c = 0; c < def->ncols; c++)
		if (got[c] != want[c])
			fail_msg("%s: row %" PRIu64 " (table %s): column %s is "
				 "%#" PRIx64 ", wrote %#" PRIx64, how, nth,
				 def->name, def->cols[c].name, got[c], want[c]);
}

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

/*
 * The cursor from FROM over the tables in MASK: rows in time order, equal
 * times in table order, and within a table in append order.  The generator
 * emits rows in time order, so sorting each run of equal times by table
 * (stably) gives the expected sequence.
 */
static uint64_t check_cursor(struct ift_trace *t, const struct wcfg *c,
			     unsigned mask, uint64_t from)
{
	struct ift_cursor *cur = ift_cursor_new(t, mask, from);
	struct row *grp = NULL;
	size_t ngrp = 0, cap = 0;
	uint64_t seen = 0;
	struct ift_event ev;
	struct gen g;

	assert_non_null(cur);
	gen_init(&g, c->seed, c->n, c->mask);
	g.tasks_only_sane = c->sane_tasks;
	for (uint64_t i = 0; i <= c->n; i++) {
		struct row r;

		if (i < c->n)
			gen_next(&g, &r);
		if (ngrp && (i == c->n || r.v[IFT_C_TS] != grp[0].v[IFT_C_TS])) {
			for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
				for (size_t k = 0; k < ngrp; k++) {
					if (grp[k].table != tb)
						continue;
					assert_int_equal(ift_cursor_next(cur, &ev), 1);
					assert_int_equal(ev.table, tb);
					row_assert_equal(tb, ev.row, grp[k].v, seen,
							 "cursor");
					seen++;
				}
			}
			ngrp = 0;
		}
		if (i == c->n)
			break;
		if (r.v[IFT_C_TS] < from || !(mask & (1U << r.table)))
			continue;
		if (ngrp == cap) {
			cap = cap ? cap * 2 : 64;
			grp = realloc(grp, cap * sizeof(*grp));
			assert_non_null(grp);
		}
		grp[ngrp++] = r;
	}
	assert_int_equal(ift_cursor_next(cur, &ev), 0);
	assert_int_equal(ift_cursor_next(cur, &ev), 0);
	ift_cursor_free(cur);
	free(grp);
	return seen;
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

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[PATH_MAX];

	(void)state;
	if (!d)
		return -1;
	/* a failed test leaves its files: remove whatever is left */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		tpath(path, sizeof(path), e->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_memory),	/* first: see there */
		cmocka_unit_test(test_many_small_chunks),
		cmocka_unit_test(test_chunks_of_100_zstd),
		cmocka_unit_test(test_zstd_off_and_on),
		cmocka_unit_test(test_millions),
		cmocka_unit_test(test_seek_and_cursor_from),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_extreme_times),
		cmocka_unit_test(test_writer_api_edges),
		cmocka_unit_test(test_task_table),
		cmocka_unit_test(test_unfinished),
	};

	return cmocka_run_group_tests_name("roundtrip", tests, setup, teardown);
}
