/* SPDX-License-Identifier: MIT */
#ifndef IFT_ANALYZE_H
#define IFT_ANALYZE_H

/*
 * The analyzer: one streaming pass over a trace (every table, in time order)
 * that drives a per-thread scheduler state machine and measures every CUDA
 * call against it.  docs/report.md says what each figure means.
 *
 * Memory is bounded by the number of tasks, CPUs and CUDA calls, never by
 * the number of host events.  Nothing here prints, exits or touches tracefs;
 * errors are negative return values (ift-error.h).
 *
 * Times in the results are offsets in ns from the trace start
 * (ift_analysis_summary()->start_ts) unless a field says "ts", which is the
 * trace clock itself.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ift-trace.h"

/* Where a thread is, as switches and wake-ups tell it. */
enum ift_sched_state {
	IFT_SCHED_UNKNOWN = 0,	/* no event of the thread yet: no time counted */
	IFT_SCHED_RUNNING,	/* on a CPU */
	IFT_SCHED_RUNNABLE,	/* preempted, or woken, and waiting for a CPU */
	IFT_SCHED_BLOCKED,	/* switched out sleeping, not yet woken */
	IFT_SCHED_EXITING,	/* exited: its switches still count, its time
				   no longer does */
};

/* What the scheduler did to one thread (or a process: summed). */
struct ift_sched_stats {
	uint64_t on_cpu_ns;
	uint64_t runqueue_wait_ns;	/* runnable but not running */
	uint64_t blocked_ns;		/* sleeping until woken */
	uint64_t blocked_io_ns;		/* of it, in uninterruptible sleep (D): disk
					   or other I/O, a kernel lock */
	uint64_t involuntary;		/* switched out runnable (R, R+) */
	uint64_t voluntary;		/* switched out sleeping */
	uint64_t wakeups;		/* blocked -> runnable */
	uint64_t max_off_cpu_ns;	/* longest switch-out to switch-in */
	uint64_t max_off_cpu_at;	/* offset where that stall began */
	uint64_t page_allocs;
	uint64_t page_alloc_bytes;	/* 4096 << order each */
};

/* Off-CPU time: runnable or blocked, what report ranks stalls by. */
static inline uint64_t ift_sched_off_cpu(const struct ift_sched_stats *s)
{
	return s->runqueue_wait_ns + s->blocked_ns;
}

/* Copy directions: cudaMemcpyKind values, then what we could not tell. */
enum ift_copy_dir {
	IFT_COPY_H2H, IFT_COPY_H2D, IFT_COPY_D2H, IFT_COPY_D2D, IFT_COPY_DEFAULT,
	IFT_COPY_OTHER, IFT_COPY_NR
};

struct ift_copy_stats {
	uint64_t calls, bytes, total_ns;	/* bandwidth = bytes / total_ns */
};

struct ift_err_count {
	int64_t ret;
	uint64_t calls;
};

/* Calls of another op made directly inside the calls of this one. */
struct ift_inner_op {
	uint32_t op;
	const char *name;
	uint64_t calls, total_ns;
};

/*
 * One op (a CUDA function) over a set of calls: the whole trace, a process
 * or a thread.  Durations are exact; percentiles are nearest-rank over every
 * call of the set.
 */
struct ift_op_stats {
	uint32_t op;			/* op id in the trace */
	const char *name;
	enum ift_api api;
	uint64_t calls;
	uint64_t nested_calls;		/* of them, inside another traced call */
	uint64_t errors;		/* non-zero return */
	uint64_t total_ns, mean_ns, min_ns, p50_ns, p95_ns, p99_ns, max_ns;
	uint64_t bytes;			/* "bytes" argument, or width * height */
	bool copy;			/* a memory copy: dir[] is filled */
	struct ift_copy_stats dir[IFT_COPY_NR];
	uint64_t callers_wall_ns;	/* wall time of the threads that called it */
	size_t nerrs;
	const struct ift_err_count *errs;	/* by return code, most calls first */
	size_t ninner;
	const struct ift_inner_op *inner;	/* most time first */
	/* the calls per latency bin (ift_lat_bin(), IFT_LAT_BINS of them): in
	   the trace's table (ift_analysis_op()), NULL in a process's or a
	   thread's */
	const uint64_t *lat_bins;
};

