// SPDX-License-Identifier: MIT
/*
 * Tests of src/analyze/job.c on traces written here, one per rank, each on
 * a clock of its own: the ranks found by ncclCommInitRank, the k-th
 * collective of one rank matched with the k-th of the other, the late rank
 * named a straggler with what the other waited for it, and the traces'
 * clocks put on one: by their wall-clock offsets, then by the collectives
 * (none returns before every rank entered it), which must bracket the
 * truth when the wall clock was wrong.  What ift-job.h promises, with
 * numbers made here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-error.h"
#include "ift-job.h"
#include "ift-trace.h"

#define T0		1000000000ULL		/* the job's time of the first call */
#define MS		1000000ULL
#define K		20			/* collectives a rank makes */
#define EVERY		(10 * MS)		/* one collective this often */
#define LATE		(2 * MS)		/* rank 1 enters this late */
#define AFTER		(100 * 1000ULL)		/* both return this long after */

static char tmpdir[] = "/tmp/ift-job.XXXXXX";

/* One rank's trace.  Its clock reads job time + SKEW; its META says
   clock.wall_offset_ns = WALL (the job's wall time less its clock). */
struct rank_trace {
	const char *name, *host;
	uint32_t pid;
	int32_t rank;
	int64_t skew, wall;
	uint64_t late;		/* how late it enters each collective */
};

static void write_rank(const struct rank_trace *rt, char *path, size_t len)
{
	static const struct ift_op init = {
		"ncclCommInitRank", IFT_API_NCCL, 4, { "comm", "nranks", "commId", "rank" },
	};
	static const struct ift_op allreduce = {
		"ncclAllReduce", IFT_API_NCCL, 3, { "sendbuff", "recvbuff", "count" },
	};
	struct ift_writer *w;
	int op_init, op_ar;

	snprintf(path, len, "%s/%s.trace", tmpdir, rt->name);
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	assert_int_equal(ift_writer_meta(w, "host.name", rt->host), 0);
	assert_int_equal(ift_writer_metaf(w, "clock.wall_offset_ns", "%" PRId64, rt->wall), 0);
	assert_int_equal(ift_writer_meta(w, "cpu.count", "2"), 0);
	op_init = ift_writer_op(w, &init);
	op_ar = ift_writer_op(w, &allreduce);
	assert_true(op_init > 0 && op_ar > 0);
	{
		uint64_t r[IFT_CALL_NR] = {
			T0 - MS + (uint64_t)rt->skew, 0, rt->pid, rt->pid, (uint64_t)op_init,
			1000, 0, 0, 0, 0x1000, 2, 0x2000, (uint64_t)rt->rank,
		};

		assert_int_equal(ift_writer_append(w, IFT_T_CALLS, r), 0);
	}
	for (uint64_t i = 0; i < K; i++) {
		uint64_t enter = T0 + i * EVERY + rt->late, leave = T0 + i * EVERY + LATE + AFTER;
		uint64_t r[IFT_CALL_NR] = {
			enter + (uint64_t)rt->skew, 0, rt->pid, rt->pid, (uint64_t)op_ar,
			leave - enter, 0, 0, 0, 0x3000, 0x4000, 1024,
		};

		assert_int_equal(ift_writer_append(w, IFT_T_CALLS, r), 0);
	}
	assert_int_equal(ift_writer_finish(w), 0);
	ift_writer_free(w);
}

/* The job of rank traces V[0..N): its inputs in IN, the traces open. */
static int run_job(const struct rank_trace *v, size_t n, struct ift_job_input *in,
		   char (*paths)[256], struct ift_job **j)
{
	for (size_t i = 0; i < n; i++) {
		write_rank(&v[i], paths[i], sizeof(paths[i]));
		in[i] = (struct ift_job_input){ .path = paths[i] };
		assert_int_equal(ift_trace_open(paths[i], 0, &in[i].t), 0);
	}
	return ift_job_run(in, n, j);
}

static void close_job(struct ift_job_input *in, char (*paths)[256], size_t n, struct ift_job *j)
{
	ift_job_free(j);
	for (size_t i = 0; i < n; i++) {
		ift_trace_close(in[i].t);
		unlink(paths[i]);
	}
}

/* Rank 1 enters every collective LATE after rank 0: it is the straggler,
   and what rank 0 waited for it is its cost, exactly. */
