// SPDX-License-Identifier: MIT
/*
 * A probe session: one tracefs instance and one uprobe group, both named
 * "ingero_<pid>", and their removal, here or by a helper process.
 *
 * Order matters in both directions.  The instance is created with tracing
 * off before anything is enabled in it (a new instance starts with
 * tracing_on=1), and its clock is set while its buffers are empty (changing
 * the clock resets them).  On teardown events are disabled before they are
 * deleted: deleting an event still enabled anywhere fails with EBUSY.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "ift-arch.h"
#include "ift-error.h"
#include "ift-probe.h"
#include "probe.h"
#include "util/array.h"
#include "util/fds.h"

struct ift_probe_session {
	char name[32];			/* of the instance and of the uprobe group */
	const char *dir;		/* tracefs, static */
	struct ift_probe_opts opts;
	bool pid_filter;		/* set_event_pid is in use */
	const char *clock;
	struct tracefs_instance *inst;
	struct ift_probe *probes;
	size_t n, cap;
	unsigned nlibs;
	struct tep_handle *tep;
	int lock;			/* holds the instance's flock, or -1 */
	uint64_t aside_ns;		/* the teardown's waits for set-ups */
};

/* At most this long, in all, does a teardown wait for others' set-ups:
   one that hangs must not keep our probes armed for ever. */
#define ASIDE_MAX_NS	(10ULL * 1000000000)

/*
 * Before each probe a teardown unregisters: wait while a recorder sets up
 * (ift_tfs_setup_busy(), probe.h says why).
 */
static void step_aside(void *ctx)
{
	struct ift_probe_session *s = ctx;
	const struct timespec pause = { 0, 5000000 };

	while (s->aside_ns < ASIDE_MAX_NS && ift_tfs_setup_busy(s->dir)) {
		nanosleep(&pause, NULL);
		s->aside_ns += 5000000;
	}
}

/*
 * A helper's first wait: the next record of a record-change-record cycle,
 * started as this one returns, takes the set-up lock some 4 ms after its
 * exec (strace here); a teardown begun before that would have a probe's
 * grace period in flight when the set-up's first tracefs write comes.  So
 * a helper gives a set-up HANDOFF_WAIT_NS to show up, and steps aside for
 * all of it if one does; otherwise it begins, HANDOFF_WAIT_NS later than it
 * could have, in the background.
 */
#define HANDOFF_WAIT_NS	(100ULL * 1000000)

static void await_next_setup(struct ift_probe_session *s)
{
	const struct timespec pause = { 0, 5000000 };

	for (uint64_t waited = 0; waited < HANDOFF_WAIT_NS; waited += 5000000) {
		if (ift_tfs_setup_busy(s->dir)) {
			step_aside(s);
			return;
		}
		nanosleep(&pause, NULL);
	}
}

/*
 * One session per process: a second one would take the same name, and its
 * creation would remove the first one's objects as stale.
 */
static bool session_live;

/* Host tracepoints: the scheduler for off-CPU time, page allocations for
   memory pressure.  Optional ones are absent from some kernels; what a
   recording does without each is in src/probe/features.c. */
static const struct {
	const char *system, *event;
	bool optional;
} host_events[] = {
	{ "sched", "sched_switch", false },
	{ "sched", "sched_wakeup", false },
	{ "sched", "sched_waking", true },
	{ "sched", "sched_wakeup_new", false },
	{ "sched", "sched_process_fork", false },
	{ "task", "task_newtask", true },	/* clone flags: thread or process */
	{ "sched", "sched_process_exec", false },
	{ "sched", "sched_process_exit", false },
	{ "task", "task_rename", true },
	{ "kmem", "mm_page_alloc", true },
};

static int inst_path(const struct ift_probe_session *s, char *buf, size_t len,
		     const char *file)
{
	return ift_tfs_path(buf, len, "%s/instances/%s/%s", s->dir, s->name, file);
}

static int inst_write(struct ift_probe_session *s, const char *file, const char *str)
{
	return ift_tfs_instance_write(s->dir, s->name, file, str);
}

