// SPDX-License-Identifier: MIT
/*
 * A window of a trace written as a trace of its own (record --keep-last's
 * snapshots): the metadata whole, every string, op, call site and library
 * under the same ids (each interned or declared again in id order, so the
 * rows' ids need no mapping), the tasks alive at the window's start, and
 * every row of every table from FROM to TO.
 */
#include <errno.h>

#include "reader.h"

/* The dictionaries under the same ids: a new writer gives them out in order. */
static int copy_dicts(struct ift_trace *t, struct ift_writer *w)
{
	int64_t id;
	int ret;

	for (size_t i = 0; i < ift_trace_meta_count(t); i++) {
		const char *k, *v;

		ift_trace_meta_at(t, i, &k, &v);
		if ((ret = ift_writer_meta(w, k, v)) < 0)
			return ret;
	}
	for (size_t i = 0; i < t->nstrings; i++)
		if ((id = ift_writer_string(w, t->strings[i])) != (int64_t)i + 1)
			return id < 0 ? (int)id : -IFT_E_CORRUPT;
	for (size_t i = 0; i < t->nops; i++)
		if ((ret = ift_writer_op(w, &t->ops[i])) != (int)i + 1)
			return ret < 0 ? ret : -IFT_E_CORRUPT;
	for (uint64_t i = 1; i <= ift_trace_stack_count(t); i++) {
		const struct ift_stack *s = ift_trace_stack(t, i);

		if ((id = ift_writer_stack(w, s->frames, s->nframes)) != (int64_t)i)
			return id < 0 ? (int)id : -IFT_E_CORRUPT;
	}
	for (size_t i = 0; i < t->nlibs; i++)
		if ((ret = ift_writer_library(w, &t->libs[i])) < 0)
			return ret;
	for (size_t i = 0; i < t->nloss; i++)
		if ((ret = ift_writer_loss(w, &t->loss[i])) < 0)
			return ret;
	return 0;
}

int ift_trace_copy(struct ift_trace *t, struct ift_writer *w, uint64_t from, uint64_t to)
{
	struct ift_cursor *cur;
	struct ift_event ev;
	int ret;

	if ((ret = copy_dicts(t, w)) < 0)
		return ret;
	/* alive at the window's start: its rows may name them */
	for (size_t i = 0; i < t->ntasks; i++) {
		const struct ift_task *k = &t->tasks[i];

		if (k->start_ts > from || ((k->flags & IFT_TASK_F_EXITED) && k->exit_ts < from))
			continue;
		if ((ret = ift_writer_task(w, k)) < 0)
			return ret;
	}
	if (!(cur = ift_cursor_new(t, ((1U << IFT_T_NR) - 1) & ~1U, from)))
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0 && ev.row[IFT_C_TS] <= to)
		if (ev.row[IFT_C_TS] >= from &&
		    (ret = ift_writer_append(w, ev.table, ev.row)) < 0)
			break;
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}
