// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace top: the last seconds of a trace, redrawn as it grows.  It
 * follows a recording in progress (FILE.part, read from where it was last
 * read: ift_trace_follow()) or replays a finished FILE, and each frame is
 * the report of one window (docs/top.md).  The pass of a frame starts one
 * window before it, so a frame costs what its own stretch of the trace
 * does, however long the recording has run.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-render.h"

static const char usage[] =
	"top [-i FILE] [--window DUR] [--interval DUR] [--at T] [--once]";

static const char help[] =
	"Follows a recording in progress (FILE.part while `record -o FILE' runs)\n"
	"or replays a finished FILE, and redraws every --interval (1s) what the\n"
	"last --window (10s) of it shows: each op's calls a second, p50 and p99,\n"
	"the CPUs' load, the GPUs' busy share, the most costly host cause and the\n"
	"feeders' time on CPU, in a run queue and blocked.\n\n"
	"  -i, --input FILE   the trace (default " IFT_DEFAULT_TRACE ")\n"
	"  --window DUR       the stretch each frame shows: 10s, 500ms, 2m\n"
	"  --interval DUR     time between frames; a replay moves on as much\n"
	"  --at T             the first frame ends T into the trace (an offset)\n"
	"  --once             print one frame (the last window, or --at's) and exit\n";

#define NS	1000000000ULL

struct top_args {
	const char *path;
	uint64_t window_ns, interval_ns, at_ns;
	bool has_at, once;
};

/* What is being shown: the trace, and how far it has grown. */
struct source {
	char name[4096];	/* as opened: PATH, or PATH.part */
	struct ift_trace *t;
	bool live;		/* a recording: followed until it is finished */
	uint64_t grew_at;	/* CLOCK_MONOTONIC of its last growth */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Sleeps NS, or less when a signal asks to stop. */
static void pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / NS), (long)(ns % NS) };

	if (!stop)
		nanosleep(&ts, NULL);
}

/*
 * NAME, or NAME.part when NAME is not there (a piece being written): into
 * S->t and S->name.  0, or a negative error (-ENOENT: neither is there).
 */
static int open_either(struct source *s, const char *name)
{
	int ret;

	snprintf(s->name, sizeof(s->name), "%s", name);
	ret = ift_trace_open(name, 0, &s->t);
	if (ret != -ENOENT)
		return ret;
	snprintf(s->name, sizeof(s->name), "%s%s", name, IFT_PART_SUFFIX);
	return ift_trace_open(s->name, 0, &s->t);
}

/*
 * The run of `record -o PATH --rotate': its newest piece followed while it
 * is written, or every piece joined and replayed once the run is finished.
 * 0, or a negative error (-ENOENT: no piece 1).
 */
static int open_run(struct source *s, const char *path)
{
	char (*names)[sizeof(s->name)] = NULL;
	unsigned n = 0;
	int ret;

	for (;; n++) {
		char (*more)[sizeof(s->name)] = realloc(names, (n + 1) * sizeof(*names));
		struct stat st;

		if (!more) {
			free(names);
			return -ENOMEM;
		}
		names = more;
		ift_trace_piece_path(path, n + 1, names[n], sizeof(names[n]));
		if (stat(names[n], &st) < 0)
			break;
	}
	/* names[n]: the piece after the last finished one, maybe being written */
	if ((ret = open_either(s, names[n])) == -ENOENT && n) {
		const char **paths = malloc(n * sizeof(*paths));
		size_t bad = 0;

		for (unsigned i = 0; paths && i < n; i++)
			paths[i] = names[i];
		ret = paths ? ift_trace_open_run(paths, n, &s->t, &bad) : -ENOMEM;
		/* the piece that failed to open, or the run */
		if (ret < 0 && bad < n)
			snprintf(s->name, sizeof(s->name), "%s", names[bad]);
		else
			snprintf(s->name, sizeof(s->name), "%s (%u pieces)", path, n);
		free(paths);
	}
	free(names);
	return ret;
}