/*
 * --page-allocs=count: a hist trigger on the instance's mm_page_alloc,
 * which the instance leaves disabled.  The kernel builds each allocation's
 * record in a per-CPU scratch buffer, counts it in the trigger's table and
 * discards it: nothing reaches the ring.  The instance's pid filter applies
 * before the trigger.  Removed with the instance (rmdir clears its
 * triggers).  A table of 8,192 entries (threads x orders) is preallocated
 * by the kernel; what finds it full is counted as dropped.
 */
#define PAGE_EVENT	"mm_page_alloc"
#define PAGE_TRIGGER	"hist:keys=common_pid,order:vals=hitcount:size=8192"

static int page_trigger(struct ift_probe_session *s, const char *suffix)
{
	char path[PATH_MAX], spec[160];
	int ret = inst_path(s, path, sizeof(path), "events/kmem/" PAGE_EVENT "/trigger");

	if (ret)
		return ret;
	snprintf(spec, sizeof(spec), "%s%s", PAGE_TRIGGER, suffix);
	return ift_tfs_write(path, spec, true);
}

static int enable_event(struct ift_probe_session *s, const char *system,
			const char *event, bool on)
{
	char path[PATH_MAX];
	int ret;

	ret = ift_tfs_path(path, sizeof(path), "%s/instances/%s/events/%s/%s/enable",
		       s->dir, s->name, system, event);
	return ret ? ret : ift_tfs_write(path, on ? "1" : "0", false);
}

static int setup_instance(struct ift_probe_session *s)
{
	char buf[32], path[PATH_MAX];
	int ret;

	ret = inst_write(s, "tracing_on", "0");
	if (ret)
		return ret;
	if (s->opts.buffer_kb) {
		snprintf(buf, sizeof(buf), "%u", s->opts.buffer_kb);
		ret = inst_write(s, "buffer_size_kb", buf);
		if (ret)
			return ret;
	}
	/* mono: comparable with CLOCK_MONOTONIC in user space and across CPUs */
	s->clock = "local";
	ret = inst_path(s, path, sizeof(path), "trace_clock");
	if (ret)
		return ret;
	if (ift_tfs_has_word(path, "mono")) {
		ret = inst_write(s, "trace_clock", "mono");
		if (ret)
			return ret;
		s->clock = "mono";
	}
	if (s->pid_filter) {
		ret = inst_path(s, path, sizeof(path), "set_event_pid");
		if (ret)
			return ret;
		if (!ift_tfs_exists(path))
			return -EOPNOTSUPP;
		/* without event-fork, children of traced tasks are not followed */
		ret = inst_write(s, "options/event-fork", "1");
		if (ret)
			return ret == -ENOENT ? -EOPNOTSUPP : ret;
		ret = inst_write(s, "set_event_pid", "");
		if (ret)
			return ret;
	}
	if (s->opts.host_events) {
		for (size_t i = 0; i < sizeof(host_events) / sizeof(host_events[0]); i++) {
			/* counted by the trigger instead (ift_probe_start()) */
			if (s->opts.page_count && !strcmp(host_events[i].event, PAGE_EVENT))
				continue;
			ret = enable_event(s, host_events[i].system, host_events[i].event, true);
			if (ret == -ENOENT && host_events[i].optional)
				continue;
			if (ret)
				return ret == -ENOENT ? -IFT_E_NO_EVENT : ret;
		}
	}
	return 0;
}

int ift_probe_session_create(const struct ift_probe_opts *opts,
			     struct ift_probe_session **out)
{
	static const struct ift_probe_opts defaults;
	struct ift_probe_session *s;
	char path[PATH_MAX];
	int ret;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (session_live)
		return -EBUSY;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->lock = -1;
	s->pid_filter = opts->kernel_filter && !opts->all_tasks;
	s->clock = "local";
	snprintf(s->name, sizeof(s->name), IFT_NAME_PREFIX "%d", (int)getpid());
	s->dir = ift_tracefs_dir();
	if (!s->dir) {
		free(s);
		return -IFT_E_NO_TRACEFS;
	}
	ret = ift_tfs_path(path, sizeof(path), "%s/instances", s->dir);
	if (ret) {
		free(s);
		return ret;
	}
	if (!ift_tfs_exists(path)) {
		free(s);
		return -EOPNOTSUPP;
	}
	session_live = true;

