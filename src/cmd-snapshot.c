// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace snapshot PID: asks the recorder PID (record --keep-last) for
 * a snapshot of the events it keeps, as SIGUSR1 does.  It checks first that
 * PID is a recorder of ours that keeps the last events, so that no other
 * process gets a signal that would kill it (SIGUSR1's default).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] = "snapshot PID";

static const char help[] =
	"Asks the recorder PID (a `record --keep-last' running) for a snapshot of\n"
	"the events it keeps: it writes FILE.N.trace once every event up to now is\n"
	"in, and says so on its standard error.  Signalling it with SIGUSR1 does\n"
	"the same.\n";

/* Whether PID runs `ingero-ftrace ... record ... --keep-last': its argv. */
static int is_keeping_recorder(pid_t pid)
{
	char path[64], argv[8192];
	bool record = false, keep = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, argv, sizeof(argv) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	argv[n] = 0;
	for (char *a = argv; a < argv + n; a += strlen(a) + 1) {
		if (!strcmp(a, "--"))
			break;	/* the command's own arguments */
		record |= !strcmp(a, "record");
		keep |= !strncmp(a, "--keep-last", 11);
	}
	return record && keep;
}

int cmd_snapshot(int argc, char **argv)
{
	struct cli_options co = {
		.usage = usage, .help = help, .shortopts = "+h", .max_args = 1,
		.args_hint = "(one recorder's pid)",
	};
	pid_t pid;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0)
		;
	if (c < 0)
		return co.status;
	if (optind >= argc)
		return usage_error(usage, "which recorder? give its pid");
	if (cli_parse_pid(argv[optind], &pid) < 0)
		return usage_error(usage, "bad pid '%s'", argv[optind]);
	ret = is_keeping_recorder(pid);
	if (ret < 0)
		return error("cannot ask %d: %s", (int)pid,
			     ret == -ENOENT ? "no such process" : strerror(-ret)), EXIT_RUNTIME;
	if (!ret)
		return error("%d is no `ingero-ftrace record --keep-last': not signalled",
			     (int)pid), EXIT_RUNTIME;
	if (kill(pid, SIGUSR1) < 0)
		return error("cannot signal %d: %s", (int)pid, strerror(errno)), EXIT_RUNTIME;
	if (verbose >= 0)
		fprintf(stderr, "asked recorder %d for a snapshot\n", (int)pid);
	return EXIT_OK;
}
