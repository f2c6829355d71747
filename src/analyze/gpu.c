// SPDX-License-Identifier: MIT
/*
 * The GPUs as NVML measured them (record's gpu_samples table): each GPU's
 * time covered by the driver's utilization samples and the part of it a
 * kernel ran, over the window and over each stage (before, in and after
 * the CUDA threads' steady state).
 *
 * A sample is the percent of its span during which a kernel ran; where a
 * span lies partly outside the window (or a stage), the part inside is
 * taken at the sample's percent: the driver says no more of how the busy
 * time lay within its period.  The table is read whole after the loops are
 * found and before the pass (a few samples a second a GPU), so that the
 * chains can take the idle time of each window as it closes.
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

static int gpu_row(struct ift_analysis *a, const uint64_t *r)
{
	struct az_gpu *g = &a->gpu;
	int m = metric_of(a, r);

	if (m == 1 && r[IFT_GS_SPAN]) {
		if (ift_array_grow((void **)&g->s, &g->caps, g->ns + 1, sizeof(*g->s)) < 0)
			return -ENOMEM;
		g->s[g->ns++] = (struct ift_gpu_sample){ r[IFT_C_TS], r[IFT_GS_SPAN],
							 (uint32_t)r[IFT_GS_GPU],
							 (uint32_t)r[IFT_GS_VALUE] };
	} else if (m == 2 && r[IFT_GS_VALUE] && ift_trace_task_find(a->t, (uint32_t)r[IFT_C_PID],
								     r[IFT_C_TS])) {
		/* a traced process's memory: the GPUs it used */
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
   last's end, and their iterations; false when no thread has one. */
static bool steady(const struct ift_analysis *a, uint64_t *from, uint64_t *to, uint64_t *its)
{
	*from = UINT64_MAX;
	*to = *its = 0;
	for (size_t i = 0; i < a->nloops; i++) {
		const struct ift_loop_info *l = &a->loops[i].info;

		if (!l->period || !l->to_ts)
			continue;
		*from = l->from_ts < *from ? l->from_ts : *from;
		*to = l->to_ts > *to ? l->to_ts : *to;
		*its += l->iterations;
	}
	return *to > *from;
}

