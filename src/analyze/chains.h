/* SPDX-License-Identifier: MIT */
#ifndef IFT_CHAINS_INTERNAL_H
#define IFT_CHAINS_INTERNAL_H

/*
 * Private to the chains, in five files by stage: what is collected during
 * the analyzer's pass (chains-pass.c), the tallies and samples it adds to
 * (chains-tally.c), the GPU's idle time its windows take (chains-gpu.c),
 * the chains found from those numbers (chains.c), and how a chain says
 * what it found (chains-text.c).  Only the first two
 * include the analyzer's private analyze.h; the other two see the analysis
 * through ift-analyze.h and the accessors below (t005 holds it).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ift-chains.h"
#include "ift-words.h"
#include "ift-analyze.h"
#include "util/span.h"

/* What a fresh page costs its thread (fault and zeroing) in a trace that
   does not say (host.page_fault_ns, sample/faultcost.c): a lower bound,
   1.5-9 us were measured on the 2-CPU VMs we test on. */
#define PAGE_COST_NS		1000ULL
/* A thread is GPU-bound when it spends this share of its active time
   waiting in the device-waiting ops. */
#define GPU_BOUND_PERMILLE	500
/* Gap causes below this share of the active time make no chain. */
#define GAP_MIN_PERMILLE	20
/* An op-tail cause must explain this share of the op's excess. */
#define PART_MIN_PERMILLE	100
#define MAX_PEERS		256

struct ch_peer {
	uint32_t tid, pid;
	uint64_t ns, count;
};

struct ch_peers {
	struct ch_peer *v;
	size_t n, cap;
};

/* A tally of call sites (record --stack): what each cost a chain. */
struct ch_site {
	uint64_t stack, calls, cost;
};

struct ch_sites {
	struct ch_site *v;
	size_t n, cap;
};

/* One gap: from the end of a thread's outermost call to its next one. */
struct ch_gap {
	uint64_t start, end;		/* trace clock */
	uint64_t blocked, fed;		/* blocked; of it, ended by another task */
	uint64_t blocked_io;		/* of blocked, in uninterruptible sleep (D) */
	uint64_t runq;
	uint64_t excused;		/* of runq, behind the idle task or the recorder */
	uint64_t stolen;		/* of its running time, the hypervisor's (steal.c) */
	uint64_t pages, page_bytes;
	uint32_t samples, fault_samples; /* the profile's of the thread in it;
					   of them, in a page fault */
	uint32_t th;			/* the thread's index (ift_ch_thread_info()) */
	uint32_t prev_op, next_op;
	uint32_t waker_tid, waker_pid;	/* ended its longest blocked wait */
	uint64_t waker_max;
	uint64_t next_stack;		/* the call site of the call ending it */
};

/* The GPU in a chain's windows (chains-gpu.c): the idle time its cause
   took, and the time covered and busy. */
struct ch_gpu {
	uint64_t idle;
	struct ift_gpu_time time;
};

/* The system samples over some windows: their sums and counts. */
struct sysavg {
	uint64_t busy_sum, run_sum, nbusy, nrun;
};

/* Who ran on the CPUs in a window (trace clock): each task's time, and
   how often it was switched out runnable (preempted). */
struct usage_task {
	uint32_t tid, pid;
	uint64_t ns, preempted;
};

struct usage {
	struct usage_task *v;		/* most time first, once kept */
	size_t n, cap;
	uint64_t idle_ns, known_ns;	/* CPU time seen, of it idle */
};

/*
 * A window [FROM, TO] of a CUDA thread, its open gap or one of its open
 * calls, tallied as the pass goes: each switch in it credits the task it
 * switches out with its time there since the window began or the CPU's
 * last switch, and, once the pass is past TO, the task each CPU switched
 * in within the window gets the rest up to TO (FINAL).  A CPU that did not
 * switch in the window says nothing.  What the worst window of each kind
 * keeps (ift_ch_usage_keep()), so that no chain reads the switches again.
 */
struct ch_win {
	size_t seq;			/* a call's: its entry order */
	uint64_t from, to;
	bool final;
	struct usage u;
};

