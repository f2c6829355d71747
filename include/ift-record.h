/* SPDX-License-Identifier: MIT */
#ifndef IFT_RECORD_H
#define IFT_RECORD_H

/*
 * record: the recording as a whole, stages wired together.
 *
 *   discover -> probe (tracefs) -> ring -> decode -> trace writer
 *
 * The CLI creates a recorder, starts it, calls ift_recorder_poll() until the
 * traced command ends (or the user stops it), then finishes and destroys it.
 * ift_recorder_destroy() always removes what the recording created in tracefs
 * (ift_recorder_destroy_behind() through a helper process).
 * Nothing here prints or exits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-discover.h"
#include "ift-trace.h"

/*
 * How the tracefs rings are read (record --reader).  Spliced by default:
 * mapped, the recorder's peak RSS holds the rings' pages (3.9 MiB more
 * here) and a probed call cost more (docs/benchmarks.md).
 */
enum ift_reader {
	IFT_READER_SPLICE = 0,	/* spliced, copied once into a queue a thread fills */
	IFT_READER_AUTO,	/* mapped where the kernel maps them, else spliced */
	IFT_READER_MMAP,	/* mapped and parsed in place (Linux 6.10), or refuse */
};

struct ift_record_opts {
	const char *output;		/* trace file path */
	char *const *argv;		/* the command (for discovery and metadata), or NULL */
	char *const *envp;		/* its environment */
	const char *const *cuda_libs;	/* --cuda-lib: only these libraries */
	size_t ncuda_libs;
	const pid_t *pids;		/* -p */
	size_t npids;
	bool all;			/* -a: the whole system */
	bool no_host;			/* CUDA calls only: no sched/kmem events */
	/* --page-allocs=count: page allocations counted per thread in the
	   kernel (a hist trigger), no row each */
	bool page_count;
	bool user_filter;		/* filter tasks in user space (hidden flag) */
	unsigned buffer_kb;		/* per-CPU ring buffer; 0 = kernel default */
	enum ift_reader reader;		/* --reader */
	bool stack;			/* --stack: the call site of each call */
	const char *const *stack_ops;	/* only these ops (NULL: every op) */
	size_t nstack_ops;
	unsigned stack_bytes;		/* user stack copied per call; 0 = 16 KiB */
	unsigned stack_period;		/* one call in N per op and CPU; 0 = 1 */
	/* --py-stack: with the Python frames of the calling thread, for these
	   ops of the stack_ops (NULL: all of them) */
	bool py_stack;
	const char *const *py_ops;
	size_t npy_ops;
	/* --isolate: uprobes armed only in the traced tasks (perf events),
	   not in every process that maps the library */
	bool isolate;
	/* --profile=HZ: each traced task's stack every 1/HZ s of its CPU time
	   (0: off) */
	unsigned profile_hz;
	/* NVML, loaded by a helper run as RUN_AS: this file (NULL: the
	   loader's libnvidia-ml.so.1), or none at all */
	const char *nvml_lib;
	bool no_nvml;
	/* --rotate: a new piece (FILE.N.trace) once one has this many bytes,
	   or is this old; 0, 0: one file */
	uint64_t rotate_bytes, rotate_ns;
	uint64_t max_bytes;		/* --max-size: stop past it; 0: no bound */
	/* --keep-last: only the last KEEP_NS of events, in a spool of pieces
	   beside the output; a snapshot of them (FILE.N.trace) on
	   ift_recorder_snapshot() and, with --trigger OP>DUR, AFTER_NS after
	   a call of TRIGGER_OP that lasted longer than TRIGGER_NS */
	uint64_t keep_ns;
	const char *trigger_op;
	uint64_t trigger_ns, after_ns;
#define IFT_PROFILE_DEFAULT_HZ	99	/* off the beat of 100 Hz timers */
#define IFT_PROFILE_MAX_HZ	1000
	uid_t file_uid;			/* owner of the trace file; (uid_t)-1 = leave */
	gid_t file_gid;
	/* the command's user (NULL: ours), for discovery and the NVML helper */
	const struct ift_creds *run_as;
	/* set (by a signal handler) to give up: set-up returns -EINTR soon */
	const volatile sig_atomic_t *stop;
};

struct ift_recorder;

/*
 * ift_recorder_create - discover libraries, set up the tracefs instance and
 * probes (tracing still off) and open the trace file; -EINTR as soon as
 * *OPTS->stop is set.  Changes the running
 * system: undo with ift_recorder_destroy(), also on failure of later steps.
 * On failure *OUT may still hold a recorder to destroy.  0 or a negative error;
 * ift_recorder_error() says which step failed.
 */
int ift_recorder_create(const struct ift_record_opts *opts,
			struct ift_recorder **out);

/* Which step failed last, e.g. "create the tracefs instance". */
const char *ift_recorder_error(const struct ift_recorder *r);

/* The libraries probed. */
const struct ift_libset *ift_recorder_libs(const struct ift_recorder *r);

struct ift_kfeature;
struct ift_tracefs_caps;

/* What a recording makes of what the kernel offers. */
struct ift_record_plan {
	unsigned run;			/* IFT_KF_*: what it is (ift-probe.h) */
	/* the feature it needs and the kernel lacks: it refuses; else NULL */
	const struct ift_kfeature *refusal;
	bool user_filter;		/* tasks filtered in user space */
	bool isolate;			/* uprobes as per-task perf events */
	/* --profile's rate (0: off, and with -a, or without use_clockid or
	   the mono clock: its samples must line up with the events) */
	unsigned profile_hz;
	/* what it does without (set_event_pid, for which it filters in user
	   space; mono, for which it takes the local clock...) */
	const struct ift_kfeature *without[16];
	size_t nwithout;
};