bool ift_analysis_gpu_stage(const struct ift_analysis *a, enum ift_stage stage,
			    uint64_t *from, uint64_t *to)
{
	uint64_t f, t, its;
	bool st = steady(a, &f, &t, &its);

	/* without a steady state, the window is all start-up (ift_loop_stage()) */
	*from = stage == IFT_STAGE_STARTUP ? a->lo : stage == IFT_STAGE_STEADY ? f : t + 1;
	*to = stage == IFT_STAGE_STARTUP ? (st ? f - 1 : a->hi) :
	      stage == IFT_STAGE_STEADY ? t : a->hi;
	if (!st && stage != IFT_STAGE_STARTUP)
		return false;
	*from = *from > a->lo ? *from : a->lo;
	*to = *to < a->hi ? *to : a->hi;
	return *to >= *from;
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

static int by_gpu_ts(const void *x, const void *y)
{
	const struct ift_gpu_sample *p = x, *q = y;

	if (p->gpu != q->gpu)
		return p->gpu < q->gpu ? -1 : 1;
	return p->ts < q->ts ? -1 : p->ts > q->ts;
}

static int by_pid(const void *x, const void *y)
{
	const struct az_gpu_proc *p = x, *q = y;

	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

static uint64_t bit(uint32_t gpu)
{
	return gpu < 64 ? 1ULL << gpu : 0;
}

/* Why the trace has no measurement, or NULL: samples on the trace clock. */
static const char *unmeasured(struct ift_analysis *a)
{
	const char *nvml = ift_trace_meta(a->t, "gpu.nvml");
	const char *clock = ift_trace_meta(a->t, "clock.source");

	/* NVML's samples are on CLOCK_MONOTONIC: another trace clock cannot
	   place them among the events */
	if (a->gpu.ns)
		return !clock || !strcmp(clock, "mono") ? NULL :
		       "the trace clock is not CLOCK_MONOTONIC, NVML's samples are";
	return !nvml ? "the trace has no NVML record (an older recorder made it)" :
	       strncmp(nvml, "ok ", 3) ? nvml : "NVML gave no utilization sample";
}

/* Each GPU's time, in the window and by stage, and the counted GPUs'. */
static void add_up(struct ift_analysis *a)
{
	struct az_gpu *g = &a->gpu;
	uint64_t lo[IFT_STAGE_TAIL + 1], hi[IFT_STAGE_TAIL + 1];
	bool has[IFT_STAGE_TAIL + 1];

	for (int k = IFT_STAGE_STARTUP; k <= IFT_STAGE_TAIL; k++)
		has[k] = ift_analysis_gpu_stage(a, (enum ift_stage)k, &lo[k], &hi[k]);
	for (size_t i = 0; i < g->ns; i++) {
		const struct ift_gpu_sample *s = &g->s[i];
		struct ift_gpu_info *v = gpu_of(g, s->gpu);
		uint64_t from = s->ts - s->span, in = overlap(from, s->ts, a->lo, a->hi);

		v->window.covered_ns += in;
		v->window.busy_ns += in * s->percent / 100;
		for (int k = IFT_STAGE_STARTUP; k <= IFT_STAGE_TAIL; k++) {
			struct ift_gpu_time *c = &g->out.counted[k];

			if (!has[k])
				continue;
			in = overlap(from, s->ts, lo[k], hi[k]);
			v->stage[k].covered_ns += in;
			v->stage[k].busy_ns += in * s->percent / 100;
			if (g->counted & bit(s->gpu)) {
				c->covered_ns += in;
				c->busy_ns += in * s->percent / 100;
			}
		}
	}
}

int ift_az_gpu_read(struct ift_analysis *a)
{
	struct az_gpu *g = &a->gpu;
	struct ift_cursor *cur = ift_cursor_new(a->t, 1U << IFT_T_GPU, 0);
	struct ift_event ev;
	uint64_t from, to;
	int ret;

	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0)
		if ((ret = gpu_row(a, ev.row)) < 0)
			break;
	ift_cursor_free(cur);
	if (ret < 0)
		return ret;
	g->out.source = ift_trace_meta(a->t, "gpu.util_source");
	g->out.reason = unmeasured(a);
	g->out.measured = !g->out.reason;
	if (!g->out.measured)
		g->ns = g->np = 0;
	if (steady(a, &from, &to, &g->out.iterations)) {
		g->out.steady_from_ns = from - a->sum.start_ts;
		g->out.steady_to_ns = to - a->sum.start_ts;
	}
	for (size_t i = 0; i < g->ns; i++)
		if ((ret = add_gpu(a, g->s[i].gpu)) < 0)
			return ret;
	/* the GPUs a traced process held memory on; all when none is known */
	for (size_t i = 0; i < g->np; i++) {
		struct ift_gpu_info *v = gpu_of(g, g->p[i].gpu);

		if (v) {
			v->used = true;
			g->counted |= bit(v->gpu);
		}
	}
	for (size_t i = 0; !g->counted && i < g->out.ngpus; i++)
		g->counted |= bit(g->info[i].gpu);
	for (size_t i = 0; i < g->out.ngpus; i++)
		g->info[i].counted = g->counted & bit(g->info[i].gpu);
	/* no GPU: no array to sort (qsort's NULL) */
	if (g->ns)
		qsort(g->s, g->ns, sizeof(*g->s), by_gpu_ts);
	if (g->np)
		qsort(g->p, g->np, sizeof(*g->p), by_pid);
	if (g->out.ngpus)
		qsort(g->info, g->out.ngpus, sizeof(*g->info), by_index);
	add_up(a);
	g->out.gpus = g->info;
	return 0;
}

uint64_t ift_analysis_gpu_mask(const struct ift_analysis *a, uint32_t pid)
{
	const struct az_gpu *g = &a->gpu;
	struct az_gpu_proc key = { .pid = pid };
	const struct az_gpu_proc *p = g->np ? bsearch(&key, g->p, g->np, sizeof(*g->p), by_pid) :
				      NULL;
	uint64_t m = 0;

	if (!p)
		return g->counted;
	/* bsearch found one of its rows: its neighbours of the same pid */
	while (p > g->p && p[-1].pid == pid)
		p--;
	for (; p < g->p + g->np && p->pid == pid; p++)
		m |= bit(p->gpu);
	return m & g->counted;
}

const struct ift_gpu_sample *ift_analysis_gpu_samples(const struct ift_analysis *a, size_t *n)
{
	*n = a->gpu.ns;
	return a->gpu.s;
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
