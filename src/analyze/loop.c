// SPDX-License-Identifier: MIT
/*
 * A thread's training loop, from the op ids of its outermost calls alone.
 *
 * Definition.  The loop is a stretch [first, end) of the calls made of
 * consecutive iterations, each one copy of a unit U of `period' ops with
 * few edits, the stretch covering the most calls that fit U (ties: the
 * shorter unit, then the earlier stretch).  Invariants of a loop found:
 *
 *  - at least AZ_LOOP_MIN_ITERS (3) iterations, period <= AZ_LOOP_MAX_PERIOD;
 *  - U is primitive (not a shorter unit repeated): "a b a b" is period 2;
 *  - an iteration costs at most min(period, 64) edits (extra, missing or
 *    different calls), of them at most min(max(1, period / 8), period - 1,
 *    64) missing; the stretch holds at most one edit per 8 calls;
 *  - its first and last iterations miss no call and change none: extra
 *    calls inside them are allowed, but the stretch begins with U's first
 *    op and ends with U's last;
 *  - the phase: `first' is where the calls start to repeat U exactly.
 *    Whole iterations are added backward, with edits, until one does not
 *    fit; then single calls, exactly, as long as each is the op U has
 *    before the one after it.  U is the rotation that begins there, and
 *    `end' is the end of the last complete iteration in that rotation.
 *    So the gap before the first batch's copy, and a warm-up that runs
 *    part of an iteration, stay in start-up;
 *  - `iterations' counts the iterations in [first, end), each between
 *    one U[0] and the next.
 *
 * How.  (1) Candidate periods: for lags 1..P (P = min(4096, n / 3)) count
 * the calls equal to the call that many before, over every call when
 * n * P <= 2^26 and else over 2^26 / P calls drawn at random (a fixed
 * seed: the same input gives the same answer); keep the 16 best lags, a
 * lag dropped when it is a multiple of one kept that counts about as many.
 * (2) For each candidate p, each stretch where ops[i] == ops[i - p] holds
 * for at least p calls in a row (two exact iterations) seeds a loop; its
 * first iteration is U; whole iterations are added backward, then
 * forward, each aligned to U by Landau-Vishkin (the cheapest alignment
 * with e edits found in O(e^2 + e * p), no matrix), an exact iteration by
 * one memcmp.  (3) The best stretch wins; its unit is reduced to its
 * primitive root (KMP's failure function).
 *
 * Cost: O(2^26) for the lags, O(16 n) for the seeds, O(n) for aligning
 * exact iterations and O(e * p) more for one with e edits.  Memory
 * O(P): nothing per call.  P caps at 4096 calls: a PyTorch step is dozens
 * to a few hundred outermost runtime calls (its kernels launched one by
 * one), so 4096 is ten times the largest we have seen, while the lag count
 * stays bounded per sample.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

#define LOOP_SCORE_WORK		(1u << 26)	/* compares to rank the lags */
#define LOOP_CANDIDATES		16
#define LOOP_MAX_EDITS		64	/* per iteration */
#define LOOP_NOISE_SHARE	8	/* at most 1 edit per 8 calls */

/* Working state for one candidate period. */
struct lp {
	const uint32_t *ops;
	size_t n;
	uint32_t p;
	uint32_t *u;		/* the unit, seed rotation */
	uint32_t *urev;		/* the same, last op first */
	int32_t *lv[2];		/* Landau-Vishkin rows, by diagonal */
	int emax, dmax;		/* edits, missing calls per iteration */
};

/* One iteration aligned to the unit. */
struct step {
	size_t consumed;	/* calls */
	unsigned cost;		/* edits */
	bool extra_only;	/* no call missing or changed */
};

/* What one side's extension kept: up to its last complete iteration. */
struct side {
	size_t pos;		/* the far boundary */
	size_t last;		/* forward: the last iteration's first call */
	uint64_t iters, noise;
};

