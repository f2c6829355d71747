// SPDX-License-Identifier: MIT
/*
 * Steal: time a hypervisor ran something else on a virtual CPU.  The guest
 * kernel cannot see it happen: a thread it had on that CPU stays running
 * in the sched events, so its on-CPU time between CUDA calls would read as
 * work of its own (seen in CI: an 85 ms stall of a page-fault storm called
 * "building its input").  The recorder samples each CPU's steal from
 * /proc/stat (cpu.steal_permille, about ten times a second); the read plan
 * (plan.c) reads those samples before the pass, and the chains take a
 * CPU's steal out of the running time of the thread on it (chains-pass.c):
 * the thread wanted the CPU and did not have it, which is CPU contention.
 *
 * A sample covers the interval since the one before it on the same CPU, at
 * a USER_HZ tick's resolution; steal is taken as spread evenly over it, so
 * a run gets the sample's share of its overlap.  Only intervals with steal
 * are kept: on bare metal, and on most VMs most of the time, none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"

struct az_steal_iv {
	uint64_t start, end;		/* trace clock, (start, end] */
	uint64_t permille;
};

struct az_steal_cpu {
	struct az_steal_iv *v;		/* by end */
	size_t n, cap;
	uint64_t last;			/* its previous sample; 0: none yet */
};

static struct az_steal_cpu *steal_cpu(struct ift_analysis *a, uint64_t cpu)
{
	if (cpu >= AZ_MAX_CPUS)
		return NULL;
	if (cpu >= a->nsteal) {
		size_t cap = a->nsteal;

		if (ift_array_grow((void **)&a->steal, &cap, (size_t)cpu + 1, sizeof(*a->steal)) < 0)
			return NULL;
		memset(&a->steal[a->nsteal], 0, (cap - a->nsteal) * sizeof(*a->steal));
		a->nsteal = cap;
	}
	return &a->steal[cpu];
}

/* Row R, a system sample of cpu.steal_permille. */
static int steal_row(struct ift_analysis *a, const uint64_t *r)
{
	struct az_steal_cpu *k;
	uint64_t ts = r[IFT_C_TS];

	/* scope 0 is the whole machine; CPU N is N + 1 */
	if (!r[IFT_SM_SCOPE])
		return 0;
	k = steal_cpu(a, r[IFT_SM_SCOPE] - 1);
	if (!k)
		return r[IFT_SM_SCOPE] - 1 >= AZ_MAX_CPUS ? 0 : -ENOMEM;
	if (k->last && ts > k->last && r[IFT_SM_VALUE] && r[IFT_SM_VALUE] <= 1000) {
		if (ift_array_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) < 0)
			return -ENOMEM;
		k->v[k->n++] = (struct az_steal_iv){ k->last, ts, r[IFT_SM_VALUE] };
	}
	if (ts > k->last)
		k->last = ts;
	return 0;
}

int ift_az_steal_read(struct ift_analysis *a)
{
	struct ift_cursor *cur = ift_cursor_new(a->t, 1U << IFT_T_SAMPLES, a->read_from);
	struct ift_event ev;
	uint64_t id = 0, past = 0;	/* the metric's string id; the first sample past hi */
	bool known = false;
	int ret;

	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		const char *m;

		/* the samples of the first read past the window end it */
		if (r[IFT_C_TS] > a->hi) {
			if (past && r[IFT_C_TS] != past)
				break;
			past = r[IFT_C_TS];
		}
		if (ift_sample_of_task(r))
			continue;
		if (!known) {
			m = ift_trace_string(a->t, r[IFT_SM_METRIC]);
			if (!m || strcmp(m, "cpu.steal_permille"))
				continue;
			id = r[IFT_SM_METRIC];
			known = true;
		} else if (r[IFT_SM_METRIC] != id) {
			continue;
		}
		if ((ret = steal_row(a, r)) < 0)
			break;
	}
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}

uint64_t ift_az_steal_ns(const struct ift_analysis *a, uint32_t cpu, uint64_t from, uint64_t to)
{
	const struct az_steal_cpu *k;
	size_t lo = 0, hi;
	uint64_t ns = 0;

	if (cpu >= a->nsteal || to <= from)
		return 0;
	k = &a->steal[cpu];
	/* the first interval that ends after FROM */
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].end <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < k->n && k->v[i].start < to; i++) {
		const struct az_steal_iv *v = &k->v[i];

		ns += ift_overlap(from, to, v->start, v->end) * v->permille / 1000;
	}
	return ift_min(ns, to - from);
}

void ift_az_steal_free(struct ift_analysis *a)
{
	for (size_t i = 0; i < a->nsteal; i++)
		free(a->steal[i].v);
	free(a->steal);
	a->steal = NULL;
	a->nsteal = 0;
}
