// SPDX-License-Identifier: MIT
/*
 * The MCP server's tools: each a table row with its arguments (which make
 * both its JSON Schema and the validation, so the two cannot disagree), and
 * a function that builds its result as a json-c object.  The figures are
 * those of `report --json' (src/render/json.c builds both), the slow calls
 * those of ift_analysis_call(), the SQL that of `query'.
 *
 * The trace is opened and analyzed once, at the first call that needs it
 * (the whole trace, no filter: the figures of a plain `report'); run_sql's
 * database is exported at its first call and kept, unlinked, until the
 * server ends.  Every result is bounded: by the limit arguments, and by
 * MAX_RESULT bytes over all.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-export.h"
#include "ift-render.h"
#include "ift-trace.h"
#include "mcp.h"
#include "util/buf.h"

#define MAX_RESULT	(512 * 1024)	/* bytes of a result: its text and JSON */
#define MAX_SQL		(64 * 1024)
#define SQL_TIMEOUT_MS	(IFT_QUERY_TIMEOUT_S * 1000)
#define MAX_CELL	4096		/* bytes of one SQL value shown */
#define MAX_ATTRS	5		/* preempted_by / woken_by per call */
#define SCAN_LIMIT_NS	10000000000ULL	/* get_timeline stops reading after 10 s */

struct tool;
typedef int tool_fn(struct ift_mcp *m, const struct args *a, json_object **out,
		    char *err, size_t errlen);

struct tool {
	const char *name, *title, *desc;
	struct arg_spec args[MAX_ARGS];		/* ends at a NULL name */
	const char *output_schema;		/* JSON text, or NULL */
	tool_fn *run;
};

/* ---- the trace ---------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void ift_mcp_trace_release(struct mcp_trace *tr)
{
	ift_query_free(tr->q);
	ift_report_release(&tr->rep);
	if (tr->t)
		ift_trace_close(tr->t);
	memset(tr, 0, sizeof(*tr));
}

/* Opens and analyzes the trace once; 0, or -1 with a message in ERR. */
static int load(struct ift_mcp *m, char *err, size_t errlen)
{
	struct mcp_trace *tr = &m->tr;
	uint64_t t0 = mono_ns();
	int ret;

	if (tr->rep.a)
		return 0;
	ret = ift_trace_open(m->opts.trace, 0, &tr->t);
	if (ret < 0) {
		tr->t = NULL;
		snprintf(err, errlen, "cannot open '%s': %s", m->opts.trace, ift_strerror(ret));
		return -1;
	}
	/* get_calls lists calls one by one */
	ret = ift_report_run(tr->t, &(struct ift_analyze_opts){ .keep_calls = true }, NULL,
			     &tr->rep);
	if (ret < 0)
		goto fail;
	if (m->opts.log && m->opts.verbose > 0)
		fprintf(m->opts.log, "mcp: analyzed '%s' in %.2f s\n", m->opts.trace,
			(double)(mono_ns() - t0) / 1e9);
	return 0;
fail:
	snprintf(err, errlen, "cannot analyze '%s': %s", m->opts.trace, ift_strerror(ret));
	ift_mcp_trace_release(tr);
	return -1;
}

/* "no op 'x' in the trace; its ops: a, b, ..." so a model can correct itself. */
static int no_op(const struct ift_analysis *a, const char *name, char *err, size_t errlen)
{
	size_t n = ift_appendf(err, errlen, 0, "no op '%.64s' in the trace; its ops:", name);

	for (size_t i = 0; i < ift_analysis_op_count(a); i++)
		n = ift_appendf(err, errlen, n, "%s %s", i ? "," : "", ift_analysis_op(a, i)->name);
	return -1;
}

/* "no process N in the trace; its pids: ..." (the first 20). */
static int no_pid(const struct ift_analysis *a, int64_t pid, char *err, size_t errlen)
{
	size_t n = ift_appendf(err, errlen, 0, "no process %" PRId64 " in the trace; its pids:",
			       pid);

	for (size_t i = 0; i < ift_analysis_process_count(a) && i < 20; i++)
		n = ift_appendf(err, errlen, n, "%s %" PRIu32, i ? "," : "",
				ift_analysis_process(a, i)->pid);
	return -1;
}

/* ---- get_trace_stats ---------------------------------------------- */

static int trace_stats(struct ift_mcp *m, const struct args *a, json_object **out,
		       char *err, size_t errlen)
{
	const struct ift_analysis *an;
	const struct ift_recovery *rec;
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n;
	json_object *o, *r, *v, *ops;

	if (load(m, err, errlen) < 0)
		return -1;
	an = m->tr.rep.a;
	r = ift_json_report(an, m->tr.rep.c);
	o = json_object_new_object();
	json_object_object_get_ex(r, "trace", &v);
	json_object_object_add(o, "trace", json_object_get(v));
	/* the GPUs' busy and idle time (NVML), as report --json gives it */
	json_object_object_get_ex(r, "gpu", &v);
	json_object_object_add(o, "gpu", json_object_get(v));
	rec = ift_trace_recovery(m->tr.t);
	v = json_object_new_object();
	ift_json_add_text(v, "path", m->opts.trace);
	json_object_object_add(v, "finished", json_object_new_boolean(rec->finished));
	json_object_object_add(v, "damaged", json_object_new_boolean(rec->damaged));
	ift_json_add_u64(v, "stacks", ift_trace_stack_count(m->tr.t));
	json_object_object_add(o, "file", v);
	ift_json_add_u64(o, "processes_total", ift_analysis_process_count(an));
	ift_json_add_u64(o, "threads_total", ift_analysis_thread_count(an));
	ift_json_add_u64(o, "chains_total", ift_chains_count(m->tr.rep.c));
	/* the names of 0.1, kept until 0.2 (docs/report.md, Names) */
	ift_json_add_u64(o, "processes", ift_analysis_process_count(an));
	ift_json_add_u64(o, "threads", ift_analysis_thread_count(an));
	ift_json_add_u64(o, "chains", ift_chains_count(m->tr.rep.c));
	json_object_object_get_ex(r, "ops", &v);
	n = v ? json_object_array_length(v) : 0;
	ift_json_add_u64(o, "ops_total", n);
	ops = json_object_new_array();
	for (size_t i = 0; i < n && i < limit; i++)	/* most total time first */
		json_object_array_add(ops, json_object_get(json_object_array_get_idx(v, i)));
	json_object_object_add(o, "ops", ops);
	json_object_put(r);
	*out = o;
	return 0;
}

