// SPDX-License-Identifier: MIT
/*
 * The report's CPU profile as text (record --profile; docs/report.md): for
 * each kind of thread, its samples, then its top lines of Python and its
 * top native functions by self share, each with its total share; a line
 * of a package with the user's own line that called it.
 */
#include <stdio.h>

#include "ift-analyze.h"
#include "ift-words.h"
#include "render/text.h"

#define PROF_TEXT_TOP	5	/* lines and functions a group shows */

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

/* X as text: the frame, and the user's line that called it */
static const char *frame_text(const struct ift_prof_frame *x, char *buf, size_t len)
{
	char fr[512], caller[512];

	ift_func_format(x->frame, fr, sizeof(fr));
	if (!x->caller) {
		snprintf(buf, len, "%s", fr);
		return buf;
	}
	ift_frame_format(x->caller, caller, sizeof(caller));
	snprintf(buf, len, "%s, from %s", fr, caller);
	return buf;
}

static void frames(struct text *tx, const struct ift_prof_group *g, bool py)
{
	const struct ift_prof_frame *v = py ? g->lines : g->native;
	size_t n = py ? g->nlines : g->nnative;
	char line[1100];

	if (!n)
		return;
	fprintf(tx->f, "    %6s %6s  %s\n", "self", "total", py ? "Python line" : "native function");
	for (size_t i = 0; i < n && i < PROF_TEXT_TOP; i++) {
		fprintf(tx->f, "    %5.1f%% %5.1f%%  ", pct(v[i].self, g->samples),
			pct(v[i].total, g->samples));
		ift_txt_wrap(tx, 19, 21, frame_text(&v[i], line, sizeof(line)));
	}
}

void ift_txt_profile_top(struct text *tx, const struct ift_prof_group *g, const char *label)
{
	/* a program without Python: its native functions */
	const struct ift_prof_frame *v = g->nlines ? g->lines : g->native;
	size_t n = g->nlines ? g->nlines : g->nnative;
	char fr[1100], line[1200];
	int len;

	for (size_t i = 0; i < n && i < PROF_TEXT_TOP; i++) {
		snprintf(line, sizeof(line), "%.0f%% %s", pct(v[i].self, g->samples),
			 frame_text(&v[i], fr, sizeof(fr)));
		len = fprintf(tx->f, "    %-12s ", i ? "" : label);
		ift_txt_wrap(tx, len, len + 4, line);
	}
}

void ift_txt_profile(struct text *tx, const struct ift_profile *p)
{
	char b1[32], b2[32], line[256];

	if (!p->period_ns)
		return;
	fprintf(tx->f, "\nCPU profile (record --profile): a sample every %s of a thread's CPU, "
		"%s in the window\n", ift_txt_dur(b1, sizeof(b1), p->period_ns),
		ift_fmt_count(b2, sizeof(b2), p->samples));
	if (!p->ngroups)
		fprintf(tx->f, "no thread ran long enough to be sampled\n");
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct ift_prof_group *g = &p->groups[i];

		snprintf(line, sizeof(line), "%s: %u thread%s in %u process%s, %s samples "
			 "(%s of CPU), %.0f%% in the kernel", ift_prof_group_name(g->role), g->threads,
			 g->threads == 1 ? "" : "s", g->procs, g->procs == 1 ? "" : "es",
			 ift_fmt_count(b1, sizeof(b1), g->samples),
			 ift_txt_dur(b2, sizeof(b2), g->cpu_ns),
			 pct(g->kernel, g->samples));
		fputs("  ", tx->f);
		ift_txt_wrap(tx, 2, 4, line);
		frames(tx, g, true);
		frames(tx, g, false);
	}
}