	/*
	 * Objects under our name are stale: left by a dead run whose pid we
	 * now have, or by a session of ours that was never destroyed.
	 */
	if (ift_tfs_instance_locked(s->dir, s->name)) {
		/* a helper still at it, which steps aside for the set-up lock */
		ift_tfs_setup_release();
		ift_tfs_instance_await(s->dir, s->name);
	}
	ift_tfs_setup_hold(s->dir);		/* unless ift_probe_setup_begin() took it */
	ift_tfs_instance_remove(s->dir, s->name);
	ret = ift_tfs_group_destroy(s->dir, s->name, 1000);
	if (ret < 0)
		goto fail;

	ret = ift_tfs_path(path, sizeof(path), "%s/instances/%s", s->dir, s->name);
	if (ret)
		goto fail;
	if (mkdir(path, 0750)) {
		ret = -errno;
		goto fail;
	}
	/* no lock (a tracefs that refuses flock): the teardown stays ours */
	if ((ret = ift_tfs_instance_lock(s->dir, s->name)) >= 0)
		s->lock = ret;
	s->inst = tracefs_instance_alloc(s->dir, s->name);
	if (!s->inst) {
		ret = errno ? -errno : -ENOMEM;
		goto fail;
	}
	ret = setup_instance(s);
	if (ret)
		goto fail;
	*out = s;
	return 0;
fail:
	ift_probe_session_destroy(s);
	return ret;
}

/* ---- probes -------------------------------------------------------------- */

static bool event_name_used(const struct ift_probe_session *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->probes[i].entry_event, name) ||
		    !strcmp(s->probes[i].ret_event, name))
			return true;
	return false;
}

/*
 * "<sym>_<libidx>" and "<sym>_<libidx>_ret": C identifiers (the kernel takes
 * nothing else) of at most 63 characters.  A name used already gets "_2",
 * "_3", ...; every entry name ends in digits, so no entry name can equal a
 * return name.
 */
