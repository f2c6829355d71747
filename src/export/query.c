// SPDX-License-Identifier: MIT
/*
 * Read-only SQL over a trace: the database of docs/sql.md, exported to a
 * private temporary file or given as one, opened so that nothing can write.
 *
 * Three locks, each enough alone for a plain INSERT, together for the
 * statements that slip past one of them: the connection is read-only (no
 * write reaches the file); sqlite3_stmt_readonly() must hold before a
 * statement steps (it catches writes to TEMP tables, which a read-only
 * connection still allows); and an authorizer admits only reading actions
 * (it catches ATTACH, which stmt_readonly passes, and PRAGMAs that set).
 *
 * Functions are a fourth door: SQLite's own include some that are not
 * questions about data (fts3_tokenizer() returns a pointer and, given two
 * arguments, installs one: a known exploit primitive; load_extension()
 * runs code).  The authorizer admits only the functions listed below,
 * reviewed one by one, and refuses any other by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ift-export.h"
#include "ift-render.h"

/*
 * Memory a query may take.  A value (a string, a blob, a row) is bounded by
 * SQLITE_LIMIT_LENGTH, so zeroblob(900000000) fails with "string or blob
 * too big" before anything is allocated (printf('%.*c', 1e9, 'x') gives
 * NULL); the heap limit bounds the rest (sorters spill to temporary files
 * first).  Both are far above what a question about a trace needs: the
 * largest value a trace stores is a command line or a stack.
 */
#define QUERY_MAX_VALUE		(16 << 20)
#define QUERY_HEAP_LIMIT	(256LL << 20)

struct ift_query {
	sqlite3 *db;
	bool denied;		/* the authorizer refused something */
	char denied_fn[64];	/* ... a function off the list: its name */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; 0: none */
};

