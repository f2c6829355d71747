// SPDX-License-Identifier: MIT
/*
 * Causal chains on traces built row by row, where the cost of every cause
 * is known by construction: a thread preempted inside slow synchronizes
 * (CPU contention, named preemptor), a thread blocked between calls until
 * a loader worker wakes it (data starvation), a thread faulting in pages
 * between calls (page-allocation pressure), a thread blocked in long
 * synchronizes on an idle host (GPU-bound, and nothing else), and a tail
 * under the floor (no chain, until the floor is lowered).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "ift-chains.h"
#include "tracebuild.h"

#define CUDA	100		/* the CUDA process and thread */
#define WORKER	200		/* a loader worker process */

static struct ift_chains *chains_run(struct tb *b, const struct ift_chain_opts *copts)
{
	struct ift_analyze_opts opts = { 0 };
	struct ift_chains *c = ift_chains_new(copts);

	assert_non_null(c);
	ift_chains_hooks(c, &opts.hooks);
	tb_run(b, &opts);
	assert_int_equal(ift_chains_build(c, b->a, b->t), 0);
	return c;
}

/* The chain of CAUSE in STAGE (0: any stage), or NULL. */
static const struct ift_chain *stage_chain_of(const struct ift_chains *c,
					      enum ift_cause cause, enum ift_stage stage)
{
	const struct ift_chain *found = NULL;

	for (size_t i = 0; i < ift_chains_count(c); i++) {
		const struct ift_chain *ch = ift_chains_get(c, i);

		if (ch->cause != cause || (stage && ch->stage != stage))
			continue;
		/* one chain per (op, cause) in a stage: never the same twice */
		assert_null(found);
		found = ch;
	}
	return found;
}

static const struct ift_chain *chain_of(const struct ift_chains *c, enum ift_cause cause)
{
	return stage_chain_of(c, cause, 0);
}

static uint64_t num(const struct ift_chain *ch, const char *key)
{
	for (size_t i = 0; i < ch->nnums; i++)
		if (!strcmp(ch->nums[i].key, key))
			return ch->nums[i].value;
	fail_msg("chain has no evidence '%s'", key);
	return 0;
}

static void names(struct tb *b)
{
	task(b, 1 * US, CUDA, CUDA, IFT_TASK_COMM, 0, 0, "train");
	task(b, 2 * US, CUDA, CUDA, IFT_TASK_FORK, WORKER, WORKER, "train");
	task(b, 3 * US, WORKER, WORKER, IFT_TASK_COMM, 0, 0, "pt_data_worker");
}

/*
 * 95 synchronizes of 100 us on CPU, and 5 where the thread is preempted
 * 10 us in by the worker for 10 ms: each of those lasts 10.05 ms and waits
 * 10 ms for its CPU.  50 us between calls, on CPU.
 */
static void build_contention(struct tb *b)
{
	uint64_t t = 1 * MS;

	tb_begin(b, "contention", 2000 * MS);
	names(b);
	sw(b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 100; i++) {
		bool slow = i % 20 == 7;
		uint64_t d = slow ? 10 * MS + 50 * US : 100 * US;

		call(b, t, CUDA, CUDA, OP_SYNC, d, 0, 0, 0, 0, 0, 0, 0);
		if (slow) {
			sw(b, t + 10 * US, 0, CUDA, CUDA, S_PREEMPT, WORKER, WORKER);
			sw(b, t + 10 * US + 10 * MS, 0, WORKER, WORKER, S_RUN, CUDA, CUDA);
		}
		t += d + 50 * US;
	}
}

static void test_cpu_contention(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t wall = 95 * 150 * US + 5 * (10 * MS + 100 * US) - 50 * US;

	(void)state;
	build_contention(&b);
	c = chains_run(&b, NULL);

	ch = chain_of(c, IFT_CAUSE_CPU_CONTENTION);
	assert_non_null(ch);
	assert_int_equal(ch->phase, IFT_PHASE_INSIDE);
	assert_string_equal(ch->op, "cudaStreamSynchronize");
	assert_int_equal(ch->pid, CUDA);
	assert_int_equal(ch->tid, CUDA);
	assert_int_equal(ch->p50_ns, 100 * US);
	assert_int_equal(ch->p99_ns, 10 * MS + 50 * US);
	/* waiting for a CPU inside a call is lost at any percentile: all of it */
	assert_int_equal(ch->cost_ns, 5 * 10 * MS);
	assert_int_equal(num(ch, "waiting_calls"), 5);
	assert_int_equal(num(ch, "excess_ns"), 5 * (10 * MS + 50 * US - 100 * US));
	assert_int_equal(num(ch, "slow_calls"), 5);
	assert_int_equal(num(ch, "runqueue_wait_ns"), 5 * 10 * MS);
	assert_int_equal(num(ch, "involuntary_switches"), 5);
	assert_int_equal(num(ch, "preemptions"), 5);	/* its name in 0.1 */
	assert_int_equal(ch->wall_ns, wall);
	/* 49.75 ms of 64.7 ms */
	assert_int_equal(ch->severity, IFT_SEV_HIGH);
	/* the worker took all of it */
	assert_true(ch->ntasks >= 1);
	assert_string_equal(ch->tasks[0].relation, "preempted");
	assert_int_equal(ch->tasks[0].tid, WORKER);
	assert_string_equal(ch->tasks[0].comm, "pt_data_worker");
	/* named pt_data_worker, but it fed nothing: names never decide alone */
	assert_int_equal(ch->tasks[0].role, IFT_ROLE_NONE);
	assert_int_equal(ch->tasks[0].ns, 5 * 10 * MS);
	assert_int_equal(ch->tasks[0].share_permille, 1000);
	assert_false(ch->tasks[0].outside);
	/* the worst occurrence: the first of the slow calls (ties: first) */
	assert_true(ch->nsteps >= 3);
	assert_int_equal(ch->steps[0].t_ns, 1 * MS + 7 * 150 * US);
	assert_string_equal(ch->steps[ch->nsteps - 1].layer, "cuda");
	assert_int_equal(ch->steps[ch->nsteps - 1].t_ns,
			 1 * MS + 7 * 150 * US + 10 * MS + 50 * US);
	assert_non_null(strstr(ch->summary, "pt_data_worker"));
	assert_non_null(strstr(ch->summary, "cudaStreamSynchronize"));
	/* a process that only preempts is no input worker: the general fix */
	assert_true(ch->nrecs >= 1);
	assert_non_null(strstr(ch->recs[0], "CPU of its own"));

	/* nothing else: the thread never blocks, allocates or waits on a device */
	assert_int_equal(ift_chains_count(c), 1);
	ift_chains_free(c);

	/* a tail ratio above the real one (100.5x): no slow call, and the same
	   run-queue wait all the same */
	{
		struct ift_chain_opts o = { .tail_ratio = 101, .tail_floor_ns = 1 * MS };

		c = chains_run(&b, &o);
		ch = chain_of(c, IFT_CAUSE_CPU_CONTENTION);
		assert_non_null(ch);
		assert_int_equal(ch->cost_ns, 5 * 10 * MS);
		assert_int_equal(num(ch, "slow_calls"), 0);
		ift_chains_free(c);
	}
	tb_end(&b);
}

