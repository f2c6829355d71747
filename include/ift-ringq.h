/* SPDX-License-Identifier: MIT */
#ifndef IFT_RINGQ_H
#define IFT_RINGQ_H

/*
 * ringq: a thread that empties the rings into memory and decodes nothing.
 * It copies each CPU's spliced tracefs pages (ift_ring_drain()) and, with
 * --isolate, each CPU's perf ring records (ift_perfring_read()) into a
 * queue; the caller's thread takes the queue (ift_ringq_take()) and hands
 * it on in the order read.  Copying is cheap (trace-cmd splices to files
 * the same way), so the rings stay empty even while the decoding falls
 * behind a load that leaves it little CPU.  Only the queue is shared, under
 * its lock.  Mapped rings (ift_ring_mapped()) are the caller's to read:
 * with no perf rings either, no thread is started.
 */
#include <stdbool.h>
#include <stdint.h>

struct ift_ring;
struct ift_perfring;
struct ift_ringq;

/* Each round reads at most this many pages of a CPU, mapped or spliced. */
#define IFT_RINGQ_PAGES_PER_ROUND	256
/* An empty ring read at T says nothing older than T - this can still come:
   events reserved but not yet committed. */
#define IFT_RINGQ_IDLE_MARGIN_NS	20000000ULL
/* The nice value of the thread that reads the rings (root only). */
#define IFT_RINGQ_NICE			(-10)

/*
 * Where ift_ringq_take() hands the queue on, in the order it was read:
 * PAGE a tracefs page of CPU, RECORD a perf ring's record, IDLE the note
 * that CPU's ring of SOURCE (0 tracefs, 1 perf) was empty at TS, so
 * nothing older can still come from it.  TAKEN is called once the queue
 * is taken and before its first page, when it is not NULL.  A negative
 * return stops the handing on, and is returned; the pages are freed.
 */
struct ift_ringq_sink {
	int (*page)(void *ctx, int cpu, const void *page, int len);
	int (*record)(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size);
	void (*idle)(void *ctx, int source, int cpu, uint64_t ts);
	int (*taken)(void *ctx);
	void *ctx;
};

/*
 * Starts the thread on RING and ISO (NULL: no perf rings), with every
 * signal blocked: signals are the caller's.  IDLE_NOTES: the rings' clock
 * is CLOCK_MONOTONIC's, and an empty ring is noted as such.  *OUT is made
 * even where no thread is needed (mapped rings, no perf rings).  0 or a
 * negative error.
 */
int ift_ringq_start(struct ift_ring *ring, struct ift_perfring *iso, bool idle_notes,
		     struct ift_ringq **out);
/* Whether a thread reads (it may have stopped on an error since). */
bool ift_ringq_running(const struct ift_ringq *rd);
/*
 * Hands what was queued to SINK, waiting up to TIMEOUT_MS for something
 * when nothing is and the thread runs; *PAGES counts the pages handed on.
 * 0, the thread's error (once it failed, every call returns it), or the
 * sink's.
 */
int ift_ringq_take(struct ift_ringq *rd, int timeout_ms, const struct ift_ringq_sink *sink,
		    int *pages);
/* Stops the thread and waits for it: what it read stays to be taken. */
void ift_ringq_stop(struct ift_ringq *rd);
/* The most bytes that were ever queued at once. */
uint64_t ift_ringq_peak_bytes(const struct ift_ringq *rd);
/* Stops the thread where it runs, and frees what is left; NULL is a no-op. */
void ift_ringq_free(struct ift_ringq *rd);

#endif
