// SPDX-License-Identifier: MIT
/*
 * What `top' shows of a window: a few of the report's figures, picked and
 * ordered here so that its renderer only renders.  The machine's load is
 * the mean of the recorder's samples in the window; a feeder's shares are
 * of the time the scheduler's events told where it was (a thread with no
 * event since the pass began is in none).
 */
#include <stdlib.h>
#include <string.h>

#include "ift-chains.h"

static void load_of(const struct ift_analysis *a, struct ift_top_load *l)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	uint64_t lo = s->start_ts + s->from_ns, hi = s->start_ts + s->to_ns;
	uint64_t busy = 0, nbusy = 0, run = 0, nrun = 0;
	size_t n;
	const struct ift_sys_sample *v = ift_analysis_samples(a, &n);

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < n; i++) {
		if (v[i].ts < lo || v[i].ts > hi)
			continue;
		if (v[i].busy_permille >= 0) {
			busy += (uint64_t)v[i].busy_permille;
			nbusy++;
		}
		if (v[i].running >= 0) {
			run += (uint64_t)v[i].running;
			nrun++;
			if ((uint64_t)v[i].running > l->runnable_max)
				l->runnable_max = (uint32_t)v[i].running;
		}
	}
	l->samples = (unsigned)(nbusy > nrun ? nbusy : nrun);
	if (nbusy)
		l->busy_permille = (uint32_t)((busy + nbusy / 2) / nbusy);
	if (nrun)
		l->runnable_milli = (uint32_t)((run * 1000 + nrun / 2) / nrun);
}

static bool feeds(enum ift_role role)
{
	return role == IFT_ROLE_INPUT_WORKER || role == IFT_ROLE_INPUT_THREAD ||
	       role == IFT_ROLE_RELAY;
}

static uint32_t permille(uint64_t part, uint64_t whole)
{
	return whole ? (uint32_t)((part * 1000 + whole / 2) / whole) : 0;
}

static int cmp_fed(const void *x, const void *y)
{
	const struct ift_top_feeder *a = x, *b = y;

	if (a->fed_ns != b->fed_ns)
		return a->fed_ns > b->fed_ns ? -1 : 1;
	return (a->th->tid > b->th->tid) - (a->th->tid < b->th->tid);
}

/* The feeders, most CUDA waiting ended first; the first IFT_TOP_FEEDERS kept. */
static void feeders_of(const struct ift_analysis *a, struct ift_top_frame *f)
{
	struct ift_top_feeder best[IFT_TOP_FEEDERS + 1];
	size_t n = 0;

	f->nfeeders = f->feeders_left = 0;
	for (size_t i = 0; i < ift_analysis_thread_count(a); i++) {
		const struct ift_thread_info *th = ift_analysis_thread(a, i);
		const struct ift_sched_stats *s = &th->sched;
		uint64_t known = s->on_cpu_ns + s->runqueue_wait_ns + s->blocked_ns;

		if (!feeds(th->role))
			continue;
		best[n] = (struct ift_top_feeder){
			.th = th,
			.fed_ns = th->role_evidence ? th->role_evidence->ns : 0,
			.on_cpu_permille = permille(s->on_cpu_ns, known),
			.runq_permille = permille(s->runqueue_wait_ns, known),
			.blocked_permille = permille(s->blocked_ns, known),
		};
		/* insertion into the kept few: a frame has thousands of threads at most */
		qsort(best, n + 1, sizeof(*best), cmp_fed);
		if (n < IFT_TOP_FEEDERS)
			n++;
		else
			f->feeders_left++;
	}
	memcpy(f->feeders, best, n * sizeof(*best));
	f->nfeeders = n;
}

void ift_top_frame(const struct ift_report *r, struct ift_top_frame *f)
{
	const struct ift_analysis *a = r->a;
	uint64_t dur;
	size_t nops = ift_analysis_op_count(a);

	memset(f, 0, sizeof(*f));
	f->sum = ift_analysis_summary(a);
	dur = f->sum->duration_ns ? f->sum->duration_ns : 1;
	load_of(a, &f->load);
	for (size_t i = 0; i < nops; i++) {
		const struct ift_op_stats *s = ift_analysis_op(a, i);

		if (f->nops == IFT_TOP_OPS) {
			f->ops_left++;
			continue;
		}
		f->ops[f->nops].s = s;
		f->ops[f->nops].per_s_milli =
			(uint64_t)((unsigned __int128)s->calls * 1000000000000ULL / dur);
		f->nops++;
	}
	f->chain = ift_chains_count(r->c) ? ift_chains_get(r->c, 0) : NULL;
	feeders_of(a, f);
	f->gpu = ift_analysis_gpu(a);
}
