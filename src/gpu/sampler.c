// SPDX-License-Identifier: MIT
/*
 * The recorder's side of the NVML helper (ift-gpu.h): starts it, reads its
 * records, and hands its rows on in time order.
 *
 * The driver's utilization samples reach us up to a period after the time
 * they are stamped with, later than the readings the helper takes now, so
 * rows wait here until the caller's watermark passes them, then go out
 * sorted (util/held.h).  Invariant: every row handed on is no older than the last one
 * handed on (a row that would be is dropped, counted in LATE): the table's
 * order is the writer's rule.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ift-discover.h"
#include "ift-gpu.h"
#include "util/fds.h"
#include "util/held.h"

extern char **environ;

/* How long the helper has to write its last records once told to stop */
#define END_WAIT_MS	2000
#define END_POLL_MS	50

struct ift_gpu {
	pid_t pid;
	int fd;
	struct ift_gpu_rec part;	/* a record read in pieces */
	size_t got;
	struct ift_held held;		/* rows waiting for the watermark, of
					   struct ift_gpu_rec */
	char status[IFT_GPU_TEXT_MAX], source[16];
	char **devices;
	unsigned ndevices;
};

/* Time, then GPU: rows of one time keep their GPU order */
static int by_ts(const void *a, const void *b)
{
	const struct ift_gpu_rec *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

int ift_gpu_start(int self_fd, const char *lib, const struct ift_creds *as,
		  struct ift_gpu **out)
{
	struct ift_gpu *g = calloc(1, sizeof(*g));
	char period[16], *argv[8];
	int p[2], argc = 0;
	pid_t pid;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->held = (struct ift_held){ .size = sizeof(struct ift_gpu_rec), .cmp = by_ts,
				     .ts_off = offsetof(struct ift_gpu_rec, ts_ns) };
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(g);
		return -errno;
	}
	snprintf(period, sizeof(period), "%u", IFT_GPU_PERIOD_MS);
	argv[argc++] = (char *)"ingero-ftrace";
	argv[argc++] = (char *)"__nvml-helper";
	argv[argc++] = period;
	if (lib)
		argv[argc++] = (char *)lib;
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		free(g);
		return -errno;
	}
	if (!pid) {
		/* only async-signal-safe calls from here to the exec: the
		   helper's records go to its fd 3, nothing comes in */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int exe = fcntl(self_fd, F_DUPFD_CLOEXEC, 4), wr = fcntl(p[1], F_DUPFD, 4);

		setpgid(0, 0);
		/* the write end, without close-on-exec, onto 3 from out of its way */
		if (null < 0 || exe < 0 || wr < 0 || dup2(null, 0) < 0 || dup2(wr, 3) < 0)
			_exit(127);
		/* nothing else of the recorder's (tracefs, perf events) reaches
		   the user's process: the exec closes it (an ELF runs from a
		   close-on-exec descriptor) */
		ift_fds_above2(3, true);
		if (as && ift_creds_become(as) < 0)
			_exit(127);
		fexecve(exe, argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	g->pid = pid;
	g->fd = p[0];
	*out = g;
	return 0;
}

int ift_gpu_fd(const struct ift_gpu *g)
{
	return g ? g->fd : -1;
}

static int note_device(struct ift_gpu *g, const struct ift_gpu_rec *r)
{
	char **v, *s;

	if (r->gpu >= 1024)
		return 0;	/* not a device index */
	if (r->gpu >= g->ndevices) {
		if (!(v = realloc(g->devices, (r->gpu + 1) * sizeof(*v))))
			return -ENOMEM;
		memset(v + g->ndevices, 0, (r->gpu + 1 - g->ndevices) * sizeof(*v));
		g->devices = v;
		g->ndevices = r->gpu + 1;
	}
	if (!(s = strndup(r->text, sizeof(r->text) - 1)))
		return -ENOMEM;
	free(g->devices[r->gpu]);
	g->devices[r->gpu] = s;
	return 0;
}

/* One whole record from the helper. */
static int take(struct ift_gpu *g, struct ift_gpu_rec *r)
{
	r->metric[sizeof(r->metric) - 1] = 0;
	r->text[sizeof(r->text) - 1] = 0;
	switch (r->kind) {
	case IFT_GPU_REC_ROW:
		return ift_held_add(&g->held, r);
	case IFT_GPU_REC_DEVICE:
		return note_device(g, r);
	case IFT_GPU_REC_STATUS:
		snprintf(g->status, sizeof(g->status), "%s", r->text);
		return 0;
	case IFT_GPU_REC_SOURCE:
		snprintf(g->source, sizeof(g->source), "%.15s", r->text);
		return 0;
	default:
		return 0;	/* a kind this recorder does not know */
	}
}

/* Reads what the pipe holds; at its end, closes it. */
static int drain(struct ift_gpu *g)
{
	while (g->fd >= 0) {
		ssize_t n = read(g->fd, (char *)&g->part + g->got, sizeof(g->part) - g->got);
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			close(g->fd);
			g->fd = -1;
			return n < 0 ? -errno : 0;
		}
		g->got += (size_t)n;
		if (g->got < sizeof(g->part))
			continue;
		g->got = 0;
		if ((ret = take(g, &g->part)) < 0)
			return ret;
	}
	return 0;
}


