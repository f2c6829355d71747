/* SPDX-License-Identifier: MIT */
#ifndef IFT_PROBE_H
#define IFT_PROBE_H

/*
 * probe: everything this run sets up in tracefs, and its removal.
 *
 * A session owns one private tracefs instance ("ingero_<pid>") with its own
 * buffer size, trace clock, pid filter and enabled events, and one uprobe
 * group ("ingero_<pid>") holding an entry and a return probe per traced
 * function.  Nothing global is changed.  ift_probe_session_destroy() removes
 * exactly what the session created; a run killed with SIGKILL leaves them
 * behind, and ift_probe_cleanup_leftovers() removes those of dead runs only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-discover.h"

struct tracefs_instance;
struct tep_handle;

/* Mounts tracefs when needed; returns its path (static) or NULL with errno. */
const char *ift_tracefs_dir(void);

/*
 * What the kernel offers, read from the files of its tracing directory:
 * nothing is written, created or enabled.  Where a feature leaves no file of
 * its own, it is told by one that came in the same release (the comment of
 * each field says which); ift_kfeatures() says what each is for.
 */
struct ift_tracefs_caps {
	const char *dir;		/* tracing directory, NULL if none */
	bool debugfs;			/* the files are in debugfs: no tracefs */
	bool tracefs;			/* !debugfs: its own file system (4.1) */
	bool uprobes;			/* uprobe_events (3.5) */
	/*
	 * Return probes (3.10) and the fetch-args $retval and +offs(%reg) of
	 * uprobes (3.14): from the probe syntax in README, which lists them
	 * since 4.9; before that, from instances/ (also 3.10) and the events'
	 * trigger files (also 3.14).
	 */
	bool uretprobes, fetch_args;
	bool instances;			/* instances/ (3.10) */
	bool pipe_raw;			/* per_cpu/cpuN/trace_pipe_raw, spliced */
	bool set_event_pid;		/* (4.4) */
	bool event_fork;		/* options/event-fork (4.7) */
	bool mono_clock;		/* "mono" in trace_clock (3.17) */
	bool sched_events;		/* switch, wakeup(_new), fork, exec, exit */
	bool sched_waking;		/* (4.3) */
	bool task_events;		/* task_newtask (3.3) */
	bool kmem_events;		/* kmem:mm_page_alloc */
	bool hist_triggers;		/* an event's hist file (CONFIG_HIST_TRIGGERS, 4.7) */
	/* perf's use_clockid (4.1), for --stack: seen as tracefs, its twin */
	bool perf_clockid;
	bool root;			/* can write tracefs */
	/*
	 * The rings mapped (mmap of trace_pipe_raw, 6.10), for --reader: no
	 * tracing file tells, only a mapping does, which the probe above does
	 * not try (ift_record_probe_mapping() does: RING_MMAP_TRIED).
	 */
	bool ring_mmap, ring_mmap_tried;
};

/* Finds (mounting it if need be) the tracing directory and reads it. */
int ift_tracefs_probe_caps(struct ift_tracefs_caps *caps);
/*
 * The same on the tracing files under DIR (a fake tree in tests), DEBUGFS
 * when they are debugfs's.  CAPS->dir points at DIR, which must outlive it.
 * 0, or -ENOENT when DIR is no directory.
 */
int ift_tracefs_probe_caps_at(const char *dir, bool debugfs,
			      struct ift_tracefs_caps *caps);

/*
 * ift_kfeature - one kernel feature recording uses, the release of Linux
 * that brought it, and what a recording does without it.  A static table
 * (ift_kfeatures()), in the order check lists them; the README's "Kernels"
 * table says the same.
 *
 * A recording is a set of IFT_KF_* bits: every one is IFT_KF_ALL, one that
 * follows given tasks (no -a) adds PIDS, one with functions to probe
 * UPROBES, one with host events (no --no-host) HOST, --stack STACK, and
 * one whose uprobes are armed in its own tasks only (--isolate) ISOLATE.
 * A feature a recording needs and lacks makes it refuse; one it only uses
 * and lacks, it does without.  test-probe holds the table's releases
 * against fake trees of older kernels, and the README's table against it.
 */
enum {
	IFT_KF_ALL = 1,
	IFT_KF_UPROBES = 2,
	IFT_KF_HOST = 4,
	IFT_KF_STACK = 8,
	IFT_KF_PIDS = 16,
	IFT_KF_ISOLATE = 32,
	IFT_KF_PAGE_COUNT = 64,		/* record --page-allocs=count */
	IFT_KF_PROFILE = 128,		/* record --profile (a command or -p) */
};

