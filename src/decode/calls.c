// SPDX-License-Identifier: MIT
/*
 * Calls from uprobe entries and returns, per thread: an entry opens a call
 * on its thread's stack, a return closes the latest open call of its probe
 * (a driver call inside a runtime call is nested in it).  Calls are rows at
 * their entry but complete at their return: completed calls wait in a heap
 * until no call still open began before them.  See decode/decode.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "util/array.h"

static bool done_less(const struct done_call *a, const struct done_call *b)
{
	if (a->row[IFT_C_TS] != b->row[IFT_C_TS])
		return a->row[IFT_C_TS] < b->row[IFT_C_TS];
	return a->seq < b->seq;
}

static int done_push(struct ift_decoder *d, const uint64_t *row)
{
	size_t i;

	if (ift_array_grow((void **)&d->done, &d->donecap, d->ndone + 1, sizeof(*d->done)) < 0)
		return -ENOMEM;
	i = d->ndone++;
	d->done[i].seq = d->seq++;
	memcpy(d->done[i].row, row, sizeof(d->done[i].row));
	while (i && done_less(&d->done[i], &d->done[(i - 1) / 2])) {
		struct done_call tmp = d->done[i];

		d->done[i] = d->done[(i - 1) / 2];
		d->done[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static void done_pop(struct ift_decoder *d)
{
	size_t i = 0;

	d->done[0] = d->done[--d->ndone];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < d->ndone && done_less(&d->done[l], &d->done[m]))
			m = l;
		if (r < d->ndone && done_less(&d->done[r], &d->done[m]))
			m = r;
		if (m == i)
			break;
		struct done_call tmp = d->done[i];

		d->done[i] = d->done[m];
		d->done[m] = tmp;
		i = m;
	}
}

static void active_remove(struct ift_decoder *d, struct task *t)
{
	size_t i = (size_t)t->active;

	if (t->active < 0)
		return;
	d->active[i] = d->active[--d->nactive];
	if (i < d->nactive)
		d->tasks[d->active[i]].active = (int32_t)i;
	t->active = -1;
}

static int active_add(struct ift_decoder *d, struct task *t)
{
	if (t->active >= 0)
		return 0;
	if (ift_array_grow((void **)&d->active, &d->activecap, d->nactive + 1,
			   sizeof(*d->active)) < 0)
		return -ENOMEM;
	t->active = (int32_t)d->nactive;
	d->active[d->nactive++] = (uint32_t)(t - d->tasks);
	return 0;
}

/*
 * Calls are rows at their entry time but complete at their return: a call
 * can be written once no call still open began before it.
 */
uint64_t ift_dec_calls_open_min(const struct ift_decoder *d)
{
	uint64_t min_open = UINT64_MAX;

	for (size_t i = 0; i < d->nactive; i++) {
		const struct task *t = &d->tasks[d->active[i]];

		if (t->depth && t->stack[0].ts < min_open)
			min_open = t->stack[0].ts;
	}
	return min_open;
}

int ift_dec_calls_emit(struct ift_decoder *d, bool all)
{
	uint64_t min_open = all ? UINT64_MAX : ift_dec_calls_open_min(d);
	int ret;

	while (d->ndone && d->done[0].row[IFT_C_TS] <= min_open) {
		if (d->on_call && (ret = d->on_call(d->on_call_ctx, d->done[0].row)) < 0)
			return ret;
		if ((ret = ift_dec_append(d, IFT_T_CALLS, d->done[0].row)) < 0)
			return ret;
		done_pop(d);
	}
	return 0;
}

/*
 * Writes the call C of T, open at DEPTH, as closed at TS (NO_RETURN when its
 * return is unseen): into the heap until no call open began before it.
 */
static int call_done(struct ift_decoder *d, const struct task *t,
		     const struct open_call *c, uint32_t depth, uint64_t ts,
		     int64_t ret, bool no_return)
{
	uint64_t row[IFT_CALL_NR] = { 0 };

	row[IFT_C_TS] = c->ts;
	row[IFT_C_CPU] = c->cpu;
	row[IFT_C_PID] = (uint64_t)t->tgid;
	row[IFT_C_TID] = (uint64_t)t->tid;
	row[IFT_CALL_OP] = d->op_of_probe[c->probe];
	row[IFT_CALL_DUR] = ts >= c->ts ? ts - c->ts : 0;
	row[IFT_CALL_RET] = (uint64_t)ret;
	row[IFT_CALL_FLAGS] = (no_return ? IFT_CALL_F_NO_RETURN : 0) |
			      (depth ? IFT_CALL_F_NESTED : 0);
	row[IFT_CALL_DEPTH] = depth;
	for (int a = 0; a < IFT_CALL_MAX_ARGS; a++)
		row[IFT_CALL_A0 + a] = (uint64_t)c->args[a];
	return done_push(d, row);
}

/* Closes the top open call of T at TS; NO_RETURN when its return is unseen. */
static int call_close(struct ift_decoder *d, struct task *t, uint64_t ts,
		      int64_t ret, bool no_return)
{
	const struct open_call *c = &t->stack[--t->depth];

	if (!t->depth)
		active_remove(d, t);
	return call_done(d, t, c, t->depth, ts, ret, no_return);
}

int ift_dec_task_close_calls(struct ift_decoder *d, struct task *t, uint64_t ts)
{
	int ret;

	while (t->depth)
		if ((ret = call_close(d, t, ts, 0, true)) < 0)
			return ret;
	return 0;
}

/*
 * A runaway stack means lost returns (a full ring, a longjmp out of a
 * call), and the oldest open calls are the likeliest to have lost theirs.
 * At MAX_NEST open calls the oldest half is closed NO_RETURN at TS, written
 * as any other call and counted (decode.nest_closed), and the rest moves
 * down: the new entry is kept and pairs with its return.
 */
#define MAX_NEST	256

static int close_oldest_half(struct ift_decoder *d, struct task *t, uint64_t ts)
{
	uint32_t half = t->depth / 2;
	int ret;

	for (uint32_t i = 0; i < half; i++)
		if ((ret = call_done(d, t, &t->stack[i], i, ts, 0, true)) < 0)
			return ret;
	memmove(t->stack, t->stack + half, (t->depth - half) * sizeof(*t->stack));
	t->depth -= half;
	d->stats.nest_closed += half;
	return 0;
}

int ift_dec_call_entry(struct ift_decoder *d, struct task *t, const struct pev *e)
{
	struct open_call *c;
	int ret;

	if (t->depth == MAX_NEST && (ret = close_oldest_half(d, t, e->ts)) < 0)
		return ret;
	if (ift_array_grow((void **)&t->stack, &t->cap, t->depth + 1, sizeof(*t->stack)) < 0)
		return -ENOMEM;
	c = &t->stack[t->depth++];
	c->ts = e->ts;
	c->cpu = e->cpu;
	c->probe = e->probe;
	memcpy(c->args, e->x, sizeof(c->args));
	return active_add(d, t);
}

int ift_dec_call_return(struct ift_decoder *d, struct task *t, const struct pev *e)
{
	int ret;

	/* unwind to the matching entry: calls above it lost their returns */
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stack[i].probe != e->probe)
			continue;
		while (t->depth > i + 1)
			if ((ret = call_close(d, t, e->ts, 0, true)) < 0)
				return ret;
		return call_close(d, t, e->ts, e->x[0], false);
	}
	d->stats.unpaired_returns++;
	return 0;
}
