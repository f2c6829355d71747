// SPDX-License-Identifier: MIT
/* ingero-ftrace record: trace a command's CUDA calls and host scheduling. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ift-discover.h"
#include "ift-probe.h"
#include "ift-record.h"

extern char **environ;

static const char usage[] =
	"record [-o FILE] [--cuda-lib PATH]... [-p PID]... [-a] [--duration SECONDS]\n"
	"       [--rotate SIZE|DURATION] [--max-size SIZE]\n"
	"       [--keep-last DURATION [--trigger OP>DURATION] [--after DURATION]]\n"
	"       [--buffer-kb N] [--reader=splice|mmap|auto] [--no-host]\n"
	"       [--page-allocs=rows|count] [--profile=HZ|off]\n"
	"       [--nvml-lib PATH|--no-nvml]\n"
	"       [--stack[=OP,...]] [--stack-size BYTES]\n"
	"       [--stack-period N] [--py-stack[=OP,...]] [--isolate|--no-isolate]\n"
	"       [--as-root] [-v|-q]\n"
	"       -- CMD [ARGS...]";

static volatile sig_atomic_t stop_signal, stop_count;
static volatile pid_t child_pid;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_signal = sig;
	stop_count++;
	/*
	 * A terminal's Ctrl-C reaches the whole foreground group, the child too;
	 * a signal sent to us alone (kill, a job scheduler) is passed on.
	 */
	if (child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE))
		kill(child_pid, sig);
}

/*
 * SIGUSR1: --keep-last's snapshot, taken by the main loop, of the window
 * that ends when it was asked for (CLOCK_MONOTONIC, which clock_gettime
 * reads async-signal-safely), however late the loop gets to it.
 */
static _Atomic uint64_t snapshot_asked_ns;

static void on_snapshot(int sig)
{
	struct timespec ts;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	atomic_store(&snapshot_asked_ns, (uint64_t)ts.tv_sec * 1000000000ULL +
		     (uint64_t)ts.tv_nsec);
}

static void set_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_snapshot;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* a child that died before its exec is an error to report, not our death */
	signal(SIGPIPE, SIG_IGN);
}

/*
 * Lets the child exec unless a stop signal came first, even one not yet
 * handled: with them blocked, none can slip in between the look and the
 * release.  1 when released, 0 when stopped, or -errno of a failed exec.
 */
