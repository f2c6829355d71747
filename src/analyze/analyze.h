/* SPDX-License-Identifier: MIT */
#ifndef IFT_ANALYZE_INTERNAL_H
#define IFT_ANALYZE_INTERNAL_H

/*
 * Private to src/analyze: the state of one pass.  sched.c keeps the threads
 * and CPUs (the state machine and the breakdown of calls), stats.c turns the
 * calls into op tables, analyze.c runs the pass and builds the results.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ift-analyze.h"
#include "roles.h"
#include "util/intern.h"
#include "util/span.h"
#include "util/tidmap.h"

/* A call still open on its thread, with who took its off-CPU time so far:
   its breakdown is complete when it is closed (call_finish()), and only the
   open calls are held, never every call. */
struct az_open {
	struct ift_call_info c;
	uint32_t seq;		/* of the window's calls, in entry order */
	uint32_t nattr;
	uint64_t ts, end;
	size_t cap;
	struct ift_call_attr *attr;
};

struct az_thread {
	struct ift_thread_info info;	/* public part, completed at the end */
	uint32_t idx;			/* in a->th */
	uint32_t tid, pid;
	uint8_t st;			/* enum ift_sched_state */
	bool seen;			/* any row about it */
	bool off_known;			/* off_since is a real switch-out */
	bool in_wait;			/* on a CPU's waiter list */
	bool subject;			/* made a call or allocated pages */
	bool execed;
	bool exited;
	uint32_t cpu;			/* where it runs, or waits */
	uint64_t since;			/* the current state began */
	uint64_t off_since;		/* switched out at */
	uint64_t credited;		/* run-queue wait credited up to */
	uint32_t by_tid, by_pid;	/* the preemptor of the current wait */
	uint64_t first_ts, last_ts, exit_ts;
	uint64_t cuda_ns_all;		/* unfiltered, for the role */
	uint64_t cuda_calls_all;	/* outermost, unfiltered */
	uint64_t host_alloc_calls;	/* pinned host memory (cudaHostAlloc ...) */
	bool io_sleep;			/* blocked in D (uninterruptible) */
	bool called;			/* made a CUDA call */
	bool idle_woken;		/* runnable since a wake-up onto an idle CPU */
	/* a sched_waking not yet followed by its sched_wakeup: who woke it
	   (as roles.c followed it back then), when, and where it will be
	   queued */
	bool waking;
	struct az_by waking_by;
	uint32_t waking_cpu;
	uint64_t waking_ts;
	struct az_roles roles;		/* roles.c's alone (roles.h) */
	struct az_open *open;
	uint32_t nopen;
	size_t capopen;
	struct az_tops *tops;		/* its selected calls by op (stats.c) */
	size_t ntops, captops;
	uint32_t *topix;		/* op id -> 1 + index in tops */
	uint32_t proc;			/* index in a->procs, set at the end */
	bool listed;
	bool followed;		/* of the traced processes, not a task met in passing */
};

struct az_cpu {
	uint32_t *wait;			/* threads waiting here inside a call */
	size_t cap;
	uint32_t nwait;
	bool idle;			/* its latest switch put the idle task on */
	uint64_t last_switch;		/* when */
};

/* What we need to know about an op, by op id. */
struct az_opmeta {
	int bytes_arg, width_arg, height_arg, kind_arg;	/* -1: none */
	int fixed_dir;		/* from a driver copy's name, or -1 */
	bool copy;
	bool host_alloc;	/* allocates or registers pinned host memory */
	bool selected;		/* passes --op */
};

/* The durations of one calling tid's selected calls of one op (durs.c). */
struct az_durs {
	uint64_t *v;		/* n of them, in table order */
	size_t n;
	size_t used;		/* taken by the pass's threads so far */
};

struct az_tdurs {
	uint32_t tid;
	struct az_durs *op;	/* by op id */
};

/* Calls of one op from one site whose Python frames were read in flight
   (IFT_CALL_F_PY), and their time (pysites.c). */
struct az_pyrow {
	uint32_t op;
	uint64_t stack;
	uint64_t calls, total_ns, tail_calls, tail_ns;
};

