/* SPDX-License-Identifier: MIT */
#ifndef IFT_EXPORT_H
#define IFT_EXPORT_H

/*
 * Exports of a trace for the tools people already use: SQLite (docs/sql.md)
 * and a Perfetto / chrome://tracing timeline (docs/perfetto.md).  Both read
 * the trace file through the reader API only, keep every event, and neither
 * prints: errors come back as negative values (-errno or -IFT_E_*), with a
 * message in the caller's buffer where the library (sqlite) has one.
 */
#include <stdio.h>

#include "ift-trace.h"

struct ift_export_opts {
	char *errbuf;			/* a message for the last error, or NULL */
	size_t errlen;
};

/*
 * ift_export_sqlite - write every event of T into a new SQLite database PATH
 * (replaced if it exists), with the tables, indexes and views of docs/sql.md.
 * Returns 0 or a negative error.
 */
int ift_export_sqlite(struct ift_trace *t, const char *path,
		      const struct ift_export_opts *opts);

/*
 * ift_export_perfetto - write T as a Chrome/Perfetto JSON trace to OUT.
 * Returns 0 or a negative error (a write error: -ENOSPC, -EIO, ...).
 */
int ift_export_perfetto(struct ift_trace *t, FILE *out,
			const struct ift_export_opts *opts);

#endif