static int release_unless_stopped(struct ift_child *c)
{
	sigset_t block, old, pending;
	int ret = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigpending(&pending);
	if (!stop_count && !sigismember(&pending, SIGINT) &&
	    !sigismember(&pending, SIGTERM) && !sigismember(&pending, SIGHUP)) {
		ret = ift_child_release(c);
		if (!ret)
			ret = 1;
	}
	/* what came meanwhile is handled now, and passed on to the command */
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static void print_status(struct ift_recorder *r, bool final)
{
	struct ift_record_status st;
	char a[32], b[32], c[32];

	ift_recorder_status(r, &st);
	fprintf(stderr, "\r%s  %.1f s  %s events  %s lost  %s%s",
		final ? "" : "recording", (double)st.elapsed_ns / 1e9,
		ift_fmt_count(a, sizeof(a), st.events), ift_fmt_count(b, sizeof(b), st.lost),
		ift_fmt_bytes(c, sizeof(c), (double)st.bytes), final ? "\n" : "   ");
}

/* WHO's CPU time in RU, and its share of one CPU over ELAPSED_NS */
static void print_cpu(const char *who, const struct rusage *ru, uint64_t elapsed_ns)
{
	double user = (double)ru->ru_utime.tv_sec * 1e3 + (double)ru->ru_utime.tv_usec / 1e3;
	double sys = (double)ru->ru_stime.tv_sec * 1e3 + (double)ru->ru_stime.tv_usec / 1e3;

	fprintf(stderr, "  %-12s %.0f ms of CPU (user %.0f, system %.0f), %.1f%% of one CPU "
		"over the recording\n", who, user + sys, user, sys,
		elapsed_ns ? (user + sys) * 1e8 / (double)elapsed_ns : 0.0);
}

static void print_summary(struct ift_recorder *r, bool command, uint64_t run_keep_ns)
{
	struct ift_record_status st;
	unsigned pieces;
	const char *path = ift_recorder_path(r, &pieces);
	struct stat sb;
	struct rusage ru;
	char a[32], b[32], c[32];

	ift_recorder_status(r, &st);
	if (!pieces && stat(path, &sb) == 0)
		st.bytes = (uint64_t)sb.st_size;
	fprintf(stderr, "recorded %.2f s: %s kernel events, %s lost\n",
		(double)st.elapsed_ns / 1e9, ift_fmt_count(a, sizeof(a), st.events),
		ift_fmt_count(b, sizeof(b), st.lost));
	for (unsigned t = 1; t < IFT_T_NR; t++)
		if (st.rows[t])
			fprintf(stderr, "  %-12s %s\n", ift_table_def(t)->name,
				ift_fmt_count(a, sizeof(a), st.rows[t]));
	/* the GPUs, or why they were not measured: said once */
	if (st.gpu_status && !strncmp(st.gpu_status, "ok ", 3))
		fprintf(stderr, "  %-12s %s samples from %u GPU%s (NVML)\n", "gpu",
			ift_fmt_count(a, sizeof(a), st.rows[IFT_T_GPU]), st.gpu_devices,
			st.gpu_devices == 1 ? "" : "s");
	else if (st.gpu_status)
		fprintf(stderr, "  %-12s not measured: %s\n", "gpu", st.gpu_status);
	/* all of the recorder's threads; the traced command is not among them */
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		print_cpu("recorder", &ru, st.elapsed_ns);
	/* the command, and what it waited for: its workers, once it reaped them */
	if (command && getrusage(RUSAGE_CHILDREN, &ru) == 0)
		print_cpu("command", &ru, st.elapsed_ns);
	/* the stack thread's reads and the unwinding are the recorder's CPU */
	if (st.prof_samples)
		fprintf(stderr, "  %-12s %s stacks sampled (%s dropped), %.1f us each to unwind, "
			"%.1f us to read its Python frames\n", "profile",
			ift_fmt_count(a, sizeof(a), st.prof_samples),
			ift_fmt_count(b, sizeof(b), st.prof_dropped),
			(double)st.stack_unwind_ns / 1e3 /
			(double)(st.prof_samples + st.stack_samples),
			(double)st.py_read_ns / 1e3 / (double)(st.prof_samples + st.py_read));
	if (st.stack_samples || st.stack_lost)
		fprintf(stderr, "  %-12s %s call sites from %s stacks (%s lost), "
			"%.1f us each to unwind\n", "stacks",
			ift_fmt_count(a, sizeof(a), st.stack_sites),
			ift_fmt_count(b, sizeof(b), st.stack_samples),
			ift_fmt_count(c, sizeof(c), st.stack_lost),
			st.stack_samples ? (double)st.stack_unwind_ns / 1e3 /
			(double)st.stack_samples : 0.0);
	if (st.py_in_flight || st.py_late || st.py_read)
		fprintf(stderr, "  %-12s %s calls with their Python frames, %s read too late "
			"(after the call returned, dropped), %.1f us each to read, "
			"read %.0f us after the call began (median; 99%%: %.0f us)\n", "python",
			ift_fmt_count(a, sizeof(a), st.py_in_flight),
			ift_fmt_count(b, sizeof(b), st.py_late),
			st.py_read ? (double)st.py_read_ns / 1e3 / (double)st.py_read : 0.0,
			(double)st.py_lag_p50_ns / 1e3, (double)st.py_lag_p99_ns / 1e3);
	if (st.stack_lost)
		fprintf(stderr, "  stacks came faster than they could be copied out: "
			"--stack-period N keeps one call in N, --stack-size a smaller copy\n");
	if (st.late)
		fprintf(stderr, "  %s events came late (a writer held off its CPU), "
			"each kept, moved forward by at most %.3f ms\n",
			ift_fmt_count(a, sizeof(a), st.late), (double)st.late_max_ns / 1e6);
	if (st.nest_closed)
		fprintf(stderr, "  %s calls closed unreturned: a thread had 256 open "
			"(returns lost), the oldest half went\n",
			ift_fmt_count(a, sizeof(a), st.nest_closed));
	if (run_keep_ns) {
		const char *last;
		int err;
		unsigned n = ift_recorder_snapshots(r, &last, &err);

		fprintf(stderr, "kept the last %.1f s: %u snapshot%s%s%s%s\n",
			(double)run_keep_ns / 1e9, n, n == 1 ? "" : "s", n ? ", the last '" : "",
			n ? last : "", n ? "'" : " (SIGUSR1 or ingero-ftrace snapshot asks for one)");
	} else if (pieces > 1)
		fprintf(stderr, "wrote %u pieces, the last '%s' (%s in all); analyze them as one "
			"with: ingero-ftrace report -i PIECE... (each), or -i their directory\n",
			pieces, path, ift_fmt_bytes(b, sizeof(b), (double)st.bytes));
	else
		fprintf(stderr, "wrote '%s' (%s); analyze it with: ingero-ftrace report -i %s\n",
			path, ift_fmt_bytes(b, sizeof(b), (double)st.bytes), path);
}

/*
 * What killed runs left that could not be removed yet (a process still holds
 * the instance open): no reason to stop, since names are unique per run, but
 * worth saying; a later record or check --cleanup removes it once it is free.
 */
static void warn_leftovers(void)
{
	struct ift_leftover v[8];
	char holders[256];
	int n = ift_probe_find_leftovers(v, sizeof(v) / sizeof(v[0]));

	for (int i = 0; i < n && i < (int)(sizeof(v) / sizeof(v[0])); i++) {
		ift_leftover_holders_str(&v[i], holders, sizeof(holders));
		warning("cannot remove %s %s of dead run %d yet%s%s: check --cleanup "
			"removes it once free", v[i].kind, v[i].name, (int)v[i].owner,
			v[i].nholders ? ", held open by " : "", holders);
	}
}

static bool on_path(const char *cmd, char *const *envp)
{
	const char *path = NULL;
	char buf[4096];

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	for (int i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			path = envp[i] + 5;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/*
 * One run of `record', carried through its steps.  Each step returns
 * STEP_GO to go on, STEP_STOPPED when a signal came during set-up, or
 * STEP_DONE with exit_code set; record_release() undoes what any of them did.
 */
enum { STEP_GO, STEP_STOPPED, STEP_DONE };

struct record_run {
	struct ift_record_opts opts;
	const char **libs, **stack_ops, **py_ops;	/* opts' arrays, ours to free */
	bool stack_all;			/* a bare --stack: every op */
	pid_t *pids;
	double duration;
	unsigned snaps;		/* --keep-last: snapshots said */
	int snap_err;
	bool as_root;
	bool isolate_given;		/* --isolate or --no-isolate */
	bool sudo;
	struct ift_creds user;		/* under sudo: who ran it */
	bool tty;			/* a status line on stderr */
	struct ift_recorder *r;
	struct ift_child *child;
	bool released;			/* the command runs */
	int status;			/* its wait status, -1 while none */
	int exit_code;
};

enum { O_CUDA_LIB = 256, O_DURATION, O_BUFFER, O_NO_HOST, O_AS_ROOT,
       O_USER_FILTER, O_STACK, O_STACK_SIZE, O_STACK_PERIOD, O_PY_STACK, O_ISOLATE,
       O_NO_ISOLATE, O_PAGE_ALLOCS, O_READER, O_PROFILE, O_NVML_LIB, O_NO_NVML,
       O_ROTATE, O_MAX_SIZE, O_KEEP_LAST, O_TRIGGER, O_AFTER };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "cuda-lib", required_argument, NULL, O_CUDA_LIB },
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "rotate", required_argument, NULL, O_ROTATE },
	{ "max-size", required_argument, NULL, O_MAX_SIZE },
	{ "keep-last", required_argument, NULL, O_KEEP_LAST },
	{ "trigger", required_argument, NULL, O_TRIGGER },
	{ "after", required_argument, NULL, O_AFTER },
	{ "buffer-kb", required_argument, NULL, O_BUFFER },
	{ "reader", required_argument, NULL, O_READER },
	{ "no-host", no_argument, NULL, O_NO_HOST },
	{ "page-allocs", required_argument, NULL, O_PAGE_ALLOCS },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "nvml-lib", required_argument, NULL, O_NVML_LIB },
	{ "no-nvml", no_argument, NULL, O_NO_NVML },
	{ "as-root", no_argument, NULL, O_AS_ROOT },
	{ "stack", optional_argument, NULL, O_STACK },
	{ "stack-size", required_argument, NULL, O_STACK_SIZE },
	{ "stack-period", required_argument, NULL, O_STACK_PERIOD },
	{ "py-stack", optional_argument, NULL, O_PY_STACK },
	{ "isolate", no_argument, NULL, O_ISOLATE },
	{ "no-isolate", no_argument, NULL, O_NO_ISOLATE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	/* hidden: force the user-space task filter, for tests */
	{ "user-filter", no_argument, NULL, O_USER_FILTER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* STEP_DONE with EXIT_CODE: what a step returns to end the run */
static int record_done(struct record_run *run, int exit_code)
{
	run->exit_code = exit_code;
	return STEP_DONE;
}

/* ARG as a number in [MIN, MAX] into *OUT, or a usage error: bad WHAT 'ARG'HINT */
static int option_unsigned(struct record_run *run, const char *arg, unsigned long min,
			   unsigned long max, unsigned *out, const char *what,
			   const char *hint)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || v < min || v > max)
		return record_done(run, usage_error(usage, "bad %s '%s'%s", what, arg, hint));
	*out = (unsigned)v;
	return STEP_GO;
}

