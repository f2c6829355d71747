// SPDX-License-Identifier: MIT
/*
 * The HTML page's CPU profile (record --profile): for each kind of thread,
 * its flame graph as SVG, no script: the model's boxes (struct
 * ift_prof_node, in preorder) drawn bottom-up, the outermost frame at the
 * bottom, each box as wide as its samples, its name where it fits and in
 * its <title> (the browser's tooltip) with its samples and share.
 */
#include <string.h>

#include "render/html.h"

#define ROW	17		/* a box's height with its gap */
#define CHAR_W	6.6		/* a label character's width, about */

/* A box's fill: the user's and the packages' Python, native code, the kernel. */
static const char *fill(const struct ift_frame *f)
{
	if (!f)
		return "#a0a0a0";
	if (f->flags & IFT_FRAME_F_PYSRC)
		return f->module[0] && f->module[0] != '<' &&
		       ift_py_file_short(f->module) == f->module ? "#f0b35a" : "#f6d08c";
	return "#e8765f";
}

static void flame(struct html *h, const struct ift_prof_group *g)
{
	uint32_t depth = 0;
	char name[512], label[520];

	for (size_t i = 0; i < g->nflame; i++)
		depth = g->flame[i].depth + 1 > depth ? g->flame[i].depth + 1 : depth;
	out(h, "<svg class=\"chart flame\" data-role=\"%s\" data-boxes=\"%zu\" viewBox=\"0 0 %d "
	    "%u\" role=\"img\" aria-label=\"flame graph\">\n",
	    ift_role_name(g->role) ? ift_role_name(g->role) : "none", g->nflame, CW,
	    depth * ROW + 2);
	for (size_t i = 0; i < g->nflame; i++) {
		const struct ift_prof_node *b = &g->flame[i];
		double x = (double)b->x * CW / (double)g->samples;
		double w = (double)b->w * CW / (double)g->samples;
		size_t fit = w > 3 * CHAR_W ? (size_t)(w / CHAR_W) - 1 : 0;
		int y = (int)(depth - 1 - b->depth) * ROW;

		ift_func_format(b->frame, name, sizeof(name));
		out(h, "<g class=\"box\" data-depth=\"%" PRIu32 "\" data-samples=\"%" PRIu64 "\">"
		    "<title>", b->depth, b->w);
		esc(h, name);
		out(h, " (%" PRIu64 " samples, %.1f%%)</title><rect x=\"%.1f\" y=\"%d\" "
		    "width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", b->w,
		    100.0 * (double)b->w / (double)g->samples, x, y, w > 0.5 ? w - 0.5 : w,
		    ROW - 1, fill(b->frame));
		if (fit) {
			/* what fits, cut where a name reads best: its end */
			size_t len = strlen(name);

			snprintf(label, sizeof(label), "%s%s", len > fit ? ".." : "",
				 len > fit ? name + len - (fit > 2 ? fit - 2 : 0) : name);
			out(h, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + ROW - 5);
			esc(h, label);
			out(h, "</text>");
		}
		out(h, "</g>\n");
	}
	out(h, "</svg>\n");
}

void ift_html_profile(struct html *h)
{
	const struct ift_profile *p = ift_analysis_profile(h->a);
	char b1[32], b2[32];

	if (!p->period_ns)
		return;
	out(h, "<section id=\"profile\" data-period-ns=\"%" PRIu64 "\">\n<h2>CPU profile</h2>\n"
	    "<p class=\"note\">What each kind of thread spent its CPU on: a sample every %s of a "
	    "thread's CPU (record --profile). Each flame graph stacks the callers below their "
	    "callees, each box as wide as its samples; hover a box for its name and share. "
	    "Python lines are yellow (the user's own darker), native code red, the kernel "
	    "grey.</p>\n", p->period_ns, dur(b1, sizeof(b1), p->period_ns));
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct ift_prof_group *g = &p->groups[i];

		out(h, "<h3>");
		esc(h, ift_prof_group_name(g->role));
		out(h, ": %u thread%s in %u process%s, %" PRIu64 " samples (%s of CPU)</h3>\n",
		    g->threads, g->threads == 1 ? "" : "s", g->procs, g->procs == 1 ? "" : "es",
		    g->samples, dur(b2, sizeof(b2), g->cpu_ns));
		if (g->nflame)
			flame(h, g);
	}
	out(h, "</section>\n");
}