struct ift_kfeature {
	const char *id;			/* stable, for check --json */
	const char *name;		/* "uretprobes", as check names it */
	const char *since;		/* "3.10": the release that brought it */
	const char *use;		/* what recording uses it for */
	const char *without;		/* what a recording does, or loses, without it */
	const char *fix;		/* what gets it */
	unsigned needs;			/* IFT_KF_*: the recordings that refuse without it */
	unsigned uses;			/* IFT_KF_*: the recordings that use it */
	size_t cap;			/* offsetof its bool in struct ift_tracefs_caps */
};

/* The table and its length; static, changes nothing. */
const struct ift_kfeature *ift_kfeatures(size_t *n);
/* The table's entry for ID, or NULL. */
const struct ift_kfeature *ift_kfeature_find(const char *id);
bool ift_kfeature_have(const struct ift_kfeature *f, const struct ift_tracefs_caps *caps);
/*
 * F in one line, into BUF (always terminated): "NAME: USE" when the kernel
 * has it, else "NAME: none; Linux SINCE brought it; WITHOUT".
 */
void ift_kfeature_str(const struct ift_kfeature *f, bool have, char *buf, size_t len);
/* The first feature CAPS lacks that recording RUN (IFT_KF_* bits) needs, or NULL. */
const struct ift_kfeature *ift_kfeature_refusal(const struct ift_tracefs_caps *caps,
						unsigned run);
/* Whether recording RUN does without F here: CAPS lacks it, RUN uses, not needs, it. */
bool ift_kfeature_done_without(const struct ift_kfeature *f,
			       const struct ift_tracefs_caps *caps, unsigned run);

/* One traced function of one library, as set up in tracefs. */
struct ift_probe {
	const struct ift_lib *lib;
	const struct ift_sym *sym;
	char entry_event[64];		/* event names in the session's group */
	char ret_event[64];
	int entry_id, ret_id;		/* tep event ids, -1 until resolved */
};

struct ift_probe_opts {
	unsigned buffer_kb;		/* per CPU; 0 = kernel default */
	bool host_events;		/* sched + kmem tracepoints */
	bool kernel_filter;		/* set_event_pid + event-fork; false: trace
					   every task, filter in user space */
	bool all_tasks;			/* -a: no pid filter at all */
	/* --isolate: uprobes created, not enabled in the instance; the caller
	   opens them as perf events (ift-perfring.h) */
	bool perf_uprobes;
	/* --page-allocs=count: kmem:mm_page_alloc not enabled, but counted per
	   thread and order by a hist trigger of the instance, from
	   ift_probe_start() (the pid filter is set by then) */
	bool page_count;
};

struct ift_probe_session;

/*
 * ift_probe_session_create - create the instance (tracing off), set its trace
 * clock to mono when the kernel has it, its buffer size, and the host
 * events.  Changes the running system; undo with ift_probe_session_destroy().
 */
int ift_probe_session_create(const struct ift_probe_opts *opts,
			     struct ift_probe_session **out);

/*
 * ift_probe_add_lib - create the entry and return probes of every symbol of
 * LIB (which must outlive the session) and enable them in the instance
 * (unless perf_uprobes).
 * Returns the number of functions probed or a negative error.
 */
int ift_probe_add_lib(struct ift_probe_session *s, const struct ift_lib *lib);

/*
 * ift_probe_add_twin - a second entry uprobe at the place of probe I, without
 * arguments and not enabled in the instance, for perf_event_open(): the
 * kernel lets a uprobe event serve ftrace or perf, not both at once (EINTR).
 * Removed with the group.  Returns its tracepoint id or a negative error.
 */
int ift_probe_add_twin(struct ift_probe_session *s, size_t i);

/* Adds pids to the instance's set_event_pid (no-op without kernel filtering). */
int ift_probe_add_pids(struct ift_probe_session *s, const pid_t *pids, size_t n);

/*
 * ift_probe_setup_begin - this process sets up a recording: from now until
 * ift_probe_start() (or the session's end) it holds the set-up lock, and
 * other runs' teardowns step aside between probes (src/probe/probe.h says
 * why).  Taken as early as possible, a teardown's probe in flight ends while
 * the caller finds its libraries.  ift_probe_session_create() takes it too,
 * where the caller did not.  Returns 0 or -IFT_E_NO_TRACEFS.
 */
int ift_probe_setup_begin(void);

/*
 * Turns tracing on in the instance (and the page-allocation count, if
 * asked), and lets go of the set-up lock.
 */
int ift_probe_start(struct ift_probe_session *s);
/* Turns tracing off (the buffers keep what they hold), the count paused. */
int ift_probe_stop(struct ift_probe_session *s);

/* One entry of a page-allocation count: HITS allocations of ORDER by TID. */
typedef int (*ift_page_count_fn)(void *ctx, uint32_t tid, unsigned order, uint64_t hits);

/*
 * ift_probe_page_counts - the page_count session's counts (read from its
 * hist file; call it after ift_probe_stop()): FN for each thread and order,
 * the allocations the kernel's table had no room for in *DROPPED.  0, FN's
 * negative return, or an error.  Changes nothing.
 */
