// SPDX-License-Identifier: MIT
/*
 * The report as one HTML page: inline CSS and SVG drawn here, no script, no
 * font, nothing fetched (a Content-Security-Policy says so to the browser),
 * so the file can be mailed or attached to a ticket and read offline.
 * docs/report.md (HTML) says what each chart shows.
 *
 * Every figure comes from the analysis and the chains, as in the text and
 * JSON reports; only the charts over time read the trace again (its samples)
 * and walk the analysis' calls one by one.  Drawing is bounded by pixels, not
 * by calls: a chart with more points than it has room for draws one point per
 * occupied cell and says so, while the histograms and tables count every call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"

/* ---- figures ------------------------------------------------------ */

static const char *bytes(char *buf, size_t len, uint64_t b)
{
	return ift_fmt_bytes(buf, len, (double)b);
}

static const char *cause_title(enum ift_cause c)
{
	switch (c) {
	case IFT_CAUSE_CPU_CONTENTION: return "CPU contention";
	case IFT_CAUSE_DATA_STARVATION: return "data starvation";
	case IFT_CAUSE_PAGE_ALLOC: return "page-allocation pressure";
	case IFT_CAUSE_GPU_BOUND: return "GPU-bound";
	}
	return "?";
}

/* ---- page head and summary ---------------------------------------- */

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
	"margin:0 auto;padding:16px 24px 48px;max-width:1080px;color:#1d1d1f;background:#fff}"
	"h1{font-size:22px;margin:4px 0 8px}h2{font-size:18px;margin:32px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:0 0 6px}"
	"h4{font-size:13px;margin:12px 0 4px;color:#444}"
	"table{border-collapse:collapse;margin:4px 0 8px;font-size:13px}"
	"th,td{padding:2px 8px;text-align:left;vertical-align:top}"
	"th{background:#f3f3f5;font-weight:600}tr:nth-child(even) td{background:#fafafa}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"table.summary td:first-child{color:#555;padding-left:0}"
	"tr.nested td:first-child{padding-left:24px;color:#555}"
	".warning{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px;margin:8px 0}"
	".chain{border:1px solid #ddd;border-left:6px solid #999;border-radius:4px;"
	"padding:10px 14px;margin:12px 0}"
	".chain.sev-HIGH{border-left-color:#d62728}.chain.sev-MEDIUM{border-left-color:#ff9f1a}"
	".chain.sev-LOW{border-left-color:#7f9fbf}"
	".badge{display:inline-block;font-size:11px;font-weight:700;color:#fff;"
	"background:#7f9fbf;border-radius:3px;padding:1px 6px;margin-right:6px}"
	".sev-HIGH .badge{background:#d62728}.sev-MEDIUM .badge{background:#ff9f1a}"
	".summary{font-size:15px;margin:4px 0}.cost{color:#444;margin:2px 0}"
	"svg.chart{display:block;width:100%;height:auto;margin:6px 0}"
	"svg.flame text{font-size:10px;fill:#222;pointer-events:none}"
	"svg text{font:11px system-ui,sans-serif;fill:#333}"
	"svg .axis{stroke:#999;stroke-width:1}svg .grid{stroke:#eee;stroke-width:1}"
	".hists{display:flex;flex-wrap:wrap;gap:8px}.hists svg.chart{width:100%}"
	".hists figure{margin:0;flex:1 1 480px;max-width:540px}"
	".note{color:#666;font-size:12px}ul.recs{margin:4px 0 4px 18px;padding:0}"
	"details{margin:6px 0}summary{cursor:pointer;color:#444}"
	"footer{margin-top:40px;color:#888;font-size:12px}"
	/* the scatter's op colours, as palette[] (html-charts.c) */
	".op0{fill:#1f77b4}.op1{fill:#ff7f0e}.op2{fill:#2ca02c}.op3{fill:#9467bd}"
	".op4{fill:#8c564b}.op5{fill:#e377c2}.op6{fill:#17becf}.op7{fill:#7f7f7f}";

static void head(struct html *h, const struct ift_html_opts *o)
{
	const struct ift_analysis_summary *s = h->s;
	const struct ift_recovery *rec = ift_trace_recovery(h->t);
	uint64_t span = s->end_ts - s->start_ts;
	char b1[32], b2[32], b3[32];

	out(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	    "style-src 'unsafe-inline'\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<meta name=\"generator\" content=\"ingero-ftrace\">\n<title>ingero-ftrace report");
	if (o && o->title) {
		out(h, ": ");
		esc(h, o->title);
	}
	out(h, "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n"
	    "<h1>ingero-ftrace report</h1>\n<table class=\"summary\" id=\"summary\">\n", css);
	if (o && o->title) {
		out(h, "<tr><td>trace</td><td>");
		esc(h, o->title);
		out(h, "</td></tr>\n");
	}
	out(h, "<tr><td>command</td><td><code>");
	esc(h, s->command[0] ? s->command : "(not recorded)");
	out(h, "</code></td></tr>\n");
	if (s->from_ns || s->to_ns != span)
		out(h, "<tr><td>window</td><td>%s .. %s of a %s trace</td></tr>\n",
		    dur(b1, sizeof(b1), s->from_ns), dur(b2, sizeof(b2), s->to_ns),
		    dur(b3, sizeof(b3), span));
	else
		out(h, "<tr><td>duration</td><td>%s</td></tr>\n",
		    dur(b1, sizeof(b1), s->duration_ns));
	out(h, "<tr><td>events</td><td>%s (%s CUDA calls, %s host events), %u CPUs</td></tr>\n",
	    num(b1, sizeof(b1), s->events), num(b2, sizeof(b2), s->calls),
	    num(b3, sizeof(b3), s->host_events), s->cpus);
	out(h, "<tr><td>lost</td><td>%s</td></tr>\n</table>\n",
	    num(b1, sizeof(b1), s->lost_events));
	if (s->lost_events)
		out(h, "<p class=\"warning\">The kernel dropped %s events: counts and times "
		    "may be short.</p>\n", num(b1, sizeof(b1), s->lost_events));
	/* the file's own state, as info gives it: a page of what could be read */
	if (rec->damaged)
		out(h, "<p class=\"warning\" id=\"damaged\">The trace file is damaged (%s after "
		    "byte %s): this page shows the %s of %s bytes before it; the rest is "
		    "lost.</p>\n", ift_strerror(rec->reason), num(b1, sizeof(b1), rec->good_bytes),
		    num(b2, sizeof(b2), rec->good_bytes), num(b3, sizeof(b3), rec->file_size));
	else if (!rec->finished)
		out(h, "<p class=\"warning\" id=\"unfinished\">The recording was not finished "
		    "(no index): this page shows every section read, %s of %s bytes.</p>\n",
		    num(b1, sizeof(b1), rec->good_bytes), num(b2, sizeof(b2), rec->file_size));
	out(h, "<p class=\"note\">Times are offsets from the trace start. Sections: "
	    "<a href=\"#chains\">why the GPU waits</a> &middot; <a href=\"#over-time\">"
	    "over the run</a> &middot; <a href=\"#latency\">latency by op</a> &middot; "
	    "<a href=\"#sched\">processes</a> &middot; <a href=\"#tables\">tables</a></p>\n"
	    "</header>\n");
}

/* ---- chains ------------------------------------------------------- */

static void evidence_value(char *buf, size_t len, const char *key, uint64_t v)
{
	size_t k = strlen(key);

	if (k > 3 && !strcmp(key + k - 3, "_ns"))
		dur(buf, len, v);
	else if (k > 6 && !strcmp(key + k - 6, "_bytes"))
		bytes(buf, len, v);
	else if (k > 8 && !strcmp(key + k - 8, "_permille"))
		snprintf(buf, len, "%.1f%%", (double)v / 10);
	else if (k > 6 && !strcmp(key + k - 6, "_milli"))
		snprintf(buf, len, "%.2f", (double)v / 1000);
	else
		num(buf, len, v);
}

/* The worst occurrence on three lanes, numbered as the table below it. */
static void chain_timeline(struct html *h, size_t k, const struct ift_chain *ch)
{
	static const char *const lanes[] = { "system", "host", "cuda" };
	uint64_t t0 = ch->steps[0].t_ns, t1 = ch->steps[0].t_ns;
	double last[3] = { -100, -100, -100 };
	char b1[32], b2[32];
	int height = 3 * 28 + 34;

	for (size_t i = 0; i < ch->nsteps; i++) {
		t0 = ch->steps[i].t_ns < t0 ? ch->steps[i].t_ns : t0;
		t1 = ch->steps[i].t_ns > t1 ? ch->steps[i].t_ns : t1;
	}
	out(h, "<svg class=\"chart chain-timeline\" id=\"chain-%zu-timeline\" data-n=\"%zu\" "
	    "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"worst occurrence\">\n",
	    k, ch->nsteps, CW, height);
	for (int l = 0; l < 3; l++) {
		int y = 22 + l * 28;

		out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
		    "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
		    ML - 8, y + 4, lanes[l], ML, CW - MR, y, y);
	}
	out(h, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
	    ML, CW - MR, height - 26, height - 26);
	out(h, "<text x=\"%d\" y=\"%d\">%.6fs</text>", ML, height - 10, (double)t0 / 1e9);
	if (t1 > t0)
		out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.6fs (+%s)</text>",
		    CW - MR, height - 10, (double)t1 / 1e9, dur(b1, sizeof(b1), t1 - t0));
	for (size_t i = 0; i < ch->nsteps; i++) {
		const struct ift_chain_step *st = &ch->steps[i];
		int l = !strcmp(st->layer, "system") ? 0 : !strcmp(st->layer, "host") ? 1 : 2;
		double x = t1 > t0 ? ML + 10 + (double)(st->t_ns - t0) * (PW - 20) / (double)(t1 - t0)
				   : ML + 10;

		/* steps at one instant sit side by side, in their order */
		if (x < last[l] + 18)
			x = last[l] + 18;
		last[l] = x;
		out(h, "<g class=\"step\" data-t-ns=\"%" PRIu64 "\"><title>%s ",
		    st->t_ns, tick_label(b2, sizeof(b2), st->t_ns, 1000));
		esc(h, st->text);
		out(h, "</title><circle cx=\"%.1f\" cy=\"%d\" r=\"8\" fill=\"%s\"/>"
		    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" style=\"fill:#fff;"
		    "font-size:9px\">%zu</text></g>\n", x, 22 + l * 28,
		    l == 0 ? "#7f7f7f" : l == 1 ? "#d62728" : "#1f77b4", x, 25 + l * 28, i + 1);
	}
	out(h, "</svg>\n");
}

