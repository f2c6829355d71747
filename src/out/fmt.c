// SPDX-License-Identifier: MIT
/* Figures for people: durations with their unit. */
#include <inttypes.h>
#include <stdio.h>

#include "ift-out.h"

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
