/* SPDX-License-Identifier: MIT */
#ifndef IFT_STACK_CAPTURE_H
#define IFT_STACK_CAPTURE_H

/*
 * The state of stack capture (stack/ only): capture.c opens the perf events,
 * drains their rings and unwinds; sites.c names the call sites and holds
 * each thread's samples until their calls come.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-pystack.h"
#include "ift-stack.h"
#include "ift-trace.h"
#include "util/intern.h"
#include "util/perfbuf.h"
#include "util/tidmap.h"
#include "util/held.h"
#include "stack/ksyms.h"

/*
 * A sample and the call row it belongs to come from the same trap, and the
 * perf handler runs first: it reads the clock, copies the stack (3-4 us
 * here, ~10 us on a process's first call), then ftrace reads the same clock
 * for the call's entry.  So a call's sample is the last one of its op on
 * its thread at or before the call's ts, and the next call's sample comes
 * strictly after it (one thread, one monotonic clock).  The window only
 * bounds how long a sample whose call we never see is kept, so it is wide:
 * in an emulated guest (QEMU TCG) the copy alone took over 1 ms, and a
 * window of 1 ms left the first calls of a process without their stacks.
 */
#define MATCH_WINDOW_NS	1000000000ULL
#define QUEUE_MAX_BYTES	(512ULL << 20)	/* samples copied out, not yet unwound */
#define DRAIN_NICE	(-10)
#define RING_DEFAULT_KB	16384
#define RING_MIN_KB	1024
#define RING_TOTAL_KB	(512 * 1024)
#define DRAIN_IDLE_MS	5
#define KCHAIN_MAX	128	/* a profile sample's kernel frames kept (perf
				   gives 127 at most by default) */

/* A record copied out of a ring, 8-aligned, the perf record's body after it. */
struct qrec {
	uint32_t size;		/* this header included */
	uint16_t type, misc;
};

/*
 * The Python frames read for the sample queued just before, in a record of
 * type QREC_PY: struct qpy, then per frame its line (int32), the lengths of
 * its file and function (uint16 each) and their bytes.
 */
#define QREC_PY		0x7f00
/*
 * The lags of Python frames' reads (struct ift_stack_stats), by microsecond:
 * one bucket each below 2 * PY_LAG_SUB us, then PY_LAG_SUB buckets to each
 * doubling (within 1/16), to 2^34 us; the last bucket holds the longer ones.
 * A QEMU guest or a loaded board reads in milliseconds, and its median must
 * not read as the longest lag.
 */
#define PY_LAG_SUB_BITS	4
#define PY_LAG_SUB	(1u << PY_LAG_SUB_BITS)
#define PY_LAG_STEPS	(PY_LAG_SUB * 30)
/* PERF_RECORD_MMAP2: where the file name starts */
#define MMAP2_NAME	64
struct qpy {
	uint64_t ts;		/* the sample's */
	uint64_t read_end;	/* CLOCK_MONOTONIC when the read was done */
	uint32_t tid;
	int32_t n;		/* frames, or the read's error */
};

struct ring {
	struct ift_perfbuf b;
	bool hup;		/* its task is gone: read, no longer polled */
	/* CLOCK_MONOTONIC just before its last complete read: every sample
	   of its CPU taken PROFILE_MARGIN_NS before is in the queue */
	uint64_t drained;
};

/*
 * A sample is written in the interrupt that takes it, microseconds after
 * its time; a ring read at T holds those of T - PROFILE_MARGIN_NS (the
 * decoder's idle margin, for a vCPU preempted in the interrupt).
 */
#define PROFILE_MARGIN_NS	(20ULL * 1000000)

/* A profile row waiting for the rings to be read past it. */
struct prow {
	uint64_t ts, stack, flags;
	uint32_t cpu, pid, tid;
};

/* Bytes of records: the queue, or the batch being unwound. */
struct qbuf {
	uint8_t *data;
	size_t len, cap;
};