struct found {
	uint32_t period;
	uint64_t iters, matched;
	size_t first, end;
};

static inline uint32_t call_at(const struct lp *c, size_t i, int dir, size_t t)
{
	return dir > 0 ? c->ops[i + t] : c->ops[i - 1 - t];
}

/*
 * Align W[0..m) (the unit in walking order) to the calls from I in
 * direction DIR (AVAIL of them), the whole of W against a prefix of the
 * calls, with the fewest edits (then the fewest calls).  Landau-Vishkin:
 * for each e, the furthest row reached on each diagonal k (calls - ops).
 */
static bool lv_align(const struct lp *c, const uint32_t *w, size_t m, size_t i,
		     int dir, size_t avail, struct step *st)
{
	int lo = -c->dmax, hi = c->emax;
	int32_t *prev = c->lv[0] - lo, *cur = c->lv[1] - lo;

	for (int k = lo; k <= hi; k++)
		prev[k] = cur[k] = -1;
	for (int e = 0; e <= c->emax; e++) {
		int klo = -e > lo ? -e : lo, khi = e < hi ? e : hi, best = INT_MAX;

		for (int k = klo; k <= khi; k++) {
			long r = -1, s;

			if (e == 0) {
				r = 0;
			} else {
				/* changed call */
				if (prev[k] >= 0 && (s = prev[k] + 1) <= (long)m &&
				    s + k <= (long)avail)
					r = s;
				/* extra call */
				if (k - 1 >= lo && prev[k - 1] >= 0 &&
				    prev[k - 1] + k <= (long)avail && prev[k - 1] > r)
					r = prev[k - 1];
				/* missing call */
				if (k + 1 <= hi && prev[k + 1] >= 0 &&
				    prev[k + 1] + 1 <= (long)m && prev[k + 1] + 1 > r)
					r = prev[k + 1] + 1;
			}
			if (r >= 0)
				while (r < (long)m && r + k < (long)avail &&
				       w[r] == call_at(c, i, dir, (size_t)(r + k)))
					r++;
			cur[k] = (int32_t)r;
			if (r == (long)m && k < best)
				best = k;
		}
		if (best != INT_MAX) {
			st->consumed = m + (size_t)(long)best;
			st->cost = (unsigned)e;
			st->extra_only = e == best;
			return true;
		}
		int32_t *t = prev;

		prev = cur;
		cur = t;
		for (int k = lo; k <= hi; k++)
			cur[k] = -1;
	}
	return false;
}

/* The iteration next to boundary POS on side DIR. */
static bool iter_step(const struct lp *c, size_t pos, int dir, size_t avail,
		      struct step *st)
{
	size_t p = c->p;

	if (avail >= p && !memcmp(dir > 0 ? c->ops + pos : c->ops + pos - p, c->u,
				  p * sizeof(*c->u))) {
		*st = (struct step){ p, 0, true };
		return true;
	}
	return lv_align(c, dir > 0 ? c->u : c->urev, p, pos, dir, avail, st);
}

/*
 * Add whole iterations on side DIR of POS, up to LIMIT, while each fits
 * and the stretch (*CALLS, *NOISE so far, both sides) keeps its share of
 * edits; then give back those after the last one without a missing or
 * changed call.
 */
static void extend(const struct lp *c, int dir, size_t pos, size_t limit,
		   uint64_t *calls, uint64_t *noise, struct side *out)
{
	struct side cur = { pos, pos, 0, 0 }, kept = cur;
	uint64_t tcalls = *calls, tnoise = *noise;
	struct step st;

	for (;;) {
		size_t avail = dir > 0 ? limit - cur.pos : cur.pos - limit;

		if (!iter_step(c, cur.pos, dir, avail, &st))
			break;
		if ((tnoise + st.cost) * LOOP_NOISE_SHARE > tcalls + st.consumed)
			break;
		cur.last = cur.pos;
		cur.pos = dir > 0 ? cur.pos + st.consumed : cur.pos - st.consumed;
		cur.iters++;
		cur.noise += st.cost;
		tcalls += st.consumed;
		tnoise += st.cost;
		if (st.extra_only)
			kept = cur;
	}
	*out = kept;
	*calls += dir > 0 ? kept.pos - pos : pos - kept.pos;
	*noise += kept.noise;
}

