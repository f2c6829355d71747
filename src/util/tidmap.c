// SPDX-License-Identifier: MIT
/* tid -> index.  See util/tidmap.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/tidmap.h"

#define TIDMAP_MIN_SLOTS	256

void ift_tidmap_init(struct ift_tidmap *m)
{
	memset(m, 0, sizeof(*m));
}

void ift_tidmap_release(struct ift_tidmap *m)
{
	free(m->slot);
	ift_tidmap_init(m);
}

/* The slot of TID in SLOT: the one holding it, or the empty one it goes to. */
static size_t slot_of(const struct ift_tidslot *slot, size_t nslot, uint32_t tid)
{
	size_t h = ift_tidmap_hash(tid, nslot);

	while (slot[h].idx1 && slot[h].tid != tid)
		h = (h + 1) & (nslot - 1);
	return h;
}

static int grow(struct ift_tidmap *m)
{
	size_t nslot = m->nslot ? m->nslot * 2 : TIDMAP_MIN_SLOTS;
	struct ift_tidslot *slot;

	if (nslot > SIZE_MAX / sizeof(*slot))
		return -ENOMEM;
	slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->nslot; i++)
		if (m->slot[i].idx1)
			slot[slot_of(slot, nslot, m->slot[i].tid)] = m->slot[i];
	free(m->slot);
	m->slot = slot;
	m->nslot = nslot;
	return 0;
}

int ift_tidmap_set(struct ift_tidmap *m, uint32_t tid, size_t idx)
{
	size_t h;
	int ret;

	if (idx >= UINT32_MAX)
		return -EOVERFLOW;
	/* at most half full, so a probe for a tid not there ends soon */
	if ((m->n + 1) * 2 > m->nslot && (ret = grow(m)) < 0)
		return ret;
	h = slot_of(m->slot, m->nslot, tid);
	if (!m->slot[h].idx1)
		m->n++;
	m->slot[h].tid = tid;
	m->slot[h].idx1 = (uint32_t)(idx + 1);
	return 0;
}