static void make_names(const struct ift_probe_session *s, const char *sym,
		       unsigned libidx, struct ift_probe *p)
{
	/* 36 + "_<libidx>" + "_<k>" + "_ret" <= 63 whatever the numbers */
	char base[37], name[sizeof(base) + 24];
	size_t i;

	for (i = 0; sym[i] && i < sizeof(base) - 1; i++) {
		unsigned char c = (unsigned char)sym[i];

		base[i] = (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9')) ? (char)c : '_';
	}
	base[i] = 0;
	if (!i || (base[0] >= '0' && base[0] <= '9'))
		base[0] = '_';
	snprintf(name, sizeof(name), "%s_%u", base, libidx);
	for (unsigned k = 2; event_name_used(s, name); k++)
		snprintf(name, sizeof(name), "%s_%u_%u", base, libidx, k);
	memcpy(p->entry_event, name, strlen(name) + 1);
	memcpy(p->ret_event, name, strlen(name));
	memcpy(p->ret_event + strlen(name), "_ret", 5);
}

static int uprobe_cmd(const struct ift_probe_session *s, const char *cmd)
{
	char path[PATH_MAX];
	int ret;

	ret = ift_tfs_path(path, sizeof(path), "%s/uprobe_events", s->dir);
	return ret ? ret : ift_tfs_write(path, cmd, true);
}

static void uprobe_delete(struct ift_probe_session *s, const char *event)
{
	char cmd[160];

	enable_event(s, s->name, event, false);
	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", s->name, event);
	uprobe_cmd(s, cmd);
}

/*
 * Entry and return probe of SYM, both enabled in the instance (or, for
 * --isolate, created only: perf opens them), or neither.
 */
static int probe_sym(struct ift_probe_session *s, const struct ift_lib *lib,
		     const struct ift_sym *sym, unsigned libidx, struct ift_probe *p)
{
	char args[512] = "", *cmd = NULL;
	size_t used = 0;
	int ret;

	make_names(s, sym->name, libidx, p);
	if (sym->spec) {
		for (unsigned a = 0; a < sym->spec->nargs && a < IFT_CALL_MAX_ARGS; a++) {
			char fetch[64];
			int n;

			ret = ift_func_arg_fetch(sym->spec, a, ift_arch_native, fetch, sizeof(fetch));
			if (ret)
				return ret;
			n = snprintf(args + used, sizeof(args) - used, " %s=%s:u64",
				     sym->spec->args[a].name, fetch);
			if (n < 0 || (size_t)n >= sizeof(args) - used)
				return -E2BIG;
			used += (size_t)n;
		}
	}
	if (asprintf(&cmd, "p:%s/%s %s:0x%" PRIx64 "%s\n", s->name, p->entry_event,
		     lib->path, sym->offset, args) < 0)
		return -ENOMEM;
	ret = uprobe_cmd(s, cmd);
	free(cmd);
	if (ret)
		return ret;
	if (asprintf(&cmd, "r:%s/%s %s:0x%" PRIx64 " ret=$retval:s32\n", s->name,
		     p->ret_event, lib->path, sym->offset) < 0) {
		uprobe_delete(s, p->entry_event);
		return -ENOMEM;
	}
	ret = uprobe_cmd(s, cmd);
	free(cmd);
	if (ret) {
		uprobe_delete(s, p->entry_event);
		return ret;
	}
	/* a virtual address instead of a file offset fails only here (EINVAL);
	   with --isolate, at perf_event_open() */
	ret = 0;
	if (!s->opts.perf_uprobes) {
		ret = enable_event(s, s->name, p->entry_event, true);
		if (!ret)
			ret = enable_event(s, s->name, p->ret_event, true);
	}
	if (ret) {
		uprobe_delete(s, p->ret_event);
		uprobe_delete(s, p->entry_event);
		return ret;
	}
	p->lib = lib;
	p->sym = sym;
	p->entry_id = p->ret_id = -1;
	return 0;
}

static int resolve_ids(struct ift_probe_session *s);

/* The tracepoint id of the session's event NAME (SUFFIX appended), or a negative error. */
static int event_id(struct ift_probe_session *s, const char *name, const char *suffix)
{
	char path[PATH_MAX], *id;
	long v;
	int ret;

	ret = ift_tfs_path(path, sizeof(path), "%s/events/%s/%s%s/id", s->dir, s->name, name,
		       suffix);
	if (!ret)
		ret = ift_tfs_read(path, &id);
	if (ret)
		return ret;
	v = strtol(id, NULL, 10);
	free(id);
	return v > 0 && v < INT32_MAX ? (int)v : -IFT_E_NO_EVENT;
}

int ift_probe_add_twin(struct ift_probe_session *s, size_t i)
{
	const struct ift_probe *p;
	char *cmd;
	int ret;

	if (i >= s->n)
		return -EINVAL;
	p = &s->probes[i];
	if (asprintf(&cmd, "p:%s/%s_s %s:0x%" PRIx64 "\n", s->name, p->entry_event,
		     p->lib->path, p->sym->offset) < 0)
		return -ENOMEM;
	ret = uprobe_cmd(s, cmd);
	free(cmd);
	return ret ? ret : event_id(s, p->entry_event, "_s");
}

int ift_probe_add_lib(struct ift_probe_session *s, const struct ift_lib *lib)
{
	char path[PATH_MAX];
	unsigned libidx;
	size_t added = 0;
	int ret, first_err = 0;

	ret = ift_tfs_path(path, sizeof(path), "%s/uprobe_events", s->dir);
	if (ret)
		return ret;
	if (!ift_tfs_exists(path))
		return -IFT_E_NO_UPROBES;
	/* uprobe_events splits its commands on white space */
	if (!lib->path || lib->path[0] != '/' || strpbrk(lib->path, " \t\n\r\f\v"))
		return -EINVAL;
	libidx = s->nlibs++;
	for (size_t i = 0; i < lib->nsyms; i++) {
		struct ift_probe p = { 0 };

		if (ift_array_grow((void **)&s->probes, &s->cap, s->n + 1, sizeof(*s->probes)) < 0)
			return -ENOMEM;
		/* a function that cannot be probed does not stop the others */
		ret = probe_sym(s, lib, &lib->syms[i], libidx, &p);
		if (ret) {
			if (!first_err)
				first_err = ret;
			continue;
		}
		s->probes[s->n++] = p;
		added++;
	}
	if (!added && first_err)
		return first_err;
	if (s->tep) {
		ret = resolve_ids(s);
		if (ret)
			return ret;
	}
	return (int)added;
}

int ift_probe_add_pids(struct ift_probe_session *s, const pid_t *pids, size_t n)
{
	char path[PATH_MAX], *buf;
	size_t len = 0;
	int ret;

	if (!s->pid_filter || !n)
		return 0;
	buf = malloc(n * 12 + 2);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "%s%d", i ? " " : "", (int)pids[i]);
	buf[len++] = '\n';
	buf[len] = 0;
	/* appended: O_TRUNC would clear the pids already there */
	ret = inst_path(s, path, sizeof(path), "set_event_pid");
	if (!ret)
		ret = ift_tfs_write(path, buf, true);
	free(buf);
	return ret;
}