/*
 * Why a task has its role: what it was seen doing, never its name alone.
 * A feeder's wake-ups end the blocked gaps (no call open) of a CUDA thread;
 * a relay is a thread of the CUDA process that passes on the wake-ups of
 * another process's tasks (it was woken by one during the CUDA thread's
 * wait, then woke the CUDA thread).  docs/report.md says how each role is
 * chosen.
 */
struct ift_role_evidence {
	const char *behaviour;		/* "cuda calls", "fed", "relayed" */
	uint32_t cuda_tid, cuda_pid;	/* the CUDA thread it fed or relayed to */
	uint64_t wakeups;		/* fed: its wake-ups that ended that thread's
					   blocked gaps, relayed or not; relayed:
					   the wake-ups it passed on */
	uint64_t ns;			/* the blocked time those ended */
	uint64_t relayed_wakeups;	/* fed: of them, through a relay */
	uint32_t via_tid;		/* fed: the relay most of them went through */
	uint32_t from_pid;		/* relayed: whose wake-ups it passed on most */
	uint64_t calls;			/* cuda calls: its outermost calls; relayed:
					   its pinned-memory calls (cudaHostAlloc ...) */
	uint32_t forked_from;		/* input worker: the traced process it was
					   forked from (its parent), 0: not seen */
	const char *name;		/* a name that confirms the role
					   (pt_data_worker, pt_data_pin), or NULL */
};

/*
 * A CUDA thread's training loop: the stretch of its outermost calls that
 * repeats one sequence of ops.  Before it is the start-up (imports, the
 * dataset, the first batch), after it the tail; a thread with no loop is
 * all start-up.  The steady state is where a host cause costs every step.
 */
enum ift_stage { IFT_STAGE_STARTUP = 1, IFT_STAGE_STEADY, IFT_STAGE_TAIL };

struct ift_loop_info {
	uint32_t period;		/* calls per iteration; 0: no loop */
	uint64_t iterations;		/* of the steady state */
	uint64_t warmup;		/* leading iterations over 4x the median:
					   start-up, not counted above */
	uint64_t calls;			/* outermost calls of the thread, in all */
	uint64_t from_ts, to_ts;	/* the steady state: the entry of its first
					   call to the end of its last (trace
					   clock); 0 without a loop */
	uint64_t from_ns, to_ns;	/* the same as offsets */
};

/* The stage of trace-clock time TS (a gap's end, a call's entry) in L. */
enum ift_stage ift_loop_stage(const struct ift_loop_info *l, uint64_t ts);
const char *ift_stage_name(enum ift_stage stage);	/* "startup" ... */

/*
 * What a task does for the GPU, from what it was seen doing (roles.c,
 * docs/report.md, Roles).  A process has the role of the thread that gave
 * it one: IFT_ROLE_CUDA_PROCESS for a CUDA thread's, or an input worker's.
 */
enum ift_role {
	IFT_ROLE_NONE,
	IFT_ROLE_CUDA_THREAD,
	IFT_ROLE_CUDA_PROCESS,
	IFT_ROLE_INPUT_WORKER,
	IFT_ROLE_INPUT_THREAD,
	IFT_ROLE_RELAY,
	IFT_ROLE_PIN_MEMORY,
	IFT_ROLE_NR
};

/* Its name in every output ("cuda thread", ...); NULL for IFT_ROLE_NONE. */
const char *ift_role_name(enum ift_role role);

struct ift_thread_info {
	uint32_t tid, pid, ppid;
	const struct ift_task *task;	/* in the trace's task table, or NULL */
	enum ift_role role;		/* role_evidence says why */
	const struct ift_role_evidence *role_evidence;	/* NULL without a role */
	bool started, exited;		/* inside the trace, per the task table */
	uint64_t start_ns, end_ns;	/* its wall time inside the window */
	uint64_t first_ns, last_ns;	/* first and last event about it */
	struct ift_sched_stats sched;
	uint64_t cuda_calls, cuda_ns;	/* outermost calls only */
	struct ift_loop_info loop;	/* of every call in the window, any filter */
	size_t nops;
	const struct ift_op_stats *ops;	/* most time first */
};

struct ift_prof_group;