/*
 * 95 synchronizes of 10 us and 5 of 100 us that wait 90 us for a CPU: the
 * ratio is 10x but the excess (90 us) is under the 1 ms floor.
 */
static void test_tail_under_floor(void **state)
{
	struct ift_chain_opts low = { .tail_ratio = 3, .tail_floor_ns = 50 * US };
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "floor", 100 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 100; i++) {
		bool slow = i % 20 == 3;
		uint64_t d = slow ? 100 * US : 10 * US;

		call(&b, t, CUDA, CUDA, OP_SYNC, d, 0, 0, 0, 0, 0, 0, 0);
		if (slow) {
			sw(&b, t + 5 * US, 0, CUDA, CUDA, S_PREEMPT, WORKER, WORKER);
			sw(&b, t + 95 * US, 0, WORKER, WORKER, S_RUN, CUDA, CUDA);
		}
		t += d + 5 * US;
	}
	c = chains_run(&b, NULL);
	assert_null(chain_of(c, IFT_CAUSE_CPU_CONTENTION));
	for (size_t i = 0; i < ift_chains_count(c); i++)
		assert_int_equal(ift_chains_get(c, i)->severity, IFT_SEV_LOW);
	ift_chains_free(c);

	/* under a 50 us floor the same tail is a chain */
	c = chains_run(&b, &low);
	ch = chain_of(c, IFT_CAUSE_CPU_CONTENTION);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 5 * 90 * US);
	/* a trace without stacks names no call site */
	assert_int_equal(ch->nsites, 0);
	assert_null(ch->sites);
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * A feeding thread: 50 copies of 200 us on CPU; between them it blocks for
 * 5 ms, less the 2 us from the worker's wake-up to its switch-in (the
 * worker runs meanwhile), then runs 90 us before the next copy.
 */
/*
 * 50 copies of 200 us; between them the feeding thread is 100 us on CPU
 * and waits 5 ms for the worker, which wakes it 2 us before it runs.  With
 * IO, it first sleeps IO uninterruptibly (D: a page read in, ended by the
 * disk's interrupt, no task's wake-up).  Returns the end of the last copy.
 */