/* --stack=a,b --stack=c: the union into *V (*N of them); OPS is split in place */
static int add_ops(struct record_run *run, const char ***v, size_t *n, char *ops)
{
	for (char *save = NULL, *op = strtok_r(ops, ",", &save);
	     op; op = strtok_r(NULL, ",", &save)) {
		const char **t = realloc(*v, (*n + 1) * sizeof(*t));

		if (!t)
			return error("out of memory"), record_done(run, EXIT_RUNTIME);
		*v = t;
		t[(*n)++] = op;
	}
	return STEP_GO;
}

static int add_pid(struct record_run *run, const char *arg)
{
	pid_t v, *pids;

	if (cli_parse_pid(arg, &v) < 0)
		return record_done(run, usage_error(usage, "bad pid '%s'", arg));
	pids = realloc(run->pids, (run->opts.npids + 1) * sizeof(*pids));
	if (!pids)
		return error("out of memory"), record_done(run, EXIT_RUNTIME);
	run->pids = pids;
	run->pids[run->opts.npids++] = v;
	return STEP_GO;
}

/* --rotate, --max-size, --keep-last, --after, --trigger: STEP_GO, or
   STEP_DONE after a usage error. */
static int pieces_option(struct record_run *run, int c)
{
	struct ift_record_opts *o = &run->opts;

	switch (c) {
	case O_ROTATE:
		/* a size has a size's unit (100M); a time a time's (10m, 1h) */
		if (cli_parse_size(optarg, &o->rotate_bytes) == 0 && o->rotate_bytes >= 65536)
			return STEP_GO;
		o->rotate_bytes = 0;
		if (strpbrk(optarg, "smhun") && cli_parse_duration(optarg, &o->rotate_ns) == 0 &&
		    o->rotate_ns >= 1000000000ULL)
			return STEP_GO;
		return record_done(run, usage_error(usage, "bad --rotate '%s': a size such as "
						    "100M (64K or more) or a time such as 10m "
						    "(1s or more)", optarg));
	case O_KEEP_LAST:
	case O_AFTER:
		if (cli_parse_duration(optarg, c == O_AFTER ? &o->after_ns : &o->keep_ns) < 0 ||
		    (c == O_KEEP_LAST && o->keep_ns < 1000000000ULL))
			return record_done(run, usage_error(usage, "bad %s '%s': a time such as 5s "
							    "or 10m%s", c == O_AFTER ? "--after" :
							    "--keep-last", optarg,
							    c == O_AFTER ? "" : ", 1s or more"));
		return STEP_GO;
	case O_TRIGGER: {
		char *gt = strchr(optarg, '>');

		if (!gt || gt == optarg || cli_parse_duration(gt + 1, &o->trigger_ns) < 0)
			return record_done(run, usage_error(usage, "bad --trigger '%s': OP>DURATION, "
							    "such as cudaStreamSynchronize>200ms",
							    optarg));
		*gt = 0;
		/* a name the recorder never probes would never fire */
		if (!ift_func_find(optarg))
			return record_done(run, usage_error(usage, "bad --trigger: '%s' is not a "
							    "traced function (see `ingero-ftrace "
							    "discover')", optarg));
		o->trigger_op = optarg;
		return STEP_GO;
	}
	case O_MAX_SIZE:
		if (cli_parse_size(optarg, &o->max_bytes) < 0 || o->max_bytes < 65536)
			return record_done(run, usage_error(usage, "bad --max-size '%s': a size "
							    "such as 500M or 20G, 64K or more",
							    optarg));
		return STEP_GO;
	}
	return STEP_GO;
}

