// SPDX-License-Identifier: MIT
/*
 * The hist file of record --page-allocs=count's trigger (session.c), as the
 * kernel prints it (kernel/trace/trace_events_hist.c, the same from 4.7 to
 * 6.x for plain keys and hitcount):
 *
 *	# event histogram
 *	# trigger info: hist:keys=common_pid,order:vals=hitcount:... [active]
 *
 *	{ common_pid:       1234, order:          0 } hitcount:         56
 *
 *	Totals:
 *	    Hits: 56
 *	    Entries: 1
 *	    Dropped: 0
 *
 * Comments, blank lines and the totals are skipped but for Dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-error.h"
#include "ift-probe.h"

/* The number after "NAME:" in LINE, spaces allowed before it; false when absent. */
static bool field_u64(const char *line, const char *name, uint64_t *v)
{
	const char *p = strstr(line, name);
	char *end;

	if (!p)
		return false;
	p += strlen(name);
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return !errno && end != p;
}

int ift_hist_parse(const char *text, ift_page_count_fn fn, void *ctx, uint64_t *dropped)
{
	const char *line = text, *nl;

	*dropped = 0;
	for (; line && *line; line = nl ? nl + 1 : NULL) {
		char buf[256];
		size_t len;
		uint64_t tid, order, hits;
		int ret;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		if (len >= sizeof(buf))
			return -IFT_E_CORRUPT;
		memcpy(buf, line, len);
		buf[len] = 0;
		if (buf[0] == '{') {
			if (!field_u64(buf, "common_pid:", &tid) || !field_u64(buf, "order:", &order) ||
			    !field_u64(buf, "} hitcount:", &hits) || tid > UINT32_MAX || order > 63)
				return -IFT_E_CORRUPT;
			if ((ret = fn(ctx, (uint32_t)tid, (unsigned)order, hits)) < 0)
				return ret;
		} else if (strstr(buf, "Dropped:") && !field_u64(buf, "Dropped:", dropped)) {
			return -IFT_E_CORRUPT;
		}
	}
	return 0;
}