static uint64_t starve(struct tb *b, uint64_t io)
{
	uint64_t t = 1 * MS;

	names(b);
	sw(b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 50; i++) {
		uint64_t s = t + 200 * US + 10 * US;	/* 10 us on CPU after the return */

		call(b, t, CUDA, CUDA, OP_MEMCPY, 200 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 200 * US;
		if (i == 49)
			break;
		if (io) {
			sw(b, s, 0, CUDA, CUDA, S_IO, 0, 0);
			sw(b, s + io, 0, 0, 0, S_RUN, CUDA, CUDA);
			s += io + 10 * US;		/* and 10 us after the read */
		}
		sw(b, s, 0, CUDA, CUDA, S_SLEEP, WORKER, WORKER);
		wk(b, s - 2 * US + 5 * MS, 0, CUDA, CUDA, IFT_WAKE_WAKING, 0, WORKER, WORKER);
		sw(b, s + 5 * MS, 0, WORKER, WORKER, S_SLEEP, CUDA, CUDA);
		/* the rest of its 100 us on CPU */
		t = s + 5 * MS + (io ? 80 : 90) * US;
	}
	return t;
}

static void test_data_starvation(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t wall;

	(void)state;
	tb_begin(&b, "starve", 1000 * MS);
	wall = starve(&b, 0) - 1 * MS;
	c = chains_run(&b, NULL);

	ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
	assert_non_null(ch);
	assert_int_equal(ch->phase, IFT_PHASE_BEFORE);
	assert_string_equal(ch->op, "cudaMemcpy");
	assert_int_equal(ch->tid, CUDA);
	/* blocked until the worker woke it, and on CPU in the gap (5.1 ms long,
	   over the floor) for 10 + 90 us */
	assert_int_equal(ch->cost_ns, 49 * (5 * MS - 2 * US) + 49 * 100 * US);
	assert_int_equal(num(ch, "fed_ns"), 49 * (5 * MS - 2 * US));
	assert_int_equal(num(ch, "on_cpu_ns"), 49 * 100 * US);
	assert_non_null(strstr(ch->summary, "blocked"));
	assert_int_equal(ch->wall_ns, wall);
	assert_int_equal(ch->severity, IFT_SEV_HIGH);
	assert_int_equal(num(ch, "gaps"), 49);
	assert_int_equal(num(ch, "fed_gaps"), 49);
	assert_int_equal(num(ch, "blocked_ns"), 49 * (5 * MS - 2 * US));
	assert_int_equal(num(ch, "blocked_io_ns"), 0);
	assert_int_equal(num(ch, "runqueue_wait_ns"), 49 * 2 * US);
	assert_true(ch->ntasks >= 1);
	assert_string_equal(ch->tasks[0].relation, "woke");
	assert_int_equal(ch->tasks[0].tid, WORKER);
	assert_int_equal(ch->tasks[0].count, 49);
	assert_int_equal(ch->tasks[0].ns, 49 * (5 * MS - 2 * US));
	assert_non_null(strstr(ch->summary, "pt_data_worker"));
	assert_true(ch->nrecs >= 1);
	/* the worst gap's timeline: previous call returns ... next call */
	assert_string_equal(ch->steps[0].layer, "cuda");
	assert_string_equal(ch->steps[ch->nsteps - 1].layer, "cuda");
	assert_int_equal(ch->steps[ch->nsteps - 1].t_ns - ch->steps[0].t_ns,
			 10 * US + 5 * MS + 90 * US);

	/* no tail: the copies all take 200 us; no contention or pages */
	assert_null(chain_of(c, IFT_CAUSE_CPU_CONTENTION));
	assert_null(chain_of(c, IFT_CAUSE_PAGE_ALLOC));
	assert_null(chain_of(c, IFT_CAUSE_GPU_BOUND));
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * The starving thread of test_data_starvation first sleeps 1 ms in D in
 * each gap: the gaps' blocked time holds both waits, the uninterruptible
 * part apart, and only the worker's is waiting for input.
 */
static void test_io_sleep_in_gaps(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;

	(void)state;
	tb_begin(&b, "iosleep", 1000 * MS);
	starve(&b, 1 * MS);
	c = chains_run(&b, NULL);

	ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
	assert_non_null(ch);
	assert_int_equal(num(ch, "gaps"), 49);
	assert_int_equal(num(ch, "blocked_io_ns"), 49 * 1 * MS);
	assert_int_equal(num(ch, "fed_ns"), 49 * (5 * MS - 2 * US));
	assert_int_equal(num(ch, "blocked_ns"), 49 * (6 * MS - 2 * US));
	ift_chains_free(c);
	tb_end(&b);
}

/* 20 copies of 100 us, and between them 5 ms on CPU faulting in PAGES
   fresh pages, EVERY apart. */
static void storm(struct tb *b, int pages, uint64_t every)
{
	uint64_t t = 1 * MS;

	names(b);
	sw(b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 20; i++) {
		call(b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 100 * US;
		if (i == 19)
			break;
		for (int p = 0; p < pages; p++)
			page(b, t + 1 * US + (uint64_t)p * every, CUDA, CUDA, 0);
		t += 5 * MS;
	}
}

/*
 * Between 20 copies the feeding thread runs 5 ms on CPU and faults in 2,000
 * fresh 4 KiB pages: estimated at 1 us each, 2 ms, over a quarter of the
 * gap, so the whole gap is a page-fault storm.
 */
static void test_page_alloc(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;

	(void)state;
	tb_begin(&b, "pages", 1000 * MS);
	storm(&b, 2000, 2 * US);
	c = chains_run(&b, NULL);
	ch = chain_of(c, IFT_CAUSE_PAGE_ALLOC);
	assert_non_null(ch);
	assert_int_equal(ch->phase, IFT_PHASE_BEFORE);
	assert_int_equal(ch->cost_ns, 19 * 5 * MS);
	assert_int_equal(num(ch, "page_allocs"), 19 * 2000);
	assert_int_equal(num(ch, "page_alloc_bytes"), 19ULL * 2000 * 4096);
	assert_int_equal(ch->severity, IFT_SEV_HIGH);
	assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
	assert_null(chain_of(c, IFT_CAUSE_CPU_CONTENTION));
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * The same storm on a host where a fault costs 8 us (a loaded VM, a
 * memory-hungry neighbour): 500 pages fill the 5 ms of each gap.  Weighed at
 * the 1 us of a trace that does not say, the faults are a tenth of the gap
 * and the rest reads as building input; weighed at what the recorder
 * measured on the machine, the gap is the storm it is.  Of the two
 * measurements (start, end) the larger counts; garbage is ignored.
 */
static void test_page_alloc_slow_host(void **state)
{
	static const char *const keys[] = {
		"host.page_fault_ns.start", "host.page_fault_ns.stop",
	};
	static const char *const measured[][2] = {
		{ NULL, NULL },			/* an older trace */
		{ "6000", "8000" },
		{ "8000", "2000000" },		/* past 1 ms a page: garbage */
	};
	struct ift_chains *c;
	struct tb b;

	(void)state;
	for (int m = 0; m < 3; m++) {
		const struct ift_chain *ch;

		tb_begin(&b, "pages-slow", 1000 * MS);
		for (int k = 0; k < 2 && measured[m][k]; k++)
			assert_int_equal(ift_writer_meta(b.w, keys[k], measured[m][k]), 0);
		storm(&b, 500, 10 * US);
		c = chains_run(&b, NULL);
		ch = chain_of(c, IFT_CAUSE_PAGE_ALLOC);
		if (!m) {
			/* 500 pages at 1 us: a tenth; the rest is the thread's own */
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 19 * 500 * US);
			assert_int_equal(num(ch, "page_fault_ns"), 1000);
			ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 19 * (5 * MS - 500 * US));
		} else {
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 19 * 5 * MS);
			assert_int_equal(num(ch, "page_fault_ns"), 8000);
			assert_int_equal(num(ch, "page_allocs"), 19 * 500);
			assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
		}
		ift_chains_free(c);
		tb_end(&b);
	}
}

/*
 * The storm of test_page_alloc_slow_host in a trace that does not say what
 * a fault costs (1 us a page: a tenth of each gap), with the profile's
 * samples every 100 us of the thread's CPU: 49 in each gap.  Where FAULTS
 * of them are in a page fault, the faults hold at least their share less
 * two standard deviations of their count: 40 (56% of the gap at least)
 * make every gap a storm; 9 (6% at least, under the pages' tenth) and 4
 * (none: too few to say) leave the rest of the gap the thread's own work.
 */
static void test_page_alloc_profiled(void **state)
{
	static const int faults[] = { 40, 9, 4 };
	struct ift_chains *c;
	struct tb b;

	(void)state;
	for (size_t m = 0; m < sizeof(faults) / sizeof(faults[0]); m++) {
		const struct ift_chain *ch;
		uint64_t t = 1 * MS + 100 * US;

		tb_begin(&b, "pages-profiled", 1000 * MS);
		assert_int_equal(ift_writer_meta(b.w, "profile.period_ns", "100000"), 0);
		storm(&b, 500, 10 * US);
		for (int i = 0; i < 19; i++, t += 5 * MS + 100 * US)
			for (int k = 0; k < 49; k++) {
				uint64_t r[IFT_PF_NR] = {
					T0 + t + 50 * US + (uint64_t)k * 100 * US, 0, CUDA, CUDA,
					b.stack, IFT_PF_F_KERNEL * (k < faults[m]) |
					IFT_PF_F_FAULT * (k < faults[m]),
				};

				add(&b, IFT_T_PROFILE, r);
			}
		c = chains_run(&b, NULL);
		ch = chain_of(c, IFT_CAUSE_PAGE_ALLOC);
		assert_non_null(ch);
		if (!m) {
			assert_int_equal(ch->cost_ns, 19 * 5 * MS);
			assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
		} else {
			assert_int_equal(ch->cost_ns, 19 * 500 * US);
			ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 19 * (5 * MS - 500 * US));
		}
		ift_chains_free(c);
		tb_end(&b);
	}
}

