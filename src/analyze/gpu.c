// SPDX-License-Identifier: MIT
/*
 * The GPUs as NVML measured them (record's gpu_samples table): each GPU's
 * time covered by the driver's utilization samples and the part of it a
 * kernel ran, over the window and over the steady state.
 *
 * A sample is the percent of its span during which a kernel ran; where a
 * span lies partly outside the window (or the steady state), the part
 * inside is taken at the sample's percent: the driver says no more of how
 * the busy time lay within its period.  The pass keeps the samples (a few
 * a second a GPU); the figures are made once the loops are known.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "util/array.h"

/* Which of the two metrics the analysis keeps row R is: 1 utilization,
   2 a process's memory, 0 neither (the ids found once, by name). */
static int metric_of(struct ift_analysis *a, const uint64_t *r)
{
	struct az_gpu *g = &a->gpu;
	uint64_t id = r[IFT_GS_METRIC];
	const char *m;

	/* the ids plus one: 0 is not found yet */
	if (id + 1 == g->util_id1 || id + 1 == g->proc_id1)
		return id + 1 == g->util_id1 ? 1 : 2;
	if (!(m = ift_trace_string(a->t, id)))
		return 0;
	if (!strcmp(m, "util.gpu_percent"))
		return g->util_id1 = id + 1, 1;
	if (!strcmp(m, "proc.used_bytes"))
		return g->proc_id1 = id + 1, 2;
	return 0;
}

int ift_az_gpu_row(struct ift_analysis *a, const uint64_t *r)
{
	struct az_gpu *g = &a->gpu;
	int m = metric_of(a, r);

	if (m == 1 && r[IFT_GS_SPAN]) {
		if (ift_array_grow((void **)&g->s, &g->caps, g->ns + 1, sizeof(*g->s)) < 0)
			return -ENOMEM;
		g->s[g->ns++] = (struct az_gpu_sample){ r[IFT_C_TS], r[IFT_GS_SPAN],
							(uint32_t)r[IFT_GS_GPU],
							(uint32_t)r[IFT_GS_VALUE] };
	} else if (m == 2 && r[IFT_GS_VALUE]) {
		if (ift_array_grow((void **)&g->p, &g->capp, g->np + 1, sizeof(*g->p)) < 0)
			return -ENOMEM;
		g->p[g->np++] = (struct az_gpu_proc){ (uint32_t)r[IFT_C_PID], (uint32_t)r[IFT_GS_GPU] };
	}
	return 0;
}

/* The time of [A, B) within [LO, HI]. */
static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
	uint64_t s = a > lo ? a : lo, e = b < hi ? b : hi;

	return e > s ? e - s : 0;
}

/* The steady state of the CUDA threads' loops: the first's start to the
   last's end; false when no thread has one. */
static bool steady(const struct ift_analysis *a, uint64_t *from, uint64_t *to)
{
	*from = UINT64_MAX;
	*to = 0;
	for (size_t i = 0; i < a->nloops; i++) {
		const struct ift_loop_info *l = &a->loops[i].info;

		if (!l->period || !l->to_ts)
			continue;
		*from = l->from_ts < *from ? l->from_ts : *from;
		*to = l->to_ts > *to ? l->to_ts : *to;
	}
	return *to > *from;
}

static struct ift_gpu_info *gpu_of(struct az_gpu *g, uint32_t idx)
{
	for (size_t i = 0; i < g->out.ngpus; i++)
		if (g->info[i].gpu == idx)
			return &g->info[i];
	return NULL;
}

static int add_gpu(struct ift_analysis *a, uint32_t idx)
{
	struct az_gpu *g = &a->gpu;
	struct ift_gpu_info *v;
	char key[32];

	if (gpu_of(g, idx))
		return 0;
	if (!(v = realloc(g->info, (g->out.ngpus + 1) * sizeof(*v))))
		return -ENOMEM;
	g->info = v;
	v = &g->info[g->out.ngpus++];
	memset(v, 0, sizeof(*v));
	v->gpu = idx;
	snprintf(key, sizeof(key), "gpu.%u.name", idx);
	v->name = ift_trace_meta(a->t, key);
	if (!v->name)
		v->name = "";
	return 0;
}

static int by_index(const void *x, const void *y)
{
	const struct ift_gpu_info *p = x, *q = y;

	return p->gpu < q->gpu ? -1 : p->gpu > q->gpu;
}

int ift_az_gpu_build(struct ift_analysis *a)
{
	struct az_gpu *g = &a->gpu;
	const char *nvml = ift_trace_meta(a->t, "gpu.nvml");
	uint64_t from, to;
	bool st = steady(a, &from, &to);
	int ret;

	const char *clock = ift_trace_meta(a->t, "clock.source");

	g->out.source = ift_trace_meta(a->t, "gpu.util_source");
	g->out.measured = g->ns > 0 && (!clock || !strcmp(clock, "mono"));
	/* NVML's samples are on CLOCK_MONOTONIC: another trace clock cannot
	   place them among the events */
	g->out.reason = g->out.measured ? NULL :
			g->ns ? "the trace clock is not CLOCK_MONOTONIC, NVML's samples are" :
			!nvml ? "the trace has no NVML record (an older recorder made it)" :
			strncmp(nvml, "ok ", 3) ? nvml : "NVML gave no utilization sample";
	if (!g->out.measured)
		g->ns = 0;
	if (st) {
		g->out.steady_from_ns = from - a->sum.start_ts;
		g->out.steady_to_ns = to - a->sum.start_ts;
	}
	for (size_t i = 0; i < g->ns; i++)
		if ((ret = add_gpu(a, g->s[i].gpu)) < 0)
			return ret;
	for (size_t i = 0; i < g->ns; i++) {
		const struct az_gpu_sample *s = &g->s[i];
		struct ift_gpu_info *v = gpu_of(g, s->gpu);
		uint64_t lo = s->ts - s->span, in = overlap(lo, s->ts, a->lo, a->hi);

		v->covered_ns += in;
		v->busy_ns += in * s->percent / 100;
		if (st) {
			in = overlap(lo, s->ts, from, to);
			v->steady_covered_ns += in;
			v->steady_busy_ns += in * s->percent / 100;
		}
	}
	/* a GPU a traced process held memory on */
	for (size_t i = 0; i < g->np; i++) {
		struct ift_gpu_info *v = gpu_of(g, g->p[i].gpu);

		if (v && ift_analysis_process_find(a, g->p[i].pid))
			v->used = true;
	}
	if (g->out.ngpus)	/* no GPU: no array to sort (qsort's NULL) */
		qsort(g->info, g->out.ngpus, sizeof(*g->info), by_index);
	g->out.gpus = g->info;
	return 0;
}

void ift_az_gpu_release(struct ift_analysis *a)
{
	free(a->gpu.s);
	free(a->gpu.p);
	free(a->gpu.info);
}

const struct ift_gpu_use *ift_analysis_gpu(const struct ift_analysis *a)
{
	return &a->gpu.out;
}