/* What one op's calls say of their Python frames (pysites.c). */
struct az_pycov {
	uint64_t calls, stack_calls, in_flight, in_flight_ns, late;
};

/* An op over every selected call of the window, known before the pass;
   and over its calls with a stack (record --stack) in the sites' window. */
struct az_opq {
	uint64_t calls, p50_ns, p99_ns;
	uint64_t stack_calls, stack_p99;
	uint64_t *sv;		/* their durations, until the p99 is known */
	size_t nsv;
	struct az_pycov py;	/* the sites' window's calls, during the pass */
};

/* One call site of one op, as the pass tallies it (sites.c); py: of its
   calls, those flagged IFT_CALL_F_PY. */
struct az_site {
	uint32_t op;
	uint64_t stack;
	uint64_t calls, total_ns, tail_calls, tail_ns;	/* calls 0: a free slot */
	struct az_pyrow py;
};

/* Some values of a set whose percentiles are asked. */
struct az_seg {
	const uint64_t *v;
	size_t n;
};

/*
 * What one thread's selected calls of one op add up to, as they open
 * (stats.c): the op tables of the thread, its process and the trace are
 * sums of these, and their percentiles are of the durations of the
 * segments DURS.
 */
struct az_tops {
	uint32_t op;
	const uint64_t *durs;		/* calls of them: the thread's segment */
	uint64_t calls, nested, total, min, max, bytes;
	struct ift_copy_stats dir[IFT_COPY_NR];
	struct ift_err_count *errs;	/* by return code, unsorted */
	size_t nerrs, caperrs;
	struct ift_inner_op *inner;	/* ops called inside its calls */
	size_t ninner, capinner;
};

/* One calling thread's loop, by tid (loop.c finds it). */
struct az_tloop {
	uint32_t tid;
	struct ift_loop_info info;
};

/*
 * The window's profile rows, counted by site, thread and kind in the pass
 * (profile.c): a key per distinct (STACK, TH, FLAGS), its count in N.  A
 * thread's role is known only at the end, when the groups are made.
 */
struct az_prof_key {
	uint64_t stack;
	uint32_t th;			/* index in a->th */
	uint32_t flags;			/* IFT_PF_F_KERNEL, AZ_PF_IN_CALL, AZ_PF_UNSTEADY */
};
#define AZ_PF_IN_CALL	0x100		/* inside one of its thread's calls */
#define AZ_PF_UNSTEADY	0x200		/* outside its thread's training loop */

/* gpu.c: the utilization samples and the processes on the GPUs, read
   before the pass (ift_az_gpu_read()) */
struct az_gpu_proc {
	uint32_t pid, gpu;
};
struct az_gpu {
	uint64_t util_id1, proc_id1;	/* the metrics' string ids + 1; 0: unseen */
	struct ift_gpu_sample *s;	/* by GPU, then time */
	size_t ns, caps;
	struct az_gpu_proc *p;		/* by pid */
	size_t np, capp;
	uint64_t counted;		/* mask of the GPUs idle time counts on */
	struct ift_gpu_info *info;
	struct ift_gpu_use out;
};

struct az_prof {
	struct ift_intern keys;		/* struct az_prof_key */
	uint64_t *n;			/* by key number */
	size_t cap;
	struct ift_profile out;
};

struct ift_analysis {
	struct ift_trace *t;
	struct ift_analyze_opts opts;
	struct ift_analysis_summary sum;
	uint64_t lo, hi;		/* the window, trace clock, inclusive */
	uint64_t read_from;		/* where the pass and the samples' read
					   start: the trace start, or opts.lead_ns
					   before lo */
	uint64_t max_end;		/* latest end of a call in the window */
	bool all_followed;		/* recorded without a task filter */

	struct az_thread **th;		/* pointers stay valid as it grows */
	size_t nth, capth;
	struct ift_tidmap tids;		/* tid -> latest thread index */
	/* the latest thread of tid & (AZ_TCACHE - 1), or of another tid: two
	   lookups in three events are switches, between few tasks */
	struct az_thread *tcache[256];