static int qfail(const struct ift_export_opts *opts, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int qfail(const struct ift_export_opts *opts, int err, const char *fmt, ...)
{
	va_list ap;

	if (opts && opts->errbuf && opts->errlen) {
		va_start(ap, fmt);
		vsnprintf(opts->errbuf, opts->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* PRAGMAs that only describe the schema; their argument names a table or
   an index, never a value to set. */
static const char *const pragma_ok[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info",
	"index_xinfo", "foreign_key_list", "collation_list", "function_list",
	"pragma_list", "database_list", "compile_options",
};

/*
 * Functions a read-only question may call: pure functions of their
 * arguments (aggregate, window, string, math, date, JSON), plus random()
 * and randomblob(), whose size SQLITE_LIMIT_LENGTH bounds as it bounds
 * zeroblob(), printf() and every other value.  Left out on purpose:
 * load_extension, fts3_tokenizer, the FTS/R-tree helpers (snippet,
 * matchinfo, rtreenode...), sqlite_compileoption_*, sqlite_log, changes and
 * the like (nothing a question needs), and whatever a new SQLite adds until
 * someone reviews it.
 */
static const char *const function_ok[] = {
	/* aggregate and window */
	"avg", "count", "group_concat", "max", "min", "sum", "total",
	"string_agg", "row_number", "rank", "dense_rank", "percent_rank",
	"cume_dist", "ntile", "lag", "lead", "first_value", "last_value",
	"nth_value",
	/* core scalar */
	"abs", "char", "coalesce", "concat", "concat_ws", "format", "glob",
	"hex", "ifnull", "iif", "instr", "length", "like", "likelihood",
	"likely", "lower", "ltrim", "nullif", "octet_length", "printf", "quote",
	"random", "randomblob", "replace", "round", "rtrim", "sign", "soundex",
	"substr", "substring", "trim", "typeof", "unhex", "unicode", "unlikely",
	"upper", "zeroblob", "sqlite_version", "sqlite_source_id",
	/* math */
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil",
	"ceiling", "cos", "cosh", "degrees", "exp", "floor", "ln", "log",
	"log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh",
	"sqrt", "tan", "tanh", "trunc",
	/* date and time */
	"date", "time", "datetime", "julianday", "unixepoch", "strftime",
	"timediff", "current_date", "current_time", "current_timestamp",
	/* JSON ("->" and "->>" are the operators) */
	"json", "json_array", "json_array_length", "json_extract", "json_insert",
	"json_object", "json_patch", "json_quote", "json_remove", "json_replace",
	"json_set", "json_type", "json_valid", "json_group_array",
	"json_group_object", "json_error_position", "json_pretty", "->", "->>",
};

static bool function_allowed(const char *name)
{
	for (size_t i = 0; name && i < sizeof(function_ok) / sizeof(function_ok[0]); i++)
		if (!strcasecmp(name, function_ok[i]))
			return true;
	return false;
}

static int authorize(void *ctx, int action, const char *a1, const char *a2,
		     const char *db, const char *trigger)
{
	struct ift_query *q = ctx;

	(void)db;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		/* a1 is NULL, a2 the function's name */
		if (function_allowed(a2))
			return SQLITE_OK;
		if (!q->denied_fn[0])
			snprintf(q->denied_fn, sizeof(q->denied_fn), "%s", a2 ? a2 : "?");
		break;
	case SQLITE_PRAGMA:
		for (size_t i = 0; i < sizeof(pragma_ok) / sizeof(pragma_ok[0]); i++)
			if (a1 && !strcasecmp(a1, pragma_ok[i]))
				return SQLITE_OK;
		break;
	}
	q->denied = true;
	return SQLITE_DENY;
}

/*
 * "file:PATH?immutable=1" with PATH percent-encoded: SQLite decodes %XX in
 * a URI's path and ends the path at '?' or '#', so a TMPDIR holding any of
 * them named another file.  Returns a string to free(), or NULL (ENOMEM).
 */
static char *immutable_uri(const char *path)
{
	static const char head[] = "file:", tail[] = "?immutable=1";
	char *uri = malloc(sizeof(head) + 3 * strlen(path) + sizeof(tail)), *p;

	if (!uri)
		return NULL;
	p = stpcpy(uri, head);
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr("/-._~", *c))
			*p++ = (char)*c;
		else
			p += sprintf(p, "%%%02X", *c);
	}
	strcpy(p, tail);
	return uri;
}

static int query_open(const char *path, bool immutable, const struct ift_export_opts *opts,
		      struct ift_query **out)
{
	struct ift_query *q = calloc(1, sizeof(*q));
	char *uri = NULL;
	int rc, ret;

	if (!q)
		return -ENOMEM;
	/* immutable: our own temporary file, which nobody else can change,
	   needs no locks */
	if (immutable) {
		uri = immutable_uri(path);
		if (!uri) {
			free(q);
			return -ENOMEM;
		}
	}
	rc = sqlite3_open_v2(uri ? uri : path, &q->db,
			     SQLITE_OPEN_READONLY | (uri ? SQLITE_OPEN_URI : 0), NULL);
	free(uri);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(q->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	/* the authorizer refuses it too; this holds should the list ever slip */
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
	/* read the schema now: a file that is not a database says so here,
	   and an unlinked temporary file is already read from */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(q->db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		ret = qfail(opts, rc == SQLITE_CANTOPEN ? -ENOENT : -IFT_E_SQL,
			    "cannot open '%s': %s", path,
			    q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc));
		sqlite3_close(q->db);
		free(q);
		return ret;
	}
	sqlite3_set_authorizer(q->db, authorize, q);
	sqlite3_limit(q->db, SQLITE_LIMIT_LENGTH, QUERY_MAX_VALUE);
	/* process-wide: set once the export (if any) is done, never raised */
	if (sqlite3_hard_heap_limit64(-1) == 0 || sqlite3_hard_heap_limit64(-1) > QUERY_HEAP_LIMIT)
		sqlite3_hard_heap_limit64(QUERY_HEAP_LIMIT);
	*out = q;
	return 0;
}

int ift_query_open_db(const char *path, const struct ift_export_opts *opts,
		      struct ift_query **out)
{
	/* SQLite would create a missing file's name in its message only */
	if (access(path, R_OK) < 0)
		return qfail(opts, -errno, "cannot open '%s': %s", path, strerror(errno));
	return query_open(path, false, opts, out);
}

/*
 * Where the private database goes: SQLite's own order for its temporary
 * files (TMPDIR, /var/tmp, /usr/tmp, /tmp, then the current directory), the
 * first that is a directory we may write.  A container or an empty root
 * may have no /tmp.
 */
static const char *tmp_dir(void)
{
	const char *dirs[] = { getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (dirs[i] && *dirs[i] && !stat(dirs[i], &st) && S_ISDIR(st.st_mode) &&
		    !access(dirs[i], W_OK | X_OK))
			return dirs[i];
	return ".";
}

int ift_query_open_trace(struct ift_trace *t, const struct ift_export_opts *opts,
			 struct ift_query **out)
{
	const char *tmp = tmp_dir();
	char *dir = NULL, *db = NULL;
	int ret;

	if (asprintf(&dir, "%s/ingero-query.XXXXXX", tmp) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		ret = qfail(opts, -errno, "cannot make a temporary directory in '%s': %s",
			    tmp, strerror(errno));
		free(dir);
		return ret;
	}
	if (asprintf(&db, "%s/trace.db", dir) < 0) {
		rmdir(dir);
		free(dir);
		return -ENOMEM;
	}
	ret = ift_export_sqlite(t, db, opts);
	if (ret >= 0)
		ret = query_open(db, true, opts, out);
	/* open (or failed): the name is no longer needed */
	unlink(db);
	rmdir(dir);
	free(db);
	free(dir);
	return ret;
}

bool ift_query_is_db(const char *path)
{
	static const char magic[16] = "SQLite format 3";	/* with its NUL */
	char buf[16];
	/* O_NONBLOCK: a FIFO is no database, and must not hold the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	bool is;

	if (fd < 0)
		return false;
	is = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	     read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) &&
	     !memcmp(buf, magic, sizeof(buf));
	close(fd);
	return is;
}

/* True when TAIL holds nothing but blanks, semicolons and comments. */
static bool only_blanks(struct ift_query *q, const char *tail)
{
	sqlite3_stmt *st = NULL;
	const char *next = NULL;

	while (tail && *tail) {
		if (sqlite3_prepare_v2(q->db, tail, -1, &st, &next) != SQLITE_OK)
			return false;	/* something, and not even SQL */
		if (st) {
			sqlite3_finalize(st);
			return false;
		}
		if (next == tail)
			break;
		tail = next;
	}
	return true;
}

int ift_query_prepare(struct ift_query *q, const char *sql,
		      const struct ift_export_opts *opts, sqlite3_stmt **out)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int rc;

	*out = NULL;
	q->denied = false;
	q->denied_fn[0] = 0;
	rc = sqlite3_prepare_v2(q->db, sql, -1, &st, &tail);
	if (rc != SQLITE_OK) {
		if (q->denied && q->denied_fn[0])
			return qfail(opts, -EPERM, "function '%s' is not allowed in read-only "
				     "SQL (docs/sql.md lists those that are)", q->denied_fn);
		if (q->denied)
			return qfail(opts, -IFT_E_READONLY, "%s", ift_strerror(-IFT_E_READONLY));
		return qfail(opts, -IFT_E_SQL, "%s", sqlite3_errmsg(q->db));
	}
	if (!st)
		return qfail(opts, -EINVAL, "no SQL statement");
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		return qfail(opts, -IFT_E_READONLY, "%s", ift_strerror(-IFT_E_READONLY));
	}
	/* the denied flag must not be reset by the tail's prepare: a second
	   statement is refused whatever it is */
	if (!only_blanks(q, tail)) {
		sqlite3_finalize(st);
		return qfail(opts, -EINVAL, "one SQL statement at a time");
	}
	*out = st;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* SQLite calls it every few thousand VM steps; non-zero interrupts. */
static int past_deadline(void *ctx)
{
	const struct ift_query *q = ctx;

	return q->deadline_ns && mono_ns() > q->deadline_ns;
}

void ift_query_set_timeout(struct ift_query *q, unsigned ms)
{
	q->deadline_ns = ms ? mono_ns() + (uint64_t)ms * 1000000 : 0;
	sqlite3_progress_handler(q->db, ms ? 4096 : 0, ms ? past_deadline : NULL, q);
}

const char *ift_query_errmsg(const struct ift_query *q)
{
	return sqlite3_errmsg(q->db);
}

sqlite3 *ift_query_db(struct ift_query *q)
{
	return q->db;
}

void ift_query_free(struct ift_query *q)
{
	if (!q)
		return;
	sqlite3_close(q->db);
	free(q);
}

char *ift_query_hex(const void *b, size_t len)
{
	const unsigned char *p = b;
	char *out = malloc(2 * len + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	out[2 * len] = 0;
	return out;
}

struct json_object *ift_query_json(struct sqlite3_stmt *st, int c, size_t max)
{
	size_t len;

	switch (sqlite3_column_type(st, c)) {
	case SQLITE_INTEGER:
		return json_object_new_int64(sqlite3_column_int64(st, c));
	case SQLITE_FLOAT:
		return json_object_new_double(sqlite3_column_double(st, c));
	case SQLITE_NULL:
		return NULL;
	case SQLITE_BLOB: {
		char *hex;
		json_object *o;

		len = (size_t)sqlite3_column_bytes(st, c);
		if (max && len > max / 2)
			len = max / 2;
		hex = ift_query_hex(sqlite3_column_blob(st, c), len);
		o = hex ? json_object_new_string(hex) : NULL;
		free(hex);
		return o;
	}
	default:
		len = (size_t)sqlite3_column_bytes(st, c);
		if (max && len > max)
			len = max;
		return ift_json_text_len((const char *)sqlite3_column_text(st, c), len);
	}
}
