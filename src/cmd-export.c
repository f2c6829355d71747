// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace export: a trace for other tools, from the trace file alone.
 *   --format sqlite    a SQLite database (docs/sql.md); -o is required
 *   --format perfetto  a JSON timeline for ui.perfetto.dev and chrome://tracing
 *                      (docs/perfetto.md); -o FILE or stdout
 *   --format folded    the profile (record --profile) as folded stacks for
 *                      flamegraph.pl, speedscope, inferno; -o FILE or stdout
 *   --format parquet   every table as Parquet under -o DIR, partitioned by
 *                      host and rank (docs/sql.md); -i may be repeated: the
 *                      traces of one job into one directory
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ift-export.h"
#include "util/outfile.h"

static const char usage[] =
	"export [-i FILE]... --format sqlite|perfetto|parquet|folded [-o OUT]";

#define MAX_INPUTS	1024

/* The traces of PATHS as Parquet under DIR, all or none; the command's
   exit code. */
static int export_parquet(const char *const *paths, size_t n, const char *dir)
{
	struct ift_parquet_dir *d;
	int ret = ift_parquet_begin(dir, &d);

	if (ret < 0) {
		error("cannot export to parquet '%s': %s", dir, ift_strerror(ret));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < n; i++) {
		char msg[512] = "";
		struct ift_export_opts opts = {
			.errbuf = msg, .errlen = sizeof(msg), .source = paths[i],
		};
		struct ift_trace *t = cli_open_trace(paths[i], 0);

		if (!t) {
			ift_parquet_end(d);
			return EXIT_RUNTIME;
		}
		ret = ift_export_parquet(d, t, &opts);
		ift_trace_close(t);
		if (ret < 0) {
			error("cannot export '%s' to parquet '%s': %s", paths[i], dir,
			      *msg ? msg : ift_strerror(ret));
			ift_parquet_end(d);
			return EXIT_RUNTIME;
		}
	}
	ret = ift_parquet_commit(d);
	ift_parquet_end(d);
	if (ret < 0) {
		error("cannot move the export into '%s': %s", dir, ift_strerror(ret));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *paths[MAX_INPUTS];
	const char *path = IFT_DEFAULT_TRACE, *format = NULL, *out = NULL;
	size_t npaths = 0;
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:f:o:h", .longopts = longopts,
	};
	char msg[256] = "";
	struct ift_export_opts opts = { .errbuf = msg, .errlen = sizeof(msg) };
	struct ift_trace *t;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
		case 'i':
			if (npaths == MAX_INPUTS)
				return usage_error(usage, "more than %d traces", MAX_INPUTS);
			paths[npaths++] = path = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		}
	}
	if (c < 0)
		return co.status;
	if (!format)
		return usage_error(usage, "--format is required");
	if (strcmp(format, "sqlite") && strcmp(format, "perfetto") && strcmp(format, "parquet") &&
	    strcmp(format, "folded"))
		return usage_error(usage, "unknown format '%s' (sqlite, perfetto, parquet, folded)",
				   format);
	if (!strcmp(format, "sqlite") && !out)
		return usage_error(usage, "--format sqlite needs -o OUT.db");
	if (!strcmp(format, "parquet") && !out)
		return usage_error(usage, "--format parquet needs -o DIR");
	if (npaths > 1 && strcmp(format, "parquet"))
		return usage_error(usage, "--format %s takes one trace", format);
	if (!strcmp(format, "parquet"))
		return export_parquet(npaths ? paths : &path, npaths ? npaths : 1, out);

	t = cli_open_trace(path, 0);
	if (!t)
		return EXIT_RUNTIME;
	opts.source = path;
	if (!strcmp(format, "sqlite")) {
		ret = ift_export_sqlite(t, out, &opts);
	} else {
		struct ift_outfile of;
		FILE *f = out ? cli_output_open(&of, out) : stdout;

		if (!f) {
			error("cannot write '%s%s': %s", out,
			      errno == EEXIST ? IFT_PART_SUFFIX : "", strerror(errno));
			ift_trace_close(t);
			return EXIT_RUNTIME;
		}
		ret = !strcmp(format, "folded") ? ift_export_folded(t, f, &opts) :
						  ift_export_perfetto(t, f, &opts);
		if (out)
			ret = cli_output_close(&of, f, ret);
		/* a failed write to stdout is said once, by main, as for
		   every command */
		if (!out && ret < 0 && ferror(stdout)) {
			ift_trace_close(t);
			return EXIT_RUNTIME;
		}
		if (!out && !ret && cli_finish_stdout(0)) {
			ift_trace_close(t);	/* it said why */
			return EXIT_RUNTIME;
		}
	}
	if (ret < 0)
		error("cannot export '%s' to %s '%s': %s", path, format,
		      out ? out : "stdout", *msg ? msg : ift_strerror(ret));
	ift_trace_close(t);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