	struct az_cpu *cpu;
	size_t ncpu;

	struct az_opmeta *opm;
	size_t nopm;

	/* every call's duration (durs.c) */
	struct az_tdurs **tdurs;
	size_t ntdurs, captdurs;
	struct ift_tidmap dmap;		/* tid -> index in tdurs */
	struct az_opq *opq;		/* by op id */
	/* the call sites of the window: [lo, hi), or all after lo when the
	   window reaches the trace's end (site_open) */
	bool site_open;
	bool stacks;			/* the trace has a stack table */
	struct az_site *stab;		/* a hash table, while the pass runs */
	size_t nstab, capstab;
	struct ift_site *sites;		/* then the result, per op */
	size_t nsites;
	bool py;			/* ift_analysis_py() */
	struct ift_py_op *py_ops;	/* the Python call sites, one block */
	size_t npy_ops;

	size_t ncalls;			/* calls of the window opened so far */
	/* with opts.keep_calls: each call, its thread (index in th) */
	struct ift_call_info *calls;
	uint32_t *call_th;
	size_t capcalls;
	struct ift_call_attr *attrs;
	size_t nattrs, capattrs;

	struct ift_sys_sample *smp;	/* the system samples read so far */
	size_t nsmp, capsmp;
	struct az_steal_cpu *steal;	/* by CPU: its intervals with steal (steal.c) */
	size_t nsteal;

	struct az_prof prof;		/* profile.c */
	struct az_gpu gpu;		/* gpu.c */

	struct az_tloop *loops;		/* by first call */
	struct ift_tidmap lmap;		/* tid -> index in loops */
	size_t nloops;

	/* results */
	const struct ift_op_stats *ops;
	size_t nops;
	struct ift_process_info *procs;
	size_t nprocs;
	const struct ift_thread_info **sel;	/* listed threads by tid */
	size_t nsel;

	/* everything else the results point to, freed together */
	void **blocks;
	size_t nblocks, capblocks;
};

/* The analyzer's thread whose public part INFO is (a listed thread's, from
   a->sel or a process's threads): the analyzer's own results only. */
static inline struct az_thread *ift_az_thread_of(const struct ift_thread_info *info)
{
	return (struct az_thread *)(void *)((char *)(uintptr_t)info -
					    offsetof(struct az_thread, info));
}

#define AZ_MAX_CPUS	65536
#define AZ_TCACHE	256

/* profile.c: a profile row of the window in the pass; the groups, once
   the roles are known; its memory */
int ift_az_profile_row(struct ift_analysis *a, const uint64_t *row);
int ift_az_profile_build(struct ift_analysis *a);
/* gpu.c: a gpu_samples row of the pass; the figures, once the loops are known */
int ift_az_gpu_read(struct ift_analysis *a);
void ift_az_gpu_release(struct ift_analysis *a);
void ift_az_profile_release(struct ift_analysis *a);

/* flame.c: a frame's identity as a profile counts it, onto B (F NULL: the
   kernel); G's flame graph from N samples of each of its sites */
struct buf;
void ift_az_frame_key(struct buf *b, const struct ift_frame *f);
struct az_flame_in {
	uint64_t stack, n;
	bool kernel;
};
int ift_az_flame(struct ift_analysis *a, struct ift_prof_group *g,
		 const struct az_flame_in *in, size_t nin);

/* steal.c: each CPU's steal from the samples, read before the pass (plan.c);
   then the time of [FROM, TO) on CPU that the hypervisor took, estimated */
int ift_az_steal_read(struct ift_analysis *a);
uint64_t ift_az_steal_ns(const struct ift_analysis *a, uint32_t cpu, uint64_t from,
			 uint64_t to);
void ift_az_steal_free(struct ift_analysis *a);