struct ift_process_info {
	uint32_t pid, ppid;
	const char *comm;		/* its last name */
	size_t nnames;
	const char *const *names;	/* every name it had, oldest first */
	enum ift_role role;		/* CUDA process, input worker or none */
	const struct ift_role_evidence *role_evidence;	/* its thread's that gave
							   it the role */
	uint64_t start_ns, end_ns;
	size_t nthreads;
	const struct ift_thread_info *const *threads;	/* by tid */
	struct ift_sched_stats sched;	/* summed over its threads; max for the stall */
	uint64_t cuda_calls, cuda_ns;
	size_t nops;
	const struct ift_op_stats *ops;
	/* its threads' CPU profile, all of it (record --profile), or NULL */
	const struct ift_prof_group *profile;
};

/*
 * One CUDA call with what happened to its thread inside it.  on_cpu_ns +
 * runqueue_wait_ns + blocked_ns is dur_ns but for time the state machine could
 * not tell (lost events).
 */
struct ift_call_info {
	uint64_t ts;			/* entry, trace clock */
	uint64_t dur_ns;
	int64_t ret;
	uint64_t bytes;
	uint64_t on_cpu_ns, runqueue_wait_ns, blocked_ns;
	uint64_t max_off_cpu_ns;	/* longest single stall inside it */
	uint64_t page_alloc_bytes;	/* by its own thread, inside it */
	uint32_t tid, pid, op;
	uint32_t flags, depth;		/* IFT_CALL_F_*, nesting depth */
	uint32_t parent;		/* 1 + index of the enclosing call; 0 none */
	uint32_t involuntary, voluntary;	/* switch-outs inside it */
	uint32_t page_allocs;
	uint32_t attr_first, nattr;	/* see ift_analysis_call_attrs() */
	uint64_t stack;			/* its call site (record --stack), 0: none */
	int8_t copy_dir;		/* enum ift_copy_dir; -1: not a copy */
	bool selected;			/* passes the pid and op filters */
	bool counted;			/* in the op tables: selected, and its
					   thread listed (set when the pass ends) */
};

enum ift_attr_kind {
	IFT_ATTR_RAN = 1,	/* ran on the CPU while the caller waited to run */
	IFT_ATTR_WOKE,		/* woke the caller: ended a blocked wait */
};

/* Who took the time a call spent off its CPU. tid 0 is the idle task or an
   interrupt. */
struct ift_call_attr {
	uint32_t tid, pid;
	uint32_t kind;		/* enum ift_attr_kind */
	uint32_t count;		/* waits (RAN) or wake-ups (WOKE) */
	uint64_t ns;		/* run-queue wait (RAN) or blocked time ended (WOKE) */
};

/* A closed interval of one thread's state, as the state machine saw it. */
struct ift_interval {
	uint32_t tid, pid;
	enum ift_sched_state state;
	uint64_t start_ts, end_ts;	/* trace clock */
	uint32_t cpu;
	bool io;			/* BLOCKED in uninterruptible sleep (D) */
	/* RUNNABLE: the task switched in when it was preempted (0: woken);
	   BLOCKED: the waker that ended it (0: an interrupt or unseen) */
	uint32_t by_tid, by_pid;
	/* BLOCKED: the task behind the waker: by_* itself, or, when by_* only
	   relayed another process's wake-up (see ift_role_evidence), that
	   process's task, and relay_* the relay (0: none) */
	uint32_t src_tid, src_pid;
	uint32_t relay_tid, relay_pid;
};

struct ift_analysis;

/*
 * Hooks let a later analysis (the causal chains) ride on the same pass
 * instead of reading the trace again.  Each may be NULL.
 */
struct ift_analyze_hooks {
	void *ctx;
	/* every event the pass reads, after the state machine took it: from
	   the trace start (the state at the window's start needs them; or
	   opts.lead_ns before the window) to the
	   end of the window or of the last call that began in it */
	void (*event)(void *ctx, const struct ift_analysis *a,
		      const struct ift_event *ev);
	/* every state interval of every thread, unclipped, as it closes */
	void (*interval)(void *ctx, const struct ift_analysis *a,
			 const struct ift_interval *iv);
	/* call C, the SEQ-th of the window in entry order, has its breakdown
	   complete: its NATTR attributions are ATTRS (sorted as
	   ift_analysis_call_attrs() has them), both valid until the hook
	   returns.  Calls close in the order they end, not in entry order. */
	void (*call)(void *ctx, const struct ift_analysis *a,
		     const struct ift_call_info *c, const struct ift_call_attr *attrs,
		     size_t seq);
};

