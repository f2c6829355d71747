// SPDX-License-Identifier: MIT
/*
 * Leftovers: the uprobe groups and instances of runs that ended without
 * their teardown (SIGKILL, a crash).
 *
 * A name "ingero_<pid>" is a leftover when no live run has that pid: the
 * process is gone or a zombie, or it is another program that got the pid
 * after the run's instance was made (it started later).  A live ingero-ftrace
 * (by /proc/PID/comm or exe) always owns its name, and so does the calling
 * process, whatever its name, so that a program using this library never
 * removes its own session.  A live process of another name that started
 * before the instance is kept too: it may be such a program.  A group with no
 * instance of its name is judged by name alone.  Nothing else is ever
 * touched: other groups, other instances, names that only look alike
 * ("ingero_12x", "ingero_012").
 *
 * A name whose instance is locked (flock, ift_tfs_instance_lock()) is a live
 * session's whatever its pid: a recorder's, or the helper that finishes the
 * teardown of one that has exited.  A helper killed half-way drops the lock
 * and leaves a leftover like any other.
 *
 * An instance cannot be removed while a process holds one of its files open
 * (EBUSY): an orphaned command of a killed run that inherited its rings, or
 * anyone reading them.  That is no reason to stop: names are unique per
 * run, so such an instance is only skipped, its events disabled, and removed
 * by a later cleanup; the processes holding it are found in /proc/PID/fd.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"
#include "ift-error.h"
#include "ift-probe.h"
#include "probe.h"

#define IFT_PROG "ingero-ftrace"

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/*
 * When a process started, in wall-clock seconds: /proc/PID/stat gives clock
 * ticks since boot (CLOCK_BOOTTIME), turned into wall time through the
 * present distance between the two clocks.  Good to a tick, where the
 * integer btime of /proc/stat is only good to a second.
 */
static double start_wall(unsigned long long ticks)
{
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &real) ||
	    clock_gettime(CLOCK_BOOTTIME, &boot))
		return 0;
	return (double)real.tv_sec + real.tv_nsec / 1e9 -
	       ((double)boot.tv_sec + boot.tv_nsec / 1e9) + (double)ticks / (double)hz;
}

/*
 * Whether PID may own an object created at BORN (seconds since the epoch, 0
 * when unknown): this very process, a live ingero-ftrace, or a live process
 * that started before the object (a program using this library, such as a
 * test).  A process that started after the object got a dead run's pid.
 */
static bool owner_alive(pid_t pid, double born)
{
	char path[64], buf[PATH_MAX], *p;
	unsigned long long start = 0;
	double started;
	ssize_t n;

	if (pid == getpid())
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_line(path, buf, sizeof(buf)))
		return false;
	/* "pid (comm) S ...": the state follows the last ')', the start time
	   (field 22) is 20 fields after it */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		start = strtoull(p, NULL, 10);

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_line(path, buf, sizeof(buf)) && !strcmp(buf, IFT_PROG))
		return true;
	/* renamed threads keep their executable */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		p = strstr(buf, " (deleted)");	/* rebuilt while it ran */
		if (p && !p[10])
			*p = 0;
		p = strrchr(buf, '/');
		if (!strcmp(p ? p + 1 : buf, IFT_PROG))
			return true;
	}
	if (born <= 0)
		return false;	/* nothing dates the object: by name alone */
	/* 1 s of slack for clock adjustments between then and now */
	started = start ? start_wall(start) : 0;
	if (started <= 0)
		return true;	/* cannot tell: keep it */
	return started <= born + 1.0;
}

/*
 * When a session made its objects: the time of its instance directory, 0
 * if there is none.  Only the instance dates them: the directories of event
 * groups (eventfs, Linux 6.6+) take the time they are first looked at, not
 * the time the group was made.  A session makes its instance before its
 * group and deletes its group before its instance, so a live session's
 * group always has an instance to date it.
 */
