/* SPDX-License-Identifier: MIT */
#ifndef IFT_PERFRING_H
#define IFT_PERFRING_H

/*
 * perfring: the uprobe events of a recording read as per-task perf events
 * (record --isolate), not enabled in the tracefs instance.
 *
 * A uprobe enabled in tracefs is armed in every process that maps its file,
 * traced or not: each of their calls traps (~1 us).  Opened with
 * perf_event_open() on a task, the same event makes the kernel arm the
 * breakpoint only in the tasks some perf event wants it in (uprobe_perf_filter),
 * so processes outside the trace pay nothing.  Each event is opened on each
 * traced task once per CPU, with inherit, so the threads and processes the
 * task creates later carry it too; all events of a CPU write into one ring
 * (PERF_EVENT_IOC_SET_OUTPUT), whose records are the same raw bytes a
 * tracefs ring holds (PERF_SAMPLE_RAW), stamped with the trace clock.
 * One ring per CPU, events x CPUs descriptors per task attached.
 *
 * Threads: ift_perfring_read() and ift_perfring_pending() may run on a
 * reader thread while the caller's thread attaches, adds events, disables
 * and asks for the stats; the rest (alloc, free) on the caller's alone.
 *
 * Reads perf rings; nothing here prints or exits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IFT_PERFRING_DEFAULT_KB	1024

struct ift_perfring_opts {
	unsigned ring_kb;	/* per CPU; 0 = IFT_PERFRING_DEFAULT_KB */
	bool mono;		/* stamp with CLOCK_MONOTONIC (trace clock "mono"),
				   else perf's own clock (trace clock "local") */
};

struct ift_perfring;

/* Allocates the state, nothing opened.  The caller frees it with ift_perfring_free(). */
int ift_perfring_alloc(const struct ift_perfring_opts *opts, struct ift_perfring **out);

/* Adds tracepoint TP_ID (a uprobe event of the session); returns its index or -ENOMEM. */
int ift_perfring_add_event(struct ift_perfring *p, int tp_id);

/* The number of events added. */
size_t ift_perfring_nevents(const struct ift_perfring *p);

/*
 * ift_perfring_attach - open events [FROM, nevents) on task TID on every CPU,
 * following the tasks it creates from now on.  Changes the running system:
 * the breakpoints are armed in TID's process until ift_perfring_free().
 * 0, -ESRCH when the task is gone, or another negative error.
 */
int ift_perfring_attach(struct ift_perfring *p, pid_t tid, size_t from);

/* Stops every event (tracing stopped): the rings keep what they hold. */
void ift_perfring_disable(struct ift_perfring *p);

/*
 * ift_perfring_settle - once P is disabled and its rings read for the last
 * time: the records the kernel dropped and never told of (a ring full at
 * the last calls: it tells a loss only in front of the next record that
 * fits) are counted lost, from what the events counted themselves.  Where
 * a count cannot be read, the losses stay as told.
 */
void ift_perfring_settle(struct ift_perfring *p);

/* One uprobe record: its CPU, trace-clock time and raw bytes (common fields first). */
typedef int (*ift_perfring_fn)(void *ctx, int cpu, uint64_t ts, const void *raw,
			       uint32_t size);

/*
 * ift_perfring_read - hands FN each record of CPU's ring, in the order the
 * kernel wrote them (time order on one CPU), and frees them.  Records the
 * kernel dropped are counted (ift_perfring_lost).  Returns the records
 * read, or FN's negative return.
 */
int ift_perfring_read(struct ift_perfring *p, int cpu, ift_perfring_fn fn, void *ctx);

/*
 * The descriptor to poll() for CPU's ring (-1 while it has none): POLLIN
 * once it is an eighth full, POLLHUP for good once the task whose event
 * holds the ring has exited (the ring still fills: read it on a timer).
 */
int ift_perfring_fd(struct ift_perfring *p, int cpu);

/* The bytes CPU's ring holds, unread; its size in *SIZE. */
size_t ift_perfring_pending(struct ift_perfring *p, int cpu, size_t *size);

/* The CPUs (rings) there may be. */
int ift_perfring_ncpus(const struct ift_perfring *p);

struct ift_perfring_stats {
	uint64_t records;	/* uprobe records read */
	uint64_t lost;		/* records the rings dropped */
	uint64_t fds;		/* perf events open */
	uint64_t tasks;		/* attaches */
	uint64_t ring_bytes;	/* the data area of each ring */
};
void ift_perfring_stats(struct ift_perfring *p, struct ift_perfring_stats *st);

/* Closes the events (disarming the breakpoints) and frees P (NULL is fine). */
void ift_perfring_free(struct ift_perfring *p);

#endif