struct ift_analyze_opts {
	uint64_t from_ns;		/* window, offsets from the trace start */
	uint64_t to_ns;
	bool has_to;			/* else the window ends with the trace */
	/* the pass starts LEAD_NS before the window rather than at the trace
	   start (has_lead): a window at the end of a long recording (top)
	   costs what its own stretch does.  A thread with no event in the
	   lead is UNKNOWN until its first one, and nothing is invented */
	uint64_t lead_ns;
	bool has_lead;
	const uint32_t *pids;		/* keep threads whose pid or tid is one */
	size_t npids;
	const char *const *ops;		/* keep these ops (by name) */
	size_t nops;
	/* keep every call with its breakdown for ift_analysis_call(), at about
	   150 bytes a call: for outputs that list calls one by one; without
	   it the analysis holds 8 bytes a call */
	bool keep_calls;
	struct ift_analyze_hooks hooks;
};

struct ift_analysis_summary {
	const char *command;		/* meta cmdline, or "" */
	size_t pieces;			/* the files read: a rotated recording's
					   pieces joined, else 1 */
	uint64_t start_ts, end_ts;	/* the trace, trace clock */
	uint64_t from_ns, to_ns;	/* the window, offsets */
	uint64_t duration_ns;		/* to_ns - from_ns */
	uint64_t events;		/* rows in the window, all tables */
	uint64_t host_events;		/* of them, not CUDA calls */
	uint64_t calls;			/* CUDA calls in the window */
	uint64_t lost_events;		/* overrun + dropped, whole trace */
	unsigned cpus;			/* meta cpu.count, or CPUs seen */
	uint64_t page_fault_ns;		/* what a fresh page cost the machine
					   (the larger of meta
					   host.page_fault_ns.start and .stop),
					   or 0: not measured */
	uint64_t probe_ns;		/* what a call's entry and return probes
					   cost its thread (meta host.probe_ns),
					   or 0: not measured */
	/*
	 * record --page-allocs=count: the kernel counted each thread's page
	 * allocations over the whole recording, none has a time.  They are
	 * in the threads' and processes' figures when the window is the
	 * whole recording (PAGE_COUNTS_IN), in no call, gap or chain.
	 */
	bool page_allocs_counted;
	bool page_counts_in;
	uint64_t page_count_dropped;	/* allocations the kernel's table had no room for */
};

/*
 * ift_analysis_run - analyze trace T in one pass
 * OPTS may be NULL (whole trace, no filter).  On success *OUT is an analysis
 * the caller releases with ift_analysis_free(); it points into T (names), so
 * T must outlive it.  Returns 0 or a negative error (a corrupt chunk, memory).
 */
/*
 * Where a report of T begins and ends (trace clock), which its offsets are
 * from: the recording's start and stop where the trace says them, else its
 * first and last row.
 */
void ift_analysis_bounds(const struct ift_trace *t, uint64_t *start, uint64_t *end);

int ift_analysis_run(struct ift_trace *t, const struct ift_analyze_opts *opts,
		     struct ift_analysis **out);
void ift_analysis_free(struct ift_analysis *a);

/* Everything below is owned by the analysis. */
const struct ift_analysis_summary *ift_analysis_summary(const struct ift_analysis *a);

/* Ops of the selected calls, most total time first. */
size_t ift_analysis_op_count(const struct ift_analysis *a);
const struct ift_op_stats *ift_analysis_op(const struct ift_analysis *a, size_t i);
/* The op called NAME, or NULL when no selected call was one. */
const struct ift_op_stats *ift_analysis_op_find(const struct ift_analysis *a,
						const char *name);

/* Selected processes: most CUDA time first, then most off-CPU time. */
size_t ift_analysis_process_count(const struct ift_analysis *a);
const struct ift_process_info *ift_analysis_process(const struct ift_analysis *a,
						    size_t i);
const struct ift_process_info *ift_analysis_process_find(const struct ift_analysis *a,
							 uint32_t pid);

/* Selected threads, by tid; a tid reused in the trace is two threads. */
size_t ift_analysis_thread_count(const struct ift_analysis *a);
const struct ift_thread_info *ift_analysis_thread(const struct ift_analysis *a,
						  size_t i);
const struct ift_thread_info *ift_analysis_thread_find(const struct ift_analysis *a,
						       uint32_t tid);

/* Every CUDA call that began in the window, in entry order; none unless
   the analysis was run with opts.keep_calls. */
