// SPDX-License-Identifier: MIT
/*
 * The durations of the calls, kept once.  Before the pass, two reads of the
 * calls table (count, then fill) give every calling tid, per op, the
 * durations of its selected calls in the window, in table order: eight bytes
 * a call, exactly, and the only memory of the analysis that grows with the
 * calls.  From them, before the pass:
 *
 *   - each op's p50 and p99 over every selected call, which the chains need
 *     while the pass runs (which calls of an op are its tail);
 *   - each op's p99 over its calls with a stack, which the call sites need
 *     (which of a site's calls are the op's tail);
 *
 * and after it, the exact nearest-rank percentiles of every op table: the
 * pass takes the durations of a tid life after life, so each thread's calls
 * of an op are one segment of its tid's array, and a process or the whole
 * trace is a set of segments.  Nothing is sorted: the k-th smallest of a set
 * is found digit by digit (a radix select), a few linear reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"
#include "util/tidmap.h"

/* Below this many values a copy and a sort is cheaper than the select. */
#define SORT_MAX	4096

/* The calling tid TID's entry, created with the op slots when CREATE. */
static struct az_tdurs *tdurs(struct ift_analysis *a, uint32_t tid, bool create)
{
	struct az_tdurs *d;
	size_t i;

	if (ift_tidmap_get(&a->dmap, tid, &i))
		return a->tdurs[i];
	if (!create)
		return NULL;
	if (ift_array_grow((void **)&a->tdurs, &a->captdurs, a->ntdurs + 1,
			   sizeof(*a->tdurs)) < 0 ||
	    !(d = calloc(1, sizeof(*d))))
		return NULL;
	d->tid = tid;
	d->op = calloc(a->nopm, sizeof(*d->op));
	if (!d->op || ift_tidmap_set(&a->dmap, tid, a->ntdurs) < 0) {
		free(d->op);
		free(d);
		return NULL;
	}
	a->tdurs[a->ntdurs++] = d;
	return d;
}

bool ift_az_call_selected(const struct ift_analysis *a, const uint64_t *r)
{
	uint64_t op = r[IFT_CALL_OP];
	uint32_t pid = (uint32_t)r[IFT_C_PID], tid = (uint32_t)r[IFT_C_TID];

	return op < a->nopm && a->opm[op].selected && ift_az_pid_match(a, pid, tid);
}

uint64_t ift_az_call_dur(const uint64_t *r)
{
	/* a duration past the end of the clock is corrupt: keep it in range */
	return r[IFT_CALL_DUR] > UINT64_MAX - r[IFT_C_TS] ? UINT64_MAX - r[IFT_C_TS] :
							     r[IFT_CALL_DUR];
}

int ift_az_durs_begin(struct ift_analysis *a)
{
	a->opq = calloc(a->nopm ? a->nopm : 1, sizeof(*a->opq));
	return a->opq ? 0 : -ENOMEM;
}

int ift_az_durs_row(struct ift_analysis *a, const uint64_t *r, bool fill)
{
	struct az_durs *d;
	struct az_tdurs *td;

	if (ift_az_site_call(a, r) && r[IFT_CALL_OP] < a->nopm) {
		struct az_opq *q = &a->opq[r[IFT_CALL_OP]];

		if (!fill)
			q->stack_calls++;
		else if (q->nsv < q->stack_calls)
			q->sv[q->nsv++] = ift_az_call_dur(r);
	}
	if (!ift_az_call_selected(a, r))
		return 0;
	td = tdurs(a, (uint32_t)r[IFT_C_TID], !fill);
	if (!td)
		return fill ? -IFT_E_CORRUPT : -ENOMEM;
	d = &td->op[r[IFT_CALL_OP]];
	if (!fill) {
		d->n++;
		a->opq[r[IFT_CALL_OP]].calls++;
	} else if (d->used < d->n) {
		d->v[d->used++] = ift_az_call_dur(r);
	} else {
		return -IFT_E_CORRUPT;	/* the table changed between two reads */
	}
	return 0;
}

int ift_az_durs_alloc(struct ift_analysis *a)
{
	for (size_t op = 0; op < a->nopm; op++)
		if (a->opq[op].stack_calls &&
		    !(a->opq[op].sv = malloc(a->opq[op].stack_calls * sizeof(uint64_t))))
			return -ENOMEM;
	for (size_t i = 0; i < a->ntdurs; i++)
		for (size_t op = 0; op < a->nopm; op++) {
			struct az_durs *d = &a->tdurs[i]->op[op];

			if (d->n && !(d->v = malloc(d->n * sizeof(*d->v))))
				return -ENOMEM;
		}
	return 0;
}