/* ---- get_causal_chains -------------------------------------------- */

static int causal_chains(struct ift_mcp *m, const struct args *a, json_object **out,
			 char *err, size_t errlen)
{
	size_t n, limit = (size_t)ift_mcp_arg_int(a, "limit");
	json_object *o, *v;

	if (load(m, err, errlen) < 0)
		return -1;
	n = ift_chains_count(m->tr.rep.c);
	o = json_object_new_object();
	ift_json_add_u64(o, "chains_total", n);
	if (!n)
		ift_json_add_text(o, "note", "no host cause found: no op has a tail past the thresholds, "
			"and the CUDA threads neither starve between calls nor mostly wait "
			"for the device");
	v = json_object_new_array();
	for (size_t i = 0; i < n && i < limit; i++)
		json_object_array_add(v, ift_json_chain(ift_chains_get(m->tr.rep.c, i)));
	json_object_object_add(o, "chains", v);
	*out = o;
	return 0;
}

/* ---- get_per_process_breakdown ------------------------------------ */

static int per_process(struct ift_mcp *m, const struct args *a, json_object **out,
		       char *err, size_t errlen)
{
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n;
	const struct ift_process_info *p;
	const struct ift_thread_info **th;
	json_object *o, *v, *e;

	if (load(m, err, errlen) < 0)
		return -1;
	n = ift_analysis_process_count(m->tr.rep.a);
	o = json_object_new_object();
	if (!ift_mcp_has(a, "pid")) {
		ift_json_add_u64(o, "processes_total", n);
		v = json_object_new_array();
		for (size_t i = 0; i < n && i < limit; i++) {
			p = ift_analysis_process(m->tr.rep.a, i);
			e = ift_json_process(p);
			json_object_object_del(e, "threads");
			json_object_object_del(e, "ops");
			ift_json_add_u64(e, "thread_count", p->nthreads);
			json_object_array_add(v, e);
		}
		json_object_object_add(o, "processes", v);
		*out = o;
		return 0;
	}
	p = ift_analysis_process_find(m->tr.rep.a, (uint32_t)ift_mcp_arg_int(a, "pid"));
	if (!p) {
		json_object_put(o);
		return no_pid(m->tr.rep.a, ift_mcp_arg_int(a, "pid"), err, errlen);
	}
	e = ift_json_process(p);
	json_object_object_del(e, "threads");
	ift_json_add_u64(e, "thread_count", p->nthreads);
	json_object_object_add(o, "process", e);
	th = malloc((p->nthreads + 1) * sizeof(*th));
	if (!th) {
		json_object_put(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(th, p->threads, p->nthreads * sizeof(*th));
	qsort(th, p->nthreads, sizeof(*th), ift_thread_cmp_cuda);
	v = json_object_new_array();
	for (size_t i = 0; i < p->nthreads && i < limit; i++) {
		e = ift_json_thread(th[i]);
		json_object_object_del(e, "ops");
		json_object_array_add(v, e);
	}
	free(th);
	json_object_object_add(o, "threads", v);
	*out = o;
	return 0;
}

/* ---- get_op_latency ----------------------------------------------- */

static int op_latency(struct ift_mcp *m, const struct args *a, json_object **out,
		      char *err, size_t errlen)
{
	const char *name = ift_mcp_arg_str(a, "op");
	const struct ift_op_stats *s;
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), nproc = 0;
	unsigned lo = IFT_LAT_BINS, hi = 0;
	json_object *o, *v, *e;

	if (load(m, err, errlen) < 0)
		return -1;
	s = ift_analysis_op_find(m->tr.rep.a, name);
	if (!s)
		return no_op(m->tr.rep.a, name, err, errlen);
	o = json_object_new_object();
	v = ift_json_ops(s, 1);
	json_object_object_add(o, "op", json_object_get(json_object_array_get_idx(v, 0)));
	json_object_put(v);

	/* the bins from the first to the last that holds a call */
	for (unsigned b = 0; s->lat_bins && b < IFT_LAT_BINS; b++)
		if (s->lat_bins[b]) {
			lo = b < lo ? b : lo;
			hi = b;
		}
	v = json_object_new_array();
	for (unsigned b = lo; b <= hi && lo < IFT_LAT_BINS; b++) {
		e = json_object_new_object();
		ift_json_add_u64(e, "from_ns", b ? ift_lat_edge(b) : 0);
		ift_json_add_u64(e, "to_ns", ift_lat_edge(b + 1));
		ift_json_add_u64(e, "calls", s->lat_bins[b]);
		json_object_array_add(v, e);
	}
	json_object_object_add(o, "histogram", v);

	v = json_object_new_array();
	for (size_t i = 0; i < ift_analysis_process_count(m->tr.rep.a); i++) {
		const struct ift_process_info *p = ift_analysis_process(m->tr.rep.a, i);

		for (size_t k = 0; k < p->nops; k++) {
			const struct ift_op_stats *x = &p->ops[k];

			if (strcmp(x->name, name))
				continue;
			if (nproc++ >= limit)
				continue;	/* counted in processes_total */
			e = json_object_new_object();
			ift_json_add_u64(e, "pid", p->pid);
			ift_json_add_text(e, "comm", p->comm);
			ift_json_op_latency(e, x);
			json_object_array_add(v, e);
		}
	}
	ift_json_add_u64(o, "processes_total", nproc);
	json_object_object_add(o, "processes", v);
	*out = o;
	return 0;
}

/* ---- get_slow_calls ----------------------------------------------- */

static json_object *attrs(const struct ift_analysis *an, const struct ift_call_info *c,
			  const struct ift_call_attr *at, uint32_t kind)
{
	json_object *v = json_object_new_array();
	size_t n = 0;

	for (uint32_t i = 0; at && i < c->nattr && n < MAX_ATTRS; i++) {
		json_object *e;

		if (at[i].kind != kind)
			continue;
		e = json_object_new_object();
		ift_json_add_u64(e, "pid", at[i].pid);
		ift_json_add_u64(e, "tid", at[i].tid);
		ift_json_add_text(e, "comm", ift_analysis_comm(an, at[i].tid, c->ts));
		ift_json_add_u64(e, "count", at[i].count);
		ift_json_add_u64(e, "ns", at[i].ns);
		json_object_array_add(v, e);
		n++;
	}
	return v;
}

static int slow_calls(struct ift_mcp *m, const struct args *a, json_object **out,
		      char *err, size_t errlen)
{
	const char *name = ift_mcp_arg_str(a, "op");
	const struct ift_analysis *an;
	const struct ift_op_stats *s;
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n, *idx;
	uint32_t pid = (uint32_t)ift_mcp_arg_int(a, "pid");
	uint64_t start;
	json_object *o, *v;

	if (load(m, err, errlen) < 0)
		return -1;
	an = m->tr.rep.a;
	start = ift_analysis_summary(an)->start_ts;
	s = ift_analysis_op_find(an, name);
	if (!s)
		return no_op(an, name, err, errlen);
	if (ift_analysis_slow_calls(an, s->op, pid, &idx, &n) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o = json_object_new_object();
	ift_json_add_text(o, "op", s->name);
	ift_json_add_u64(o, "calls", n);
	ift_json_add_u64(o, "p50_ns", s->p50_ns);
	ift_json_add_u64(o, "p99_ns", s->p99_ns);
	v = json_object_new_array();
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct ift_call_info *c = ift_analysis_call(an, idx[i]);
		const struct ift_call_attr *at = ift_analysis_call_attrs(an, c);
		json_object *e = json_object_new_object();

		ift_json_add_u64(e, "t_ns", c->ts - start);
		ift_json_add_u64(e, "dur_ns", c->dur_ns);
		ift_json_add_u64(e, "pid", c->pid);
		ift_json_add_u64(e, "tid", c->tid);
		ift_json_add_text(e, "comm", ift_analysis_comm(an, c->tid, c->ts));
		ift_json_add_i64(e, "ret", c->ret);
		ift_json_add_u64(e, "depth", c->depth);
		ift_json_add_u64(e, "bytes", c->bytes);
		ift_json_add_u64(e, "on_cpu_ns", c->on_cpu_ns);
		ift_json_add_u64(e, "runqueue_wait_ns", c->runqueue_wait_ns);
		ift_json_add_u64(e, "blocked_ns", c->blocked_ns);
		ift_json_add_u64(e, "max_off_cpu_ns", c->max_off_cpu_ns);
		ift_json_add_u64(e, "involuntary_switches", c->involuntary);
		ift_json_add_u64(e, "voluntary_switches", c->voluntary);
		ift_json_add_u64(e, "page_allocs", c->page_allocs);
		ift_json_add_u64(e, "page_alloc_bytes", c->page_alloc_bytes);
		/* the names of 0.1, kept until 0.2 (docs/report.md, Names) */
		ift_json_add_u64(e, "runqueue_ns", c->runqueue_wait_ns);
		ift_json_add_u64(e, "involuntary", c->involuntary);
		ift_json_add_u64(e, "voluntary", c->voluntary);
		json_object_object_add(e, "preempted_by", attrs(an, c, at, IFT_ATTR_RAN));
		json_object_object_add(e, "woken_by", attrs(an, c, at, IFT_ATTR_WOKE));
		json_object_array_add(v, e);
	}
	free(idx);
	json_object_object_add(o, "slowest", v);
	*out = o;
	return 0;
}

/* ---- get_stacks --------------------------------------------------- */

static int stacks(struct ift_mcp *m, const struct args *a, json_object **out,
		  char *err, size_t errlen)
{
	const char *name = ift_mcp_arg_str(a, "op");
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n, k;
	uint32_t pid = (uint32_t)ift_mcp_arg_int(a, "pid");
	struct ift_site *v;
	json_object *o, *ops, *sites, *e;
	int ret;

	if (load(m, err, errlen) < 0)
		return -1;
	/* the tool is always listed (tools/list does not open the trace):
	   a trace without stacks says how to get them */
	if (!ift_trace_stack_count(m->tr.t)) {
		snprintf(err, errlen, "this trace has no stacks: record with --stack "
			 "(ingero-ftrace record --stack -- CMD) to see where the CUDA calls "
			 "are made from");
		return -1;
	}
	if (name && !ift_analysis_op_find(m->tr.rep.a, name))
		return no_op(m->tr.rep.a, name, err, errlen);
	if (pid && !ift_analysis_process_find(m->tr.rep.a, pid) &&
	    !ift_analysis_thread_find(m->tr.rep.a, pid))
		return no_pid(m->tr.rep.a, pid, err, errlen);
	/* every site, so each op says how many it has; the first LIMIT shown */
	ret = ift_analysis_sites_of(m->tr.rep.a, pid, 0, &v, &n);
	if (ret < 0) {
		snprintf(err, errlen, "cannot read the call sites: %s", ift_strerror(ret));
		return -1;
	}
	o = json_object_new_object();
	ops = json_object_new_array();
	sites = json_object_new_array();
	for (size_t i = 0; i < n; i = k) {
		uint64_t calls = 0;

		for (k = i; k < n && !strcmp(v[k].op, v[i].op); k++)
			calls += v[k].calls;
		if (name && strcmp(name, v[i].op))
			continue;
		e = json_object_new_object();
		ift_json_add_text(e, "op", v[i].op);
		ift_json_add_u64(e, "calls_with_stack", calls);
		ift_json_add_u64(e, "sites", k - i);
		json_object_array_add(ops, e);
		for (size_t j = i; j < k && j < i + limit; j++)
			json_object_array_add(sites, ift_json_site(m->tr.t, &v[j]));
	}
	free(v);
	if (!json_object_array_length(sites))
		ift_json_add_text(o, "note", "no call of this op or process carries a stack (with "
			"--stack-period N, one call in N per op and CPU does; --stack=OP,... "
			"chooses the ops)");
	json_object_object_add(o, "ops", ops);
	json_object_object_add(o, "sites", sites);
	/* the lines of Python, for a trace that holds Python frames only */
	if (ift_analysis_py(m->tr.rep.a)) {
		struct ift_py_op *py;

		ret = ift_analysis_py_sites_of(m->tr.rep.a, pid, 0, &py, &n);
		if (ret < 0) {
			json_object_put(o);
			snprintf(err, errlen, "cannot read the Python call sites: %s",
				 ift_strerror(ret));
			return -1;
		}
		sites = json_object_new_array();
		for (size_t i = 0; i < n; i++)
			if (!name || !strcmp(name, py[i].op))
				json_object_array_add(sites, ift_json_py_op(m->tr.t, &py[i], limit));
		free(py);
		json_object_object_add(o, "py_sites", sites);
	}
	*out = o;
	return 0;
}

/* ---- get_profile -------------------------------------------------- */

/* ROLE's value by name ("none": threads of no role), or -1. */
static int role_by_name(const char *name)
{
	if (!strcmp(name, "none"))
		return IFT_ROLE_NONE;
	for (int r = IFT_ROLE_NONE + 1; r < IFT_ROLE_NR; r++)
		if (!strcmp(name, ift_role_name((enum ift_role)r)))
			return r;
	return -1;
}

/* The groups AN's profile has for the call's ROLE and PID, into O. */
static int profile_groups(const struct ift_analysis *an, const struct args *a, json_object *o,
			  char *err, size_t errlen)
{
	const struct ift_profile *p = ift_analysis_profile(an);
	const char *rname = ift_mcp_arg_str(a, "role");
	uint32_t pid = (uint32_t)ift_mcp_arg_int(a, "pid");
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit");
	int role = rname ? role_by_name(rname) : -1;
	json_object *v = json_object_new_array();

	ift_json_add_u64(o, "period_ns", p->period_ns);
	ift_json_add_u64(o, "samples", p->samples);
	json_object_object_add(o, "groups", v);
	if (pid) {
		const struct ift_process_info *pi = ift_analysis_process_find(an, pid);

		if (!pi)
			return no_pid(an, pid, err, errlen);
		if (pi->profile)
			json_object_array_add(v, ift_json_prof_group(pi->profile, limit));
		return 0;
	}
	for (size_t i = 0; i < p->ngroups; i++)
		if (!rname || (int)p->groups[i].role == role)
			json_object_array_add(v, ift_json_prof_group(&p->groups[i], limit));
	return 0;
}

static int profile(struct ift_mcp *m, const struct args *a, json_object **out,
		   char *err, size_t errlen)
{
	const char *rname = ift_mcp_arg_str(a, "role");
	struct ift_analysis *win = NULL;
	json_object *o;
	int ret;

	if (rname && role_by_name(rname) < 0) {
		snprintf(err, errlen, "no role '%s': input worker, input thread, relay, "
			 "pin-memory thread, cuda thread, cuda process or none", rname);
		return -1;
	}
	if (load(m, err, errlen) < 0)
		return -1;
	if (!ift_analysis_profile(m->tr.rep.a)->period_ns) {
		snprintf(err, errlen, "this trace has no profile: it was recorded with "
			 "--profile=off, or by an older recorder (record samples every "
			 "traced thread's stack by default)");
		return -1;
	}
	/* a window is its own analysis, made for the call */
	if (ift_mcp_has(a, "from_ns") || ift_mcp_has(a, "to_ns")) {
		struct ift_analyze_opts opts = {
			.from_ns = (uint64_t)ift_mcp_arg_int(a, "from_ns"),
			.to_ns = (uint64_t)ift_mcp_arg_int(a, "to_ns"),
			.has_to = ift_mcp_has(a, "to_ns"),
		};

		if (opts.has_to && opts.to_ns < opts.from_ns) {
			snprintf(err, errlen, "to_ns must not be before from_ns");
			return -1;
		}
		if ((ret = ift_analysis_run(m->tr.t, &opts, &win)) < 0) {
			snprintf(err, errlen, "cannot analyze the window: %s", ift_strerror(ret));
			return -1;
		}
	}
	o = json_object_new_object();
	ret = profile_groups(win ? win : m->tr.rep.a, a, o, err, errlen);
	ift_analysis_free(win);
	if (ret < 0) {
		json_object_put(o);
		return -1;
	}
	*out = o;
	return 0;
}

/* ---- get_timeline ------------------------------------------------- */

/* True when EV is about task ID (a tid, or a pid when PID). */
static bool about(const struct ift_event *ev, uint64_t id, bool pid)
{
	const uint64_t *r = ev->row;

	if (r[pid ? IFT_C_PID : IFT_C_TID] == id)
		return true;
	switch (ev->table) {
	case IFT_T_SWITCHES:
		return r[pid ? IFT_SW_NEXT_PID : IFT_SW_NEXT_TID] == id;
	case IFT_T_WAKEUPS:
		return r[pid ? IFT_WK_WAKER_PID : IFT_WK_WAKER_TID] == id;
	case IFT_T_TASKS:
		return r[pid ? IFT_TK_CHILD_PID : IFT_TK_CHILD_TID] == id;
	}
	return false;
}

static int timeline(struct ift_mcp *m, const struct args *a, json_object **out,
		    char *err, size_t errlen)
{
	uint64_t start, dur, from = (uint64_t)ift_mcp_arg_int(a, "from_ns"), to, t0 = mono_ns();
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n = 0, bytes = 0, len;
	bool by_tid = ift_mcp_has(a, "tid"), by_pid = ift_mcp_has(a, "pid"), truncated = false;
	unsigned mask = (1U << IFT_T_CALLS) | (1U << IFT_T_SWITCHES) | (1U << IFT_T_WAKEUPS) |
			(1U << IFT_T_PAGE_ALLOCS) | (1U << IFT_T_TASKS);
	struct ift_cursor *cur;
	struct ift_event ev;
	uint64_t next = 0;
	json_object *o, *v;
	int ret;

	if (load(m, err, errlen) < 0)
		return -1;
	start = ift_analysis_summary(m->tr.rep.a)->start_ts;
	dur = ift_analysis_summary(m->tr.rep.a)->end_ts - start;
	to = ift_mcp_has(a, "to_ns") ? (uint64_t)ift_mcp_arg_int(a, "to_ns") : dur;
	if (from > dur) {
		snprintf(err, errlen, "from_ns %" PRIu64 " is past the end of the trace (%"
			 PRIu64 " ns long)", from, dur);
		return -1;
	}
	if (to < from) {
		snprintf(err, errlen, "to_ns must not be before from_ns");
		return -1;
	}
	if (ift_mcp_arg_bool(a, "samples"))
		mask |= 1U << IFT_T_SAMPLES;
	cur = ift_cursor_new(m->tr.t, mask, start + from);
	if (!cur) {
		snprintf(err, errlen, "cannot read the trace: %s", strerror(errno));
		return -1;
	}
	v = json_object_new_array();
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		uint64_t t = ev.row[IFT_C_TS] - start;
		json_object *e, *x;

		if (ev.row[IFT_C_TS] < start + from)
			continue;
		if (t > to)
			break;
		if ((by_tid && !about(&ev, (uint64_t)ift_mcp_arg_int(a, "tid"), false)) ||
		    (by_pid && !about(&ev, (uint64_t)ift_mcp_arg_int(a, "pid"), true))) {
			/* a rare task in a long window: bounded in time, not rows */
			if (mono_ns() - t0 > SCAN_LIMIT_NS) {
				truncated = true;
				next = t;
				break;
			}
			continue;
		}
		if (n == limit) {
			truncated = true;
			next = t;
			break;
		}
		x = ift_event_json(m->tr.t, &ev);
		if (!x)
			break;
		e = json_object_new_object();
		ift_json_add_u64(e, "t_ns", t);
		json_object_object_foreach(x, k, val) {
			if (strcmp(k, "ts"))
				json_object_object_add(e, k, json_object_get(val));
		}
		json_object_put(x);
		/* bounded as it is built, at half the result's limit: the text
		   form the model reads takes about as much again */
		len = 0;
		json_object_to_json_string_length(e, JSON_C_TO_STRING_PLAIN, &len);
		if (n && bytes + len > MAX_RESULT / 2) {
			json_object_put(e);
			truncated = true;
			next = t;
			break;
		}
		bytes += len;
		json_object_array_add(v, e);
		n++;
	}
	ift_cursor_free(cur);
	if (ret < 0) {
		json_object_put(v);
		snprintf(err, errlen, "cannot read the trace: %s", ift_strerror(ret));
		return -1;
	}
	o = json_object_new_object();
	ift_json_add_u64(o, "from_ns", from);
	ift_json_add_u64(o, "to_ns", to);
	ift_json_add_u64(o, "returned", n);
	json_object_object_add(o, "truncated", json_object_new_boolean(truncated));
	if (truncated)
		ift_json_add_u64(o, "next_from_ns", next);
	json_object_object_add(o, "events", v);
	*out = o;
	return 0;
}

