// SPDX-License-Identifier: MIT
/* A trace as a Chrome/Perfetto JSON timeline: docs/perfetto.md. */
#include <errno.h>
#include <stdio.h>

#include "ift-export.h"

int ift_export_perfetto(struct ift_trace *t, FILE *out,
			const struct ift_export_opts *opts)
{
	(void)t;
	(void)out;
	if (opts && opts->errbuf)
		snprintf(opts->errbuf, opts->errlen, "perfetto export not written yet");
	return -ENOSYS;
}