/* The frames of call site ST, innermost first, Python frames where they
   called the native ones (ift_stack_parts()), one <code> a line. */
static void frames(struct html *h, const struct ift_stack *st)
{
	struct ift_stack_parts p;
	char line[512];

	ift_stack_parts(st, &p);
	out(h, "<td class=\"frames\">");
	for (unsigned k = 0; k < p.nframes; k++) {
		ift_frame_format(&st->frames[ift_stack_chain_index(&p, k)], line, sizeof(line));
		out(h, "%s<code class=\"frame\">", k ? "<br>" : "");
		esc(h, line);
		out(h, "</code>");
	}
	if (!st)
		out(h, "(site not in the file: the recording was cut short)");
	out(h, "</td>");
}

/* Where the chain's time was lost from (record --stack), as `sites' in JSON. */
static void chain_sites(struct html *h, const struct ift_chain *ch)
{
	char b1[32], b2[32];

	if (!ch->nsites)
		return;
	out(h, "<h4>called from</h4>\n<table class=\"chain-sites\"><tr><th class=\"n\">site"
	    "</th><th class=\"n\">share</th><th class=\"n\">%s</th><th class=\"n\">cost</th>"
	    "<th>frames, innermost first</th></tr>\n",
	    ch->phase == IFT_PHASE_BEFORE ? "gaps" : "calls");
	for (size_t i = 0; i < ch->nsites; i++) {
		const struct ift_chain_site *x = &ch->sites[i];

		out(h, "<tr class=\"site\" data-stack=\"%" PRIu64 "\" data-calls=\"%" PRIu64 "\" "
		    "data-cost-ns=\"%" PRIu64 "\" data-share-permille=\"%" PRIu32 "\"><td class=\"n\">"
		    "#%" PRIu64 "</td><td class=\"n\">%.1f%%</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">%s</td>", x->stack, x->calls, x->cost_ns, x->share_permille,
		    x->stack, (double)x->share_permille / 10, num(b1, sizeof(b1), x->calls),
		    dur(b2, sizeof(b2), x->cost_ns));
		frames(h, x->frames);
		out(h, "</tr>\n");
	}
	out(h, "</table>\n");
}

