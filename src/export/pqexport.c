// SPDX-License-Identifier: MIT
/*
 * export --format parquet: every table of the SQLite export (docs/sql.md,
 * the one schema both share) as Parquet files, partitioned the way engines
 * read a cluster's data: DIR/host=HOST/rank=R/TABLE.parquet.  A table's
 * rows about a process go to the partition of its rank (a rank's process,
 * or one it started: its input workers); those of no rank to rank=-1.
 * The tables that are the trace's own (meta, ops, stacks, ...: no pid
 * column) are copied into each of its partitions, so that each one joins
 * on its own.  Each partition of a trace holds its mark, _ingero.ID (ID: a
 * hash of the trace's META), and no partition takes one trace twice.  The
 * files are written into a stage and moved into DIR whole (pqstage.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/parquet.h"
#include "export/pqstage.h"
#include "ift-error.h"
#include "ift-export.h"
#include "ift-job.h"
#include "util/array.h"

#define MAX_PARTS	4096	/* ranks of one trace */
#define PARENT_DEPTH	64	/* ancestors followed to a rank */

/* A process, its parent (the `processes' table) and its rank, by pid. */
struct parent {
	int64_t pid, ppid, rank;
};

struct parts {
	struct ift_rank *ranks;
	size_t nranks;
	struct parent *par;
	size_t npar;
	char host[128];
	char mark[32];			/* "_ingero.ID" */
	struct ift_parquet_dir *d;
	const struct ift_export_opts *o;	/* its error buffer */
};

struct ift_parquet_dir {
	char *dir;			/* as the user named it */
	struct pq_stage *stage;
};

static int cmp_pid(const void *x, const void *y)
{
	int64_t a = ((const struct parent *)x)->pid, b = ((const struct parent *)y)->pid;

	return a < b ? -1 : a > b;
}

static const struct parent *parent_of(const struct parts *p, int64_t pid)
{
	struct parent key = { .pid = pid };

	return p->npar ? bsearch(&key, p->par, p->npar, sizeof(*p->par), cmp_pid) : NULL;
}

/* The rank PID made itself, or -1. */
static int64_t own_rank(const struct parts *p, int64_t pid)
{
	for (size_t i = 0; i < p->nranks; i++)
		if ((int64_t)p->ranks[i].pid == pid)
			return p->ranks[i].rank;
	return -1;
}

/*
 * Each process's rank: its own, or its nearest ancestor's; -1 none.
 * Once, after the parents are read and sorted: a row's is then a search.
 */
static void ranks_of_parents(struct parts *p)
{
	for (size_t i = 0; i < p->npar; i++) {
		int64_t pid = p->par[i].pid, r = -1;

		for (int depth = 0; depth < PARENT_DEPTH && pid > 0 && r < 0; depth++) {
			const struct parent *up = parent_of(p, pid);

			r = own_rank(p, pid);
			if (!up || up->ppid == pid)
				break;
			pid = up->ppid;
		}
		p->par[i].rank = r;
	}
}

/* The rank of the rows about PID. */
static int64_t rank_of(const struct parts *p, int64_t pid)
{
	const struct parent *x = parent_of(p, pid);

	return x ? x->rank : own_rank(p, pid);
}

static int sql_err(sqlite3 *db, const struct ift_export_opts *o)
{
	if (o && o->errbuf && o->errlen)
		snprintf(o->errbuf, o->errlen, "%s", sqlite3_errmsg(db));
	return -IFT_E_SQL;
}

