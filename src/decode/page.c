// SPDX-License-Identifier: MIT
#include <string.h>

#include "ift-error.h"
#include "page.h"

#define PAGE_HDR		16	/* u64 timestamp, 8-byte commit */
#define COMMIT_MASK		((1U << 27) - 1)
#define MISSED_EVENTS		(1ULL << 31)
#define MISSED_STORED		(1ULL << 30)
#define TS_SHIFT		27

enum {
	TYPE_DATA_MAX = 28,
	TYPE_PADDING = 29,
	TYPE_TIME_EXTEND = 30,
	TYPE_TIME_STAMP = 31,
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int ift_page_walk(const uint8_t *page, int len, int from, ift_page_event_fn fn, void *ctx,
		  int64_t *missed)
{
	uint64_t ts, commit;
	const uint8_t *p, *end, *first;
	uint32_t size;
	int ret;

	*missed = 0;
	if (len < PAGE_HDR || from < 0)
		return -IFT_E_CORRUPT;
	ts = rd64(page);
	/*
	 * Once: a page read in place may still be filling, and the kernel
	 * writes an event before the commit that covers it.
	 */
	commit = rd64(page + 8);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	size = (uint32_t)(commit & COMMIT_MASK);
	if (size > (uint32_t)(len - PAGE_HDR) || (uint32_t)from > size)
		return -IFT_E_CORRUPT;
	p = page + PAGE_HDR;
	end = p + size;
	first = p + from;
	/* the kernel marks a loss when it hands the page over: seen at its start only */
	if ((commit & MISSED_EVENTS) && !from) {
		/* the count follows the data when the kernel had room for it */
		if ((commit & MISSED_STORED) && size + 8 <= (uint32_t)(len - PAGE_HDR))
			*missed = (int64_t)rd64(end);
		else
			*missed = -1;
	}
	while (end - p >= 4) {
		uint32_t hdr = rd32(p);
		uint32_t type = hdr & 31, delta = hdr >> 5;
		const uint8_t *data = p + 4;
		uint32_t length;

		switch (type) {
		case TYPE_PADDING:
			/* a null event pads the rest of the page */
			if (!delta || end - data < 4)
				return (int)size;
			length = rd32(data);
			ts += delta;
			break;
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP: {
			uint64_t ext;

			if (end - data < 4)
				return -IFT_E_CORRUPT;
			ext = ((uint64_t)rd32(data) << TS_SHIFT) + delta;
			/* an absolute stamp keeps the page's top bits */
			ts = type == TYPE_TIME_STAMP ?
			     ext | (rd64(page) & ~((1ULL << 59) - 1)) : ts + ext;
			p = data + 4;
			continue;
		}
		default:
			/* a data record: its length in words is the type, or
			   when 0 the word before it says it in bytes */
			if (type) {
				length = type * 4;
			} else {
				if (end - data < 4)
					return -IFT_E_CORRUPT;
				length = rd32(data);
				if (length < 4)
					return -IFT_E_CORRUPT;
				length = ((length - 4) + 3) & ~3U;
				data += 4;
			}
			ts += delta;
			if (length > (uint32_t)(end - data))
				return -IFT_E_CORRUPT;
			/* one read before: its time counts, it is not called again */
			if (p >= first && (ret = fn(ctx, ts, data, (int)length)) < 0)
				return ret;
			break;
		}
		if (length > (uint32_t)(end - data))
			return -IFT_E_CORRUPT;
		p = data + length;
	}
	return (int)size;
}