/*
 * PATH when it exists (a finished trace, replayed), else PATH.part (a
 * recording, followed), else the pieces of a recording made with
 * --rotate.  Prints a one-line error and returns -1 when none opens.
 */
static int source_open(struct source *s, const char *path)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = open_either(s, path);
	if (ret == -ENOENT)
		ret = open_run(s, path);
	if (ret == -ENOENT) {
		error("cannot open '%s': %s (nor is a recording writing '%s%s' or its pieces)",
		      path, ift_strerror(ret), path, IFT_PART_SUFFIX);
		return -1;
	}
	if (ret < 0) {
		error("cannot open '%s': %s", s->name, ift_strerror(ret));
		return -1;
	}
	s->live = !ift_trace_recovery(s->t)->finished;
	s->grew_at = mono_ns();
	return 0;
}

/*
 * A finished piece of a run the recorder goes on with (record.next_piece):
 * the next piece, once its writer has made it (at once, but for the moment
 * between the two files), into S.  1 when S moved on, 0 when the piece was
 * the run's last, -1 after a one-line error.
 */
static int next_piece(struct source *s)
{
	char name[sizeof(s->name)], file[sizeof(s->name)];
	uint64_t n, until = mono_ns() + 10 * NS;
	size_t l = strlen(s->name);
	struct source next;
	int ret;

	if (!ift_trace_meta_u64(s->t, "record.next_piece", &n) || n > UINT_MAX)
		return 0;
	/* FILE.N.trace from this piece's FILE.M.trace[.part] */
	snprintf(file, sizeof(file), "%s", s->name);
	if (l > strlen(IFT_PART_SUFFIX) &&
	    !strcmp(file + l - strlen(IFT_PART_SUFFIX), IFT_PART_SUFFIX))
		file[l - strlen(IFT_PART_SUFFIX)] = 0;
	for (int i = 0; i < 2; i++) {		/* ".trace", then ".M" */
		char *dot = strrchr(file, '.');

		if (dot)
			*dot = 0;
	}
	ift_trace_piece_path(file, (unsigned)n, name, sizeof(name));
	next = *s;
	while ((ret = open_either(&next, name)) == -ENOENT && !stop && mono_ns() < until)
		pause_ns(NS / 20);
	if (ret < 0 || stop) {
		if (ret >= 0)
			ift_trace_close(next.t);
		return stop ? 0 : error("cannot open the recording's next piece '%s': %s", name,
					ift_strerror(ret));
	}
	ift_trace_close(s->t);
	*s = next;
	s->grew_at = mono_ns();
	return 1;
}

/*
 * How far into T its rows are complete: to its end once finished; while it
 * is recorded, to record.complete_ns (the recorder's last flush: a call
 * still open then, and every call after its entry, is not written yet).
 */
static uint64_t length_ns(const struct ift_trace *t)
{
	uint64_t lo, hi, complete;

	ift_analysis_bounds(t, &lo, &hi);
	if (!ift_trace_recovery(t)->finished &&
	    ift_trace_meta_u64(t, "record.complete_ns", &complete) && complete < hi)
		hi = complete > lo ? complete : lo;
	return hi - lo;
}

/*
 * One frame: the report of the window that ends END_NS into the trace
 * (UINT64_MAX: at its end), drawn on stdout.  Returns 0, or -1 after a
 * one-line error.
 */
