// SPDX-License-Identifier: MIT
/*
 * Call sites and the samples waiting for their calls (capture.h): a site is
 * a stack's frames, interned once (util/intern.h, its frames' modules and
 * functions by pointer) and written once as strings of the trace; a sample
 * waits in its thread's queue until the call it was taken at is decoded
 * (ift_stacks_match), or MATCH_WINDOW_NS has passed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/capture.h"
#include "util/array.h"
#include "util/intern.h"

/* ---- call sites ------------------------------------------------------- */

/* STR (LEN bytes) as one string that equal ones share, owned by S. */
const char *ift_stk_intern(struct ift_stacks *s, const char *str, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t k;
	char *v;

	if ((s->nstrs + 1) * 2 > s->strcap) {
		size_t cap = s->strcap ? s->strcap * 2 : 256;
		char **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < s->strcap; i++) {
			if (!s->strs[i])
				continue;
			h = 1469598103934665603ULL;
			for (const char *c = s->strs[i]; *c; c++)
				h = (h ^ (uint8_t)*c) * 1099511628211ULL;
			for (k = h & (cap - 1); t[k]; k = (k + 1) & (cap - 1))
				;
			t[k] = s->strs[i];
		}
		free(s->strs);
		s->strs = t;
		s->strcap = cap;
		h = 1469598103934665603ULL;
	}
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)str[i]) * 1099511628211ULL;
	for (k = h & (s->strcap - 1); s->strs[k]; k = (k + 1) & (s->strcap - 1))
		if (!strncmp(s->strs[k], str, len) && !s->strs[k][len])
			return s->strs[k];
	if (!(v = malloc(len + 1)))
		return NULL;
	memcpy(v, str, len);
	v[len] = 0;
	s->strs[k] = v;
	s->nstrs++;
	return v;
}

/*
 * The id of the call site IPS[0..N) of PID followed by the Python frames
 * PY[0..NPY), a new one written to the file the first time it is seen.  The
 * module pointers are the unwinder's, one per file, and the Python strings
 * are interned, so equal sites in different processes compare equal.
 */
int64_t ift_stk_site_id(struct ift_stacks *s, pid_t pid, const uint64_t *ips,
		       unsigned n, bool fp, const struct pyf *py, unsigned npy)
{
	struct ift_frame f[IFT_STACK_MAX_FRAMES];
	const char *mods[IFT_STACK_MAX_FRAMES], *funcs[IFT_STACK_MAX_FRAMES];
	uint64_t offs[IFT_STACK_MAX_FRAMES], key[3 * IFT_STACK_MAX_FRAMES];
	int64_t id, got;

	if (n > IFT_STACK_MAX_NATIVE)
		n = IFT_STACK_MAX_NATIVE;
	for (unsigned i = 0; i < n; i++) {
		ift_unwinder_frame(s->u, pid, ips[i], i > 0, &f[i]);
		if (fp)
			f[i].flags |= IFT_FRAME_F_FP;
		mods[i] = f[i].module;
		offs[i] = f[i].offset;
		funcs[i] = NULL;
	}
	for (unsigned i = 0; i < npy && i < IFT_STACK_MAX_PYTHON; i++, n++) {
		f[n] = (struct ift_frame){
			.module = py[i].file, .symbol = py[i].func,
			.offset = py[i].line > 0 ? (uint64_t)py[i].line : 0,
			.flags = IFT_FRAME_F_PYSRC,
		};
		mods[n] = f[n].module;
		funcs[n] = f[n].symbol;
		offs[n] = f[n].offset;
	}
	/* the key: each frame's module and function by pointer, its offset */
	for (unsigned i = 0; i < n; i++) {
		key[3 * i] = (uint64_t)(uintptr_t)mods[i];
		key[3 * i + 1] = (uint64_t)(uintptr_t)funcs[i];
		key[3 * i + 2] = offs[i];
	}
	if (s->sites_err)
		return s->sites_err;
	got = ift_intern(&s->sites, key, 3 * n * sizeof(*key), false);
	if (got >= 0)
		return got + 1;
	if (got != -ENOENT)
		return got;
	/* the writer numbers sites 1, 2, ... in the order they are interned */
	id = ift_writer_stack(s->w, f, n);
	if (id < 0)
		return id;
	got = ift_intern(&s->sites, key, 3 * n * sizeof(*key), true);
	if (got < 0 || got + 1 != id) {
		/* the trace has a site this table lacks: no id can be trusted */
		s->sites_err = got < 0 ? (int)got : -EPROTO;
		return s->sites_err;
	}
	s->st.sites++;
	if (fp)
		s->st.fp_fallback++;
	return id;
}

/* ---- pending samples, by thread --------------------------------------- */

struct tidq *ift_stk_tidq_find(struct ift_stacks *s, uint32_t tid, bool create)
{
	size_t i;

	if (ift_tidmap_get(&s->qmap, tid, &i))
		return &s->q[i];
	if (!create)
		return NULL;
	if (ift_array_grow((void **)&s->q, &s->qcap, s->nq + 1, sizeof(*s->q)) < 0 ||
	    ift_tidmap_set(&s->qmap, tid, s->nq) < 0)
		return NULL;
	s->q[s->nq].tid = tid;
	return &s->q[s->nq++];
}

/* Keeps Q in time order: samples of one thread may come from two CPUs. */
int ift_stk_pending_add(struct tidq *q, const struct pending *p)
{
	size_t i;

	if (q->n == q->cap && q->h) {
		/* what the calls took leaves room at the front */
		memmove(q->v, q->v + q->h, (q->n - q->h) * sizeof(*q->v));
		q->n -= q->h;
		q->h = 0;
	}
	if (ift_array_grow((void **)&q->v, &q->cap, q->n + 1, sizeof(*q->v)) < 0)
		return -ENOMEM;
	for (i = q->n; i > q->h && q->v[i - 1].ts > p->ts; i--)
		q->v[i] = q->v[i - 1];
	q->v[i] = *p;
	q->n++;
	return 0;
}

int ift_stacks_match(struct ift_stacks *s, uint64_t *row)
{
	struct tidq *q = ift_stk_tidq_find(s, (uint32_t)row[IFT_C_TID], false);
	uint64_t ts = row[IFT_C_TS];
	size_t drop, best = SIZE_MAX;

	if (!q || q->h == q->n)
		return 0;

	/* samples too old for this call: calls we never saw written */
	for (drop = q->h; drop < q->n && q->v[drop].ts + MATCH_WINDOW_NS < ts; drop++)
		s->st.unmatched++;
	q->h = drop;
	/* the last sample of this op at or before the call */
	for (size_t i = q->h; i < q->n && q->v[i].ts <= ts; i++)
		if (q->v[i].op == row[IFT_CALL_OP])
			best = i;
	if (best != SIZE_MAX) {
		const struct pending *pe = &q->v[best];

		row[IFT_CALL_STACK] = pe->stack;
		if (pe->py_stack && pe->py_end <= ts + row[IFT_CALL_DUR]) {
			row[IFT_CALL_STACK] = pe->py_stack;
			row[IFT_CALL_FLAGS] |= IFT_CALL_F_PY;
			s->st.py_in_flight++;
		} else if (pe->py_stack) {
			row[IFT_CALL_FLAGS] |= IFT_CALL_F_PY_LATE;
			s->st.py_late++;
		}
		s->st.matched++;
		/* the ones before it move up one: it is most often the first */
		memmove(&q->v[q->h + 1], &q->v[q->h], (best - q->h) * sizeof(*q->v));
		q->h++;
	}
	return 0;
}
