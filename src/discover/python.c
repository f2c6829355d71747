// SPDX-License-Identifier: MIT
/*
 * Asking a Python interpreter where it imports from.  pip wheels bring their
 * own CUDA runtime (site-packages/nvidia/cuda_runtime/lib, torch/lib) that no
 * DT_NEEDED of the interpreter leads to: they are dlopen()ed at import.  Only
 * the interpreter itself knows its sys.path (venvs, .pth files, PYTHONPATH,
 * pyenv shims), so we run it, with the environment the command will get, no
 * stdin, and a deadline, and as the user the command will run as: the
 * interpreter, a script's #!, a virtualenv's .pth files are the user's code,
 * and under sudo none of it may run as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PY_SCRIPT	"import sys; print(sys.prefix); print('\\n'.join(sys.path))"
#define PY_MAX_OUT	(256u << 10)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A shim's grandchild is in the child's process group: stop them all. */
static void stop_group(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);	/* in case it had not made its group yet */
}

/* Moves FD above the standard streams, so the child's dup2()s cannot clobber it. */
static int fd_high(int fd)
{
	int n;

	if (fd < 0 || fd > 2)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return n;
}

/*
 * Forks the interpreter PATH with ARGV and ENVP, as AS when not NULL, in a
 * process group of its own: nothing in, its output into OUT_FD, its errors
 * into DEVNULL.  Its pid, or -errno.
 */
static pid_t python_spawn(const char *path, char *const *argv, char *const *envp,
			  const struct ift_creds *as, int out_fd, int devnull)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		/* only async-signal-safe calls from here to execve */
		setpgid(0, 0);
		if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(devnull, 2) < 0)
			_exit(127);
		if (as && ift_creds_become(as) < 0)
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides, so a kill of the group cannot come first */
	return pid;
}

/* What the interpreter wrote; full when len + 1 reaches cap at PY_MAX_OUT. */
struct py_out {
	char *buf;
	size_t len, cap;
};

static bool py_out_full(const struct py_out *o)
{
	return o->len + 1 >= o->cap;
}

/*
 * Reads FD into O until its end, the DEADLINE (*TIMED_OUT set), *STOP
 * (-EINTR) or PY_MAX_OUT.  0 or a negative error.
 */
static int python_read(int fd, const volatile sig_atomic_t *stop, long long deadline,
		       struct py_out *o, bool *timed_out)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;
		int r;

		if (stop && *stop)
			return -EINTR;
		if (left <= 0) {
			*timed_out = true;
			return 0;
		}
		/* a signal between the check and poll() is seen within 100 ms */
		r = poll(&p, 1, left < 100 ? (int)left : 100);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			continue;
		if (py_out_full(o)) {
			char *b;

			if (o->cap >= PY_MAX_OUT)
				return 0;	/* enough: the first entries are the ones that matter */
			b = realloc(o->buf, o->cap * 2);
			if (!b)
				return -ENOMEM;
			o->buf = b;
			o->cap *= 2;
		}
		n = read(fd, o->buf + o->len, o->cap - 1 - o->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		o->len += (size_t)n;
	}
}

/*
 * Waits for PID, killed already or by the DEADLINE or *STOP (*TIMED_OUT
 * set then).  Its wait status, or -1 when it was reaped for us.
 */
static int python_reap(pid_t pid, bool killed, const volatile sig_atomic_t *stop,
		       long long deadline, bool *timed_out)
{
	int status;

	/* an interpreter that closed its output may still not exit: same deadline */
	for (;;) {
		pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;	/* SIGCHLD ignored: the child was reaped for us */
		if (*timed_out || now_ms() >= deadline || (stop && *stop)) {
			stop_group(pid);
			killed = *timed_out = true;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
}

int ift_python_sys_path(const char *path, const char *argv0, char *const *envp,
		    const struct ift_creds *as, const volatile sig_atomic_t *stop,
		    int timeout_ms, char **out)
{
	char *const argv[] = { (char *)argv0, (char *)"-c", (char *)PY_SCRIPT, NULL };
	long long deadline = now_ms() + timeout_ms;
	struct py_out o = { .cap = 4096 };
	int pfd[2], devnull, status, ret = 0;
	bool timed_out = false;
	pid_t pid;

	*out = NULL;
	o.buf = malloc(o.cap);
	if (!o.buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(o.buf);
		return -errno;
	}
	pfd[0] = fd_high(pfd[0]);
	pfd[1] = fd_high(pfd[1]);
	devnull = fd_high(open("/dev/null", O_RDWR | O_CLOEXEC));
	if (pfd[0] < 0 || pfd[1] < 0 || devnull < 0) {
		ret = -errno;
		goto out_fds;
	}
	pid = python_spawn(path, argv, envp, as, pfd[1], devnull);
	if (pid < 0) {
		ret = (int)pid;
		goto out_fds;
	}
	close(pfd[1]);
	pfd[1] = -1;
	ret = python_read(pfd[0], stop, deadline, &o, &timed_out);
	if (ret || py_out_full(&o))
		stop_group(pid);
	status = python_reap(pid, ret || py_out_full(&o), stop, deadline, &timed_out);
	if (!ret && stop && *stop)
		ret = -EINTR;
	else if (!ret && timed_out)
		ret = -ETIMEDOUT;
	else if (!ret && !py_out_full(&o) && status != -1 &&
		 (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = -ECHILD;	/* not a Python, or a broken one: its output means nothing */
out_fds:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (devnull >= 0)
		close(devnull);
	if (ret) {
		free(o.buf);
		return ret;
	}
	o.buf[o.len] = 0;
	*out = o.buf;
	return 0;
}