/* One cause over a thread's gaps (or, merged, over the selected threads'). */
struct gapacc {
	uint64_t fed, runq, excused, pages, page_bytes, gaps, fed_gaps, blocked, blocked_io;
	uint64_t stolen;		/* running, but the hypervisor had the CPU */
	uint64_t len;			/* the gaps' length in all */
	uint64_t oncpu, oncpu_gaps;	/* on CPU in gaps over the floor, less page faults */
	uint64_t cost;
	uint64_t worst_v;
	struct ch_gap worst;		/* valid when worst_v */
	struct usage worst_u;		/* on the CPUs in it (owned by a
					   thread's stage, else borrowed) */
	uint64_t *op_cost;		/* by next op */
	size_t nops;
	struct ch_peers peers;
	struct ch_peers relays;		/* data starvation: the relays between */
	struct sysavg sys;
	struct ch_sites sites;		/* of the calls ending its gaps */
	struct ch_gpu gpu;
};

/* What a thread's closed gaps of one stage add up to. */
struct ch_stage {
	struct ch_peers wakers, preemptors, relays;
	struct gapacc *gacc;		/* by cause, once it had a gap */
};

/* An outermost call waiting for the device, clipped where it overlaps the
   thread's call before it (lost returns): counted from FROM. */
struct ch_devcall {
	size_t seq;
	uint64_t from;
};

struct ift_ch_thread {
	struct ch_devcall *dev;		/* its open ones, in entry order */
	size_t ndev, capdev;
	uint64_t dev_until;		/* end of its latest one */
	bool active;			/* made an outermost call in the window */
	uint32_t last_op;
	uint64_t busy_until;		/* end of its latest outermost call */
	uint64_t first_call, last_end;
	const struct ift_loop_info *loop;	/* NULL: no calls seen before */
	struct ch_gap cur;		/* the gap now open */
	struct ch_win gwin;		/* who ran meanwhile, once it began */
	struct ch_win *cwin;		/* its open calls', any order; past
					   ncwin, buffers kept to reuse */
	size_t ncwin, capcwin;
	struct ch_peers gw, gp, gr;	/* in the open gap: wakers (the tasks
					   behind them), preemptors, relays */
	struct ch_stage stage[IFT_STAGE_TAIL + 1];	/* by enum ift_stage */
};

struct ch_cpu {
	uint64_t since;			/* its last switch */
	uint32_t tid, pid;		/* switched in then */
	bool known;
};

/* A call kept as the worst of something: a copy, with its attributions. */
struct ch_call {
	bool has;
	size_t seq;			/* entry order: the first of equals wins */
	uint64_t v;			/* what made it the worst */
	struct ift_call_info c;
	struct ift_call_attr *at;	/* c.nattr of them */
	struct usage u;			/* on the CPUs meanwhile */
};

/* The system samples over the calls of a set: those before each call's end
   are summed as the call closes; the first at or after its end may still be
   incomplete (or not read yet), so it is counted by index and added when the
   pass is over. */
struct ch_pend {
	size_t idx;
	uint64_t n;
};

struct sysdefer {
	struct sysavg v;
	struct ch_pend *pend;
	size_t npend, cap;
};

/* The calls of one op, as they close: what its chains inside calls say. */
struct opacc {
	bool flagged;			/* its tail is long */
	const struct ift_op_stats *st;	/* set when building */
	uint64_t p50;			/* over the selected calls (a->opq) */
	uint64_t thr, excess, slow;
	uint64_t waiting;		/* calls with run-queue wait inside */
	uint64_t excused;		/* run-queue wait behind idle or the recorder */
	struct sysdefer sys_wait;	/* over those calls */
	uint64_t part[IFT_CAUSE_GPU_BOUND + 1];
	struct ch_call worst[IFT_CAUSE_GPU_BOUND + 1];
	uint64_t pages, page_bytes, runq, preempt;
	struct sysdefer sys;
	struct ch_peers ran;
	struct ch_sites sites[IFT_CAUSE_GPU_BOUND + 1];	/* of the calls behind
							   each cause */
	struct ch_gpu gpu[IFT_CAUSE_GPU_BOUND + 1];
};

/* The outermost steady calls that wait for the device, of every thread. */
struct devacc {
	uint64_t *wait;			/* by op: device time */
	uint64_t total, runq;
	struct ch_call worst;
	struct ch_gpu gpu[IFT_CAUSE_GPU_BOUND + 1];	/* GPU_BOUND's */
};