/* One option C of getopt_long(), its argument in optarg. */
static int record_option(struct record_run *run, int c)
{
	struct ift_record_opts *o = &run->opts;
	char *end;

	switch (c) {
	case 'o':
		o->output = optarg;
		break;
	case O_CUDA_LIB: {
		const char **v = realloc(run->libs, (o->ncuda_libs + 1) * sizeof(*v));

		if (!v)
			return error("out of memory"), record_done(run, EXIT_RUNTIME);
		run->libs = v;
		run->libs[o->ncuda_libs++] = optarg;
		break;
	}
	case 'p':
		return add_pid(run, optarg);
	case 'a':
		o->all = true;
		break;
	case O_DURATION:
		run->duration = strtod(optarg, &end);
		if (*end || run->duration <= 0)
			return record_done(run, usage_error(usage, "bad duration '%s'", optarg));
		break;
	case O_ROTATE:
	case O_MAX_SIZE:
	case O_KEEP_LAST:
	case O_AFTER:
	case O_TRIGGER:
		return pieces_option(run, c);
	case O_BUFFER:
		return option_unsigned(run, optarg, 1, 4UL << 20, &o->buffer_kb,
				       "buffer size", "");
	case O_READER:
		if (!strcmp(optarg, "auto"))
			o->reader = IFT_READER_AUTO;
		else if (!strcmp(optarg, "splice"))
			o->reader = IFT_READER_SPLICE;
		else if (!strcmp(optarg, "mmap"))
			o->reader = IFT_READER_MMAP;
		else
			return record_done(run, usage_error(usage, "bad --reader '%s' "
							    "(splice, mmap or auto)", optarg));
		break;
	case O_NO_HOST:
		o->no_host = true;
		break;
	case O_PAGE_ALLOCS:
		if (strcmp(optarg, "rows") && strcmp(optarg, "count"))
			return record_done(run, usage_error(usage, "bad --page-allocs '%s' "
							    "(rows or count)", optarg));
		o->page_count = !strcmp(optarg, "count");
		break;
	case O_PROFILE:
		if (!strcmp(optarg, "off")) {
			o->profile_hz = 0;
			break;
		}
		/* perf's default cap on a sampling rate is 100,000 a CPU; a
		   profile of a thousand a task is already ten times perf's */
		return option_unsigned(run, optarg, 1, IFT_PROFILE_MAX_HZ, &o->profile_hz,
				       "--profile", " (HZ from 1 to 1000, or off)");
	case O_NVML_LIB:
		o->nvml_lib = optarg;
		break;
	case O_NO_NVML:
		o->no_nvml = true;
		break;
	case O_AS_ROOT:
		run->as_root = true;
		break;
	case O_USER_FILTER:
		o->user_filter = true;
		break;
	case O_STACK:
		o->stack = true;
		if (!optarg)
			run->stack_all = true;
		return optarg ? add_ops(run, &run->stack_ops, &o->nstack_ops, optarg) : STEP_GO;
	case O_PY_STACK:
		o->stack = o->py_stack = true;
		return optarg ? add_ops(run, &run->py_ops, &o->npy_ops, optarg) : STEP_GO;
	case O_STACK_SIZE:
		return option_unsigned(run, optarg, 64, 65528, &o->stack_bytes,
				       "stack size", " (64..65528 bytes)");
	case O_STACK_PERIOD:
		return option_unsigned(run, optarg, 1, 1000000000UL, &o->stack_period,
				       "stack period", "");
	case O_ISOLATE:
	case O_NO_ISOLATE:
		o->isolate = c == O_ISOLATE;
		run->isolate_given = true;
		break;
	case 'v':
		verbose++;
		break;
	case 'q':
		verbose--;
		break;
	}
	return STEP_GO;
}