/* The processes' parents, into P. */
static int read_parents(sqlite3 *db, struct parts *p, const struct ift_export_opts *o)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT pid, ppid FROM processes", -1, &st, NULL))
		return sql_err(db, o);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (ift_array_grow((void **)&p->par, &cap, p->npar + 1, sizeof(*p->par)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		p->par[p->npar++] = (struct parent){ sqlite3_column_int64(st, 0),
						     sqlite3_column_int64(st, 1), -1 };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_err(db, o);
	if (p->npar)
		qsort(p->par, p->npar, sizeof(*p->par), cmp_pid);
	ranks_of_parents(p);
	return 0;
}

/* "host=NAME" of a partition: what a path may hold, never empty. */
static void host_part(char *buf, size_t len, const char *host)
{
	size_t n = 0;

	for (; host && *host && n + 1 < len; host++, n++)
		buf[n] = (*host >= 'a' && *host <= 'z') || (*host >= 'A' && *host <= 'Z') ||
			 (*host >= '0' && *host <= '9') || *host == '-' || *host == '_' ||
			 (*host == '.' && n) ? *host : '_';
	if (!n)
		n = (size_t)snprintf(buf, len, "unknown");
	buf[n] = 0;
}

/* The partition of RANK, in the stage and in DIR (-1: not there yet), each
   level made as needed.  What is wrong with which level goes into P's error
   buffer. */
static int part_dirs(const struct parts *p, int64_t rank, int *staged, int *final)
{
	char name[sizeof(p->host) + 8], rname[32];
	int level, ret;

	snprintf(name, sizeof(name), "host=%s", p->host);
	snprintf(rname, sizeof(rname), "rank=%lld", (long long)rank);
	ret = ift_pq_stage_part(p->d->stage, name, rname, staged, final, &level);
	if (ret < 0 && p->o && p->o->errbuf && p->o->errlen)
		snprintf(p->o->errbuf, p->o->errlen, "'%s/%s%s%s': %s%s", p->d->dir, name,
			 level == 1 ? "" : "/", level == 1 ? "" : rname, ift_strerror(ret),
			 ret == -ENOTDIR || ret == -ELOOP ? " (a link there is not followed)" : "");
	return ret;
}

static void close_part(int staged, int final)
{
	close(staged);
	if (final >= 0)
		close(final);
}

/* NAME, a file of the trace's, in its mark in the partition STAGED: the
   mark says which files to remove to take the trace out. */
static int mark_file(const struct parts *p, int staged, const char *name)
{
	int fd = openat(staged, p->mark, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	char line[300];
	int len = snprintf(line, sizeof(line), "file %s\n", name), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)len) != len)
		ret = errno ? -errno : -EIO;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

/*
 * A new file for TABLE in partition RANK: TABLE.parquet, or TABLE.N.parquet
 * when another trace of the same host and rank has that name (in DIR, or
 * earlier in this export).
 */
static int part_open(const struct parts *p, int64_t rank, const char *table,
		     const struct pq_column *cols, size_t ncols, struct pq_writer **w)
{
	char name[256];
	int staged, final, ret = part_dirs(p, rank, &staged, &final);

	if (ret < 0)
		return ret;
	ret = -EEXIST;
	for (unsigned k = 0; k < 1000 && ret == -EEXIST; k++) {
		if (k)
			snprintf(name, sizeof(name), "%s.%u.parquet", table, k);
		else
			snprintf(name, sizeof(name), "%s.parquet", table);
		if (!ift_pq_stage_taken(staged, final, name))
			ret = ift_pq_openat(staged, name, cols, ncols, w);
	}
	if (ret >= 0)
		ret = mark_file(p, staged, name);
	close_part(staged, final);
	return ret;
}

/*
 * The trace's mark in partition RANK, refused where the partition has it
 * (the trace exported into DIR before, or named twice): its rows would be
 * there twice.
 */