static void test_straggler(void **state)
{
	const struct rank_trace v[2] = {
		{ "r0", "node0", 100, 0, 0, 5000, 0 },
		{ "r1", "node1", 200, 1, 0, 5000, LATE },
	};
	struct ift_job_input in[2];
	char paths[2][256];
	struct ift_job *j = NULL;
	const struct ift_job_rank *r0, *r1;
	int64_t shift;

	(void)state;
	assert_int_equal(run_job(v, 2, in, paths, &j), 0);
	assert_non_null(j);
	assert_int_equal(j->world, 2);
	assert_int_equal(j->nranks, 2);
	assert_int_equal(j->collectives, K);
	assert_int_equal(j->unmatched, 0);
	r0 = ift_job_rank_of(j, 0);
	r1 = ift_job_rank_of(j, 1);
	assert_non_null(r0);
	assert_non_null(r1);
	assert_int_equal(r0->pid, 100);
	assert_int_equal(r1->pid, 200);
	assert_string_equal(r1->host, "node1");
	assert_int_equal(r1->last, K);
	assert_int_equal(r0->last, 0);
	/*
	 * On the job's clock rank 1 entered LATE + shift after rank 0: the
	 * shift is the tight bound less a wake-up measured in rank 1's own
	 * trace, where no rank waited, so it is off by up to the wake-up here
	 * (AFTER) and no more (docs/report.md, "Jobs").  Its lateness and the
	 * waiting it caused (from rank 0's entry to its own) follow exactly.
	 */
	shift = j->clocks[1].shift_ns;
	assert_true(shift >= -(int64_t)AFTER && shift <= (int64_t)AFTER);
	assert_true(j->clocks[1].lo_ns <= 0 && 0 <= j->clocks[1].hi_ns);
	assert_int_equal(r1->late_ns, K * (uint64_t)((int64_t)LATE + shift));
	assert_int_equal(r1->cost_ns, K * (uint64_t)((int64_t)LATE + shift));
	assert_int_equal(r0->cost_ns, 0);
	/* inside: rank 0 from its entries to the common returns */
	assert_int_equal(r0->in_ns, K * (LATE + AFTER));
	assert_int_equal(r1->in_ns, K * AFTER);
	assert_true(j->nstragglers >= 1);
	assert_ptr_equal(&j->ranks[j->stragglers[0].rank], r1);
	assert_string_equal(j->stragglers[0].op, "ncclAllReduce");
	assert_int_equal(j->stragglers[0].last, K);
	assert_int_equal(j->stragglers[0].cost_ns, r1->cost_ns);
	assert_int_equal(j->stragglers[0].share_permille, 1000);
	assert_null(j->stragglers[0].cause);	/* no report given: no chain */
	close_job(in, paths, 2, j);
}

/*
 * Rank 1's clock reads 5 s ahead of rank 0's and its META says so
 * (a wall offset 5 s smaller): on the job's clock the collectives line
 * up, so the refinement's bounds hold 0.  Then its wall offset is wrong by
 * 3 ms (a clock NTP had not settled): the bounds the collectives give must
 * hold the shift that undoes it, -3 ms, and the shift taken lies inside
 * them.
 */
static void test_clocks(void **state)
{
	const int64_t skew = 5000 * (int64_t)MS, wrong = 3 * (int64_t)MS;
	struct rank_trace v[2] = {
		{ "c0", "node0", 100, 0, 0, 7000, 0 },
		{ "c1", "node1", 200, 1, skew, 7000 - skew, LATE },
	};
	struct ift_job_input in[2];
	char paths[2][256];
	struct ift_job *j = NULL;
	const struct ift_job_clock *c;

	(void)state;
	assert_int_equal(run_job(v, 2, in, paths, &j), 0);
	assert_non_null(j);
	c = &j->clocks[1];
	assert_true(c->refined);
	assert_int_equal(c->collectives, K);
	assert_true(c->lo_ns <= 0 && 0 <= c->hi_ns);
	assert_true(c->lo_ns <= c->shift_ns && c->shift_ns <= c->hi_ns);
	assert_true(c->shift_ns >= -(int64_t)AFTER && c->shift_ns <= (int64_t)AFTER);
	close_job(in, paths, 2, j);

	v[1].wall += wrong;
	assert_int_equal(run_job(v, 2, in, paths, &j), 0);
	assert_non_null(j);
	c = &j->clocks[1];
	assert_int_equal(c->wall_offset_ns, 7000 - skew + wrong);
	assert_true(c->refined);
	assert_true(c->lo_ns <= -wrong && -wrong <= c->hi_ns);
	assert_true(c->lo_ns <= c->shift_ns && c->shift_ns <= c->hi_ns);
	/* undone to within the wake-up, as with a right wall clock */
	assert_true(c->shift_ns + wrong >= -(int64_t)AFTER && c->shift_ns + wrong <= (int64_t)AFTER);
	/* the bounds are the collectives' own: each rank's return after the
	   other's entry, AFTER and LATE + AFTER, and no wider */
	assert_int_equal(c->hi_ns - c->lo_ns, (int64_t)(LATE + 2 * AFTER));
	close_job(in, paths, 2, j);
}

/* Two processes that claim one rank are no job: -IFT_E_JOB.  One rank
   alone is none either: no job, and no error. */
static void test_not_a_job(void **state)
{
	const struct rank_trace twice[2] = {
		{ "d0", "node0", 100, 0, 0, 0, 0 },
		{ "d1", "node1", 200, 0, 0, 0, LATE },
	};
	struct ift_job_input in[2];
	char paths[2][256];
	struct ift_job *j = NULL;

	(void)state;
	assert_int_equal(run_job(twice, 2, in, paths, &j), -IFT_E_JOB);
	assert_null(j);
	close_job(in, paths, 2, NULL);
	assert_int_equal(run_job(twice, 1, in, paths, &j), 0);
	assert_null(j);
	close_job(in, paths, 1, NULL);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_straggler),
		cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_not_a_job),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