static double born_time(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (ift_tfs_path(path, sizeof(path), "%s/instances/%s", dir, name) || stat(path, &st))
		return 0;
	return (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

struct found {
	struct ift_leftover *v;		/* all of them, grown as needed */
	size_t n, cap;
};

static int add_found(struct found *f, const char *kind, const char *name, pid_t pid)
{
	struct ift_leftover *l;

	if (ift_array_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v)))
		return -ENOMEM;
	l = &f->v[f->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->kind, sizeof(l->kind), "%s", kind);
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->owner = pid;
	return 0;
}

struct walk {
	const char *dir;
	struct found *f;
	char last[64];		/* the group of the previous line, judged already */
};

static int found_group(const char *group, const char *event, void *arg)
{
	struct walk *w = arg;
	pid_t pid;

	(void)event;
	if (!ift_name_pid(group, &pid) || !strcmp(group, w->last))
		return 0;
	snprintf(w->last, sizeof(w->last), "%s", group);
	for (size_t i = 0; i < w->f->n; i++)
		if (!strcmp(w->f->v[i].name, group) && !strcmp(w->f->v[i].kind, "uprobe group"))
			return 0;	/* one line per uprobe: judged once */
	if (ift_tfs_instance_locked(w->dir, group) ||
	    owner_alive(pid, born_time(w->dir, group)))
		return 0;
	return add_found(w->f, "uprobe group", group, pid);
}

/* The instance of F whose files LINK (a /proc/PID/fd target) is in, or NULL. */
static struct ift_leftover *held_instance(struct found *f, const char *link)
{
	const char *p = strstr(link, "/instances/");
	size_t len;

	if (!p)
		return NULL;
	p += strlen("/instances/");
	len = strcspn(p, "/");
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].kind, "instance") && strlen(f->v[i].name) == len &&
		    !strncmp(f->v[i].name, p, len) && (p[len] == '/' || !p[len]))
			return &f->v[i];
	return NULL;
}

/*
 * Who holds each leftover instance open: every process with a descriptor on
 * a file in it, counted once per instance.  Processes that vanish or hide
 * their descriptors (another user's, without root) are passed over.
 */
static void find_holders(struct found *f)
{
	char path[64], link[PATH_MAX];
	struct dirent *d, *e;
	bool any = false;
	DIR *proc, *fds;
	pid_t *last;			/* per leftover: the holder counted last */

	for (size_t i = 0; i < f->n && !any; i++)
		any = !strcmp(f->v[i].kind, "instance");
	if (!any || !(last = calloc(f->n, sizeof(*last))))
		return;
	if (!(proc = opendir("/proc"))) {
		free(last);
		return;
	}
	while ((d = readdir(proc))) {
		pid_t pid;
		char *end;

		pid = (pid_t)strtol(d->d_name, &end, 10);
		if (pid <= 0 || *end)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
		if (!(fds = opendir(path)))
			continue;
		while ((e = readdir(fds))) {
			struct ift_leftover *l;
			char fdpath[sizeof(path) + sizeof(e->d_name) + 1];
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
			n = readlink(fdpath, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			/* by the instance's name: tracefs may be mounted twice */
			if (!(l = held_instance(f, link)))
				continue;
			if (last[l - f->v] == pid)
				continue;	/* another file of the same process */
			last[l - f->v] = pid;
			if (l->nholders < IFT_LEFTOVER_HOLDERS) {
				char cpath[64], comm[64];

				l->holders[l->nholders].pid = pid;
				snprintf(cpath, sizeof(cpath), "/proc/%d/comm", (int)pid);
				if (!read_line(cpath, comm, sizeof(comm)))
					comm[0] = 0;
				snprintf(l->holders[l->nholders].comm,
					 sizeof(l->holders[0].comm), "%s", comm);
			}
			l->nholders++;
		}
		closedir(fds);
	}
	closedir(proc);
	free(last);
}

static int find_all(const char *dir, struct found *f)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	pid_t pid;
	int ret;

	ret = ift_tfs_path(path, sizeof(path), "%s/instances", dir);
	if (ret)
		return ret;
	dp = opendir(path);
	if (dp) {
		while (!ret && (d = readdir(dp)))
			if (ift_name_pid(d->d_name, &pid) &&
			    !ift_tfs_instance_locked(dir, d->d_name) &&
			    !owner_alive(pid, born_time(dir, d->d_name)))
				ret = add_found(f, "instance", d->d_name, pid);
		closedir(dp);
	} else if (errno != ENOENT) {
		return -errno;
	}
	if (ret)
		return ret;
	ret = ift_tfs_uprobe_walk(dir, found_group, &(struct walk){ .dir = dir, .f = f });
	if (ret && ret != -ENOENT)		/* ENOENT: no uprobes, no groups */
		return ret;
	find_holders(f);
	return 0;
}