struct evsel {
	int tp_id;		/* -1: the profile's clock */
	uint64_t op;
	bool py;		/* read the Python frames of its samples */
	uint64_t period;	/* the profile's, in ns of the task's CPU time */
};

struct pending {
	uint64_t ts, op, stack;
	uint64_t py_stack;	/* the site with the Python frames; 0: none read */
	uint64_t py_end;	/* when they were read */
};

/* A Python frame of a site, its strings interned in struct ift_stacks. */
struct pyf {
	const char *file, *func;
	int line;
};

struct tidq {
	uint32_t tid;
	struct pending *v;	/* V[H..N): samples waiting for their call */
	size_t h, n, cap;
};

struct ift_stacks {
	struct ift_stack_opts o;
	struct ift_writer *w;
	struct ift_unwinder *u;
	int ncpus;
	struct ring *rings;	/* per CPU */
	struct evsel *ev;
	size_t nev;
	uint64_t *ids;		/* perf event id -> index into ev, pairs */
	size_t nids;
	int *fds;		/* the calls' events: their counts are calls */
	size_t nfds, fdcap;
	int *pfds;		/* the profile's: their counts are ns */
	size_t npfds, pfdcap;

	/* --profile: rows held until every ring was read past them, of
	   struct prow (ift_stk_profile_add()) */
	struct ift_held prof;
	uint64_t prof_from;		/* samples before it are the set-up's */
	struct ift_ksyms ksyms;		/* the kernel's entries (ksyms.c), read
					   with the profile: n 0 when not */

	struct tidq *q;		/* the threads' queues, found by qmap */
	size_t nq, qcap;
	struct ift_tidmap qmap;	/* tid -> index in q */

	/* the call sites, numbered as the writer numbers them (from 1): a
	   site's frames as (module, function, offset) triples, module "" an
	   address and function NULL a native frame, a Python frame's file,
	   function and line; its strings interned (ift_stk_intern()), so
	   equal sites have equal keys */
	struct ift_intern sites;
	int sites_err;		/* the first failure that broke the numbering */

	/* --py-stack: the reader (drain side, under MU), interned strings */
	struct ift_py_reader *py;
	struct ift_py_frame *pyframes;	/* IFT_STACK_MAX_PYTHON, the read's */
	char **strs;			/* open addressing, NULL: free */
	size_t nstrs, strcap;
	uint32_t py_lag[PY_LAG_STEPS];	/* reads by lag, the last one: longer */

	/* the queue: the rings' tails, QUEUE and ERR are under MU */
	pthread_mutex_t mu;
	struct qbuf queue, batch;
	int err;			/* the drain thread's, once */
	bool running, stop;
	pthread_t th;
	/*
	 * With Python frames, only the drain thread reads the rings once it
	 * runs: the main thread asks it (DRAIN_REQ, WAKE) and waits until a
	 * pass that began after the asking is done (DRAIN_DONE, DONE_CV).  A
	 * main thread draining itself would read frames holding MU at normal
	 * priority; preempted there, it would keep the drain thread (nice -10)
	 * from every other sample's frames.
	 */
	uint64_t drain_req, drain_done;
	pthread_cond_t done_cv;
	int wake;			/* eventfd: a drain is asked for */
	bool running_drain;		/* the thread drains (under MU) */

	struct ift_stack_stats st;
};

/* profile.c */
int ift_stk_profile_add(struct ift_stacks *s, const struct prow *r);
int ift_stk_profile_write(struct ift_stacks *s, uint64_t below);

/* sites.c */
const char *ift_stk_intern(struct ift_stacks *s, const char *str, size_t len);
int64_t ift_stk_site_id(struct ift_stacks *s, pid_t pid, const uint64_t *ips,
		       unsigned n, bool fp, const struct pyf *py, unsigned npy);
struct tidq *ift_stk_tidq_find(struct ift_stacks *s, uint32_t tid, bool create);
int ift_stk_pending_add(struct tidq *q, const struct pending *p);

#endif
