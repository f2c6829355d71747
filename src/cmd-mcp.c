// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace mcp: an MCP server over stdio for one trace (docs/mcp.md).
 * stdout carries JSON-RPC lines and nothing else; notes go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ift-mcp.h"

static const char usage[] = "mcp [-i FILE]";

int cmd_mcp(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ift_mcp_opts opts = { .trace = IFT_DEFAULT_TRACE, .log = stderr,
				     .verbose = verbose };
	struct cli_options co = {
		.usage = usage, .shortopts = "i:h", .longopts = longopts, .input = &opts.trace,
	};
	struct ift_mcp *m;
	int ret;

	/* -i and -h alone: no option is left for a switch */
	if (cli_option_next(&co, argc, argv) < 0)
		return co.status;
	/* a client that goes away is an error to report, not a signal to die of */
	signal(SIGPIPE, SIG_IGN);
	m = ift_mcp_new(&opts);
	if (!m) {
		error("mcp: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	if (verbose > 0)
		fprintf(stderr, "%s: mcp: serving '%s' on stdio\n", progname, opts.trace);
	ret = ift_mcp_serve(m, stdin, stdout);
	ift_mcp_free(m);
	if (ret < 0) {
		error("mcp: cannot answer: %s", strerror(-ret));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
