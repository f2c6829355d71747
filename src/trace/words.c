// SPDX-License-Identifier: MIT
/*
 * The trace's words for people, for both halves of the tool: task states as
 * sched_switch prints them, durations with their unit, frames as text,
 * valid UTF-8 in names the traced program chose.
 */
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
	if ((state & 0xff) == 0) {
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

void ift_frame_format(const struct ift_frame *f, char *buf, size_t size)
{
	const char *base = strrchr(f->module, '/');

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
