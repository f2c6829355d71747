// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace query: read-only SQL over a trace (docs/sql.md).
 *
 * A trace is exported to a private temporary database for the one query
 * (seconds for ten million events); a database written by `export' is
 * queried as it is, which is the fast way to ask many questions.  Nothing
 * is cached beside the trace: a query never writes where the user did not
 * ask it to.
 *
 * Output: an aligned table (widths from the data, numbers to the right),
 * --csv (RFC 4180) or --json (an array of objects).
 */
#include <errno.h>
#include <getopt.h>
#include <json.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ift-export.h"
#include "ift-words.h"

static const char usage[] = "query [-i FILE] [--json|--csv] [--timeout SECONDS] \"SELECT ...\"";

enum { OUT_TABLE, OUT_CSV, OUT_JSON };

/* The table sees every row before it prints one (its widths come from the
   data), so it holds the result in memory: up to this much.  --csv and
   --json print rows as they come and need no cap. */
#define TABLE_MAX_BYTES	(64 << 20)

/* ---- the aligned table ------------------------------------------- */

struct table {
	int ncols;
	char **cell;		/* rows * ncols, row 0 the header */
	size_t nrows, cap;
	int *width;
	bool *number;		/* every value of the column is a number */
	bool *text;		/* some value is not */
};

/* Columns S takes on a terminal: UTF-8 continuation bytes take none. */
static int cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* A value for one cell of one line: what a terminal acts on shown as \xNN,
   never obeyed (IFT_TEXT_TERM). */
static char *cell_text(const char *s, size_t len)
{
	char *raw = strndup(s, len), *out;

	if (!raw)
		return NULL;
	out = ift_text_dup(raw, IFT_TEXT_TERM);
	free(raw);
	return out;
}

static int table_add(struct table *t, char **row)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **v = realloc(t->cell, cap * (size_t)t->ncols * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->cell = v;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncols; c++) {
		int w = cols(row[c]);

		t->cell[t->nrows * (size_t)t->ncols + (size_t)c] = row[c];
		if (w > t->width[c])
			t->width[c] = w;
	}
	t->nrows++;
	return 0;
}

static void table_print(const struct table *t)
{
	for (size_t r = 0; r < t->nrows; r++) {
		char *const *row = &t->cell[r * (size_t)t->ncols];
		int last = t->ncols - 1;

		/* empty cells at the end of a line print nothing, not blanks */
		while (last > 0 && !row[last][0])
			last--;
		for (int c = 0; c <= last; c++) {
			int pad = t->width[c] - cols(row[c]);
			bool right = r && t->number[c] && !t->text[c];

			if (c)
				fputs("  ", stdout);
			if (right)
				printf("%*s%s", pad, "", row[c]);
			else if (c < last)
				printf("%s%*s", row[c], pad, "");
			else
				fputs(row[c], stdout);
		}
		putchar('\n');
		if (r == 0) {
			for (int c = 0; c < t->ncols; c++) {
				if (c)
					fputs("  ", stdout);
				for (int k = 0; k < t->width[c]; k++)
					putchar('-');
			}
			putchar('\n');
		}
	}
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	free(t->width);
	free(t->number);
	free(t->text);
}

/* ---- CSV and JSON, a row at a time --------------------------------- */

/* A field of RFC 4180, valid UTF-8 (IFT_TEXT_UTF8_ALL: a NUL inside ends it). */
static void csv_field(const char *raw, size_t len)
{
	char *copy;
	const char *s = ift_text_utf8(raw, len, IFT_TEXT_UTF8_ALL, &copy);
	bool quote = false;

	if (!s)
		return;
	if (copy)
		len = strlen(copy);
	for (size_t i = 0; i < len && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (quote)
		putchar('"');
	for (size_t i = 0; i < len; i++) {
		if (quote && s[i] == '"')
			putchar('"');
		putchar(s[i]);
	}
	if (quote)
		putchar('"');
	free(copy);
}

/* ---- the command -------------------------------------------------- */

/* Steps ST to the end, printing as FORMAT says; TIMEOUT (s) names the limit
   that stopped it.  Returns 0 or -1 (said why). */
/* The row at ST as a CSV line (RFC 4180), blobs as hex. */
static void put_csv_row(sqlite3_stmt *st, int ncols)
{
	for (int c = 0; c < ncols; c++) {
		if (c)
			putchar(',');
		if (sqlite3_column_type(st, c) == SQLITE_BLOB) {
			char *hex = ift_query_hex(sqlite3_column_blob(st, c),
						  (size_t)sqlite3_column_bytes(st, c));

			fputs(hex ? hex : "", stdout);
			free(hex);
		} else if (sqlite3_column_type(st, c) != SQLITE_NULL) {
			csv_field((const char *)sqlite3_column_text(st, c),
				  (size_t)sqlite3_column_bytes(st, c));
		}
	}
	fputs("\r\n", stdout);
}

/* The row at ST as one member of the JSON array, row NROWS from 0. */
static void put_json_row(sqlite3_stmt *st, int ncols, size_t nrows)
{
	json_object *o = json_object_new_object();

	/* a column's name is the query's words: valid UTF-8 as a key */
	for (int c = 0; c < ncols; c++) {
		char *key = ift_text_dup(sqlite3_column_name(st, c), IFT_TEXT_UTF8_ALL);

		json_object_object_add(o, key ? key : "?", ift_query_json(st, c, 0));
		free(key);
	}
	printf("%s\n  %s", nrows ? "," : "",
	       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int run(struct ift_query *q, sqlite3_stmt *st, int format, double timeout)
{
	int ncols = sqlite3_column_count(st), rc, ret = 0;
	struct table t = { .ncols = ncols };
	size_t nrows = 0, held = 0;
	char **row = calloc((size_t)ncols + 1, sizeof(*row));

	if (!row)
		return error("query: %s", strerror(ENOMEM));

	if (format == OUT_TABLE) {
		char **hdr = calloc((size_t)ncols + 1, sizeof(*hdr));

		t.width = calloc((size_t)ncols + 1, sizeof(*t.width));
		t.number = calloc((size_t)ncols + 1, sizeof(*t.number));
		t.text = calloc((size_t)ncols + 1, sizeof(*t.text));
		if (!hdr || !t.width || !t.number || !t.text) {
			free(hdr);
			free(row);
			table_free(&t);
			return error("query: %s", strerror(ENOMEM));
		}
		for (int c = 0; c < ncols; c++) {
			const char *n = sqlite3_column_name(st, c);

			hdr[c] = cell_text(n ? n : "", n ? strlen(n) : 0);
		}
		if (table_add(&t, hdr) < 0)
			ret = error("query: %s", strerror(ENOMEM));
		free(hdr);
	} else if (format == OUT_CSV) {
		for (int c = 0; c < ncols; c++) {
			const char *n = sqlite3_column_name(st, c);

			if (c)
				putchar(',');
			csv_field(n ? n : "", n ? strlen(n) : 0);
		}
		fputs("\r\n", stdout);
	} else {
		putchar('[');
	}

	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (format == OUT_TABLE) {
			for (int c = 0; c < ncols; c++)
				held += 2 * (size_t)sqlite3_column_bytes(st, c) + 1;
			if (held > TABLE_MAX_BYTES) {
				ret = error("query: the result is too big for a table (over %d MiB): "
					    "use --csv or --json, which print rows as they come",
					    TABLE_MAX_BYTES >> 20);
				break;
			}
			for (int c = 0; c < ncols; c++) {
				int type = sqlite3_column_type(st, c);
				const char *s = (const char *)sqlite3_column_text(st, c);
				size_t len = (size_t)sqlite3_column_bytes(st, c);

				if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
					t.number[c] = true;
				else if (type != SQLITE_NULL)
					t.text[c] = true;
				if (type == SQLITE_BLOB)
					row[c] = ift_query_hex(sqlite3_column_blob(st, c), len);
				else
					row[c] = cell_text(s ? s : "", s ? len : 0);
				if (!row[c])
					ret = -1;
			}
			if (ret || table_add(&t, row) < 0) {
				for (int c = 0; c < ncols; c++)
					free(row[c]);
				ret = error("query: %s", strerror(ENOMEM));
			}
		} else if (format == OUT_CSV) {
			put_csv_row(st, ncols);
		} else {
			put_json_row(st, ncols, nrows);
		}
		nrows++;
	}
	if (!ret && rc == SQLITE_INTERRUPT)
		ret = error("the query ran past %g s: stopped (--timeout SECONDS, 0 for none; "
			    "or add a LIMIT or a WHERE on an indexed column)", timeout);
	else if (!ret && rc != SQLITE_DONE)
		ret = error("query failed: %s", ift_query_errmsg(q));
	if (format == OUT_TABLE) {
		if (!ret)
			table_print(&t);
		table_free(&t);
	} else if (format == OUT_JSON && !ret) {
		printf("%s]\n", nrows ? "\n" : "");
	}
	free(row);
	return ret;
}

int cmd_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = IFT_DEFAULT_TRACE, *sql;
	struct cli_options co = {
		.usage = usage, .shortopts = "i:h", .longopts = longopts, .input = &path,
		.max_args = 1, .args_hint = " (quote the SQL as one argument)",
	};
	char msg[512] = "";
	struct ift_export_opts opts = { .errbuf = msg, .errlen = sizeof(msg) };
	struct ift_query *q = NULL;
	struct ift_trace *t = NULL;
	sqlite3_stmt *st;
	int c, ret, format = OUT_TABLE;
	double timeout = IFT_QUERY_TIMEOUT_S;
	char *end;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
		case 'j':
		case 'c':
			if (format != OUT_TABLE)
				return usage_error(usage, "--json and --csv exclude each other");
			format = c == 'j' ? OUT_JSON : OUT_CSV;
			break;
		case 't':	/* 0: none; at most a day, in ms an unsigned */
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(timeout >= 0 && timeout <= 86400))
				return usage_error(usage, "--timeout takes seconds, 0 to 86400: '%s'",
						   optarg);
			break;
		}
	}
	if (c < 0)
		return co.status;
	if (optind == argc)
		return usage_error(usage, "no SQL given");
	sql = argv[optind];

	if (ift_query_is_db(path)) {
		ret = ift_query_open_db(path, &opts, &q);
	} else {
		t = cli_open_trace(path, 0);
		if (!t)
			return EXIT_RUNTIME;
		opts.source = path;
		ret = ift_query_open_trace(t, &opts, &q);
	}
	if (ret < 0) {
		error("cannot query '%s': %s", path, *msg ? msg : ift_strerror(ret));
		goto out;
	}
	ret = ift_query_prepare(q, sql, &opts, &st);
	if (ret == -IFT_E_SQL) {
		error("bad SQL: %s", msg);
		goto out;
	}
	if (ret < 0) {
		error("%s", *msg ? msg : ift_strerror(ret));
		goto out;
	}
	/* a timeout that rounds to 0 ms would be none */
	ift_query_set_timeout(q, timeout > 0 && timeout < 0.001 ? 1 : (unsigned)(timeout * 1000));
	ret = run(q, st, format, timeout);
	sqlite3_finalize(st);
out:
	ift_query_free(q);
	if (t)
		ift_trace_close(t);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
