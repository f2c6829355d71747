/* SPDX-License-Identifier: MIT */
#ifndef IFT_DECODE_H
#define IFT_DECODE_H

/*
 * decode: raw ring-buffer pages in, rows of the trace file out.
 *
 * Pages are parsed per CPU as they arrive (field offsets resolved once per
 * event type); the per-CPU streams are merged in time order up to a
 * watermark below which every CPU is known to be complete; in that order
 * entry and return probes are paired per thread (a driver call inside a
 * runtime call is nested in it), every task gets its tgid and every name it
 * had, and rows go to the writer.  Reads /proc for tasks it meets first
 * without a fork event; touches no tracefs file.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-probe.h"
#include "ift-trace.h"

struct tep_handle;
struct ift_decoder;

struct ift_decode_opts {
	struct tep_handle *tep;
	struct ift_writer *w;
	const struct ift_probe_session *probes;	/* may be NULL: no uprobes */
	/* filter tasks in user space by the fork tree of ROOTS (the kernel did
	   not, or could not, filter) */
	bool user_filter;
	/* called with each `calls' row just before it is written, in time
	   order; may set columns (the call site); a negative return stops */
	int (*on_call)(void *ctx, uint64_t *row);
	void *on_call_ctx;
};

struct ift_decode_stats {
	uint64_t events;		/* records parsed */
	uint64_t rows[IFT_T_NR];	/* rows written per table */
	uint64_t filtered;		/* records dropped by the user-space filter */
	uint64_t unknown;		/* records of event types we do not decode */
	uint64_t missed;		/* events the kernel reported lost between pages */
	uint64_t unpaired_returns;	/* returns without their entry (began before the trace) */
	uint64_t late;			/* events that came after the merge had passed their time */
	uint64_t late_max_ns;		/* the most one of them was moved forward */
	/* open calls closed NO_RETURN when a thread had 256 open: its oldest
	   half, whose returns were most likely lost */
	uint64_t nest_closed;
};

/* Resolves the event formats; returns 0 or a negative error. */
int ift_decoder_new(const struct ift_decode_opts *opts, struct ift_decoder **out);
void ift_decoder_free(struct ift_decoder *d);

/* Adds a process (and its existing threads) to the user-space filter. */
int ift_decoder_add_root(struct ift_decoder *d, pid_t pid);

/* Takes in the probes added to the session since (a library loaded late). */
int ift_decoder_sync_probes(struct ift_decoder *d,
			    const struct ift_probe_session *s);

/*
 * The same from an array in place of a session, for tests that craft probes
 * without tracefs: V[I] is probe I (those below the N of an earlier call
 * are known already), its event ids those of the decoder's tep.  V is read
 * during the call only.
 */
int ift_decoder_sync_probe_array(struct ift_decoder *d, const struct ift_probe *v,
				 size_t n);

/* The writer's op id of probe I of the session (0 if not known yet). */
uint64_t ift_decoder_probe_op(const struct ift_decoder *d, size_t i);

/* The traced processes still alive as far as the events tell; owned by D. */
size_t ift_decoder_processes(const struct ift_decoder *d, const pid_t **out);

/*
 * Parses the events of one raw page of CPU (LEN bytes readable) into that
 * CPU's queue, those that start FROM bytes or more into its data: 0 for a
 * page read once, more for one read in place while the kernel still fills
 * it, whose first FROM bytes an earlier call parsed.  Returns the page's
 * data size as parsed (the FROM of a next call on it), or a negative error.
 */
int ift_decoder_page(struct ift_decoder *d, int cpu, const void *page, int len, int from);

/*
 * ift_decoder_record - one raw record REC (SIZE bytes, common fields first,
 * as a ring-buffer page holds it) of CPU at trace time TS, read from a perf
 * ring (--isolate).  Each CPU's perf records form a queue of their own,
 * merged with the pages': they must come in time order per CPU.
 */
int ift_decoder_record(struct ift_decoder *d, int cpu, uint64_t ts,
		       const void *rec, uint32_t size);
/*
 * CPU had nothing more to read at trace time TS from SOURCE (0: its tracefs
 * ring, 1: its perf ring): it cannot hold older events.
 */
void ift_decoder_cpu_idle(struct ift_decoder *d, int source, int cpu, uint64_t ts);

/* Writes every queued event below the watermark.  0 or a negative error. */
int ift_decoder_advance(struct ift_decoder *d);

/*
 * The trace-clock time below which every row the decoder will write has
 * been handed to the writer: the events merged so far, less the calls that
 * wait for one still open that began before them.  What a reader of the
 * recording in progress may take as complete (record.complete_ns).
 */
uint64_t ift_decoder_complete(const struct ift_decoder *d);

/*
 * ift_decoder_finish - every page is in: write everything, and close calls
 * still open at STOP_TS (flag no-return).  0 or a negative error.
 */
int ift_decoder_finish(struct ift_decoder *d, uint64_t stop_ts);

const struct ift_decode_stats *ift_decoder_stats(const struct ift_decoder *d);

/*
 * Whether TID is one of the traced tasks as far as the decoder can tell (a
 * kernel filter or -a kept only those: any; the user-space filter: the ones
 * it follows), with its process in *TGID (TID when it never learnt it).
 */
bool ift_decoder_traced(struct ift_decoder *d, uint32_t tid, uint32_t *tgid);

#endif
