/* SPDX-License-Identifier: MIT */
#ifndef IFT_CHAINS_H
#define IFT_CHAINS_H

/*
 * Causal chains: which host cause accounts for the time a CUDA thread lost,
 * from evidence inside the time windows where it lost it (its slow calls,
 * and the gaps where it issued no work).  docs/report.md says how each
 * cause is told apart, and what every figure means.
 *
 * A chain collector rides on the analyzer's single pass (its hooks), then
 * builds the chains from the finished analysis.  Memory is bounded by the
 * number of tasks and CUDA calls.  Nothing here prints or exits; it reads
 * the trace only (short windows again, for the worst occurrence of each
 * chain).
 */
#include <stddef.h>
#include <stdint.h>

#include "ift-analyze.h"

enum ift_cause {
	IFT_CAUSE_CPU_CONTENTION = 1,	/* waited for a CPU (run-queue) */
	IFT_CAUSE_DATA_STARVATION,	/* blocked between calls, waiting for input */
	IFT_CAUSE_PAGE_ALLOC,		/* faulting in fresh pages */
	IFT_CAUSE_GPU_BOUND,		/* waiting for the device: healthy host */
};

enum ift_severity { IFT_SEV_LOW = 1, IFT_SEV_MEDIUM, IFT_SEV_HIGH };

/* Where the time went: inside the slow calls of an op, or in the gaps
   (no CUDA work issued) that end with a call of the op. */
enum ift_phase { IFT_PHASE_INSIDE = 1, IFT_PHASE_BEFORE };

/* Severity from cost as a share of the CUDA threads' active wall time. */
#define IFT_SEV_HIGH_PERMILLE	200
#define IFT_SEV_MEDIUM_PERMILLE	50

#define IFT_TAIL_RATIO_DEFAULT	3.0
#define IFT_TAIL_FLOOR_DEFAULT	1000000ULL	/* 1 ms */

struct ift_chain_step {
	uint64_t t_ns;			/* offset from the trace start */
	const char *layer;		/* "system", "host" or "cuda" */
	const char *text;
};

struct ift_chain_num {
	const char *key;		/* a documented evidence key */
	uint64_t value;
	bool old;			/* KEY's name of 0.1, beside the new one until
					   0.2 (docs/report.md, Names): data only */
};

/* A task named by the evidence, with what it did to the CUDA thread. */
struct ift_chain_task {
	const char *relation;		/* "preempted", "woke", "relayed" */
	uint32_t pid, tid;
	const char *comm;
	enum ift_role role;
	const struct ift_role_evidence *role_evidence;	/* or NULL */
	bool outside;			/* not one of the traced processes */
	uint64_t count;			/* preemptions or wake-ups */
	uint64_t ns;			/* run-queue wait, or blocked time ended */
	uint32_t share_permille;	/* of that relation's total */
};

/*
 * A call site the chain's time was lost from (record --stack): for an
 * `inside' chain, where its slow calls were made; for a `before' chain,
 * where the calls that ended its gaps were made.  Only calls that carry a
 * stack count, so the shares are of those.
 */
struct ift_chain_site {
	uint64_t stack;			/* id: ift_trace_stack() */
	const struct ift_stack *frames;	/* owned by the trace; NULL when the file
					   lacks it (a recording cut short) */
	uint64_t calls;			/* slow calls, or gaps ended, from it */
	uint64_t cost_ns;		/* of the chain's cost, theirs */
	uint32_t share_permille;	/* of the cost with a site (of the calls
					   when that is 0) */
};

#define IFT_CHAIN_SITES	5		/* sites kept per chain, most cost first */

/*
 * A Python call site the chain's time was lost from (record --py-stack):
 * the innermost Python frame (ift_stack_py_top()) of the chain's sites
 * (every one, not only the top IFT_CHAIN_SITES), those that share it
 * summed.  A site holds Python frames only for calls that had them read in
 * flight (IFT_CALL_F_PY, docs/trace-format.md).
 */
struct ift_chain_py_site {
	const struct ift_frame *frame;	/* owned by the trace: module the file,
					   symbol the function, offset the line */
	uint64_t stack;			/* of its sites, the one with most cost */
	uint64_t calls;			/* slow calls, or gaps ended, from it */
	uint64_t cost_ns;		/* of the chain's cost, theirs */
	uint32_t share_permille;	/* of the cost with Python frames (of
					   those calls when that is 0) */
};

