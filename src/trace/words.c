// SPDX-License-Identifier: MIT
/*
 * The trace's words for people, for both halves of the tool: task states as
 * sched_switch prints them, durations with their unit, frames as text,
 * valid UTF-8 in names the traced program chose.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ift-words.h"

const char *ift_fmt_dur(char *buf, size_t len, uint64_t ns, bool spaced)
{
	const char *sp = spaced ? " " : "";

	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "%sns", ns, sp);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f%s%s", (double)ns / 1e3, sp,
			 spaced ? "us" : "\xc2\xb5s");
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f%sms", (double)ns / 1e6, sp);
	else
		snprintf(buf, len, "%.2f%ss", (double)ns / 1e9, sp);
	return buf;
}

size_t ift_utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;	/* overlong, surrogate, above U+10FFFF */
	return n;
}

const char *ift_task_state_str(uint64_t state, char *buf, size_t len)
{
	/* TASK_REPORT bits as the sched_switch tracepoint prints them */
	static const char letters[] = "SDTtXZPI";
	size_t n = 0;

	if (!len)
		return buf;
	if (ift_task_state_runnable(state)) {
		buf[n++] = 'R';
		if (state & 0x100 && n + 1 < len)
			buf[n++] = '+';
	}
	for (unsigned b = 0; b < 8 && n + 1 < len; b++) {
		if (state & (1U << b)) {
			if (n && n + 1 < len)
				buf[n++] = '|';
			if (n + 1 < len)
				buf[n++] = letters[b];
		}
	}
	buf[n < len ? n : len - 1] = 0;
	return buf;
}

const char *ift_api_name(enum ift_api api)
{
	switch (api) {
	case IFT_API_RUNTIME: return "runtime";
	case IFT_API_DRIVER: return "driver";
	case IFT_API_NCCL: return "nccl";
	}
	return "?";
}

const char *ift_api_lib_kind(enum ift_api api)
{
	switch (api) {
	case IFT_API_RUNTIME: return "cudart";
	case IFT_API_DRIVER: return "cuda";
	case IFT_API_NCCL: return "nccl";
	}
	return "?";
}

void ift_frame_format(const struct ift_frame *f, char *buf, size_t size)
{
	const char *base = strrchr(f->module, '/');

	if (f->flags & IFT_FRAME_F_PYSRC) {
		char line[24] = "";

		if (f->offset)
			snprintf(line, sizeof(line), ":%" PRIu64, f->offset);
		snprintf(buf, size, "%s%s%s%s", f->module[0] ? ift_py_file_short(f->module) : "?",
			 line, f->symbol[0] ? " in " : "", f->symbol);
		return;
	}
	base = base ? base + 1 : f->module;
	if (f->symbol[0])
		snprintf(buf, size, "%s%s+0x%" PRIx64 " (%s)",
			 f->flags & IFT_FRAME_F_PYTHON ? "[python] " : "",
			 f->symbol, f->symoff, base);
	else if (base[0])
		snprintf(buf, size, "%s%s+0x%" PRIx64,
			 f->flags & IFT_FRAME_F_PYTHON ? "[python] " : "",
			 base, f->offset);
	else
		snprintf(buf, size, "[unknown] 0x%" PRIx64, f->offset);
}

void ift_func_format(const struct ift_frame *f, char *buf, size_t size)
{
	const char *base;

	if (!f) {
		snprintf(buf, size, "[kernel]");
		return;
	}
	base = strrchr(f->module, '/');
	base = base ? base + 1 : f->module;
	if (!(f->flags & IFT_FRAME_F_PYSRC) && (f->flags & IFT_FRAME_F_PYTHON))
		snprintf(buf, size, "[python] (%s)", base);
	else if (!(f->flags & IFT_FRAME_F_PYSRC) && !f->symbol[0] && base[0])
		snprintf(buf, size, "[no symbol] (%s)", base);
	else if ((f->flags & IFT_FRAME_F_PYSRC) || !f->symbol[0])
		ift_frame_format(f, buf, size);
	else
		snprintf(buf, size, "%s (%s)", f->symbol, base);
}