size_t ift_analysis_call_count(const struct ift_analysis *a);
const struct ift_call_info *ift_analysis_call(const struct ift_analysis *a, size_t i);
/*
 * The call of row ROW (from 0) of the calls table, whose values are R: an
 * analysis of the whole trace keeps the calls in the table's order, so call
 * ROW is row ROW.  Checked against R (entry, thread, op, depth) rather than
 * trusted: NULL where they differ, or no calls were kept.  How every
 * exporter joins a row to its figures.
 */
const struct ift_call_info *ift_analysis_call_of_row(const struct ift_analysis *a,
						     uint64_t row, const uint64_t *r);
/*
 * The counted calls of op OP (of process or thread PID, 0: any), slowest
 * first, the earlier of equals first: their indices for ift_analysis_call()
 * in *IDX (malloc'd, the caller frees; NULL when none), *N of them.  0, or
 * -ENOMEM.  How MCP's get_slow_calls lists them.
 */
int ift_analysis_slow_calls(const struct ift_analysis *a, uint32_t op, uint32_t pid,
			    size_t **idx, size_t *n);
/* C->nattr entries: who ran while it waited (RAN), then who woke it (WOKE),
   each kind most ns first; NULL when none. */
const struct ift_call_attr *ift_analysis_call_attrs(const struct ift_analysis *a,
						    const struct ift_call_info *c);

/* The machine's load, as the recorder sampled it (record's sampler). */
struct ift_sys_sample {
	uint64_t ts;			/* trace clock */
	int64_t busy_permille;		/* of the CPUs' time busy; -1: not sampled */
	int64_t running;		/* tasks runnable (procs.running); -1: not sampled */
};

/* The samples from the pass's start to its end, in time order
   (*N of them); in hooks, those read so far. */
const struct ift_sys_sample *ift_analysis_samples(const struct ift_analysis *a, size_t *n);

/* The name task TID had at trace-clock time TS ("<idle>" for 0, "" unknown). */
const char *ift_analysis_comm(const struct ift_analysis *a, uint32_t tid,
			      uint64_t ts);

/* The loop of the calls TID made in the window (found before the pass, so
   hooks may ask), or NULL when it made none. */
const struct ift_loop_info *ift_analysis_loop(const struct ift_analysis *a, uint32_t tid);

/* During the pass (in hooks): the state of TID now, UNKNOWN if never seen. */
enum ift_sched_state ift_analysis_state(const struct ift_analysis *a, uint32_t tid);

/*
 * The latency bins every output draws or lists (MCP get_op_latency, the
 * HTML histograms): 1-2-5 steps, bin K from ift_lat_edge(K) up to
 * ift_lat_edge(K + 1), K < IFT_LAT_BINS; the last edge, 10^19 ns, fits a
 * u64, and a longer call counts in the last bin.
 */
#define IFT_LAT_BINS	57
uint64_t ift_lat_edge(unsigned k);	/* 1, 2, 5, 10, 20, 50 ... ns; K <= IFT_LAT_BINS */
unsigned ift_lat_bin(uint64_t ns);	/* the bin of NS: 0 for 0 and 1 */

/*
 * The nearest rank of percentile P among N values (N > 0), as an index from
 * 0: the smallest value with at least P% of the values at or below it,
 * ceil(P * N / 100), at least the first.  Every percentile of every output
 * is this one (P above 100 is 100).
 */
size_t ift_nearest_rank(size_t n, unsigned p);
/* Nearest-rank percentile P (0 < P <= 100) of N sorted values; 0 if N == 0. */
uint64_t ift_percentile(const uint64_t *sorted, size_t n, unsigned p);

/* ---- the orders outputs show rows in (order.c) -------------------- */

/* A row of an op table: the op, shown nested in the row above or not. */
struct ift_op_row {
	const struct ift_op_stats *op;
	bool nested;
};

/*
 * ift_op_rows - the rows of the op table of OPS (N of them, most time
 * first): the outermost ops by time, each followed by the ops nested in it
 * (their time is already inside the row above), then the nested ops whose
 * parent is not shown.  Returns N rows the caller frees with free(), or
 * NULL with errno ENOMEM.
 */
struct ift_op_row *ift_op_rows(const struct ift_op_stats *ops, size_t n);

