// SPDX-License-Identifier: MIT
/*
 * The analysis's read plan.  A report reads the trace this many times:
 *  1. the calls in the window, before the pass: each row is counted for
 *     the durations (durs.c) and goes to its thread's sequence of outermost
 *     ops (phases.c); between the reads the arrays are made to the counts
 *     and each thread's loop is found in its sequence;
 *  2. the calls in the window again: each duration into its array, and the
 *     times that bound each loop's iterations;
 *  3. the samples, from the trace's start to just past the window: each
 *     CPU's steal (steal.c), which the pass's chains take out of the time
 *     threads ran there;
 *  4. the GPUs' utilization samples, the whole table (gpu.c): each
 *     chain takes the GPU's idle time in its windows as they close;
 *  5. every other table in the window, once: the pass (analyze.c), which also
 *     tallies the call sites (sites.c) and who ran on the CPUs in each CUDA
 *     thread's open gap and calls, kept for the worst of each kind (struct
 *     ch_win): a chain's timeline reads nothing again.
 * Two reads of the calls before the pass keep the durations' memory exact
 * (8 bytes a selected call, no growth); a read is cheaper than the copies
 * of arrays grown as they fill (+50% peak RSS on gentrace's 50M events).
 * Beside a report: a job of NCCL ranks reads each trace's calls once more
 * (job.c).  MCP's get_stacks reads nothing again: its sites, of a pid or
 * all, come from the calls its analysis kept (ift_analysis_sites_of()).
 * test-reads counts them with ift_trace_reads() on a built trace.
 */
#include <errno.h>

#include "analyze.h"

/* One read of the calls in A's window, each row to ROW. */
static int read_calls(struct ift_analysis *a, struct az_seqs *seqs,
		      int (*row)(struct ift_analysis *, struct az_seqs *, const uint64_t *))
{
	struct ift_cursor *cur = ift_cursor_new(a->t, 1U << IFT_T_CALLS, a->lo);
	struct ift_event ev;
	int ret;

	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		if (ev.row[IFT_C_TS] > a->hi)
			break;
		if (ev.row[IFT_C_TS] >= a->lo && (ret = row(a, seqs, ev.row)) < 0)
			break;
	}
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}

static int count_row(struct ift_analysis *a, struct az_seqs *seqs, const uint64_t *r)
{
	int ret = ift_az_durs_row(a, r, false);

	return ret < 0 ? ret : ift_az_phases_row(seqs, r);
}

static int fill_row(struct ift_analysis *a, struct az_seqs *seqs, const uint64_t *r)
{
	int ret = ift_az_durs_row(a, r, true);

	return ret < 0 ? ret : ift_az_phases_bound(a, seqs, r);
}

int ift_az_plan_read(struct ift_analysis *a)
{
	struct az_seqs seqs = { 0 };
	int ret;

	if ((ret = ift_az_durs_begin(a)) >= 0 &&
	    (ret = read_calls(a, &seqs, count_row)) >= 0 &&
	    (ret = ift_az_durs_alloc(a)) >= 0 &&
	    (ret = ift_az_phases_loops(a, &seqs)) >= 0 &&
	    (ret = read_calls(a, &seqs, fill_row)) >= 0 &&
	    (ret = ift_az_durs_find(a)) >= 0) {
		ret = ift_az_phases_finish(a, &seqs);	/* releases seqs */
		if (ret >= 0)
			ret = ift_az_steal_read(a);
		return ret < 0 ? ret : ift_az_gpu_read(a);
	}
	ift_az_seqs_release(&seqs);
	return ret;
}