/*
 * The GPU in a chain's windows (record's NVML samples, chains-gpu.c): the
 * idle time of its stage on the counted GPUs (ift_gpu_use.counted) that its
 * cause took in its gaps and calls, each sample's idle time taken once by
 * all the chains, and how busy the GPU was meanwhile.
 */
#define IFT_GPU_BUSY_PERMILLE	900	/* busy meanwhile: the GPU did not wait */

struct ift_chain_gpu {
	bool measured;			/* the trace has NVML samples */
	uint64_t idle_ns;
	uint32_t idle_permille;		/* of its stage's idle time */
	struct ift_gpu_time meanwhile;	/* its windows' time the samples cover,
					   and busy */
	bool not_waiting;		/* busy IFT_GPU_BUSY_PERMILLE of it: the
					   host was slow, the GPU did not wait */
};

struct ift_chain {
	enum ift_severity severity;
	enum ift_cause cause;
	enum ift_phase phase;
	enum ift_stage stage;		/* where its cost lies; only the steady
					   state's chains rank above LOW */
	const char *op;
	uint32_t pid, tid;		/* the thread that lost most */
	uint64_t p50_ns, p99_ns;	/* of the op */
	double tail_ratio;		/* p99 / p50 */
	uint64_t cost_ns;		/* the time the cause cost */
	uint64_t wall_ns;		/* active wall time of the threads affected,
					   in the chain's stage */
	const char *summary;		/* one line */
	size_t nsteps;
	const struct ift_chain_step *steps;	/* the worst occurrence, in time order */
	size_t nnums;
	const struct ift_chain_num *nums;
	size_t ntasks;
	const struct ift_chain_task *tasks;	/* by relation, most ns first */
	size_t nrecs;
	const char *const *recs;	/* recommendations, most useful first */
	size_t nsites;
	const struct ift_chain_site *sites;	/* most cost first; none without
						   stacks */
	bool py;			/* the trace holds Python frames
					   (ift_analysis_py()): what follows is
					   given */
	uint64_t site_calls;		/* slow calls, or gaps, with a site */
	uint64_t py_calls;		/* of them, with Python frames */
	size_t npy_sites;
	const struct ift_chain_py_site *py_sites;	/* most cost first, at most
							   IFT_CHAIN_SITES */
	/* the CPU profile of the threads its fix speaks of (record --profile:
	   the input workers, the input threads, or the CUDA threads outside
	   their calls), or NULL */
	const struct ift_prof_group *profile;
	struct ift_chain_gpu gpu;
};

struct ift_chain_opts {
	double tail_ratio;		/* p99 >= ratio * p50 ... */
	uint64_t tail_floor_ns;		/* ... and p99 - p50 >= floor */
};

struct ift_chains;

/*
 * ift_chains_new - a collector with OPTS (NULL: the defaults).  Returns NULL
 * and sets errno on failure; release with ift_chains_free().
 */
struct ift_chains *ift_chains_new(const struct ift_chain_opts *opts);

/* Points H at the collector's hooks: pass them to ift_analysis_run(). */
void ift_chains_hooks(struct ift_chains *c, struct ift_analyze_hooks *h);

/*
 * ift_chains_build - build the chains of analysis A (run with the hooks
 * above) over trace T, which both must outlive.  Returns 0 or a negative
 * error.
 */
int ift_chains_build(struct ift_chains *c, const struct ift_analysis *a,
		     struct ift_trace *t);

/* Ranked: severity, then cost.  Owned by the collector. */
size_t ift_chains_count(const struct ift_chains *c);
const struct ift_chain *ift_chains_get(const struct ift_chains *c, size_t i);

void ift_chains_free(struct ift_chains *c);

/* A stage's idle time on the counted GPUs, the part of it the chains of
   the stage explain (their gpu.idle_ns summed), and the rest. */
struct ift_gpu_idle {
	uint64_t idle_ns, explained_ns, unexplained_ns;
};
void ift_chains_gpu_idle(const struct ift_chains *c, enum ift_stage stage,
			 struct ift_gpu_idle *out);

/*
 * A trace's report, as report, export and mcp all take it: the analysis
 * and the causal chains of one pass over the trace.  ift_report_run() runs
 * the pass over T with AOPTS (NULL: the whole trace, no filter; the hooks
 * are the chains' own) and builds the chains with COPTS (NULL: the
 * defaults).  Returns 0, or a negative error with R empty.  R points into
 * T, which must outlive it; ift_report_release() frees it.
 */