/* A Python frame as text in a cell of its own. */
static void py_frame_cell(struct html *h, const struct ift_frame *f)
{
	char line[512];

	ift_frame_format(f, line, sizeof(line));
	out(h, "<td><code class=\"frame\">");
	esc(h, line);
	out(h, "</code></td>");
}

/* The lines of Python the chain's time was lost from (record --py-stack),
   as `py_sites' in JSON; nothing for a trace without Python frames. */
static void chain_py_sites(struct html *h, const struct ift_chain *ch)
{
	const char *what = ch->phase == IFT_PHASE_BEFORE ? "gaps" : "calls";
	char b1[32], b2[32];

	if (!ch->py || !ch->site_calls)
		return;
	out(h, "<h4>in Python</h4>\n<p class=\"note\">Python frames read in flight for %s of "
	    "the %s %s with a stack.</p>\n", num(b1, sizeof(b1), ch->py_calls),
	    num(b2, sizeof(b2), ch->site_calls), what);
	if (!ch->npy_sites)
		return;
	out(h, "<table class=\"chain-py-sites\"><tr><th>line</th><th class=\"n\">share</th>"
	    "<th class=\"n\">%s</th><th class=\"n\">cost</th><th class=\"n\">site</th></tr>\n",
	    what);
	for (size_t i = 0; i < ch->npy_sites; i++) {
		const struct ift_chain_py_site *x = &ch->py_sites[i];

		out(h, "<tr class=\"py-site\" data-stack=\"%" PRIu64 "\" data-line=\"%" PRIu64
		    "\" data-calls=\"%" PRIu64 "\" data-cost-ns=\"%" PRIu64 "\" "
		    "data-share-permille=\"%" PRIu32 "\">", x->stack, x->frame->offset, x->calls,
		    x->cost_ns, x->share_permille);
		py_frame_cell(h, x->frame);
		out(h, "<td class=\"n\">%.1f%%</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">#%" PRIu64 "</td></tr>\n", (double)x->share_permille / 10,
		    num(b1, sizeof(b1), x->calls), dur(b2, sizeof(b2), x->cost_ns), x->stack);
	}
	out(h, "</table>\n");
}