/* The options, then what they must make sense together. */
static int record_parse(struct record_run *run, int argc, char **argv)
{
	struct ift_record_opts *o = &run->opts;
	struct cli_options co = {
		.usage = usage, .shortopts = "+o:p:avqh", .longopts = longopts,
		.max_args = CLI_ARGS_ANY,
	};
	int c, step;

	while ((c = cli_option_next(&co, argc, argv)) > 0)
		if ((step = record_option(run, c)) != STEP_GO)
			return step;
	if (c < 0)
		return record_done(run, co.status);
	o->cuda_libs = run->libs;
	/*
	 * --py-stack=OP takes OP's stack too: the ops with stacks are those of
	 * --stack=... and --py-stack=..., every op with a bare --stack or when
	 * neither names any.
	 */
	if (run->stack_all || !o->npy_ops) {
		o->nstack_ops = run->stack_all ? 0 : o->nstack_ops;
	} else {
		for (size_t i = 0; i < o->npy_ops; i++) {
			const char **t = realloc(run->stack_ops, (o->nstack_ops + 1) * sizeof(*t));

			if (!t)
				return error("out of memory"), record_done(run, EXIT_RUNTIME);
			run->stack_ops = t;
			t[o->nstack_ops++] = run->py_ops[i];
		}
	}
	o->stack_ops = run->stack_ops;
	o->py_ops = run->py_ops;
	o->pids = run->pids;
	if (run->isolate_given && o->isolate && o->all)
		return record_done(run, usage_error(usage, "--isolate goes with a command "
						    "or -p: -a traces every process"));
	/*
	 * Isolated unless told otherwise: a bystander's call costs it nothing
	 * instead of a trap, a traced call about what it costs through tracefs
	 * (contrib/bench/overhead.sh, bystander.sh; docs/benchmarks.md).
	 */
	if (!run->isolate_given)
		o->isolate = !o->all;
	if ((o->stack_bytes || o->stack_period) && !o->stack)
		return record_done(run, usage_error(usage, "--stack-size and "
						    "--stack-period go with --stack"));
	if (o->page_count && o->no_host)
		return record_done(run, usage_error(usage, "--page-allocs=count counts host "
						    "events: not with --no-host"));
	if ((o->trigger_op || o->after_ns) && !o->keep_ns)
		return record_done(run, usage_error(usage, "--trigger and --after go with "
						    "--keep-last"));
	if (o->keep_ns && (o->rotate_bytes || o->rotate_ns))
		return record_done(run, usage_error(usage, "--keep-last keeps its own pieces: "
						    "not with --rotate"));
	if (optind < argc)
		o->argv = argv + optind;
	o->envp = environ;
	if (!o->argv && !o->npids && !o->all)
		return record_done(run, usage_error(usage, "nothing to trace: give a "
						    "command after --, -p PID or -a"));
	return STEP_GO;
}

