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
 * ift_page_walk - call FN for each event of PAGE (LEN bytes read).
 * *MISSED gets the events the kernel lost before this page (-1: some, count
 * unknown; 0: none).  Returns 0, what FN returned if negative, or
 * -IFT_E_CORRUPT for a page that does not hold together.
 */
int ift_page_walk(const uint8_t *page, int len, ift_page_event_fn fn, void *ctx,
		  int64_t *missed);

#endif
