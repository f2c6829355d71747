/* SPDX-License-Identifier: MIT */
#ifndef IFT_DECODE_PAGE_H
#define IFT_DECODE_PAGE_H

/*
 * A walker over one ring-buffer sub-buffer, for the layout a 64-bit
 * little-endian kernel writes (events/header_page: u64 timestamp, 8-byte
 * commit, data).  It does what libtraceevent's kbuffer does, without an
 * indirect call per field: kbuffer was a sixth of the recorder's CPU.  The
 * decoder falls back to kbuffer for any other layout, and test-page checks
 * both give the same events on crafted pages.
 */
#include <stdbool.h>
#include <stdint.h>

/* Called per data event; a negative return stops the walk. */
typedef int (*ift_page_event_fn)(void *ctx, uint64_t ts, const uint8_t *data,
				 int size);

/*
 * ift_page_walk - call FN for each event of PAGE (LEN bytes readable) that
 * starts FROM bytes or more into its data: the events before were seen by
 * an earlier walk of the same page, read in place while the kernel still
 * filled it (their times still count: each event's is a delta).  The commit
 * is read once, so events written meanwhile wait for the next walk.
 * *MISSED gets the events the kernel lost before this page (-1: some, count
 * unknown; 0: none), at FROM 0 only.  Returns the page's data size as
 * walked (the FROM of a next walk), what FN returned if negative, or
 * -IFT_E_CORRUPT for a page that does not hold together.
 */
int ift_page_walk(const uint8_t *page, int len, int from, ift_page_event_fn fn, void *ctx,
		  int64_t *missed);

#endif
