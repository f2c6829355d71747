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
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-render.h"
#include "ift-words.h"

/* Chart geometry, in SVG user units (pixels when shown at 1000 px wide). */
#define CW		1000	/* width of the wide charts */
#define ML		76	/* left margin: the y-axis labels */
#define MR		16
#define PW		(CW - ML - MR)
#define CELL_W		2	/* a scatter point per occupied cell ... */
#define CELL_H		3
#define SCATTER_ALL	4000	/* ... unless there are at most this many calls */
#define MAX_BARS	100	/* processes drawn as bars; the table has them all */
#define NCOLORS		8	/* op colours in the scatter; the last is "other" */

static const char *const palette[NCOLORS] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
	"#17becf", "#7f7f7f",
};

struct html {
	FILE *f;
	struct ift_trace *t;
	const struct ift_analysis *a;
	const struct ift_chains *c;
	const struct ift_analysis_summary *s;
	uint32_t *op_index;	/* op id -> 1 + index in the op table */
	size_t nop_index;
};

static void out(struct html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(struct html *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(h->f, fmt, ap);
	va_end(ap);
}

/*
 * S as HTML text or attribute value: markup characters as entities, control
 * bytes and bytes that are not UTF-8 (a comm or a command line can hold
 * anything) as '?'.
 */
static void esc(struct html *h, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = ift_utf8_len(p);

		switch (*p) {
		case '&': fputs("&amp;", h->f); break;
		case '<': fputs("&lt;", h->f); break;
		case '>': fputs("&gt;", h->f); break;
		case '"': fputs("&quot;", h->f); break;
		case '\'': fputs("&#39;", h->f); break;
		default:
			if (!n || *p < 0x20 || *p == 0x7f) {
				fputc('?', h->f);
				n = 1;
			} else {
				fwrite(p, 1, n, h->f);
			}
		}
		p += n ? n : 1;
	}
}

/* ---- figures ------------------------------------------------------ */

static const char *dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, false);
}

/* 1234567 as "1,234,567". */
static const char *num(char *buf, size_t len, uint64_t n)
{
	return ift_fmt_count(buf, len, n);
}

static const char *bytes(char *buf, size_t len, uint64_t b)
{
	return ift_fmt_bytes(buf, len, (double)b);
}