/* ---- run_sql ------------------------------------------------------ */

static int run_sql(struct ift_mcp *m, const struct args *a, json_object **out,
		   char *err, size_t errlen)
{
	struct ift_export_opts opts = { .errbuf = err, .errlen = errlen,
					.source = m->opts.trace };
	size_t limit = (size_t)ift_mcp_arg_int(a, "limit"), n = 0, bytes = 0;
	sqlite3_stmt *st;
	json_object *o, *cols, *rows;
	bool truncated = false;
	int ret, rc, ncols;

	if (load(m, err, errlen) < 0)
		return -1;
	*err = 0;
	if (!m->tr.q) {
		uint64_t t0 = mono_ns();

		ret = ift_query_open_trace(m->tr.t, &opts, &m->tr.q);
		if (ret < 0) {
			if (!*err)
				snprintf(err, errlen, "cannot export the trace: %s", ift_strerror(ret));
			m->tr.q = NULL;
			return -1;
		}
		if (m->opts.log && m->opts.verbose > 0)
			fprintf(m->opts.log, "mcp: exported '%s' for SQL in %.2f s\n",
				m->opts.trace, (double)(mono_ns() - t0) / 1e9);
	}
	ret = ift_query_prepare(m->tr.q, ift_mcp_arg_str(a, "sql"), &opts, &st);
	if (ret < 0) {
		if (ret == -IFT_E_SQL) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s", err);
			snprintf(err, errlen, "bad SQL: %s", msg);
		} else if (!*err) {
			snprintf(err, errlen, "%s", ift_strerror(ret));
		}
		return -1;
	}
	ncols = sqlite3_column_count(st);
	cols = json_object_new_array();
	for (int c = 0; c < ncols; c++) {
		const char *name = sqlite3_column_name(st, c);

		json_object_array_add(cols, ift_json_text(name ? name : ""));
	}
	rows = json_object_new_array();
	ift_query_set_timeout(m->tr.q, SQL_TIMEOUT_MS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_object *row;

		if (n == limit || bytes > MAX_RESULT / 4) {
			truncated = true;
			break;
		}
		row = json_object_new_array();
		for (int c = 0; c < ncols; c++) {
			json_object *x = ift_query_json(st, c, MAX_CELL);

			bytes += 8 + (x && json_object_is_type(x, json_type_string) ?
				      (size_t)json_object_get_string_len(x) : 16);
			json_object_array_add(row, x);
		}
		json_object_array_add(rows, row);
		n++;
	}
	ift_query_set_timeout(m->tr.q, 0);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		if (rc == SQLITE_INTERRUPT)
			snprintf(err, errlen, "the query ran past %d s: stopped (add a LIMIT or a "
				 "WHERE on an indexed column)", SQL_TIMEOUT_MS / 1000);
		else
			snprintf(err, errlen, "query failed: %s", ift_query_errmsg(m->tr.q));
		sqlite3_finalize(st);
		json_object_put(cols);
		json_object_put(rows);
		return -1;
	}
	sqlite3_finalize(st);
	o = json_object_new_object();
	json_object_object_add(o, "columns", cols);
	ift_json_add_u64(o, "row_count", n);
	json_object_object_add(o, "truncated", json_object_new_boolean(truncated));
	json_object_object_add(o, "rows", rows);
	*out = o;
	return 0;
}

