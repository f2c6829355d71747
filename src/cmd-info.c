// SPDX-License-Identifier: MIT
/* ingero-ftrace info: what a trace holds, how big it is, what was lost. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] = "info [-i FILE] [--verify]";

static void print_span(const struct ift_trace *t)
{
	uint64_t lo = ift_trace_ts_min(t), hi = ift_trace_ts_max(t);

	if (!lo && !hi) {
		printf("time span:      (no events)\n");
		return;
	}
	printf("time span:      %" PRIu64 ".%09" PRIu64 " .. %" PRIu64 ".%09" PRIu64
	       " (%.3f s)\n", lo / 1000000000, lo % 1000000000,
	       hi / 1000000000, hi % 1000000000, (double)(hi - lo) / 1e9);
}

static void print_tables(const struct ift_trace *t, uint64_t file_size)
{
	uint64_t rows = 0;
	char a[32], b[32];

	printf("\n%-12s %14s %7s %12s %10s\n", "table", "events", "chunks",
	       "bytes", "bytes/ev");
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		uint64_t bytes = 0, n = ift_trace_rows(t, tb);
		size_t nc = ift_trace_chunk_count(t, tb);

		for (size_t i = 0; i < nc; i++)
			bytes += ift_trace_chunk_info(t, tb, i)->size + 24;
		rows += n;
		printf("%-12s %14s %7zu %12s %10.2f\n", ift_table_def(tb)->name,
		       ift_fmt_count(a, sizeof(a), n), nc, ift_fmt_count(b, sizeof(b), bytes),
		       n ? (double)bytes / (double)n : 0.0);
	}
	/* the whole file: chunks plus metadata, index and headers */
	printf("%-12s %14s %7s %12s %10.2f\n", "total", ift_fmt_count(a, sizeof(a), rows),
	       "", ift_fmt_count(b, sizeof(b), file_size),
	       rows ? (double)file_size / (double)rows : 0.0);
}

static void print_tasks(const struct ift_trace *t)
{
	size_t n = ift_trace_task_count(t), procs = 0, threads = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ift_task *k = ift_trace_task(t, i);

		if (k->tid == k->pid)
			procs++;
		else
			threads++;
	}
	printf("tasks:          %zu processes, %zu other threads%s\n", procs, threads,
	       ift_trace_tasks_rebuilt(t) ? " (table rebuilt from events)" : "");
}

static void print_loss(const struct ift_trace *t)
{
	size_t n = ift_trace_loss_count(t);
	char a[32];

	if (!n) {
		printf("lost events:    not recorded\n");
		return;
	}
	printf("lost events:    %s\n", ift_fmt_count(a, sizeof(a), ift_trace_lost_events(t)));
	for (size_t i = 0; i < n; i++) {
		const struct ift_loss *l = ift_trace_loss(t, i);

		printf("  cpu%-3u overrun %" PRIu64 ", dropped %" PRIu64
		       ", commit overrun %" PRIu64 ", read %" PRIu64 "\n",
		       l->cpu, l->overrun, l->dropped, l->commit_overrun, l->read);
	}
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = IFT_DEFAULT_TRACE;
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:h", .longopts = longopts, .input = &path,
	};
	const struct ift_recovery *rec;
	unsigned flags = 0;
	struct ift_trace *t;
	char a[32], key[256];
	unsigned tb = 0;
	size_t chunk = 0;
	int c, ret = 0;

	while ((c = cli_option_next(&co, argc, argv)) > 0)
		if (c == 'V')
			flags |= IFT_OPEN_VERIFY;
	if (c < 0)
		return co.status;

	t = cli_open_trace(path, flags);
	if (!t)
		return EXIT_RUNTIME;
	rec = ift_trace_recovery(t);
	/* the path, META's values and the libraries' paths name what the
	   traced program chose: shown as a terminal may show them */
	printf("file:           ");
	ift_text_put(stdout, path, IFT_TEXT_TERM);
	printf(" (%s)\n", ift_fmt_bytes(a, sizeof(a), (double)rec->file_size));
	printf("format:         version %u, %s\n", ift_trace_version(t),
	       rec->finished ? "finished" :
	       rec->damaged ? "DAMAGED: read up to the last complete section" :
	       "UNFINISHED: no index, every section read");
	if (rec->damaged)
		printf("recovered:      %" PRIu64 " of %" PRIu64 " bytes (%s after byte %" PRIu64 ")\n",
		       rec->good_bytes, rec->file_size, ift_strerror(rec->reason),
		       rec->good_bytes);
	for (size_t i = 0; i < ift_trace_meta_count(t); i++) {
		const char *k, *v;

		ift_trace_meta_at(t, i, &k, &v);
		printf("%-15s ", ift_text(key, sizeof(key), k, IFT_TEXT_FIELD));
		ift_text_put(stdout, v, IFT_TEXT_TERM);
		putchar('\n');
	}
	for (size_t i = 0; i < ift_trace_library_count(t); i++) {
		const struct ift_library *l = ift_trace_library(t, i);

		printf("library:        ");
		ift_text_put(stdout, l->path, IFT_TEXT_TERM);
		printf(" (%s, %" PRIu64 " functions probed, build-id ",
		       ift_text(key, sizeof(key), l->kind, IFT_TEXT_TERM), l->functions);
		for (size_t b = 0; b < l->build_id_len; b++)
			printf("%02x", l->build_id[b]);
		printf(")\n");
	}
	print_span(t);
	print_tasks(t);
	print_loss(t);
	print_tables(t, rec->file_size);
	/* --verify: every chunk decoded too, beyond its checksum */
	if ((flags & IFT_OPEN_VERIFY) && (ret = ift_trace_verify(t, &tb, &chunk)) < 0)
		error("'%s': chunk %zu of table %s: %s", path, chunk, ift_table_def(tb)->name,
		      ift_strerror(ret));
	ift_trace_close(t);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