struct ift_job;
struct ift_report {
	struct ift_analysis *a;
	struct ift_chains *c;
	/* the job of the trace's NCCL ranks (ift_job_run() over it), set and
	   owned by the caller; NULL: none, or shown apart (several traces) */
	const struct ift_job *job;
};
int ift_report_run(struct ift_trace *t, const struct ift_analyze_opts *aopts,
		   const struct ift_chain_opts *copts, struct ift_report *r);
void ift_report_release(struct ift_report *r);

/* The call sites (record --stack) of R's window, the top IFT_SITES_TOP of
   each op, as every report output shows them: *N of them, owned by R; none
   for a trace without stacks. */
const struct ift_site *ift_report_sites(const struct ift_report *r, size_t *n);

/* The Python call sites (record --py-stack) of R's window, as every report
   output shows them (ift_analysis_py_sites()); they are shown, even none,
   when ift_report_py() says the trace holds Python frames. */
const struct ift_py_op *ift_report_py_sites(const struct ift_report *r, size_t *n);
bool ift_report_py(const struct ift_report *r);

/*
 * What `top' shows of one window of a trace (analyze/top.c): the report's
 * figures it picks, in the order it shows them.
 */
#define IFT_TOP_OPS		8	/* ops, most time first */
#define IFT_TOP_FEEDERS		8	/* feeders, most CUDA waiting ended first */

/* The machine over the window, from the recorder's samples of /proc. */
struct ift_top_load {
	unsigned samples;		/* 0: none in the window */
	uint32_t busy_permille;		/* the CPUs' time busy, mean */
	uint32_t runnable_milli;	/* tasks runnable (procs.running), mean x 1000 */
	uint32_t runnable_max;
};

struct ift_top_op {
	const struct ift_op_stats *s;	/* of the window */
	uint64_t per_s_milli;		/* calls a second of the window, x 1000 */
};

/* A feeder (input worker, input thread, relay), as the scheduler saw it. */
struct ift_top_feeder {
	const struct ift_thread_info *th;
	uint64_t fed_ns;		/* the CUDA threads' blocked time its
					   wake-ups ended (role evidence) */
	/* of the time its state was known (on-CPU + run queue + blocked) */
	uint32_t on_cpu_permille, runq_permille, blocked_permille;
};

struct ift_top_frame {
	const struct ift_analysis_summary *sum;
	struct ift_top_load load;
	size_t nops;
	struct ift_top_op ops[IFT_TOP_OPS];
	size_t ops_left;		/* ops of the window not shown */
	const struct ift_chain *chain;	/* the most costly, or NULL */
	size_t nfeeders;
	struct ift_top_feeder feeders[IFT_TOP_FEEDERS];
	size_t feeders_left;
	const struct ift_gpu_use *gpu;
};

/* The frame of report R (run over the window top shows).  Points into R. */
void ift_top_frame(const struct ift_report *r, struct ift_top_frame *f);

/* What `report --diff' compares two reports on, beyond the op tables. */
struct ift_report_totals {
	uint64_t wall_ns;		/* the window */
	uint64_t cuda_ns, cuda_calls;	/* outermost calls, all threads */
	uint64_t on_cpu_ns, runq_ns, blocked_ns, invol, vol, pages;
	uint64_t chain_ns[IFT_SEV_HIGH + 1];	/* chain cost by severity */
};
void ift_report_totals(const struct ift_report *r, struct ift_report_totals *x);

/* One op on both sides of a diff; a side without it has zeros. */
struct ift_op_pair {
	const char *name;
	const struct ift_op_stats *cur, *base;
};

/*
 * ift_report_op_pairs - every op of either report, the current one's first
 * (most time first), then those only the baseline has.  Returns an array of
 * *N pairs the caller frees with free(), pointing into both reports; NULL
 * with errno ENOMEM.
 */
struct ift_op_pair *ift_report_op_pairs(const struct ift_report *cur,
					const struct ift_report *base, size_t *n);

const char *ift_cause_name(enum ift_cause cause);	/* "cpu_contention", ... */
const char *ift_severity_name(enum ift_severity sev);	/* "HIGH", ... */
const char *ift_phase_name(enum ift_phase phase);	/* "inside", "before" */

#endif
