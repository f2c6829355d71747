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

/* What the kernel offers; each probe is harmless and creates nothing lasting. */
struct ift_tracefs_caps {
	const char *dir;		/* tracefs mount point, NULL if none */
	bool debugfs;			/* found only under debugfs/tracing */
	bool uprobes, uretprobes, instances, set_event_pid, event_fork;
	bool mono_clock;
	bool sched_events, kmem_events;
	bool root;			/* can write tracefs */
};
int ift_tracefs_probe_caps(struct ift_tracefs_caps *caps);

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
 * LIB (which must outlive the session) and enable them in the instance.
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

/* Turns tracing on in the instance. */
int ift_probe_start(struct ift_probe_session *s);
/* Turns tracing off (the buffers keep what they hold). */
int ift_probe_stop(struct ift_probe_session *s);

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
 * Removes them; returns the number removed or a negative error.  An
 * instance still held open (EBUSY) is no error: it stays, with its group's
 * events disabled, until a later call can remove it.
 */
int ift_probe_cleanup_leftovers(void);

#endif