/* Length of the primitive root of S[0..p) (F: p scratch entries). */
static uint32_t primitive(const uint32_t *s, uint32_t p, uint32_t *f)
{
	uint32_t k = 0, per;

	f[0] = 0;
	for (uint32_t i = 1; i < p; i++) {
		while (k && s[i] != s[k])
			k = f[k - 1];
		if (s[i] == s[k])
			k++;
		f[i] = k;
	}
	per = p - f[p - 1];
	return p % per ? p : per;
}

/*
 * The loop seeded by the exact stretch [A, B) (B - A >= 2p), not reaching
 * below LO; *F gets it when it has enough iterations.  F2: 2p scratch.
 */
static bool from_seed(struct lp *c, size_t a, size_t b, size_t lo, uint32_t *f2,
		      struct found *f)
{
	uint32_t p = c->p, h, per;
	uint64_t q = (b - a) / p, calls = q * p, noise = 0, iters;
	size_t e0 = a + q * p, r = 0, first, end;
	struct side bk, fw;

	memcpy(c->u, c->ops + a, p * sizeof(*c->u));
	for (uint32_t x = 0; x < p; x++)
		c->urev[x] = c->u[p - 1 - x];
	extend(c, -1, a, lo, &calls, &noise, &bk);
	extend(c, +1, e0, c->n, &calls, &noise, &fw);
	iters = q + bk.iters + fw.iters;
	/* single calls before the first iteration, exactly */
	while (r + 1 < p && bk.pos - r > lo && c->ops[bk.pos - r - 1] == c->u[p - 1 - r])
		r++;
	first = bk.pos - r;
	end = fw.pos;
	h = (uint32_t)(p - r) % p;
	if (h) {
		if (fw.pos + h <= c->n &&
		    !memcmp(c->ops + fw.pos, c->u, h * sizeof(*c->u))) {
			end = fw.pos + h;
			iters++;
		} else {
			/* the last iteration holds U in order: end after U[h-1] */
			size_t t = fw.iters ? fw.last : e0 - p;

			for (uint32_t x = 0; x < h; x++, t++)
				while (c->ops[t] != c->u[x])
					t++;
			end = t;
		}
	}
	for (uint32_t x = 0; x < p; x++)
		f2[x] = c->u[(h + x) % p];
	per = primitive(f2, p, f2 + p);
	iters *= p / per;
	if (iters < AZ_LOOP_MIN_ITERS)
		return false;
	*f = (struct found){ per, iters, end - first - bk.noise - fw.noise, first, end };
	return true;
}

static bool better(const struct found *x, const struct found *y)
{
	if (!y->period)
		return true;
	if (x->matched != y->matched)
		return x->matched > y->matched;
	if (x->period != y->period)
		return x->period < y->period;
	return x->first < y->first;
}

/* Every loop of candidate period C->p; the best into *BEST. */
static void eval_period(struct lp *c, uint32_t *f2, struct found *best)
{
	const uint32_t *ops = c->ops;
	size_t p = c->p, n = c->n, lo = 0, i = p;
	int d = (int)(p / 8 ? p / 8 : 1);

	c->emax = (int)(p < LOOP_MAX_EDITS ? p : LOOP_MAX_EDITS);
	c->dmax = d < (int)p - 1 ? d : (int)p - 1;
	if (c->dmax > LOOP_MAX_EDITS)
		c->dmax = LOOP_MAX_EDITS;
	while (i < n) {
		size_t r0;
		struct found f;

		if (ops[i] != ops[i - p]) {
			i++;
			continue;
		}
		for (r0 = i; i < n && ops[i] == ops[i - p]; i++)
			;
		if (i - r0 < p || r0 - p < lo)
			continue;
		/* a longer unit repeating inside a loop already found is one of
		   its harmonics (k iterations, or k with an edit): not better */
		if (best->period && p > best->period && r0 - p >= best->first &&
		    i <= best->end && ((p + 1) % best->period) <= 2)
			continue;
		if (from_seed(c, r0 - p, i, lo, f2, &f)) {
			if (better(&f, best))
				*best = f;
			lo = f.end;
			if (i < lo)
				i = lo;
		}
	}
}

