/* SPDX-License-Identifier: MIT */
#ifndef IFT_JOB_H
#define IFT_JOB_H

/*
 * A job: the ranks of a NCCL communicator, from one trace or several (one
 * per node, `report -i A -i B'), on one clock.  Each rank is a process that
 * called ncclCommInitRank; the k-th collective of one rank is the k-th of
 * every other (NCCL's own rule: every rank calls the communicator's
 * collectives in the same order).  A collective returns on no rank before
 * the last one entered it, so:
 *
 * - the traces' clocks are aligned first by their wall-clock offsets
 *   (clock.wall_offset_ns), then refined by the collectives: none leaves
 *   one before every rank entered it, which bounds the refinement on both
 *   sides, tightly (within a wake-up, measured on one clock) on the side
 *   of the rank that entered last;
 * - the last rank into a collective made the others wait there: by how
 *   much each waited for it is the job's cost of that rank, and its own
 *   trace's chains say why it came late (a straggler).
 *
 * docs/report.md ("Jobs") documents every figure.  Nothing here prints or
 * exits; it reads the traces' calls and the reports' chains.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ift_trace;
struct ift_report;
struct ift_chain;

/* One trace of the job, with its report (chains), as the caller loaded it. */
struct ift_job_input {
	const char *path;
	struct ift_trace *t;
	const struct ift_report *r;
};

/* How trace I's clock was put on the job's (the first trace's). */
struct ift_job_clock {
	const char *host;		/* host.name, or "" */
	int64_t wall_offset_ns;		/* clock.wall_offset_ns (0: absent) */
	int64_t shift_ns;		/* job ns = trace ns + wall offset + shift,
					   less the first trace's wall offset */
	int64_t lo_ns, hi_ns;		/* the shifts no collective contradicts */
	uint64_t residual_ns;		/* median distance, after the shift, of
					   the returns of ranks that waited from
					   the first trace's */
	uint64_t collectives;		/* collectives the refinement used */
	uint64_t wake_ns;		/* the wake-up taken off the tight bound
					   (the mean of both sides' when both) */
	bool refined;			/* by collectives; else the wall clock alone */
};

/* One rank: a process of some trace that called ncclCommInitRank. */
struct ift_job_rank {
	size_t trace;			/* index of its ift_job_input */
	const char *host;
	uint32_t pid, tid;		/* its process; its thread of collectives */
	int32_t rank;
	uint64_t collectives;		/* its collectives matched across ranks */
	uint64_t in_ns;			/* time inside them */
	uint64_t waited_ns;		/* of it, in those it did not enter last */
	uint64_t last;			/* collectives it entered last (late) */
	uint64_t late_ns;		/* after the rank before it, summed */
	uint64_t cost_ns;		/* the others' waiting for it, summed */
};

/*
 * A straggler: a rank that entered collectives last and made the others
 * wait; its cause is its own trace's costliest chain on that process, or
 * none (NULL) when its host showed nothing (a slow GPU, or the program).
 */
struct ift_job_straggler {
	size_t rank;			/* index into ift_job.ranks */
	const char *op;			/* the collective it was late for most */
	uint64_t last, late_ns, late_p50_ns, cost_ns;
	uint32_t share_permille;	/* of all the waiting in the job */
	const struct ift_chain *cause;
};

struct ift_job {
	int32_t world;			/* nranks of ncclCommInitRank */
	size_t ntraces;
	struct ift_job_clock *clocks;	/* per input */
	size_t nranks;
	struct ift_job_rank *ranks;	/* by rank */
	uint64_t collectives;		/* matched across every rank */
	uint64_t unmatched;		/* collectives past the first mismatch */
	uint64_t waited_ns;		/* every rank's waiting, summed */
	size_t nstragglers;
	struct ift_job_straggler *stragglers;	/* most cost first */
};

/*
 * ift_job_run - the job of the ranks in the N traces of IN.  *OUT is NULL
 * (and 0 returned) when they hold fewer than two ranks of one communicator
 * size.  Returns 0, -IFT_E_JOB (two processes claim one rank, ranks of
 * different sizes) or a negative errno.
 */
int ift_job_run(const struct ift_job_input *in, size_t n, struct ift_job **out);
void ift_job_free(struct ift_job *j);

/*
 * ift_job_ranks - the ranks of trace T, each process's first communicator:
 * *N of them into *OUT (the caller frees it).  Returns 0 or a negative
 * error.
 */
struct ift_rank {
	uint32_t pid;
	int32_t rank, nranks;
};
int ift_job_ranks(struct ift_trace *t, struct ift_rank **out, size_t *n);

/* Rank R of job J; NULL when J is NULL or has no rank R (a side of a diff). */
const struct ift_job_rank *ift_job_rank_of(const struct ift_job *j, int32_t r);

/* A collective's op name, as ift_job counts them (not Send/Recv/groups). */
bool ift_job_collective(const char *op);

#endif