/*
 * qsort() orders of thread pointers (const struct ift_thread_info *):
 * most CUDA time first, then most off-CPU time, then by tid; or most
 * off-CPU time first, then by tid.
 */
int ift_thread_cmp_cuda(const void *x, const void *y);
int ift_thread_cmp_off_cpu(const void *x, const void *y);

/* ---- call sites (record --stack) ------------------------------------ */

struct ift_site {
	const char *op;			/* owned by the trace */
	uint64_t stack;			/* id: ift_trace_stack() */
	uint64_t calls, total_ns;	/* calls of OP from this site */
	uint64_t tail_calls, tail_ns;	/* of them, at or above the op's p99 */
	double share_calls;		/* of the op's calls that have a stack */
	double share_time;		/* of their total time */
	double share_tail;		/* of their tail time */
};

/*
 * ift_sites_run - the call sites of every op whose calls carry stacks,
 * outermost window [FROM_TS, TO_TS) on the trace clock (0, UINT64_MAX: all),
 * of the calls of process or thread PID (0: every task; the shares and the
 * p99 are then of its calls): per op in op id order, most total time first,
 * at most TOP per op (0: all).  *OUT is an array of *N the caller frees
 * with free(); empty for a trace without stacks.  0 or a negative error.
 */
int ift_sites_run(struct ift_trace *t, uint64_t from_ts, uint64_t to_ts,
		  uint32_t pid, unsigned top, struct ift_site **out, size_t *n);

/* The same over the calls analysis A kept (opts.keep_calls: its window's),
   of process or thread PID (0: every task): nothing read again.  MCP's
   get_stacks. */
int ift_analysis_sites_of(const struct ift_analysis *a, uint32_t pid, unsigned top,
			  struct ift_site **out, size_t *n);

/* The call sites of the window's calls, every op's (whatever --op says),
   as ift_sites_run() over the window with IFT_SITES_TOP would give them;
   *N of them, none for a trace without stacks.  Owned by the analysis. */
const struct ift_site *ift_analysis_sites(const struct ift_analysis *a, size_t *n);

/* Sites per op that report shows, and get_stacks (MCP) gives by default;
   Python call sites likewise. */
#define IFT_SITES_TOP	5

/* ---- Python call sites (record --py-stack) ------------------------- */

/*
 * A Python call site: the line of Python that made calls of an op, the
 * innermost Python frame (ift_stack_py_top()) of the sites of its calls
 * whose Python frames were read while they were in flight
 * (IFT_CALL_F_PY), whatever native frames lie below it: the sites that
 * share it are one Python call site.
 */
struct ift_py_site {
	const struct ift_frame *frame;	/* that frame, owned by the trace: module
					   the file, symbol the function (its
					   qualified name), offset the line (0:
					   none) */
	uint64_t calls, total_ns;
	uint64_t tail_calls, tail_ns;	/* of them, at or above the op's p99
					   (over its calls with a site) */
	double share_time;		/* of the time of the op's calls read in
					   flight */
	uint64_t stack;			/* of its sites, the one with most time
					   (ift_trace_stack()): the callers */
	uint64_t stacks;		/* its sites */
};

/*
 * One op's Python call sites, and how many of its calls they cover: with
 * --stack-period N one call in N per op and CPU has a site; a call with a
 * site had its Python frames read while it was in flight, or only after it
 * returned (late: dropped, its site is native only), or not at all (no
 * Python on the thread, or the read failed).
 */
struct ift_py_op {
	const char *op;			/* owned by the trace */
	uint32_t op_id;
	uint64_t calls;			/* the op's calls counted (window, pid) */
	uint64_t stack_calls;		/* of them, with a site */
	uint64_t in_flight;		/* of those, read in flight (IFT_CALL_F_PY) */
	uint64_t in_flight_ns;		/* their time */
	uint64_t late;			/* read late (IFT_CALL_F_PY_LATE) */
	uint64_t all_sites;		/* its Python call sites in all */
	size_t nsites;			/* of them, the top ones kept */
	const struct ift_py_site *sites;	/* most total time first */
};

/*
 * The Python call sites of the window's calls, counted as the call sites
 * are (every op's, whatever --op and --pid say): per op some of whose calls
 * had Python frames read (in flight or late), most time read in flight
 * first, each with its top IFT_SITES_TOP; *N ops, none for a trace without
 * Python frames.  Owned by the analysis.
 */
const struct ift_py_op *ift_analysis_py_sites(const struct ift_analysis *a, size_t *n);