/* ---- the table ---------------------------------------------------- */

#define NS_MAX	((int64_t)1 << 62)
#define PID_MAX	4194304

static const char sql_desc[] =
	"Run one read-only SQL statement (SQLite: SELECT, WITH, EXPLAIN, schema PRAGMAs) "
	"over every event of the trace, with report's figures beside them; at most `limit` "
	"rows and 10 s. The first call exports the trace (seconds). Times: ts columns are "
	"trace-clock ns, t_ns offsets from (SELECT start_ts FROM trace); *_ns durations. "
	"comm is a task's name at the row's time. Schema (docs/sql.md): "
	"trace(path,command,start_ts,end_ts,duration_ns,events,calls,lost_events,cpus,"
	"finished,damaged); meta(key,value); ops(id,name,api,nargs,args); "
	"calls(id,ts,dur_ns,cpu,pid,tid,comm,op_id,op,ret,flags,no_return,depth,parent_id,"
	"a0..a5,bytes,on_cpu_ns,runqueue_wait_ns,blocked_ns,max_off_cpu_ns,involuntary_switches,"
	"voluntary_switches,page_allocs,page_alloc_bytes,stack_id); stacks(stack_id,depth,module,offset,symbol,"
	"symoff,flags,frame,python,line): call sites, a row a frame, innermost first; "
	"call_attrs(call_id,relation['ran'|'woke'],pid,tid,"
	"comm,count,ns); switches(ts,cpu,pid,tid,comm,prev_state,state,preempted,prev_prio,"
	"next_pid,next_tid,next_comm,next_prio); wakeups(ts,cpu,pid,tid,comm,kind,prio,"
	"target_cpu,waker_pid,waker_tid,waker_comm); page_allocs(ts,cpu,pid,tid,comm,"
	"\"order\",bytes,gfp_flags,migratetype); task_events(ts,cpu,pid,tid,kind,child_pid,"
	"child_tid,comm,file); samples(ts,metric,scope,cpu,value); threads(tid,pid,ppid,comm,"
	"is_thread,start_ts,exit_ts,role,first_seen_ts,last_seen_ts,on_cpu_ns,runqueue_wait_ns,"
	"blocked_ns,involuntary_switches,voluntary_switches,wakeups,max_off_cpu_ns,"
	"max_off_cpu_at_ts,page_allocs,"
	"page_alloc_bytes,cuda_calls,cuda_ns); thread_names(tid,pid,ts,comm); processes(pid,"
	"ppid,comm,names,start_ts,exit_ts,role); chains(rank,severity,cause,phase,op,pid,tid,"
	"comm,p50_ns,p99_ns,tail_ratio,cost_ns,wall_ns,summary,recommendations,stage); "
	"chain_steps(chain,seq,t_ns,ts,layer,text); chain_evidence(chain,key,value); "
	"chain_tasks(chain,relation,pid,tid,comm,role,outside,count,ns,share_permille); "
	"chain_recommendations(chain,seq,text); libraries(path,kind,build_id,dev,ino,"
	"functions); losses(cpu,overrun,commit_overrun,dropped,read). Views: "
	"op_summary(op,api,calls,nested_calls,errors,total_ns,mean_ns,min_ns,p50_ns,p95_ns,"
	"p99_ns,max_ns); process_op_summary(pid,op,...as op_summary); thread_op_summary(pid,"
	"tid,op,...); process_summary(pid,comm,role,thread_count,cuda_calls,cuda_ns,on_cpu_ns,"
	"runqueue_wait_ns,blocked_ns,involuntary_switches,voluntary_switches,wakeups,"
	"max_off_cpu_ns,page_allocs,"
	"page_alloc_bytes); call_sites(op,stack_id,calls,total_ns,frames); "
	"py_call_sites(op,file,function,line,frame,calls,total_ns,sites); "
	"events(ts,t_ns,type,cpu,pid,tid,comm,what).";

