// SPDX-License-Identifier: MIT
/*
 * A trace as a SQLite database: the schema of docs/sql.md.
 *
 * Every row of every table goes in, each through one prepared statement,
 * all in one transaction with the journal and fsync off: the database is
 * written to PATH.part and renamed only when complete, so a crash or a full
 * disk never leaves a half database under the final name, and a journal
 * would buy nothing.  Indexes are built after the rows (one sort each,
 * instead of a B-tree kept in order row by row).
 *
 * Names are resolved as rows go in (op names, the comm a thread had at that
 * time), so a query needs no join to read them.  The analysis report runs
 * (the scheduler state machine, the chains) rides along: each call gets its
 * on-CPU / run-queue / blocked split, each thread its figures, and the chains
 * are stored whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-export.h"
#include "ift-words.h"
#include "util/buf.h"
#include "util/outfile.h"

/* Raised whenever a table, column or view changes meaning (meta export.schema). */
#define SCHEMA_VERSION	"1"

static const char schema[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE trace(path TEXT, command TEXT, start_ts INTEGER, end_ts INTEGER,"
	" duration_ns INTEGER, events INTEGER, calls INTEGER, lost_events INTEGER,"
	" cpus INTEGER, finished INTEGER, damaged INTEGER);\n"
	"CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT, api TEXT, nargs INTEGER,"
	" args TEXT);\n"
	"CREATE TABLE libraries(path TEXT, kind TEXT, build_id TEXT, dev INTEGER,"
	" ino INTEGER, functions INTEGER);\n"
	"CREATE TABLE losses(cpu INTEGER PRIMARY KEY, overrun INTEGER,"
	" commit_overrun INTEGER, dropped INTEGER, read INTEGER);\n"
	"CREATE TABLE calls(id INTEGER PRIMARY KEY, ts INTEGER, dur_ns INTEGER,"
	" cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT, op_id INTEGER, op TEXT,"
	" ret INTEGER, flags INTEGER, no_return INTEGER, depth INTEGER,"
	" parent_id INTEGER, a0 INTEGER, a1 INTEGER, a2 INTEGER, a3 INTEGER,"
	" a4 INTEGER, a5 INTEGER, bytes INTEGER, on_cpu_ns INTEGER,"
	" runqueue_wait_ns INTEGER, blocked_ns INTEGER, max_off_cpu_ns INTEGER,"
	" involuntary_switches INTEGER, voluntary_switches INTEGER,"
	" page_allocs INTEGER, page_alloc_bytes INTEGER, stack_id INTEGER,"
	/* the names of 0.1, kept until 0.2 (docs/report.md, Names) */
	" runqueue_ns INTEGER, involuntary INTEGER, voluntary INTEGER);\n"
	"CREATE TABLE stacks(stack_id INTEGER, depth INTEGER, module TEXT,"
	" offset INTEGER, symbol TEXT, symoff INTEGER, flags INTEGER, frame TEXT,"
	" python INTEGER, line INTEGER, PRIMARY KEY(stack_id, depth));\n"
	"CREATE TABLE call_attrs(call_id INTEGER, relation TEXT, pid INTEGER,"
	" tid INTEGER, comm TEXT, count INTEGER, ns INTEGER);\n"
	"CREATE TABLE switches(ts INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" comm TEXT, prev_state INTEGER, state TEXT, preempted INTEGER,"
	" prev_prio INTEGER, next_pid INTEGER, next_tid INTEGER, next_comm TEXT,"
	" next_prio INTEGER);\n"
	"CREATE TABLE wakeups(ts INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" comm TEXT, kind TEXT, prio INTEGER, target_cpu INTEGER, waker_pid INTEGER,"
	" waker_tid INTEGER, waker_comm TEXT);\n"
	"CREATE TABLE page_allocs(ts INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" comm TEXT, \"order\" INTEGER, bytes INTEGER, gfp_flags INTEGER,"
	" migratetype INTEGER);\n"
	"CREATE TABLE task_events(ts INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" kind TEXT, child_pid INTEGER, child_tid INTEGER, comm TEXT, file TEXT);\n"
	"CREATE TABLE samples(ts INTEGER, metric TEXT, scope INTEGER, cpu INTEGER,"
	" value INTEGER);\n"
	"CREATE TABLE profile(ts INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" comm TEXT, stack_id INTEGER, kernel INTEGER, python INTEGER);\n"
	"CREATE TABLE gpu_samples(ts INTEGER, gpu INTEGER, metric TEXT, value INTEGER,"
	" span_ns INTEGER, pid INTEGER);\n"
	"CREATE TABLE threads(tid INTEGER, pid INTEGER, ppid INTEGER, comm TEXT,"
	" is_thread INTEGER, start_ts INTEGER, exit_ts INTEGER, role TEXT,"
	" first_seen_ts INTEGER, last_seen_ts INTEGER, on_cpu_ns INTEGER,"
	" runqueue_wait_ns INTEGER, blocked_ns INTEGER,"
	" involuntary_switches INTEGER, voluntary_switches INTEGER,"
	" wakeups INTEGER, max_off_cpu_ns INTEGER, max_off_cpu_at_ts INTEGER,"
	" page_allocs INTEGER, page_alloc_bytes INTEGER, cuda_calls INTEGER,"
	" cuda_ns INTEGER,"
	" first_ts INTEGER, last_ts INTEGER, involuntary INTEGER, voluntary INTEGER,"
	" max_off_cpu_ts INTEGER);\n"
	"CREATE TABLE thread_names(tid INTEGER, pid INTEGER, ts INTEGER, comm TEXT);\n"
	"CREATE TABLE processes(pid INTEGER, ppid INTEGER, comm TEXT, names TEXT,"
	" start_ts INTEGER, exit_ts INTEGER, role TEXT);\n"
	"CREATE TABLE chains(rank INTEGER PRIMARY KEY, severity TEXT, cause TEXT,"
	" phase TEXT, op TEXT, pid INTEGER, tid INTEGER, comm TEXT, p50_ns INTEGER,"
	" p99_ns INTEGER, tail_ratio REAL, cost_ns INTEGER, wall_ns INTEGER,"
	" summary TEXT, recommendations TEXT, stage TEXT);\n"
	"CREATE TABLE chain_steps(chain INTEGER, seq INTEGER, t_ns INTEGER,"
	" ts INTEGER, layer TEXT, text TEXT);\n"
	"CREATE TABLE chain_evidence(chain INTEGER, key TEXT, value INTEGER);\n"
	"CREATE TABLE chain_tasks(chain INTEGER, relation TEXT, pid INTEGER,"
	" tid INTEGER, comm TEXT, role TEXT, outside INTEGER, count INTEGER,"
	" ns INTEGER, share_permille INTEGER);\n"
	"CREATE TABLE chain_recommendations(chain INTEGER, seq INTEGER, text TEXT);\n"
	"CREATE TABLE chain_gpu(chain INTEGER, idle_ns INTEGER, idle_permille INTEGER,"
	" covered_ns INTEGER, busy_ns INTEGER, not_waiting INTEGER);\n"
	"CREATE TABLE gpu_stages(stage TEXT, covered_ns INTEGER, busy_ns INTEGER,"
	" idle_ns INTEGER, explained_ns INTEGER, unexplained_ns INTEGER);\n";