/*
 * Whether the trace holds Python frames (record --py-stack): its meta says
 * it was recorded so (py.read), a site has a Python frame, or a call of the
 * window is flagged IFT_CALL_F_PY or IFT_CALL_F_PY_LATE.  The outputs give
 * the Python call sites, even none, only then, so a trace without them
 * reads as before.
 */
bool ift_analysis_py(const struct ift_analysis *a);

/*
 * ift_py_sites_run - the Python call sites of the calls in [FROM_TS, TO_TS)
 * on the trace clock (0, UINT64_MAX: all) of process or thread PID (0:
 * every task; the coverage, shares and p99 are then of its calls), at most
 * TOP per op (0: all), ordered as ift_analysis_py_sites() orders them.  *OUT
 * is one block of *N ops and their sites, pointing into T, that the caller
 * frees with free(); empty without Python frames.  0 or a negative error.
 */
int ift_py_sites_run(struct ift_trace *t, uint64_t from_ts, uint64_t to_ts,
		     uint32_t pid, unsigned top, struct ift_py_op **out, size_t *n);
/* The same over the calls analysis A kept, as ift_analysis_sites_of(). */
int ift_analysis_py_sites_of(const struct ift_analysis *a, uint32_t pid, unsigned top,
			     struct ift_py_op **out, size_t *n);

/* ---- the CPU profile (record --profile) ---------------------------------- */

/*
 * A frame of a profile group: a line of Python, or a native function (by
 * module and symbol; FRAME NULL: time in the kernel).  SELF counts the
 * samples it was the innermost frame of its kind in, TOTAL those it was
 * in anywhere (once a sample).  CALLER, for a line of a package or the
 * standard library: the user's own line (the innermost Python frame
 * outside site-packages, dist-packages and the standard library) under it
 * in most of its samples; NULL for the user's own lines and native frames.
 */
struct ift_prof_frame {
	const struct ift_frame *frame;	/* the trace's */
	uint64_t self, total;
	const struct ift_frame *caller;
	uint64_t caller_samples;	/* of TOTAL, those with CALLER under it */
};

/*
 * What a profile sample's CPU went to (docs/report.md, "How a fix is
 * chosen"): the outermost frame of a known package under the user's own
 * line (torchvision's transforms, which call PIL's resize, are
 * transforms), else a known native library's code, else the kernel, else
 * the user's own Python.
 */
enum ift_prof_work {
	IFT_WORK_UNKNOWN,
	IFT_WORK_DECODE,	/* an image or compressed-data decoder */
	IFT_WORK_TRANSFORM,	/* torchvision's or albumentations' transforms */
	IFT_WORK_COLLATE,	/* torch's collate */
	IFT_WORK_INDEXING,	/* a tensor indexed a sample at a time */
	IFT_WORK_KERNEL,	/* in the kernel: page faults, system calls */
	IFT_WORK_PYTHON,	/* the user's own Python */
};

/*
 * A box of a flame graph: frame FRAME (NULL: the kernel) at DEPTH (0: the
 * outermost), W samples wide, X samples from the left.
 */
struct ift_prof_node {
	const struct ift_frame *frame;
	uint32_t depth;
	uint64_t x, w;
};
#define IFT_PROF_FLAME_MIN	200	/* a box is 1/200 of its group's samples at least */
#define IFT_PROF_FLAME_BOXES	600	/* and a flame graph has 600 at most */

/*
 * What a kind of thread did with its CPU: the input workers', the input
 * threads', the relays', the pin-memory threads', the CUDA threads' outside
 * their calls (the "built its input itself" case), the others'.  Each
 * sample is PERIOD_NS of one thread's CPU time.
 */
struct ift_prof_group {
	enum ift_role role;		/* IFT_ROLE_NONE: threads of no role */
	uint32_t threads, procs;	/* that were sampled */
	uint64_t samples;
	uint64_t cpu_ns;		/* samples x the profile's period */
	uint64_t kernel;		/* in the kernel (system calls, faults) */
	uint64_t interrupt;		/* of them, for an interrupt: the work of
					   the code it interrupted */
	uint64_t python;		/* with Python frames */
	uint64_t work[IFT_WORK_PYTHON + 1];	/* by what they went to */
	size_t nlines, nnative;
	const struct ift_prof_frame *lines;	/* Python, most self first */
	const struct ift_prof_frame *native;	/* most self first */
	/* its stacks as a flame graph (ift_stack_flame()'s frames, [kernel] on
	   top of a sample taken there), boxes in preorder, the wider of two
	   siblings first; a role group's only */
	size_t nflame;
	const struct ift_prof_node *flame;
};
#define IFT_PROF_TOP	10	/* lines and native frames kept a group */

