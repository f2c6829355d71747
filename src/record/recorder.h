/* SPDX-License-Identifier: MIT */
#ifndef IFT_RECORD_RECORDER_H
#define IFT_RECORD_RECORDER_H

/*
 * The recorder's state, shared by its files (record/ only):
 *   record.c  set-up, the main loop (poll), finish and teardown;
 *   reader.c  the reader thread and the page queue it fills;
 *   meta.c    the trace's metadata, libraries and end-of-run counts;
 *   late.c    libraries mapped while recording: found and probed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ift-decode.h"
#include "ift-perfring.h"
#include "ift-probe.h"
#include "ift-record.h"
#include "ift-ring.h"
#include "ift-sample.h"
#include "ift-stack.h"

#define SAMPLE_EVERY_NS		100000000ULL	/* /proc about ten times a second */
#define FLUSH_EVERY_NS		1000000000ULL	/* a crash loses at most a second */
#define IDLE_MARGIN_NS		20000000ULL	/* events reserved but not yet committed */
#define PAGES_PER_ROUND		256
#define RESCAN_EVERY_NS		1000000000ULL	/* libraries dlopen()ed while recording */
#define READER_NICE		(-10)
#define PARTIAL_EVERY_NS	50000000ULL	/* a partly filled page, at most this often */
#define IDLE_WAIT_MS		10	/* the reader's sleep when the rings gave nothing */
#define MAPPED_EVERY_NS		10000000ULL	/* a mapped ring, at least this often */
#define SPARE_PAGES		64	/* pages kept for the reader to reuse */
#define QUEUE_MAX_BYTES		(256ULL << 20)	/* pages read, waiting to be decoded */

/*
 * A page read from CPU's tracefs ring (SOURCE 0) and not yet decoded, or
 * records of its perf ring (SOURCE 1, --isolate) packed as struct
 * perfrec, or (len < 0) the note that the ring was empty at IDLE_TS:
 * nothing older can still come from it.
 */
struct qpage {
	struct qpage *next;
	int source, cpu, len;
	uint64_t idle_ts;
	unsigned char data[];
};

/* A perf ring's record in a qpage: its raw bytes follow, padded to 8. */
struct perfrec {
	uint64_t ts;
	uint32_t size;
	int32_t cpu;
};

/*
 * The reader thread empties the rings into memory and decodes nothing:
 * that is cheap (trace-cmd splices to files the same way), so the rings
 * stay empty even while the decoding, on the caller's thread, falls behind
 * a load that leaves it little CPU.  Pages and idle notes keep their order.
 */
struct pagequeue {
	pthread_mutex_t mu;
	pthread_cond_t more;
	struct qpage *head, *tail, *spare;
	size_t nspare;			/* at most SPARE_PAGES */
	uint64_t bytes, peak;		/* queued now, and at most */
	bool stop, running;
	int err;			/* the reader's error, once */
	pthread_t th;
};

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
	struct pagequeue q;
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

/* reader.c: the reader thread (none where it has nothing to read) and the
   queue the main thread decodes */
int ift_rec_reader_start(struct ift_recorder *r);
void ift_rec_reader_stop(struct ift_recorder *r);
int ift_rec_queue_decode(struct ift_recorder *r, int timeout_ms, int *pages);
void ift_rec_queue_free(struct pagequeue *q);

/* meta.c */
int ift_rec_write_metadata(struct ift_recorder *r);
int ift_rec_write_library(struct ift_writer *w, const struct ift_lib *l);
void ift_rec_write_fault_cost(struct ift_writer *w, const char *key);
int ift_rec_write_page_counts(struct ift_recorder *r, uint64_t ts);

/* late.c */
int ift_rec_isolate_add(struct ift_recorder *r);
int ift_rec_rescan(struct ift_recorder *r);

#endif
