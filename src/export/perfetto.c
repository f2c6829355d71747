// SPDX-License-Identifier: MIT
/*
 * A trace as a Chrome/Perfetto JSON timeline: docs/perfetto.md.
 *
 * One object with two keys that both importers know: "traceEvents" (CUDA
 * calls as complete "X" slices on their thread, counters, chains as
 * instants, process and thread names) and "systemTraceEvents" (every
 * switch and wake-up as an ftrace text line, from which Perfetto builds its
 * CPU tracks and each thread's running/runnable/sleeping state).  Both carry
 * the trace clock as it is: microseconds with three decimals in the JSON,
 * seconds with nine in the ftrace text, so nothing is rounded away.
 *
 * Everything streams: three passes over the file (the analysis, for each
 * call's breakdown and the chains; calls, pages and samples; switches and
 * wake-ups), and memory is the analysis' plus one open-call stack per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-export.h"
#include "ift-words.h"
#include "util/array.h"
#include "util/tidmap.h"

/* One writer: the stream is locked once for the whole export. */
#define fputc	fputc_unlocked
#define fputs	fputs_unlocked
#define fwrite	fwrite_unlocked

/*
 * The counters of the whole system live on a process of their own, on a pid
 * no task can have (pid_max is at most 2^22).
 */
#define SYSTEM_PID	4194304U
#define PAGE_BIN_NS	10000000ULL	/* page allocations per 10 ms bin */

/* One thread that has CUDA calls: the ends of its calls still open. */
struct thread {
	uint32_t tid, pid;
	uint64_t first_ts;		/* of its first call */
	size_t n, cap;
	uint64_t *ends;
};

#define GROUP_ROW	IFT_CALL_NR	/* a group entry's row in the calls table */

struct px {
	FILE *f;
	struct ift_trace *t;
	const struct ift_analysis *a;
	uint64_t call_row;		/* the next calls row, from 0 */
	bool comma;			/* an event was written before */
	struct thread *threads;		/* in the order of their first call */
	size_t nthreads, cap;
	struct ift_tidmap tids;		/* tid -> index in threads */
	/* calls that share one ts, each with its row in the calls table
	   after its values (GROUP_ROW) */
	uint64_t (*group)[IFT_CALL_NR + 1];
	size_t ngroup, group_cap;
	uint64_t bin;			/* current page bin (its index + 1), 0: none */
	uint64_t bin_count;
	uint64_t start_ts, end_ts;	/* of the trace */
};

/* ---- text ----------------------------------------------------------- */

/*
 * S as the inside of a JSON string.  Names come from the traced program and
 * may hold any byte: they are made valid UTF-8 first (IFT_TEXT_UTF8).  For a
 * field of an ftrace line (FIELD), spaces, '=' and control bytes become '_'
 * too, as the line is split on them; elsewhere control bytes are \u escapes.
 */