/*
 * ift_record_plan - the recording OPTS asks for, on a kernel that offers
 * CAPS, with PROBES when there are functions to probe.  Pure: reads
 * nothing, changes nothing; the table entries are static.
 */
void ift_record_plan(const struct ift_record_opts *opts, const struct ift_tracefs_caps *caps,
		     bool probes, struct ift_record_plan *plan);

/*
 * The Ith kernel feature this recording does without (its plan's), or NULL
 * past the last.  A feature it cannot do without makes ift_recorder_create()
 * fail with -IFT_E_OLD_KERNEL, and ift_recorder_error() name it.
 */
const struct ift_kfeature *ift_recorder_without(const struct ift_recorder *r, size_t i);

/*
 * ift_record_probe_mapping - whether this kernel maps its rings (mmap of
 * trace_pipe_raw, Linux 6.10), which no tracing file tells: tried on an
 * instance of its own, created and removed here, into CAPS->ring_mmap
 * (RING_MMAP_TRIED set).  0, or a negative error when it could not try
 * (not root, no instances).
 */
int ift_record_probe_mapping(struct ift_tracefs_caps *caps);

/* Adds a task (a child about to exec, a -p process) to the traced set. */
int ift_recorder_add_pid(struct ift_recorder *r, pid_t pid);

/* Turns tracing on. */
int ift_recorder_start(struct ift_recorder *r);

/*
 * ift_recorder_poll - read, decode and write what the ring buffers hold,
 * sample /proc every 100 ms and flush the file every second; waits up to
 * TIMEOUT_MS when there was nothing to read.  0 or a negative error.
 */
int ift_recorder_poll(struct ift_recorder *r, int timeout_ms);

struct ift_record_status {
	uint64_t elapsed_ns;
	uint64_t events;		/* kernel records read */
	uint64_t lost;			/* events the kernel dropped (so far) */
	uint64_t bytes;			/* trace file size (with --rotate, every piece's) */
	uint64_t rows[IFT_T_NR];	/* rows written per table */
	uint64_t filtered, unpaired_returns;
	/* events committed after the merge had passed them, kept at its point */
	uint64_t late, late_max_ns;
	/* open calls closed unreturned when a thread had 256 open */
	uint64_t nest_closed;
	/* --stack */
	uint64_t stack_samples, stack_lost, stack_sites, stack_matched;
	uint64_t stack_unwind_ns;
	/* --py-stack */
	uint64_t py_in_flight, py_late, py_read, py_read_ns;
	/* --profile: stacks sampled, and dropped (lost, late) */
	uint64_t prof_samples, prof_dropped;
	uint64_t py_lag_p50_ns, py_lag_p99_ns;
	/* NVML: what its helper said ("ok N", or why none; NULL: nothing yet,
	   or --no-nvml), and the GPU rows written */
	const char *gpu_status;
	unsigned gpu_devices;
};
void ift_recorder_status(struct ift_recorder *r, struct ift_record_status *st);

/*
 * --keep-last: a snapshot of the keep_ns that end at ASKED_NS (CLOCK_MONOTONIC
 * when it was asked for, no later than now), written once every event up to
 * then is in (a later poll), unless one is due already.  Safe to call from
 * the main loop only (not a signal handler).
 */
void ift_recorder_snapshot(struct ift_recorder *r, uint64_t asked_ns);
/* The snapshots written so far; the last one's path in *PATH, and the last
   error of one that could not be written (0: none) in *ERR. */
unsigned ift_recorder_snapshots(const struct ift_recorder *r, const char **path, int *err);

/* --max-size reached: the caller ends the recording and says why. */
bool ift_recorder_full(const struct ift_recorder *r);
/* The file written now (with --rotate the last piece), and *PIECES
   written (0: one file, no pieces). */
const char *ift_recorder_path(const struct ift_recorder *r, unsigned *pieces);

/*
 * ift_recorder_finish - stop tracing, read what is left, store the loss
 * counters, EXIT_STATUS (< 0: none) and the stop time, and finish the file
 * (rename from .part).  0 or a negative error.
 */
int ift_recorder_finish(struct ift_recorder *r, int exit_status);

/*
 * ift_recorder_destroy - remove the probes and the instance, free R.  A file
 * not finished stays as .part, readable up to its last flush.  R may be NULL.
 */
void ift_recorder_destroy(struct ift_recorder *r);

/*
 * ift_recorder_destroy_behind - the same, but what takes seconds (disabling
 * each enabled uprobe waits out an RCU grace period) is left to a helper
 * process, which ift_probe_find_leftovers() never takes for a leftover and
 * whose unfinished work (it was killed) the next cleanup completes.  Returns
 * the helper's pid, or 0 when everything was removed here.
 */
pid_t ift_recorder_destroy_behind(struct ift_recorder *r);

/* ---- the traced command --------------------------------------------- */

struct ift_child;

/*
 * ift_child_spawn - fork a child that waits until ift_child_release() and then
 * executes ARGV (PATH searched).  With AS (not NULL) the child first takes
 * exactly its groups, gid and uid, and exits with 127 if it cannot.  Returns
 * the pid or a negative error; *OUT holds the handle.
 */
pid_t ift_child_spawn(char *const *argv, const struct ift_creds *as,
		      struct ift_child **out);
/*
 * ift_child_release - let the child exec.  Returns 0, or -errno of a failed
 * exec (the child has then exited with 127).
 */
int ift_child_release(struct ift_child *c);
void ift_child_free(struct ift_child *c);

/* Monotonic time in ns (the trace clock `mono'). */
uint64_t ift_now_ns(void);

#endif