static int part_mark(const struct parts *p, int64_t rank)
{
	int staged, final, fd, ret = part_dirs(p, rank, &staged, &final);
	FILE *f;

	if (ret < 0)
		return ret;
	if (ift_pq_stage_taken(staged, final, p->mark)) {
		/* in DIR: exported before; else only in the stage: named twice */
		bool before = ift_pq_stage_taken(-1, final, p->mark);

		if (p->o && p->o->errbuf && p->o->errlen)
			snprintf(p->o->errbuf, p->o->errlen,
				 "'%s/host=%s/rank=%lld' holds this trace already (%s%s): "
				 "its rows would be there twice",
				 p->d->dir, p->host, (long long)rank, p->mark,
				 before ? "" : ", named twice");
		close_part(staged, final);
		return -EEXIST;
	}
	fd = openat(staged, p->mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	ret = fd < 0 ? -errno : 0;
	if (fd >= 0 && (f = fdopen(fd, "w"))) {
		fprintf(f, "source %s\n", p->o && p->o->source ? p->o->source : "");
		if (fclose(f))
			ret = -errno;
	} else if (fd >= 0) {
		ret = -errno;
		close(fd);
	}
	close_part(staged, final);
	return ret;
}

/* A trace's identity: FNV-1a of its META, key by key (the host, the
   recorder's pid, the start and the wall clock's offset among them). */
static void trace_mark(const struct ift_trace *t, char *buf, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	size_t n = ift_trace_meta_count(t);

	for (size_t i = 0; i < n; i++) {
		const char *kv[2];

		ift_trace_meta_at(t, i, &kv[0], &kv[1]);
		for (int k = 0; k < 2; k++) {
			for (const char *c = kv[k] ? kv[k] : ""; *c; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			h = (h ^ (unsigned char)(k ? '\n' : '=')) * 1099511628211ULL;
		}
	}
	snprintf(buf, len, "_ingero.%016llx", (unsigned long long)h);
}

/*
 * Rows that belong to another table's row go where it goes: a call's
 * attribution with its call, a chain's task with its chain, whatever
 * process they name.  The owner's pid comes as one more, last, column.
 */
static const struct {
	const char *table, *sql;
} owned[] = {
	{ "call_attrs", "SELECT a.*, c.pid FROM call_attrs a LEFT JOIN calls c ON c.id = a.call_id" },
	{ "chain_tasks", "SELECT t.*, c.pid FROM chain_tasks t LEFT JOIN chains c ON c.rank = t.chain" },
	{ "chain_gpu", "SELECT g.*, c.pid FROM chain_gpu g LEFT JOIN chains c ON c.rank = g.chain" },
};

/* One partition's file of the table being written. */
struct out {
	int64_t rank;
	struct pq_writer *w;
};

static int export_table(sqlite3 *db, struct parts *p, const char *table,
			const int64_t *ranks, size_t nranks, const struct ift_export_opts *o)
{
	char sql[256];
	sqlite3_stmt *st;
	struct pq_column *cols = NULL;
	char (*renamed)[128] = NULL;
	struct pq_value *row = NULL;
	struct out *out = NULL;
	int ncols, pidcol = -1, rc, ret = 0;
	bool owner = false;

	snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\"", table);
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		if (!strcmp(table, owned[i].table)) {
			snprintf(sql, sizeof(sql), "%s", owned[i].sql);
			owner = true;
		}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL))
		return sql_err(db, o);
	ncols = sqlite3_column_count(st);
	if (owner)
		pidcol = --ncols;	/* routes the row, not written */
	if (!(cols = calloc((size_t)ncols, sizeof(*cols))) ||
	    !(row = calloc((size_t)ncols, sizeof(*row))) ||
	    !(renamed = calloc((size_t)ncols, sizeof(*renamed))) ||
	    !(out = calloc(nranks, sizeof(*out)))) {
		ret = -ENOMEM;
		goto done;
	}
	for (int i = 0; i < ncols; i++) {
		const char *decl = sqlite3_column_decltype(st, i);

		cols[i].name = sqlite3_column_name(st, i);
		/* the partitions' keys are columns too: a table's own keeps its
		   name after the table's (chains.rank: chains_rank) */
		if (!strcmp(cols[i].name, "host") || !strcmp(cols[i].name, "rank")) {
			snprintf(renamed[i], sizeof(renamed[i]), "%s_%s", table, cols[i].name);
			cols[i].name = renamed[i];
		}
		cols[i].optional = true;
		cols[i].type = decl && !strcasecmp(decl, "INTEGER") ? PQ_INT64 :
			       decl && !strcasecmp(decl, "REAL") ? PQ_DOUBLE : PQ_STRING;
		if (!owner && !strcmp(cols[i].name, "pid") && cols[i].type == PQ_INT64)
			pidcol = i;
	}
	/* one file per partition of the trace, made when a row needs it */
	for (size_t i = 0; i < nranks; i++)
		out[i].rank = ranks[i];
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t r = pidcol >= 0 ? rank_of(p, sqlite3_column_int64(st, pidcol)) : 0;

		for (int i = 0; i < ncols; i++) {
			struct pq_value *v = &row[i];

			v->is_null = sqlite3_column_type(st, i) == SQLITE_NULL;
			if (v->is_null)
				continue;
			if (cols[i].type == PQ_INT64) {
				v->i = sqlite3_column_int64(st, i);
			} else if (cols[i].type == PQ_DOUBLE) {
				v->d = sqlite3_column_double(st, i);
			} else {
				v->s = (const char *)sqlite3_column_text(st, i);
				v->len = (size_t)sqlite3_column_bytes(st, i);
				if (!v->s)
					v->s = "";
			}
		}
		for (size_t i = 0; i < nranks && ret >= 0; i++) {
			if (pidcol >= 0 && out[i].rank != r)
				continue;
			if (!out[i].w)
				ret = part_open(p, out[i].rank, table, cols, (size_t)ncols,
						&out[i].w);
			if (ret >= 0)
				ret = ift_pq_add(out[i].w, row);
		}
		if (ret < 0)
			break;
	}
	if (ret >= 0 && rc != SQLITE_DONE)
		ret = sql_err(db, o);
	/* a table with no row of a partition is still there, empty */
	for (size_t i = 0; i < nranks && ret >= 0; i++)
		if (!out[i].w)
			ret = part_open(p, out[i].rank, table, cols, (size_t)ncols, &out[i].w);
