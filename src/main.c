// SPDX-License-Identifier: MIT
/* ingero-ftrace: the command table, global options and exit codes. */
#include <stdio.h>
#include <string.h>
#include <getopt.h>

#include "cli.h"
#include "ift-trace.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "trace a command's CUDA calls and host scheduling" },
	{ "info", cmd_info, "show a trace's metadata, tables, size and losses" },
	{ "dump", cmd_dump, "print every event of a trace in time order" },
	{ "report", cmd_report, "what the CUDA calls cost and what the scheduler did to each task" },
	{ "snapshot", cmd_snapshot, "ask a record --keep-last for a snapshot of the events it keeps" },
	{ "top", cmd_top, "follow a recording (or replay a trace): the last seconds' chain and feeders" },
	{ "export", cmd_export, "write a trace as a SQLite database or a Perfetto timeline" },
	{ "query", cmd_query, "run read-only SQL over a trace (or an exported database)" },
	{ "mcp", cmd_mcp, "serve a trace to AI assistants (Model Context Protocol, stdio)" },
	{ "discover", cmd_discover_debug, "(developer) list the CUDA libraries and offsets a command would get" },
	{ "check", cmd_check, "check that this machine can record; remove leftovers of killed runs" },
};

static void print_usage(FILE *f)
{
	fprintf(f, "usage: %s [-v|-q] <command> [<args>]\n\n", progname);
	fprintf(f, "ingero-ftrace traces what starves a GPU: CUDA calls and host scheduling,\n"
		   "through tracefs, without BPF.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'%s <command> --help' shows a command's options.\n", progname);
}

int main(int argc, char **argv)
{
	int i;

	opterr = 0;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			verbose--;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return cli_finish_stdout(EXIT_OK);
		} else if (!strcmp(a, "--version")) {
			printf("ingero-ftrace %s (trace format %d)\n", IFT_VERSION,
			       IFT_FORMAT_VERSION);
			return cli_finish_stdout(EXIT_OK);
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", progname, a);
			print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	/* record's own helper, run as the user: no command of the table */
	if (!strcmp(argv[i], "__nvml-helper"))
		return cmd_nvml_helper(argc - i, argv + i);
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(argv[i], commands[c].name)) {
			int status = commands[c].fn(argc - i, argv + i);

			if (status == EXIT_OK && cli_trace_data_lost())
				status = EXIT_RUNTIME;
			return cli_finish_stdout(status);
		}
	fprintf(stderr, "%s: '%s' is not a command; see '%s --help'\n", progname,
		argv[i], progname);
	return EXIT_USAGE;
}