static void chain(struct html *h, size_t k, const struct ift_chain *ch)
{
	const char *sev = ift_severity_name(ch->severity);
	char b1[32], b2[32], b3[32];

	out(h, "<article class=\"chain sev-%s\" id=\"chain-%zu\" data-severity=\"%s\" "
	    "data-cause=\"%s\" data-phase=\"%s\">\n<h3><span class=\"badge\">%s</span>%zu. %s %s ",
	    sev, k, sev, ift_cause_name(ch->cause), ift_phase_name(ch->phase), sev, k,
	    cause_title(ch->cause), ch->phase == IFT_PHASE_BEFORE ? "before" : "in");
	esc(h, ch->op);
	out(h, "</h3>\n<p class=\"summary\">");
	esc(h, ch->summary);
	out(h, "</p>\n<p class=\"cost\">cost %s, %u%% of the CUDA threads' active time (%s)",
	    dur(b1, sizeof(b1), ch->cost_ns),
	    (unsigned)((ch->cost_ns * 1000 / (ch->wall_ns ? ch->wall_ns : 1) + 5) / 10),
	    dur(b2, sizeof(b2), ch->wall_ns));
	if (ch->p50_ns) {
		out(h, "; ");
		esc(h, ch->op);
		out(h, " p50 %s p99 %s", dur(b1, sizeof(b1), ch->p50_ns),
		    dur(b3, sizeof(b3), ch->p99_ns));
	}
	out(h, "; thread %" PRIu32 " of process %" PRIu32 "</p>\n", ch->tid, ch->pid);

	if (ch->nsteps) {
		out(h, "<h4>worst occurrence</h4>\n");
		chain_timeline(h, k, ch);
		out(h, "<table class=\"steps\"><tr><th class=\"n\">#</th><th class=\"n\">time</th>"
		    "<th>layer</th><th>what happened</th></tr>\n");
		for (size_t i = 0; i < ch->nsteps; i++) {
			out(h, "<tr><td class=\"n\">%zu</td><td class=\"n\">%.6fs</td><td>%s</td><td>",
			    i + 1, (double)ch->steps[i].t_ns / 1e9, ch->steps[i].layer);
			esc(h, ch->steps[i].text);
			out(h, "</td></tr>\n");
		}
		out(h, "</table>\n");
	}
	if (ch->ntasks) {
		out(h, "<h4>who took the time</h4>\n<table class=\"tasks\"><tr><th>relation</th>"
		    "<th>task</th><th class=\"n\">pid</th><th class=\"n\">tid</th><th>role</th>"
		    "<th class=\"n\">count</th><th class=\"n\">time</th><th class=\"n\">share</th>"
		    "</tr>\n");
		for (size_t i = 0; i < ch->ntasks; i++) {
			const struct ift_chain_task *t = &ch->tasks[i];

			out(h, "<tr><td>%s</td><td>", t->relation);
			esc(h, t->comm[0] ? t->comm : "?");
			out(h, "%s</td><td class=\"n\">%" PRIu32 "</td><td class=\"n\">%" PRIu32
			    "</td><td>", t->outside ? " (not traced)" : "", t->pid, t->tid);
			esc(h, ift_role_name(t->role) ? ift_role_name(t->role) : "");
			out(h, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			    "<td class=\"n\">%.1f%%</td></tr>\n", num(b1, sizeof(b1), t->count),
			    dur(b2, sizeof(b2), t->ns), (double)t->share_permille / 10);
		}
		out(h, "</table>\n");
	}
	chain_sites(h, ch);
	chain_py_sites(h, ch);
	if (ch->nrecs) {
		out(h, "<h4>fix</h4>\n<ul class=\"recs\">\n");
		for (size_t i = 0; i < ch->nrecs; i++) {
			out(h, "<li>");
			esc(h, ch->recs[i]);
			out(h, "</li>\n");
		}
		out(h, "</ul>\n");
	}
	if (ch->nnums) {
		out(h, "<details><summary>evidence</summary>\n<table class=\"evidence\">\n");
		for (size_t i = 0; i < ch->nnums; i++) {
			if (ch->nums[i].old)
				continue;	/* a reader sees the new name once */
			evidence_value(b1, sizeof(b1), ch->nums[i].key, ch->nums[i].value);
			out(h, "<tr><td><code>");
			esc(h, ch->nums[i].key);
			out(h, "</code></td><td class=\"n\">%s</td></tr>\n", b1);
		}
		out(h, "</table>\n</details>\n");
	}
	out(h, "</article>\n");
}

