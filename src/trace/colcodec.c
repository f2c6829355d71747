// SPDX-License-Identifier: MIT
/*
 * Column encodings.  Each column of a chunk is stored in whichever encoding is
 * smallest before compression: timestamps come out as DELTA, ids as DICT, small
 * signed values as ZIGZAG.  zstd then works on far more regular bytes than the
 * row-major ring buffer records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "util/array.h"
#include "util/intern.h"

struct pair {
	uint64_t key, val;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static size_t hash_u64(uint64_t v, size_t mask)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return (size_t)v & mask;
}

/*
 * The distinct KEYS (with VALS[i] for each when VALS is given) sorted by key,
 * into SCRATCH.  Returns their number, or 0 when there are more than MAX or a
 * key comes with two values: then neither DICT nor FUNC pays.  A bounded hash
 * set, not a sort of the whole column: this runs for every column of every
 * chunk while recording.
 */
static size_t distinct_pairs(const uint64_t *keys, const uint64_t *vals, size_t n,
			     size_t max, struct buf *scratch, struct pair **out)
{
	size_t cap = 16, k = 0;
	struct pair *tab, *d;
	uint8_t *used;

	while (cap < 2 * max + 2)
		cap *= 2;
	ift_buf_clear(scratch);
	if (!ift_buf_reserve(scratch, cap * (sizeof(*tab) + 1) + max * sizeof(*d)))
		return 0;
	tab = (struct pair *)(void *)scratch->data;
	d = tab + cap;
	used = (uint8_t *)(d + max);
	memset(used, 0, cap);
	for (size_t i = 0; i < n; i++) {
		size_t h = hash_u64(keys[i], cap - 1);
		uint64_t val = vals ? vals[i] : 0;

		while (used[h] && tab[h].key != keys[i])
			h = (h + 1) & (cap - 1);
		if (used[h]) {
			if (tab[h].val != val)
				return 0;
			continue;
		}
		if (k == max)
			return 0;
		used[h] = 1;
		tab[h].key = keys[i];
		tab[h].val = val;
		d[k].key = keys[i];
		d[k].val = val;
		k++;
	}
	qsort(d, k, sizeof(*d), cmp_pair);
	*out = d;
	return k;
}

static unsigned dict_width(size_t ndistinct)
{
	return ndistinct <= 0x100 ? 1 : ndistinct <= 0x10000 ? 2 : 4;
}