/* A time axis label: an offset in the unit of STEP, without trailing zeros. */
static const char *tick_label(char *buf, size_t len, uint64_t ns, uint64_t step)
{
	if (step >= 1000000000)
		snprintf(buf, len, "%gs", (double)ns / 1e9);
	else if (step >= 1000000)
		snprintf(buf, len, "%gms", (double)ns / 1e6);
	else if (step >= 1000)
		snprintf(buf, len, "%g\xc2\xb5s", (double)ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

/* 1, 2 or 5 times a power of ten, at least SPAN / N. */
static uint64_t nice_step(uint64_t span, unsigned n)
{
	uint64_t raw = span / n, p = 1;

	if (!raw)
		return 1;
	while (p <= raw / 10)
		p *= 10;
	/* the smallest of them not below SPAN / N: at most N steps */
	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	return raw <= 5 * p ? 5 * p : 10 * p;
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

/* The op table's index (0-based) of the op with id OP, or -1. */
static long op_idx(const struct html *h, uint32_t op)
{
	return op < h->nop_index && h->op_index[op] ? (long)h->op_index[op] - 1 : -1;
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
	"svg text{font:11px system-ui,sans-serif;fill:#333}"
	"svg .axis{stroke:#999;stroke-width:1}svg .grid{stroke:#eee;stroke-width:1}"
	".hists{display:flex;flex-wrap:wrap;gap:8px}.hists svg.chart{width:100%}"
	".hists figure{margin:0;flex:1 1 480px;max-width:540px}"
	".note{color:#666;font-size:12px}ul.recs{margin:4px 0 4px 18px;padding:0}"
	"details{margin:6px 0}summary{cursor:pointer;color:#444}"
	"footer{margin-top:40px;color:#888;font-size:12px}"
	/* the scatter's op colours, as palette[] */
	".op0{fill:#1f77b4}.op1{fill:#ff7f0e}.op2{fill:#2ca02c}.op3{fill:#9467bd}"
	".op4{fill:#8c564b}.op5{fill:#e377c2}.op6{fill:#17becf}.op7{fill:#7f7f7f}";

static void head(struct html *h, const struct ift_html_opts *o)
{
	const struct ift_analysis_summary *s = h->s;
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

/* The frames of call site ST, innermost first, one <code> a line. */
static void frames(struct html *h, const struct ift_stack *st)
{
	char line[512];

	out(h, "<td class=\"frames\">");
	for (unsigned k = 0; st && k < st->nframes; k++) {
		ift_frame_format(&st->frames[k], line, sizeof(line));
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
			esc(h, t->role ? t->role : "");
			out(h, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			    "<td class=\"n\">%.1f%%</td></tr>\n", num(b1, sizeof(b1), t->count),
			    dur(b2, sizeof(b2), t->ns), (double)t->share_permille / 10);
		}
		out(h, "</table>\n");
	}
	chain_sites(h, ch);
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

/* ---- over the run: CPU, run queue, call latency ------------------- */

struct series {
	uint64_t *ts;		/* offsets from the trace start */
	int64_t *v;
	size_t n, cap;
};

static int series_add(struct series *se, uint64_t ts, int64_t v)
{
	if (se->n == se->cap) {
		size_t cap = se->cap ? 2 * se->cap : 1024;
		uint64_t *t = realloc(se->ts, cap * sizeof(*t));
		int64_t *w;

		if (!t)
			return -ENOMEM;
		se->ts = t;
		w = realloc(se->v, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		se->v = w;
		se->cap = cap;
	}
	se->ts[se->n] = ts;
	se->v[se->n++] = v;
	return 0;
}

/* The system-wide CPU utilisation and runnable tasks sampled in the window. */
/* The system samples of the window, as two series. */
static int read_samples(struct html *h, struct series *busy, struct series *run)
{
	const struct ift_analysis_summary *s = h->s;
	uint64_t lo = s->start_ts + s->from_ns, hi = s->start_ts + s->to_ns;
	const struct ift_sys_sample *v;
	size_t n;
	int ret = 0;

	v = ift_analysis_samples(h->a, &n);
	for (size_t i = 0; i < n && ret >= 0 && v[i].ts <= hi; i++) {
		if (v[i].ts < lo)
			continue;
		if (v[i].busy_permille >= 0)
			ret = series_add(busy, v[i].ts - s->start_ts, v[i].busy_permille);
		if (ret >= 0 && v[i].running >= 0)
			ret = series_add(run, v[i].ts - s->start_ts, v[i].running);
	}
	return ret < 0 ? ret : 0;
}

static double xmap(const struct html *h, uint64_t off)
{
	uint64_t from = h->s->from_ns, span = h->s->to_ns - from;

	if (off < from)
		off = from;
	return ML + (double)(off - from) * PW / (double)(span ? span : 1);
}

/*
 * A polyline of SE in the panel at Y0, PH high, VMAX at the top.  More
 * samples than pixel columns: the largest of each column is drawn.
 */
static int panel_line(struct html *h, const struct series *se, double vmax, int y0,
		      int ph, const char *id, const char *color)
{
	bool down = se->n > PW;
	int64_t *col = NULL;
	size_t drawn = 0;

	if (down) {
		col = malloc(PW * sizeof(*col));
		if (!col)
			return -ENOMEM;
		for (int i = 0; i < PW; i++)
			col[i] = INT64_MIN;
		for (size_t i = 0; i < se->n; i++) {
			int x = (int)(xmap(h, se->ts[i]) - ML);

			x = x < 0 ? 0 : x >= PW ? PW - 1 : x;
			if (se->v[i] > col[x])
				col[x] = se->v[i];
		}
	}
	out(h, "<g class=\"series\" id=\"%s\" data-n=\"%zu\">\n<polyline class=\"data\" "
	    "fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", id, se->n, color);
	for (size_t i = 0; i < (down ? (size_t)PW : se->n); i++) {
		double x, v;

		if (down && col[i] == INT64_MIN)
			continue;
		x = down ? ML + (double)i + 0.5 : xmap(h, se->ts[i]);
		v = (double)(down ? col[i] : se->v[i]);
		v = v < 0 ? 0 : v > vmax ? vmax : v;
		out(h, "%s%.1f,%.1f", drawn++ ? " " : "", x, y0 + ph - v * ph / vmax);
	}
	out(h, "\"/>\n</g>\n");
	free(col);
	return (int)(drawn > INT32_MAX ? INT32_MAX : drawn);
}

static void panel_frame(struct html *h, int y0, int ph, const char *title)
{
	out(h, "<text x=\"%d\" y=\"%d\" style=\"font-weight:600\">%s</text>\n"
	    "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>"
	    "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
	    ML, y0 - 6, title, ML, ML, y0, y0 + ph, ML, CW - MR, y0 + ph, y0 + ph);
}

/* A y gridline with its label. */
static void ygrid(struct html *h, double y, const char *label)
{
	out(h, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
	    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
	    ML + 1, CW - MR, y, y, ML - 6, y + 4, label);
}

static void no_data(struct html *h, int y0, int ph, const char *what)
{
	out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"empty\">%s</text>\n",
	    ML + PW / 2, y0 + ph / 2, what);
}

/* Log-scale y of duration NS between decades LO and HI. */
static double ylog(uint64_t ns, double lo, double hi, int y0, int ph)
{
	double l = log10(ns ? (double)ns : 1);

	l = l < lo ? lo : l > hi ? hi : l;
	return y0 + ph - (l - lo) * ph / (hi - lo);
}

static const char *decade_label(char *buf, size_t len, int p)
{
	static const char *const unit[] = { "ns", "\xc2\xb5s", "ms", "s" };
	static const int mul[] = { 1, 10, 100 };

	if (p < 0)
		p = 0;
	if (p >= 9)
		snprintf(buf, len, "%.0fs", pow(10, p - 9));
	else
		snprintf(buf, len, "%d%s", mul[p % 3], unit[p / 3]);
	return buf;
}

/* Colour of the op at table index I: the first ops by time, then grey. */
static int op_color(long i)
{
	return i >= 0 && i < NCOLORS - 1 ? (int)i : NCOLORS - 1;
}

static int panel_latency(struct html *h, int y0, int ph)
{
	size_t n = ift_analysis_call_count(h->a), counted = 0, drawn = 0;
	uint64_t mn = UINT64_MAX, mx = 0;
	int ncol = PW / CELL_W + 1, nrow = ph / CELL_H + 1;
	unsigned char *seen = NULL;
	double lo, hi;
	char b[32];

	for (size_t i = 0; i < n; i++) {
		const struct ift_call_info *c = ift_analysis_call(h->a, i);

		if (!c->counted)
			continue;
		counted++;
		mn = c->dur_ns < mn ? c->dur_ns : mn;
		mx = c->dur_ns > mx ? c->dur_ns : mx;
	}
	panel_frame(h, y0, ph, "CUDA call latency (log scale)");
	if (!counted) {
		out(h, "<g class=\"series\" id=\"latency\" data-n=\"0\"></g>\n");
		no_data(h, y0, ph, "no CUDA calls in the window");
		return 0;
	}
	lo = floor(log10(mn ? (double)mn : 1));
	hi = ceil(log10(mx ? (double)mx : 1));
	if (hi <= lo)
		hi = lo + 1;
	for (int p = (int)lo; p <= (int)hi; p++)
		ygrid(h, ylog((uint64_t)pow(10, p), lo, hi, y0, ph), decade_label(b, sizeof(b), p));
	if (counted > SCATTER_ALL) {
		seen = calloc((size_t)ncol * (size_t)nrow, 1);
		if (!seen)
			return -ENOMEM;
	}
	out(h, "<g class=\"series\" id=\"latency\" data-n=\"%zu\">\n", counted);
	for (size_t i = 0; i < n; i++) {
		const struct ift_call_info *c = ift_analysis_call(h->a, i);
		double x, y;
		int k;

		if (!c->counted)
			continue;
		x = xmap(h, c->ts - h->s->start_ts);
		y = ylog(c->dur_ns, lo, hi, y0, ph);
		k = op_color(op_idx(h, c->op));
		if (seen) {
			int cx = (int)(x - ML) / CELL_W, cy = (int)(y - y0) / CELL_H;
			size_t cell;

			cx = cx < 0 ? 0 : cx >= ncol ? ncol - 1 : cx;
			cy = cy < 0 ? 0 : cy >= nrow ? nrow - 1 : cy;
			/* one point per cell, whatever the op: the page stays
			   below 2 MB however many calls the trace holds */
			cell = (size_t)cy * (size_t)ncol + (size_t)cx;
			if (seen[cell])
				continue;
			seen[cell] = 1;
			x = ML + cx * CELL_W + CELL_W / 2.0;
			y = y0 + cy * CELL_H + CELL_H / 2.0;
		}
		out(h, "<circle class=\"op%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"/>\n", k, x, y,
		    seen ? "1.3" : "2");
		drawn++;
	}
	out(h, "</g>\n");
	free(seen);
	if (drawn < counted) {
		char b1[32], b2[32];

		out(h, "<text class=\"note downsampled\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		    "%s calls drawn as %s points (one per occupied %dx%d px cell); "
		    "the histograms count every call</text>\n", CW - MR, y0 - 6,
		    num(b1, sizeof(b1), counted), num(b2, sizeof(b2), drawn), CELL_W, CELL_H);
	}
	return 0;
}

/* The legend of the scatter's colours. */
static void latency_legend(struct html *h, int y)
{
	size_t nops = ift_analysis_op_count(h->a);
	int x = ML;

	for (size_t i = 0; i < nops && i < NCOLORS; i++) {
		const char *name = i < NCOLORS - 1 || nops == NCOLORS ?
				   ift_analysis_op(h->a, i)->name : "other ops";
		int w = 24 + 7 * (int)strlen(name);

		if (x + w > CW - MR) {
			x = ML;
			y += 16;
		}
		out(h, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
		    x + 4, y - 4, palette[i], x + 12, y);
		esc(h, name);
		out(h, "</text>\n");
		x += w;
	}
}

static void time_axis(struct html *h, int y0, int ytop)
{
	uint64_t from = h->s->from_ns, to = h->s->to_ns;
	uint64_t step = nice_step(to - from, 12);
	char b[32];

	for (uint64_t t = (from + step - 1) / step * step; t <= to; t += step) {
		double x = xmap(h, t);

		out(h, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
		    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		    x, x, ytop, y0, x, y0 + 14, tick_label(b, sizeof(b), t, step));
		if (t > UINT64_MAX - step)
			break;
	}
	out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">time since the trace start</text>\n",
	    CW - MR, y0 + 30);
}

static int timeline(struct html *h)
{
	struct series busy = { 0 }, run = { 0 };
	const int top = 30, ph1 = 100, ph2 = 100, ph3 = 200, gap = 34;
	int y1 = top, y2 = y1 + ph1 + gap, y3 = y2 + ph2 + gap, height = y3 + ph3 + 76;	/* axis, two lines of legend */
	size_t nchains = ift_chains_count(h->c);
	int64_t rmax = 0, rstep;
	unsigned cpus = h->s->cpus ? h->s->cpus : 1;
	char b[32];
	int ret, d1, d2;

	ret = read_samples(h, &busy, &run);
	if (ret < 0)
		goto done;
	for (size_t i = 0; i < run.n; i++)
		rmax = run.v[i] > rmax ? run.v[i] : rmax;
	if (rmax < (int64_t)cpus)
		rmax = cpus;
	rstep = (int64_t)nice_step((uint64_t)rmax, 4);
	rmax = (rmax + rstep - 1) / rstep * rstep;

	out(h, "<section id=\"over-time\">\n<h2>Over the run</h2>\n<p class=\"note\">System CPU "
	    "utilisation and runnable tasks as sampled from /proc (100 ms), and the duration "
	    "of every CUDA call at its entry time. Shaded bands: the worst occurrence of each "
	    "chain, by number.</p>\n");
	out(h, "<svg class=\"chart\" id=\"timeline\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"CPU utilisation, run queue and CUDA call latency over the run\">\n",
	    CW, height);
	/* the chains' worst occurrences, behind the data */
	for (size_t i = 0; i < nchains; i++) {
		const struct ift_chain *ch = ift_chains_get(h->c, i);
		uint64_t t0, t1;
		double x0, x1;

		if (!ch->nsteps)
			continue;
		t0 = ch->steps[0].t_ns;
		t1 = ch->steps[ch->nsteps - 1].t_ns;
		x0 = xmap(h, t0);
		x1 = xmap(h, t1 > h->s->to_ns ? h->s->to_ns : t1);
		if (x1 < x0 + 3)
			x1 = x0 + 3;
		out(h, "<g class=\"chain-band\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\""
		    " fill=\"#d62728\" fill-opacity=\"0.06\" stroke=\"#d62728\" "
		    "stroke-opacity=\"0.4\"/><text x=\"%.1f\" y=\"%d\" "
		    "style=\"fill:#d62728\">#%zu</text></g>\n", x0, y1, x1 - x0,
		    y3 + ph3 - y1, x0 + 2, y3 + ph3 - 4 - (int)(i % 4) * 12, i + 1);
	}

	/* the time grid behind the data and the labels */
	time_axis(h, y3 + ph3, y1);
	panel_frame(h, y1, ph1, "CPU utilisation, all CPUs");
	for (int p = 0; p <= 100; p += 50) {
		snprintf(b, sizeof(b), "%d%%", p);
		ygrid(h, y1 + ph1 - p * ph1 / 100.0, b);
	}
	if (busy.n) {
		d1 = panel_line(h, &busy, 1000, y1, ph1, "cpu-busy", "#2ca02c");
	} else {
		out(h, "<g class=\"series\" id=\"cpu-busy\" data-n=\"0\"></g>\n");
		no_data(h, y1, ph1, "no CPU samples in this trace");
		d1 = 0;
	}

	panel_frame(h, y2, ph2, "runnable tasks (procs_running), all CPUs");
	for (int64_t v = 0; v <= rmax; v += rstep) {
		snprintf(b, sizeof(b), "%" PRId64, v);
		ygrid(h, y2 + ph2 - (double)v * ph2 / (double)rmax, b);
	}
	out(h, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
	    "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
	    "style=\"fill:#d62728\">%u CPUs</text>\n", ML, CW - MR,
	    y2 + ph2 - (double)cpus * ph2 / (double)rmax, y2 + ph2 - (double)cpus * ph2 / (double)rmax,
	    CW - MR - 2, y2 + ph2 - (double)cpus * ph2 / (double)rmax - 3, cpus);
	if (run.n) {
		d2 = panel_line(h, &run, (double)rmax, y2, ph2, "runqueue", "#9467bd");
	} else {
		out(h, "<g class=\"series\" id=\"runqueue\" data-n=\"0\"></g>\n");
		no_data(h, y2, ph2, "no run-queue samples in this trace");
		d2 = 0;
	}
	if (d1 < 0 || d2 < 0) {
		ret = -ENOMEM;
		goto done;
	}
	if ((size_t)d1 < busy.n || (size_t)d2 < run.n)
		out(h, "<text class=\"note downsampled\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		    "more samples than pixels: the largest of each pixel column is drawn</text>\n",
		    CW - MR, y1 - 6);

	ret = panel_latency(h, y3, ph3);
	if (ret < 0)
		goto done;
	latency_legend(h, height - 22);
	out(h, "</svg>\n</section>\n");
done:
	free(busy.ts);
	free(busy.v);
	free(run.ts);
	free(run.v);
	return ret;
}

/* ---- latency histograms ------------------------------------------- */

/* Bin edges 1, 2, 5, 10, 20, 50 ... ns: edge K. */
static uint64_t edge(int k)
{
	static const uint64_t m[] = { 1, 2, 5 };
	uint64_t p = 1;

	for (int i = 0; i < k / 3 && p <= UINT64_MAX / 10; i++)
		p *= 10;
	return m[k % 3] * p;
}

#define MAX_EDGE	58	/* edge(57) = 1e19 > UINT64_MAX would overflow */

/* The bin of NS: the largest K with edge(K) <= NS (0 for 0 and 1). */
static int bin_of(uint64_t ns)
{
	int k = 0;

	while (k + 1 < MAX_EDGE - 1 && edge(k + 1) <= ns)
		k++;
	return k;
}

static double hx(uint64_t ns, double llo, double lhi, int x0, int w)
{
	double l = log10(ns ? (double)ns : 1);

	l = l < llo ? llo : l > lhi ? lhi : l;
	return x0 + (l - llo) * w / (lhi - llo);
}

static int histograms(struct html *h)
{
	size_t nops = ift_analysis_op_count(h->a), ncalls = ift_analysis_call_count(h->a);
	const int hw = 500, hh = 190, x0 = 46, w = hw - x0 - 12, y0 = 34, ph = hh - y0 - 36;
	int kmin = MAX_EDGE, kmax = 0, nb;
	uint64_t *cnt;
	char b1[32], b2[32], b3[32];

	out(h, "<section id=\"latency\" data-n=\"%zu\">\n<h2>CUDA call latency by op</h2>\n", nops);
	if (!nops) {
		out(h, "<p>No CUDA calls in the window.</p>\n</section>\n");
		return 0;
	}
	for (size_t i = 0; i < nops; i++) {
		const struct ift_op_stats *op = ift_analysis_op(h->a, i);
		int a = bin_of(op->min_ns), z = bin_of(op->max_ns) + 1;

		kmin = a < kmin ? a : kmin;
		kmax = z > kmax ? z : kmax;
	}
	nb = kmax - kmin;
	cnt = calloc(nops * (size_t)nb, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	for (size_t i = 0; i < ncalls; i++) {
		const struct ift_call_info *c = ift_analysis_call(h->a, i);
		long k = c->counted ? op_idx(h, c->op) : -1;
		int bin;

		if (k < 0)
			continue;
		bin = bin_of(c->dur_ns) - kmin;
		bin = bin < 0 ? 0 : bin >= nb ? nb - 1 : bin;
		cnt[(size_t)k * (size_t)nb + (size_t)bin]++;
	}
	out(h, "<p class=\"note\">Calls per duration bin (1-2-5 steps, log scale on both axes; "
	    "the same bins for every op). Dashed: p50 and p99. Every call counts, nested "
	    "ones under their own op.</p>\n<div class=\"hists\">\n");
	for (size_t i = 0; i < nops; i++) {
		const struct ift_op_stats *op = ift_analysis_op(h->a, i);
		const uint64_t *v = cnt + i * (size_t)nb;
		double llo = log10((double)edge(kmin)), lhi = log10((double)edge(kmax));
		uint64_t maxn = 1;
		double lmax;
		size_t nbars = 0;

		for (int k = 0; k < nb; k++) {
			maxn = v[k] > maxn ? v[k] : maxn;
			nbars += v[k] > 0;
		}
		lmax = log10((double)maxn) + 1;
		out(h, "<figure><svg class=\"chart histogram\" id=\"hist-%zu\" data-op=\"", i);
		esc(h, op->name);
		out(h, "\" data-calls=\"%" PRIu64 "\" data-n=\"%zu\" viewBox=\"0 0 %d %d\" "
		    "role=\"img\">\n<text x=\"%d\" y=\"14\" style=\"font-weight:600\">", op->calls,
		    nbars, hw, hh, x0);
		esc(h, op->name);
		out(h, "%s</text><text x=\"%d\" y=\"14\" text-anchor=\"end\">%s calls, p50 %s, "
		    "p99 %s</text>\n", op->nested_calls == op->calls ? " (nested)" : "",
		    hw - 12, num(b1, sizeof(b1), op->calls), dur(b2, sizeof(b2), op->p50_ns),
		    dur(b3, sizeof(b3), op->p99_ns));
		/* y: log of the count, 1 call a bar one step high */
		for (int p = 0; p <= (int)lmax - 1; p++) {
			double y = y0 + ph - (p + 1) * ph / lmax;

			snprintf(b1, sizeof(b1), "%.0f", pow(10, p));
			out(h, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			    x0, x0 + w, y, y, x0 - 4, y + 4, b1);
		}
		for (int k = 0; k < nb; k++) {
			double xa, xb, bh;

			if (!v[k])
				continue;
			xa = hx(edge(kmin + k), llo, lhi, x0, w);
			xb = hx(edge(kmin + k + 1), llo, lhi, x0, w);
			bh = (log10((double)v[k]) + 1) * ph / lmax;
			out(h, "<rect class=\"bar\" data-lo-ns=\"%" PRIu64 "\" data-hi-ns=\"%" PRIu64
			    "\" data-n=\"%" PRIu64 "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			    "height=\"%.1f\" fill=\"#1f77b4\"><title>%s .. %s: %s calls</title></rect>\n",
			    edge(kmin + k), edge(kmin + k + 1), v[k], xa + 0.5, y0 + ph - bh,
			    xb - xa - 1 > 1 ? xb - xa - 1 : 1, bh,
			    dur(b1, sizeof(b1), edge(kmin + k)), dur(b2, sizeof(b2), edge(kmin + k + 1)),
			    num(b3, sizeof(b3), v[k]));
		}
		for (int q = 0; q < 2; q++) {
			uint64_t pv = q ? op->p99_ns : op->p50_ns;
			double x = hx(pv, llo, lhi, x0, w);

			out(h, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
			    "stroke=\"%s\" stroke-dasharray=\"3 2\"/><text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"%s\" style=\"fill:%s\">%s</text>\n", q ? "p99" : "p50",
			    x, x, y0 - 4, y0 + ph, q ? "#d62728" : "#2ca02c", q ? x + 3 : x - 3,
			    y0 + 4, q ? "start" : "end", q ? "#d62728" : "#2ca02c",
			    q ? "p99" : "p50");
		}
		out(h, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
		    x0, x0 + w, y0 + ph, y0 + ph);
		for (int k = kmin; k <= kmax; k += 3) {
			/* decade ticks: kmin may sit on a 2 or a 5 */
			int d = k - k % 3 + (k % 3 ? 3 : 0);
			double x;

			if (d > kmax)
				break;
			x = hx(edge(d), llo, lhi, x0, w);
			out(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			    x, y0 + ph + 14, decade_label(b1, sizeof(b1), d / 3));
			k = d;
		}
		out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">duration</text>"
		    "</svg></figure>\n", x0 + w, hh - 4);
	}
	out(h, "</div>\n</section>\n");
	free(cnt);
	return 0;
}

/* ---- per-process bars --------------------------------------------- */

static void proc_label(struct html *h, const struct ift_process_info *p)
{
	out(h, "%" PRIu32 " ", p->pid);
	esc(h, p->comm);
	if (p->role) {
		out(h, " (");
		esc(h, p->role);
		out(h, ")");
	}
}

static void process_bars(struct html *h)
{
	size_t n = ift_analysis_process_count(h->a), shown = n < MAX_BARS ? n : MAX_BARS;
	const int lw = 250, bx = lw + 8, bw = 560, tx = bx + bw + 10, rh = 20, top = 30;
	uint64_t mx = 1;
	char b1[32], b2[32], b3[32];

	out(h, "<section id=\"sched\" data-n=\"%zu\">\n<h2>Processes: on-CPU, run-queue wait, "
	    "blocked</h2>\n", n);
	if (!n) {
		out(h, "<p>No process in the window.</p>\n</section>\n");
		return;
	}
	out(h, "<p class=\"note\">Each process's time in the window, summed over its threads, "
	    "on one scale: running, runnable but waiting for a CPU, sleeping until woken. "
	    "Ranked by CUDA time, then off-CPU time%s.</p>\n", n > shown ?
	    "; the table below lists every process" : "");
	for (size_t i = 0; i < shown; i++) {
		const struct ift_sched_stats *s = &ift_analysis_process(h->a, i)->sched;
		uint64_t t = s->on_cpu_ns + s->runqueue_wait_ns + s->blocked_ns;

		mx = t > mx ? t : mx;
	}
	out(h, "<svg class=\"chart\" id=\"processes\" data-n=\"%zu\" viewBox=\"0 0 %d %zu\" "
	    "role=\"img\" aria-label=\"per-process time\">\n", shown, CW,
	    (size_t)top + shown * rh + 10);
	out(h, "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"#2ca02c\"/>"
	    "<text x=\"%d\" y=\"16\">on-CPU</text><rect x=\"%d\" y=\"6\" width=\"12\" "
	    "height=\"12\" fill=\"#d62728\"/><text x=\"%d\" y=\"16\">run-queue wait</text>"
	    "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"#b0b0b0\"/>"
	    "<text x=\"%d\" y=\"16\">blocked</text><text x=\"%d\" y=\"16\" text-anchor=\"end\">"
	    "scale: %s full width</text>\n", bx, bx + 16, bx + 90, bx + 106, bx + 220, bx + 236,
	    bx + bw, dur(b1, sizeof(b1), mx));
	for (size_t i = 0; i < shown; i++) {
		const struct ift_process_info *p = ift_analysis_process(h->a, i);
		const struct ift_sched_stats *s = &p->sched;
		const uint64_t seg[3] = { s->on_cpu_ns, s->runqueue_wait_ns, s->blocked_ns };
		static const char *const cls[3] = { "on-cpu", "rq-wait", "blocked" };
		static const char *const fill[3] = { "#2ca02c", "#d62728", "#b0b0b0" };
		int y = top + (int)i * rh;
		double x = bx;

		out(h, "<g class=\"proc\" data-pid=\"%" PRIu32 "\" data-on-cpu-ns=\"%" PRIu64
		    "\" data-runqueue-wait-ns=\"%" PRIu64 "\" data-blocked-ns=\"%" PRIu64 "\">"
		    "<title>", p->pid, seg[0], seg[1], seg[2]);
		proc_label(h, p);
		out(h, ": on-CPU %s, run-queue wait %s, blocked %s</title>\n<text x=\"%d\" y=\"%d\" "
		    "text-anchor=\"end\">", dur(b1, sizeof(b1), seg[0]), dur(b2, sizeof(b2), seg[1]),
		    dur(b3, sizeof(b3), seg[2]), lw, y + 14);
		proc_label(h, p);
		out(h, "</text>\n");
		for (int k = 0; k < 3; k++) {
			double wd = (double)seg[k] * bw / (double)mx;

			out(h, "<rect class=\"%s\" data-ns=\"%" PRIu64 "\" x=\"%.1f\" y=\"%d\" "
			    "width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", cls[k], seg[k], x, y + 3,
			    wd, rh - 6, fill[k]);
			x += wd;
		}
		out(h, "<text x=\"%d\" y=\"%d\" style=\"font-size:10px\">%s / %s / %s</text></g>\n",
		    tx, y + 14, dur(b1, sizeof(b1), seg[0]), dur(b2, sizeof(b2), seg[1]),
		    dur(b3, sizeof(b3), seg[2]));
	}
	out(h, "</svg>\n</section>\n");
}

/* ---- the tables of the text report -------------------------------- */

static void op_row(struct html *h, const struct ift_op_stats *s, bool nested)
{
	char b[12][32];

	out(h, "<tr class=\"op%s\" data-op=\"", nested ? " nested" : "");
	esc(h, s->name);
	out(h, "\"><td>%s", nested ? "\xe2\x86\xb3 " : "");
	esc(h, s->name);
	out(h, "</td><td>%s</td>", s->api == IFT_API_DRIVER ? "driver" : "runtime");
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

static const struct ift_op_stats *op_by_id(const struct ift_op_stats *ops, size_t n,
					   uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].op == id)
			return &ops[i];
	return NULL;
}

/* As the text's op table: outermost ops by time, each followed by its nested ops. */
static int op_table(struct html *h)
{
	size_t n = ift_analysis_op_count(h->a);
	const struct ift_op_stats *ops = n ? ift_analysis_op(h->a, 0) : NULL;
	bool *done;

	if (!n) {
		out(h, "<p>No CUDA calls in the window.</p>\n");
		return 0;
	}
	done = calloc(n, sizeof(*done));
	if (!done)
		return -ENOMEM;
	out(h, "<h3>CUDA ops</h3>\n<table class=\"ops\" id=\"ops\"><tr><th>op</th><th>api</th>"
	    "<th class=\"n\">calls</th><th class=\"n\">errors</th><th class=\"n\">total</th>"
	    "<th class=\"n\">mean</th><th class=\"n\">min</th><th class=\"n\">p50</th>"
	    "<th class=\"n\">p95</th><th class=\"n\">p99</th><th class=\"n\">max</th>"
	    "<th class=\"n\">bytes</th><th class=\"n\">wall%%</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		if (done[i] || ops[i].nested_calls == ops[i].calls)
			continue;
		op_row(h, &ops[i], false);
		done[i] = true;
		for (size_t k = 0; k < ops[i].ninner; k++) {
			const struct ift_op_stats *in = op_by_id(ops, n, ops[i].inner[k].op);

			if (in && !done[in - ops]) {
				op_row(h, in, true);
				done[in - ops] = true;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!done[i])
			op_row(h, &ops[i], true);
	free(done);
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
 * The call sites of each op (record --stack), as `stacks' in JSON: the same
 * window, the top IFT_SITES_TOP per op.  Nothing for a trace without stacks.
 */
static int site_table(struct html *h)
{
	uint64_t span = h->s->end_ts - h->s->start_ts;
	uint64_t to = h->s->to_ns >= span ? UINT64_MAX : h->s->start_ts + h->s->to_ns;
	struct ift_site *v;
	size_t n;
	char b[4][32];
	int ret = ift_sites_run(h->t, h->s->start_ts + h->s->from_ns, to, 0, IFT_SITES_TOP,
				&v, &n);

	if (ret < 0 || !n)
		return ret;
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
	free(v);
	return 0;
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
	char b[10][32];

	out(h, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n\">%s</td><td class=\"n\">%s (%s)</td></tr>\n",
	    num(b[0], 32, calls), dur(b[1], 32, cuda), dur(b[2], 32, s->on_cpu_ns),
	    dur(b[3], 32, s->runqueue_wait_ns), dur(b[4], 32, s->blocked_ns),
	    num(b[5], 32, s->involuntary), num(b[6], 32, s->voluntary),
	    dur(b[7], 32, s->max_off_cpu_ns), dur(b[8], 32, s->max_off_cpu_at),
	    num(b[9], 32, s->wakeups), num(b[0], 32, s->page_allocs),
	    bytes(b[1], 32, s->page_alloc_bytes));
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
		esc(h, p->role ? p->role : "");
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
		esc(h, t->role ? t->role : "");
		out(h, "</td>");
		task_cells(h, t->cuda_calls, t->cuda_ns, &t->sched);
	}
	out(h, "</table>\n</details>\n");
}

/* ---- the page ----------------------------------------------------- */

int ift_out_html(FILE *f, struct ift_trace *t, const struct ift_analysis *a,
		 const struct ift_chains *c, const struct ift_html_opts *opts)
{
	struct html h = { .f = f, .t = t, .a = a, .c = c, .s = ift_analysis_summary(a) };
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
	ret = timeline(&h);
	if (ret >= 0)
		ret = histograms(&h);
	if (ret >= 0) {
		process_bars(&h);
		out(&h, "<section id=\"tables\">\n<h2>Tables</h2>\n");
		ret = op_table(&h);
	}
	if (ret >= 0) {
		error_table(&h);
		ret = site_table(&h);
	}
	if (ret >= 0) {
		task_tables(&h);
		out(&h, "</section>\n<footer>Made by ingero-ftrace report --html. Every figure is "
		    "defined in docs/report.md.</footer>\n</body>\n</html>\n");
	}
	free(h.op_index);
	if (ret >= 0 && (fflush(f) || ferror(f)))
		ret = -EIO;
	return ret;
}