/*
 * A feeding thread that builds every batch itself: 8 ms on CPU between
 * 100 us copies, never blocked, a few pages (under a quarter of the time at
 * 1 us each).  Data starvation, from its on-CPU time in the gaps.
 */
static void test_builds_own_input(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "ownput", 1000 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 30; i++) {
		call(&b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 100 * US;
		if (i == 29)
			break;
		for (int p = 0; p < 100; p++)
			page(&b, t + 10 * US + (uint64_t)p * 10 * US, CUDA, CUDA, 0);
		t += 8 * MS;
	}
	c = chains_run(&b, NULL);
	ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
	assert_non_null(ch);
	/* 8 ms a gap less 100 pages at 1 us */
	assert_int_equal(ch->cost_ns, 29 * (8 * MS - 100 * US));
	assert_int_equal(num(ch, "on_cpu_gaps"), 29);
	assert_int_equal(num(ch, "fed_ns"), 0);
	assert_non_null(strstr(ch->summary, "built its input itself"));
	assert_int_equal(ch->severity, IFT_SEV_HIGH);
	assert_non_null(strstr(ch->recs[0], "builds each batch itself"));
	/* no profile to say what the batches cost: the advice stays possible */
	assert_int_equal(ch->nrecs, 2);
	assert_non_null(strstr(ch->recs[1], "x[idx[i:i+batch]]"));
	/* 100 pages a gap is no storm: under the 2% of a chain */
	assert_null(chain_of(c, IFT_CAUSE_PAGE_ALLOC));
	ift_chains_free(c);

	/* gaps under a floor of 10 ms are the loop's own overhead */
	{
		struct ift_chain_opts o = { .tail_ratio = 3, .tail_floor_ns = 10 * MS };

		c = chains_run(&b, &o);
		assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
		ift_chains_free(c);
	}
	tb_end(&b);
}

/*
 * The probes' own cost in the gaps: a thread on CPU 1.2 ms between 100 us
 * copies, never blocked.  Over the 1 ms floor, that is data starvation;
 * but each gap holds the traps of one pair of probes (host.probe_ns), the
 * tracer's time, not the program's.  At 100 us a pair (an emulated CPU)
 * each gap keeps 1.1 ms of its own; at 300 us it is under the floor and no
 * chain is left.  A value past 10 ms is garbage and ignored.
 */
static void test_probe_cost_in_gaps(void **state)
{
	static const struct {
		const char *probe_ns;
		uint64_t cost;			/* 0: no chain */
	} cases[] = {
		{ NULL, 29 * 1200 * US },	/* an older trace: not measured */
		{ "100000", 29 * 1100 * US },
		{ "300000", 0 },
		{ "20000000", 29 * 1200 * US },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct ift_chain *ch;
		struct ift_chains *c;
		struct tb b;
		uint64_t t = 1 * MS;

		tb_begin(&b, "probecost", 1000 * MS);
		if (cases[k].probe_ns)
			assert_int_equal(ift_writer_meta(b.w, "host.probe_ns",
							 cases[k].probe_ns), 0);
		names(&b);
		sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
		for (int i = 0; i < 30; i++) {
			call(&b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
			t += 100 * US + 1200 * US;
		}
		c = chains_run(&b, NULL);
		ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
		if (!cases[k].cost) {
			assert_null(ch);
		} else {
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, cases[k].cost);
			assert_int_equal(num(ch, "on_cpu_gaps"), 29);
			/* the evidence names the cost it took out, if any */
			if (k == 1)
				assert_int_equal(num(ch, "probe_ns"), 100000);
			for (size_t i = 0; k != 1 && i < ch->nnums; i++)
				assert_string_not_equal(ch->nums[i].key, "probe_ns");
		}
		ift_chains_free(c);
		tb_end(&b);
	}
}

