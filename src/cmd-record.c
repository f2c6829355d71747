// SPDX-License-Identifier: MIT
/* ingero-ftrace record: trace a command's CUDA calls and host scheduling. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ift-probe.h"
#include "ift-record.h"

extern char **environ;

static const char usage[] =
	"record [-o FILE] [--cuda-lib PATH]... [-p PID]... [-a] [--duration SECONDS]\n"
	"       [--buffer-kb N] [--no-host] [--stack[=OP,...]] [--stack-size BYTES]\n"
	"       [--stack-period N] [--as-root] [-v|-q] -- CMD [ARGS...]";

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

static void set_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
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

static void print_summary(struct ift_recorder *r, const char *path)
{
	struct ift_record_status st;
	struct stat sb;
	char a[32], b[32], c[32];

	ift_recorder_status(r, &st);
	if (stat(path, &sb) == 0)
		st.bytes = (uint64_t)sb.st_size;
	fprintf(stderr, "recorded %.2f s: %s kernel events, %s lost\n",
		(double)st.elapsed_ns / 1e9, ift_fmt_count(a, sizeof(a), st.events),
		ift_fmt_count(b, sizeof(b), st.lost));
	for (unsigned t = 1; t < IFT_T_NR; t++)
		if (st.rows[t])
			fprintf(stderr, "  %-12s %s\n", ift_table_def(t)->name,
				ift_fmt_count(a, sizeof(a), st.rows[t]));
	if (st.stack_samples || st.stack_lost)
		fprintf(stderr, "  %-12s %s call sites from %s stacks (%s lost), "
			"%.1f us each to unwind\n", "stacks",
			ift_fmt_count(a, sizeof(a), st.stack_sites),
			ift_fmt_count(b, sizeof(b), st.stack_samples),
			ift_fmt_count(c, sizeof(c), st.stack_lost),
			st.stack_samples ? (double)st.stack_unwind_ns / 1e3 /
			(double)st.stack_samples : 0.0);
	if (st.late)
		fprintf(stderr, "  %s events came late (a writer held off its CPU), "
			"each kept, moved forward by at most %.3f ms\n",
			ift_fmt_count(a, sizeof(a), st.late), (double)st.late_max_ns / 1e6);
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

int cmd_record(int argc, char **argv)
{
	enum { O_CUDA_LIB = 256, O_DURATION, O_BUFFER, O_NO_HOST, O_AS_ROOT,
	       O_USER_FILTER, O_STACK, O_STACK_SIZE, O_STACK_PERIOD };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "cuda-lib", required_argument, NULL, O_CUDA_LIB },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "buffer-kb", required_argument, NULL, O_BUFFER },
		{ "no-host", no_argument, NULL, O_NO_HOST },
		{ "as-root", no_argument, NULL, O_AS_ROOT },
		{ "stack", optional_argument, NULL, O_STACK },
		{ "stack-size", required_argument, NULL, O_STACK_SIZE },
		{ "stack-period", required_argument, NULL, O_STACK_PERIOD },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		/* hidden: force the user-space task filter, for tests */
		{ "user-filter", no_argument, NULL, O_USER_FILTER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_options co = {
		.usage = usage, .shortopts = "+o:p:avqh", .longopts = longopts,
		.max_args = CLI_ARGS_ANY,
	};
	struct ift_record_opts opts = { .output = IFT_DEFAULT_TRACE,
					.file_uid = (uid_t)-1, .file_gid = (gid_t)-1 };
	const char **libs = NULL, **stack_ops = NULL;
	pid_t *pids = NULL;
	double duration = 0;
	bool as_root = false;
	struct ift_recorder *r = NULL;
	struct ift_child *child = NULL;
	struct ift_creds user = { 0 };
	bool sudo = false;
	int c, ret, status = -1, exit_code = EXIT_RUNTIME;
	uint64_t deadline = 0, next_status = 0;
	bool tty = isatty(STDERR_FILENO);	/* -q may still come */
	bool released = false;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		char *end;

		switch (c) {
		case 'o':
			opts.output = optarg;
			break;
		case O_CUDA_LIB:
			libs = realloc(libs, (opts.ncuda_libs + 1) * sizeof(*libs));
			if (!libs)
				return error("out of memory"), EXIT_RUNTIME;
			libs[opts.ncuda_libs++] = optarg;
			break;
		case 'p': {
			long v = strtol(optarg, &end, 10);

			if (*end || v <= 0)
				return usage_error(usage, "bad pid '%s'", optarg);
			pids = realloc(pids, (opts.npids + 1) * sizeof(*pids));
			if (!pids)
				return error("out of memory"), EXIT_RUNTIME;
			pids[opts.npids++] = (pid_t)v;
			break;
		}
		case 'a':
			opts.all = true;
			break;
		case O_DURATION:
			duration = strtod(optarg, &end);
			if (*end || duration <= 0)
				return usage_error(usage, "bad duration '%s'", optarg);
			break;
		case O_BUFFER: {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v == 0 || v > 4UL << 20)
				return usage_error(usage, "bad buffer size '%s'", optarg);
			opts.buffer_kb = (unsigned)v;
			break;
		}
		case O_NO_HOST:
			opts.no_host = true;
			break;
		case O_AS_ROOT:
			as_root = true;
			break;
		case O_USER_FILTER:
			opts.user_filter = true;
			break;
		case O_STACK:
			opts.stack = true;
			if (!optarg)
				break;
			/* --stack=a,b --stack=c: the union; split in place */
			for (char *save = NULL, *op = strtok_r(optarg, ",", &save);
			     op; op = strtok_r(NULL, ",", &save)) {
				const char **v = realloc(stack_ops, (opts.nstack_ops + 1) *
							 sizeof(*v));

				if (!v)
					return error("out of memory"), EXIT_RUNTIME;
				stack_ops = v;
				stack_ops[opts.nstack_ops++] = op;
			}
			break;
		case O_STACK_SIZE: {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v < 64 || v > 65528)
				return usage_error(usage, "bad stack size '%s' (64..65528 bytes)",
						   optarg);
			opts.stack_bytes = (unsigned)v;
			break;
		}
		case O_STACK_PERIOD: {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v == 0 || v > 1000000000UL)
				return usage_error(usage, "bad stack period '%s'", optarg);
			opts.stack_period = (unsigned)v;
			break;
		}
		case 'v':
			verbose++;
			break;
		case 'q':
			verbose--;
			break;
		}
	}
	if (c < 0)
		return co.status;
	opts.cuda_libs = libs;
	opts.stack_ops = stack_ops;
	opts.pids = pids;
	if ((opts.stack_bytes || opts.stack_period) && !opts.stack)
		return usage_error(usage, "--stack-size and --stack-period go with --stack");
	if (optind < argc)
		opts.argv = argv + optind;
	opts.envp = environ;
	if (!opts.argv && !opts.npids && !opts.all)
		return usage_error(usage, "nothing to trace: give a command after --, -p PID or -a");
	for (size_t i = 0; i < opts.npids; i++)
		if (kill(pids[i], 0) < 0 && errno == ESRCH)
			return error("cannot trace pid %d: no such process", pids[i]), EXIT_RUNTIME;
	if (opts.argv && !on_path(opts.argv[0], environ)) {
		error("cannot run '%s': command not found", opts.argv[0]);
		return 127;
	}
	/* under sudo, the command and the file belong to the user who ran it */
	if (!as_root) {
		int is = cli_sudo_user(&user);

		if (is < 0)
			goto out;
		sudo = is > 0;
	}
	if (sudo) {
		opts.file_uid = user.uid;
		opts.file_gid = user.gid;
		opts.run_as = &user;
	}
	tty = tty && verbose >= 0;

	set_signals();
	opts.stop = &stop_count;
	ret = ift_recorder_create(&opts, &r);
	if (stop_count)
		goto stopped;	/* before the command ran: nothing to wait for */
	if (ret < 0) {
		if ((ret == -EACCES || ret == -EPERM) && sudo)
			error("cannot %s: %s (the trace is written with the permissions of "
			      "uid %u, who ran sudo)", ift_recorder_error(r), ift_strerror(ret),
			      (unsigned)user.uid);
		else if (ret == -EACCES || ret == -EPERM)
			error("cannot %s: %s (recording needs root: try sudo)",
			      ift_recorder_error(r), ift_strerror(ret));
		else
			error("cannot %s: %s", ift_recorder_error(r), ift_strerror(ret));
		goto out;
	}
	if (verbose > 0) {
		const struct ift_libset *ls = ift_recorder_libs(r);

		for (size_t i = 0; i < ls->n; i++)
			fprintf(stderr, "%s: probing %zu functions in %s (%s)\n", progname,
				ls->v[i].nsyms, ls->v[i].path, ls->v[i].found_by);
	}
	if (verbose >= 0) {
		const struct ift_kfeature *f;
		char what[480];

		/* an older kernel: what this recording does without, in check's words */
		for (size_t i = 0; (f = ift_recorder_without(r, i)); i++) {
			ift_kfeature_str(f, false, what, sizeof(what));
			warning("%s", what);
		}
		warn_leftovers();
	}
	if (!ift_recorder_libs(r)->n && verbose >= 0)
		warning("no CUDA library found: recording host events only (use --cuda-lib PATH)");

	if (opts.argv) {
		pid_t pid = ift_child_spawn(opts.argv, sudo ? &user : NULL, &child);

		if (pid < 0) {
			error("cannot start '%s': %s", opts.argv[0], strerror((int)-pid));
			goto out;
		}
		child_pid = pid;
		if ((ret = ift_recorder_add_pid(r, pid)) < 0) {
			error("cannot trace '%s': %s", opts.argv[0], ift_strerror(ret));
			goto out;
		}
	}
	if (stop_count)
		goto stopped;
	if ((ret = ift_recorder_start(r)) < 0) {
		error("cannot %s: %s", ift_recorder_error(r), ift_strerror(ret));
		goto out;
	}
	if (child) {
		ret = release_unless_stopped(child);
		if (ret == 0)
			goto stopped;
		released = ret > 0;
		if (ret < 0) {
			error("cannot run '%s': %s", opts.argv[0], strerror(-ret));
			waitpid(child_pid, &status, 0);
			child_pid = 0;
			status = -1;
			exit_code = 127;
			ift_recorder_finish(r, 127);
			goto out;
		}
	}
	if (duration > 0)
		deadline = ift_now_ns() + (uint64_t)(duration * 1e9);

	for (;;) {
		uint64_t now;

		if (child_pid > 0) {
			int st;
			pid_t w = waitpid(child_pid, &st, WNOHANG);

			if (w == child_pid) {
				status = st;
				child_pid = 0;
				break;
			}
		}
		/* without a command, Ctrl-C ends the recording; with one, the
		   command's end does, and a second Ctrl-C forces it */
		if (stop_count && (!opts.argv || stop_count > 1 || child_pid <= 0))
			break;
		now = ift_now_ns();
		if (deadline && now >= deadline)
			break;
		if ((ret = ift_recorder_poll(r, 10)) < 0) {
			error("cannot %s: %s", ift_recorder_error(r), ift_strerror(ret));
			break;
		}
		if (tty && now >= next_status) {
			next_status = now + 1000000000ULL;
			print_status(r, false);
		}
	}
	if (tty)
		fputc('\n', stderr);

	/* when --duration ran out first, the command goes on untraced */
	ret = ift_recorder_finish(r, status >= 0 ? (WIFEXITED(status) ?
			WEXITSTATUS(status) : 128 + WTERMSIG(status)) : -1);
	if (ret < 0) {
		error("cannot %s: %s", ift_recorder_error(r), ift_strerror(ret));
		goto out;
	}
	if (verbose >= 0)
		print_summary(r, opts.output);
	if (status >= 0)
		exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status);
	else
		exit_code = EXIT_OK;
	goto out;
stopped:
	/* Ctrl-C during set-up: undo it all, and the command never runs */
	if (verbose >= 0)
		fprintf(stderr, "%s: %s before recording began%s\n", progname,
			strsignal(stop_signal), opts.argv ? ": the command did not run" : "");
	exit_code = 128 + stop_signal;
out:
	ift_recorder_destroy(r);
	ift_child_free(child);
	if (child_pid > 0 && status < 0 && (exit_code == EXIT_RUNTIME || !released)) {
		/* set-up failed or was stopped before the command ran: it must not
		   run untraced */
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
	}
	free(libs);
	free(pids);
	free(stack_ops);
	free((void *)user.groups);
	return exit_code;
}