/* sched.c */
struct az_thread *ift_az_thread_get(struct ift_analysis *a, uint32_t tid, uint32_t pid);
struct az_thread *ift_az_thread_new(struct ift_analysis *a, uint32_t tid, uint32_t pid);
struct az_thread *ift_az_thread_lookup(const struct ift_analysis *a, uint32_t tid);
/* A row about TH at TS: its first and last event. */
void ift_az_thread_seen(struct az_thread *th, uint64_t ts);
/* ift_az_thread_get(), then seen at TS; NULL: no memory. */
struct az_thread *ift_az_thread_at(struct ift_analysis *a, uint32_t tid, uint32_t pid,
			       uint64_t ts);
int ift_az_sched_switch(struct ift_analysis *a, const uint64_t *row);
int ift_az_sched_wakeup(struct ift_analysis *a, const uint64_t *row);
int ift_az_sched_running(struct ift_analysis *a, struct az_thread *th, uint64_t ts,
		     uint32_t cpu);
int ift_az_sched_exit(struct ift_analysis *a, struct az_thread *th, uint64_t ts);
/* Opens CALL (the SEQ-th of the window) on TH, whose earlier calls that ended
   by its entry close first. */
int ift_az_call_open(struct ift_analysis *a, struct az_thread *th,
		 const struct ift_call_info *call, uint32_t seq);
int ift_az_calls_expire(struct ift_analysis *a, struct az_thread *th, uint64_t ts);
void ift_az_call_page(struct az_thread *th, uint64_t ts,
		  uint64_t bytes);
int ift_az_sched_finish(struct ift_analysis *a, uint64_t stop);
void ift_az_sched_release(struct ift_analysis *a);

/* plan.c: the reads before the pass: the calls into durs.c and phases.c,
   the samples into steal.c */
int ift_az_plan_read(struct ift_analysis *a);

/* phases.c: each calling thread's loop, before the pass */
struct az_seqs {		/* each thread's outermost ops, in the read */
	struct seq *v;
	size_t n, cap, last;
};
/* The first read: call row R of the window into Q. */
int ift_az_phases_row(struct az_seqs *q, const uint64_t *r);
/* Between the reads: each thread's loop from its sequence (freed). */
int ift_az_phases_loops(struct ift_analysis *a, struct az_seqs *q);
/* The second read: row R again, for the times that bound the loops. */
int ift_az_phases_bound(struct ift_analysis *a, struct az_seqs *q, const uint64_t *r);
/* After it: the warm-up and the stages' times; releases Q. */
int ift_az_phases_finish(struct ift_analysis *a, struct az_seqs *q);
void ift_az_seqs_release(struct az_seqs *q);

/* durs.c */
/* The row R of the calls table passes the pid and op filters. */
bool ift_az_call_selected(const struct ift_analysis *a, const uint64_t *r);
/* Its duration, kept inside the clock. */
uint64_t ift_az_call_dur(const uint64_t *r);
/* Before the plan's reads: a->opq. */
int ift_az_durs_begin(struct ift_analysis *a);
/* Call row R of the window: counted in the first read (FILL false), its
   duration stored in the second (FILL true). */
int ift_az_durs_row(struct ift_analysis *a, const uint64_t *r, bool fill);
/* Between the reads: the arrays, of the counts' sizes. */
int ift_az_durs_alloc(struct ift_analysis *a);
/* After them: the ops' percentiles, and the sites' p99. */
int ift_az_durs_find(struct ift_analysis *a);
/* TID's durations of OP, or NULL when it made no selected call of it. */
struct az_durs *ift_az_durs_of(struct ift_analysis *a, uint32_t tid, uint32_t op);
/* Percentiles P[0..NP) (nearest rank, ascending P) of the values of S into
   OUT; 0s for no value.  0 or -ENOMEM. */
int ift_az_quantiles(const struct az_seg *s, size_t ns, const unsigned *p, size_t np,
		 uint64_t *out);
void ift_az_durs_release(struct ift_analysis *a);

/* sites.c */
/* Call C (its row R) in the sites' window: the Python frames' coverage of
   its op, and its site when it has one. */
int ift_az_sites_call(struct ift_analysis *a, const struct ift_call_info *c,
		  const uint64_t *r);
