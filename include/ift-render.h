/* SPDX-License-Identifier: MIT */
#ifndef IFT_RENDER_H
#define IFT_RENDER_H

/*
 * Outputs built from a trace.  Each function writes only to the stream it is
 * given and returns 0 or a negative error; none of them touches tracefs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ift-trace.h"
#include "ift-words.h"

/* The event name of a row: an op name, "sched_switch", "mm_page_alloc", ... */
const char *ift_event_name(const struct ift_trace *t, const struct ift_event *ev);

/* One line of text for EV, trace-cmd style. */
int ift_out_event_text(FILE *f, const struct ift_trace *t,
		       const struct ift_event *ev);

/*
 * One JSON object on one line for EV: ts, cpu, pid, tid, comm, event and the
 * event's fields by name (a call also has dur_ns, ret and its arguments).
 */
int ift_out_event_json(FILE *f, const struct ift_trace *t,
		       const struct ift_event *ev);

/*
 * ift_event_json - EV as a json-c object, the one ift_out_event_json()
 * prints.  The caller owns it (json_object_put()); NULL on ENOMEM.
 */
struct json_object *ift_event_json(const struct ift_trace *t,
				   const struct ift_event *ev);

struct ift_analysis;
struct ift_chains;
struct ift_report;
struct ift_op_stats;

struct ift_html_opts {
	const char *title;		/* the trace's name on the page, or NULL */
};

/*
 * ift_out_html - the report as one self-contained HTML page (inline CSS and
 * SVG charts, no script, nothing fetched) on F: the chains with their
 * timelines, CPU utilisation, runnable tasks and CUDA call latency over the
 * window, a latency histogram per op, per-process on-CPU / run-queue wait /
 * blocked bars, and the tables of the text report (docs/report.md, HTML).
 * R is the report of T (ift_report_run()); T is read again, for its
 * samples and its call sites.  Changes nothing; returns 0 or a negative
 * error (-ENOMEM, -EIO when F failed, or the reader's).
 */
int ift_out_html(FILE *f, struct ift_trace *t, const struct ift_report *r,
		 const struct ift_html_opts *opts);

/* ---- the report as text (src/render/text.c) ----------------------- */

#define IFT_TEXT_WIDTH		100	/* the text fits a terminal this wide */
#define IFT_TEXT_MIN_WIDTH	60	/* the narrowest its free text wraps to */

struct ift_text_opts {
	int width;		/* where free text wraps (a narrower terminal's
				   width); outside IFT_TEXT_MIN_WIDTH ..
				   IFT_TEXT_WIDTH, IFT_TEXT_WIDTH: tables keep
				   their columns whatever it is */
	bool per_process;	/* each process in full instead of rankings */
	bool threads;		/* the threads too */
};

/*
 * ift_out_text - report R of trace T as text on F (docs/report.md): the
 * trace, the chains, the op tables, the call sites (T is read again for
 * them) and the processes and threads.  O may be NULL (the defaults).
 * Changes nothing and leaves F's own errors to the caller (fflush, ferror);
 * returns 0 or a negative error (-ENOMEM, or the reader's).
 */
int ift_out_text(FILE *f, struct ift_trace *t, const struct ift_report *r,
		 const struct ift_text_opts *o);

/* How `top' names what it shows (src/render/top.c). */
struct ift_top_view {
	const char *name;	/* the file followed or replayed */
	const char *state;	/* "recording", "recorded", "replaying" */
	uint64_t length_ns;	/* of the trace so far */
	uint64_t stale_ns;	/* a recording that has not grown for this long */
	int width;		/* as ift_text_opts.width */
};

/*
 * ift_out_top - the frame FR (ift_top_frame() of a window's report) as
 * `top' draws it on F: the window, the machine's load, the ops' rates and
 * latencies, the most costly chain and the feeders.  F's errors are the
 * caller's.
 */
struct ift_top_frame;
void ift_out_top(FILE *f, const struct ift_top_frame *fr, const struct ift_top_view *v);

/* One side of `report --diff': a trace, the name it was opened by, its report. */
struct ift_diff_side {
	const char *name;		/* named by it when it has no command */
	struct ift_trace *t;
	const struct ift_report *r;
};

/*
 * ift_out_text_diff, ift_out_json_diff - the report of CUR against the
 * report of BASE on F: totals, ops and chains side by side, as text (O may
 * be NULL) or as one JSON object with both reports whole (docs/report.md,
 * "Diff").  As ift_out_text() for errors.
 */
int ift_out_text_diff(FILE *f, const struct ift_diff_side *cur,
		      const struct ift_diff_side *base, const struct ift_text_opts *o);
int ift_out_json_diff(FILE *f, const struct ift_diff_side *cur,
		      const struct ift_diff_side *base);

/*
 * ift_json_text - a string of the trace (a name, a path, argv; or, as
 * ift_json_text_len(), one of LEN bytes that SQL made of them) as a JSON
 * string: valid UTF-8, IFT_TEXT_UTF8's rule (IFT_TEXT_UTF8_ALL's for
 * _len()).  Every JSON output makes its strings of the trace here.  NULL
 * for NULL S (JSON null) and when out of memory.
 */
struct json_object *ift_json_text(const char *s);
struct json_object *ift_json_text_len(const char *s, size_t len);

/* KEY: V into object O, as every JSON output adds its members (a text of
   the trace through ift_json_text()). */
void ift_json_add_u64(struct json_object *o, const char *key, uint64_t v);
void ift_json_add_i64(struct json_object *o, const char *key, int64_t v);
void ift_json_add_text(struct json_object *o, const char *key, const char *v);

