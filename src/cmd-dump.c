// SPDX-License-Identifier: MIT
/* ingero-ftrace dump: every event of a trace in time order, as text or JSON lines. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ift-render.h"

static const char usage[] = "dump [-i FILE] [--json] [--table NAME[,NAME...]]";

static int parse_tables(const char *arg, unsigned *mask)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -1;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int tb = ift_table_by_name(tok);

		if (tb < 0) {
			ret = -1;
			break;
		}
		*mask |= 1U << tb;
	}
	free(copy);
	return *mask ? ret : -1;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "table", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = IFT_DEFAULT_TRACE;
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:t:h", .longopts = longopts, .input = &path,
	};
	unsigned mask = ~0U;
	struct ift_cursor *cur;
	struct ift_trace *t;
	struct ift_event ev;
	bool json = false, write_failed = false;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			if (parse_tables(optarg, &mask) < 0)
				return usage_error(usage, "unknown table in '%s' (tables: calls, switches, wakeups, page_allocs, tasks, samples)",
						   optarg);
			break;
		}
	}
	if (c < 0)
		return co.status;

	t = cli_open_trace(path, 0);
	if (!t)
		return EXIT_RUNTIME;
	cur = ift_cursor_new(t, mask, 0);
	if (!cur) {
		ift_trace_close(t);
		return error("out of memory"), EXIT_RUNTIME;
	}
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		ret = json ? ift_out_event_json(stdout, t, &ev) :
			     ift_out_event_text(stdout, t, &ev);
		if (ret < 0) {
			/* the output failed (a full disk): main says so */
			write_failed = true;
			break;
		}
	}
	if (ret < 0 && !write_failed)
		error("cannot read '%s': %s", path, ift_strerror(ret));
	ift_cursor_free(cur);
	ift_trace_close(t);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
