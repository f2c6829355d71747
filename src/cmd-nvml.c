// SPDX-License-Identifier: MIT
/*
 * `ingero-ftrace __nvml-helper PERIOD_MS [LIB]`: the NVML helper that
 * `record` runs as the user (ift-gpu.h), not a command of the user's: its
 * records go to descriptor 3, a pipe the recorder reads.  It ends at
 * SIGTERM, or when the recorder is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ift-error.h"
#include "ift-gpu.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int cmd_nvml_helper(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct stat st;
	char *end;
	unsigned long period;
	int ret;

	if (argc < 2 || argc > 3 || fstat(3, &st) < 0 || !S_ISFIFO(st.st_mode))
		return usage_error("__nvml-helper PERIOD_MS [LIB]",
				   "record runs this itself, with a pipe on descriptor 3");
	period = strtoul(argv[1], &end, 10);
	if (*end || !period || period > 10000)
		return usage_error("__nvml-helper PERIOD_MS [LIB]", "bad period '%s'", argv[1]);
	/* no SA_RESTART: the sleep between two periods ends at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = ift_gpu_helper_main(3, argc > 2 ? argv[2] : NULL, (unsigned)period, &stop);
	if (ret < 0)
		return error("NVML helper: %s", ift_strerror(ret)), EXIT_RUNTIME;
	return EXIT_OK;
}
