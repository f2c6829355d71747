/* SPDX-License-Identifier: MIT */
#ifndef IFT_DECODE_DECODE_H
#define IFT_DECODE_DECODE_H

/*
 * The decoder's state, shared by its files (private to src/decode/):
 * decode.c parses pages per CPU, merges them and turns events into rows;
 * calls.c pairs uprobe entries with their returns per thread and holds
 * completed calls until they can be written in time order.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ift-decode.h"
#include "util/tidmap.h"

#define CLONE_THREAD_FLAG	0x00010000ULL
#define MAX_FIELDS		8

enum kind {
	K_NONE, K_SWITCH, K_WAKING, K_WAKEUP, K_WAKEUP_NEW, K_NEWTASK, K_FORK,
	K_EXEC, K_EXIT, K_RENAME, K_PAGE, K_ENTRY, K_RET,
};

struct fld {
	int off, size;
	bool is_signed, dynamic;
};

struct evtype {
	uint8_t kind;
	int probe;
	struct fld f[MAX_FIELDS];
};

/* A parsed record: only what the rows need. */
struct pev {
	uint64_t ts;
	uint8_t kind;
	uint16_t cpu;
	int32_t probe;
	int32_t tid;		/* common_pid: the task running when it happened */
	bool irq;		/* in an interrupt (hard, soft, NMI): tid only
				   happened to be running */
	int32_t a, b;		/* pids the event is about (prev/next, wakee, child, ...) */
	int64_t x[IFT_CALL_MAX_ARGS];
	char c1[16], c2[16];
	uint64_t str;
};

/*
 * A CPU's records waiting for the merge, packed (decode.c, queue_put()):
 * n of them in buf[head .. tail), each beginning with its time.
 */
struct cpuq {
	uint8_t *buf;
	size_t head, tail, cap, n;
	uint64_t wm;		/* every event of this CPU up to wm is queued */
	uint16_t cpu;
	bool live;		/* counts for the watermark (queue_get) */
};

struct open_call {
	uint64_t ts;
	uint16_t cpu;
	int32_t probe;
	int64_t args[IFT_CALL_MAX_ARGS];
};

struct task {
	int32_t tid, tgid;
	/* the parent process' tgid (a thread: its process' parent), 0 unknown;
	   rows about a task seen before its fork carry it */
	int32_t ppid;
	bool traced;
	bool named;
	char comm[16];
	struct open_call *stack;
	uint32_t depth;
	size_t cap;
	int32_t active;		/* index in d->active, -1 when no call is open */
	uint64_t born_ts;	/* task_newtask time, 0 when not seen */
};

struct done_call {
	uint64_t seq;
	uint64_t row[IFT_CALL_NR];
};

struct ift_decoder {
	struct tep_handle *tep;
	struct ift_writer *w;
	bool user_filter;
	int pid_off, pid_size;
	int flags_off;		/* common_flags, or -1 */

	struct evtype *types;	/* by event id */
	int ntypes;

	struct kbuffer *kbuf;
	bool own_walker;	/* the page layout ift_page_walk() knows */
	int cur_cpu;		/* for its callback */
	struct cpuq *cur_q;
	struct cpuq *q;
	int nq;

	struct task *tasks;
	size_t ntasks, taskcap;
	struct ift_tidmap tids;	/* tid -> index in tasks */

	uint32_t *active;	/* tasks with open calls */
	size_t nactive, activecap;

	struct done_call *done;	/* min-heap by entry ts, then seq */
	size_t ndone, donecap;
	uint64_t seq;

	uint64_t *op_of_probe;	/* writer op id per probe */
	size_t nprobes;

	int (*on_call)(void *ctx, uint64_t *row);
	void *on_call_ctx;

	pid_t *procs;		/* traced processes alive, for new mappings */
	size_t nprocs, proccap;

	uint64_t horizon;	/* ts of the last event merged */
	struct ift_decode_stats stats;
	int err;
};

/* Appends ROW to TABLE of the writer, counted in the stats. */
static inline int ift_dec_append(struct ift_decoder *d, unsigned table, const uint64_t *row)
{
	int ret = ift_writer_append(d->w, table, row);

	if (ret < 0)
		return ret;
	d->stats.rows[table]++;
	return 0;
}

/* ---- calls.c ---------------------------------------------------------- */

/* The entry E opens a call on T.  0 or -ENOMEM. */
int ift_dec_call_entry(struct ift_decoder *d, struct task *t, const struct pev *e);

/*
 * The return E closes T's latest open call of its probe, and NO_RETURN the
 * ones opened after it; a return with none open is counted unpaired.
 */
int ift_dec_call_return(struct ift_decoder *d, struct task *t, const struct pev *e);

/*
 * Closes every call still open on T at TS, flagged NO_RETURN (its exit,
 * its tid reused, the end of the trace): an open call is never lost.
 */
int ift_dec_task_close_calls(struct ift_decoder *d, struct task *t, uint64_t ts);

/*
 * Writes the completed calls no open call began before (ALL: every one,
 * at the end).  0 or a negative error.
 */
int ift_dec_calls_emit(struct ift_decoder *d, bool all);
/* The entry of the oldest call still open, UINT64_MAX when none is. */
uint64_t ift_dec_calls_open_min(const struct ift_decoder *d);

#endif
