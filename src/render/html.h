/* SPDX-License-Identifier: MIT */
#ifndef RENDER_HTML_H
#define RENDER_HTML_H

/*
 * What the parts of the HTML page share (html.c: the page, the chains and
 * the tables; html-charts.c: the charts over time, the histograms and the
 * process bars; html-flame.c: the profile's flame graphs): the page being
 * written and the few ways it writes.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-render.h"
#include "ift-words.h"

/* Chart geometry, in SVG user units (pixels when shown at 1000 px wide). */
#define CW		1000	/* width of the wide charts */
#define ML		76	/* left margin: the y-axis labels */
#define MR		16
#define PW		(CW - ML - MR)

struct html {
	FILE *f;
	struct ift_trace *t;
	const struct ift_report *r;
	const struct ift_analysis *a;	/* R's */
	const struct ift_chains *c;	/* R's */
	const struct ift_analysis_summary *s;
	uint32_t *op_index;	/* op id -> 1 + index in the op table */
	size_t nop_index;
};

static inline void out(struct html *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void out(struct html *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(h->f, fmt, ap);
	va_end(ap);
}

/*
 * S as HTML text or attribute value: made valid UTF-8 first (a comm or a
 * command line can hold anything: IFT_TEXT_UTF8), then markup characters as
 * entities, and controls and bidirectional overrides (ift_text_control())
 * as U+FFFD.
 */
static inline void esc(struct html *h, const char *s)
{
	char clean[IFT_TEXT_BUF];
	const unsigned char *p = (const unsigned char *)ift_text(clean, sizeof(clean), s,
								IFT_TEXT_UTF8);

	while (*p) {
		size_t n = ift_utf8_len(p);

		switch (*p) {
		case '&': fputs("&amp;", h->f); break;
		case '<': fputs("&lt;", h->f); break;
		case '>': fputs("&gt;", h->f); break;
		case '"': fputs("&quot;", h->f); break;
		case '\'': fputs("&#39;", h->f); break;
		default:
			if (!n || ift_text_control(p, n))
				fputs("\xef\xbf\xbd", h->f);
			else
				fwrite(p, 1, n, h->f);
		}
		p += n ? n : 1;
	}
}

static inline const char *dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, false);
}

/* 1234567 as "1,234,567". */
static inline const char *num(char *buf, size_t len, uint64_t n)
{
	return ift_fmt_count(buf, len, n);
}

/* A time axis label: an offset in the unit of STEP, without trailing zeros. */
static inline const char *tick_label(char *buf, size_t len, uint64_t ns, uint64_t step)
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

/* The charts (html-charts.c), each a section of the page. */
int ift_html_timeline(struct html *h);
int ift_html_histograms(struct html *h);
void ift_html_process_bars(struct html *h);
/* html-flame.c: the CPU profile's flame graphs; nothing without one */
void ift_html_profile(struct html *h);

#endif
