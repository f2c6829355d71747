// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace discover: a developer's view of the discover stage, to check
 * from the shell which CUDA libraries a command or process would have probed
 * and at which file offsets.  One line per library, tab-separated:
 *
 *   PATH  API  FOUND_BY  NFUNCS  BUILD_ID
 *
 * and with -v one line per function after it: TAB NAME TAB 0xOFFSET.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ift-discover.h"

static const char usage[] = "discover [-v] [-a] [-p PID]... [-- COMMAND [ARGS...]]";

extern char **environ;

static void print_lib(const struct ift_lib *lib, bool syms)
{
	printf("%s\t%s\t%s\t%zu\t", lib->path, ift_api_name(lib->api), lib->found_by,
	       lib->nsyms);
	for (size_t i = 0; i < lib->build_id_len; i++)
		printf("%02x", lib->build_id[i]);
	printf("%s\n", lib->build_id_len ? "" : "-");
	if (!syms)
		return;
	for (size_t i = 0; i < lib->nsyms; i++)
		printf("\t%s\t0x%" PRIx64 "\n", lib->syms[i].name, lib->syms[i].offset);
}

int cmd_discover_debug(int argc, char **argv)
{
	struct cli_options co = {
		.usage = usage, .shortopts = "+avp:h", .max_args = CLI_ARGS_ANY,
		.bare_usage = true,
	};
	struct ift_discover_opts opts = { .envp = environ };
	struct ift_libset set;
	struct ift_creds user;
	pid_t *pids = NULL;
	bool syms = verbose > 0;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
		case 'a':
			opts.all_procs = true;
			break;
		case 'v':
			syms = true;
			break;
		case 'p': {
			pid_t pid, *v;

			if (cli_parse_pid(optarg, &pid) < 0) {
				free(pids);
				return usage_error(usage, "bad pid '%s'", optarg);
			}
			v = realloc(pids, (opts.npids + 1) * sizeof(*v));
			if (!v) {
				free(pids);
				return error("out of memory");
			}
			pids = v;
			pids[opts.npids++] = pid;
			break;
		}
		}
	}
	if (c < 0) {
		free(pids);
		return co.status;
	}
	opts.pids = pids;
	if (optind < argc)
		opts.argv = argv + optind;
	/* under sudo, the command's Python is asked as the user, as record does */
	switch (cli_sudo_user(&user)) {
	case -1:
		free(pids);
		return EXIT_RUNTIME;
	case 1:
		opts.run_as = &user;
		break;
	}

	ift_libset_init(&set);
	ret = ift_discover(&opts, &set);
	if (ret < 0) {
		if (ret == -ENOENT && opts.argv && !opts.npids)
			error("cannot find '%s'", opts.argv[0]);
		else if (ret == -ENOENT && !opts.argv && opts.npids == 1)
			error("no process %d", (int)pids[0]);
		else
			error("cannot discover CUDA libraries: %s", ift_strerror(ret));
		ret = EXIT_RUNTIME;
	} else {
		for (size_t i = 0; i < set.n; i++)
			print_lib(&set.v[i], syms);
		ret = EXIT_OK;
	}
	ift_libset_release(&set);
	free((void *)user.groups);
	free(pids);
	return ret;
}
