// SPDX-License-Identifier: MIT
/*
 * Text that came from the traced program (its names, paths, argv, Python
 * frames, and what SQL makes of them) as every output shows it: one rule per
 * kind of output, docs/security.md ("Untrusted strings").  The trace keeps
 * the bytes whole; only what is shown of them is escaped, replaced or cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-words.h"

#define REPLACEMENT	"\xef\xbf\xbd"	/* U+FFFD */

/* Where the text goes: a FILE, or BUF (CAP bytes, NUL included), or only
   counted (both NULL).  N counts every byte meant for it. */
struct sink {
	FILE *f;
	char *buf;
	size_t cap, n;
	bool full;	/* BUF had no room for a unit: nothing more goes in */
};

static void emit(struct sink *k, const void *p, size_t n)
{
	if (k->f) {
		fwrite(p, 1, n, k->f);
	} else if (k->buf && !k->full) {
		if (k->n + n < k->cap)
			memcpy(k->buf + k->n, p, n);
		else
			k->full = true;
	}
	if (!k->full)
		k->n += n;
}

static void emit_escaped(struct sink *k, const unsigned char *p, size_t n)
{
	char esc[4 * 4 + 1];
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		m += (size_t)snprintf(esc + m, sizeof(esc) - m, "\\x%02x", p[i]);
	emit(k, esc, m);
}

bool ift_text_control(const unsigned char *p, size_t n)
{
	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	if (n == 2)
		return p[0] == 0xc2 && p[1] <= 0x9f;
	if (n == 3 && p[0] == 0xe2)
		return (p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
		       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
	return false;
}

static void render(struct sink *k, const char *s, enum ift_text_rule rule)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	while (*p && !k->full) {
		size_t n = ift_utf8_len(p);
		size_t take = n ? n : 1;

		if (used + take > IFT_TEXT_MAX && rule != IFT_TEXT_UTF8_ALL) {
			char more[48];

			snprintf(more, sizeof(more), "...[+%zu bytes]", strlen((const char *)p));
			emit(k, more, strlen(more));
			return;
		}
		if (rule == IFT_TEXT_UTF8 || rule == IFT_TEXT_UTF8_ALL) {
			if (n)
				emit(k, p, n);
			else
				emit(k, REPLACEMENT, sizeof(REPLACEMENT) - 1);
		} else if (!n || ift_text_control(p, n) || (rule == IFT_TEXT_FIELD && *p == ' ')) {
			emit_escaped(k, p, take);
		} else {
			emit(k, p, n);
		}
		p += take;
		used += take;
	}
}

const char *ift_text(char *buf, size_t len, const char *s, enum ift_text_rule rule)
{
	struct sink k = { .buf = buf, .cap = len };

	if (!len)
		return buf;
	render(&k, s ? s : "", rule);
	buf[k.n] = 0;
	return buf;
}

char *ift_text_dup(const char *s, enum ift_text_rule rule)
{
	struct sink count = { 0 };
	struct sink k;

	s = s ? s : "";
	render(&count, s, rule);
	k = (struct sink){ .buf = malloc(count.n + 1), .cap = count.n + 1 };
	if (!k.buf)
		return NULL;
	render(&k, s, rule);
	k.buf[k.n] = 0;
	return k.buf;
}

int ift_text_put(FILE *f, const char *s, enum ift_text_rule rule)
{
	struct sink k = { .f = f };

	render(&k, s ? s : "", rule);
	return ferror(f) ? -1 : 0;
}

const char *ift_text_utf8(const char *s, size_t len, enum ift_text_rule rule, char **copy)
{
	char *cut;

	*copy = NULL;
	if ((rule == IFT_TEXT_UTF8_ALL || len <= IFT_TEXT_MAX) && ift_text_is_utf8(s, len))
		return s;
	if (!(cut = strndup(s, len)))
		return NULL;
	*copy = ift_text_dup(cut, rule);
	free(cut);
	return *copy;
}

bool ift_text_is_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n;

		if (!p[i])
			return false;	/* a NUL inside: no C string holds it */
		n = ift_utf8_len(p + i);
		if (!n || n > len - i)
			return false;
		i += n;
	}
	return true;
}
