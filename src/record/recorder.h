/* SPDX-License-Identifier: MIT */
#ifndef IFT_RECORD_RECORDER_H
#define IFT_RECORD_RECORDER_H

/*
 * The recorder's state, shared by its files (record/ only):
 *   record.c  set-up, the main loop (poll), finish and teardown;
 *   meta.c    the trace's metadata, libraries and end-of-run counts;
 *   late.c    libraries mapped while recording: found and probed;
 *   gpu.c     the NVML helper and its rows.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ift-decode.h"
#include "ift-gpu.h"
#include "ift-perfring.h"
#include "ift-probe.h"
#include "ift-ringq.h"
#include "ift-record.h"
#include "ift-ring.h"
#include "ift-sample.h"
#include "ift-stack.h"

#define SAMPLE_EVERY_NS		100000000ULL	/* /proc about ten times a second */
#define FLUSH_EVERY_NS		1000000000ULL	/* a crash loses at most a second */
#define RESCAN_EVERY_NS		1000000000ULL	/* libraries dlopen()ed while recording */
#define MAPPED_EVERY_NS		10000000ULL	/* a mapped ring, at least this often */

struct ift_recorder {
	struct ift_record_opts opts;
	char step[4200];
	struct ift_libset libs;
	/* libraries found while recording, one set each: the probes keep
	   pointers into them, so they never move */
	struct ift_libset **late;
	size_t nlate, narmed;	/* libraries mapped while recording; those probed */
	struct ift_probe_session *probes;
	struct ift_writer *w;
	struct ift_decoder *dec;
	struct ift_ring *ring;
	struct ift_sampler *sampler;
	struct ift_stacks *stacks;	/* --stack, else NULL */
	struct ift_perfring *iso;	/* --isolate's uprobe events, else NULL */
	struct ift_tracefs_caps caps;	/* what the kernel offers */
	struct ift_record_plan plan;	/* and what this recording makes of it */
	bool mono;
	bool started;
	uint64_t start_ns, next_sample, next_flush, next_rescan;
	uint64_t unread;		/* left in the buffers after the last read */
	int nice;			/* this thread's before it read mapped rings,
					   INT_MIN when unchanged */
	struct pace {			/* mapped: when each CPU is read next */
		uint64_t due, last;	/* and when it was read to its end */
	} *pace;
	struct ift_ringq *reader;	/* the thread that empties the rings */
	struct ift_gpu *gpu;		/* the NVML helper, or NULL */
	int self_fd;			/* our executable, for the helper; -1 */
	int gpu_err;			/* why there is no helper */
	uint64_t next_gpu, gpu_until;	/* rows after GPU_UNTIL are dropped */
	unsigned gpu_named;		/* devices whose names are in the metadata */
	/* --rotate: the piece written now (from 1; 0: one file), its path,
	   when it began, the bytes of those before; --max-size reached */
	unsigned piece;
	char piece_path[4200];
	uint64_t piece_start_ns, pieces_bytes;
	uint64_t piece_from;		/* trace clock: where the piece began (0: the first) */
	bool full;
	/* --keep-last: the spool's finished pieces, oldest first; the
	   snapshot due (trace clock, 0: none), those written, the last's
	   path, the last error; the writer's options, for a snapshot's */
	struct spooled {
		unsigned piece;
		uint64_t start, stop;
	} *spool;
	size_t nspool, capspool;
	uint64_t snap_due;
	const char *snap_why;		/* a literal, or snap_why_buf */
	char snap_why_buf[160];
	unsigned snaps;
	char snap_path[4200];
	int snap_err;
	struct ift_writer_opts wopts;
};

static inline int fail(struct ift_recorder *r, const char *step, int err)
{
	snprintf(r->step, sizeof(r->step), "%s", step);
	return err;
}

/* A signal asked to stop while setting up: give up before the next step. */
static inline bool stopping(const struct ift_recorder *r)
{
	return r->opts.stop && *r->opts.stop;
}

/* record.c: the threads PID has now, into *TIDS (the caller frees it) */
int ift_rec_list_tids(pid_t pid, pid_t **tids, size_t *n);

/* meta.c */
int ift_rec_write_metadata(struct ift_recorder *r);
int ift_rec_write_library(struct ift_writer *w, const struct ift_lib *l);
void ift_rec_write_fault_cost(struct ift_writer *w, const char *key);
int ift_rec_write_page_counts(struct ift_recorder *r, uint64_t ts);

/* gpu.c */
void ift_rec_gpu_open_self(struct ift_recorder *r);
void ift_rec_gpu_start(struct ift_recorder *r);
int ift_rec_gpu_poll(struct ift_recorder *r, uint64_t now);
int ift_rec_gpu_finish(struct ift_recorder *r, uint64_t stop);
void ift_rec_gpu_free(struct ift_recorder *r);
void ift_rec_gpu_status(const struct ift_recorder *r, const char **status, unsigned *devices);

/* pieces.c */
const char *ift_rec_first_path(struct ift_recorder *r);
int ift_rec_pieces_meta(struct ift_recorder *r);
int ift_rec_pieces_poll(struct ift_recorder *r, uint64_t now);
void ift_rec_pieces_call(struct ift_recorder *r, const uint64_t *row);
int ift_rec_pieces_finish(struct ift_recorder *r, uint64_t stop);
void ift_rec_pieces_free(struct ift_recorder *r);

/* late.c */
int ift_rec_isolate_add(struct ift_recorder *r);
int ift_rec_rescan(struct ift_recorder *r);

#endif