int ift_probe_page_counts(struct ift_probe_session *s, ift_page_count_fn fn, void *ctx,
			  uint64_t *dropped);

/*
 * ift_hist_parse - TEXT, a hist file of keys common_pid and order with
 * hitcount: FN for each entry, the Dropped total in *DROPPED.  0, FN's
 * negative return, or -IFT_E_CORRUPT for an entry it cannot read.
 */
int ift_hist_parse(const char *text, ift_page_count_fn fn, void *ctx, uint64_t *dropped);
/*
 * How ift_probe_trap_cost() arms its pair when not in the instance: ARM
 * gets the tracepoint ids of the entry and return events and arms them as
 * the recording arms its own (record --isolate: perf events on the calling
 * thread); DISARM, called once after a successful ARM, closes them.
 */
struct ift_trap_arm {
	int (*arm)(void *ctx, int entry_id, int ret_id);
	void (*disarm)(void *ctx);
	void *ctx;
};

/*
 * ift_probe_trap_cost - what an entry uprobe and its return probe cost the
 * thread that calls the probed function, here and now: a pair set in the
 * session's group on a function of this program's own, enabled in its
 * instance (ARM NULL) or armed by ARM, timed over a few rounds of calls
 * (the fastest, in wall-clock ns, less the same calls unprobed), then
 * removed.  Call it before ift_probe_start(): with tracing off the pair
 * records nothing in the instance (a perf event armed by ARM writes its
 * records).  Returns 0 with *NS >= 1, or a negative error (the pair is
 * removed either way).
 */
int ift_probe_trap_cost(struct ift_probe_session *s, const struct ift_trap_arm *arm,
			uint64_t *ns);

struct tracefs_instance *ift_probe_instance(struct ift_probe_session *s);
/* The event formats of the instance (tracepoints and our uprobes); owned by S. */
struct tep_handle *ift_probe_tep(struct ift_probe_session *s);
/* The trace clock in use ("mono", or "local" when mono is missing). */
const char *ift_probe_clock(const struct ift_probe_session *s);

size_t ift_probe_count(const struct ift_probe_session *s);
const struct ift_probe *ift_probe_at(const struct ift_probe_session *s, size_t i);

/*
 * ift_probe_session_destroy - disable everything, delete the probes and the
 * instance, free S.  Safe on a half-built session and to call with NULL.
 */
void ift_probe_session_destroy(struct ift_probe_session *s);

/*
 * ift_probe_session_hand_off - stop tracing now and leave the rest of the
 * teardown, seconds of it (each enabled uprobe waits out an RCU grace period
 * as it is disabled), to a helper process of its own session, which does
 * what ift_probe_session_destroy() does once the caller closes *GO.  Close
 * *GO after every other descriptor that holds the probes (perf events):
 * their last close, which unregisters probes too, is then the helper's.
 * The helper keeps the session's lock on its instance until the instance is
 * gone, so that leftover cleaners (and a killed helper's, later) know it.
 * Frees S.  Returns the helper's pid, or a negative error with S untouched
 * (no lock to mark the helper's work, fork failed): then destroy it.
 */
pid_t ift_probe_session_hand_off(struct ift_probe_session *s, int *go);

/* A tracefs object left by a run that no longer exists. */
#define IFT_LEFTOVER_HOLDERS 4

struct ift_leftover {
	char kind[16];			/* "uprobe group" or "instance" */
	char name[64];
	pid_t owner;			/* the dead recorder's pid */
	/* processes with a file of the instance open (an orphaned command
	   reading its trace_pipe_raw): it cannot be removed while they live */
	unsigned nholders;		/* all of them; the first few below */
	struct {
		pid_t pid;
		char comm[16];
	} holders[IFT_LEFTOVER_HOLDERS];
};

/*
 * ift_probe_find_leftovers - groups and instances named ingero_<pid> whose
 * recorder is gone: the pid is dead, a zombie, or a process that started
 * after the instance was made (the pid was reused).  Never this process's,
 * a live ingero-ftrace's, or other tools' objects.
 * Fills up to MAX entries; returns how many exist or a negative error.
 */
int ift_probe_find_leftovers(struct ift_leftover *v, size_t max);
/*
 * The holders of L in words, "pid 12 (python3), pid 34 (sleep) and 2 more",
 * into BUF (always terminated); "" when none.  Changes nothing.
 */
void ift_leftover_holders_str(const struct ift_leftover *l, char *buf, size_t len);
/*
 * The runs that have ended whose helper (ift_probe_session_hand_off()) is
 * still removing their objects: never leftovers.  A count, or an error.
 */
int ift_probe_count_teardowns(void);
/*
 * Removes them; returns the number removed or a negative error.  An
 * instance still held open (EBUSY) is no error: it stays, with its group's
 * events disabled, until a later call can remove it.
 */
int ift_probe_cleanup_leftovers(void);

#endif