/*
 * Percentiles as the report computes them: nearest rank, the value at
 * position ceil(P * n / 100) of the sorted durations, over every call of
 * the group (nested and unreturned ones too).  Window functions keep it
 * plain SQL, so the views work in any sqlite3 shell.
 */
#define OP_SUMMARY(name, keys, keycols)						\
	"CREATE VIEW " name " AS\n"						\
	"WITH r AS (SELECT " keys " op_id, op, dur_ns, (depth > 0 OR flags & 2) AS nested,"\
	" ret != 0 AS failed,"							\
	" ROW_NUMBER() OVER (PARTITION BY " keys " op_id ORDER BY dur_ns) AS rn,"	\
	" COUNT(*) OVER (PARTITION BY " keys " op_id) AS n FROM calls)\n"	\
	"SELECT " keycols " op, (SELECT api FROM ops WHERE ops.id = r.op_id) AS api,"\
	" COUNT(*) AS calls, SUM(nested) AS nested_calls, SUM(failed) AS errors,"	\
	" SUM(dur_ns) AS total_ns, SUM(dur_ns) / COUNT(*) AS mean_ns,"		\
	" MIN(dur_ns) AS min_ns,"						\
	" MAX(CASE WHEN rn = (50 * n + 99) / 100 THEN dur_ns END) AS p50_ns,"	\
	" MAX(CASE WHEN rn = (95 * n + 99) / 100 THEN dur_ns END) AS p95_ns,"	\
	" MAX(CASE WHEN rn = (99 * n + 99) / 100 THEN dur_ns END) AS p99_ns,"	\
	" MAX(dur_ns) AS max_ns\n"						\
	"FROM r GROUP BY " keys " op_id ORDER BY " keys " total_ns DESC, op_id;\n"

static const char views[] =
	OP_SUMMARY("op_summary", "", "")
	OP_SUMMARY("process_op_summary", "pid,", "pid,")
	OP_SUMMARY("thread_op_summary", "pid, tid,", "pid, tid,")
	/* what the report's process tables print: the threads' figures summed,
	   the longest stall the longest of any thread */
	"CREATE VIEW process_summary AS\n"
	"SELECT t.pid,"
	" (SELECT comm FROM processes p WHERE p.pid = t.pid"
	"  ORDER BY p.start_ts DESC LIMIT 1) AS comm,"
	" (SELECT role FROM processes p WHERE p.pid = t.pid"
	"  ORDER BY p.start_ts DESC LIMIT 1) AS role,"
	" COUNT(*) AS thread_count, SUM(cuda_calls) AS cuda_calls,"
	" SUM(cuda_ns) AS cuda_ns, SUM(on_cpu_ns) AS on_cpu_ns,"
	" SUM(runqueue_wait_ns) AS runqueue_wait_ns, SUM(blocked_ns) AS blocked_ns,"
	" SUM(involuntary_switches) AS involuntary_switches,"
	" SUM(voluntary_switches) AS voluntary_switches, SUM(wakeups) AS wakeups,"
	" MAX(max_off_cpu_ns) AS max_off_cpu_ns, SUM(page_allocs) AS page_allocs,"
	" SUM(page_alloc_bytes) AS page_alloc_bytes,"
	" COUNT(*) AS threads, SUM(involuntary_switches) AS involuntary,"
	" SUM(voluntary_switches) AS voluntary\n"
	"FROM threads t WHERE t.on_cpu_ns IS NOT NULL GROUP BY t.pid\n"
	"ORDER BY cuda_ns DESC, runqueue_wait_ns + blocked_ns DESC, t.pid;\n"
	/* each op's call sites (record --stack), as report lists them: the
	   frames innermost first, joined */
	"CREATE VIEW call_sites AS\n"
	"SELECT op, stack_id, COUNT(*) AS calls, SUM(dur_ns) AS total_ns,"
	" (SELECT group_concat(frame, ' <- ') FROM (SELECT frame FROM stacks s"
	" WHERE s.stack_id = c.stack_id ORDER BY depth)) AS frames\n"
	"FROM calls c WHERE stack_id IS NOT NULL GROUP BY op_id, stack_id\n"
	"ORDER BY total_ns DESC, op_id, stack_id;\n"
	/* the lines of Python that made each op's calls (record --py-stack),
	   as report's Python call sites: the innermost Python frame of the
	   sites of the calls whose Python frames were read in flight */
	"CREATE VIEW py_call_sites AS\n"
	"SELECT c.op, s.module AS file, s.symbol AS function, s.line, s.frame,"
	" COUNT(*) AS calls, SUM(c.dur_ns) AS total_ns,"
	" COUNT(DISTINCT c.stack_id) AS sites\n"
	"FROM calls c\n"
	"JOIN (SELECT stack_id, MIN(depth) AS depth FROM stacks WHERE python"
	" GROUP BY stack_id) p ON p.stack_id = c.stack_id\n"
	"JOIN stacks s ON s.stack_id = p.stack_id AND s.depth = p.depth\n"
	"WHERE c.flags & 4\n"
	"GROUP BY c.op_id, s.module, s.symbol, s.line\n"
	"ORDER BY total_ns DESC, c.op_id, file, function, line;\n"
	/* every event with its offset from the trace start, as the report
	   gives times */
	"CREATE VIEW events AS\n"
	"SELECT ts, ts - (SELECT start_ts FROM trace) AS t_ns, 'call' AS type, cpu, pid,"
	" tid, comm, op AS what FROM calls\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'switch', cpu, pid, tid,"
	" comm, state || ' -> ' || next_comm FROM switches\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'wakeup', cpu, pid, tid,"
	" comm, kind || ' by ' || waker_comm FROM wakeups\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'page_alloc', cpu, pid,"
	" tid, comm, 'order ' || \"order\" FROM page_allocs\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'task', cpu, pid, tid,"
	" comm, kind FROM task_events\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'sample', NULL, NULL,"
	" NULL, NULL, metric || '=' || value FROM samples\n"
	"UNION ALL SELECT ts, ts - (SELECT start_ts FROM trace), 'gpu_sample', NULL, pid,"
	" NULL, NULL, 'gpu' || gpu || ' ' || metric || '=' || value FROM gpu_samples;\n";