/* The tallies become a->sites: per op in op id order, most time first. */
int ift_az_sites_build(struct ift_analysis *a);
/* The shares and the order of SITES[FIRST, NS), one op's, from NCALLS
   calls with stacks taking TOTAL, TAIL of it at or above the p99; the top
   TOP (0: all) are kept.  Returns the new end. */
size_t ift_az_sites_finish(struct ift_site *sites, size_t first, size_t ns, uint64_t ncalls,
		       uint64_t total, uint64_t tail, unsigned top);
/* Row R is in the call sites' window. */
static inline bool ift_az_site_window(const struct ift_analysis *a, const uint64_t *r)
{
	return r[IFT_C_TS] >= a->lo && (a->site_open || r[IFT_C_TS] < a->hi);
}

/* Row R counts for the call sites. */
static inline bool ift_az_site_call(const struct ift_analysis *a, const uint64_t *r)
{
	return a->stacks && r[IFT_CALL_STACK] && ift_az_site_window(a, r);
}

/* pysites.c */
/*
 * The Python call sites of ROWS (N of them, in any order, one site's calls
 * in one row or many; sorted and summed here) with the coverage COV of
 * each op id below NCOV: every op with a call read in flight or late, at
 * most TOP sites each (0: all), into one block *OUT of *NOUT ops that the
 * caller frees with free().  0 or -ENOMEM.
 */
int ift_az_py_build(struct ift_trace *t, struct az_pyrow *rows, size_t n,
		const struct az_pycov *cov, size_t ncov, unsigned top,
		struct ift_py_op **out, size_t *nout);
/* Counts a call with FLAGS, site STACK (0: none) and duration DUR into the
   coverage V of its op. */
static inline void ift_az_py_cover(struct az_pycov *v, uint32_t flags, uint64_t stack,
			       uint64_t dur)
{
	v->calls++;
	v->stack_calls += stack != 0;
	if (flags & IFT_CALL_F_PY) {
		v->in_flight++;
		v->in_flight_ns += dur;
	} else if (flags & IFT_CALL_F_PY_LATE) {
		v->late++;
	}
}
/* The trace holds Python frames by its meta or its sites (setup). */
bool ift_az_py_trace(struct ift_trace *t);

/* stats.c */
/* Call C, opened on TH inside the window, counts for TH's op table (when
   selected) and for its PARENT's inner ops (the call it was made in, or
   NULL). */
int ift_az_stats_call(struct ift_analysis *a, struct az_thread *th,
		  const struct ift_call_info *c, const struct ift_call_info *parent);
int ift_az_build_ops(struct ift_analysis *a);
void ift_az_stats_release(struct az_thread *th);

/* loop.c */
/* A thread's training loop: the stretch of its outermost CUDA calls that
   repeats one sequence of ops (loop.c says exactly how it is chosen). */
struct az_loop {
	uint32_t period;	/* calls per iteration; 0: no loop found */
	uint64_t iterations;	/* complete iterations in [first, end) */
	size_t first, end;	/* calls [first, end) are the steady state */
};

#define AZ_LOOP_MAX_PERIOD	4096
#define AZ_LOOP_MIN_ITERS	3

/* OPS: the op ids of one thread's outermost calls in entry order (N of
   them).  0 with *OUT set (period 0 when there is no loop, and then
   everything 0), or -ENOMEM.  Pure: reads OPS only; O(n) time for a
   fixed period cap, O(AZ_LOOP_MAX_PERIOD) memory. */
int ift_az_loop_find(const uint32_t *ops, size_t n, struct az_loop *out);

/* analyze.c */
/*
 * TH belongs to what was recorded (the command's tree, -p, -a), as the task
 * table says at TS: a task outside it (a kernel thread) is no part of the
 * program however often it wakes one.
 */
bool ift_az_thread_followed(const struct ift_analysis *a, const struct az_thread *th,
			uint64_t ts);
/* PID or TID is one the analysis was asked for (all without --pid). */
bool ift_az_pid_match(const struct ift_analysis *a, uint32_t pid, uint32_t tid);
/* Zeroed memory that lives as long as the analysis (the results). */
void *ift_az_alloc(struct ift_analysis *a, size_t n, size_t size);

#endif
