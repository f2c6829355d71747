// SPDX-License-Identifier: MIT
/*
 * The traced command.  It is forked before tracing starts and waits on a pipe
 * until every probe and event is armed, so none of its events can be missed;
 * then it executes.  A second pipe, closed by a successful exec, carries the
 * errno of a failed one back, so `record -- nosuchcmd' can say why.
 *
 * The command gets stdin, stdout and stderr and no other descriptor, as sudo
 * gives it (closefrom 3): the recorder's ring buffers (libtracefs opens
 * trace_pipe_raw without O_CLOEXEC), its trace file, pipes and perf events
 * would let the command read, and so steal, the recorder's events, and would
 * keep the instance busy after a recorder killed with SIGKILL.  Marking each
 * where it is opened cannot cover what libraries open, so the child marks
 * every descriptor above 2 close-on-exec just before it executes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ift-discover.h"
#include "ift-record.h"
#include "util/fds.h"

struct ift_child {
	pid_t pid;
	int go;		/* write end: the child waits for a byte */
	int err;	/* read end: errno of a failed exec, or EOF */
};

uint64_t ift_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void child_fail(int fd, int err)
{
	ssize_t n = write(fd, &err, sizeof(err));

	(void)n;
	_exit(127);
}

pid_t ift_child_spawn(char *const *argv, const struct ift_creds *as,
		      struct ift_child **out)
{
	int go[2], err[2];
	struct ift_child *c;
	pid_t pid;
	char b;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (pipe2(go, O_CLOEXEC) < 0) {
		free(c);
		return -errno;
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;

		close(go[0]);
		close(go[1]);
		free(c);
		return -e;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		free(c);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		/* the recorder's signal handling is not the command's */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &b, 1) != 1)
			_exit(127);	/* the recorder gave up */
		/* system calls only (no NSS after fork): the groups were looked up before */
		if (as && ift_creds_become(as) < 0)
			child_fail(err[1], errno);
		/* close-on-exec, not closed: the errno pipe works until exec */
		ift_fds_above2(-1, true);
		execvp(argv[0], argv);
		child_fail(err[1], errno);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go = go[1];
	c->err = err[0];
	*out = c;
	return pid;
}

int ift_child_release(struct ift_child *c)
{
	ssize_t n;
	int e = 0;

	if (c->go < 0)
		return 0;
	n = write(c->go, "g", 1);
	close(c->go);
	c->go = -1;
	if (n != 1)
		return -EPIPE;
	/* EOF when exec succeeded (the pipe is close-on-exec) */
	do
		n = read(c->err, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err);
	c->err = -1;
	return n == sizeof(e) ? -e : 0;
}

void ift_child_free(struct ift_child *c)
{
	if (!c)
		return;
	if (c->go >= 0)
		close(c->go);	/* an unreleased child reads EOF and exits */
	if (c->err >= 0)
		close(c->err);
	free(c);
}