static void chains(struct html *h)
{
	size_t n = ift_chains_count(h->c);

	out(h, "<section id=\"chains\" data-n=\"%zu\">\n<h2>Why the GPU waits</h2>\n", n);
	if (!n)
		out(h, "<p class=\"summary\" id=\"no-chain\">No host cause found: no op has a tail "
		    "past the thresholds, and the CUDA threads neither starve between calls nor "
		    "mostly wait for the device.</p>\n");
	else
		out(h, "<p class=\"note\">%zu chain%s, most costly first: cause &rarr; host "
		    "evidence &rarr; CUDA symptom, each with the timeline of its worst occurrence "
		    "(numbered markers: system, host and CUDA layers).</p>\n", n, n > 1 ? "s" : "");
	for (size_t i = 0; i < n; i++)
		chain(h, i + 1, ift_chains_get(h->c, i));
	out(h, "</section>\n");
}

/* ---- the tables of the text report -------------------------------- */

static void op_row(struct html *h, const struct ift_op_stats *s, bool nested)
{
	char b[12][32];

	out(h, "<tr class=\"op%s\" data-op=\"", nested ? " nested" : "");
	esc(h, s->name);
	out(h, "\"><td>%s", nested ? "\xe2\x86\xb3 " : "");
	esc(h, s->name);
	out(h, "</td><td>%s</td>", ift_api_name(s->api));
	if (s->callers_wall_ns)
		snprintf(b[11], sizeof(b[11]), "%.1f%%",
			 100.0 * (double)s->total_ns / (double)s->callers_wall_ns);
	else
		snprintf(b[11], sizeof(b[11]), "-");
	out(h, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
	    num(b[0], 32, s->calls), num(b[1], 32, s->errors), dur(b[2], 32, s->total_ns),
	    dur(b[3], 32, s->mean_ns), dur(b[4], 32, s->min_ns), dur(b[5], 32, s->p50_ns),
	    dur(b[6], 32, s->p95_ns), dur(b[7], 32, s->p99_ns), dur(b[8], 32, s->max_ns),
	    s->bytes ? bytes(b[9], 32, s->bytes) : "", b[11]);
}

/* The text's op table, in its order (ift_op_rows()). */
static int op_table(struct html *h)
{
	size_t n = ift_analysis_op_count(h->a);
	struct ift_op_row *rows;

	if (!n) {
		out(h, "<p>No CUDA calls in the window.</p>\n");
		return 0;
	}
	rows = ift_op_rows(ift_analysis_op(h->a, 0), n);
	if (!rows)
		return -ENOMEM;
	out(h, "<h3>CUDA ops</h3>\n<table class=\"ops\" id=\"ops\"><tr><th>op</th><th>api</th>"
	    "<th class=\"n\">calls</th><th class=\"n\">errors</th><th class=\"n\">total</th>"
	    "<th class=\"n\">mean</th><th class=\"n\">min</th><th class=\"n\">p50</th>"
	    "<th class=\"n\">p95</th><th class=\"n\">p99</th><th class=\"n\">max</th>"
	    "<th class=\"n\">bytes</th><th class=\"n\">wall%%</th></tr>\n");
	for (size_t i = 0; i < n; i++)
		op_row(h, rows[i].op, rows[i].nested);
	free(rows);
	out(h, "</table>\n<p class=\"note\">&#8627; nested: made inside the call above, its "
	    "time already counted there; wall%%: share of the calling threads' wall time.</p>\n");
	return 0;
}