/* "pythonX.Y" (a free-threaded or debug build's "python3.13t" too): the
   standard library's directory, LEN bytes at S. */
static bool py_version_dir(const char *s, size_t len)
{
	size_t i = 6;

	if (len < 9 || strncmp(s, "python", 6))
		return false;
	if (!isdigit((unsigned char)s[i]))
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	if (i == len || s[i++] != '.' || i == len || !isdigit((unsigned char)s[i]))
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	while (i < len && islower((unsigned char)s[i]))
		i++;
	return i == len;
}

const char *ift_py_file_short(const char *file)
{
	const char *pkg = NULL, *std = NULL, *prev = NULL, *prev_end = NULL;

	/*
	 * Path components, left to right; the last match wins: a virtual
	 * environment's site-packages lies under the interpreter's lib
	 * directory, and a package may vendor another.
	 */
	for (const char *c = file; *c;) {
		const char *end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c);

		if (!end)
			break;	/* the file's own name: nothing below it */
		if ((len == 13 && (!strncmp(c, "site-packages", 13) ||
				   !strncmp(c, "dist-packages", 13))))
			pkg = end + 1;
		else if (prev && py_version_dir(c, len) &&
			 ((prev_end - prev == 3 && !strncmp(prev, "lib", 3)) ||
			  (prev_end - prev == 5 && !strncmp(prev, "lib64", 5))))
			std = c;
		prev = c;
		prev_end = end;
		c = end + 1;
	}
	/* a package inside the standard library's tree is a package */
	if (pkg && *pkg && (!std || pkg > std))
		return pkg;
	return std ? std : file;
}

void ift_stack_parts(const struct ift_stack *st, struct ift_stack_parts *p)
{
	unsigned n = st ? st->nframes : 0, native = 0, inner;

	while (native < n && !(st->frames[native].flags & IFT_FRAME_F_PYSRC))
		native++;
	inner = native;
	/* frame 0 is the probed function itself: never inside Python */
	if (native < n)
		for (inner = native ? 1 : 0;
		     inner < native && !(st->frames[inner].flags & IFT_FRAME_F_PYTHON); inner++)
			;
	p->inner = inner;
	p->native = native;
	p->nframes = n;
}

unsigned ift_stack_chain_index(const struct ift_stack_parts *p, unsigned k)
{
	unsigned npy = p->nframes - p->native;

	if (k < p->inner)
		return k;
	if (k < p->inner + npy)
		return p->native + (k - p->inner);
	return k - npy;
}

unsigned ift_stack_flame(const struct ift_stack *st, const struct ift_frame **out,
			 unsigned max)
{
	struct ift_stack_parts p;
	unsigned n = 0;
	bool py;

	ift_stack_parts(st, &p);
	py = p.nframes > p.native;
	for (unsigned i = p.nframes; i-- > 0 && n < max;) {
		const struct ift_frame *f = &st->frames[ift_stack_chain_index(&p, i)];

		/* the interpreter's frames ran the Python ones */
		if (py && !(f->flags & IFT_FRAME_F_PYSRC) && (f->flags & IFT_FRAME_F_PYTHON))
			continue;
		out[n++] = f;
	}
	return n;
}

const struct ift_frame *ift_stack_py_top(const struct ift_stack *st)
{
	for (unsigned k = 0; st && k < st->nframes; k++)
		if (st->frames[k].flags & IFT_FRAME_F_PYSRC)
			return &st->frames[k];
	return NULL;
}

int ift_py_frame_cmp(const struct ift_frame *x, const struct ift_frame *y)
{
	int c = strcmp(x->module, y->module);

	if (!c)
		c = strcmp(x->symbol, y->symbol);
	if (!c)
		c = (x->offset > y->offset) - (x->offset < y->offset);
	return c;
}

const char *ift_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u < 5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
	return buf;
}

const char *ift_fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	size_t l, o = 0;

	if (!len)
		return buf;
	l = (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, n);
	for (size_t i = 0; i < l && o + 1 < len; i++) {
		if (i && (l - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}