/* After the rows: one sort per index. */
static const char indexes[] =
	"CREATE INDEX calls_ts ON calls(ts);\n"
	"CREATE INDEX calls_tid ON calls(tid, ts);\n"
	"CREATE INDEX calls_op ON calls(op_id, dur_ns);\n"
	"CREATE INDEX call_attrs_call ON call_attrs(call_id);\n"
	"CREATE INDEX calls_stack ON calls(stack_id);\n"
	"CREATE INDEX switches_ts ON switches(ts);\n"
	"CREATE INDEX switches_tid ON switches(tid, ts);\n"
	"CREATE INDEX switches_next_tid ON switches(next_tid, ts);\n"
	"CREATE INDEX wakeups_ts ON wakeups(ts);\n"
	"CREATE INDEX wakeups_tid ON wakeups(tid, ts);\n"
	"CREATE INDEX page_allocs_ts ON page_allocs(ts);\n"
	"CREATE INDEX page_allocs_tid ON page_allocs(tid, ts);\n"
	"CREATE INDEX task_events_ts ON task_events(ts);\n"
	"CREATE INDEX samples_ts ON samples(metric, ts);\n"
	"CREATE INDEX profile_tid ON profile(tid, ts);\n"
	"CREATE INDEX gpu_samples_ts ON gpu_samples(gpu, metric, ts);\n"
	"CREATE INDEX threads_tid ON threads(tid);\n"
	"CREATE INDEX threads_pid ON threads(pid);\n"
	"CREATE INDEX processes_pid ON processes(pid);\n";

/* The insert of each trace table: as many ?s as ins_*() binds. */
static const char *const insert_sql[IFT_T_NR] = {
	[IFT_T_CALLS] = "INSERT INTO calls VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
			"?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[IFT_T_SWITCHES] = "INSERT INTO switches VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[IFT_T_WAKEUPS] = "INSERT INTO wakeups VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[IFT_T_PAGE_ALLOCS] = "INSERT INTO page_allocs VALUES(?,?,?,?,?,?,?,?,?)",
	[IFT_T_TASKS] = "INSERT INTO task_events VALUES(?,?,?,?,?,?,?,?,?)",
	[IFT_T_SAMPLES] = "INSERT INTO samples VALUES(?,?,?,?,?)",
	[IFT_T_PROFILE] = "INSERT INTO profile VALUES(?,?,?,?,?,?,?,?)",
	[IFT_T_GPU] = "INSERT INTO gpu_samples VALUES(?,?,?,?,?,?)",
};

struct exp {
	struct ift_trace *t;
	sqlite3 *db;
	const struct ift_export_opts *opts;
	struct ift_report m;	/* the analysis and chains, as report makes them */
	sqlite3_stmt *ins[IFT_T_NR];
	sqlite3_stmt *attr;
	size_t ncalls;		/* rows of calls so far */
	/* the last thread whose name was looked up: rows come in runs */
	uint32_t last_tid;
	const struct ift_task *last_task;
};

