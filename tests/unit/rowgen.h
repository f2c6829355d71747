/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_ROWGEN_H
#define IFT_TESTS_ROWGEN_H
/*
 * A seeded stream of rows for every table, for the trace file's tests
 * (test-roundtrip.c, test-writer.c): the rows are regenerated for checking
 * rather than kept, so a multi-million-row stream costs no memory, and
 * check_cursor() checks a cursor against them.  Include after cmocka.h; run
 * the group with rg_setup and rg_teardown (they make and remove tmpdir, where
 * tpath() names the files).
 */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-trace.h"

/* 1 in an AddressSanitizer build, which gets the smaller of the big cases */
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

#define MAXCOLS		16
#define ALL_TABLES	(((1U << IFT_T_NR) - 1) & ~1U)

static char tmpdir[] = "/tmp/ift-rowgen.XXXXXX";

static void tpath(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
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

/* ---- a stream, and its rows through a cursor ------------------------- */

/* A stream: the generator's seed and rows, and how write_stream() writes it. */
struct wcfg {
	uint64_t seed, n;
	unsigned chunk_rows;
	int level;
	unsigned mask;
	bool finish;		/* else flush and free, leaving PATH.part */
	bool sane_tasks;
};

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

static int rg_setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rg_teardown(void **state)
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

#endif