static size_t dict_index(const struct pair *d, size_t nd, uint64_t v)
{
	size_t lo = 0, hi = nd;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d[mid].key <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void ift_col_encode(struct buf *out, const uint64_t *v, size_t n,
		struct buf *scratch)
{
	size_t plain = 0, delta, zz = 0, dict = SIZE_MAX, nd = 0;
	struct pair *d = NULL;
	uint8_t *p;
	bool same = true;
	unsigned enc;
	size_t len;

	delta = varint_size(v[0]);
	for (size_t i = 0; i < n; i++) {
		plain += varint_size(v[i]);
		zz += varint_size(zigzag((int64_t)v[i]));
		if (i) {
			delta += varint_size(zigzag((int64_t)(v[i] - v[i - 1])));
			same &= v[i] == v[0];
		}
	}
	if (same) {
		ift_buf_u8(out, IFT_ENC_CONST);
		ift_buf_varint(out, varint_size(v[0]));
		ift_buf_varint(out, v[0]);
		return;
	}
	/*
	 * A dictionary takes at least a byte a row, so it only pays when the
	 * other encodings take more and values repeat a lot.
	 */
	if ((plain > n * 2 || zz > n * 2) && delta > n && plain > n && zz > n) {
		nd = distinct_pairs(v, NULL, n, n / 4, scratch, &d);
		if (nd) {
			dict = varint_size(nd) + varint_size(d[0].key) + 1 +
			       n * dict_width(nd);
			for (size_t k = 1; k < nd; k++)
				dict += varint_size(d[k].key - d[k - 1].key);
		}
	}

	enc = IFT_ENC_PLAIN;
	len = plain;
	if (delta < len) {
		enc = IFT_ENC_DELTA;
		len = delta;
	}
	if (zz < len) {
		enc = IFT_ENC_ZIGZAG;
		len = zz;
	}
	if (dict < len) {
		enc = IFT_ENC_DICT;
		len = dict;
	}

	ift_buf_u8(out, (uint8_t)enc);
	ift_buf_varint(out, len);
	if (!ift_buf_reserve(out, len))
		return;
	/* LEN bytes are reserved: write them without a bounds check a value */
	p = out->data + out->len;
	switch (enc) {
	case IFT_ENC_PLAIN:
		for (size_t i = 0; i < n; i++)
			p = put_varint(p, v[i]);
		break;
	case IFT_ENC_ZIGZAG:
		for (size_t i = 0; i < n; i++)
			p = put_varint(p, zigzag((int64_t)v[i]));
		break;
	case IFT_ENC_DELTA:
		p = put_varint(p, v[0]);
		for (size_t i = 1; i < n; i++)
			p = put_varint(p, zigzag((int64_t)(v[i] - v[i - 1])));
		break;
	case IFT_ENC_DICT: {
		unsigned w = dict_width(nd);

		p = put_varint(p, nd);
		p = put_varint(p, d[0].key);
		for (size_t x = 1; x < nd; x++)
			p = put_varint(p, d[x].key - d[x - 1].key);
		*p++ = (uint8_t)w;
		for (size_t i = 0; i < n; i++) {
			size_t ix = dict_index(d, nd, v[i]);

			if (w == 1) {
				*p++ = (uint8_t)ix;
			} else if (w == 2) {
				ift_put_le16(p, (uint16_t)ix);
				p += 2;
			} else {
				ift_put_le32(p, (uint32_t)ix);
				p += 4;
			}
		}
		break;
	}
	}
	out->len = (size_t)(p - out->data);
}

bool ift_col_encode_func(struct buf *out, const uint64_t *v, const uint64_t *key,
		     unsigned keycol, size_t n, struct buf *scratch)
{
	struct pair *p;
	size_t np, len;
	bool same = true;

	for (size_t i = 1; i < n && same; i++)
		same = v[i] == v[0];
	if (same)
		return false;
	np = distinct_pairs(key, v, n, n, scratch, &p);
	if (!np)
		return false;
	len = varint_size(keycol) + varint_size(np);
	for (size_t k = 0; k < np; k++)
		len += varint_size(k ? p[k].key - p[k - 1].key : p[k].key) +
		       varint_size(p[k].val);
	ift_buf_u8(out, IFT_ENC_FUNC);
	ift_buf_varint(out, len);
	ift_buf_varint(out, keycol);
	ift_buf_varint(out, np);
	for (size_t k = 0; k < np; k++) {
		ift_buf_varint(out, k ? p[k].key - p[k - 1].key : p[k].key);
		ift_buf_varint(out, p[k].val);
	}
	return true;
}

static int decode_func(struct rd *r, uint64_t *out, size_t n,
		       uint64_t *const *keys)
{
	uint64_t keycol, np, x;
	const uint64_t *key;
	struct pair *p;
	int ret = -IFT_E_CORRUPT;

	if (!ift_rd_varint_max(r, 255, &keycol) || !keys ||
	    !keys[keycol] || !ift_rd_varint(r, &np) || np == 0 || np > n ||
	    np > ift_rd_left(r) / 2)
		return -IFT_E_CORRUPT;
	key = keys[keycol];
	p = malloc(np * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint64_t k = 0; k < np; k++) {
		if (!ift_rd_varint(r, &x) || (k && !x))
			goto out;
		p[k].key = k ? p[k - 1].key + x : x;
		if (k && p[k].key < p[k - 1].key)
			goto out;	/* wrapped around */
		if (!ift_rd_varint(r, &p[k].val))
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = (size_t)np;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (p[mid].key < key[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == np || p[lo].key != key[i])
			goto out;	/* a key the map does not have */
		out[i] = p[lo].val;
	}
	ret = 0;
out:
	free(p);
	return ret;
}

/*
 * The last value seen per key, for KEYDELTA, where a key is past
 * SMALL_KEYS (their number is not known up front): the keys interned
 * (util/intern.h), each one's value by its number.  Zeroed is empty.
 */
struct lastmap {
	struct ift_intern keys;
	uint64_t *val;
	size_t cap;
};

static void lastmap_release(struct lastmap *m)
{
	ift_intern_release(&m->keys);
	free(m->val);
}

/* The value of KEY, 0 when new; NULL on ENOMEM. */
static uint64_t *lastmap_slot(struct lastmap *m, uint64_t key)
{
	int64_t i = ift_intern(&m->keys, &key, sizeof(key), true);

	if (i < 0 || ift_array_grow((void **)&m->val, &m->cap, (size_t)i + 1, sizeof(*m->val)) < 0)
		return NULL;
	return &m->val[i];
}

/* Keys that index an array directly: CPU numbers, the common case. */
#define SMALL_KEYS	1024

bool ift_col_encode_keydelta(struct buf *out, const uint64_t *v, const uint64_t *key,
			 unsigned keycol, size_t n, size_t limit, bool planes)
{
	uint64_t small[SMALL_KEYS];
	struct lastmap m = { 0 };
	size_t len = varint_size(keycol);
	uint64_t maxkey = 0, minkey = UINT64_MAX, maxz = 0;
	unsigned width = 1;
	uint8_t *p;
	bool ok = false, direct;

	for (size_t i = 0; i < n; i++) {
		if (key[i] > maxkey)
			maxkey = key[i];
		if (key[i] < minkey)
			minkey = key[i];
	}
	if (minkey == maxkey)
		return false;	/* one key: plain deltas say the same */
	direct = maxkey < SMALL_KEYS;
	if (direct)
		memset(small, 0, ((size_t)maxkey + 1) * sizeof(*small));
	for (size_t i = 0; i < n; i++) {
		uint64_t *last = direct ? &small[key[i]] : lastmap_slot(&m, key[i]);

		if (!last)
			goto out;
		uint64_t z = zigzag((int64_t)(v[i] - *last));

		len += varint_size(z);
		if (z > maxz)
			maxz = z;
		*last = v[i];
		if (len >= limit)
			goto out;	/* no better than what we have */
	}
	lastmap_release(&m);
	memset(&m, 0, sizeof(m));
	if (direct)
		memset(small, 0, ((size_t)maxkey + 1) * sizeof(*small));
	if (planes) {
		while (width < 8 && maxz >> (8 * width))
			width++;
		len = varint_size(keycol) + 1 + width * n;
	}
	ift_buf_u8(out, planes ? IFT_ENC_KEYDELTA_PLANES : IFT_ENC_KEYDELTA);
	ift_buf_varint(out, len);
	if (!ift_buf_reserve(out, len))
		goto out;
	p = put_varint(out->data + out->len, keycol);
	if (planes)
		*p++ = (uint8_t)width;
	for (size_t i = 0; i < n; i++) {
		uint64_t *last = direct ? &small[key[i]] : lastmap_slot(&m, key[i]);
		uint64_t z;

		if (!last)
			goto out;
		z = zigzag((int64_t)(v[i] - *last));
		*last = v[i];
		if (!planes) {
			p = put_varint(p, z);
			continue;
		}
		/* byte k of every row's delta in plane k */
		for (unsigned k = 0; k < width; k++)
			p[k * n + i] = (uint8_t)(z >> (8 * k));
	}
	if (planes)
		p += width * n;
	out->len = (size_t)(p - out->data);
	ok = true;
out:
	lastmap_release(&m);
	return ok;
}

static int decode_keydelta(struct rd *r, uint64_t *out, size_t n,
			   uint64_t *const *keys, bool planes)
{
	uint64_t small[SMALL_KEYS], keycol, maxkey = 0;
	struct lastmap m = { 0 };
	const uint64_t *key;
	const uint8_t *plane = NULL;
	int ret = -IFT_E_CORRUPT;
	uint8_t width = 0;
	bool direct;

	if (!ift_rd_varint_max(r, 255, &keycol) || !keys || !keys[keycol])
		return -IFT_E_CORRUPT;
	if (planes) {
		if (!ift_rd_u8(r, &width) || width < 1 || width > 8 || ift_rd_left(r) != width * n)
			return -IFT_E_CORRUPT;
		plane = r->p;
		r->p += width * n;
	}
	key = keys[keycol];
	for (size_t i = 0; i < n; i++)
		if (key[i] > maxkey)
			maxkey = key[i];
	direct = maxkey < SMALL_KEYS;
	if (direct)
		memset(small, 0, ((size_t)maxkey + 1) * sizeof(*small));
	for (size_t i = 0; i < n; i++) {
		uint64_t *last = direct ? &small[key[i]] : lastmap_slot(&m, key[i]);
		int64_t d;

		if (!last) {
			ret = -ENOMEM;
			goto out;
		}
		if (planes) {
			uint64_t z = 0;

			for (unsigned k = 0; k < width; k++)
				z |= (uint64_t)plane[k * n + i] << (8 * k);
			d = unzigzag(z);
		} else if (!ift_rd_svarint(r, &d)) {
			goto out;
		}
		*last += (uint64_t)d;
		out[i] = *last;
	}
	ret = 0;
out:
	lastmap_release(&m);
	return ret;
}

int ift_col_decode(unsigned enc, const uint8_t *p, size_t len, uint64_t *out,
	       size_t n)
{
	return ift_col_decode_keyed(enc, p, len, out, n, NULL);
}

int ift_col_decode_keyed(unsigned enc, const uint8_t *p, size_t len, uint64_t *out,
		     size_t n, uint64_t *const *keys)
{
	struct rd r;
	uint64_t x;
	int64_t s;

	ift_rd_init(&r, p, len);
	switch (enc) {
	case IFT_ENC_CONST:
		if (!ift_rd_varint(&r, &x))
			return -IFT_E_CORRUPT;
		for (size_t i = 0; i < n; i++)
			out[i] = x;
		break;
	case IFT_ENC_PLAIN:
		for (size_t i = 0; i < n; i++)
			if (!ift_rd_varint(&r, &out[i]))
				return -IFT_E_CORRUPT;
		break;
	case IFT_ENC_ZIGZAG:
		for (size_t i = 0; i < n; i++) {
			if (!ift_rd_svarint(&r, &s))
				return -IFT_E_CORRUPT;
			out[i] = (uint64_t)s;
		}
		break;
	case IFT_ENC_DELTA:
		if (!ift_rd_varint(&r, &x))
			return -IFT_E_CORRUPT;
		out[0] = x;
		for (size_t i = 1; i < n; i++) {
			if (!ift_rd_svarint(&r, &s))
				return -IFT_E_CORRUPT;
			out[i] = out[i - 1] + (uint64_t)s;
		}
		break;
	case IFT_ENC_DICT: {
		uint64_t nd, *d;
		uint8_t w;

		if (!ift_rd_varint(&r, &nd) || nd == 0 || nd > n)
			return -IFT_E_CORRUPT;
		/* each distinct value takes at least one byte */
		if (nd > ift_rd_left(&r))
			return -IFT_E_CORRUPT;
		d = malloc(nd * sizeof(*d));
		if (!d)
			return -ENOMEM;
		for (uint64_t k = 0; k < nd; k++) {
			if (!ift_rd_varint(&r, &x) || (k && !x)) {
				free(d);
				return -IFT_E_CORRUPT;
			}
			d[k] = k ? d[k - 1] + x : x;
		}
		if (!ift_rd_u8(&r, &w) || (w != 1 && w != 2 && w != 4) ||
		    ift_rd_left(&r) != n * w) {
			free(d);
			return -IFT_E_CORRUPT;
		}
		for (size_t i = 0; i < n; i++, r.p += w) {
			uint32_t ix = w == 1 ? r.p[0] : w == 2 ? ift_le16(r.p) : ift_le32(r.p);

			if (ix >= nd) {
				free(d);
				return -IFT_E_CORRUPT;
			}
			out[i] = d[ix];
		}
		free(d);
		break;
	}
	case IFT_ENC_FUNC: {
		int ret = decode_func(&r, out, n, keys);

		if (ret < 0)
			return ret;
		break;
	}
	case IFT_ENC_KEYDELTA:
	case IFT_ENC_KEYDELTA_PLANES: {
		int ret = decode_keydelta(&r, out, n, keys, enc == IFT_ENC_KEYDELTA_PLANES);

		if (ret < 0)
			return ret;
		break;
	}
	default:
		return -IFT_E_CORRUPT;
	}
	return ift_rd_left(&r) ? -IFT_E_CORRUPT : 0;
}