static int fail(const struct exp *x, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct exp *x, int err, const char *fmt, ...)
{
	va_list ap;

	if (x->opts && x->opts->errbuf && x->opts->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->opts->errbuf, x->opts->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* A SQLite failure: its message, and -ENOSPC for a full disk. */
static int sql_fail(const struct exp *x, int rc)
{
	int err = rc == SQLITE_FULL ? -ENOSPC : rc == SQLITE_NOMEM ? -ENOMEM :
		  rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN ? -EIO : -IFT_E_SQL;

	return fail(x, err, "%s", x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
}

static int exec(struct exp *x, const char *sql)
{
	int rc = sqlite3_exec(x->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sql_fail(x, rc);
}

static int prepare(struct exp *x, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v3(x->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);

	return rc == SQLITE_OK ? 0 : sql_fail(x, rc);
}

/* Steps an insert whose values are bound, and makes it ready for the next. */
static int step(struct exp *x, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(x, rc);
}

/* Binding helpers: the column index advances with each call. */
static void b_i64(sqlite3_stmt *st, int *i, int64_t v)
{
	sqlite3_bind_int64(st, ++*i, v);
}

/* A u64 column: the bits as a signed 64-bit value (docs/sql.md says so). */
static void b_u64(sqlite3_stmt *st, int *i, uint64_t v)
{
	sqlite3_bind_int64(st, ++*i, (int64_t)v);
}

/*
 * A TEXT column holds valid UTF-8 (Parquet's string columns are read from
 * these tables): a string of the trace is shown under IFT_TEXT_UTF8's rule,
 * a copy only where the rule changes it.  KEEP: SQLITE_STATIC for a string
 * that outlives the statement's step, else SQLITE_TRANSIENT.
 */
static void b_text(sqlite3_stmt *st, int *i, const char *s, sqlite3_destructor_type keep)
{
	size_t len = s ? strlen(s) : 0;
	char *copy = NULL;
	const char *t = s ? ift_text_utf8(s, len, IFT_TEXT_UTF8, &copy) : NULL;

	if (copy)
		sqlite3_bind_text(st, ++*i, copy, -1, free);
	else if (t)
		sqlite3_bind_text(st, ++*i, s, (int)len, keep);
	else	/* none, or out of memory for a few KiB: the export fails soon after */
		sqlite3_bind_null(st, ++*i);
}

/* Strings owned by the trace outlive the statement's step: no copy. */
static void b_str(sqlite3_stmt *st, int *i, const char *s)
{
	b_text(st, i, s, SQLITE_STATIC);
}

static void b_null(sqlite3_stmt *st, int *i)
{
	sqlite3_bind_null(st, ++*i);
}

/* The name TID had at TS, as dump prints it. */
static const char *comm_at(struct exp *x, uint64_t tid, uint64_t ts)
{
	const struct ift_task *task = x->last_task;

	if (tid == 0)
		return IFT_IDLE_COMM;
	/* the task table is sorted by tid then start: a reused tid is another
	   entry, so the cached one serves only while TS is inside its life */
	if (!task || x->last_tid != tid || ts < task->start_ts ||
	    (task->flags & IFT_TASK_F_EXITED && ts > task->exit_ts)) {
		task = ift_trace_task_find(x->t, (uint32_t)tid, ts);
		x->last_tid = (uint32_t)tid;
		x->last_task = task;
	}
	return task ? ift_task_comm_at(task, ts) : "";
}

static void b_common(struct exp *x, sqlite3_stmt *st, int *i, const uint64_t *r,
		     bool comm)
{
	b_u64(st, i, r[IFT_C_TS]);
	b_u64(st, i, r[IFT_C_CPU]);
	b_u64(st, i, r[IFT_C_PID]);
	b_u64(st, i, r[IFT_C_TID]);
	if (comm)
		b_str(st, i, comm_at(x, r[IFT_C_TID], r[IFT_C_TS]));
}

static int ins_call(struct exp *x, sqlite3_stmt *st, const uint64_t *r)
{
	const struct ift_op *op = ift_trace_op(x->t, r[IFT_CALL_OP]);
	uint64_t id = ++x->ncalls;
	const struct ift_call_info *c = x->m.a ? ift_analysis_call_of_row(x->m.a, id - 1, r) : NULL;
	int i = 0, ret;

	b_u64(st, &i, id);
	b_u64(st, &i, r[IFT_C_TS]);
	b_u64(st, &i, r[IFT_CALL_DUR]);
	b_u64(st, &i, r[IFT_C_CPU]);
	b_u64(st, &i, r[IFT_C_PID]);
	b_u64(st, &i, r[IFT_C_TID]);
	b_str(st, &i, comm_at(x, r[IFT_C_TID], r[IFT_C_TS]));
	b_u64(st, &i, r[IFT_CALL_OP]);
	b_str(st, &i, op ? op->name : NULL);
	b_i64(st, &i, (int64_t)r[IFT_CALL_RET]);
	b_u64(st, &i, r[IFT_CALL_FLAGS]);
	b_i64(st, &i, !!(r[IFT_CALL_FLAGS] & IFT_CALL_F_NO_RETURN));
	b_u64(st, &i, r[IFT_CALL_DEPTH]);
	if (c && c->parent)
		b_u64(st, &i, c->parent);
	else
		b_null(st, &i);
	for (unsigned k = 0; k < IFT_CALL_MAX_ARGS; k++) {
		if (op && k < op->nargs)
			b_u64(st, &i, r[IFT_CALL_A0 + k]);
		else
			b_null(st, &i);
	}
	if (c) {
		b_u64(st, &i, c->bytes);
		b_u64(st, &i, c->on_cpu_ns);
		b_u64(st, &i, c->runqueue_wait_ns);
		b_u64(st, &i, c->blocked_ns);
		b_u64(st, &i, c->max_off_cpu_ns);
		b_u64(st, &i, c->involuntary);
		b_u64(st, &i, c->voluntary);
		b_u64(st, &i, c->page_allocs);
		b_u64(st, &i, c->page_alloc_bytes);
	} else {
		for (int k = 0; k < 9; k++)
			b_null(st, &i);
	}
	if (r[IFT_CALL_STACK])
		b_u64(st, &i, r[IFT_CALL_STACK]);
	else
		b_null(st, &i);
	/* the old names: runqueue_ns, involuntary, voluntary */
	if (c) {
		b_u64(st, &i, c->runqueue_wait_ns);
		b_u64(st, &i, c->involuntary);
		b_u64(st, &i, c->voluntary);
	} else {
		for (int k = 0; k < 3; k++)
			b_null(st, &i);
	}
	ret = step(x, st);
	if (ret < 0 || !c)
		return ret;

	/* who ran while it waited, who woke it */
	for (uint32_t k = 0; k < c->nattr; k++) {
		const struct ift_call_attr *at = &ift_analysis_call_attrs(x->m.a, c)[k];

		i = 0;
		b_u64(x->attr, &i, id);
		b_str(x->attr, &i, at->kind == IFT_ATTR_RAN ? "ran" : "woke");
		b_u64(x->attr, &i, at->pid);
		b_u64(x->attr, &i, at->tid);
		b_str(x->attr, &i, ift_analysis_comm(x->m.a, at->tid, c->ts));
		b_u64(x->attr, &i, at->count);
		b_u64(x->attr, &i, at->ns);
		ret = step(x, x->attr);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int ins_row(struct exp *x, unsigned table, const uint64_t *r)
{
	static const char *const wake_kind[] = { "?", "waking", "wakeup", "wakeup_new" };
	static const char *const task_kind[] = { "?", "fork", "clone", "exec", "comm", "exit" };
	sqlite3_stmt *st = x->ins[table];
	char state[32];
	int i = 0;

	switch (table) {
	case IFT_T_CALLS:
		return ins_call(x, st, r);
	case IFT_T_SWITCHES:
		b_common(x, st, &i, r, true);
		b_u64(st, &i, r[IFT_SW_PREV_STATE]);
		ift_task_state_str(r[IFT_SW_PREV_STATE], state, sizeof(state));
		sqlite3_bind_text(st, ++i, state, -1, SQLITE_TRANSIENT);
		/* as the state machine reads it: TASK_REPORT bits clear */
		b_i64(st, &i, ift_task_state_runnable(r[IFT_SW_PREV_STATE]));
		b_u64(st, &i, r[IFT_SW_PREV_PRIO]);
		b_u64(st, &i, r[IFT_SW_NEXT_PID]);
		b_u64(st, &i, r[IFT_SW_NEXT_TID]);
		b_str(st, &i, comm_at(x, r[IFT_SW_NEXT_TID], r[IFT_C_TS]));
		b_u64(st, &i, r[IFT_SW_NEXT_PRIO]);
		break;
	case IFT_T_WAKEUPS:
		b_common(x, st, &i, r, true);
		b_str(st, &i, wake_kind[r[IFT_WK_KIND] <= 3 ? r[IFT_WK_KIND] : 0]);
		b_u64(st, &i, r[IFT_WK_PRIO]);
		b_u64(st, &i, r[IFT_WK_TARGET_CPU]);
		b_u64(st, &i, r[IFT_WK_WAKER_PID]);
		b_u64(st, &i, r[IFT_WK_WAKER_TID]);
		b_str(st, &i, comm_at(x, r[IFT_WK_WAKER_TID], r[IFT_C_TS]));
		break;
	case IFT_T_PAGE_ALLOCS:
		b_common(x, st, &i, r, true);
		b_u64(st, &i, r[IFT_PG_ORDER]);
		if (r[IFT_PG_ORDER] < IFT_PAGE_ORDER_MAX)
			b_u64(st, &i, ift_trace_alloc_bytes(x->t, r[IFT_PG_ORDER]));
		else
			b_null(st, &i);
		b_u64(st, &i, r[IFT_PG_GFP]);
		b_u64(st, &i, r[IFT_PG_MIGRATETYPE]);
		break;
	case IFT_T_TASKS:
		b_common(x, st, &i, r, false);
		b_str(st, &i, task_kind[r[IFT_TK_KIND] <= 5 ? r[IFT_TK_KIND] : 0]);
		b_u64(st, &i, r[IFT_TK_CHILD_PID]);
		b_u64(st, &i, r[IFT_TK_CHILD_TID]);
		b_str(st, &i, ift_trace_string(x->t, r[IFT_TK_COMM]));
		b_str(st, &i, ift_trace_string(x->t, r[IFT_TK_FILE]));
		break;
	case IFT_T_SAMPLES:
		/* a task's totals (--page-allocs=count) are its row of threads */
		if (ift_sample_of_task(r))
			return 0;
		b_u64(st, &i, r[IFT_C_TS]);
		b_str(st, &i, ift_trace_string(x->t, r[IFT_SM_METRIC]));
		b_u64(st, &i, r[IFT_SM_SCOPE]);
		if (r[IFT_SM_SCOPE])
			b_u64(st, &i, r[IFT_SM_SCOPE] - 1);
		else
			b_null(st, &i);
		b_i64(st, &i, (int64_t)r[IFT_SM_VALUE]);
		break;
	case IFT_T_PROFILE:
		b_common(x, st, &i, r, true);
		if (r[IFT_PF_STACK])
			b_u64(st, &i, r[IFT_PF_STACK]);
		else
			b_null(st, &i);
		b_u64(st, &i, !!(r[IFT_PF_FLAGS] & IFT_PF_F_KERNEL));
		b_u64(st, &i, !!(r[IFT_PF_FLAGS] & IFT_PF_F_PY));
		break;
	case IFT_T_GPU:
		b_u64(st, &i, r[IFT_C_TS]);
		b_u64(st, &i, r[IFT_GS_GPU]);
		b_str(st, &i, ift_trace_string(x->t, r[IFT_GS_METRIC]));
		b_i64(st, &i, (int64_t)r[IFT_GS_VALUE]);
		b_u64(st, &i, r[IFT_GS_SPAN]);
		if (r[IFT_C_PID])
			b_u64(st, &i, r[IFT_C_PID]);
		else
			b_null(st, &i);
		break;
	default:
		return 0;
	}
	return step(x, st);
}

/* Every row of every table, one table after the other (each in ts order). */
static int export_rows(struct exp *x)
{
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		struct ift_cursor *cur;
		struct ift_event ev;
		int ret;

		ret = prepare(x, insert_sql[tb], &x->ins[tb]);
		if (ret < 0)
			return ret;
		cur = ift_cursor_new(x->t, 1U << tb, 0);
		if (!cur)
			return fail(x, -errno, "cannot read the trace: %s", strerror(errno));
		while ((ret = ift_cursor_next(cur, &ev)) > 0) {
			ret = ins_row(x, ev.table, ev.row);
			if (ret < 0)
				break;
		}
		ift_cursor_free(cur);
		if (ret < 0) {
			/* a trace error has no message yet */
			if (x->opts && x->opts->errbuf && x->opts->errlen &&
			    !x->opts->errbuf[0])
				fail(x, ret, "cannot read the trace: %s", ift_strerror(ret));
			return ret;
		}
	}
	return 0;
}

/* ---- the small tables --------------------------------------------- */

static int ins_meta(struct exp *x, sqlite3_stmt *st, const char *key, const char *value)
{
	int i = 0;

	b_str(st, &i, key);
	b_text(st, &i, value, SQLITE_TRANSIENT);
	return step(x, st);
}

static int export_meta(struct exp *x, const char *path)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(x->m.a);
	const struct ift_recovery *rec = ift_trace_recovery(x->t);
	sqlite3_stmt *st;
	char buf[64];
	int ret, i = 0;

	ret = prepare(x, "INSERT OR REPLACE INTO meta VALUES(?,?)", &st);
	if (ret < 0)
		return ret;
	for (size_t k = 0; k < ift_trace_meta_count(x->t) && ret >= 0; k++) {
		const char *key, *value;

		ift_trace_meta_at(x->t, k, &key, &value);
		ret = ins_meta(x, st, key, value);
	}
	/* what the export adds, under its own prefix */
	if (ret >= 0)
		ret = ins_meta(x, st, "export.schema", SCHEMA_VERSION);
	if (ret >= 0)
		ret = ins_meta(x, st, "export.trace", path);
	snprintf(buf, sizeof(buf), "%" PRIu64, s->start_ts);
	if (ret >= 0)
		ret = ins_meta(x, st, "trace.start_ts", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, s->end_ts);
	if (ret >= 0)
		ret = ins_meta(x, st, "trace.end_ts", buf);
	sqlite3_finalize(st);
	if (ret < 0)
		return ret;

	ret = prepare(x, "INSERT INTO trace VALUES(?,?,?,?,?,?,?,?,?,?,?)", &st);
	if (ret < 0)
		return ret;
	b_str(st, &i, path);
	b_str(st, &i, s->command);
	b_u64(st, &i, s->start_ts);
	b_u64(st, &i, s->end_ts);
	b_u64(st, &i, s->end_ts - s->start_ts);
	b_u64(st, &i, s->events);
	b_u64(st, &i, s->calls);
	b_u64(st, &i, s->lost_events);
	b_u64(st, &i, s->cpus);
	b_i64(st, &i, rec->finished);
	b_i64(st, &i, rec->damaged);
	ret = step(x, st);
	sqlite3_finalize(st);
	return ret;
}

static int export_ops(struct exp *x)
{
	sqlite3_stmt *st;
	int ret;

	ret = prepare(x, "INSERT INTO ops VALUES(?,?,?,?,?)", &st);
	for (size_t id = 1; ret >= 0 && id <= ift_trace_op_count(x->t); id++) {
		const struct ift_op *op = ift_trace_op(x->t, id);
		char args[512] = "";
		size_t n = 0;
		int i = 0;

		if (!op)
			continue;
		for (unsigned k = 0; k < op->nargs; k++)
			n = ift_appendf(args, sizeof(args), n, "%s%s", k ? "," : "", op->args[k]);
		b_u64(st, &i, id);
		b_str(st, &i, op->name);
		b_str(st, &i, ift_api_name(op->api));
		b_u64(st, &i, op->nargs);
		b_text(st, &i, args, SQLITE_TRANSIENT);
		ret = step(x, st);
	}
	sqlite3_finalize(st);
	if (ret < 0)
		return ret;

	ret = prepare(x, "INSERT INTO libraries VALUES(?,?,?,?,?,?)", &st);
	for (size_t k = 0; ret >= 0 && k < ift_trace_library_count(x->t); k++) {
		const struct ift_library *lib = ift_trace_library(x->t, k);
		char id[128] = "";
		int i = 0;

		for (size_t b = 0; b < lib->build_id_len && b < 63; b++)
			snprintf(id + 2 * b, 3, "%02x", lib->build_id[b]);
		b_str(st, &i, lib->path);
		b_str(st, &i, lib->kind);
		sqlite3_bind_text(st, ++i, id, -1, SQLITE_TRANSIENT);
		b_u64(st, &i, lib->dev);
		b_u64(st, &i, lib->ino);
		b_u64(st, &i, lib->functions);
		ret = step(x, st);
	}
	sqlite3_finalize(st);
	if (ret < 0)
		return ret;

	ret = prepare(x, "INSERT OR REPLACE INTO losses VALUES(?,?,?,?,?)", &st);
	for (size_t k = 0; ret >= 0 && k < ift_trace_loss_count(x->t); k++) {
		const struct ift_loss *l = ift_trace_loss(x->t, k);
		int i = 0;

		b_u64(st, &i, l->cpu);
		b_u64(st, &i, l->overrun);
		b_u64(st, &i, l->commit_overrun);
		b_u64(st, &i, l->dropped);
		b_u64(st, &i, l->read);
		ret = step(x, st);
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * The call sites (record --stack), one row per frame, innermost first in
 * the order of the call chain: the Python frames (record --py-stack) where
 * they called the native ones (ift_stack_parts()), as report shows them.
 */
static int export_stacks(struct exp *x)
{
	sqlite3_stmt *st;
	int ret;

	if (!ift_trace_stack_count(x->t))
		return 0;
	ret = prepare(x, "INSERT INTO stacks VALUES(?,?,?,?,?,?,?,?,?,?)", &st);
	for (uint64_t id = 1; ret >= 0 && id <= ift_trace_stack_count(x->t); id++) {
		const struct ift_stack *sk = ift_trace_stack(x->t, id);
		struct ift_stack_parts parts;

		/* a site the file lacks (a recording cut short) has no frames */
		ift_stack_parts(sk, &parts);
		for (unsigned k = 0; ret >= 0 && k < parts.nframes; k++) {
			const struct ift_frame *f = &sk->frames[ift_stack_chain_index(&parts, k)];
			bool py = f->flags & IFT_FRAME_F_PYSRC;
			char line[512];
			int i = 0;

			ift_frame_format(f, line, sizeof(line));
			b_u64(st, &i, id);
			b_u64(st, &i, k);
			if (f->module[0])
				b_str(st, &i, f->module);
			else
				b_null(st, &i);
			b_u64(st, &i, f->offset);
			if (f->symbol[0])
				b_str(st, &i, f->symbol);
			else
				b_null(st, &i);
			b_u64(st, &i, f->symoff);
			b_u64(st, &i, f->flags);
			b_text(st, &i, line, SQLITE_TRANSIENT);
			b_u64(st, &i, py);
			if (py && f->offset)
				b_u64(st, &i, f->offset);
			else
				b_null(st, &i);
			ret = step(x, st);
		}
	}
	sqlite3_finalize(st);
	return ret;
}

/* Analysis threads by their task, to find each task's figures in log n. */
struct by_task {
	const struct ift_task *task;
	const struct ift_thread_info *th;
};

static int cmp_by_task(const void *p, const void *q)
{
	uintptr_t a = (uintptr_t)((const struct by_task *)p)->task;
	uintptr_t b = (uintptr_t)((const struct by_task *)q)->task;

	return a < b ? -1 : a > b;
}

static const struct ift_thread_info *thread_of(const struct by_task *v, size_t n,
						const struct ift_task *tk)
{
	struct by_task key = { .task = tk };
	const struct by_task *f = bsearch(&key, v, n, sizeof(*v), cmp_by_task);

	return f ? f->th : NULL;
}

/* Tasks by pid, leaders first, then in table order: the first of each pid
   names the process when its leader was never seen. */
static int cmp_by_pid(const void *p, const void *q)
{
	const struct ift_task *a = *(const struct ift_task *const *)p;
	const struct ift_task *b = *(const struct ift_task *const *)q;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if ((a->tid == a->pid) != (b->tid == b->pid))
		return a->tid == a->pid ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int ins_thread(struct exp *x, sqlite3_stmt *st, const struct ift_task *tk,
		      const struct ift_thread_info *th)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(x->m.a);
	uint64_t first, last;
	int i = 0;

	b_u64(st, &i, tk ? tk->tid : th->tid);
	b_u64(st, &i, tk ? tk->pid : th->pid);
	b_u64(st, &i, tk ? tk->ppid : th->ppid);
	b_str(st, &i, tk && tk->ncomms ? tk->comms[tk->ncomms - 1].comm : "");
	b_i64(st, &i, tk ? !!(tk->flags & IFT_TASK_F_THREAD) : th->tid != th->pid);
	if (tk && tk->flags & IFT_TASK_F_STARTED)
		b_u64(st, &i, tk->start_ts);
	else
		b_null(st, &i);
	if (tk && tk->flags & IFT_TASK_F_EXITED)
		b_u64(st, &i, tk->exit_ts);
	else
		b_null(st, &i);
	if (!th) {
		for (int k = 0; k < 15 + 5; k++)
			b_null(st, &i);
		return step(x, st);
	}
	first = s->start_ts + th->first_ns;
	last = s->start_ts + th->last_ns;
	b_str(st, &i, ift_role_name(th->role));
	b_u64(st, &i, first);
	b_u64(st, &i, last);
	b_u64(st, &i, th->sched.on_cpu_ns);
	b_u64(st, &i, th->sched.runqueue_wait_ns);
	b_u64(st, &i, th->sched.blocked_ns);
	b_u64(st, &i, th->sched.involuntary);
	b_u64(st, &i, th->sched.voluntary);
	b_u64(st, &i, th->sched.wakeups);
	b_u64(st, &i, th->sched.max_off_cpu_ns);
	if (th->sched.max_off_cpu_ns)
		b_u64(st, &i, s->start_ts + th->sched.max_off_cpu_at);
	else
		b_null(st, &i);
	b_u64(st, &i, th->sched.page_allocs);
	b_u64(st, &i, th->sched.page_alloc_bytes);
	b_u64(st, &i, th->cuda_calls);
	b_u64(st, &i, th->cuda_ns);
	/* the old names: first_ts, last_ts, involuntary, voluntary,
	   max_off_cpu_ts */
	b_u64(st, &i, first);
	b_u64(st, &i, last);
	b_u64(st, &i, th->sched.involuntary);
	b_u64(st, &i, th->sched.voluntary);
	if (th->sched.max_off_cpu_ns)
		b_u64(st, &i, s->start_ts + th->sched.max_off_cpu_at);
	else
		b_null(st, &i);
	return step(x, st);
}

/* Names joined by ", ", into a buffer the caller frees. */
static char *join_names(const struct ift_task *tk)
{
	size_t len = 1;
	char *s;

	for (unsigned k = 0; k < tk->ncomms; k++)
		len += strlen(tk->comms[k].comm) + 2;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = 0;
	for (unsigned k = 0; k < tk->ncomms; k++) {
		if (k)
			strcat(s, ", ");
		strcat(s, tk->comms[k].comm);
	}
	return s;
}

static int ins_process(struct exp *x, sqlite3_stmt *st, const struct ift_task *tk)
{
	const struct ift_process_info *p = ift_analysis_process_find(x->m.a, tk->pid);
	char *names = join_names(tk);
	int i = 0, ret;

	if (!names)
		return fail(x, -ENOMEM, "%s", strerror(ENOMEM));
	b_u64(st, &i, tk->pid);
	b_u64(st, &i, tk->ppid);
	b_str(st, &i, tk->ncomms ? tk->comms[tk->ncomms - 1].comm : "");
	b_str(st, &i, names);
	if (tk->flags & IFT_TASK_F_STARTED)
		b_u64(st, &i, tk->start_ts);
	else
		b_null(st, &i);
	if (tk->flags & IFT_TASK_F_EXITED)
		b_u64(st, &i, tk->exit_ts);
	else
		b_null(st, &i);
	b_str(st, &i, p ? ift_role_name(p->role) : NULL);
	ret = step(x, st);
	free(names);
	return ret;
}

/*
 * Threads and processes from the task table.  A process is its leader's
 * task (tid == pid, two rows for a reused pid); a pid whose leader the trace
 * never saw takes its first thread's entry.  Threads the analysis saw but
 * the table lacks come last.
 */
static int export_tasks(struct exp *x)
{
	sqlite3_stmt *th = NULL, *nm = NULL, *pr = NULL;
	size_t n = ift_trace_task_count(x->t), nth = ift_analysis_thread_count(x->m.a);
	const struct ift_task **byp = calloc(n + 1, sizeof(*byp));
	struct by_task *bt = calloc(nth + 1, sizeof(*bt));
	size_t nbt = 0;
	int ret;

	if (!byp || !bt) {
		free(byp);
		free(bt);
		return fail(x, -ENOMEM, "%s", strerror(ENOMEM));
	}
	for (size_t k = 0; k < nth; k++) {
		const struct ift_thread_info *ti = ift_analysis_thread(x->m.a, k);

		if (ti->task)
			bt[nbt++] = (struct by_task){ ti->task, ti };
	}
	qsort(bt, nbt, sizeof(*bt), cmp_by_task);

	ret = prepare(x, "INSERT INTO threads VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		      "?,?,?,?,?)",
		      &th);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO thread_names VALUES(?,?,?,?)", &nm);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO processes VALUES(?,?,?,?,?,?,?)", &pr);
	for (size_t k = 0; ret >= 0 && k < n; k++) {
		const struct ift_task *tk = ift_trace_task(x->t, k);

		byp[k] = tk;
		ret = ins_thread(x, th, tk, thread_of(bt, nbt, tk));
		for (unsigned c = 0; ret >= 0 && c < tk->ncomms; c++) {
			int i = 0;

			b_u64(nm, &i, tk->tid);
			b_u64(nm, &i, tk->pid);
			b_u64(nm, &i, tk->comms[c].ts);
			b_str(nm, &i, tk->comms[c].comm);
			ret = step(x, nm);
		}
	}
	for (size_t k = 0; ret >= 0 && k < nth; k++) {
		const struct ift_thread_info *ti = ift_analysis_thread(x->m.a, k);

		if (!ti->task)
			ret = ins_thread(x, th, NULL, ti);
	}
	if (ret >= 0)
		qsort(byp, n, sizeof(*byp), cmp_by_pid);
	for (size_t k = 0; ret >= 0 && k < n; k++) {
		bool first = !k || byp[k - 1]->pid != byp[k]->pid;

		if (byp[k]->tid == byp[k]->pid || first)
			ret = ins_process(x, pr, byp[k]);
	}
	sqlite3_finalize(th);
	sqlite3_finalize(nm);
	sqlite3_finalize(pr);
	free(byp);
	free(bt);
	return ret;
}

static int export_chains(struct exp *x)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(x->m.a);
	sqlite3_stmt *ch = NULL, *stp = NULL, *ev = NULL, *tk = NULL, *rec = NULL;
	int ret;

	ret = prepare(x, "INSERT INTO chains VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &ch);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO chain_steps VALUES(?,?,?,?,?,?)", &stp);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO chain_evidence VALUES(?,?,?)", &ev);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO chain_tasks VALUES(?,?,?,?,?,?,?,?,?,?)", &tk);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO chain_recommendations VALUES(?,?,?)", &rec);
	for (size_t k = 0; ret >= 0 && k < ift_chains_count(x->m.c); k++) {
		const struct ift_chain *c = ift_chains_get(x->m.c, k);
		size_t len = 1;
		char *recs;
		int i = 0;

		for (size_t r = 0; r < c->nrecs; r++)
			len += strlen(c->recs[r]) + 1;
		recs = calloc(1, len);
		if (!recs) {
			ret = fail(x, -ENOMEM, "%s", strerror(ENOMEM));
			break;
		}
		for (size_t r = 0; r < c->nrecs; r++) {
			if (r)
				strcat(recs, "\n");
			strcat(recs, c->recs[r]);
		}
		b_u64(ch, &i, k + 1);
		b_str(ch, &i, ift_severity_name(c->severity));
		b_str(ch, &i, ift_cause_name(c->cause));
		b_str(ch, &i, ift_phase_name(c->phase));
		b_str(ch, &i, c->op);
		b_u64(ch, &i, c->pid);
		b_u64(ch, &i, c->tid);
		b_str(ch, &i, ift_analysis_comm(x->m.a, c->tid, s->end_ts));
		b_u64(ch, &i, c->p50_ns);
		b_u64(ch, &i, c->p99_ns);
		sqlite3_bind_double(ch, ++i, c->tail_ratio);
		b_u64(ch, &i, c->cost_ns);
		b_u64(ch, &i, c->wall_ns);
		b_str(ch, &i, c->summary);
		b_str(ch, &i, recs);
		b_str(ch, &i, ift_stage_name(c->stage));
		ret = step(x, ch);
		free(recs);
		for (size_t j = 0; ret >= 0 && j < c->nsteps; j++) {
			i = 0;
			b_u64(stp, &i, k + 1);
			b_u64(stp, &i, j + 1);
			b_u64(stp, &i, c->steps[j].t_ns);
			b_u64(stp, &i, s->start_ts + c->steps[j].t_ns);
			b_str(stp, &i, c->steps[j].layer);
			b_str(stp, &i, c->steps[j].text);
			ret = step(x, stp);
		}
		for (size_t j = 0; ret >= 0 && j < c->nnums; j++) {
			i = 0;
			b_u64(ev, &i, k + 1);
			b_str(ev, &i, c->nums[j].key);
			b_u64(ev, &i, c->nums[j].value);
			ret = step(x, ev);
		}
		for (size_t j = 0; ret >= 0 && j < c->ntasks; j++) {
			const struct ift_chain_task *t = &c->tasks[j];

			i = 0;
			b_u64(tk, &i, k + 1);
			b_str(tk, &i, t->relation);
			b_u64(tk, &i, t->pid);
			b_u64(tk, &i, t->tid);
			b_str(tk, &i, t->comm);
			b_str(tk, &i, ift_role_name(t->role));
			b_i64(tk, &i, t->outside);
			b_u64(tk, &i, t->count);
			b_u64(tk, &i, t->ns);
			b_u64(tk, &i, t->share_permille);
			ret = step(x, tk);
		}
		for (size_t j = 0; ret >= 0 && j < c->nrecs; j++) {
			i = 0;
			b_u64(rec, &i, k + 1);
			b_u64(rec, &i, j + 1);
			b_str(rec, &i, c->recs[j]);
			ret = step(x, rec);
		}
	}
	sqlite3_finalize(ch);
	sqlite3_finalize(stp);
	sqlite3_finalize(ev);
	sqlite3_finalize(tk);
	sqlite3_finalize(rec);
	return ret;
}

/* The GPUs' idle time by stage and each chain's part of it (NVML), as
   report --json's gpu.stages and chains[].gpu: no rows when not measured. */
static int export_gpu(struct exp *x)
{
	sqlite3_stmt *cg = NULL, *gs = NULL;
	int ret = 0;

	if (!ift_analysis_gpu(x->m.a)->measured)
		return 0;
	ret = prepare(x, "INSERT INTO chain_gpu VALUES(?,?,?,?,?,?)", &cg);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO gpu_stages VALUES(?,?,?,?,?,?)", &gs);
	for (size_t k = 0; ret >= 0 && k < ift_chains_count(x->m.c); k++) {
		const struct ift_chain_gpu *g = &ift_chains_get(x->m.c, k)->gpu;
		int i = 0;

		b_u64(cg, &i, k + 1);
		b_u64(cg, &i, g->idle_ns);
		b_u64(cg, &i, g->idle_permille);
		b_u64(cg, &i, g->meanwhile.covered_ns);
		b_u64(cg, &i, g->meanwhile.busy_ns);
		b_i64(cg, &i, g->not_waiting);
		ret = step(x, cg);
	}
	for (int k = IFT_STAGE_STARTUP; ret >= 0 && k <= IFT_STAGE_TAIL; k++) {
		const struct ift_gpu_time *t = &ift_analysis_gpu(x->m.a)->counted[k];
		struct ift_gpu_idle idle;
		int i = 0;

		ift_chains_gpu_idle(x->m.c, (enum ift_stage)k, &idle);
		b_str(gs, &i, ift_stage_name((enum ift_stage)k));
		b_u64(gs, &i, t->covered_ns);
		b_u64(gs, &i, t->busy_ns);
		b_u64(gs, &i, idle.idle_ns);
		b_u64(gs, &i, idle.explained_ns);
		b_u64(gs, &i, idle.unexplained_ns);
		ret = step(x, gs);
	}
	sqlite3_finalize(cg);
	sqlite3_finalize(gs);
	return ret;
}

/* ---- the whole -------------------------------------------------------- */

/* The analysis and chains as report runs them: whole trace, no filter. */
static int analyze(struct exp *x)
{
	/* every call's row gets its breakdown */
	struct ift_analyze_opts aopts = { .keep_calls = true };
	int ret = ift_report_run(x->t, &aopts, NULL, &x->m);

	if (ret < 0)
		return fail(x, ret, "cannot analyze the trace: %s", ift_strerror(ret));
	return 0;
}

static int export_all(struct exp *x, const char *part, const char *trace_path)
{
	int ret, rc;

	/* one thread uses the connection: no mutex around every call */
	/* the file made for it: no link is followed to another */
	rc = sqlite3_open_v2(part, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(x, rc);
	/* nothing to roll back to: a failed export is removed whole */
	ret = exec(x, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		      " PRAGMA locking_mode=EXCLUSIVE;"
		      " PRAGMA cache_size=-65536; PRAGMA threads=4;");
	if (ret >= 0)
		ret = exec(x, "BEGIN");
	if (ret >= 0)
		ret = exec(x, schema);
	if (ret >= 0)
		ret = exec(x, views);
	if (ret >= 0)
		ret = prepare(x, "INSERT INTO call_attrs VALUES(?,?,?,?,?,?,?)", &x->attr);
	if (ret >= 0)
		ret = export_meta(x, trace_path);
	if (ret >= 0)
		ret = export_ops(x);
	if (ret >= 0)
		ret = export_rows(x);
	if (ret >= 0)
		ret = export_stacks(x);
	if (ret >= 0)
		ret = export_tasks(x);
	if (ret >= 0)
		ret = export_chains(x);
	if (ret >= 0)
		ret = export_gpu(x);
	if (ret >= 0)
		ret = exec(x, indexes);
	if (ret >= 0)
		ret = exec(x, "COMMIT");
	return ret;
}

int ift_export_sqlite(struct ift_trace *t, const char *path,
		      const struct ift_export_opts *opts)
{
	struct exp x = { .t = t, .opts = opts };
	struct ift_outfile of;
	int ret;

	if (opts && opts->errbuf && opts->errlen)
		opts->errbuf[0] = 0;
	/* made by us without following links (errno also says why a path
	   cannot be written; SQLite would only say that it cannot open it) */
	ret = ift_outfile_create(&of, path, false, 0, 0);
	if (ret < 0) {
		/* what is at PATH itself, or the .part beside it */
		if (ret == -IFT_E_NOT_FILE || ret == -EISDIR)
			ret = fail(&x, ret, "cannot write '%s': %s", path, ift_strerror(ret));
		else if (of.part)
			ret = fail(&x, ret, "cannot create '%s': %s", of.part, ift_strerror(ret));
		ift_outfile_release(&of);
		return ret;
	}

	/* what a damaged trace kept replaces nothing (trace.damaged says so) */
	of.keep = ift_trace_recovery(t)->damaged;
	ret = analyze(&x);
	if (ret >= 0)
		ret = export_all(&x, of.part, opts && opts->source ? opts->source : "");
	for (unsigned tb = 0; tb < IFT_T_NR; tb++)
		sqlite3_finalize(x.ins[tb]);
	sqlite3_finalize(x.attr);
	if (x.db && sqlite3_close(x.db) != SQLITE_OK && ret >= 0)
		ret = fail(&x, -EIO, "cannot close '%s'", of.part);
	ift_report_release(&x.m);
	if (ret >= 0 && (ret = ift_outfile_commit(&of)) < 0)
		ret = fail(&x, ret, "cannot rename '%s' to '%s': %s", of.part, path,
			   ift_strerror(ret));
	if (ret < 0)
		ift_outfile_remove(&of);
	ift_outfile_release(&of);
	return ret;
}
