/* SPDX-License-Identifier: MIT */
#ifndef IFT_RING_H
#define IFT_RING_H

/*
 * ring: the per-CPU ring buffers of a tracefs instance, read without losing
 * pages, one of two ways.  Spliced: full pages are spliced
 * (tracefs_cpu_buffered_read) and copied once into memory the caller
 * keeps, a partly filled page is taken with read() only when a CPU has
 * nothing else.  Mapped (Linux 6.10 and later: mmap of trace_pipe_raw):
 * the sub-buffer the kernel hands the reader is parsed where it lies, no
 * copy, and the next one is asked for only after.  Either way what is left
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
 * Called for a page of CPU (LEN bytes readable) to parse its events that
 * start FROM bytes or more into its data: 0 for a page seen the first
 * time; more for a mapped one the kernel went on filling since the last
 * call.  Returns the page's data size it parsed up to (the next call's
 * FROM), or a negative error, which stops the read.
 */
typedef int (*ift_span_fn)(void *ctx, int cpu, const void *page, int len, int from);

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

/*
 * Opens a reader on every CPU of INST, mapped where MAP asks for it and
 * the kernel maps every CPU's ring (else spliced: see ift_ring_mapped()).
 * 0 or a negative error.
 */
int ift_ring_open(struct tracefs_instance *inst, bool map, struct ift_ring **out);
/* Whether the rings are read in place (ift_ring_read_mapped()). */
bool ift_ring_mapped(const struct ift_ring *r);
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

/*
 * ift_ring_read_mapped - mapped: FN parses what CPU's ring holds, in place,
 * up to MAX_PAGES calls; *BYTES (if not NULL) gets the bytes of events
 * they parsed added.  Each page is given back to the kernel only after FN
 * returned, so FN must be done with it by then.  Returns the calls made
 * (fewer than MAX_PAGES: the ring is read to its end; 0: it was empty) or
 * a negative error.
 */
int ift_ring_read_mapped(struct ift_ring *r, int cpu, int max_pages, ift_span_fn fn, void *ctx,
			 uint64_t *bytes);
/* Mapped: the bytes of one CPU's ring, its sub-buffers' data; else 0. */
uint64_t ift_ring_cpu_bytes(const struct ift_ring *r);

/* After tracing stopped: read everything left on every CPU. */
int ift_ring_flush(struct ift_ring *r, ift_span_fn fn, void *ctx);

/* The kernel's counters for CPU (per_cpu/cpuN/stats). */
int ift_ring_stats(struct ift_ring *r, int cpu, struct ift_loss *out);

void ift_ring_close(struct ift_ring *r);

#endif
