/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_PERFBUF_H
#define IFT_UTIL_PERFBUF_H

/*
 * perfbuf: the mmap'ed ring of a perf event, read record by record.  The
 * kernel writes at data_head, we free up to data_tail; a record that wraps
 * round the end of the data area is handed over whole, from a copy.  Used by
 * stack (samples at calls) and perfring (--isolate's uprobe events).
 */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct ift_perfbuf {
	int fd;			/* the event whose mmap holds the ring, -1: none */
	void *base;
	size_t size;		/* data area */
	uint8_t *tmp;		/* a record that wraps */
	size_t tmpcap;
};

/*
 * KB KiB per CPU, halved down to MIN_KB while NCPUS rings would take more
 * than TOTAL_KB in all: a machine of many CPUs gets smaller rings.
 */
unsigned ift_perfbuf_ring_kb(unsigned kb, unsigned min_kb, uint64_t total_kb, int ncpus);

/* Nothing mapped yet. */
void ift_perfbuf_init(struct ift_perfbuf *b);

/* Maps the ring of FD, a data area of at least KB KiB (a power of 2 pages). */
int ift_perfbuf_map(struct ift_perfbuf *b, int fd, unsigned kb);

/* Unmaps (FD is the caller's to close) and frees the copy. */
void ift_perfbuf_release(struct ift_perfbuf *b);

/*
 * Called for each record (header and body contiguous, SIZE bytes in all);
 * 0 goes on, > 0 stops before freeing this record (it is read again next
 * time), < 0 stops with that error.
 */
typedef int (*ift_perfbuf_fn)(void *ctx, const struct perf_event_header *h);

/*
 * ift_perfbuf_read - hands FN every whole record the ring holds, then frees
 * their space for the kernel.  Returns the records handed over, or FN's or
 * an allocation's error.
 */
int ift_perfbuf_read(struct ift_perfbuf *b, ift_perfbuf_fn fn, void *ctx);

/*
 * Stops the N events FDS (and the copies their tasks' children inherited:
 * an event's ioctl reaches them).  Changes the running system.
 */
void ift_perfbuf_disable(const int *fds, size_t n);

/*
 * ift_perfbuf_count - what the N events FDS counted, summed into *SUM: at
 * sample period 1, each record written and each one dropped.  A copy an
 * event's task passed to a child adds its count to the event's only once
 * that child exits.  0 or a negative error.
 */
int ift_perfbuf_count(const int *fds, size_t n, uint64_t *sum);

/* The bytes written and not yet read (0 when nothing is mapped). */
size_t ift_perfbuf_pending(const struct ift_perfbuf *b);

#endif