struct lag {
	uint32_t p, score;
};

static int by_score(const void *a, const void *b)
{
	const struct lag *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return (x->p > y->p) - (x->p < y->p);
}

/* How many calls equal the call LAG before, per lag 1..PMAX (a sample). */
static void score_lags(const uint32_t *ops, size_t n, uint32_t pmax, uint32_t *score)
{
	uint64_t samples = LOOP_SCORE_WORK / pmax, x = 0x9e3779b97f4a7c15ull;

	for (uint64_t s = 0; s < (n <= samples ? n : samples); s++) {
		size_t i = (size_t)s, lim;
		uint32_t op;

		if (n > samples) {
			x ^= x << 13;	/* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			i = (size_t)(x % n);
		}
		lim = i < pmax ? i : pmax;
		op = ops[i];
		for (size_t lag = 1; lag <= lim; lag++)
			score[lag] += ops[i - lag] == op;
	}
}

int ift_az_loop_find(const uint32_t *ops, size_t n, struct az_loop *out)
{
	uint32_t pmax = (uint32_t)(n / AZ_LOOP_MIN_ITERS < AZ_LOOP_MAX_PERIOD ?
				   n / AZ_LOOP_MIN_ITERS : AZ_LOOP_MAX_PERIOD);
	uint32_t *score = NULL, *buf = NULL, cand[LOOP_CANDIDATES];
	struct lag *lags = NULL;
	struct found best = { 0 };
	struct lp c = { .ops = ops, .n = n };
	size_t nl = 0, nc = 0;
	int ret = -ENOMEM;

	*out = (struct az_loop){ 0 };
	if (!pmax)
		return 0;
	score = calloc(pmax + 1u, sizeof(*score));
	lags = calloc(pmax, sizeof(*lags));
	/* u, urev, 2 Landau-Vishkin rows, 4p scratch */
	buf = calloc(6u * pmax + 4u * (2 * LOOP_MAX_EDITS + 1), sizeof(*buf));
	if (!score || !lags || !buf)
		goto out;
	c.u = buf;
	c.urev = buf + pmax;
	c.lv[0] = (int32_t *)(buf + 2u * pmax);
	c.lv[1] = c.lv[0] + 2 * LOOP_MAX_EDITS + 1;

	score_lags(ops, n, pmax, score);
	for (uint32_t p = 1; p <= pmax; p++)
		if (score[p])
			lags[nl++] = (struct lag){ p, score[p] };
	qsort(lags, nl, sizeof(*lags), by_score);
	for (size_t k = 0; k < nl && nc < LOOP_CANDIDATES; k++) {
		bool harmonic = false;

		for (size_t j = 0; j < nc && !harmonic; j++)
			harmonic = lags[k].p % cand[j] == 0 &&
				   lags[k].score <= score[cand[j]] +
						    score[cand[j]] / 16 + 2;
		if (!harmonic)
			cand[nc++] = lags[k].p;
	}
	for (size_t k = 0; k < nc; k++) {
		c.p = cand[k];
		eval_period(&c, (uint32_t *)(c.lv[1] + 2 * LOOP_MAX_EDITS + 1), &best);
	}
	if (best.period)
		*out = (struct az_loop){ best.period, best.iters, best.first, best.end };
	ret = 0;
out:
	free(score);
	free(lags);
	free(buf);
	return ret;
}
