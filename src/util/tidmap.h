/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_TIDMAP_H
#define IFT_UTIL_TIDMAP_H

/*
 * tid -> index into the caller's array of tasks, written once for every
 * such array (the decoder's tasks, the trace's task records, the
 * analyzer's threads).  Open addressing with linear probing, kept at most
 * half full.  A tid set again (the kernel reused it) maps to the index set
 * last: the task alive now.  The map holds indexes, not pointers, so the
 * caller's array may move as it grows.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ift_tidslot {
	uint32_t tid;
	uint32_t idx1;		/* index + 1; 0: the slot is empty */
};

struct ift_tidmap {
	struct ift_tidslot *slot;
	size_t nslot;		/* 0 or a power of two */
	size_t n;		/* tids mapped */
};

static inline size_t ift_tidmap_hash(uint32_t tid, size_t nslot)
{
	return (size_t)((tid * 2654435761U) & (nslot - 1));
}

/* An empty map; it allocates nothing until the first ift_tidmap_set(). */
void ift_tidmap_init(struct ift_tidmap *m);

/* Frees the slots; M is empty again, ready for use. */
void ift_tidmap_release(struct ift_tidmap *m);

/*
 * Maps TID to IDX (replacing what TID mapped to).  0, or -ENOMEM /
 * -EOVERFLOW (IDX past 2^32 - 2) with M unchanged.
 */
int ift_tidmap_set(struct ift_tidmap *m, uint32_t tid, size_t idx);

/* The index TID maps to into *IDX; false when it maps to none. */
static inline bool ift_tidmap_get(const struct ift_tidmap *m, uint32_t tid, size_t *idx)
{
	if (!m->nslot)
		return false;
	for (size_t h = ift_tidmap_hash(tid, m->nslot); m->slot[h].idx1;
	     h = (h + 1) & (m->nslot - 1))
		if (m->slot[h].tid == tid) {
			*idx = m->slot[h].idx1 - 1;
			return true;
		}
	return false;
}

#endif
