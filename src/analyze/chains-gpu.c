// SPDX-License-Identifier: MIT
/*
 * The GPU's idle time each chain explains (record's NVML samples).
 *
 * A chain's windows are its gaps and its calls.  As each closes in the
 * pass, it takes the idle time of the GPUs its thread's process used (each
 * utilization sample's span at 100 less its percent, the part inside the
 * window, clipped to the window's stage), in the share of the window its
 * cause cost: a gap of 10 ms blocked 8 ms for input takes 8/10 of the idle
 * time in it for data starvation.  Each sample's idle time is taken once:
 * windows of two threads on one GPU that overlap share it, first come
 * first served, so the chains of a stage never explain more than its idle
 * time.  A gpu_bound chain takes none: waiting for the device is no cause
 * of its idle time, but its windows say how busy it was.  The driver says no more of where the idle time lay within its
 * period, so a window shorter than a sample takes its even share.
 */
#include <errno.h>
#include <stdlib.h>

#include "chains.h"

/* The idle time of NS of a sample of PERCENT busy. */
static uint64_t idle_of(uint64_t ns, uint32_t percent)
{
	return ns * (100 - (percent > 100 ? 100 : percent)) / 100;
}

/* The idle time left in each sample, made at the first window. */
static int left_init(struct ift_chains *c)
{
	size_t n;
	const struct ift_gpu_sample *s = ift_analysis_gpu_samples(c->a, &n);

	if (c->gpu_left || !n)
		return 0;
	if (!(c->gpu_left = malloc(n * sizeof(*c->gpu_left))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		c->gpu_left[i] = idle_of(s[i].span, s[i].percent);
	return 0;
}

/* The first sample of GPU at or after the one that covers TS: samples are
   by GPU, then time, each (ts - span, ts]. */
static size_t first_sample(const struct ift_gpu_sample *s, size_t n, uint32_t gpu, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].gpu < gpu || (s[mid].gpu == gpu && s[mid].ts <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ift_ch_gpu_window(struct ift_chains *c, uint32_t pid, enum ift_stage stage,
		      uint64_t from, uint64_t to, const uint64_t cost[], struct ch_gpu acc[])
{
	size_t n;
	const struct ift_gpu_sample *s = ift_analysis_gpu_samples(c->a, &n);
	uint64_t mask = ift_analysis_gpu_mask(c->a, pid), len = to - from, lo, hi;
	int ret;

	if (!n || !mask || to <= from || !ift_analysis_gpu_stage(c->a, stage, &lo, &hi))
		return 0;
	if ((ret = left_init(c)) < 0)
		return ret;
	lo = from > lo ? from : lo;
	hi = to < hi + 1 ? to : hi + 1;
	for (uint32_t gpu = 0; gpu < 64 && lo < hi; gpu++) {
		if (!(mask & (1ULL << gpu)))
			continue;
		for (size_t i = first_sample(s, n, gpu, lo); i < n && s[i].gpu == gpu &&
		     s[i].ts - s[i].span < hi; i++) {
			uint64_t a = s[i].ts - s[i].span > lo ? s[i].ts - s[i].span : lo;
			uint64_t b = s[i].ts < hi ? s[i].ts : hi, in, idle;

			if (b <= a)
				continue;
			in = b - a;
			idle = idle_of(in, s[i].percent);
			for (int k = 1; k <= IFT_CAUSE_GPU_BOUND; k++) {
				uint64_t want, take;

				if (!cost[k])
					continue;
				/* waiting for the device is no cause of its idle time:
				   what idle there is then (the round trip of each
				   synchronize) stays unexplained */
				want = k == IFT_CAUSE_GPU_BOUND ? 0 :
				       (uint64_t)((double)idle * (double)cost[k] / (double)len);
				take = want < c->gpu_left[i] ? want : c->gpu_left[i];
				c->gpu_left[i] -= take;
				acc[k].idle += take;
				acc[k].time.covered_ns += in;
				acc[k].time.busy_ns += in - idle;
			}
		}
	}
	return 0;
}

void ift_ch_gpu_merge(struct ch_gpu *d, const struct ch_gpu *s)
{
	d->idle += s->idle;
	d->time.covered_ns += s->time.covered_ns;
	d->time.busy_ns += s->time.busy_ns;
}

void ift_ch_gpu_chain(const struct ift_chains *c, struct ift_chain *ch, const struct ch_gpu *g)
{
	const struct ift_gpu_use *u = ift_analysis_gpu(c->a);
	const struct ift_gpu_time *st = &u->counted[ch->stage];
	uint64_t idle = st->covered_ns - st->busy_ns;

	if (!u->measured)
		return;
	ch->gpu.measured = true;
	ch->gpu.idle_ns = g->idle;
	ch->gpu.idle_permille = ift_ch_permille(g->idle, idle);
	ch->gpu.meanwhile = g->time;
	/* a host cause whose windows found the GPU busy cost it nothing: the
	   host was slow, but the work queued ahead kept the GPU going */
	ch->gpu.not_waiting = ch->cause != IFT_CAUSE_GPU_BOUND && g->time.covered_ns &&
			      ift_ch_permille(g->time.busy_ns, g->time.covered_ns) >=
			      IFT_GPU_BUSY_PERMILLE;
	if (ch->gpu.not_waiting)
		ch->severity = IFT_SEV_LOW;
}

void ift_chains_gpu_idle(const struct ift_chains *c, enum ift_stage stage,
			 struct ift_gpu_idle *out)
{
	const struct ift_gpu_use *u = ift_analysis_gpu(c->a);
	const struct ift_gpu_time *st = &u->counted[stage];

	out->idle_ns = st->covered_ns - st->busy_ns;
	out->explained_ns = 0;
	for (size_t i = 0; i < c->nchains; i++)
		if (c->chains[i].stage == stage && c->chains[i].gpu.measured)
			out->explained_ns += c->chains[i].gpu.idle_ns;
	/* taken once from each sample: never more than the stage's */
	out->unexplained_ns = out->idle_ns - (out->explained_ns < out->idle_ns ?
					      out->explained_ns : out->idle_ns);
}
