/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_INTERN_H
#define IFT_UTIL_INTERN_H

/*
 * Interned byte strings: each distinct string once, numbered from 0 in the
 * order it was first added.  The trace writer's string table and the
 * Parquet writer's dictionaries are both one.  The bytes live in one arena,
 * each followed by a NUL (so a string without one reads as a C string);
 * the lookup is open addressing with linear probing over the numbers, kept
 * at most half full.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct ift_intern_ent {
	size_t off;		/* in the arena */
	uint32_t len;
};

struct ift_intern {
	struct buf arena;	/* each string, then a NUL */
	struct ift_intern_ent *ent;	/* by number */
	size_t n, cap;
	uint32_t *slot;		/* 1 + a string's number; 0: empty */
	size_t nslot;		/* 0 or a power of two */
};

/* An empty table; it allocates nothing until the first string. */
void ift_intern_init(struct ift_intern *t);
/* Frees it all; T is empty again. */
void ift_intern_release(struct ift_intern *t);

/*
 * The number of the N bytes at P: the string's if T has it; else, with
 * ADD, the next number, the string added; else -ENOENT.  -ENOMEM, or
 * -EOVERFLOW past 2^32 - 2 strings or 4 GiB a string, with T unchanged.
 */
int64_t ift_intern(struct ift_intern *t, const void *p, size_t n, bool add);

/* String I (< ift_intern_count()), NUL-terminated; its length in *N. */
static inline const char *ift_intern_get(const struct ift_intern *t, size_t i, size_t *n)
{
	if (n)
		*n = t->ent[i].len;
	return (const char *)t->arena.data + t->ent[i].off;
}

static inline size_t ift_intern_count(const struct ift_intern *t)
{
	return t->n;
}

/* The strings' bytes in all, without their NULs. */
static inline size_t ift_intern_bytes(const struct ift_intern *t)
{
	return t->arena.len - t->n;
}

#endif
