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
	struct ift_mcp *m;
	int c, ret;

	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			opts.trace = optarg;
			break;
		case 'h':
			printf("usage: %s %s\n", progname, usage);
			return EXIT_OK;
		default:
			return bad_option(usage, argv);
		}
	}
	if (optind < argc)
		return usage_error(usage, "unexpected argument '%s'", argv[optind]);
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