struct ift_chains {
	struct ift_chain_opts o;
	struct opacc *opacc;		/* by op id, from the first event */
	size_t nopacc;
	struct devacc dev;
	struct ift_ch_thread *th;
	size_t nth;
	struct ift_chain *chains;
	size_t nchains, capchains;
	void **blocks;
	size_t nblocks, capblocks;
	int err;			/* the first error in a hook */
	uint32_t *active;		/* az_thread indexes of the CUDA threads */
	size_t nactive, capactive;
	struct ch_cpu *cpu;		/* who runs where, as the switches say */
	size_t ncpu;

	/* from the first event (ift_ch_start()) */
	const struct ift_analysis *a;
	bool *waits;			/* by op id: waits_for_device() */
	uint32_t recorder;		/* the recorder's pid (meta), or 0 */
	uint64_t page_ns;		/* what a fresh page costs its thread */
	uint64_t probe_ns;		/* what a call's two probes cost it, or 0 */
	bool meta_read;
	uint64_t *gpu_left;		/* by GPU sample: its idle time no window
					   took yet (chains-gpu.c) */

	/* while building */
	struct ift_trace *t;
	uint64_t start_ts;
	unsigned cpus;
	bool *sel;			/* by thread index: a listed CUDA thread */
	size_t nsel;
};

struct cb {
	struct ift_chains *c;
	struct ift_chain *ch;
	struct ift_chain_step steps[16];
	struct ift_chain_num nums[32];
	struct ift_chain_task tasks[16];
	const char *recs[8];
	struct ift_chain_site sites[IFT_CHAIN_SITES];
	struct ift_chain_py_site py_sites[IFT_CHAIN_SITES];
	size_t nsteps, nnums, ntasks, nrecs, nsites, npy_sites;
	uint64_t site_calls, py_calls;
	bool nomem;			/* a tally could not be made */
};

/* ---- what the roles of the preemptors or wakers suggest ------------- */

struct who {
	unsigned workers;		/* input worker processes in the analysis */
	unsigned threads;		/* input threads among the tasks */
	unsigned worker_share;		/* permille of the peers' ns by feeders */
	unsigned outside_share;		/* by tasks outside the traced processes */
	unsigned noutside;		/* how many of them */
	unsigned same_share;		/* by threads of the CUDA process */
	const struct ift_chain_task *outside;	/* the top one */
	const struct ift_chain_task *same;
};

/*
 * ---- chains-pass.c: during the analyzer's pass, on its private state
 * (analyze.h), which chains-pass.c and chains-tally.c alone include: what
 * finds and phrases the chains (chains.c, chains-text.c) reads the
 * analysis through ift-analyze.h and these.
 */
int ift_ch_start(struct ift_chains *c, const struct ift_analysis *a);
struct ift_ch_thread *ift_ch_thread(struct ift_chains *c, uint32_t idx);
bool ift_ch_steady(const struct ift_analysis *a, uint32_t tid, uint64_t ts);
/* The thread of index IDX (ch_gap.th, c->th's index). */
const struct ift_thread_info *ift_ch_thread_info(const struct ift_chains *c, uint32_t idx);
/* c->sel: the listed CUDA threads, whose gaps and active time count. */
int ift_ch_select(struct ift_chains *c);

/* ---- chains-tally.c: memory, the tallies of peers and sites, the system samples, words */
const char *ift_ch_bytes_str(char *buf, size_t len, uint64_t b);
void *ift_ch_alloc(struct ift_chains *c, size_t n, size_t size);
__attribute__((format(printf, 2, 3)))
const char *ift_ch_printf(struct ift_chains *c, const char *fmt, ...);
int ift_ch_cmp_peer(const void *x, const void *y);
const char *ift_ch_dur(char *buf, size_t len, uint64_t ns);
bool ift_ch_excused(const struct ift_chains *c, uint32_t tid, uint32_t pid);
const char *ift_ch_op_name(const struct ift_chains *c, uint32_t op);
int ift_ch_peer_add(struct ch_peers *p, uint32_t tid, uint32_t pid, uint64_t ns,
		    uint64_t count);