done:
	for (size_t i = 0; out && i < nranks; i++) {
		int r = ift_pq_close(out[i].w, ret < 0);

		if (ret >= 0 && r < 0)
			ret = r;
	}
	sqlite3_finalize(st);
	free(cols);
	free(renamed);
	free(row);
	free(out);
	return ret;
}

int ift_parquet_begin(const char *dir, struct ift_parquet_dir **out)
{
	struct ift_parquet_dir *d = calloc(1, sizeof(*d));
	int ret;

	*out = NULL;
	if (!d || !(d->dir = strdup(dir))) {
		free(d);
		return -ENOMEM;
	}
	ret = ift_pq_stage_begin(dir, &d->stage);
	if (ret < 0) {
		ift_parquet_end(d);
		return ret;
	}
	*out = d;
	return 0;
}

int ift_parquet_commit(struct ift_parquet_dir *d)
{
	return ift_pq_stage_commit(d->stage);
}

void ift_parquet_end(struct ift_parquet_dir *d)
{
	if (!d)
		return;
	ift_pq_stage_free(d->stage);
	free(d->dir);
	free(d);
}

int ift_export_parquet(struct ift_parquet_dir *d, struct ift_trace *t,
		       const struct ift_export_opts *o)
{
	struct parts p = { .d = d, .o = o };
	struct ift_query *q = NULL;
	sqlite3_stmt *st = NULL;
	int64_t *ranks = NULL;
	size_t nranks = 0;
	char **tables = NULL;
	size_t ntables = 0;
	sqlite3 *db;
	int ret, rc;

	trace_mark(t, p.mark, sizeof(p.mark));
	if ((ret = ift_job_ranks(t, &p.ranks, &p.nranks)) < 0)
		return ret;
	host_part(p.host, sizeof(p.host), ift_trace_meta(t, "host.name"));
	if ((ret = ift_query_open_trace(t, o, &q)) < 0)
		goto out;
	db = ift_query_db(q);
	if ((ret = read_parents(db, &p, o)) < 0)
		goto out;
	/* the partitions: each rank's, and rank -1 */
	if (p.nranks > MAX_PARTS) {
		ret = -IFT_E_LIMIT;
		goto out;
	}
	if (!(ranks = calloc(p.nranks + 1, sizeof(*ranks)))) {
		ret = -ENOMEM;
		goto out;
	}
	ranks[nranks++] = -1;
	for (size_t i = 0; i < p.nranks; i++) {
		bool seen = false;

		for (size_t k = 0; k < nranks; k++)
			seen |= ranks[k] == p.ranks[i].rank;
		if (!seen)
			ranks[nranks++] = p.ranks[i].rank;
	}
	for (size_t i = 0; i < nranks && ret >= 0; i++)
		ret = part_mark(&p, ranks[i]);
	if (ret < 0)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND "
			       "name NOT LIKE 'sqlite%' ORDER BY name", -1, &st, NULL)) {
		ret = sql_err(db, o);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char **v = realloc(tables, (ntables + 1) * sizeof(*v));

		if (!v || !(v[ntables] = strdup((const char *)sqlite3_column_text(st, 0)))) {
			if (v)
				tables = v;
			ret = -ENOMEM;
			goto out;
		}
		tables = v;
		ntables++;
	}
	if (rc != SQLITE_DONE) {
		ret = sql_err(db, o);
		goto out;
	}
	for (size_t i = 0; i < ntables && ret >= 0; i++)
		ret = export_table(db, &p, tables[i], ranks, nranks, o);
out:
	sqlite3_finalize(st);
	for (size_t i = 0; i < ntables; i++)
		free(tables[i]);
	free(tables);
	free(ranks);
	free(p.ranks);
	free(p.par);
	ift_query_free(q);
	return ret;
}
