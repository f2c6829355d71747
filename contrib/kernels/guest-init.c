// SPDX-License-Identifier: MIT
/*
 * guest-init: PID 1 of a QEMU guest started by run-in-guest.sh, built
 * static and put alone in the guest's initramfs (with the modules a
 * distribution kernel needs for 9p, listed in /modules/order).
 *
 * It mounts the host's root filesystem read-only over 9p (virtio tag
 * "root"), makes it the root, runs IFT_GUEST (a shell script on the host's
 * tree, given on the kernel command line: the kernel hands unknown
 * name=value parameters to init's environment) with /bin/sh, reaps what is
 * left, and powers the guest off.  It never returns: on any failure it says
 * why on the console, which run-in-guest.sh shows, and powers off.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROOT_OPTS "trans=virtio,version=9p2000.L,msize=262144,cache=loose"

static void off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("guest-init: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	off();
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The modules of /modules/order, in that order (dependencies first). */
static void load_modules(void)
{
	FILE *f = fopen("/modules/order", "r");
	char name[256], path[300];

	if (!f)
		return;
	while (fgets(name, sizeof(name), f)) {
		int fd;

		name[strcspn(name, "\n")] = 0;
		if (!*name)
			continue;
		snprintf(path, sizeof(path), "/modules/%s.ko", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("open %s: %s", path, strerror(errno));
		if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)
			die("load %s: %s", name, strerror(errno));
		close(fd);
	}
	fclose(f);
}

int main(void)
{
	const char *script = getenv("IFT_GUEST");
	pid_t child;
	int err = 0;

	mkdir("/dev", 0755);
	mkdir("/proc", 0555);
	mkdir("/sys", 0555);
	mkdir("/newroot", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) < 0 && errno != EBUSY)
		die("mount /dev: %s", strerror(errno));
	if (mount("proc", "/proc", "proc", 0, NULL) < 0 ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) < 0)
		die("mount /proc, /sys: %s", strerror(errno));
	if (!script || *script != '/')
		die("no IFT_GUEST=/path/to/script on the kernel command line");
	load_modules();
	/* the virtio device may still be probing: give it 10 s */
	for (int i = 0; i < 200; i++) {
		if (mount("root", "/newroot", "9p", MS_RDONLY, ROOT_OPTS) == 0) {
			err = 0;
			break;
		}
		err = errno;
		nap_ms(50);
	}
	if (err)
		die("mount the host's root over 9p (tag 'root'): %s", strerror(err));
	if (mount("/dev", "/newroot/dev", NULL, MS_MOVE, NULL) < 0 ||
	    mount("/proc", "/newroot/proc", NULL, MS_MOVE, NULL) < 0 ||
	    mount("/sys", "/newroot/sys", NULL, MS_MOVE, NULL) < 0)
		die("move /dev, /proc, /sys: %s", strerror(errno));
	if (chdir("/newroot") < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 ||
	    chroot(".") < 0 || chdir("/") < 0)
		die("switch to the host's root: %s", strerror(errno));

	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (!child) {
		execl("/bin/sh", "sh", script, (char *)NULL);
		fprintf(stderr, "guest-init: run %s: %s\n", script, strerror(errno));
		_exit(127);
	}
	/* PID 1 reaps every orphan until the script is done */
	for (;;) {
		int st;
		pid_t p = wait(&st);

		if (p == child || (p < 0 && errno == ECHILD))
			break;
	}
	kill(-1, SIGKILL);
	while (wait(NULL) > 0)
		;
	off();
	return 0;
}
