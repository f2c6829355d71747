// SPDX-License-Identifier: MIT
/*
 * The HTML page's charts: CPU utilisation, runnable tasks and CUDA call
 * latency over the window, a latency histogram per op, and per-process bars
 * (docs/report.md, HTML).  Drawing is bounded by pixels, not by calls: a
 * chart with more points than it has room for draws one point per occupied
 * cell and says so, while the histograms count every call.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"
#include "util/array.h"

#define CELL_W		2	/* a scatter point per occupied cell ... */
#define CELL_H		3
#define SCATTER_ALL	4000	/* ... unless there are at most this many calls */
#define MAX_BARS	100	/* processes drawn as bars; the table has them all */
#define NCOLORS		8	/* op colours in the scatter; the last is "other" */

static const char *const palette[NCOLORS] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
	"#17becf", "#7f7f7f",
};

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

/* The op table's index (0-based) of the op with id OP, or -1. */
static long op_idx(const struct html *h, uint32_t op)
{
	return op < h->nop_index && h->op_index[op] ? (long)h->op_index[op] - 1 : -1;
}

/* ---- over the run: CPU, run queue, call latency ------------------- */

struct series {
	uint64_t *ts;		/* offsets from the trace start */
	int64_t *v;
	size_t n, cap;
};

static int series_add(struct series *se, uint64_t ts, int64_t v)
{
	size_t tcap = se->cap;

	/* two arrays, one capacity: TS grows first, to the same size V will */
	if (ift_array_grow((void **)&se->ts, &tcap, se->n + 1, sizeof(*se->ts)) < 0 ||
	    ift_array_grow((void **)&se->v, &se->cap, se->n + 1, sizeof(*se->v)) < 0)
		return -ENOMEM;
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

/*
 * The counted GPUs' busy share as NVML sampled it, a line a GPU (series
 * gpu-busy-N): each sample at the middle of its span, at its percent.  Or
 * why the GPUs were not measured.
 */
static int panel_gpu(struct html *h, int y0, int ph)
{
	const struct ift_gpu_use *g = ift_analysis_gpu(h->a);
	uint64_t start = h->s->start_ts, lo = start + h->s->from_ns, hi = start + h->s->to_ns;
	const struct ift_gpu_sample *s;
	size_t n;
	char b[32];

	panel_frame(h, y0, ph, "GPU busy: the share of each NVML sample a kernel ran");
	for (int p = 0; p <= 100; p += 50) {
		snprintf(b, sizeof(b), "%d%%", p);
		ygrid(h, y0 + ph - p * ph / 100.0, b);
	}
	if (!g->measured) {
		out(h, "<g class=\"series\" id=\"gpu-busy\" data-n=\"0\"></g>\n"
		    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"empty\">GPU not "
		    "measured: ", ML + PW / 2, y0 + ph / 2);
		esc(h, g->reason);
		out(h, "</text>\n");
		return 0;
	}
	s = ift_analysis_gpu_samples(h->a, &n);
	for (size_t i = 0; i < g->ngpus; i++) {
		const struct ift_gpu_info *v = &g->gpus[i];
		struct series se = { 0 };
		char id[32];
		int ret = 0;

		if (!v->counted)
			continue;
		for (size_t k = 0; k < n && ret >= 0; k++) {
			uint64_t mid = s[k].ts - s[k].span / 2;

			if (s[k].gpu == v->gpu && mid >= lo && mid <= hi)
				ret = series_add(&se, mid - start, s[k].percent);
		}
		snprintf(id, sizeof(id), "gpu-busy-%u", v->gpu);
		if (ret >= 0)
			ret = panel_line(h, &se, 100, y0, ph, id, palette[v->gpu % NCOLORS]);
		free(se.ts);
		free(se.v);
		if (ret < 0)
			return ret;
	}
	return 0;
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

int ift_html_timeline(struct html *h)
{
	struct series busy = { 0 }, run = { 0 };
	const int top = 30, ph0 = 80, ph1 = 100, ph2 = 100, ph3 = 200, gap = 34;
	int y0 = top, y1 = y0 + ph0 + gap, y2 = y1 + ph1 + gap, y3 = y2 + ph2 + gap;
	int height = y3 + ph3 + 76;	/* axis, two lines of legend */
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

	out(h, "<section id=\"over-time\">\n<h2>Over the run</h2>\n<p class=\"note\">The GPUs' "
	    "busy share as NVML sampled it, system CPU "
	    "utilisation and runnable tasks as sampled from /proc (100 ms), and the duration "
	    "of every CUDA call at its entry time. Shaded bands: the worst occurrence of each "
	    "chain, by number.</p>\n");
	out(h, "<svg class=\"chart\" id=\"timeline\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"GPU busy, CPU utilisation, run queue and CUDA call latency over the "
	    "run\">\n",
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
		    "style=\"fill:#d62728\">#%zu</text></g>\n", x0, y0, x1 - x0,
		    y3 + ph3 - y0, x0 + 2, y3 + ph3 - 4 - (int)(i % 4) * 12, i + 1);
	}

	/* the time grid behind the data and the labels */
	time_axis(h, y3 + ph3, y0);
	if ((ret = panel_gpu(h, y0, ph0)) < 0)
		goto done;
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

static double hx(uint64_t ns, double llo, double lhi, int x0, int w)
{
	double l = log10(ns ? (double)ns : 1);

	l = l < llo ? llo : l > lhi ? lhi : l;
	return x0 + (l - llo) * w / (lhi - llo);
}

int ift_html_histograms(struct html *h)
{
	size_t nops = ift_analysis_op_count(h->a);
	const int hw = 500, hh = 190, x0 = 46, w = hw - x0 - 12, y0 = 34, ph = hh - y0 - 36;
	int kmin = IFT_LAT_BINS, kmax = 0, nb;
	char b1[32], b2[32], b3[32];

	out(h, "<section id=\"latency\" data-n=\"%zu\">\n<h2>CUDA call latency by op</h2>\n", nops);
	if (!nops) {
		out(h, "<p>No CUDA calls in the window.</p>\n</section>\n");
		return 0;
	}
	for (size_t i = 0; i < nops; i++) {
		const struct ift_op_stats *op = ift_analysis_op(h->a, i);
		int a = (int)ift_lat_bin(op->min_ns), z = (int)ift_lat_bin(op->max_ns) + 1;

		kmin = a < kmin ? a : kmin;
		kmax = z > kmax ? z : kmax;
	}
	nb = kmax - kmin;
	out(h, "<p class=\"note\">Calls per duration bin (1-2-5 steps, log scale on both axes; "
	    "the same bins for every op). Dashed: p50 and p99. Every call counts, nested "
	    "ones under their own op.</p>\n<div class=\"hists\">\n");
	for (size_t i = 0; i < nops; i++) {
		const struct ift_op_stats *op = ift_analysis_op(h->a, i);
		/* the model's bins, from the first any op fills */
		const uint64_t *v = op->lat_bins + kmin;
		double llo = log10((double)ift_lat_edge(kmin)), lhi = log10((double)ift_lat_edge(kmax));
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
			xa = hx(ift_lat_edge(kmin + k), llo, lhi, x0, w);
			xb = hx(ift_lat_edge(kmin + k + 1), llo, lhi, x0, w);
			bh = (log10((double)v[k]) + 1) * ph / lmax;
			out(h, "<rect class=\"bar\" data-lo-ns=\"%" PRIu64 "\" data-hi-ns=\"%" PRIu64
			    "\" data-n=\"%" PRIu64 "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			    "height=\"%.1f\" fill=\"#1f77b4\"><title>%s .. %s: %s calls</title></rect>\n",
			    ift_lat_edge(kmin + k), ift_lat_edge(kmin + k + 1), v[k], xa + 0.5, y0 + ph - bh,
			    xb - xa - 1 > 1 ? xb - xa - 1 : 1, bh,
			    dur(b1, sizeof(b1), ift_lat_edge(kmin + k)), dur(b2, sizeof(b2), ift_lat_edge(kmin + k + 1)),
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
			x = hx(ift_lat_edge(d), llo, lhi, x0, w);
			out(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			    x, y0 + ph + 14, decade_label(b1, sizeof(b1), d / 3));
			k = d;
		}
		out(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">duration</text>"
		    "</svg></figure>\n", x0 + w, hh - 4);
	}
	out(h, "</div>\n</section>\n");
	return 0;
}

/* ---- per-process bars --------------------------------------------- */

static void proc_label(struct html *h, const struct ift_process_info *p)
{
	out(h, "%" PRIu32 " ", p->pid);
	esc(h, p->comm);
	if (p->role) {
		out(h, " (");
		esc(h, ift_role_name(p->role));
		out(h, ")");
	}
}

void ift_html_process_bars(struct html *h)
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