static const struct tool tools[] = {
	{ "get_trace_stats", "Trace summary and per-op latency",
	  "The trace: command, duration, events, lost events, CPUs, whether the file is "
	  "complete, counts of processes, threads and causal chains, the GPUs' busy and "
	  "idle time as NVML measured it by stage with the part the chains explain (or "
	  "why not measured), and every CUDA op "
	  "with calls, errors, total/mean/min/p50/p95/p99/max ns, bytes, wall_share "
	  "(the numbers of `report --json`), most total time first, at most `limit` "
	  "(ops_total counts them all). Call it first.",
	  { { "limit", A_INT, false, 1, 1000, 100, "ops to return, most total time first" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"trace\",\"ops\"],\"properties\":{"
	  "\"trace\":{\"type\":\"object\"},\"file\":{\"type\":\"object\"},"
	  "\"gpu\":{\"type\":\"object\"},"
	  "\"ops\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  trace_stats },
	{ "get_causal_chains", "Why the GPU waits: causal chains",
	  "The causal chains, most severe and costly first: cause (cpu_contention, "
	  "data_starvation, page_alloc_pressure, gpu_bound), severity, the op, cost_ns "
	  "against wall_ns (the CUDA threads' active time), a one-line summary, the "
	  "timeline of the worst occurrence (t_ns offsets), the evidence (numbers and the "
	  "tasks that preempted or woke the CUDA thread), recommendations computed "
	  "from the trace, and where NVML measured the GPU the idle time the chain "
	  "explains (gpu.idle_ns, idle_permille of its stage's) or that the GPU did not "
	  "wait (gpu.not_waiting).",
	  { { "limit", A_INT, false, 1, 20, 5, "chains to return, most costly first" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"chains_total\",\"chains\"],\"properties\":{"
	  "\"chains_total\":{\"type\":\"integer\"},"
	  "\"chains\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  causal_chains },
	{ "get_per_process_breakdown", "Processes and threads: CPU, run queue, blocked",
	  "Without pid: the processes (most CUDA time first) with on-CPU, run-queue wait, "
	  "blocked time, context switches, worst stall, page allocations, CUDA calls and "
	  "time. With pid: that process with its ops and its threads (most CUDA time, "
	  "then most off-CPU time, first).",
	  { { "pid", A_INT, false, 1, PID_MAX, 0, "one process (or a thread id of it)" },
	    { "limit", A_INT, false, 1, 1000, 20, "processes, or threads of the process" },
	    { NULL } },
	  "{\"type\":\"object\",\"properties\":{"
	  "\"processes\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
	  "\"process\":{\"type\":\"object\"},"
	  "\"threads\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  per_process },
	{ "get_op_latency", "Latency of one CUDA op",
	  "One op (a CUDA function, e.g. cudaStreamSynchronize): its calls and "
	  "percentiles over the whole trace, a histogram of call durations (buckets "
	  "1-2-5 ns, us, ms...; from_ns inclusive, to_ns exclusive) and the same "
	  "figures per process.",
	  { { "op", A_STR, true, 0, 256, 0, "the op's name, as get_trace_stats lists it" },
	    { "limit", A_INT, false, 1, 1000, 20,
	      "processes to return (processes_total counts them all)" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"op\",\"histogram\",\"processes\"],"
	  "\"properties\":{\"op\":{\"type\":\"object\"},"
	  "\"histogram\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
	  "\"processes\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  op_latency },
	{ "get_slow_calls", "The slowest calls of an op, and where their time went",
	  "The slowest calls of one op, longest first: when (t_ns), how long, which "
	  "thread, and inside each call its thread's on-CPU, run-queue (runnable, waiting "
	  "for a CPU) and blocked time, switch-outs, page allocations, the tasks that ran "
	  "on its CPU while it waited (preempted_by) and that woke it (woken_by).",
	  { { "op", A_STR, true, 0, 256, 0, "the op's name" },
	    { "limit", A_INT, false, 1, 100, 10, "calls to return" },
	    { "pid", A_INT, false, 1, PID_MAX, 0, "only calls of this process or thread" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"op\",\"calls\",\"slowest\"],"
	  "\"properties\":{\"op\":{\"type\":\"string\"},\"calls\":{\"type\":\"integer\"},"
	  "\"slowest\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  slow_calls },
	{ "get_stacks", "Where the CUDA calls are made from: call sites",
	  "The call sites of each op (record --stack): the user stacks its calls were "
	  "made from, most total time first, each with calls, total_ns, its shares of the "
	  "op's calls, time and tail (calls at or above the op's p99), and its frames "
	  "innermost first (symbol+0xOFF (file); [python] marks interpreter frames; "
	  "FILE:LINE in FUNC a Python function, placed where it called the native code). "
	  "Only calls that carry a stack count; ops lists, per op, how many do and how "
	  "many sites there are. A trace recorded with --py-stack also has py_sites: per "
	  "op, how many calls had their Python frames read in flight (and late, dropped), "
	  "and the lines of Python that made them (the innermost Python frame: file, "
	  "function, line, calls, total_ns, callers), most total time first. A trace "
	  "recorded without --stack has none: the tool says so.",
	  { { "op", A_STR, false, 0, 256, 0, "only this op (default: every op with stacks)" },
	    { "limit", A_INT, false, 1, 20, IFT_SITES_TOP, "sites per op, most total time first" },
	    { "pid", A_INT, false, 1, PID_MAX, 0,
	      "only calls of this process or thread (the shares are then of its calls)" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"ops\",\"sites\"],\"properties\":{"
	  "\"ops\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"required\":[\"op\",\"calls_with_stack\",\"sites\"]}},"
	  "\"sites\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"required\":[\"op\",\"stack_id\",\"calls\",\"total_ns\",\"share_calls\","
	  "\"share_time\",\"share_tail\",\"frames\"],\"properties\":{"
	  "\"frames\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}},"
	  "\"py_sites\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"required\":[\"op\",\"calls\",\"calls_with_stack\",\"in_flight\",\"late\","
	  "\"sites\"],\"properties\":{\"sites\":{\"type\":\"array\",\"items\":{"
	  "\"type\":\"object\",\"required\":[\"file\",\"function\",\"line\",\"frame\","
	  "\"calls\",\"total_ns\",\"callers\"]}}}}},"
	  "\"note\":{\"type\":\"string\"}}}",
	  stacks },
	{ "get_profile", "What the threads spent their CPU on: the CPU profile",
	  "The CPU profile (record samples each traced thread's stack every period_ns "
	  "of its CPU): per kind of thread (role: input worker, input thread, relay, "
	  "pin-memory thread, cuda thread outside its calls, none), its samples "
	  "(cpu_ns = samples x period_ns), those in the kernel, and its top lines of "
	  "Python and native functions by self samples (the innermost frame of its "
	  "kind), with total_samples (anywhere in the stack); a package's line has the "
	  "user's own line that called it (caller); the samples by the kind of work "
	  "they went to (works: decode, transform, collate, indexing, kernel, python) "
	  "and the kind a fix speaks of (finding, or null). With pid, that process's own "
	  "profile, all its threads; with from_ns/to_ns, the profile of that window.",
	  { { "role", A_STR, false, 0, 64, 0, "only this kind of thread" },
	    { "pid", A_INT, false, 1, PID_MAX, 0, "one process's profile" },
	    { "from_ns", A_INT, false, 0, NS_MAX, 0, "window start, ns from the trace start" },
	    { "to_ns", A_INT, false, 0, NS_MAX, 0, "window end (default: the trace end)" },
	    { "limit", A_INT, false, 1, IFT_PROF_TOP, 5, "lines and functions per group" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"period_ns\",\"samples\",\"groups\"],"
	  "\"properties\":{\"period_ns\":{\"type\":\"integer\"},"
	  "\"samples\":{\"type\":\"integer\"},"
	  "\"groups\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"required\":[\"role\",\"samples\",\"cpu_ns\",\"python\",\"native\"]}}}}",
	  profile },
	{ "get_timeline", "Events in a time window",
	  "The raw events (CUDA calls, context switches, wake-ups, page allocations, "
	  "forks/exits, optionally /proc samples) from from_ns to to_ns (offsets from the "
	  "trace start, as the other tools give them), of one task or all, in time order, "
	  "at most `limit`; when truncated, call again from next_from_ns.",
	  { { "from_ns", A_INT, true, 0, NS_MAX, 0, "window start, ns from the trace start" },
	    { "to_ns", A_INT, false, 0, NS_MAX, 0, "window end (default: the trace end)" },
	    { "tid", A_INT, false, 0, PID_MAX, 0,
	      "only events of this thread (as the task, the next task, the waker, the child)" },
	    { "pid", A_INT, false, 0, PID_MAX, 0, "only events of this process" },
	    { "limit", A_INT, false, 1, 1000, 200, "events to return" },
	    { "samples", A_BOOL, false, 0, 1, 0, "include the /proc samples" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"events\",\"truncated\"],\"properties\":{"
	  "\"truncated\":{\"type\":\"boolean\"},"
	  "\"events\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  timeline },
	{ "run_sql", "Read-only SQL over the trace", sql_desc,
	  { { "sql", A_STR, true, 0, MAX_SQL, 0, "one read-only SQL statement" },
	    { "limit", A_INT, false, 1, 1000, 100, "rows to return" },
	    { NULL } },
	  "{\"type\":\"object\",\"required\":[\"columns\",\"rows\",\"truncated\"],"
	  "\"properties\":{\"columns\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"rows\":{\"type\":\"array\",\"items\":{\"type\":\"array\"}},"
	  "\"truncated\":{\"type\":\"boolean\"}}}",
	  run_sql },
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

json_object *ift_mcp_tools_list(struct ift_mcp *m)
{
	json_object *r = json_object_new_object(), *v = json_object_new_array();

	for (size_t i = 0; i < NTOOLS; i++) {
		const struct tool *t = &tools[i];
		json_object *o = json_object_new_object(), *ann;

		json_object_object_add(o, "name", json_object_new_string(t->name));
		json_object_object_add(o, "title", json_object_new_string(t->title));
		json_object_object_add(o, "description", json_object_new_string(t->desc));
		json_object_object_add(o, "inputSchema", ift_mcp_input_schema(t->args));
		if (ift_mcp_structured(m) && t->output_schema)
			json_object_object_add(o, "outputSchema",
					       json_tokener_parse(t->output_schema));
		ann = json_object_new_object();
		json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(1));
		json_object_object_add(ann, "openWorldHint", json_object_new_boolean(0));
		json_object_object_add(o, "annotations", ann);
		json_object_array_add(v, o);
	}
	json_object_object_add(r, "tools", v);
	return r;
}

static json_object *text_content(const char *text)
{
	json_object *v = json_object_new_array(), *c = json_object_new_object();

	json_object_object_add(c, "type", json_object_new_string("text"));
	json_object_object_add(c, "text", json_object_new_string(text));
	json_object_array_add(v, c);
	return v;
}

static json_object *error_result(const char *msg)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "content", text_content(msg));
	json_object_object_add(r, "isError", json_object_new_boolean(1));
	return r;
}

int ift_mcp_tool_call(struct ift_mcp *m, const char *name, json_object *args,
		  json_object **out)
{
	const struct tool *t = NULL;
	json_object *res = NULL, *r;
	struct args a;
	char err[1024] = "";
	size_t jlen;
	char *text;

	*out = NULL;
	for (size_t i = 0; i < NTOOLS && !t; i++)
		if (!strcmp(tools[i].name, name))
			t = &tools[i];
	if (!t)
		return -1;
	/* bad arguments are the tool's error, not the protocol's: the model
	   reads the message and can correct itself (MCP 2025-11-25) */
	if (ift_mcp_args_parse(t->args, args, &a, err, sizeof(err)) < 0 ||
	    t->run(m, &a, &res, err, sizeof(err)) < 0) {
		*out = error_result(*err ? err : "the tool failed");
		return 0;
	}
	text = ift_mcp_text(res);
	jlen = strlen(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
	if (!text || strlen(text) + jlen > MAX_RESULT) {
		snprintf(err, sizeof(err), "the result is %zu bytes, over the limit of %d: ask "
			 "for fewer (limit) or a narrower window", jlen, MAX_RESULT);
		free(text);
		json_object_put(res);
		*out = error_result(err);
		return 0;
	}
	r = json_object_new_object();
	json_object_object_add(r, "content", text_content(text));
	free(text);
	if (ift_mcp_structured(m))
		json_object_object_add(r, "structuredContent", res);
	else
		json_object_put(res);
	json_object_object_add(r, "isError", json_object_new_boolean(0));
	*out = r;
	return 0;
}