/*
 * The K-th smallest (from 0) of the values of segments S[0..NS), radix
 * selected on 8-bit digits from the top: each round keeps the digit whose
 * bucket holds rank K among the values that share the digits chosen so far.
 */
static uint64_t kth_radix(const struct az_seg *s, size_t ns, uint64_t k)
{
	uint64_t prefix = 0, mask = 0;
	uint64_t count[256];

	for (int shift = 56; shift >= 0; shift -= 8) {
		unsigned d;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < ns; i++)
			for (size_t j = 0; j < s[i].n; j++)
				if ((s[i].v[j] & mask) == prefix)
					count[(s[i].v[j] >> shift) & 0xff]++;
		for (d = 0; d < 255 && k >= count[d]; d++)
			k -= count[d];
		prefix |= (uint64_t)d << shift;
		mask |= 0xffULL << shift;
	}
	return prefix;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return (p > q) - (p < q);
}

int ift_az_quantiles(const struct az_seg *s, size_t ns, const unsigned *p, size_t np,
		 uint64_t *out)
{
	uint64_t n = 0;

	for (size_t i = 0; i < ns; i++)
		n += s[i].n;
	if (!n) {
		memset(out, 0, np * sizeof(*out));
		return 0;
	}
	if (n <= SORT_MAX) {
		uint64_t *v = malloc(n * sizeof(*v));
		size_t k = 0;

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < ns; i++) {
			memcpy(v + k, s[i].v, s[i].n * sizeof(*v));
			k += s[i].n;
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		for (size_t i = 0; i < np; i++)
			out[i] = v[ift_nearest_rank(n, p[i])];
		free(v);
		return 0;
	}
	for (size_t i = 0; i < np; i++)
		out[i] = i && p[i] == p[i - 1] ? out[i - 1] : kth_radix(s, ns, ift_nearest_rank(n, p[i]));
	return 0;
}

int ift_az_durs_find(struct ift_analysis *a)
{
	static const unsigned pct[] = { 50, 99 };
	struct az_seg *segs;
	int ret = 0;

	/* the sites' tail: at or above the p99 of the op's calls with a stack */
	for (size_t op = 0; op < a->nopm && ret >= 0; op++) {
		struct az_opq *q = &a->opq[op];
		struct az_seg seg = { q->sv, q->nsv };

		if (q->stack_calls)
			ret = ift_az_quantiles(&seg, 1, &pct[1], 1, &q->stack_p99);
		free(q->sv);
		q->sv = NULL;
	}
	if (ret < 0)
		return ret;
	segs = calloc(a->ntdurs ? a->ntdurs : 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	for (size_t op = 0; op < a->nopm && ret >= 0; op++) {
		size_t ns = 0;
		uint64_t q[2];

		if (!a->opq[op].calls)
			continue;
		for (size_t i = 0; i < a->ntdurs; i++) {
			struct az_durs *d = &a->tdurs[i]->op[op];

			if (d->n != d->used) {
				ret = -IFT_E_CORRUPT;
				break;
			}
			d->used = 0;	/* now the pass's: what its threads took */
			if (d->n)
				segs[ns++] = (struct az_seg){ d->v, d->n };
		}
		if (ret >= 0 && (ret = ift_az_quantiles(segs, ns, pct, 2, q)) >= 0) {
			a->opq[op].p50_ns = q[0];
			a->opq[op].p99_ns = q[1];
		}
	}
	free(segs);
	return ret;
}

struct az_durs *ift_az_durs_of(struct ift_analysis *a, uint32_t tid, uint32_t op)
{
	struct az_tdurs *td = op < a->nopm ? tdurs(a, tid, false) : NULL;

	return td ? &td->op[op] : NULL;
}

void ift_az_durs_release(struct ift_analysis *a)
{
	for (size_t i = 0; i < a->ntdurs; i++) {
		for (size_t op = 0; op < a->nopm; op++)
			free(a->tdurs[i]->op[op].v);
		free(a->tdurs[i]->op);
		free(a->tdurs[i]);
	}
	free(a->tdurs);
	ift_tidmap_release(&a->dmap);
	for (size_t op = 0; a->opq && op < a->nopm; op++)
		free(a->opq[op].sv);
	free(a->opq);
	free(a->stab);
}
