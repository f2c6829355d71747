/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_PQCHECK_H
#define IFT_TESTS_PQCHECK_H

/*
 * A second reading of the Parquet specification, for the tests of
 * src/export/parquet.c (test-parquet, fuzz-parquet): a Thrift compact
 * protocol parser into a tree, and pq_check(), which says what is wrong
 * with a file's structure: its magic, its footer, the row count, every
 * column chunk's pages where the footer says, of the sizes it says
 * (decompressed with zstd), counting the values it says.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct tnode {
	int16_t id;		/* field id; 0 for a list element */
	uint8_t type;
	int64_t i;		/* an integer; a list's or struct's child count */
	const uint8_t *bin;
	size_t len;
	struct tnode *kids;
};

struct tin {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t t_varint(struct tin *r)
{
	uint64_t v = 0;

	for (int s = 0; s < 64; s += 7) {
		uint8_t b;

		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t t_zz(struct tin *r)
{
	uint64_t v = t_varint(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void t_value(struct tin *r, struct tnode *n, int depth);

static void t_struct(struct tin *r, struct tnode *n, int depth)
{
	int16_t last = 0;
	size_t cap = 0;

	n->type = 12;
	n->i = 0;
	while (!r->bad && r->p < r->end) {
		uint8_t h = *r->p++;
		struct tnode *k, *v;

		if (!h)
			return;
		if (n->i == (int64_t)cap) {
			cap = cap ? 2 * cap : 8;
			if (!(v = realloc(n->kids, cap * sizeof(*v)))) {
				r->bad = true;
				return;
			}
			n->kids = v;
		}
		k = &n->kids[n->i++];
		memset(k, 0, sizeof(*k));
		k->type = h & 0x0f;
		k->id = h >> 4 ? (int16_t)(last + (h >> 4)) : (int16_t)t_zz(r);
		last = k->id;
		if (k->type == 1 || k->type == 2)
			k->i = k->type == 1;
		else
			t_value(r, k, depth + 1);
	}
	r->bad = true;
}

static void t_value(struct tin *r, struct tnode *n, int depth)
{
	if (depth > 16) {
		r->bad = true;
		return;
	}
	switch (n->type) {
	case 3:
		if (r->p < r->end)
			n->i = (int8_t)*r->p++;
		else
			r->bad = true;
		break;
	case 4: case 5: case 6:
		n->i = t_zz(r);
		break;
	case 8:
		n->len = (size_t)t_varint(r);
		if ((size_t)(r->end - r->p) < n->len) {
			r->bad = true;
		} else {
			n->bin = r->p;
			r->p += n->len;
		}
		break;
	case 9: {
		uint8_t h = r->p < r->end ? *r->p++ : 0;
		uint8_t et = h & 0x0f;

		n->i = h >> 4 == 15 ? (int64_t)t_varint(r) : h >> 4;
		if (n->i < 0 || n->i > (int64_t)(r->end - r->p) + 1) {
			r->bad = true;
			n->i = 0;
			break;
		}
		n->kids = n->i ? calloc((size_t)n->i, sizeof(*n->kids)) : NULL;
		for (int64_t k = 0; k < n->i && !r->bad; k++) {
			n->kids[k].type = et;
			if (et == 12)
				t_struct(r, &n->kids[k], depth + 1);
			else
				t_value(r, &n->kids[k], depth + 1);
		}
		break;
	}
	case 12:
		t_struct(r, n, depth);
		break;
	default:
		r->bad = true;
	}
}

static void t_free(struct tnode *n)
{
	for (int64_t k = 0; (n->type == 9 || n->type == 12) && n->kids && k < n->i; k++)
		t_free(&n->kids[k]);
	free(n->kids);
}

static const struct tnode *t_field(const struct tnode *s, int16_t id)
{
	for (int64_t k = 0; s && s->type == 12 && k < s->i; k++)
		if (s->kids[k].id == id)
			return &s->kids[k];
	return NULL;
}

/* The integer of field ID of S into *V; false when S has none. */
static bool t_int(const struct tnode *s, int16_t id, int64_t *v)
{
	const struct tnode *f = t_field(s, id);

	if (!f)
		return false;
	*v = f->i;
	return true;
}

static char pq_why[160];

#define PQ_FAIL(...) do { snprintf(pq_why, sizeof(pq_why), __VA_ARGS__); goto out; } while (0)

/*
 * One page of D (LEN bytes) at *OFF, of page type TYPE: its header, its
 * compressed bytes decompressed to the size the header says; the values
 * it counts into *VALUES, *OFF past it.  NULL, or what is wrong.
 */
static const char *pq_page(const uint8_t *d, size_t len, size_t *off, int64_t type,
			   int64_t *values)
{
	struct tin r = { d + *off, d + len, false };
	struct tnode h = { 0 };
	const struct tnode *sub;
	int64_t t, usize, csize;
	const char *why = NULL;
	void *out = NULL;

	if (*off >= len)
		PQ_FAIL("a page at %zu, past the end", *off);
	t_struct(&r, &h, 0);
	if (r.bad || !t_int(&h, 1, &t) || !t_int(&h, 2, &usize) || !t_int(&h, 3, &csize))
		PQ_FAIL("a page header at %zu does not parse", *off);
	if (t != type)
		PQ_FAIL("page type %lld at %zu, %lld wanted", (long long)t, *off, (long long)type);
	if (csize < 0 || (size_t)csize > (size_t)(r.end - r.p) || usize < 0 || usize > 1 << 30)
		PQ_FAIL("page sizes %lld/%lld at %zu", (long long)usize, (long long)csize, *off);
	if (!(out = malloc((size_t)usize + 1)) ||
	    ZSTD_decompress(out, (size_t)usize + 1, r.p, (size_t)csize) != (size_t)usize)
		PQ_FAIL("page at %zu does not decompress to %lld bytes", *off, (long long)usize);
	sub = t_field(&h, type == 2 ? 7 : 5);
	if (!sub || !t_int(sub, 1, values))
		PQ_FAIL("page at %zu has no value count", *off);
	*off = (size_t)(r.p - d) + (size_t)csize;
out:
	why = pq_why[0] ? pq_why : NULL;
	free(out);
	t_free(&h);
	return why;
}

/* What is wrong with Parquet file D (LEN bytes) of ROWS rows in NCOLS columns, or NULL. */
static const char *pq_check(const uint8_t *d, size_t len, size_t ncols, int64_t rows)
{
	struct tnode md = { 0 };
	const struct tnode *groups, *schema;
	struct tin r;
	uint32_t flen;
	int64_t seen = 0, v = 0, n = 0;

	pq_why[0] = 0;
	if (len < 12 || memcmp(d, "PAR1", 4) || memcmp(d + len - 4, "PAR1", 4))
		PQ_FAIL("no PAR1 at both ends");
	memcpy(&flen, d + len - 8, 4);
	if ((size_t)flen + 12 > len)
		PQ_FAIL("a footer of %u bytes in %zu", flen, len);
	r = (struct tin){ d + len - 8 - flen, d + len - 8, false };
	t_struct(&r, &md, 0);
	if (r.bad || r.p != r.end)
		PQ_FAIL("the footer does not parse to its end");
	schema = t_field(&md, 2);
	if (!t_int(&md, 1, &v) || v != 1 || !schema || schema->i != (int64_t)ncols + 1)
		PQ_FAIL("version or schema wrong");
	if (!t_int(&md, 3, &n) || n != rows)
		PQ_FAIL("%lld rows in the footer, %lld written", (long long)n, (long long)rows);
	if (!(groups = t_field(&md, 4)))
		PQ_FAIL("no row groups");
	for (int64_t g = 0; g < groups->i; g++) {
		const struct tnode *rg = &groups->kids[g], *cols = t_field(rg, 1);
		int64_t grows;

		if (!cols || cols->i != (int64_t)ncols || !t_int(rg, 3, &grows) || grows <= 0)
			PQ_FAIL("row group %lld", (long long)g);
		seen += grows;
		for (size_t c = 0; c < ncols; c++) {
			const struct tnode *cm = t_field(&cols->kids[c], 3);
			int64_t codec, nv, total, data, dict = -1, vals;
			size_t at, start;
			const char *why;

			if (!t_int(cm, 4, &codec) || codec != 6 || !t_int(cm, 5, &nv) ||
			    nv != grows || !t_int(cm, 7, &total) || !t_int(cm, 9, &data))
				PQ_FAIL("column %zu of group %lld: its metadata", c, (long long)g);
			t_int(cm, 11, &dict);
			start = at = (size_t)(dict >= 0 ? dict : data);
			if (dict >= 0 && (why = pq_page(d, len, &at, 2, &vals)))
				goto out;
			if (at != (size_t)data)
				PQ_FAIL("column %zu: data page at %zu, the footer says %lld", c, at,
					(long long)data);
			if ((why = pq_page(d, len, &at, 0, &vals)))
				goto out;
			if (vals != grows || (int64_t)(at - start) != total)
				PQ_FAIL("column %zu: %lld values in %zu bytes, %lld in %lld said", c,
					(long long)vals, at - start, (long long)grows, (long long)total);
		}
	}
	if (seen != rows)
		PQ_FAIL("%lld rows in the groups, %lld written", (long long)seen, (long long)rows);
out:
	t_free(&md);
	return pq_why[0] ? pq_why : NULL;
}

#endif
