// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace export: a trace for other tools, from the trace file alone.
 *   --format sqlite    a SQLite database (docs/sql.md); -o is required
 *   --format perfetto  a JSON timeline for ui.perfetto.dev and chrome://tracing
 *                      (docs/perfetto.md); -o FILE or stdout
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ift-export.h"
#include "util/outfile.h"

static const char usage[] = "export [-i FILE] --format sqlite|perfetto [-o OUT]";

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = IFT_DEFAULT_TRACE, *format = NULL, *out = NULL;
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:f:o:h", .longopts = longopts, .input = &path,
	};
	char msg[256] = "";
	struct ift_export_opts opts = { .errbuf = msg, .errlen = sizeof(msg) };
	struct ift_trace *t;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
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
	if (strcmp(format, "sqlite") && strcmp(format, "perfetto"))
		return usage_error(usage, "unknown format '%s' (sqlite, perfetto)", format);
	if (!strcmp(format, "sqlite") && !out)
		return usage_error(usage, "--format sqlite needs -o OUT.db");

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
		ret = ift_export_perfetto(t, f, &opts);
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
