/* SPDX-License-Identifier: MIT */
#ifndef IFT_RING_H
#define IFT_RING_H

/*
 * ring: the per-CPU ring buffers of a tracefs instance, read without losing
 * pages: full pages are spliced (tracefs_cpu_buffered_read), a partly filled
 * page is taken with read() only when a CPU has nothing else, and what is left
 * when tracing stops is flushed.  Reads tracefs; changes nothing.
 */
#include <stdbool.h>
#include <stdint.h>

#include "ift-trace.h"

struct tracefs_instance;
struct ift_ring;

/* Called for each raw ring-buffer page read; a negative return stops the read. */
typedef int (*ift_page_fn)(void *ctx, int cpu, void *page, int len);

/*
 * Where ift_ring_drain() puts pages, so that a page is copied once, from
 * the kernel's pipe into memory the caller keeps.  BUF gives room for the
 * next page (ift_ring_page_size() bytes), NULL without memory; PAGE takes
 * each back, filled (LEN > 0) or unused (LEN 0): every buffer BUF gave,
 * exactly once.  A negative return of PAGE stops the read.
 */
struct ift_page_sink {
	void *(*buf)(void *ctx, int cpu);
	ift_page_fn page;
	void *ctx;
};

/* Opens a reader on every CPU of INST.  0 or a negative error. */
int ift_ring_open(struct tracefs_instance *inst, struct ift_ring **out);
int ift_ring_ncpus(const struct ift_ring *r);
/* The size of one page (sub-buffer) of the ring buffer. */
int ift_ring_page_size(const struct ift_ring *r);

/*
 * ift_ring_drain - read up to MAX_PAGES pages of CPU into SINK.  When the
 * CPU has no full page left and PARTIAL is set, the page the kernel is
 * still filling is read too.  Returns the number of pages read (0: the
 * buffer was empty) or a negative error.
 */
int ift_ring_drain(struct ift_ring *r, int cpu, int max_pages, bool partial,
		   const struct ift_page_sink *sink);

/* After tracing stopped: read everything left on every CPU. */
int ift_ring_flush(struct ift_ring *r, ift_page_fn fn, void *ctx);

/* The kernel's counters for CPU (per_cpu/cpuN/stats). */
int ift_ring_stats(struct ift_ring *r, int cpu, struct ift_loss *out);

void ift_ring_close(struct ift_ring *r);

#endif