/* What to trace exists, and under sudo whom the command and file belong to. */
static int record_check(struct record_run *run)
{
	struct ift_record_opts *o = &run->opts;

	for (size_t i = 0; i < o->npids; i++)
		if (kill(run->pids[i], 0) < 0 && errno == ESRCH)
			return error("cannot trace pid %d: no such process", run->pids[i]),
			       record_done(run, EXIT_RUNTIME);
	if (o->argv && !on_path(o->argv[0], environ)) {
		error("cannot run '%s': command not found", o->argv[0]);
		return record_done(run, 127);
	}
	/* under sudo, the command and the file belong to the user who ran it */
	if (!run->as_root) {
		int is = cli_sudo_user(&run->user);

		if (is < 0)
			return STEP_DONE;
		run->sudo = is > 0;
	}
	if (run->sudo) {
		o->file_uid = run->user.uid;
		o->file_gid = run->user.gid;
		o->run_as = &run->user;
	}
	run->tty = run->tty && verbose >= 0;
	return STEP_GO;
}

/* Says, as check would, what this recording does without and what it probes. */
static void record_tell_plan(struct record_run *run)
{
	const struct ift_libset *ls = ift_recorder_libs(run->r);

	if (verbose > 0)
		for (size_t i = 0; i < ls->n; i++)
			fprintf(stderr, "%s: probing %zu functions in %s (%s)\n", progname,
				ls->v[i].nsyms, ls->v[i].path, ls->v[i].found_by);
	if (verbose >= 0) {
		const struct ift_kfeature *f;
		char what[480];

		/* an older kernel: what this recording does without, in check's words */
		for (size_t i = 0; (f = ift_recorder_without(run->r, i)); i++) {
			ift_kfeature_str(f, false, what, sizeof(what));
			warning("%s", what);
		}
		warn_leftovers();
	}
	if (!ls->n && verbose >= 0)
		warning("no CUDA library found: recording host events only (use --cuda-lib PATH)");
}

