// SPDX-License-Identifier: MIT
/*
 * The cells of the text tables (render/text.h): numbers and durations in
 * their columns, names from the trace made safe for a terminal and cut to
 * their width.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ift-render.h"
#include "ift-words.h"
#include "render/text.h"

const char *ift_txt_dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, false);
}

/* "12345", "123k", "4.5M": counts in at most 6 columns. */
const char *ift_txt_num(char *buf, size_t len, uint64_t n)
{
	if (n < 100000)
		snprintf(buf, len, "%" PRIu64, n);
	else if (n < 1000000)
		snprintf(buf, len, "%" PRIu64 "k", n / 1000);
	else if (n < 1000000000)
		snprintf(buf, len, "%.1fM", (double)(n / 100000) / 10);
	else
		snprintf(buf, len, "%.1fG", (double)(n / 100000000) / 10);
	return buf;
}

/* Columns S takes on a terminal: UTF-8 continuation bytes take none. */
int ift_txt_cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Prints S in W columns, right-aligned when W < 0 (printf counts bytes). */
void ift_txt_cell(struct text *tx, const char *s, int w)
{
	int pad = abs(w) - ift_txt_cols(s);

	/* a value too wide still stays apart from the one before */
	if (w < 0)
		fprintf(tx->f, "%*s%s", pad > 0 ? pad : 1, "", s);
	else
		fprintf(tx->f, "%s%*s", s, pad > 0 ? pad : 0, "");
}


/* The headings of N columns, one line. */
void ift_txt_header(struct text *tx, const struct column *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ift_txt_cell(tx, c[i].head, c[i].w);
	fputc('\n', tx->f);
}


/*
 * A name from the traced program, safe for one aligned cell: what a
 * terminal would act on escaped (IFT_TEXT_TERM), and a name wider than W
 * columns (W > 1) cut at a character with '~'.
 */
const char *ift_txt_safe(char *buf, size_t len, const char *s, int w)
{
	size_t n = 0;
	int c = 0;

	ift_text(buf, len, s, IFT_TEXT_TERM);
	if (w <= 1 || ift_txt_cols(buf) <= w)
		return buf;
	for (; buf[n]; n++)	/* the start of column W: the '~' goes there */
		if (((unsigned char)buf[n] & 0xc0) != 0x80 && ++c == w)
			break;
	if (n + 2 <= len) {
		buf[n] = '~';
		buf[n + 1] = 0;
	}
	return buf;
}

/*
 * Prints TEXT after FIRST (already printed, FIRST_COLS wide), wrapped at
 * word boundaries to WIDTH, continuation lines indented by INDENT columns.
 * What a terminal would act on is escaped first (IFT_TEXT_TERM).
 */
void ift_txt_wrap(struct text *tx, int col, int indent, const char *text)
{
	bool line_start = true;
	char *clean = ift_text_dup(text, IFT_TEXT_TERM);
	const char *p = clean ? clean : "";

	for (;;) {
		const char *w = p;
		int wc = 0;

		while (*w == ' ')
			w++;
		if (!*w)
			break;
		for (p = w; *p && *p != ' '; p++)
			wc += ((unsigned char)*p & 0xc0) != 0x80;
		if (!line_start && col + 1 + wc > tx->width) {
			fprintf(tx->f, "\n%*s", indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', tx->f);
			col++;
		}
		fwrite(w, 1, (size_t)(p - w), tx->f);
		col += wc;
		line_start = false;
	}
	fputc('\n', tx->f);
	free(clean);
}

/* The free text's width: O's when it is one a report can wrap to. */
int ift_txt_width(const struct ift_text_opts *o)
{
	return o && o->width >= IFT_TEXT_MIN_WIDTH && o->width < WIDTH ? o->width : WIDTH;
}

/* ROLE in a table's narrow column */
const char *ift_txt_role(enum ift_role role)
{
	switch (role) {
	case IFT_ROLE_CUDA_THREAD:
	case IFT_ROLE_CUDA_PROCESS:
		return "cuda";
	case IFT_ROLE_INPUT_WORKER:
		return "worker";
	case IFT_ROLE_INPUT_THREAD:
		return "input";
	case IFT_ROLE_PIN_MEMORY:
		return "pin";
	default:
		return ift_role_name(role) ? ift_role_name(role) : "";
	}
}