int ift_probe_setup_begin(void)
{
	const char *dir = ift_tracefs_dir();

	if (!dir)
		return -IFT_E_NO_TRACEFS;
	ift_tfs_setup_hold(dir);
	return 0;
}

int ift_probe_start(struct ift_probe_session *s)
{
	int ret;

	/* a trigger counts whatever tracing_on says: only now are the pids set */
	if (s->opts.page_count && (ret = page_trigger(s, "")) < 0)
		return ret == -ENOENT || ret == -EINVAL ? -IFT_E_OLD_KERNEL : ret;
	ret = inst_write(s, "tracing_on", "1");
	/* armed: the set-up is done, others' teardowns may go on */
	ift_tfs_setup_release();
	return ret;
}

int ift_probe_stop(struct ift_probe_session *s)
{
	int ret = inst_write(s, "tracing_on", "0");

	/* the table stays readable; a kernel that cannot pause counts a little on */
	if (s->opts.page_count)
		page_trigger(s, ":pause");
	return ret;
}

int ift_probe_page_counts(struct ift_probe_session *s, ift_page_count_fn fn, void *ctx,
			  uint64_t *dropped)
{
	char path[PATH_MAX], *text = NULL;
	int ret;

	*dropped = 0;
	if (!s->opts.page_count)
		return 0;
	ret = inst_path(s, path, sizeof(path), "events/kmem/" PAGE_EVENT "/hist");
	if (ret || (ret = ift_tfs_read(path, &text)) < 0)
		return ret;
	ret = ift_hist_parse(text, fn, ctx, dropped);
	free(text);
	return ret;
}

/* Names no probe_sym() event takes: theirs end in a digit or in "_ret". */
#define TRAP_ENTRY	"ift_trapcost"
#define TRAP_RETURN	"ift_trapcost_r"

int ift_probe_trap_cost(struct ift_probe_session *s, const struct ift_trap_arm *arm,
			uint64_t *ns)
{
	char path[PATH_MAX], *cmd;
	uint64_t off, probed, bare;
	bool armed = false;
	int ret;

	ret = ift_tfs_trap_target_where(path, sizeof(path), &off);
	if (ret)
		return ret;
	for (int k = 0; k < 2 && !ret; k++) {
		if (asprintf(&cmd, "%c:%s/%s %s:0x%" PRIx64 "\n", k ? 'r' : 'p', s->name,
			     k ? TRAP_RETURN : TRAP_ENTRY, path, off) < 0) {
			ret = -ENOMEM;
			break;
		}
		ret = uprobe_cmd(s, cmd);
		free(cmd);
	}
	if (!ret && arm) {
		int entry = event_id(s, TRAP_ENTRY, ""), leave = event_id(s, TRAP_RETURN, "");

		ret = entry < 0 ? entry : leave < 0 ? leave : arm->arm(arm->ctx, entry, leave);
		armed = !ret;
	} else if (!ret) {
		ret = enable_event(s, s->name, TRAP_ENTRY, true);
		if (!ret)
			ret = enable_event(s, s->name, TRAP_RETURN, true);
	}
	probed = ret ? 0 : ift_tfs_trap_target_time();
	/* its perf events closed first: a uprobe they hold cannot go */
	if (armed)
		arm->disarm(arm->ctx);
	uprobe_delete(s, TRAP_RETURN);
	uprobe_delete(s, TRAP_ENTRY);
	if (ret)
		return ret;
	bare = ift_tfs_trap_target_time();
	*ns = probed > bare ? probed - bare : 1;
	return 0;
}