static void error_table(struct html *h)
{
	size_t n = ift_analysis_op_count(h->a);
	bool any = false;
	char b1[32], b2[32], b3[32], b4[32];

	for (size_t i = 0; i < n; i++) {
		const struct ift_op_stats *s = ift_analysis_op(h->a, i);

		for (size_t k = 0; k < s->nerrs; k++) {
			if (!any)
				out(h, "<h3>Errors by return code</h3>\n<table class=\"errors\"><tr>"
				    "<th>op</th><th class=\"n\">return value</th><th class=\"n\">calls"
				    "</th></tr>\n");
			any = true;
			out(h, "<tr><td>");
			esc(h, s->name);
			out(h, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%s</td></tr>\n",
			    s->errs[k].ret, num(b1, sizeof(b1), s->errs[k].calls));
		}
	}
	if (any)
		out(h, "</table>\n");
	any = false;
	for (size_t i = 0; i < n; i++) {
		const struct ift_op_stats *s = ift_analysis_op(h->a, i);

		for (int d = 0; s->copy && d < IFT_COPY_NR; d++) {
			const struct ift_copy_stats *c = &s->dir[d];

			if (!c->calls)
				continue;
			if (!any)
				out(h, "<h3>Copies by direction</h3>\n<table class=\"copies\"><tr>"
				    "<th>op</th><th>direction</th><th class=\"n\">calls</th>"
				    "<th class=\"n\">bytes</th><th class=\"n\">time</th>"
				    "<th class=\"n\">bandwidth</th></tr>\n");
			any = true;
			out(h, "<tr%s><td>", s->nested_calls == s->calls ? " class=\"nested\"" : "");
			esc(h, s->name);
			if (c->total_ns) {
				bytes(b4, sizeof(b4), (uint64_t)((double)c->bytes * 1e9 /
								 (double)c->total_ns));
				strcat(b4, "/s");
			} else {
				snprintf(b4, sizeof(b4), "-");
			}
			out(h, "</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			    "<td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", ift_copy_dir_name(d),
			    num(b1, sizeof(b1), c->calls), bytes(b2, sizeof(b2), c->bytes),
			    dur(b3, sizeof(b3), c->total_ns), b4);
		}
	}
	if (any)
		out(h, "</table>\n");
}

/*
 * The call sites of each op (record --stack), as `stacks' in JSON
 * (ift_report_sites()).  Nothing for a trace without stacks.
 */
static int site_table(struct html *h)
{
	size_t n;
	const struct ift_site *v = ift_report_sites(h->r, &n);
	char b[4][32];

	if (!n)
		return 0;
	out(h, "<h3>Call sites (record --stack)</h3>\n<table class=\"sites\" id=\"site-table\">"
	    "<tr><th>op</th><th class=\"n\">site</th><th class=\"n\">calls</th>"
	    "<th class=\"n\">share</th><th class=\"n\">time</th><th class=\"n\">share</th>"
	    "<th class=\"n\">tail calls</th><th class=\"n\">tail share</th>"
	    "<th>frames, innermost first</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct ift_site *x = &v[i];

		out(h, "<tr class=\"site\" data-op=\"");
		esc(h, x->op);
		out(h, "\" data-stack=\"%" PRIu64 "\" data-calls=\"%" PRIu64 "\" data-total-ns=\"%"
		    PRIu64 "\" data-tail-calls=\"%" PRIu64 "\" data-tail-ns=\"%" PRIu64 "\"><td>",
		    x->stack, x->calls, x->total_ns, x->tail_calls, x->tail_ns);
		esc(h, x->op);
		out(h, "</td><td class=\"n\">#%" PRIu64 "</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">%.1f%%</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>"
		    "<td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>", x->stack,
		    num(b[0], 32, x->calls), 100 * x->share_calls, dur(b[1], 32, x->total_ns),
		    100 * x->share_time, num(b[2], 32, x->tail_calls), 100 * x->share_tail);
		frames(h, ift_trace_stack(h->t, x->stack));
		out(h, "</tr>\n");
	}
	out(h, "</table>\n<p class=\"note\">Only calls that carry a stack count (record "
	    "--stack; with --stack-period N, one call in N): the shares are of those. Tail: "
	    "calls at or above the op's p99.</p>\n");
	return 0;
}