/*
 * ift_json_print_pretty - ROOT pretty-printed on F and a newline, laid out
 * alike by every json-c (an empty array is "[]").  Returns 0 or -ENOMEM.
 */
int ift_json_print_pretty(FILE *f, struct json_object *root);

/*
 * ift_out_json - report R of trace T as the pretty-printed object of
 * `report --json' on F: ift_json_report() with the call sites (T is read
 * again for them).  As ift_out_text() for errors.
 */
int ift_out_json(FILE *f, struct ift_trace *t, const struct ift_report *r);

/*
 * ift_out_job_text, ift_out_job_json - the job J (NULL: none found) of the
 * N traces IN, each with its report, as `report -i A -i B ...' prints it:
 * the job's clocks, stragglers and ranks, then each trace's report (text),
 * or one object { "job", "traces": [{ "path", "host", "report" }] }
 * (docs/report.md "Jobs").  As ift_out_text() for errors.
 */
struct ift_job;
struct ift_job_input;
int ift_out_job_text(FILE *f, const struct ift_job *j, const struct ift_job_input *in,
		     size_t n, const struct ift_text_opts *o);
int ift_out_job_json(FILE *f, const struct ift_job *j, const struct ift_job_input *in,
		     size_t n);

/*
 * ift_out_job_text_diff, ift_out_job_json_diff - the job of CUR's traces
 * against BASE's (`report -i A -i B --diff C --diff D'): the ranks, the
 * collectives, the waiting, each rank's waiting, lateness and cost, and
 * each side's stragglers; JSON: { "baseline", "current" (job reports),
 * "changes" } (docs/report.md "Diff").  As ift_out_text() for errors.
 */
struct ift_job_side {
	const struct ift_job *job;	/* NULL: no job */
	const struct ift_job_input *in;
	size_t n;
};
int ift_out_job_text_diff(FILE *f, const struct ift_job_side *cur,
			  const struct ift_job_side *base, const struct ift_text_opts *o);
int ift_out_job_json_diff(FILE *f, const struct ift_job_side *cur,
			  const struct ift_job_side *base);

/* ---- the analysis as JSON (src/render/json.c) --------------------- */

/*
 * The objects of `report --json', key for key as docs/report.md lists them.
 * Each returns a new json-c object the caller owns (json_object_put()); the
 * strings are copied, so it outlives the analysis.
 */
struct ift_sched_stats;
struct ift_thread_info;
struct ift_process_info;
struct ift_chain;

struct json_object *ift_json_report(const struct ift_analysis *a,
				    const struct ift_chains *c);
struct json_object *ift_json_ops(const struct ift_op_stats *ops, size_t n);
struct json_object *ift_json_process(const struct ift_process_info *p);
struct json_object *ift_json_thread(const struct ift_thread_info *t);
/* A role's evidence, or NULL (JSON null) for none. */
struct ift_role_evidence;
struct json_object *ift_json_role_evidence(const struct ift_role_evidence *ev);
struct json_object *ift_json_chain(const struct ift_chain *ch);
struct json_object *ift_json_chains(const struct ift_chains *c);
/* The job J of the traces IN as `report --json''s "job" object. */
struct json_object *ift_json_job(const struct ift_job *j, const struct ift_job_input *in);
/*
 * A call site (record --stack) of trace T as a `stack site' object, frames
 * innermost first as text; ift_json_sites(): an array of N of them.
 */
struct ift_site;
struct json_object *ift_json_site(const struct ift_trace *t, const struct ift_site *s);
struct json_object *ift_json_sites(const struct ift_trace *t, const struct ift_site *v,
				   size_t n);
/*
 * A Python call site (record --py-stack) of trace T as a `Python call site'
 * object; an op's as a `Python op' object with its first LIMIT sites
 * (SIZE_MAX: all it holds); ift_json_py_ops(): an array of N ops, every
 * site each holds (report --json's `py_sites').
 */
struct ift_py_site;
struct ift_py_op;
struct json_object *ift_json_py_site(const struct ift_trace *t, const struct ift_py_site *s);
struct json_object *ift_json_py_op(const struct ift_trace *t, const struct ift_py_op *op,
				   size_t limit);
struct json_object *ift_json_py_ops(const struct ift_trace *t, const struct ift_py_op *v,
				    size_t n);
/*
 * The CPU profile P (record --profile) as `report --json''s "profile"
 * object: its period, its samples and each group's top frames.
 */
struct ift_profile;
struct json_object *ift_json_profile(const struct ift_profile *p);
/* The `gpu' object: the GPUs' busy time (NVML) and the idle time A's
   chains C explain, or why not measured. */
struct json_object *ift_json_gpu(const struct ift_analysis *a, const struct ift_chains *c);
/* A `profile group' object of G, its first LIMIT lines and functions. */
struct ift_prof_group;
struct json_object *ift_json_prof_group(const struct ift_prof_group *g, size_t limit);
/*
 * Adds op S's calls and latency to object O: calls, errors, total_ns,
 * mean_ns, p50_ns, p95_ns, p99_ns, max_ns, as ift_json_ops() names them
 * (get_op_latency's figures per process).
 */
void ift_json_op_latency(struct json_object *o, const struct ift_op_stats *s);
/* Adds the scheduler figures of S to object O. */
void ift_json_sched(struct json_object *o, const struct ift_sched_stats *s);

/* "H2D", "default", ...: enum ift_copy_dir as report names it. */
const char *ift_copy_dir_name(int dir);
/* A thread's last name ("" when the task table has none). */
const char *ift_thread_comm(const struct ift_thread_info *t);

#endif
