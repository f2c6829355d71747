/* SPDX-License-Identifier: MIT */
#ifndef IFT_ANALYZE_ROLES_H
#define IFT_ANALYZE_ROLES_H
/*
 * The role evidence of a thread (roles.c): who ended its waits, whom it
 * woke, and what fed its gaps.  The scheduler's state of a thread is
 * analyze.h's struct az_thread; this is the part of it that only roles.c
 * reads or writes (az_thread.roles), kept apart so that the two can be read
 * one without the other.
 */
#include <stdbool.h>
#include <stdint.h>

#include "ift-analyze.h"

struct ift_analysis;
struct az_thread;

/* Who fed a thread between its calls: a source, through a relay or not. */
struct az_feed {
	uint32_t src_tid, src_pid;
	uint32_t relay_tid, relay_pid;	/* 0: woken by the source itself */
	uint64_t count, ns;
};

/* Who ended a wait, and the task behind it. */
struct az_by {
	uint32_t tid, pid;
	uint32_t src_tid, src_pid;
	uint32_t relay_tid, relay_pid;
};

struct az_roles {
	/* the latest task of another process that ended a blocked wait of
	   it, and how many times one did */
	uint32_t xwoke_tid, xwoke_pid;
	uint64_t xwokes;
	/* of those, the wake-ups that came in one stint of the waker's
	   beside a wake-up of another thread of its process (two readers
	   of one pipe), and that other thread, the latest */
	uint64_t cowokes;
	uint32_t cowoke_tid;
	/* as a waker: the thread of another process it woke last, while
	   on a CPU since xwake_since, and whether that one was co-woken */
	uint32_t xwake_tid, xwake_pid;
	uint64_t xwake_since;
	bool xwake_shared;
	struct az_feed *feeds;		/* between its calls, by source and relay */
	uint32_t nfeeds, capfeeds;
	struct az_by gap_by;		/* the longest such wait of the open gap */
	uint64_t gap_ns;		/* its length; 0: none yet */
	struct ift_role_evidence ev;	/* behind info.role */
};

/* TH, blocked since FROM, is woken at TS by BY->tid: fills the rest of BY
   (the task behind the waker) and tallies it when TH was between calls. */
int ift_az_roles_wake(struct ift_analysis *a, struct az_thread *th, uint64_t from,
		      uint64_t ts, struct az_by *by);
/* TH makes a call (or the pass ends): its gap is closed, its feeder
   tallied. */
int ift_az_roles_gap_end(struct az_thread *th);
/* Roles from the tallies, once the processes are built. */
int ift_az_roles_assign(struct ift_analysis *a);
/* What R holds, freed. */
void ift_az_roles_release(struct az_roles *r);

#endif
