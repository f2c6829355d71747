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

int python_sys_path(const char *path, const char *argv0, char *const *envp,
		    const struct ift_creds *as, const volatile sig_atomic_t *stop,
		    int timeout_ms, char **out)
{
	char *const argv[] = { (char *)argv0, (char *)"-c", (char *)PY_SCRIPT, NULL };
	long long deadline = now_ms() + timeout_ms;
	int pfd[2], devnull, status, ret = 0;
	size_t len = 0, cap = 4096;
	bool timed_out = false, killed = false;
	char *buf;
	pid_t pid;

	*out = NULL;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(buf);
		return -errno;
	}
	pfd[0] = fd_high(pfd[0]);
	pfd[1] = fd_high(pfd[1]);
	devnull = fd_high(open("/dev/null", O_RDWR | O_CLOEXEC));
	if (pfd[0] < 0 || pfd[1] < 0 || devnull < 0) {
		ret = -errno;
		goto out_fds;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out_fds;
	}
	if (!pid) {
		/* only async-signal-safe calls from here to execve */
		setpgid(0, 0);
		if (dup2(devnull, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(devnull, 2) < 0)
			_exit(127);
		/* groups first, uid last: after setresuid() nothing else may change */
		if (as && (setgroups(as->ngroups, as->groups) < 0 ||
			   setresgid(as->gid, as->gid, as->gid) < 0 ||
			   setresuid(as->uid, as->uid, as->uid) < 0))
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides, so a kill of the group cannot come first */
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;
		int r;

		if (stop && *stop) {
			ret = -EINTR;
			break;
		}
		if (left <= 0) {
			timed_out = true;
			break;
		}
		/* a signal between the check and poll() is seen within 100 ms */
		r = poll(&p, 1, left < 100 ? (int)left : 100);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (!r)
			continue;
		if (len + 1 >= cap) {
			char *b;

			if (cap >= PY_MAX_OUT)
				break;	/* enough: the first entries are the ones that matter */
			b = realloc(buf, cap * 2);
			if (!b) {
				ret = -ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		n = read(pfd[0], buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (ret || len + 1 >= cap) {
		stop_group(pid);
		killed = true;
	}
	/* an interpreter that closed its output may still not exit: same deadline */
	for (;;) {
		pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			status = -1;	/* SIGCHLD ignored: the child was reaped for us */
			break;
		}
		if (timed_out || now_ms() >= deadline || (stop && *stop)) {
			stop_group(pid);
			killed = timed_out = true;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	if (!ret && stop && *stop)
		ret = -EINTR;
	else if (!ret && timed_out)
		ret = -ETIMEDOUT;
	else if (!ret && len + 1 < cap && status != -1 &&
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
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*out = buf;
	return 0;
}
