// SPDX-License-Identifier: MIT
/*
 * Folding `tasks' rows into the process/thread table.  The writer and the
 * reader of an unfinished file both use this, so the TASKS section and a
 * rebuilt table cannot disagree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "util/array.h"

void ift_taskmap_init(struct taskmap *m)
{
	memset(m, 0, sizeof(*m));
}

void ift_taskmap_release(struct taskmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].comms);
	free(m->v);
	ift_tidmap_release(&m->ids);
	ift_taskmap_init(m);
}

/* The latest record of TID: a reused tid's earlier ones are history. */
static struct trec *latest(struct taskmap *m, uint32_t tid)
{
	size_t i;

	return ift_tidmap_get(&m->ids, tid, &i) ? &m->v[i] : NULL;
}

struct trec *ift_taskmap_add(struct taskmap *m, uint32_t tid)
{
	struct trec *r;

	/* later records of a reused tid take its place in the map */
	if (ift_array_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)) < 0 ||
	    ift_tidmap_set(&m->ids, tid, m->n) < 0)
		return NULL;
	r = &m->v[m->n++];
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	return r;
}

int ift_trec_add_comm(struct trec *r, uint64_t ts, uint64_t str)
{
	if (!str || (r->ncomms && r->comms[r->ncomms - 1].str == str))
		return 0;
	/* a task renamed thousands of times: its first names tell enough */
	if (r->ncomms >= IFT_MAX_COMMS)
		return 0;
	if (r->ncomms == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 2;
		struct tcomm *c = realloc(r->comms, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		r->comms = c;
		r->cap = cap;
	}
	r->comms[r->ncomms].ts = ts;
	r->comms[r->ncomms].str = str;
	r->ncomms++;
	return 0;
}

/*
 * R, a record begun by a `comm' row (the decoder naming a task at first
 * sight), is the task a fork row then makes: its fork row came after its
 * first events (the decoder keeps an event committed late, a vCPU held off
 * after reserving it, at the merge point), and /proc, read at first sight,
 * gave it the process and the parent the fork row names.  An earlier task
 * of a reused tid, its exit unseen, had its own.
 */
static bool named_before_fork(const struct trec *r, uint32_t pid, uint32_t ppid)
{
	return r && !(r->flags & (IFT_TASK_F_STARTED | IFT_TASK_F_EXITED)) &&
	       r->pid == pid && ppid && r->ppid == ppid;
}

int ift_taskmap_fold(struct taskmap *m, const uint64_t *row)
{
	uint32_t tid = (uint32_t)row[IFT_C_TID];
	uint64_t ts = row[IFT_C_TS];
	struct trec *r, *parent;
	uint32_t ppid;

	if (m->n >= IFT_MAX_TASKS)
		return -IFT_E_LIMIT;

	switch (row[IFT_TK_KIND]) {
	case IFT_TASK_FORK:
	case IFT_TASK_CLONE:
		if (row[IFT_TK_KIND] == IFT_TASK_FORK) {
			ppid = (uint32_t)row[IFT_C_PID];
		} else {
			parent = latest(m, tid);
			ppid = parent ? parent->ppid : 0;
		}
		r = latest(m, (uint32_t)row[IFT_TK_CHILD_TID]);
		if (named_before_fork(r, (uint32_t)row[IFT_TK_CHILD_PID], ppid)) {
			/* it began no later than it was first seen */
			r->start_ts = r->ncomms && r->comms[0].ts < ts ? r->comms[0].ts : ts;
		} else {
			r = ift_taskmap_add(m, (uint32_t)row[IFT_TK_CHILD_TID]);
			if (!r)
				return -ENOMEM;
			r->start_ts = ts;
		}
		r->pid = (uint32_t)row[IFT_TK_CHILD_PID];
		r->ppid = ppid;
		r->flags = IFT_TASK_F_STARTED;
		if (row[IFT_TK_KIND] == IFT_TASK_CLONE)
			r->flags |= IFT_TASK_F_THREAD;
		return ift_trec_add_comm(r, ts, row[IFT_TK_COMM]);
	case IFT_TASK_EXEC:
	case IFT_TASK_COMM:
	case IFT_TASK_EXIT:
		r = latest(m, tid);
		if (!r || (r->flags & IFT_TASK_F_EXITED)) {
			r = ift_taskmap_add(m, tid);
			if (!r)
				return -ENOMEM;
			r->pid = (uint32_t)row[IFT_C_PID];
			/* what the recorder knew of a task it did not see
			   start (0 in files from before the column) */
			r->ppid = (uint32_t)row[IFT_TK_PPID];
		}
		if (row[IFT_TK_KIND] == IFT_TASK_EXIT) {
			r->flags |= IFT_TASK_F_EXITED;
			r->exit_ts = ts;
			return 0;
		}
		return ift_trec_add_comm(r, ts, row[IFT_TK_COMM]);
	default:
		/* a kind from a newer writer: nothing we can fold */
		return 0;
	}
}
