// SPDX-License-Identifier: MIT
/*
 * The Python frames of the threads of other processes, as the recorder
 * asks for them at each sampled call (ift-pystack.h): per process, where
 * its interpreter is (located once) and the code objects already read.
 * A process is looked up by pid among the few being traced; an exec or an
 * exit drops what was found (ift_py_reader_forget()), so a pid reused later
 * is located afresh.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ift-error.h"
#include "ift-pystack.h"
#include "util/array.h"

/* Thread states found, by tid: direct-mapped, checked at each use. */
#define TSTATE_SLOTS	64

struct proc {
	pid_t pid;
	bool python;			/* a CPython of a known layout */
	struct ift_py_target t;
	struct ift_py_codes *codes;
	struct { pid_t tid; uint64_t tstate; } ts[TSTATE_SLOTS];
};

struct ift_py_reader {
	struct proc *v;
	size_t n, cap;
	struct ift_py_snap *snap;	/* each walk's look at the memory */
};

struct ift_py_reader *ift_py_reader_new(void)
{
	struct ift_py_reader *r = calloc(1, sizeof(*r));

	if (r && !(r->snap = ift_py_snap_new())) {
		free(r);
		r = NULL;
	}
	return r;
}

static void proc_clear(struct proc *p)
{
	ift_py_codes_free(p->codes);
	memset(p, 0, sizeof(*p));
}

void ift_py_reader_free(struct ift_py_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		proc_clear(&r->v[i]);
	free(r->v);
	ift_py_snap_free(r->snap);
	free(r);
}

static struct proc *proc_find(struct ift_py_reader *r, pid_t pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].pid == pid)
			return &r->v[i];
	return NULL;
}

/* A new entry for PID (none must exist), not located; NULL: no memory. */
static struct proc *proc_new(struct ift_py_reader *r, pid_t pid)
{
	struct proc *p;

	if (ift_array_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)) < 0)
		return NULL;
	p = &r->v[r->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

/*
 * Where P's interpreter is, now.  No CPython (yet), a version without a
 * layout, a process gone: none, until an exec, a mapping of an interpreter
 * file or the pid's reuse says otherwise.
 */
static int proc_locate(struct proc *p)
{
	if (ift_py_locate(p->pid, &p->t) == 0 && p->t.layout) {
		if (!p->codes && !(p->codes = ift_py_codes_new()))
			return -ENOMEM;
		p->python = true;
	}
	return 0;
}

/* PID's entry, located now if it has none; NULL when out of memory. */
static struct proc *proc_get(struct ift_py_reader *r, pid_t pid)
{
	struct proc *p = proc_find(r, pid);

	if (p)
		return p;
	if (!(p = proc_new(r, pid)) || proc_locate(p) < 0)
		return NULL;
	return p;
}

int ift_py_reader_frames(struct ift_py_reader *r, pid_t pid, pid_t tid,
			 struct ift_py_frame *out, size_t max)
{
	struct proc *p = proc_get(r, pid);
	struct ift_py_mem m;
	uint64_t ts;
	size_t slot;
	int ret;

	if (!p)
		return -ENOMEM;
	if (!p->python)
		return 0;
	ift_py_snap_begin(r->snap, pid, &m);
	/*
	 * The thread state found last time, while it still names TID (a freed
	 * one reused for another thread names that one); else the runtime's
	 * lists are walked again.
	 */
	slot = (size_t)tid % TSTATE_SLOTS;
	if (p->ts[slot].tid == tid &&
	    ift_py_thread_is(p->t.layout, &m, p->ts[slot].tstate, tid) > 0) {
		ts = p->ts[slot].tstate;
	} else {
		ret = ift_py_thread(p->t.layout, &m, p->t.runtime, tid, &ts);
		if (ret == -ESRCH)
			return 0;	/* a thread Python does not know (yet) */
		if (ret < 0)
			return ret;
		p->ts[slot].tid = tid;
		p->ts[slot].tstate = ts;
	}
	return ift_py_frames(p->t.layout, &m, p->codes, ts, out, max);
}

int ift_py_reader_mapped(struct ift_py_reader *r, pid_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	struct proc *p;

	base = base ? base + 1 : path;
	if (!ift_py_interpreter_file(base))
		return 0;
	if ((p = proc_find(r, pid)) && p->python)
		return 0;	/* its other segments */
	ift_py_reader_forget(r, pid);
	if (!(p = proc_new(r, pid)))
		return -ENOMEM;
	return proc_locate(p);
}

int ift_py_reader_fork(struct ift_py_reader *r, pid_t pid, pid_t ppid)
{
	struct proc *p, *pp;

	ift_py_reader_forget(r, pid);
	if (!(pp = proc_find(r, ppid)))
		return 0;
	if (!(p = proc_new(r, pid)))
		return -ENOMEM;
	pp = proc_find(r, ppid);	/* proc_new() may have moved it */
	p->python = pp->python;
	p->t = pp->t;
	if (p->python && !(p->codes = ift_py_codes_new()))
		return -ENOMEM;
	return 0;
}

void ift_py_reader_forget(struct ift_py_reader *r, pid_t pid)
{
	struct proc *p = proc_find(r, pid);

	if (!p)
		return;
	proc_clear(p);
	*p = r->v[--r->n];
}