/* The instance, the probes and the file, tracing still off. */
static int record_setup(struct record_run *run)
{
	int ret;

	set_signals();
	run->opts.stop = &stop_count;
	ret = ift_recorder_create(&run->opts, &run->r);
	if (stop_count)
		return STEP_STOPPED;	/* before the command ran: nothing to wait for */
	if (ret < 0) {
		if ((ret == -EACCES || ret == -EPERM) && run->sudo)
			error("cannot %s: %s (the trace is written with the permissions of "
			      "uid %u, who ran sudo)", ift_recorder_error(run->r),
			      ift_strerror(ret), (unsigned)run->user.uid);
		else if (ret == -EACCES || ret == -EPERM)
			error("cannot %s: %s (recording needs root: try sudo)",
			      ift_recorder_error(run->r), ift_strerror(ret));
		else
			error("cannot %s: %s", ift_recorder_error(run->r), ift_strerror(ret));
		return STEP_DONE;
	}
	record_tell_plan(run);
	return STEP_GO;
}

/* The command forked and traced, tracing on, and only then its exec. */
static int record_launch(struct record_run *run)
{
	char *const *argv = run->opts.argv;
	int ret;

	if (argv) {
		pid_t pid = ift_child_spawn(argv, run->sudo ? &run->user : NULL, &run->child);

		if (pid < 0) {
			error("cannot start '%s': %s", argv[0], strerror((int)-pid));
			return STEP_DONE;
		}
		child_pid = pid;
		if ((ret = ift_recorder_add_pid(run->r, pid)) < 0) {
			error("cannot trace '%s': %s", argv[0], ift_strerror(ret));
			return STEP_DONE;
		}
	}
	if (stop_count)
		return STEP_STOPPED;
	if ((ret = ift_recorder_start(run->r)) < 0) {
		error("cannot %s: %s", ift_recorder_error(run->r), ift_strerror(ret));
		return STEP_DONE;
	}
	if (!run->child)
		return STEP_GO;
	ret = release_unless_stopped(run->child);
	if (ret == 0)
		return STEP_STOPPED;
	run->released = ret > 0;
	if (ret < 0) {
		error("cannot run '%s': %s", argv[0], strerror(-ret));
		waitpid(child_pid, &run->status, 0);
		child_pid = 0;
		run->status = -1;
		ift_recorder_finish(run->r, 127);
		return record_done(run, 127);
	}
	return STEP_GO;
}

/* --keep-last: each snapshot written, or why one could not be, said once. */
static void said_snapshots(struct record_run *run)
{
	const char *path;
	int err;
	unsigned n = ift_recorder_snapshots(run->r, &path, &err);

	if (err && err != run->snap_err)
		warning("cannot write snapshot %u to '%s': %s", n + 1, path, ift_strerror(err));
	run->snap_err = err;
	if (n != run->snaps && verbose >= 0)
		fprintf(stderr, "%s: snapshot %u: wrote '%s'\n", progname, n, path);
	run->snaps = n;
}