/*
 * The lines of Python that made each op's calls (record --py-stack), as
 * `py_sites' in JSON: per op, how many of its calls had their Python
 * frames read, then its sites, each with the Python frames that called it.
 * Nothing for a trace without Python frames.
 */
static void py_site_table(struct html *h)
{
	size_t n;
	const struct ift_py_op *v = ift_report_py_sites(h->r, &n);
	char b[5][32], line[512];

	if (!ift_report_py(h->r))
		return;
	out(h, "<h3>Python call sites (record --py-stack)</h3>\n<table class=\"py-ops\" "
	    "id=\"py-op-table\"><tr><th>op</th><th class=\"n\">calls</th><th class=\"n\">with "
	    "a stack</th><th class=\"n\">Python frames in flight</th><th class=\"n\">their time"
	    "</th><th class=\"n\">read late</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		out(h, "<tr class=\"py-op\" data-op=\"");
		esc(h, v[i].op);
		out(h, "\" data-calls=\"%" PRIu64 "\" data-in-flight=\"%" PRIu64 "\" data-late=\"%"
		    PRIu64 "\"><td>", v[i].calls, v[i].in_flight, v[i].late);
		esc(h, v[i].op);
		out(h, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
		    num(b[0], 32, v[i].calls), num(b[1], 32, v[i].stack_calls),
		    num(b[2], 32, v[i].in_flight), dur(b[3], 32, v[i].in_flight_ns),
		    num(b[4], 32, v[i].late));
	}
	out(h, "</table>\n<table class=\"py-sites\" id=\"py-site-table\"><tr><th>op</th>"
	    "<th>line</th><th class=\"n\">calls</th><th class=\"n\">time</th>"
	    "<th class=\"n\">share</th><th class=\"n\">tail calls</th><th>called from, "
	    "innermost first</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < v[i].nsites; j++) {
			const struct ift_py_site *x = &v[i].sites[j];
			const struct ift_stack *st = ift_trace_stack(h->t, x->stack);
			struct ift_stack_parts p;

			out(h, "<tr class=\"py-site\" data-op=\"");
			esc(h, v[i].op);
			out(h, "\" data-stack=\"%" PRIu64 "\" data-line=\"%" PRIu64 "\" data-calls=\"%"
			    PRIu64 "\" data-total-ns=\"%" PRIu64 "\" data-tail-calls=\"%" PRIu64
			    "\"><td>", x->stack, x->frame->offset, x->calls, x->total_ns,
			    x->tail_calls);
			esc(h, v[i].op);
			out(h, "</td>");
			py_frame_cell(h, x->frame);
			out(h, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">"
			    "%.1f%%</td><td class=\"n\">%s</td><td class=\"frames\">",
			    num(b[0], 32, x->calls), dur(b[1], 32, x->total_ns),
			    100 * x->share_time, num(b[2], 32, x->tail_calls));
			ift_stack_parts(st, &p);
			for (unsigned k = p.native + 1; k < p.nframes; k++) {
				ift_frame_format(&st->frames[k], line, sizeof(line));
				out(h, "%s<code class=\"frame\">", k > p.native + 1 ? "<br>" : "");
				esc(h, line);
				out(h, "</code>");
			}
			out(h, "</td></tr>\n");
		}
	}
	out(h, "</table>\n<p class=\"note\">The line of Python that made the calls: the "
	    "innermost Python frame of their sites, for the calls whose Python frames were read "
	    "while they were in flight; share: of those calls' time. Read late: the frames were "
	    "read after the call returned, and dropped.</p>\n");
}

static void task_head(struct html *h, bool threads)
{
	out(h, "<tr>%s<th class=\"n\">pid</th><th>name</th><th>role</th><th class=\"n\">cuda "
	    "calls</th><th class=\"n\">cuda</th><th class=\"n\">on-cpu</th><th class=\"n\">"
	    "rq-wait</th><th class=\"n\">blocked</th><th class=\"n\">invol</th>"
	    "<th class=\"n\">vol</th><th class=\"n\">worst</th><th class=\"n\">at</th>"
	    "<th class=\"n\">wake-ups</th><th class=\"n\">pages</th></tr>\n",
	    threads ? "<th class=\"n\">tid</th>" : "");
}