int ift_probe_find_leftovers(struct ift_leftover *v, size_t max)
{
	struct found f = { 0 };
	const char *dir;
	int ret;

	dir = ift_tracefs_dir();
	if (!dir)
		return -IFT_E_NO_TRACEFS;
	ret = find_all(dir, &f);
	if (!ret) {
		for (size_t i = 0; i < f.n && i < max; i++)
			v[i] = f.v[i];
		ret = (int)f.n;
	}
	free(f.v);
	return ret;
}

int ift_probe_count_teardowns(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	const char *dir;
	DIR *dp;
	pid_t pid;
	int n = 0, ret;

	dir = ift_tracefs_dir();
	if (!dir)
		return -IFT_E_NO_TRACEFS;
	ret = ift_tfs_path(path, sizeof(path), "%s/instances", dir);
	if (ret)
		return ret;
	dp = opendir(path);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dp)))
		if (ift_name_pid(d->d_name, &pid) && ift_tfs_instance_locked(dir, d->d_name) &&
		    !owner_alive(pid, born_time(dir, d->d_name)))
			n++;
	closedir(dp);
	return n;
}

void ift_leftover_holders_str(const struct ift_leftover *l, char *buf, size_t len)
{
	unsigned shown = l->nholders < IFT_LEFTOVER_HOLDERS ? l->nholders : IFT_LEFTOVER_HOLDERS;
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (unsigned i = 0; i < shown && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%spid %d (%s)", i ? ", " : "",
				 (int)l->holders[i].pid, l->holders[i].comm);

		at += n > 0 ? (size_t)n : 0;
	}
	if (l->nholders > shown && at < len)
		snprintf(buf + at, len - at, " and %u more", l->nholders - shown);
}

int ift_probe_cleanup_leftovers(void)
{
	struct found f = { 0 };
	const char *dir;
	int ret, err = 0, removed = 0;
	bool took;

	dir = ift_tracefs_dir();
	if (!dir)
		return -IFT_E_NO_TRACEFS;
	/* its reads of uprobe_events wait for event_mutex as a set-up does;
	   record's set-up holds the lock already */
	took = ift_tfs_setup_hold(dir);
	ret = find_all(dir, &f);
	if (ret) {
		if (took)
			ift_tfs_setup_release();
		free(f.v);
		return ret;
	}
	/* instances first: a group's events may be enabled in its instance */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < f.n; i++) {
			bool inst = !strcmp(f.v[i].kind, "instance");

			if (inst != !pass)
				continue;
			ret = inst ? ift_tfs_instance_remove(dir, f.v[i].name)
				   : ift_tfs_group_destroy(dir, f.v[i].name, 1000);
			/* gone meanwhile (ENOENT; ENODEV for a probe already
			   deleted): another cleaner, running at the same
			   time, was first */
			if (ret >= 0 || ret == -ENOENT || ret == -ENODEV)
				removed++;
			else if (ret == -EBUSY && inst)
				continue;	/* held open: a later cleanup removes it */
			else if (!err)
				err = ret;
		}
	}
	if (took)
		ift_tfs_setup_release();
	free(f.v);
	return err ? err : removed;
}