struct emit_to {
	ift_gpu_row_fn fn;
	void *ctx;
};

static int emit_row(void *ctx, const void *row)
{
	const struct emit_to *e = ctx;

	return e->fn(e->ctx, row);
}

int ift_gpu_read(struct ift_gpu *g, uint64_t below_ns, ift_gpu_row_fn emit, void *ctx)
{
	struct emit_to e = { emit, ctx };
	int ret = drain(g);

	return ret < 0 ? ret : ift_held_release(&g->held, below_ns, emit_row, &e);
}

void ift_gpu_status(const struct ift_gpu *g, struct ift_gpu_status *st)
{
	memset(st, 0, sizeof(*st));
	if (!g)
		return;
	st->status = g->status[0] ? g->status : NULL;
	st->source = g->source[0] ? g->source : NULL;
	st->ndevices = g->ndevices;
	st->devices = (const char *const *)g->devices;
	st->late = g->held.late;
}

int ift_gpu_end(struct ift_gpu *g)
{
	int ret = 0, st = 0;

	if (!g || g->pid <= 0)
		return 0;
	/* a recording shorter than the helper's start: its word on NVML (no
	   library, no driver, the devices) first, for as long as END_WAIT_MS */
	for (int waited = 0; !g->status[0] && g->fd >= 0 && waited < END_WAIT_MS;
	     waited += END_POLL_MS) {
		struct pollfd p = { .fd = g->fd, .events = POLLIN };

		if (poll(&p, 1, END_POLL_MS) > 0 && (ret = drain(g)) < 0)
			return ret;
	}
	kill(g->pid, SIGTERM);
	/* its last records (the driver's periods that ended meanwhile), for
	   as long as it takes to write them; one stuck in the driver is killed */
	for (int waited = 0; ret >= 0 && g->fd >= 0; waited += END_POLL_MS) {
		struct pollfd p = { .fd = g->fd, .events = POLLIN };

		if (waited >= END_WAIT_MS) {
			kill(g->pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, END_POLL_MS) > 0)
			ret = drain(g);
	}
	if (waitpid(g->pid, &st, 0) == g->pid && !g->status[0]) {
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)
			snprintf(g->status, sizeof(g->status), "the helper had not loaded NVML "
				 "%d ms after the recording ended", END_WAIT_MS);
		else
			snprintf(g->status, sizeof(g->status), "the helper ended without a word "
				 "(%s %d)", WIFEXITED(st) ? "exit" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	g->pid = 0;
	return ret;
}

void ift_gpu_free(struct ift_gpu *g)
{
	if (!g)
		return;
	if (g->pid > 0) {
		kill(g->pid, SIGKILL);
		waitpid(g->pid, NULL, 0);
	}
	if (g->fd >= 0)
		close(g->fd);
	for (unsigned i = 0; i < g->ndevices; i++)
		free(g->devices[i]);
	free(g->devices);
	ift_held_free(&g->held);
	free(g);
}