/* Records until the command ends, the time is up, or the user stops it. */
static void record_loop(struct record_run *run)
{
	uint64_t deadline = 0, next_status = 0;
	int ret;

	if (run->duration > 0)
		deadline = ift_now_ns() + (uint64_t)(run->duration * 1e9);
	for (;;) {
		uint64_t now, asked;

		if (child_pid > 0) {
			int st;
			pid_t w = waitpid(child_pid, &st, WNOHANG);

			if (w == child_pid) {
				run->status = st;
				child_pid = 0;
				break;
			}
		}
		/* without a command, Ctrl-C ends the recording; with one, the
		   command's end does, and a second Ctrl-C forces it */
		if (stop_count && (!run->opts.argv || stop_count > 1 || child_pid <= 0))
			break;
		now = ift_now_ns();
		if (deadline && now >= deadline)
			break;
		if ((asked = atomic_exchange(&snapshot_asked_ns, 0)))
			ift_recorder_snapshot(run->r, asked);
		said_snapshots(run);
		if (ift_recorder_full(run->r)) {
			char b[32];

			warning("the trace reached --max-size %s: recording stopped%s",
				ift_fmt_bytes(b, sizeof(b), (double)run->opts.max_bytes),
				child_pid > 0 ? ", the command goes on untraced" : "");
			break;
		}
		if ((ret = ift_recorder_poll(run->r, 10)) < 0) {
			error("cannot %s: %s", ift_recorder_error(run->r), ift_strerror(ret));
			break;
		}
		if (run->tty && now >= next_status) {
			next_status = now + 1000000000ULL;
			print_status(run->r, false);
		}
	}
	if (run->tty)
		fputc('\n', stderr);
}

/* The file finished; the exit code is the command's own. */
static int record_end(struct record_run *run)
{
	int status = run->status;
	int code = status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) :
		   128 + WTERMSIG(status);
	int ret;

	/* when --duration ran out first, the command goes on untraced */
	ret = ift_recorder_finish(run->r, code);
	if (ret < 0) {
		error("cannot %s: %s", ift_recorder_error(run->r), ift_strerror(ret));
		return STEP_DONE;
	}
	said_snapshots(run);
	if (verbose >= 0)
		print_summary(run->r, run->opts.argv != NULL, run->opts.keep_ns);
	return record_done(run, code >= 0 ? code : EXIT_OK);
}

/* Ctrl-C during set-up: undo it all, and the command never runs */
static void record_stopped(struct record_run *run)
{
	if (verbose >= 0)
		fprintf(stderr, "%s: %s before recording began%s\n", progname,
			strsignal(stop_signal),
			run->opts.argv ? ": the command did not run" : "");
	run->exit_code = 128 + stop_signal;
}

/* Safe after any step: what the steps made is undone or freed. */
static void record_release(struct record_run *run)
{
	/* the shell gets the status now; a helper disables the probes */
	ift_recorder_destroy_behind(run->r);
	ift_child_free(run->child);
	if (child_pid > 0 && run->status < 0 &&
	    (run->exit_code == EXIT_RUNTIME || !run->released)) {
		/* set-up failed or was stopped before the command ran: it must not
		   run untraced */
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
	}
	free(run->libs);
	free(run->pids);
	free(run->stack_ops);
	free(run->py_ops);
	free((void *)run->user.groups);
}

int cmd_record(int argc, char **argv)
{
	struct record_run run = {
		.opts = { .output = IFT_DEFAULT_TRACE,
			  .file_uid = (uid_t)-1, .file_gid = (gid_t)-1,
			  .profile_hz = IFT_PROFILE_DEFAULT_HZ },
		.status = -1,
		.exit_code = EXIT_RUNTIME,
		.tty = isatty(STDERR_FILENO),	/* -q may still come */
	};
	int step = record_parse(&run, argc, argv);

	if (step == STEP_GO)
		step = record_check(&run);
	if (step == STEP_GO)
		step = record_setup(&run);
	if (step == STEP_GO)
		step = record_launch(&run);
	if (step == STEP_GO) {
		record_loop(&run);
		step = record_end(&run);
	}
	if (step == STEP_STOPPED)
		record_stopped(&run);
	record_release(&run);
	return run.exit_code;
}