struct tracefs_instance *ift_probe_instance(struct ift_probe_session *s)
{
	return s->inst;
}

/* Formats of probes not yet in the tep (added after it was loaded). */
static int resolve_ids(struct ift_probe_session *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct ift_probe *p = &s->probes[i];
		const char *names[2] = { p->entry_event, p->ret_event };
		int *ids[2] = { &p->entry_id, &p->ret_id };

		for (int k = 0; k < 2; k++) {
			struct tep_event *ev;
			char path[PATH_MAX], *fmt;
			int ret;

			if (*ids[k] >= 0)
				continue;
			ev = tep_find_event_by_name(s->tep, s->name, names[k]);
			if (!ev) {
				ret = ift_tfs_path(path, sizeof(path), "%s/events/%s/%s/format",
					       s->dir, s->name, names[k]);
				if (!ret)
					ret = ift_tfs_read(path, &fmt);
				if (ret)
					return ret;
				ret = tep_parse_event(s->tep, fmt, strlen(fmt), s->name);
				free(fmt);
				if (ret)
					return -IFT_E_NO_EVENT;
				ev = tep_find_event_by_name(s->tep, s->name, names[k]);
				if (!ev)
					return -IFT_E_NO_EVENT;
			}
			*ids[k] = ev->id;
		}
	}
	return 0;
}

/* Reads DIR/FILE whole into a malloc()ed buffer; NULL when it cannot. */
static char *read_whole(const char *dir, const char *file, size_t *len)
{
	char path[PATH_MAX];
	size_t cap = 8192, n = 0;
	char *buf;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b) {
				free(buf);
				buf = NULL;
			} else {
				buf = b;
			}
		}
	}
	close(fd);
	*len = n;
	return buf;
}

/* Parses DIR's events/SYSTEM/EVENT/format into TEP; an event the kernel
   lacks, or one we cannot parse, is one we do not decode. */
static void load_format(struct tep_handle *tep, const char *dir, const char *system,
			const char *event)
{
	char file[PATH_MAX], *buf;
	size_t len;

	if (snprintf(file, sizeof(file), "events/%s/%s/format", system, event) >=
	    (int)sizeof(file))
		return;
	buf = read_whole(dir, file, &len);
	if (buf) {
		tep_parse_event(tep, buf, len, system);
		free(buf);
	}
}

/*
 * The formats of the host events we enable and of every event of GROUP
 * (our probes), and nothing else: each parsed format stays in memory for
 * the whole recording (~30 more in sched, kmem and task).  The library's
 * tracefs_local_events_system() also parses /proc/kallsyms, printk_formats
 * and saved_cmdlines, which we never use: ~80 ms and a visible share of a
 * short recording's CPU.
 */
static struct tep_handle *load_formats(const char *dir, const char *group)
{
	struct tep_handle *tep = tep_alloc();
	char **events;
	char *buf;
	size_t len;

	if (!tep)
		return NULL;
	tep_set_long_size(tep, (int)sizeof(long));
	tep_set_page_size(tep, (int)sysconf(_SC_PAGESIZE));
	buf = read_whole(dir, "events/header_page", &len);
	if (buf) {
		tep_parse_header_page(tep, buf, len, (int)sizeof(long));
		free(buf);
	}
	for (size_t i = 0; i < sizeof(host_events) / sizeof(host_events[0]); i++)
		load_format(tep, dir, host_events[i].system, host_events[i].event);
	events = tracefs_system_events(dir, group);
	for (int k = 0; events && events[k]; k++)
		load_format(tep, dir, group, events[k]);
	tracefs_list_free(events);
	return tep;
}

struct tep_handle *ift_probe_tep(struct ift_probe_session *s)
{
	int ret;