static int frame(struct source *s, const struct top_args *a, uint64_t end_ns, bool clear)
{
	uint64_t len = length_ns(s->t), end = end_ns < len ? end_ns : len;
	struct ift_analyze_opts o = {
		.from_ns = end > a->window_ns ? end - a->window_ns : 0,
		.to_ns = end, .has_to = true,
		.lead_ns = a->window_ns, .has_lead = true,
	};
	const struct ift_recovery *rec = ift_trace_recovery(s->t);
	struct ift_top_view v = {
		.name = s->name, .length_ns = len, .width = cli_terminal_width(),
		.state = rec->finished ? (s->live ? "recorded" : "replaying") : "recording",
	};
	struct ift_top_frame fr;
	struct ift_report r;
	int ret;

	if (clear)
		fputs("\033[H\033[2J", stdout);
	if (!ift_trace_ts_max(s->t)) {
		printf("ingero-ftrace top  waiting for the first events of '%s'\n", s->name);
		return fflush(stdout) ? -1 : 0;
	}
	if (!rec->finished)
		v.stale_ns = mono_ns() - s->grew_at > 3 * NS ? mono_ns() - s->grew_at : 0;
	ret = ift_report_run(s->t, &o, NULL, &r);
	if (ret < 0)
		return error("cannot analyze '%s': %s", s->name, ift_strerror(ret));
	ift_top_frame(&r, &fr);
	ift_out_top(stdout, &fr, &v);
	ift_report_release(&r);
	return fflush(stdout) || ferror(stdout) ? -1 : 0;
}

/* A recording, drawn as it grows, until it is finished or a signal comes. */
static int follow(struct source *s, const struct top_args *a, bool clear)
{
	for (;;) {
		bool grew;
		int ret = ift_trace_follow(s->t, &grew);

		if (ret < 0)
			return error("cannot read on in '%s': %s", s->name, ift_strerror(ret));
		if (grew)
			s->grew_at = mono_ns();
		if (frame(s, a, UINT64_MAX, clear) < 0)
			return -1;
		if (ift_trace_recovery(s->t)->finished) {
			/* a run in pieces goes on in its next one */
			if ((ret = next_piece(s)) > 0)
				continue;
			if (ret < 0)
				return -1;
			printf("\nthe recording ended\n");
			return 0;
		}
		pause_ns(a->interval_ns);
		if (stop)
			return 0;
	}
}

/* A finished trace, window after window, an interval of it each interval. */
static int replay(struct source *s, const struct top_args *a, bool clear)
{
	uint64_t len = length_ns(s->t);
	uint64_t at = a->has_at ? a->at_ns : (a->window_ns < len ? a->window_ns : len);

	for (;;) {
		if (frame(s, a, at, clear) < 0)
			return -1;
		if (at >= len)
			return 0;
		pause_ns(a->interval_ns);
		if (stop)
			return 0;
		at = len - at > a->interval_ns ? at + a->interval_ns : len;
	}
}

static int top_option(struct top_args *a, int c)
{
	uint64_t *dur = c == 'w' ? &a->window_ns : c == 'n' ? &a->interval_ns : &a->at_ns;
	static const char *const names[] = { "--window", "--interval", "--at" };
	const char *name = names[c == 'w' ? 0 : c == 'n' ? 1 : 2];

	if (c == 'o') {
		a->once = true;
		return 0;
	}
	if (cli_parse_duration(optarg, dur) < 0)
		return usage_error(usage, "bad %s '%s': a duration such as 10s, 500ms or 2m",
				   name, optarg);
	if (c != 'a' && *dur < NS / 100)
		return usage_error(usage, "%s must be 10ms or more", name);
	a->has_at |= c == 'a';
	return 0;
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "window", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'n' },
		{ "at", required_argument, NULL, 'a' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top_args a = {
		.path = IFT_DEFAULT_TRACE, .window_ns = 10 * NS, .interval_ns = NS,
	};
	struct cli_options co = {
		.usage = usage, .help = help, .shortopts = "+i:h", .longopts = longopts,
		.input = &a.path,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct source s;
	bool clear;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0)
		if ((ret = top_option(&a, c)))
			return ret;
	if (c < 0)
		return co.status;
	if (source_open(&s, a.path) < 0)
		return EXIT_RUNTIME;
	/* no SA_RESTART: a signal ends the pause between frames */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clear = !a.once && isatty(STDOUT_FILENO);
	if (a.once)
		ret = frame(&s, &a, a.has_at ? a.at_ns : UINT64_MAX, false);
	else
		ret = s.live ? follow(&s, &a, clear) : replay(&s, &a, clear);
	ift_trace_close(s.t);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
