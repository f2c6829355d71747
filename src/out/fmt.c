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
