/* SPDX-License-Identifier: MIT */
#ifndef IFT_EXPORT_H
#define IFT_EXPORT_H

/*
 * Exports of a trace for the tools people already use: SQLite (docs/sql.md)
 * and a Perfetto / chrome://tracing timeline (docs/perfetto.md).  Both read
 * the trace file through the reader API only, keep every event, and neither
 * prints: errors come back as negative values (-errno or -IFT_E_*), with a
 * message in the caller's buffer where the library (sqlite) has one.
 */
#include <stdbool.h>
#include <stdio.h>

#include "ift-trace.h"

struct ift_export_opts {
	char *errbuf;			/* a message for the last error, or NULL */
	size_t errlen;
	const char *source;		/* the trace's path, recorded in the output */
};

/*
 * ift_export_sqlite - write every event of T into a new SQLite database PATH
 * (replaced if it exists), with the tables, indexes and views of docs/sql.md.
 * Returns 0 or a negative error.
 */
int ift_export_sqlite(struct ift_trace *t, const char *path,
		      const struct ift_export_opts *opts);

/*
 * ift_export_perfetto - write T as a Chrome/Perfetto JSON trace to OUT.
 * Returns 0 or a negative error (a write error: -ENOSPC, -EIO, ...).
 */
int ift_export_perfetto(struct ift_trace *t, FILE *out,
			const struct ift_export_opts *opts);

/*
 * ift_export_folded - T's profile (record --profile) as folded stacks to
 * OUT, a line per distinct stack ("thread;frame;...;frame COUNT",
 * outermost first), for flamegraph.pl, speedscope and inferno; nothing
 * for a trace without one.  0 or a negative error.
 */
int ift_export_folded(struct ift_trace *t, FILE *out, const struct ift_export_opts *opts);

/*
 * A Parquet export into DIR, whole or nothing: ift_parquet_begin() makes a
 * stage beside DIR (DIR itself is not touched), ift_export_parquet() writes
 * traces into it, ift_parquet_commit() moves them into DIR (made where it is
 * not there; into it where it is, never replacing a file), and
 * ift_parquet_end() removes what is left of the stage: after a failure,
 * nothing of the export is in DIR.  Each returns 0 or a negative error.
 */
struct ift_parquet_dir;

int ift_parquet_begin(const char *dir, struct ift_parquet_dir **out);

/*
 * ift_export_parquet - every table of T's SQLite export (docs/sql.md) as
 * Parquet files: DIR/host=HOST/rank=R/TABLE.parquet, a table's rows about a
 * process in the partition of its rank (or of the rank that started it; -1:
 * none), the tables without a pid copied into each of the trace's partitions
 * (docs/sql.md, "Parquet").  A name another trace has gets a number
 * (TABLE.1.parquet); a partition that holds T already (its mark,
 * _ingero.ID) is refused, -EEXIST.  The error's message is in OPTS.
 */
int ift_export_parquet(struct ift_parquet_dir *d, struct ift_trace *t,
		       const struct ift_export_opts *opts);

int ift_parquet_commit(struct ift_parquet_dir *d);
void ift_parquet_end(struct ift_parquet_dir *d);

/* ---- read-only SQL over a trace (docs/sql.md, `query') ---------------- */

struct ift_query;
struct sqlite3_stmt;

/*
 * ift_query_open_trace - export T into a private temporary database (under
 * TMPDIR, else /tmp) and open it read-only for ift_query_prepare().  The
 * file is unlinked as soon as it is open, so nothing is left behind once
 * the query is freed, or if the process dies after this returns.  On
 * success *OUT is released with ift_query_free().  Returns 0 or a negative
 * error, with a message in OPTS.
 */
int ift_query_open_trace(struct ift_trace *t, const struct ift_export_opts *opts,
			 struct ift_query **out);

/* ift_query_open_db - open an existing database (from `export') read-only. */
/*
 * Both open functions bound what a query may take: a value (string, blob,
 * row) to 16 MiB (SQLITE_LIMIT_LENGTH: sqlite3_step() fails with "string
 * or blob too big"), and SQLite's heap, for the whole process, to 256 MiB
 * (sqlite3_hard_heap_limit64(), lowered, never raised).  Only functions on
 * a reviewed list may be called (docs/sql.md); another is refused by name
 * by ift_query_prepare() with -EPERM.
 */
int ift_query_open_db(const char *path, const struct ift_export_opts *opts,
		      struct ift_query **out);

/* The database under Q, for the exporters that read their tables from it. */
struct sqlite3;
struct sqlite3 *ift_query_db(struct ift_query *q);

/* True when PATH starts as a SQLite database does ("SQLite format 3"). */
bool ift_query_is_db(const char *path);

/*
 * ift_query_prepare - compile one SQL statement that only reads
 * Anything that could write (INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH,
 * a PRAGMA that sets, BEGIN...) is refused with -IFT_E_READONLY before it
 * runs; bad SQL gives -IFT_E_SQL with SQLite's message in OPTS, more than
 * one statement -EINVAL.  On success *OUT is a statement the caller steps
 * with sqlite3_step() and releases with sqlite3_finalize() before
 * ift_query_free().
 */
int ift_query_prepare(struct ift_query *q, const char *sql,
		      const struct ift_export_opts *opts, struct sqlite3_stmt **out);

/*
 * What a statement may run by default, in `query' (--timeout) and in MCP's
 * run_sql alike: an unbounded recursive CTE runs until stopped.
 */
#define IFT_QUERY_TIMEOUT_S	10

/*
 * ift_query_set_timeout - statements of Q stepped from now on stop after MS
 * milliseconds: sqlite3_step() returns SQLITE_INTERRUPT (0: no limit).
 */
void ift_query_set_timeout(struct ift_query *q, unsigned ms);

/* The message SQLite gave for the last error of Q (after a failed step). */
const char *ift_query_errmsg(const struct ift_query *q);

void ift_query_free(struct ift_query *q);

/*
 * ift_query_hex - the bytes B (LEN of them) as lowercase hex, in a string the
 * caller frees; NULL when out of memory.
 */
char *ift_query_hex(const void *b, size_t len);

struct json_object;

/*
 * ift_query_json - column C of the row ST stands on as a JSON value: an
 * integer, a double, null, a string, or a blob as a hex string.  Text and
 * blobs are cut to MAX bytes (0: whole).  The caller owns the result; NULL
 * is JSON null (or out of memory).
 */
struct json_object *ift_query_json(struct sqlite3_stmt *st, int c, size_t max);

#endif