struct ift_profile {
	uint64_t period_ns;		/* 0: the trace has no profile */
	uint64_t samples;		/* in the window, every thread's */
	size_t ngroups;
	const struct ift_prof_group *groups;	/* those with samples, by role */
};

struct ift_prof_finding {
	enum ift_prof_work work;
	uint64_t samples;			/* the group's in that work */
	const struct ift_prof_frame *top;	/* its frame with most self samples:
						   a line where one has, else native */
};

/* G's finding: the work of most samples, a fifth of them at least (work
   IFT_WORK_UNKNOWN, top NULL: none stands out). */
void ift_profile_finding(const struct ift_prof_group *g, struct ift_prof_finding *f);

/* The window's profile; period_ns 0 when the trace has none.  Owned by A. */
const struct ift_profile *ift_analysis_profile(const struct ift_analysis *a);

/* Work W's name in every output ("decode", "kernel", ...; NULL: unknown). */
const char *ift_prof_work_name(enum ift_prof_work w);

/* ---- the GPUs as NVML measured them (record's gpu_samples) --------------- */

/* A GPU's time covered by utilization samples, and the part of it a kernel
   ran (each sample's span at its percent). */
struct ift_gpu_time {
	uint64_t covered_ns, busy_ns;
};

struct ift_gpu_info {
	uint32_t gpu;			/* NVML's device index */
	const char *name;		/* meta gpu.N.name, or "" */
	bool used;			/* a traced process held memory on it */
	bool counted;			/* idle time counts on it: used, or all
					   when none is known used */
	struct ift_gpu_time window;	/* the report's window */
	struct ift_gpu_time stage[IFT_STAGE_TAIL + 1];	/* by enum ift_stage:
					   the window before, in and after the
					   steady state */
};

struct ift_gpu_use {
	bool measured;			/* utilization samples in the trace */
	const char *reason;		/* why not (NULL when measured) */
	const char *source;		/* meta gpu.util_source, or NULL */
	uint64_t steady_from_ns, steady_to_ns;	/* the CUDA threads' loops, the
						   first's start to the last's
						   end; 0, 0 without */
	uint64_t iterations;		/* of those loops in the steady state */
	/* the GPUs the idle time is counted on (used ones, all when none is
	   known used): their time by stage, summed */
	struct ift_gpu_time counted[IFT_STAGE_TAIL + 1];
	size_t ngpus;
	const struct ift_gpu_info *gpus;	/* those sampled, by index */
};

/* The GPUs' figures of A's window. */
const struct ift_gpu_use *ift_analysis_gpu(const struct ift_analysis *a);

/* One utilization sample: PERCENT of (TS - SPAN, TS] a kernel ran on GPU. */
struct ift_gpu_sample {
	uint64_t ts, span;		/* trace clock */
	uint32_t gpu, percent;
};

/*
 * The GPUs counted for process PID: those it held memory on, or all the
 * counted ones when it held none; a mask, bit K for GPU K (K < 64), 0 when
 * the trace has no measurement.  And every sample of the trace, by GPU then
 * time (*N of them).  Both are set before the analysis's pass: its hooks
 * may read them.
 */
uint64_t ift_analysis_gpu_mask(const struct ift_analysis *a, uint32_t pid);
const struct ift_gpu_sample *ift_analysis_gpu_samples(const struct ift_analysis *a,
						       size_t *n);
/* The trace-clock range of STAGE over all the CUDA threads' loops (the
   window before, in and after the steady state); false when A has none. */
bool ift_analysis_gpu_stage(const struct ift_analysis *a, enum ift_stage stage,
			    uint64_t *from, uint64_t *to);

/* ROLE's profile group as every output names it ("input worker", "cuda
   threads, between calls in their loop", "other threads"). */
const char *ift_prof_group_name(enum ift_role role);

/* The group of ROLE in A's profile, or NULL when it has no samples. */
const struct ift_prof_group *ift_profile_group(const struct ift_profile *p, enum ift_role role);

#endif