static void task_cells(struct html *h, uint64_t calls, uint64_t cuda,
		       const struct ift_sched_stats *s)
{
	/* a buffer per cell: the arguments are formatted in no set order */
	char b[12][32];

	out(h, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s (%s)</td></tr>\n",
	    num(b[0], 32, calls), dur(b[1], 32, cuda), dur(b[2], 32, s->on_cpu_ns),
	    dur(b[3], 32, s->runqueue_wait_ns), dur(b[4], 32, s->blocked_ns),
	    num(b[5], 32, s->involuntary), num(b[6], 32, s->voluntary),
	    dur(b[7], 32, s->max_off_cpu_ns), dur(b[8], 32, s->max_off_cpu_at),
	    num(b[9], 32, s->wakeups), num(b[10], 32, s->page_allocs),
	    bytes(b[11], 32, s->page_alloc_bytes));
}

static void task_tables(struct html *h)
{
	size_t n = ift_analysis_process_count(h->a), nt = ift_analysis_thread_count(h->a);

	if (!n) {
		out(h, "<p>No process in the window.</p>\n");
		return;
	}
	out(h, "<h3>Processes (%zu)</h3>\n<table class=\"processes\" id=\"process-table\">\n", n);
	task_head(h, false);
	for (size_t i = 0; i < n; i++) {
		const struct ift_process_info *p = ift_analysis_process(h->a, i);

		out(h, "<tr data-pid=\"%" PRIu32 "\"><td class=\"n\">%" PRIu32 "</td><td>",
		    p->pid, p->pid);
		esc(h, p->comm);
		out(h, "</td><td>");
		esc(h, ift_role_name(p->role) ? ift_role_name(p->role) : "");
		out(h, "</td>");
		task_cells(h, p->cuda_calls, p->cuda_ns, &p->sched);
	}
	out(h, "</table>\n<p class=\"note\">cuda: time in CUDA calls (outermost); rq-wait: "
	    "runnable, waiting for a CPU; blocked: sleeping until woken; invol/vol: context "
	    "switches; worst: longest off-CPU stretch, and when it began; pages: page "
	    "allocations.</p>\n");
	out(h, "<details><summary>Threads (%zu)</summary>\n<table class=\"threads\">\n", nt);
	task_head(h, true);
	for (size_t i = 0; i < nt; i++) {
		const struct ift_thread_info *t = ift_analysis_thread(h->a, i);
		const struct ift_task *task = t->task;

		out(h, "<tr><td class=\"n\">%" PRIu32 "</td><td class=\"n\">%" PRIu32 "</td><td>",
		    t->tid, t->pid);
		esc(h, task && task->ncomms ? task->comms[task->ncomms - 1].comm : "");
		out(h, "</td><td>");
		esc(h, ift_role_name(t->role) ? ift_role_name(t->role) : "");
		out(h, "</td>");
		task_cells(h, t->cuda_calls, t->cuda_ns, &t->sched);
	}
	out(h, "</table>\n</details>\n");
}

/* ---- the page ----------------------------------------------------- */

int ift_out_html(FILE *f, struct ift_trace *t, const struct ift_report *r,
		 const struct ift_html_opts *opts)
{
	const struct ift_analysis *a = r->a;
	struct html h = {
		.f = f, .t = t, .r = r, .a = a, .c = r->c, .s = ift_analysis_summary(a),
	};
	size_t nops = ift_analysis_op_count(a);
	int ret;

	for (size_t i = 0; i < nops; i++)
		if (ift_analysis_op(a, i)->op >= h.nop_index)
			h.nop_index = ift_analysis_op(a, i)->op + 1;
	if (h.nop_index) {
		h.op_index = calloc(h.nop_index, sizeof(*h.op_index));
		if (!h.op_index)
			return -ENOMEM;
		for (size_t i = 0; i < nops; i++)
			h.op_index[ift_analysis_op(a, i)->op] = (uint32_t)i + 1;
	}
	head(&h, opts);
	chains(&h);
	ret = ift_html_timeline(&h);
	if (ret >= 0)
		ret = ift_html_histograms(&h);
	if (ret >= 0) {
		ift_html_process_bars(&h);
		ift_html_profile(&h);
		out(&h, "<section id=\"tables\">\n<h2>Tables</h2>\n");
		ret = op_table(&h);
	}
	if (ret >= 0) {
		error_table(&h);
		py_site_table(&h);
		ret = site_table(&h);
	}
	if (ret >= 0) {
		task_tables(&h);
		out(&h, "</section>\n<footer>Made by ingero-ftrace report --html. Every figure is "
		    "defined in docs/report.md.</footer>\n</body>\n</html>\n");
	}
	free(h.op_index);
	if (ret >= 0 && (fflush(f) || ferror(f)))
		ret = ift_write_error();
	return ret;
}
