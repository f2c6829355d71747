// SPDX-License-Identifier: MIT
/* Interned byte strings.  See util/intern.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/intern.h"

#define INTERN_MIN_SLOTS	1024

void ift_intern_init(struct ift_intern *t)
{
	memset(t, 0, sizeof(*t));
}

void ift_intern_release(struct ift_intern *t)
{
	ift_buf_release(&t->arena);
	free(t->ent);
	free(t->slot);
	ift_intern_init(t);
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static int grow(struct ift_intern *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : INTERN_MIN_SLOTS;
	uint32_t *slot;

	if (nslot > SIZE_MAX / sizeof(*slot))
		return -ENOMEM;
	slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = (size_t)hash(t->arena.data + t->ent[i].off, t->ent[i].len) & (nslot - 1);

		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

int64_t ift_intern(struct ift_intern *t, const void *p, size_t n, bool add)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && grow(t) < 0)
		return -ENOMEM;
	for (h = (size_t)hash(p, n) & (t->nslot - 1); t->slot[h]; h = (h + 1) & (t->nslot - 1)) {
		size_t i = t->slot[h] - 1;

		if (t->ent[i].len == n && (!n || !memcmp(t->arena.data + t->ent[i].off, p, n)))
			return (int64_t)i;
	}
	if (!add)
		return -ENOENT;
	if (t->n >= UINT32_MAX - 1 || n >= UINT32_MAX)
		return -EOVERFLOW;
	if (ift_array_grow((void **)&t->ent, &t->cap, t->n + 1, sizeof(*t->ent)) < 0)
		return -ENOMEM;
	t->ent[t->n] = (struct ift_intern_ent){ t->arena.len, (uint32_t)n };
	if (n)
		ift_buf_put(&t->arena, p, n);
	ift_buf_u8(&t->arena, 0);
	if (t->arena.oom)
		return -ENOMEM;
	t->slot[h] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}