static void put_text(FILE *f, const char *s, bool field)
{
	char clean[IFT_TEXT_BUF];
	const unsigned char *p = (const unsigned char *)ift_text(clean, sizeof(clean), s,
								IFT_TEXT_UTF8);

	while (*p) {
		size_t n = ift_utf8_len(p);

		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			unsigned char c = *p++;

			if (field && (c <= ' ' || c == '=' || c == 0x7f))
				fputc('_', f);
			else if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	put_text(f, s ? s : "", false);
	fputc('"', f);
}

/* TS on the trace clock as JSON microseconds, exactly: "12.345678901" s =
   "12345678.901" us. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* Starts one event of traceEvents: the separator, ph, name, ts, pid, tid. */
static void event_begin(struct px *x, char ph, const char *name, uint64_t ts,
			uint32_t pid, uint32_t tid)
{
	FILE *f = x->f;

	fputs(x->comma ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", f);
	x->comma = true;
	fputc(ph, f);
	fputs("\",\"name\":", f);
	put_str(f, name);
	fputs(",\"ts\":", f);
	put_us(f, ts);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, pid, tid);
}

/* ---- threads ---------------------------------------------------------- */

static struct thread *thread_get(struct px *x, uint32_t tid, uint32_t pid,
				 uint64_t ts)
{
	size_t i;

	if (!ift_tidmap_get(&x->tids, tid, &i)) {
		if (ift_array_grow((void **)&x->threads, &x->cap, x->nthreads + 1,
				   sizeof(*x->threads)) < 0 ||
		    ift_tidmap_set(&x->tids, tid, x->nthreads) < 0)
			return NULL;
		i = x->nthreads++;
		x->threads[i] = (struct thread){ .tid = tid, .first_ts = ts };
	}
	x->threads[i].pid = pid;
	return &x->threads[i];
}

/* ---- names ---------------------------------------------------------- */

/* A process seen, and whether it has a name yet. */
struct proc {
	uint32_t pid;
	bool named, cuda;
};

static int proc_add(struct proc **v, size_t *n, size_t *cap, uint32_t pid,
		    bool named, bool cuda)
{
	if (ift_array_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = (struct proc){ pid, named, cuda };
	return 0;
}

static int cmp_proc(const void *p, const void *q)
{
	const struct proc *a = p, *b = q;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void put_name(struct px *x, const char *what, uint32_t pid, uint32_t tid,
		     const char *name)
{
	event_begin(x, 'M', what, 0, pid, tid);
	fputs(",\"args\":{\"name\":", x->f);
	put_str(x->f, name);
	fputs("}}", x->f);
}

static bool task_known(const struct px *x, uint32_t tid, uint32_t pid, uint64_t ts)
{
	const struct ift_task *k = ift_trace_task_find(x->t, tid, ts);

	return k && k->pid == pid;
}

/*
 * Every process and thread a name: those of the task table by their last
 * comm, those only the calls know (a damaged trace) by their ids.  The
 * processes with CUDA calls sort first.
 */
static int put_names(struct px *x)
{
	size_t n = ift_trace_task_count(x->t), np = 0, cap = 0;
	struct proc *procs = NULL;
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		const struct ift_task *k = ift_trace_task(x->t, i);
		const struct ift_task *next = i + 1 < n ? ift_trace_task(x->t, i + 1) : NULL;
		const char *comm = k->ncomms ? k->comms[k->ncomms - 1].comm : "";

		/* a tid reused by the same process: its last life names it */
		if (next && next->tid == k->tid && next->pid == k->pid)
			continue;
		if (k->tid == k->pid)
			put_name(x, "process_name", k->pid, k->pid, comm);
		put_name(x, "thread_name", k->pid, k->tid, comm);
		ret = proc_add(&procs, &np, &cap, k->pid, k->tid == k->pid, false);
	}
	for (size_t i = 0; i < x->nthreads && ret >= 0; i++) {
		const struct thread *th = &x->threads[i];
		char name[32];

		if (!task_known(x, th->tid, th->pid, th->first_ts)) {
			snprintf(name, sizeof(name), "tid %" PRIu32, th->tid);
			put_name(x, "thread_name", th->pid, th->tid, name);
		}
		ret = proc_add(&procs, &np, &cap, th->pid, false, true);
	}
	if (ret < 0) {
		free(procs);
		return ret;
	}
	if (np > 1)	/* procs is NULL when there are none */
		qsort(procs, np, sizeof(*procs), cmp_proc);
	for (size_t i = 0; i < np;) {
		uint32_t pid = procs[i].pid;
		bool named = false, cuda = false;
		char name[32];

		for (; i < np && procs[i].pid == pid; i++) {
			named |= procs[i].named;
			cuda |= procs[i].cuda;
		}
		if (!named) {
			snprintf(name, sizeof(name), "pid %" PRIu32, pid);
			put_name(x, "process_name", pid, pid, name);
		}
		if (cuda) {
			event_begin(x, 'M', "process_sort_index", 0, pid, pid);
			fputs(",\"args\":{\"sort_index\":-1}}", x->f);
		}
	}
	free(procs);
	put_name(x, "process_name", SYSTEM_PID, SYSTEM_PID, "system (ingero-ftrace)");
	put_name(x, "thread_name", SYSTEM_PID, SYSTEM_PID, "counters");
	return 0;
}

/* ---- CUDA calls ------------------------------------------------------- */

/* Arguments that are sizes, counts or enums print as numbers, the rest
   (addresses, handles) as hex strings: JSON numbers lose bits above 2^53. */
static bool numeric_arg(const char *name)
{
	static const char *const names[] = {
		"bytes", "kind", "flags", "width", "height", "shared_mem", "device",
		"grid_x", "count", "value", "size",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* The analysis' record of the call in row R, or NULL. */
/* A call of the group: its values, then its row (group's last slot). */
static int put_call(struct px *x, const uint64_t *r)
{
	static const char *const dir_name[IFT_COPY_NR] = {
		"H2H", "H2D", "D2H", "D2D", "default", "other",
	};
	const struct ift_op *op = ift_trace_op(x->t, r[IFT_CALL_OP]);
	uint32_t tid = (uint32_t)r[IFT_C_TID], pid = (uint32_t)r[IFT_C_PID];
	uint64_t ts = r[IFT_C_TS], end = ts + r[IFT_CALL_DUR];
	struct thread *th = thread_get(x, tid, pid, ts);
	const struct ift_call_info *c = ift_analysis_call_of_row(x->a, r[GROUP_ROW], r);
	char unknown[32];
	FILE *f = x->f;

	if (!th)
		return -ENOMEM;
	if (end < ts)
		end = UINT64_MAX;
	/* calls that ended are no parents; a child never outlasts its parent */
	while (th->n && th->ends[th->n - 1] <= ts)
		th->n--;
	if (th->n && end > th->ends[th->n - 1])
		end = th->ends[th->n - 1];
	if (ift_array_grow((void **)&th->ends, &th->cap, th->n + 1, sizeof(*th->ends)) < 0)
		return -ENOMEM;
	th->ends[th->n++] = end;

	if (!op)
		snprintf(unknown, sizeof(unknown), "op %" PRIu64, r[IFT_CALL_OP]);
	event_begin(x, 'X', op ? op->name : unknown, ts, pid, tid);
	fputs(",\"dur\":", f);
	put_us(f, end - ts);
	fprintf(f, ",\"cat\":\"%s\",\"args\":{\"dur_ns\":%" PRIu64 ",\"ret\":%" PRId64
		",\"depth\":%" PRIu64 ",\"cpu\":%" PRIu64,
		!op ? "cuda.runtime" : op->api == IFT_API_NCCL ? "nccl" :
		op->api == IFT_API_DRIVER ? "cuda.driver" : "cuda.runtime",
		r[IFT_CALL_DUR], (int64_t)r[IFT_CALL_RET], r[IFT_CALL_DEPTH], r[IFT_C_CPU]);
	if (end - ts != r[IFT_CALL_DUR])
		fprintf(f, ",\"clamped_to_parent\":true");
	if (r[IFT_CALL_FLAGS] & IFT_CALL_F_NO_RETURN)
		fputs(",\"no_return\":true", f);
	for (unsigned a = 0; op && a < op->nargs && a < IFT_CALL_MAX_ARGS; a++) {
		uint64_t v = r[IFT_CALL_A0 + a];

		/* argument names come from the file: keep them apart from ours */
		fputs(",\"arg.", f);
		put_text(f, op->args[a], false);
		if (numeric_arg(op->args[a]))
			fprintf(f, "\":%" PRIu64, v);
		else
			fprintf(f, "\":\"0x%" PRIx64 "\"", v);
	}
	if (c) {
		if (c->copy_dir >= 0 && c->copy_dir < IFT_COPY_NR)
			fprintf(f, ",\"direction\":\"%s\"", dir_name[c->copy_dir]);
		/* what did not happen is left out: most calls never leave the CPU */
		const struct { const char *key; uint64_t v; } opt[] = {
			{ "runqueue_wait_ns", c->runqueue_wait_ns },
			{ "blocked_ns", c->blocked_ns },
			{ "max_off_cpu_ns", c->max_off_cpu_ns },
			{ "involuntary_switches", c->involuntary },
			{ "voluntary_switches", c->voluntary },
			{ "page_allocs", c->page_allocs },
			/* the names of 0.1, kept until 0.2 (docs/report.md, Names) */
			{ "runqueue_ns", c->runqueue_wait_ns },
			{ "involuntary", c->involuntary }, { "voluntary", c->voluntary },
		};

		fprintf(f, ",\"on_cpu_ns\":%" PRIu64, c->on_cpu_ns);
		for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
			if (opt[i].v)
				fprintf(f, ",\"%s\":%" PRIu64, opt[i].key, opt[i].v);
	}
	fputs("}}", f);
	return 0;
}

/*
 * Rows that share a timestamp come parent first: by thread, depth, then the
 * longer first, so a child never opens before the call it is in.
 */
static int cmp_group(const void *p, const void *q)
{
	const uint64_t *a = p, *b = q;

	if (a[IFT_C_TID] != b[IFT_C_TID])
		return a[IFT_C_TID] < b[IFT_C_TID] ? -1 : 1;
	if (a[IFT_CALL_DEPTH] != b[IFT_CALL_DEPTH])
		return a[IFT_CALL_DEPTH] < b[IFT_CALL_DEPTH] ? -1 : 1;
	if (a[IFT_CALL_DUR] != b[IFT_CALL_DUR])
		return a[IFT_CALL_DUR] > b[IFT_CALL_DUR] ? -1 : 1;
	return 0;
}

static int flush_group(struct px *x)
{
	int ret = 0;

	if (x->ngroup > 1)
		qsort(x->group, x->ngroup, sizeof(x->group[0]), cmp_group);
	for (size_t i = 0; i < x->ngroup && ret >= 0; i++)
		ret = put_call(x, x->group[i]);
	x->ngroup = 0;
	return ret;
}

static int add_call(struct px *x, const uint64_t *r)
{
	int ret;

	if (x->ngroup && x->group[0][IFT_C_TS] != r[IFT_C_TS] && (ret = flush_group(x)) < 0)
		return ret;
	if (ift_array_grow((void **)&x->group, &x->group_cap, x->ngroup + 1,
			   sizeof(x->group[0])) < 0)
		return -ENOMEM;
	memcpy(x->group[x->ngroup], r, IFT_CALL_NR * sizeof(*r));
	x->group[x->ngroup++][GROUP_ROW] = x->call_row++;
	return 0;
}

/* ---- counters --------------------------------------------------------- */

static void put_counter(struct px *x, const char *name, uint64_t ts, const char *key,
			double v)
{
	event_begin(x, 'C', name, ts, SYSTEM_PID, SYSTEM_PID);
	fputs(",\"args\":{", x->f);
	put_str(x->f, key);
	/* %.17g keeps every count exact up to 2^53 */
	fprintf(x->f, ":%.17g}}", v);
}

/* A sample: a *_permille metric as a percentage, the rest as it is; of the
   per-CPU metrics only how busy each CPU was.  A task's (record
   --page-allocs=count's totals, one instant for every thread) is no counter
   of the system. */
static void put_sample(struct px *x, const uint64_t *r)
{
	const char *m = ift_trace_string(x->t, r[IFT_SM_METRIC]);
	size_t len = m ? strlen(m) : 0;
	int64_t v = (int64_t)r[IFT_SM_VALUE];
	char name[96];

	if (!len || ift_sample_of_task(r))
		return;
	if (r[IFT_SM_SCOPE]) {
		if (strcmp(m, "cpu.busy_permille"))
			return;
		snprintf(name, sizeof(name), "cpu%" PRIu64 ".busy", r[IFT_SM_SCOPE] - 1);
		put_counter(x, name, r[IFT_C_TS], "percent", (double)v / 10);
	} else if (len > 9 && !strcmp(m + len - 9, "_permille")) {
		snprintf(name, sizeof(name), "%.*s", (int)(len - 9), m);
		put_counter(x, name, r[IFT_C_TS], "percent", (double)v / 10);
	} else {
		put_counter(x, m, r[IFT_C_TS], "value", (double)v);
	}
}

/*
 * Page allocations per second in bins of PAGE_BIN_NS from the trace start
 * (the last one cut at the trace end, so the rate integrates to the count);
 * an empty stretch is one zero, as a counter holds its value.
 */
static void flush_bin(struct px *x, bool gap)
{
	if (x->bin) {
		uint64_t from = x->start_ts + (x->bin - 1) * PAGE_BIN_NS;
		uint64_t to = from + PAGE_BIN_NS;

		if (to > x->end_ts)
			to = x->end_ts > from ? x->end_ts : from + 1;
		put_counter(x, "page_allocs", from, "per_s",
			    (double)x->bin_count * 1e9 / (double)(to - from));
		if (gap)
			put_counter(x, "page_allocs", to, "per_s", 0);
	}
	x->bin_count = 0;
}

static void add_page(struct px *x, const uint64_t *r)
{
	uint64_t bin = (r[IFT_C_TS] - x->start_ts) / PAGE_BIN_NS + 1;

	if (r[IFT_C_TS] < x->start_ts)
		bin = 1;
	if (bin != x->bin) {
		flush_bin(x, bin > x->bin + 1);
		x->bin = bin;
	}
	x->bin_count++;
}

/* ---- chains ----------------------------------------------------------- */

static void put_chain(struct px *x, const struct ift_chain *ch)
{
	uint64_t ts = x->start_ts + (ch->nsteps ? ch->steps[0].t_ns : 0);
	FILE *f = x->f;
	char name[160];

	snprintf(name, sizeof(name), "%s %s %s %s", ift_severity_name(ch->severity),
		 ift_cause_name(ch->cause), ift_phase_name(ch->phase), ch->op ? ch->op : "");
	event_begin(x, 'i', name, ts, ch->pid, ch->tid);
	fputs(",\"s\":\"g\",\"cat\":\"chain\",\"args\":{\"summary\":", f);
	put_str(f, ch->summary);
	fprintf(f, ",\"severity\":\"%s\",\"cause\":\"%s\",\"phase\":\"%s\",\"op\":",
		ift_severity_name(ch->severity), ift_cause_name(ch->cause),
		ift_phase_name(ch->phase));
	put_str(f, ch->op);
	fprintf(f, ",\"cost_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64
		",\"p99_ns\":%" PRIu64, ch->cost_ns, ch->wall_ns, ch->p50_ns, ch->p99_ns);
	for (size_t i = 0; i < ch->nnums; i++) {
		fputs(",\"evidence.", f);
		put_text(f, ch->nums[i].key, false);
		fprintf(f, "\":%" PRIu64, ch->nums[i].value);
	}
	fputs(",\"steps\":[", f);
	for (size_t i = 0; i < ch->nsteps; i++) {
		char line[64];

		snprintf(line, sizeof(line), "+%.6fs %s: ",
			 (double)ch->steps[i].t_ns / 1e9, ch->steps[i].layer);
		fputs(i ? ",\"" : "\"", f);
		put_text(f, line, false);
		put_text(f, ch->steps[i].text, false);
		fputc('"', f);
	}
	fputs("],\"recommendations\":[", f);
	for (size_t i = 0; i < ch->nrecs; i++) {
		if (i)
			fputc(',', f);
		put_str(f, ch->recs[i]);
	}
	fputs("]}}", f);
}

/* ---- scheduling, as ftrace text --------------------------------------- */

/* "comm-tid (tgid) [cpu] .... s.ns: " */
static void line_begin(struct px *x, uint32_t tid, uint32_t pid, uint64_t cpu, uint64_t ts)
{
	FILE *f = x->f;

	put_text(f, ift_trace_comm(x->t, tid, ts), true);
	fprintf(f, "-%" PRIu32 " (%" PRIu32 ") [%03" PRIu64 "] .... %" PRIu64 ".%09" PRIu64 ": ",
		tid, pid, cpu, ts / 1000000000, ts % 1000000000);
}

static void put_switch(struct px *x, const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS];
	uint32_t next = (uint32_t)r[IFT_SW_NEXT_TID];
	char st[32];
	FILE *f = x->f;

	line_begin(x, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID], r[IFT_C_CPU], ts);
	fputs("sched_switch: prev_comm=", f);
	put_text(f, ift_trace_comm(x->t, (uint32_t)r[IFT_C_TID], ts), true);
	fprintf(f, " prev_pid=%" PRIu64 " prev_prio=%" PRIu64 " prev_state=%s ==> next_comm=",
		r[IFT_C_TID], r[IFT_SW_PREV_PRIO],
		ift_task_state_str(r[IFT_SW_PREV_STATE], st, sizeof(st)));
	put_text(f, ift_trace_comm(x->t, next, ts), true);
	fprintf(f, " next_pid=%" PRIu32 " next_prio=%" PRIu64 "\\n", next, r[IFT_SW_NEXT_PRIO]);
}

static void put_wakeup(struct px *x, const uint64_t *r)
{
	static const char *const kinds[] = {
		[IFT_WAKE_WAKING] = "sched_waking", [IFT_WAKE_WAKEUP] = "sched_wakeup",
		[IFT_WAKE_WAKEUP_NEW] = "sched_wakeup_new",
	};
	uint64_t ts = r[IFT_C_TS], k = r[IFT_WK_KIND];
	FILE *f = x->f;

	/* the line is the waker's, as the kernel writes it from the waker */
	line_begin(x, (uint32_t)r[IFT_WK_WAKER_TID], (uint32_t)r[IFT_WK_WAKER_PID],
		   r[IFT_C_CPU], ts);
	fprintf(f, "%s: comm=", k >= IFT_WAKE_WAKING && k <= IFT_WAKE_WAKEUP_NEW ?
		kinds[k] : "sched_wakeup");
	put_text(f, ift_trace_comm(x->t, (uint32_t)r[IFT_C_TID], ts), true);
	fprintf(f, " pid=%" PRIu64 " prio=%" PRIu64 " target_cpu=%03" PRIu64 "\\n",
		r[IFT_C_TID], r[IFT_WK_PRIO], r[IFT_WK_TARGET_CPU]);
}

/* ---- the passes ------------------------------------------------------- */

/* A failed write: the errno stdio left, when it is one a write gives. */
static int pass(struct px *x, unsigned mask, bool sched)
{
	struct ift_cursor *cur = ift_cursor_new(x->t, mask, 0);
	struct ift_event ev;
	int ret;

	if (!cur)
		return -errno;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		switch (ev.table) {
		case IFT_T_CALLS:
			ret = add_call(x, ev.row);
			break;
		case IFT_T_PAGE_ALLOCS:
			add_page(x, ev.row);
			break;
		case IFT_T_SAMPLES:
			put_sample(x, ev.row);
			break;
		case IFT_T_SWITCHES:
			put_switch(x, ev.row);
			break;
		case IFT_T_WAKEUPS:
			put_wakeup(x, ev.row);
			break;
		}
		if (ret < 0 || ferror(x->f))
			break;
	}
	ift_cursor_free(cur);
	if (ret >= 0 && !sched) {
		ret = flush_group(x);
		flush_bin(x, true);
	}
	if (ferror(x->f))
		ret = ift_write_error();
	return ret < 0 ? ret : 0;
}

static void put_other_data(struct px *x)
{
	FILE *f = x->f;

	const struct ift_recovery *rec = ift_trace_recovery(x->t);

	/* the file's own state: a timeline of what a damaged trace kept says so */
	fprintf(f, "\"otherData\":{\"generator\":\"ingero-ftrace export\","
		"\"trace.finished\":\"%d\",\"trace.damaged\":\"%d\","
		"\"trace.read_bytes\":\"%" PRIu64 "\",\"trace.file_bytes\":\"%" PRIu64 "\"",
		rec->finished, rec->damaged, rec->good_bytes, rec->file_size);
	for (size_t i = 0; i < ift_trace_meta_count(x->t); i++) {
		const char *k, *v;

		ift_trace_meta_at(x->t, i, &k, &v);
		fputs(",\"", f);
		put_text(f, k, false);
		fputs("\":", f);
		put_str(f, v);
	}
	fputc('}', f);
}

static int fail(const struct ift_export_opts *opts, int err, const char *what)
{
	if (opts && opts->errbuf && opts->errlen)
		snprintf(opts->errbuf, opts->errlen, "%s: %s", what, ift_strerror(err));
	return err;
}

/* The whole file, once the analysis is done; the stream is locked. */
static int write_all(struct px *x, const struct ift_chains *chains)
{
	FILE *f = x->f;
	int ret;

	/* traceEvents first: Perfetto's importer skips what follows a key it
	   does not know, and otherData is the newest of those it knows */
	fputs("{\"traceEvents\":[", f);
	ret = pass(x, 1U << IFT_T_CALLS | 1U << IFT_T_PAGE_ALLOCS | 1U << IFT_T_SAMPLES,
		   false);
	if (ret >= 0)
		ret = put_names(x);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < ift_chains_count(chains); i++)
		put_chain(x, ift_chains_get(chains, i));
	fputs("\n],\n\"systemTraceEvents\":\"# tracer: nop\\n", f);
	ret = pass(x, 1U << IFT_T_SWITCHES | 1U << IFT_T_WAKEUPS, true);
	if (ret < 0)
		return ret;
	fputs("\",\n", f);
	put_other_data(x);
	fputs("}\n", f);
	return fflush(f) || ferror(f) ? ift_write_error() : 0;
}

int ift_export_perfetto(struct ift_trace *t, FILE *out,
			const struct ift_export_opts *opts)
{
	struct px x = { .f = out, .t = t };
	struct ift_report m;
	struct ift_analysis *a;
	struct ift_chains *chains;
	/* every call is drawn, with its breakdown */
	struct ift_analyze_opts aopts = { .keep_calls = true };
	int ret = ift_report_run(t, &aopts, NULL, &m);

	a = m.a;
	chains = m.c;
	if (ret < 0) {
		ret = fail(opts, ret, "cannot analyze the trace");
	} else {
		x.a = a;
		x.start_ts = ift_analysis_summary(a)->start_ts;
		x.end_ts = ift_analysis_summary(a)->end_ts;
		flockfile(out);
		ret = write_all(&x, chains);
		if (ret < 0)
			ret = fail(opts, ret, ferror(out) ? "cannot write" :
				   ret == -ENOMEM ? "cannot export" : "cannot read the trace");
		funlockfile(out);
	}
	for (size_t i = 0; i < x.nthreads; i++)
		free(x.threads[i].ends);
	free(x.threads);
	ift_tidmap_release(&x.tids);
	free(x.group);
	ift_report_release(&m);
	return ret;
}
