// SPDX-License-Identifier: MIT
/*
 * export --format parquet: every table of the SQLite export (docs/sql.md,
 * the one schema both share) as Parquet files, partitioned the way engines
 * read a cluster's data: DIR/host=HOST/rank=R/TABLE.parquet.  A table's
 * rows about a process go to the partition of its rank (a rank's process,
 * or one it started: its input workers); those of no rank to rank=-1.
 * The tables that are the trace's own (meta, ops, stacks, ...: no pid
 * column) are copied into each of its partitions, so that each one joins
 * on its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/parquet.h"
#include "ift-error.h"
#include "ift-export.h"
#include "ift-job.h"

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
	const char *dir;
	const struct ift_export_opts *o;	/* its error buffer */
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
		if (p->npar == cap) {
			struct parent *v = realloc(p->par, (cap = cap ? 2 * cap : 256) *
							   sizeof(*v));

			if (!v) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
			p->par = v;
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

/*
 * NAME in the directory AT, made if need be, opened without following a
 * link there (a link planted at DIR/host=NAME would take the files
 * elsewhere): a descriptor, or a negative errno (ENOTDIR or ELOOP for a
 * link or a file).
 */
static int subdir(int at, const char *name)
{
	int fd;

	if (mkdirat(at, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* DIR/host=H/rank=R, each level made as needed: a descriptor of it.  What
   is wrong with which level goes into P's error buffer. */
static int part_dir(const struct parts *p, int64_t rank)
{
	char name[sizeof(p->host) + 8], rname[32];
	int top, host, fd;

	top = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* the user's path */
	if (top < 0)
		return -errno;
	snprintf(name, sizeof(name), "host=%s", p->host);
	host = subdir(top, name);
	close(top);
	snprintf(rname, sizeof(rname), "rank=%lld", (long long)rank);
	fd = host < 0 ? host : subdir(host, rname);
	if (host >= 0)
		close(host);
	if (fd < 0 && p->o && p->o->errbuf && p->o->errlen)
		snprintf(p->o->errbuf, p->o->errlen, "'%s/%s%s%s': %s%s", p->dir, name,
			 host < 0 ? "" : "/", host < 0 ? "" : rname, ift_strerror(fd),
			 fd == -ENOTDIR || fd == -ELOOP ? " (a link there is not followed)" : "");
	return fd;
}

/*
 * A new file for TABLE in partition RANK: TABLE.parquet, or TABLE.N.parquet
 * when another trace of the same host and rank wrote that name already.
 */
static int part_open(const struct parts *p, int64_t rank, const char *table,
		     const struct pq_column *cols, size_t ncols, struct pq_writer **w)
{
	char name[256];
	int dir = part_dir(p, rank), ret = -EEXIST;

	if (dir < 0)
		return dir;
	for (unsigned k = 0; k < 1000 && ret == -EEXIST; k++) {
		if (k)
			snprintf(name, sizeof(name), "%s.%u.parquet", table, k);
		else
			snprintf(name, sizeof(name), "%s.parquet", table);
		ret = pq_openat(dir, name, cols, ncols, w);
	}
	close(dir);
	return ret;
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
				ret = pq_add(out[i].w, row);
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
		int r = pq_close(out[i].w, ret < 0);

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

int ift_export_parquet(struct ift_trace *t, const char *dir, const struct ift_export_opts *o)
{
	struct parts p = { .dir = dir, .o = o };
	struct ift_query *q = NULL;
	sqlite3_stmt *st = NULL;
	int64_t *ranks = NULL;
	size_t nranks = 0;
	char **tables = NULL;
	size_t ntables = 0;
	sqlite3 *db;
	int ret, rc;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
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