	if (!s->tep) {
		s->tep = load_formats(s->dir, s->name);
		if (!s->tep) {
			errno = errno ? errno : ENOMEM;
			return NULL;
		}
	}
	ret = resolve_ids(s);
	if (ret) {
		errno = ret > -IFT_E_BASE ? -ret : ENOENT;
		return NULL;
	}
	return s->tep;
}

const char *ift_probe_clock(const struct ift_probe_session *s)
{
	return s->clock;
}

size_t ift_probe_count(const struct ift_probe_session *s)
{
	return s ? s->n : 0;
}

const struct ift_probe *ift_probe_at(const struct ift_probe_session *s, size_t i)
{
	return s && i < s->n ? &s->probes[i] : NULL;
}

/* ---- teardown ------------------------------------------------------------ */

static void session_free(struct ift_probe_session *s)
{
	ift_tfs_setup_release();
	if (s->lock >= 0)
		close(s->lock);
	tracefs_instance_free(s->inst);
	if (s->tep)
		tep_free(s->tep);
	free(s->probes);
	free(s);
}

void ift_probe_session_destroy(struct ift_probe_session *s)
{
	if (!s)
		return;
	/* a set-up that failed is over: its own lock would be a set-up that
	   its teardown steps aside for */
	ift_tfs_setup_release();
	if (s->dir) {
		/* off and disabled first: an event enabled here cannot be deleted */
		inst_write(s, "tracing_on", "0");
		/* the probes one by one, each a grace period, stepping aside for
		   set-ups between them; then the rest, tracepoints, in one write */
		for (size_t i = 0; i < s->n; i++) {
			step_aside(s);
			enable_event(s, s->name, s->probes[i].entry_event, false);
			step_aside(s);
			enable_event(s, s->name, s->probes[i].ret_event, false);
		}
		inst_write(s, "events/enable", "0");
		/* a helper's teardown waits for nobody: it can wait for a
		   tool that reads an event's format */
		ift_tfs_group_destroy(s->dir, s->name, 5000);
		ift_tfs_instance_remove(s->dir, s->name);
		session_live = false;
	}
	/* the lock last: the objects are gone */
	session_free(s);
}

/*
 * The helper: out of the caller's session and terminal (a pipeline waits
 * for nobody but the caller) before the caller goes on (READY closed), it
 * waits for the caller to let go of the probes (GO closed), then closes its
 * own copies and tears down.  The caller may have threads: system calls
 * only before the wait, and after it the teardown's plain file writes
 * (glibc's malloc is safe after fork).
 */
static void __attribute__((noreturn)) helper_main(struct ift_probe_session *s, int go,
						  int ready)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t none;
	char c;

	setsid();
	/*
	 * The stop signals are the caller's: a helper has the caller's command
	 * line, and `pkill -f train.py` after the run ends must not leave its
	 * probes behind.  It ends by itself when the caller lets go or dies (GO
	 * closed either way), after a teardown of plain writes; SIGKILL still
	 * ends it, leaving a leftover that the next record removes.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null >= 0)
		for (int fd = 0; fd < 3; fd++)
			dup2(null, fd);
	close(ready);		/* detached: the caller may return */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	await_next_setup(s);
	/* each close of a probe's perf event (record --isolate) unregisters it */
	ift_fds_close_each(s->lock, step_aside, s);
	ift_probe_session_destroy(s);
	_exit(0);
}

pid_t ift_probe_session_hand_off(struct ift_probe_session *s, int *go)
{
	int p[2], r[2];
	pid_t pid;
	char c;

	*go = -1;
	if (!s || !s->dir || s->lock < 0)
		return -EOPNOTSUPP;
	inst_write(s, "tracing_on", "0");
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(r, O_CLOEXEC) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		close(r[0]);
		close(r[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[1]);
		close(r[0]);
		helper_main(s, p[0], r[1]);
	}
	close(p[0]);
	close(r[1]);
	/* until the helper has left our session and stdio: microseconds */
	while (read(r[0], &c, 1) < 0 && errno == EINTR)
		;
	close(r[0]);
	*go = p[1];
	session_live = false;
	session_free(s);
	return pid;
}