int ift_ch_peers_merge(struct ch_peers *d, const struct ch_peers *s);
unsigned ift_ch_permille(uint64_t part, uint64_t whole);
int ift_ch_site_add(struct ch_sites *s, uint64_t stack, uint64_t calls, uint64_t cost);
void ift_ch_sites_compact(struct ch_sites *s);
int ift_ch_sites_merge(struct ch_sites *d, const struct ch_sites *s);
void ift_ch_sys_add(const struct ift_chains *c, uint64_t s, uint64_t e, struct sysavg *v);
int ift_ch_sys_defer(struct ift_chains *c, uint64_t s, uint64_t e, struct sysdefer *d);
void ift_ch_sys_resolve(const struct ift_chains *c, struct sysdefer *d);
bool ift_ch_waits_for_device(const char *name);
void ift_ch_win_open(struct ch_win *w, size_t seq, uint64_t from, uint64_t to);
void ift_ch_win_switch(const struct ift_chains *c, struct ch_win *w, uint32_t cpu,
		       const uint64_t *r);
void ift_ch_win_end(const struct ift_chains *c, struct ch_win *w);
int ift_ch_usage_keep(struct usage *d, const struct usage *s);

/* ---- chains-gpu.c: the GPU's idle time each chain explains */
/* Window [FROM, TO) of a thread of PID in STAGE, whose cause K cost
   COST[K] of it: adds to ACC[K] (by cause) what it took of the GPU. */
int ift_ch_gpu_window(struct ift_chains *c, uint32_t pid, enum ift_stage stage,
		      uint64_t from, uint64_t to, const uint64_t cost[], struct ch_gpu acc[]);
void ift_ch_gpu_merge(struct ch_gpu *d, const struct ch_gpu *s);
/* CH's GPU figures from what its windows took, G. */
void ift_ch_gpu_chain(const struct ift_chains *c, struct ift_chain *ch, const struct ch_gpu *g);

/* ---- chains-text.c: a chain in words: steps, numbers, tasks, advice */
int ift_ch_cb_finish(struct cb *b);
void ift_ch_cb_num(struct cb *b, const char *key, uint64_t v);
/* KEY, a name of 0.1 that a figure had, beside its new one until 0.2 */
void ift_ch_cb_old_num(struct cb *b, const char *key, uint64_t v);
void ift_ch_cb_rec(struct cb *b, const char *text);
void ift_ch_cb_relays(struct cb *b, struct ch_peers *p);
void ift_ch_cb_sites(struct cb *b, struct ch_sites *s);
void ift_ch_cb_step(struct cb *b, uint64_t ts, const char *layer, const char *text);
void ift_ch_cb_tasks(struct cb *b, const char *relation, struct ch_peers *p, size_t max);
struct ift_chain *ift_ch_chain_new(struct ift_chains *c, enum ift_cause cause,
				   enum ift_phase phase, enum ift_stage stage,
				   const char *op, uint64_t cost, uint64_t wall);
void ift_ch_recommend_cpu(struct cb *b, uint32_t cuda_pid);
void ift_ch_recommend_data(struct cb *b, uint32_t cuda_pid, uint64_t fed, uint64_t oncpu,
			   uint64_t wall);
int ift_ch_stage_chain(struct cb *b, const struct gapacc *g, enum ift_cause cause,
		       enum ift_stage stage, const struct ift_thread_info *th, const char *tcomm,
		       const char *op, uint64_t cost, uint64_t wall);
uint32_t ift_ch_top_op(const struct gapacc *g);
const char *ift_ch_usage_text(struct ift_chains *c, const struct usage *u, uint64_t ts);

void ift_ch_gap_steps(struct cb *b, const struct ch_gap *w, const struct usage *u,
		      const struct ift_thread_info *th, const char *tcomm);
void ift_ch_gap_summary(struct cb *b, const struct gapacc *g, enum ift_cause cause,
		    const struct ift_thread_info *th, const char *tcomm, const char *op,
		    uint64_t cost, uint64_t wall);
void ift_ch_slow_steps(struct cb *b, const struct opacc *o, enum ift_cause cause);
void ift_ch_slow_summary(struct cb *b, const struct opacc *o, enum ift_cause cause);

#endif