/*
 * Steal on a VM: between 30 copies the feeding thread runs 8 ms on CPU 0,
 * faulting in 1,000 pages (1 ms at 1 us each) and sleeping 8 us midway
 * (an interrupt wakes it).  The guest sees it running all the while; the
 * samples say the hypervisor had CPU 0 for 75% of the time.  Of each gap's
 * 7,992 us running, 5,994 us were the hypervisor's: CPU contention, not the
 * program.  The 1,998 us left are the storm's (its faults over a quarter of
 * them).  The same steal on the other CPU, or only in the machine's total,
 * takes nothing from this thread: then 6,992 us a gap read as building input.
 */
static void test_steal(void **state)
{
	static const uint64_t scopes[] = { 1, 2, 0 };	/* CPU 0, CPU 1, all */

	(void)state;
	for (size_t k = 0; k < sizeof(scopes) / sizeof(scopes[0]); k++) {
		const struct ift_chain *ch;
		struct ift_chains *c;
		struct tb b;
		uint64_t t = 1 * MS;

		tb_begin(&b, "steal", 1000 * MS);
		names(&b);
		sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
		/* a first sample starts each CPU's interval, with no steal */
		for (uint64_t sc = 0; sc < 3; sc++)
			sample_row(&b, 600 * US, 0, 0, sc, "cpu.steal_permille", 0);
		for (int i = 0; i < 30; i++) {
			uint64_t z = t + 100 * US + 4 * MS;

			call(&b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
			t += 100 * US;
			if (i == 29)
				break;
			for (int p = 0; p < 1000; p++)
				page(&b, t + 1 * US + (uint64_t)p * 3 * US, CUDA, CUDA, 0);
			sw(&b, z, 0, CUDA, CUDA, S_SLEEP, 0, 0);
			wk(&b, z + 8 * US, 0, CUDA, CUDA, IFT_WAKE_WAKING, 0, 0, 0);
			sw(&b, z + 8 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
			t += 8 * MS;
		}
		sample_row(&b, t + 1 * MS, 0, 0, scopes[k], "cpu.steal_permille", 750);
		c = chains_run(&b, NULL);
		ch = chain_of(c, IFT_CAUSE_PAGE_ALLOC);
		assert_non_null(ch);
		if (scopes[k] == 1) {
			assert_int_equal(ch->cost_ns, 29 * 1998 * US);
			assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
			ch = chain_of(c, IFT_CAUSE_CPU_CONTENTION);
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 29 * 5994 * US);
			assert_int_equal(num(ch, "steal_ns"), 29 * 5994 * US);
			assert_int_equal(num(ch, "runqueue_wait_ns"), 0);
			assert_non_null(strstr(ch->summary, "hypervisor took (steal)"));
			assert_true(ch->nrecs > 0);
			assert_non_null(strstr(ch->recs[0], "took 100% of this time"));
		} else {
			assert_int_equal(ch->cost_ns, 29 * 1 * MS);
			assert_int_equal(num(ch, "steal_ns"), 0);
			assert_null(chain_of(c, IFT_CAUSE_CPU_CONTENTION));
			ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
			assert_non_null(ch);
			assert_int_equal(ch->cost_ns, 29 * 6992 * US);
			assert_non_null(strstr(ch->summary, "built its input itself"));
		}
		ift_chains_free(c);
		tb_end(&b);
	}
}

/*
 * Start-up against steady state: the thread allocates (cudaMalloc), builds
 * a dataset for 500 ms on CPU, then feeds itself 20 batches with 8 ms gaps
 * (one cudaMemcpy each: a loop of period 1).  The wait before the loop's
 * first copy is the start-up's: a LOW chain of its own; the steady state
 * holds the 19 gaps between copies, and only it ranks.
 */
static void build_startup(struct tb *b)
{
	uint64_t t = 1 * MS;

	tb_begin(b, "startup", 1000 * MS);
	names(b);
	sw(b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	call(b, t, CUDA, CUDA, OP_MALLOC, 100 * US, 0, 0, 1 << 20, 0, 0, 0, 0);
	t += 100 * US + 500 * MS;
	for (int i = 0; i < 20; i++) {
		call(b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 100 * US + 8 * MS;
	}
}

static void test_startup_gap(void **state)
{
	const struct ift_chain *ch;
	const struct ift_thread_info *ti;
	struct ift_chains *c;
	struct tb b;

	(void)state;
	build_startup(&b);
	c = chains_run(&b, NULL);
	ti = ift_analysis_thread_find(b.a, CUDA);
	assert_non_null(ti);
	assert_int_equal(ti->loop.calls, 21);
	assert_int_equal(ti->loop.period, 1);
	assert_int_equal(ti->loop.iterations, 20);
	/* from the first copy's entry to the last copy's end */
	assert_int_equal(ti->loop.from_ns, 1 * MS + 100 * US + 500 * MS);
	assert_int_equal(ti->loop.to_ns, ti->loop.from_ns + 19 * (8 * MS + 100 * US) + 100 * US);

	ch = stage_chain_of(c, IFT_CAUSE_DATA_STARVATION, IFT_STAGE_STEADY);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 19 * 8 * MS);
	assert_int_equal(ch->wall_ns, 20 * 100 * US + 19 * 8 * MS);
	assert_int_equal(ch->severity, IFT_SEV_HIGH);
	assert_int_equal(num(ch, "worst_gap_ns"), 8 * MS);
	/* the first chain is the steady state's */
	assert_ptr_equal(ift_chains_get(c, 0), ch);

	ch = stage_chain_of(c, IFT_CAUSE_DATA_STARVATION, IFT_STAGE_STARTUP);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 500 * MS);
	assert_int_equal(ch->severity, IFT_SEV_LOW);
	assert_non_null(strstr(ch->summary, "start-up"));
	assert_non_null(strstr(ch->summary, "before the training loop began at 0.501 s"));
	assert_int_equal(num(ch, "loop_from_ns"), 1 * MS + 100 * US + 500 * MS);
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * Warm-up: the loop's first iteration is no steady state yet.  A cudaMalloc,
 * then 20 copies 8 ms apart but for the first gap, 300 ms (the first batch
 * waits for the workers to start): that iteration is over 4x the median, so
 * it is start-up; the steady state begins with the second copy.
 */
static void test_warmup(void **state)
{
	const struct ift_thread_info *ti;
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS, second = 0;

	(void)state;
	tb_begin(&b, "warmup", 1000 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	call(&b, t, CUDA, CUDA, OP_MALLOC, 100 * US, 0, 0, 1 << 20, 0, 0, 0, 0);
	t += 100 * US + 8 * MS;
	for (int i = 0; i < 20; i++) {
		if (i == 1)
			second = t;
		call(&b, t, CUDA, CUDA, OP_MEMCPY, 100 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 100 * US + (i ? 8 * MS : 300 * MS);
	}
	c = chains_run(&b, NULL);
	ti = ift_analysis_thread_find(b.a, CUDA);
	assert_int_equal(ti->loop.period, 1);
	assert_int_equal(ti->loop.warmup, 1);
	assert_int_equal(ti->loop.iterations, 19);
	assert_int_equal(ti->loop.from_ns, second);
	ch = stage_chain_of(c, IFT_CAUSE_DATA_STARVATION, IFT_STAGE_STEADY);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 18 * 8 * MS);
	ch = stage_chain_of(c, IFT_CAUSE_DATA_STARVATION, IFT_STAGE_STARTUP);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 8 * MS + 300 * MS);
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * No loop at all: five different calls with 20 ms of CPU work between
 * them.  All of it is start-up, paid once: a LOW chain that says so.
 */
static void test_no_loop(void **state)
{
	static const int ops[] = { OP_MALLOC, OP_MEMCPY, OP_LAUNCH, OP_SYNC, OP_MEMCPY2D };
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "noloop", 1000 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		call(&b, t, CUDA, CUDA, (unsigned)ops[i], 100 * US, 0, 0, 1, 2, 4096, 1, 0);
		t += 100 * US + 20 * MS;
	}
	c = chains_run(&b, NULL);
	assert_int_equal(ift_analysis_thread_find(b.a, CUDA)->loop.period, 0);
	for (size_t i = 0; i < ift_chains_count(c); i++) {
		assert_int_equal(ift_chains_get(c, i)->severity, IFT_SEV_LOW);
		assert_int_equal(ift_chains_get(c, i)->stage, IFT_STAGE_STARTUP);
	}
	ch = stage_chain_of(c, IFT_CAUSE_DATA_STARVATION, IFT_STAGE_STARTUP);
	assert_non_null(ch);
	assert_int_equal(ch->cost_ns, 4 * 20 * MS);
	assert_non_null(strstr(ch->summary, "no training loop found"));
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * GPU-bound and healthy: 40 launches of 20 us, each followed by a 20 ms
 * synchronize blocked until the device is done (woken from an interrupt);
 * the host is otherwise idle.  No host cause, one LOW GPU-bound chain.
 */
static void test_gpu_bound(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "gpubound", 2000 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 40; i++) {
		call(&b, t, CUDA, CUDA, OP_LAUNCH, 20 * US, 0, 0, 1, 0, 0, 0, 0);
		t += 30 * US;
		call(&b, t, CUDA, CUDA, OP_SYNC, 20 * MS, 0, 0, 0, 0, 0, 0, 0);
		sw(&b, t + 5 * US, 0, CUDA, CUDA, S_SLEEP, 0, 0);
		wk(&b, t + 20 * MS - 10 * US, 0, CUDA, CUDA, IFT_WAKE_WAKING, 0, 0, 0);
		sw(&b, t + 20 * MS - 5 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
		t += 20 * MS + 10 * US;
	}
	c = chains_run(&b, NULL);
	for (size_t i = 0; i < ift_chains_count(c); i++)
		assert_int_equal(ift_chains_get(c, i)->severity, IFT_SEV_LOW);
	ch = chain_of(c, IFT_CAUSE_GPU_BOUND);
	assert_non_null(ch);
	assert_string_equal(ch->op, "cudaStreamSynchronize");
	/* all but the 5 us from each wake-up to the switch-in */
	assert_int_equal(ch->cost_ns, 40 * (20 * MS - 5 * US));
	assert_int_equal(ift_chains_count(c), 1);
	assert_non_null(strstr(ch->summary, "nothing to fix on the host"));
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * GPU-bound with a tail: the same run, but every tenth synchronize waits
 * 100 ms for the device (p99 5x p50), so the op's tail is device time too.
 * One gpu_bound chain for the op, the whole op's (device wait and run-queue
 * wait given as every gpu_bound chain gives them): the tail's took its
 * place without them, and a 5.10 guest's report had no device_wait_ns.
 */
static void test_gpu_bound_tail(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS, waited = 0;
	int n = 0;

	(void)state;
	tb_begin(&b, "gpubound-tail", 4000 * MS);
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 40; i++) {
		uint64_t d = i % 10 == 9 ? 100 * MS : 20 * MS;

		call(&b, t, CUDA, CUDA, OP_LAUNCH, 20 * US, 0, 0, 1, 0, 0, 0, 0);
		t += 30 * US;
		call(&b, t, CUDA, CUDA, OP_SYNC, d, 0, 0, 0, 0, 0, 0, 0);
		sw(&b, t + 5 * US, 0, CUDA, CUDA, S_SLEEP, 0, 0);
		wk(&b, t + d - 10 * US, 0, CUDA, CUDA, IFT_WAKE_WAKING, 0, 0, 0);
		sw(&b, t + d - 5 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
		waited += d - 5 * US;
		t += d + 10 * US;
	}
	c = chains_run(&b, NULL);
	for (size_t i = 0; i < ift_chains_count(c); i++)
		n += ift_chains_get(c, i)->cause == IFT_CAUSE_GPU_BOUND;
	assert_int_equal(n, 1);
	ch = chain_of(c, IFT_CAUSE_GPU_BOUND);
	assert_string_equal(ch->op, "cudaStreamSynchronize");
	assert_int_equal(ch->cost_ns, waited);
	assert_int_equal(num(ch, "device_wait_ns"), waited);
	/* each call waited 5 us for its CPU, from its wake-up to its switch-in */
	assert_int_equal(num(ch, "runqueue_wait_ns"), 40 * 5 * US);
	assert_non_null(strstr(ch->summary, "nothing to fix on the host"));
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * Waits for a CPU that blame no one: 40 synchronizes of 2 ms, each blocked
 * until the device wakes the thread, which then waits 400 us before it runs,
 * behind the idle task (a wake-up's latency, or a switch-in the kernel did
 * not write) in even calls, behind the recorder itself (recorder.pid) in odd
 * ones.  No CPU contention, and the run is GPU-bound.
 */
static void test_excused_waits(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "excused", 1000 * MS);
	assert_int_equal(ift_writer_meta(b.w, "recorder.pid", "300"), 0);
	names(&b);
	task(&b, 5 * US, 300, 300, IFT_TASK_COMM, 0, 0, "ingero-ftrace");
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 40; i++) {
		uint64_t by = i % 2 ? 300 : 0;

		call(&b, t, CUDA, CUDA, OP_SYNC, 2 * MS, 0, 0, 0, 0, 0, 0, 0);
		sw(&b, t + 10 * US, 0, CUDA, CUDA, S_SLEEP, by, by);
		wk(&b, t + 1500 * US, 1, CUDA, CUDA, IFT_WAKE_WAKING, 0, 0, 0);
		sw(&b, t + 1900 * US, 0, by, by, by ? S_SLEEP : S_RUN, CUDA, CUDA);
		t += 2 * MS + 20 * US;
	}
	c = chains_run(&b, NULL);
	assert_null(chain_of(c, IFT_CAUSE_CPU_CONTENTION));
	ch = chain_of(c, IFT_CAUSE_GPU_BOUND);
	assert_non_null(ch);
	assert_int_equal(ift_chains_count(c), 1);
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * A side thread of the CUDA process makes a call at start and one at the
 * end, blocked in between until the worker wakes it: it did not starve,
 * only the feeding thread (the most CUDA time in the process) is judged.
 */
static void test_side_thread(void **state)
{
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS;

	(void)state;
	tb_begin(&b, "side", 1000 * MS);
	names(&b);
	task(&b, 4 * US, CUDA, CUDA, IFT_TASK_CLONE, CUDA + 1, CUDA, "train");
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	sw(&b, 600 * US, 1, 0, 0, S_RUN, CUDA + 1, CUDA);
	call(&b, 700 * US, CUDA + 1, CUDA, OP_MALLOC, 10 * US, 0, 0, 4096, 0, 0, 0, 0);
	sw(&b, 800 * US, 1, CUDA + 1, CUDA, S_SLEEP, 0, 0);
	for (int i = 0; i < 100; i++) {
		call(&b, t, CUDA, CUDA, OP_LAUNCH, 50 * US, 0, 0, 1, 0, 0, 0, 0);
		t += 60 * US;
	}
	wk(&b, t, 1, CUDA + 1, CUDA, IFT_WAKE_WAKING, 1, WORKER, WORKER);
	sw(&b, t + 1 * US, 1, 0, 0, S_RUN, CUDA + 1, CUDA);
	call(&b, t + 2 * US, CUDA + 1, CUDA, OP_MALLOC, 10 * US, 0, 0, 4096, 0, 0, 0, 0);
	c = chains_run(&b, NULL);
	assert_null(chain_of(c, IFT_CAUSE_DATA_STARVATION));
	assert_int_equal(ift_chains_count(c), 0);
	ift_chains_free(c);
	tb_end(&b);
}

/* Names from the traced program reach the chains as they are, NULs aside,
   and a trace without CUDA calls has no chain at all. */
static void test_no_calls(void **state)
{
	struct ift_chains *c;
	struct tb b;

	(void)state;
	tb_begin(&b, "nocalls", 10 * MS);
	names(&b);
	sw(&b, 1 * MS, 0, 0, 0, S_RUN, CUDA, CUDA);
	sw(&b, 2 * MS, 0, CUDA, CUDA, S_PREEMPT, WORKER, WORKER);
	page(&b, 3 * MS, WORKER, WORKER, 0);
	c = chains_run(&b, NULL);
	assert_int_equal(ift_chains_count(c), 0);
	assert_null(ift_chains_get(c, 0));
	ift_chains_free(c);
	tb_end(&b);
}

/* A call site of two frames: the probed function, called from SYMBOL. */
static uint64_t site(struct tb *b, const char *symbol)
{
	const struct ift_frame fr[] = {
		{ .module = "/lib/libcudart.so.12", .symbol = "cudaStreamSynchronize" },
		{ .module = "/app/train", .offset = 0x1234, .symbol = symbol, .symoff = 0x15 },
	};
	int64_t id = ift_writer_stack(b->w, fr, 2);

	assert_true(id > 0);
	return (uint64_t)id;
}

/*
 * Where each chain lost its time: the contention trace with its 95 fast
 * synchronizes made from one site and its 5 preempted ones from another,
 * then a feeding thread whose copies alternate between two sites, those
 * from the second after a 5 ms wait for a loader worker, those from the
 * first after 50 us on CPU (under the floor: no cost).
 */
static void test_chain_sites(void **state)
{
	const struct ift_chain *ch;
	struct ift_chains *c;
	struct tb b;
	uint64_t t = 1 * MS, fast, slow;

	(void)state;
	tb_begin(&b, "sites-inside", 2000 * MS);
	fast = site(&b, "fast_path");
	slow = site(&b, "slow_path");
	names(&b);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 100; i++) {
		bool is_slow = i % 20 == 7;
		uint64_t d = is_slow ? 10 * MS + 50 * US : 100 * US;

		b.stack = is_slow ? slow : fast;
		call(&b, t, CUDA, CUDA, OP_SYNC, d, 0, 0, 0, 0, 0, 0, 0);
		if (is_slow) {
			sw(&b, t + 10 * US, 0, CUDA, CUDA, S_PREEMPT, WORKER, WORKER);
			sw(&b, t + 10 * US + 10 * MS, 0, WORKER, WORKER, S_RUN, CUDA, CUDA);
		}
		t += d + 50 * US;
	}
	c = chains_run(&b, NULL);
	ch = chain_of(c, IFT_CAUSE_CPU_CONTENTION);
	assert_non_null(ch);
	assert_int_equal(ch->phase, IFT_PHASE_INSIDE);
	/* the slow calls' site alone, with all of the cost */
	assert_int_equal(ch->nsites, 1);
	assert_int_equal(ch->sites[0].stack, slow);
	assert_int_equal(ch->sites[0].calls, 5);
	assert_int_equal(ch->sites[0].cost_ns, 5 * 10 * MS);
	assert_int_equal(ch->sites[0].share_permille, 1000);
	assert_non_null(ch->sites[0].frames);
	assert_int_equal(ch->sites[0].frames->nframes, 2);
	assert_string_equal(ch->sites[0].frames->frames[1].symbol, "slow_path");
	ift_chains_free(c);
	tb_end(&b);

	tb_begin(&b, "sites-before", 1000 * MS);
	fast = site(&b, "fast_path");
	slow = site(&b, "starved_path");
	names(&b);
	t = 1 * MS;
	sw(&b, 500 * US, 0, 0, 0, S_RUN, CUDA, CUDA);
	for (int i = 0; i < 50; i++) {
		b.stack = i % 2 ? slow : fast;
		call(&b, t, CUDA, CUDA, OP_MEMCPY, 200 * US, 0, 0, 1, 2, 1 << 20, 1, 0);
		t += 200 * US;
		if (i == 49)
			break;
		if (i % 2) {
			/* the next copy, from the fast site, follows on CPU */
			t += 50 * US;
			continue;
		}
		sw(&b, t + 10 * US, 0, CUDA, CUDA, S_SLEEP, WORKER, WORKER);
		wk(&b, t + 8 * US + 5 * MS, 0, CUDA, CUDA, IFT_WAKE_WAKING, 0, WORKER, WORKER);
		sw(&b, t + 10 * US + 5 * MS, 0, WORKER, WORKER, S_SLEEP, CUDA, CUDA);
		t += 10 * US + 5 * MS + 90 * US;
	}
	c = chains_run(&b, NULL);
	ch = chain_of(c, IFT_CAUSE_DATA_STARVATION);
	assert_non_null(ch);
	assert_int_equal(ch->phase, IFT_PHASE_BEFORE);
	/* 25 starved gaps, each ended by a copy from the second site */
	assert_int_equal(num(ch, "fed_gaps"), 25);
	assert_int_equal(ch->nsites, 1);
	assert_int_equal(ch->sites[0].stack, slow);
	assert_int_equal(ch->sites[0].calls, 25);
	assert_int_equal(ch->sites[0].cost_ns, ch->cost_ns);
	assert_int_equal(ch->sites[0].share_permille, 1000);
	assert_string_equal(ch->sites[0].frames->frames[1].symbol, "starved_path");
	ift_chains_free(c);
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_contention),
		cmocka_unit_test(test_tail_under_floor),
		cmocka_unit_test(test_data_starvation),
		cmocka_unit_test(test_io_sleep_in_gaps),
		cmocka_unit_test(test_page_alloc),
		cmocka_unit_test(test_page_alloc_slow_host),
		cmocka_unit_test(test_page_alloc_profiled),
		cmocka_unit_test(test_builds_own_input),
		cmocka_unit_test(test_probe_cost_in_gaps),
		cmocka_unit_test(test_steal),
		cmocka_unit_test(test_startup_gap),
		cmocka_unit_test(test_no_loop),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_gpu_bound),
		cmocka_unit_test(test_gpu_bound_tail),
		cmocka_unit_test(test_excused_waits),
		cmocka_unit_test(test_side_thread),
		cmocka_unit_test(test_no_calls),
		cmocka_unit_test(test_chain_sites),
	};

	return cmocka_run_group_tests_name("chains", tests, tb_setup, tb_teardown);
}
