// SPDX-License-Identifier: MIT
/* A trace as a SQLite database: the schema of docs/sql.md. */
#include <errno.h>
#include <stdio.h>

#include "ift-export.h"

int ift_export_sqlite(struct ift_trace *t, const char *path,
		      const struct ift_export_opts *opts)
{
	(void)t;
	(void)path;
	if (opts && opts->errbuf)
		snprintf(opts->errbuf, opts->errlen, "sqlite export not written yet");
	return -ENOSYS;
}
