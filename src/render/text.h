/* SPDX-License-Identifier: MIT */
#ifndef IFT_RENDER_TEXT_H
#define IFT_RENDER_TEXT_H

/*
 * What the text renderers share (render/ only): text.c the report,
 * text-profile.c its CPU profile, text-diff.c `report --diff', top.c
 * `top's frame, text-cells.c the cells they align.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ift-analyze.h"

#define WIDTH		IFT_TEXT_WIDTH	/* the tables fit a terminal this wide */
/* room for safe(): a cell of up to 36 columns, a line of WIDTH, each column
   at most 4 bytes (a character, or a byte escaped as \xNN) */
#define CELL_LEN	(4 * 36 + 2)
#define LINE_LEN	(4 * WIDTH + 2)
#define TOP		10	/* processes or threads per ranking */

/* Where a text goes and how wide its free text may run. */
struct text {
	FILE *f;
	int width;		/* WIDTH, or a narrower terminal's width */
};

/* A table's column: its heading and its width, as ift_txt_cell() takes it. */
struct column {
	const char *head;
	int w;
};

#define NCOLS(c)	(sizeof(c) / sizeof((c)[0]))

/* A duration as the report writes it ("1.23 ms"). */
const char *ift_txt_dur(char *buf, size_t len, uint64_t ns);
/* "12345", "123k", "4.5M": counts in at most 6 columns. */
const char *ift_txt_num(char *buf, size_t len, uint64_t n);
/* ROLE in a table's narrow column: "cuda", "worker", "input", ... */
const char *ift_txt_role(enum ift_role role);
/* Columns S takes on a terminal: UTF-8 continuation bytes take none. */
int ift_txt_cols(const char *s);
/* Prints S in W columns, right-aligned when W < 0 (printf counts bytes). */
void ift_txt_cell(struct text *tx, const char *s, int w);
/* The headings of N columns, one line. */
void ift_txt_header(struct text *tx, const struct column *c, size_t n);
/*
 * A name from the traced program, safe for one aligned cell: what a
 * terminal would act on escaped (IFT_TEXT_TERM), and a name wider than W
 * columns (W > 1) cut at a character with '~'.
 */
const char *ift_txt_safe(char *buf, size_t len, const char *s, int w);
/*
 * Prints TEXT after what is already on the line (COL columns), wrapped at
 * word boundaries to the text's width, continuation lines indented by
 * INDENT columns; what a terminal would act on escaped (IFT_TEXT_TERM).
 */
void ift_txt_wrap(struct text *tx, int col, int indent, const char *text);

struct ift_profile;
/* The report's CPU profile (text-profile.c); nothing without one. */
void ift_txt_profile(struct text *tx, const struct ift_profile *p);
/* The top lines of G, after LABEL (12 columns at most): under a chain, of
   the threads its fix speaks of; under a process, its own. */
struct ift_prof_group;
void ift_txt_profile_top(struct text *tx, const struct ift_prof_group *g, const char *label);

struct ift_text_opts;
/* The free text's width: O's when it is one a report can wrap to. */
int ift_txt_width(const struct ift_text_opts *o);

#endif
