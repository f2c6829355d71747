// SPDX-License-Identifier: MIT
/* Rows held until a watermark, handed on in time order (held.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/held.h"

static uint64_t ts_of(const struct ift_held *h, const char *row)
{
	uint64_t ts;

	memcpy(&ts, row + h->ts_off, sizeof(ts));
	return ts;
}

int ift_held_add(struct ift_held *h, const void *row)
{
	if (ift_array_grow(&h->v, &h->cap, h->n + 1, h->size) < 0)
		return -ENOMEM;
	memcpy((char *)h->v + h->n * h->size, row, h->size);
	h->n++;
	return 0;
}

int ift_held_release(struct ift_held *h, uint64_t below,
		     int (*emit)(void *ctx, const void *row), void *ctx)
{
	char *v = h->v;
	size_t i;
	int ret = 0;

	if (!h->n)
		return 0;
	qsort(v, h->n, h->size, h->cmp);
	for (i = 0; i < h->n && ts_of(h, v + i * h->size) < below; i++) {
		uint64_t ts = ts_of(h, v + i * h->size);

		if (ts < h->last) {
			h->late++;
			continue;
		}
		if ((ret = emit(ctx, v + i * h->size)) < 0)
			break;
		h->last = ts;
	}
	/* what is left waits for the next watermark */
	memmove(v, v + i * h->size, (h->n - i) * h->size);
	h->n -= i;
	return ret;
}

void ift_held_free(struct ift_held *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
