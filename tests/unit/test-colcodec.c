// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/trace/colcodec.c: every column encoding round trips, the
 * encoder picks the one the data calls for (so a regression that silently
 * bloats traces shows up here), and ift_col_decode refuses each kind of corrupt
 * block with -IFT_E_CORRUPT instead of reading or writing out of bounds.
 * Output arrays are allocated at exactly N values so that ASan catches an
 * overrun in the sanitizer build.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace/format.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: the same stream on every platform */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static uint64_t *xmalloc_u64(size_t n)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));

	assert_non_null(v);
	return v;
}

/* An encoded block, split as ift_col_encode wrote it. */
struct block {
	struct buf out;
	unsigned enc;
	const uint8_t *p;
	size_t len;
};

static void block_encode(struct block *b, const uint64_t *v, size_t n)
{
	struct buf scratch;
	uint64_t len;
	struct rd r;
	uint8_t enc;

	ift_buf_init(&b->out);
	ift_buf_init(&scratch);
	ift_col_encode(&b->out, v, n, &scratch);
	ift_buf_release(&scratch);
	assert_false(b->out.oom);
	ift_rd_init(&r, b->out.data, b->out.len);
	assert_true(ift_rd_u8(&r, &enc));
	assert_true(ift_rd_varint(&r, &len));
	/* the length it announces is the length it wrote */
	assert_int_equal(len, ift_rd_left(&r));
	b->enc = enc;
	b->p = r.p;
	b->len = (size_t)len;
}

static void block_release(struct block *b)
{
	ift_buf_release(&b->out);
}

/* Encodes, decodes and compares; returns the encoding chosen. */
static unsigned roundtrip(const uint64_t *v, size_t n)
{
	uint64_t *out = xmalloc_u64(n);
	struct block b;
	unsigned enc;

	block_encode(&b, v, n);
	memset(out, 0xa5, n * sizeof(*out));
	assert_int_equal(ift_col_decode(b.enc, b.p, b.len, out, n), 0);
	for (size_t i = 0; i < n; i++)
		if (out[i] != v[i])
			fail_msg("row %zu of %zu: got %#llx, wrote %#llx (encoding %u)",
				 i, n, (unsigned long long)out[i],
				 (unsigned long long)v[i], b.enc);
	enc = b.enc;
	block_release(&b);
	free(out);
	return enc;
}

/* The width byte of a DICT block, found by walking its dictionary. */
static unsigned dict_block_width(const struct block *b, uint64_t *ndistinct)
{
	uint64_t nd, x;
	struct rd r;
	uint8_t w;

	assert_int_equal(b->enc, IFT_ENC_DICT);
	ift_rd_init(&r, b->p, b->len);
	assert_true(ift_rd_varint(&r, &nd));
	for (uint64_t k = 0; k < nd; k++)
		assert_true(ift_rd_varint(&r, &x));
	assert_true(ift_rd_u8(&r, &w));
	*ndistinct = nd;
	return w;
}

static void test_const(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 1ULL << 63, UINT64_MAX };
	uint64_t *v = xmalloc_u64(1000);

	(void)state;
	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		for (size_t i = 0; i < 1000; i++)
			v[i] = vals[k];
		assert_int_equal(roundtrip(v, 1000), IFT_ENC_CONST);
		/* n = 1 is a constant column too */
		assert_int_equal(roundtrip(v, 1), IFT_ENC_CONST);
	}
	free(v);
}

static void test_single_row(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 300, 1ULL << 32, 1ULL << 63, UINT64_MAX - 1,
		UINT64_MAX, (uint64_t)-5,
	};

	(void)state;
	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		struct block b;
		uint64_t out;

		block_encode(&b, &vals[k], 1);
		assert_int_equal(ift_col_decode(b.enc, b.p, b.len, &out, 1), 0);
		assert_true(out == vals[k]);
		/* one row: one varint, nothing more */
		assert_int_equal(b.len, varint_size(vals[k]));
		block_release(&b);
	}
}

static void test_delta_timestamps(void **state)
{
	size_t n = 20000;
	uint64_t *v = xmalloc_u64(n);
	struct block b;

	(void)state;
	rng_state = 1;
	v[0] = 1764000000000000000ULL;
	for (size_t i = 1; i < n; i++)
		v[i] = v[i - 1] + (below(8) ? 100 + below(5000) : 0);
	assert_int_equal(roundtrip(v, n), IFT_ENC_DELTA);
	/* and it is small: the point of choosing it */
	block_encode(&b, v, n);
	assert_true(b.len < n * 3);
	block_release(&b);

	/* decreasing and wrapping deltas are still exact (64-bit wrapping) */
	v[0] = UINT64_MAX - 1000;
	for (size_t i = 1; i < n; i++)
		v[i] = v[i - 1] + 1 + below(200);
	assert_int_equal(roundtrip(v, n), IFT_ENC_DELTA);
	v[0] = 5000000;
	for (size_t i = 1; i < n; i++)
		v[i] = v[i - 1] - below(200);
	assert_int_equal(roundtrip(v, n), IFT_ENC_DELTA);
	free(v);
}

/* ND distinct large ids spread over N rows in random order. */
static void check_dict(size_t nd, size_t n, unsigned want_width)
{
	uint64_t *v = xmalloc_u64(n), got_nd;
	struct block b;

	for (size_t i = 0; i < n; i++) {
		/* every id appears at least once, then at random */
		uint64_t k = i < nd ? i : below(nd);

		/*
		 * 2^32 apart: neighbours in random order differ by far more
		 * than the dictionary's own deltas, so DELTA cannot win.
		 */
		v[i] = 0x7f0000000000ULL + (k << 32);
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)below(i + 1);
		uint64_t x = v[i];

		v[i] = v[j];
		v[j] = x;
	}
	assert_int_equal(roundtrip(v, n), IFT_ENC_DICT);
	block_encode(&b, v, n);
	assert_int_equal(dict_block_width(&b, &got_nd), want_width);
	assert_int_equal(got_nd, nd);
	block_release(&b);
	free(v);
}

static void test_dict_widths(void **state)
{
	(void)state;
	rng_state = 2;
	check_dict(2, 64, 1);
	check_dict(40, 4096, 1);
	check_dict(256, 2048, 1);	/* indexes 0..255 still fit a byte */
	check_dict(257, 2048, 2);
	check_dict(300, 4000, 2);
	check_dict(65536, 65536 * 4, 2);
	check_dict(65537, 65537 * 4, 4);
	check_dict(70000, 300000, 4);
}

static void test_dict_extremes(void **state)
{
	size_t n = 4096;
	uint64_t *v = xmalloc_u64(n);

	(void)state;
	rng_state = 3;
	/*
	 * 0 and 2^64 - 1 are neighbours in wrapping arithmetic: every delta is
	 * +-1, one byte, which beats a dictionary's byte per row plus header.
	 */
	for (size_t i = 0; i < n; i++)
		v[i] = below(2) ? 0 : UINT64_MAX;
	assert_int_equal(roundtrip(v, n), IFT_ENC_DELTA);
	/* the dictionary spans the whole u64 range: deltas near 2^63 */
	for (size_t i = 0; i < n; i++)
		v[i] = below(3) == 0 ? 0 : below(2) ? 1ULL << 63 : UINT64_MAX;
	assert_int_equal(roundtrip(v, n), IFT_ENC_DICT);
	for (size_t i = 0; i < n; i++) {
		static const uint64_t pick[] = {
			0, 1, 1ULL << 63, UINT64_MAX, UINT64_MAX - 1,
			(uint64_t)INT64_MAX,
		};
		v[i] = pick[below(6)];
	}
	assert_int_equal(roundtrip(v, n), IFT_ENC_DICT);
	free(v);
}

static void test_zigzag_negatives(void **state)
{
	size_t n = 1000;
	uint64_t *v = xmalloc_u64(n);

	(void)state;
	rng_state = 4;
	for (size_t i = 0; i < n; i++)
		v[i] = (uint64_t)-(int64_t)(1 + below(50));
	assert_int_equal(roundtrip(v, n), IFT_ENC_ZIGZAG);
	/* small values of both signs, as return codes are */
	for (size_t i = 0; i < n; i++)
		v[i] = (uint64_t)((int64_t)below(101) - 50);
	assert_int_equal(roundtrip(v, n), IFT_ENC_ZIGZAG);
	free(v);
}

static void test_plain_random(void **state)
{
	size_t n = 5000;
	uint64_t *v = xmalloc_u64(n);
	unsigned enc;

	(void)state;
	rng_state = 5;
	/*
	 * Non-negative as i64: zig-zag doubles each value, so PLAIN is the
	 * smallest; no value repeats and neighbours are unrelated.
	 */
	for (size_t i = 0; i < n; i++)
		v[i] = rnd() >> 1;
	assert_int_equal(roundtrip(v, n), IFT_ENC_PLAIN);
	/* the full range: PLAIN and ZIGZAG cost the same on average */
	for (size_t i = 0; i < n; i++)
		v[i] = rnd();
	enc = roundtrip(v, n);
	assert_true(enc == IFT_ENC_PLAIN || enc == IFT_ENC_ZIGZAG);
	free(v);
}

static void test_extreme_values(void **state)
{
	static const uint64_t seqs[][6] = {
		{ 0, UINT64_MAX, 0, UINT64_MAX, 0, UINT64_MAX },
		{ UINT64_MAX, UINT64_MAX - 1, 1ULL << 63, (1ULL << 63) - 1, 1, 0 },
		{ (uint64_t)INT64_MIN, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN,
		  0, 1, 2 },
		{ 0, 0, 0, 0, 0, UINT64_MAX },
		{ UINT64_MAX, 0, 0, 0, 0, 0 },
		{ 127, 128, 16383, 16384, 0, 1 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
		for (size_t n = 1; n <= 6; n++)
			roundtrip(seqs[k], n);
}

/* Random columns of every shape and length: whatever is chosen, it is exact. */
static void test_random_shapes(void **state)
{
	uint64_t *v = xmalloc_u64(700);
	unsigned seen = 0;

	(void)state;
	rng_state = 6;
	for (int iter = 0; iter < 3000; iter++) {
		size_t n = 1 + (size_t)below(iter < 2000 ? 40 : 700);
		unsigned shape = (unsigned)below(6);
		uint64_t base = rnd(), cur = base;

		for (size_t i = 0; i < n; i++) {
			switch (shape) {
			case 0: v[i] = rnd() >> below(64); break;
			case 1: v[i] = base + below(4) * 0x10000000000ULL; break;
			case 2: cur += below(1000); v[i] = cur; break;
			case 3: v[i] = (uint64_t)((int64_t)below(64) - 32); break;
			case 4: v[i] = below(3) ? 0 : UINT64_MAX - below(2); break;
			default: v[i] = below(16) ? base : rnd(); break;
			}
		}
		seen |= 1U << roundtrip(v, n);
	}
	/* the generator did reach every encoding */
	assert_int_equal(seen, 0x1f);
	free(v);
}

/*
 * FUNC: a column that is a function of an earlier one (a tgid of its tid).
 * KEYS is indexed by file column id, as the reader fills it.
 */
static void func_encode(struct block *b, const uint64_t *v, const uint64_t *key,
			unsigned keycol, size_t n)
{
	struct buf scratch;
	uint64_t len;
	struct rd r;
	uint8_t enc;

	ift_buf_init(&b->out);
	ift_buf_init(&scratch);
	assert_true(ift_col_encode_func(&b->out, v, key, keycol, n, &scratch));
	ift_buf_release(&scratch);
	ift_rd_init(&r, b->out.data, b->out.len);
	assert_true(ift_rd_u8(&r, &enc));
	assert_int_equal(enc, IFT_ENC_FUNC);
	assert_true(ift_rd_varint(&r, &len));
	assert_int_equal(len, ift_rd_left(&r));
	b->enc = enc;
	b->p = r.p;
	b->len = (size_t)len;
}

static void test_func_roundtrip(void **state)
{
	static const uint64_t pool_tid[] = { 0, 1, 4242, 4243, 70000, UINT64_MAX };
	static const uint64_t pool_pid[] = { 7, 0, 4242, 4242, UINT64_MAX, 1 };
	size_t n = 3000;
	uint64_t *tid = xmalloc_u64(n), *pid = xmalloc_u64(n);
	uint64_t *out = xmalloc_u64(n);
	uint64_t *keys[256] = { NULL };
	struct block b;

	(void)state;
	rng_state = 9;
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)below(6);

		tid[i] = pool_tid[k];
		pid[i] = pool_pid[k];
	}
	func_encode(&b, pid, tid, IFT_C_TID, n);
	keys[IFT_C_TID] = tid;
	assert_int_equal(ift_col_decode_keyed(b.enc, b.p, b.len, out, n, keys), 0);
	assert_memory_equal(out, pid, n * sizeof(*out));
	/* a map of 6 pairs costs far less than 3000 values */
	assert_true(b.len < 64);
	/* the key column under another id: the block names its own */
	keys[IFT_C_TID] = NULL;
	keys[200] = tid;
	assert_int_equal(ift_col_decode_keyed(b.enc, b.p, b.len, out, n, keys),
			 -IFT_E_CORRUPT);
	block_release(&b);
	func_encode(&b, pid, tid, 200, n);
	memset(out, 0, n * sizeof(*out));
	assert_int_equal(ift_col_decode_keyed(b.enc, b.p, b.len, out, n, keys), 0);
	assert_memory_equal(out, pid, n * sizeof(*out));
	/* without the key column, or through ift_col_decode, it cannot decode */
	assert_int_equal(ift_col_decode(b.enc, b.p, b.len, out, n), -IFT_E_CORRUPT);
	keys[200] = NULL;
	assert_int_equal(ift_col_decode_keyed(b.enc, b.p, b.len, out, n, keys),
			 -IFT_E_CORRUPT);
	keys[200] = tid;
	/* every strict prefix and a trailing byte: corrupt */
	{
		uint8_t *copy = malloc(b.len + 1);

		assert_non_null(copy);
		memcpy(copy, b.p, b.len);
		for (size_t cut = 0; cut < b.len; cut++)
			assert_int_equal(ift_col_decode_keyed(b.enc, copy, cut, out, n,
							  keys), -IFT_E_CORRUPT);
		copy[b.len] = 0;
		assert_int_equal(ift_col_decode_keyed(b.enc, copy, b.len + 1, out, n,
						  keys), -IFT_E_CORRUPT);
		free(copy);
	}
	block_release(&b);

	/* n = 2, the smallest non-constant column */
	func_encode(&b, pool_pid + 4, pool_tid + 4, IFT_C_TID, 2);
	keys[IFT_C_TID] = (uint64_t *)pool_tid + 4;
	assert_int_equal(ift_col_decode_keyed(b.enc, b.p, b.len, out, 2, keys), 0);
	assert_true(out[0] == UINT64_MAX && out[1] == 1);
	block_release(&b);
	free(tid);
	free(pid);
	free(out);
}

/*
 * KEYDELTA (or KEYDELTA_PLANES): timestamps of three interleaved CPU
 * streams, each regular on its own; decoded against the CPU column, exactly;
 * corrupt forms refused.
 */
static void keydelta_case(bool planes)
{
	size_t n = 5000;
	uint64_t *ts = xmalloc_u64(n), *cpu = xmalloc_u64(n), *out = xmalloc_u64(n);
	uint64_t t[3] = { 1000, UINT64_MAX - 5000000, 7 };
	uint64_t *keys[256] = { NULL };
	struct buf b, alt, scratch;
	uint64_t len, col;
	struct rd r;
	uint8_t enc;

	rng_state = 11;
	for (size_t i = 0; i < n; i++) {
		cpu[i] = below(3);
		t[cpu[i]] += 100 + below(3);	/* wraps for CPU 1: 64-bit arithmetic */
		ts[i] = t[cpu[i]];
	}
	ift_buf_init(&b);
	ift_buf_init(&alt);
	ift_buf_init(&scratch);
	ift_col_encode(&alt, ts, n, &scratch);
	/* a limit it cannot meet: refused, nothing written */
	assert_false(ift_col_encode_keydelta(&b, ts, cpu, IFT_C_CPU, n, 10, planes));
	assert_int_equal(b.len, 0);
	/* per-key deltas of ~100 take a byte or two: well below plain deltas */
	assert_true(ift_col_encode_keydelta(&b, ts, cpu, IFT_C_CPU, n, SIZE_MAX, planes));
	ift_rd_init(&r, b.data, b.len);
	assert_true(ift_rd_u8(&r, &enc));
	assert_int_equal(enc, planes ? IFT_ENC_KEYDELTA_PLANES : IFT_ENC_KEYDELTA);
	if (!planes)
		assert_true(b.len < alt.len);
	assert_true(ift_rd_varint(&r, &len));
	assert_int_equal(len, ift_rd_left(&r));
	keys[IFT_C_CPU] = cpu;
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, n, keys), 0);
	assert_memory_equal(out, ts, n * sizeof(*out));
	/* the block names its key column: another id cannot stand in for it */
	{
		struct rd c = r;

		uint8_t width;

		assert_true(ift_rd_varint(&c, &col));
		assert_int_equal(col, IFT_C_CPU);
		if (planes) {
			/* the widest delta is CPU 1's first, its whole value:
			   -5,000,000 or so, in 64-bit wrapping arithmetic,
			   zigzagged under 2^24: 3 bytes */
			assert_true(ift_rd_u8(&c, &width));
			assert_int_equal(width, 3);
			assert_int_equal(ift_rd_left(&c), 3 * n);
		}
	}
	keys[IFT_C_CPU] = NULL;
	keys[7] = cpu;
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, n, keys),
			 -IFT_E_CORRUPT);
	assert_int_equal(ift_col_decode(enc, r.p, (size_t)len, out, n), -IFT_E_CORRUPT);
	keys[IFT_C_CPU] = cpu;
	/* cut short: corrupt; one byte more: corrupt */
	for (size_t cut = 0; cut < len; cut += 97)
		assert_int_equal(ift_col_decode_keyed(enc, r.p, cut, out, n, keys),
				 -IFT_E_CORRUPT);
	{
		uint8_t *copy = malloc((size_t)len + 1);

		assert_non_null(copy);
		memcpy(copy, r.p, (size_t)len);
		copy[len] = 0;
		assert_int_equal(ift_col_decode_keyed(enc, copy, (size_t)len + 1, out, n,
						  keys), -IFT_E_CORRUPT);
		free(copy);
	}
	ift_buf_release(&b);
	ift_buf_release(&alt);
	ift_buf_release(&scratch);
	free(ts);
	free(cpu);
	free(out);
}

static void test_keydelta(void **state)
{
	(void)state;
	keydelta_case(false);
}

static void test_keydelta_planes(void **state)
{
	(void)state;
	keydelta_case(true);
}

/*
 * Keys past the ones that index an array (a CPU number over 1023, or any
 * id): the last value per key is found by lookup, and the bytes are those
 * of the same rows keyed 0, 1, 2; each decodes against its own keys.
 */
static void test_keydelta_large_keys(void **state)
{
	const uint64_t big[3] = { 5000, 1ULL << 40, 2 };
	size_t n = 3000;
	uint64_t *ts = xmalloc_u64(n), *small = xmalloc_u64(n), *large = xmalloc_u64(n);
	uint64_t *out = xmalloc_u64(n), *keys[256] = { NULL }, t[3] = { 10, 20, 30 };

	(void)state;
	rng_state = 5;
	for (size_t i = 0; i < n; i++) {
		small[i] = below(3);
		large[i] = big[small[i]];
		t[small[i]] += 50 + below(5);
		ts[i] = t[small[i]];
	}
	for (int planes = 0; planes < 2; planes++) {
		struct buf a, b;
		struct rd r;
		uint64_t len;
		uint8_t enc;

		ift_buf_init(&a);
		ift_buf_init(&b);
		assert_true(ift_col_encode_keydelta(&a, ts, small, IFT_C_CPU, n, SIZE_MAX, planes));
		assert_true(ift_col_encode_keydelta(&b, ts, large, IFT_C_CPU, n, SIZE_MAX, planes));
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		ift_rd_init(&r, b.data, b.len);
		assert_true(ift_rd_u8(&r, &enc) && ift_rd_varint(&r, &len));
		keys[IFT_C_CPU] = large;
		assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, n, keys), 0);
		assert_memory_equal(out, ts, n * sizeof(*out));
		ift_buf_release(&a);
		ift_buf_release(&b);
	}
	free(ts);
	free(small);
	free(large);
	free(out);
}

/* KEYDELTA_PLANES: a width byte out of 1..8 is corrupt. */
static void test_keydelta_planes_width(void **state)
{
	uint64_t cpu[4] = { 0, 1, 0, 1 }, v[4] = { 10, 20, 13, 25 }, out[4];
	uint64_t *keys[256] = { NULL };
	struct buf b;
	uint64_t len;
	struct rd r;
	uint8_t enc, *p;

	(void)state;
	ift_buf_init(&b);
	assert_true(ift_col_encode_keydelta(&b, v, cpu, IFT_C_CPU, 4, SIZE_MAX, true));
	ift_rd_init(&r, b.data, b.len);
	assert_true(ift_rd_u8(&r, &enc) && ift_rd_varint(&r, &len));
	keys[IFT_C_CPU] = cpu;
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, 4, keys), 0);
	assert_memory_equal(out, v, sizeof(v));
	p = (uint8_t *)r.p + 1;		/* the width, after the key column id */
	assert_int_equal(*p, 1);
	*p = 0;
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, 4, keys),
			 -IFT_E_CORRUPT);
	*p = 9;
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, 4, keys),
			 -IFT_E_CORRUPT);
	*p = 2;		/* planes for 4 rows of 2 bytes: more than there is */
	assert_int_equal(ift_col_decode_keyed(enc, r.p, (size_t)len, out, 4, keys),
			 -IFT_E_CORRUPT);
	ift_buf_release(&b);
}

static void test_func_refused(void **state)
{
	uint64_t key[4] = { 1, 2, 1, 2 }, v[4] = { 5, 6, 5, 7 };
	struct buf out, scratch;

	(void)state;
	ift_buf_init(&out);
	ift_buf_init(&scratch);
	ift_buf_u8(&out, 0xee);
	/* key 2 maps to 6 and 7: not a function */
	assert_false(ift_col_encode_func(&out, v, key, IFT_C_TID, 4, &scratch));
	/* constant: CONST is smaller */
	v[0] = v[1] = v[2] = v[3] = 9;
	assert_false(ift_col_encode_func(&out, v, key, IFT_C_TID, 4, &scratch));
	assert_false(ift_col_encode_func(&out, v, key, IFT_C_TID, 1, &scratch));
	/* and OUT is left as it was */
	assert_int_equal(out.len, 1);
	assert_int_equal(out.data[0], 0xee);
	ift_buf_release(&out);
	ift_buf_release(&scratch);
}

static void expect_func_corrupt(const char *p, size_t len, const uint64_t *key,
				size_t n)
{
	uint64_t *keys[256] = { NULL };
	uint64_t *out = xmalloc_u64(n);

	keys[IFT_C_TID] = (uint64_t *)key;
	assert_int_equal(ift_col_decode_keyed(IFT_ENC_FUNC, (const uint8_t *)p, len,
					  out, n, keys), -IFT_E_CORRUPT);
	free(out);
}

static void test_func_corrupt(void **state)
{
	static const uint64_t key[3] = { 1, 2, 1 };
	uint64_t *keys[256] = { NULL }, out[3];

	(void)state;
	/* well formed: key column 3, pairs (1 -> 10), (2 -> 20) */
	keys[IFT_C_TID] = (uint64_t *)key;
	assert_int_equal(ift_col_decode_keyed(IFT_ENC_FUNC,
					  (const uint8_t *)"\x03\x02\x01\x0a\x01\x14",
					  6, out, 3, keys), 0);
	assert_true(out[0] == 10 && out[1] == 20 && out[2] == 10);
	/* a row's key missing from the map */
	expect_func_corrupt("\x03\x01\x01\x0a", 4, key, 3);
	expect_func_corrupt("\x03\x02\x01\x0a\x02\x14", 6, key, 3);
	/* keys not strictly increasing: a zero delta, a wrap past 2^64 */
	expect_func_corrupt("\x03\x02\x01\x0a\x00\x14", 6, key, 3);
	expect_func_corrupt("\x03\x02\x02\x0a"
			    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x14",
			    15, key, 3);
	/* no pairs; more pairs than rows */
	expect_func_corrupt("\x03\x00", 2, key, 3);
	expect_func_corrupt("\x03\x04\x01\x0a\x01\x14\x01\x1e\x01\x28", 10, key, 3);
	/* a key column that was not decoded, or no such column id */
	expect_func_corrupt("\x04\x02\x01\x0a\x01\x14", 6, key, 3);
	expect_func_corrupt("\x80\x02\x02\x01\x0a\x01\x14", 7, key, 3);
	/* cut inside a pair, trailing byte */
	expect_func_corrupt("\x03\x02\x01\x0a\x01", 5, key, 3);
	expect_func_corrupt("\x03\x02\x01\x0a\x01\x14\x00", 7, key, 3);
	/* a huge pair count must be refused before it is allocated */
	expect_func_corrupt("\x03\xff\xff\xff\xff\x0f\x01\x0a", 8, key, 3);
}

static void expect_corrupt(unsigned enc, const void *p, size_t len, size_t n)
{
	uint64_t *out = xmalloc_u64(n);

	assert_int_equal(ift_col_decode(enc, p, len, out, n), -IFT_E_CORRUPT);
	free(out);
}

static void test_corrupt_encoding(void **state)
{
	static const uint8_t p[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)state;
	expect_corrupt(IFT_ENC_FUNC + 1, p, sizeof(p), 8);
	expect_corrupt(IFT_ENC_FUNC + 2, p, 1, 1);
	expect_corrupt(255, p, sizeof(p), 8);
	expect_corrupt(IFT_ENC_FUNC + 1, NULL, 0, 1);
}

static void test_corrupt_short_and_trailing(void **state)
{
	(void)state;
	/* CONST: nothing, a cut varint, a trailing byte */
	expect_corrupt(IFT_ENC_CONST, "", 0, 4);
	expect_corrupt(IFT_ENC_CONST, "\x80", 1, 4);
	expect_corrupt(IFT_ENC_CONST, "\x05\x00", 2, 4);
	/* PLAIN / ZIGZAG: one value short, one value too many */
	expect_corrupt(IFT_ENC_PLAIN, "\x01\x02", 2, 3);
	expect_corrupt(IFT_ENC_PLAIN, "\x01\x02\x03\x04", 4, 3);
	expect_corrupt(IFT_ENC_PLAIN, "\x01\x02\x83", 3, 3);
	expect_corrupt(IFT_ENC_ZIGZAG, "\x01\x02", 2, 3);
	expect_corrupt(IFT_ENC_ZIGZAG, "\x01\x02\x03\x04", 4, 3);
	/* DELTA: no first value, a missing delta, a trailing one */
	expect_corrupt(IFT_ENC_DELTA, "", 0, 1);
	expect_corrupt(IFT_ENC_DELTA, "\x05\x02", 2, 3);
	expect_corrupt(IFT_ENC_DELTA, "\x05\x02\x02\x02", 4, 3);
	/* an 11-byte varint is corrupt in any encoding */
	{
		uint8_t big[11];

		memset(big, 0x80, sizeof(big));
		big[10] = 0;
		expect_corrupt(IFT_ENC_CONST, big, sizeof(big), 1);
		expect_corrupt(IFT_ENC_PLAIN, big, sizeof(big), 1);
		expect_corrupt(IFT_ENC_ZIGZAG, big, sizeof(big), 1);
		expect_corrupt(IFT_ENC_DELTA, big, sizeof(big), 1);
	}
}

static void test_corrupt_dict(void **state)
{
	(void)state;
	/* ndistinct 0; ndistinct > nrows */
	expect_corrupt(IFT_ENC_DICT, "\x00\x01\x00", 3, 1);
	expect_corrupt(IFT_ENC_DICT, "\x03\x01\x01\x01\x01\x00\x01", 7, 2);
	/* a huge ndistinct must be refused before it is allocated */
	expect_corrupt(IFT_ENC_DICT, "\xff\xff\xff\xff\x0f\x00\x01\x00", 8, 1000);
	expect_corrupt(IFT_ENC_DICT, "\x80\x80\x04\x00", 4, 1 << 20);
	/* dictionary not strictly increasing (a zero delta) */
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x00\x01\x00\x01", 6, 2);
	/* bad widths: 0, 3, 8 */
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x00\x00\x01", 6, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x03\x00\x00\x00\x01\x00\x00", 10, 2);
	expect_corrupt(IFT_ENC_DICT,
		       "\x01\x07\x08\x00\x00\x00\x00\x00\x00\x00\x00", 11, 1);
	/* index out of range, for each width */
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x01\x00\x02", 6, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x01\x00\xff", 6, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x02\x01\x00\x02\x00", 8, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x02\x01\x00\x00\x01", 8, 2);
	expect_corrupt(IFT_ENC_DICT,
		       "\x02\x07\x01\x04\x00\x00\x00\x00\x02\x00\x00\x00", 12, 2);
	expect_corrupt(IFT_ENC_DICT,
		       "\x02\x07\x01\x04\x00\x00\x00\x00\xff\xff\xff\xff", 12, 2);
	/* index bytes: one short, one extra */
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x01\x00", 5, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x01\x00\x01\x01", 7, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01\x02\x00\x00\x01", 7, 2);
	/* the dictionary cut short, and no width byte */
	expect_corrupt(IFT_ENC_DICT, "\x02\x07", 2, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02\x07\x01", 3, 2);
	expect_corrupt(IFT_ENC_DICT, "\x02", 1, 2);
	expect_corrupt(IFT_ENC_DICT, "", 0, 2);

	/* and the well-formed neighbours of those decode */
	{
		uint64_t out[2];

		assert_int_equal(ift_col_decode(IFT_ENC_DICT,
					    (const uint8_t *)"\x02\x07\x01\x01\x01\x00",
					    6, out, 2), 0);
		assert_true(out[0] == 8 && out[1] == 7);
		assert_int_equal(ift_col_decode(IFT_ENC_DICT, (const uint8_t *)
					    "\x02\x07\x01\x04\x01\x00\x00\x00"
					    "\x00\x00\x00\x00", 12, out, 2), 0);
		assert_true(out[0] == 8 && out[1] == 7);
	}
}

/*
 * Every strict prefix of a valid block lacks values and every block with a
 * byte appended has trailing bytes: all must be refused.
 */
static void test_corrupt_cut_and_extended(void **state)
{
	uint64_t *v = xmalloc_u64(300);
	unsigned seen = 0;

	(void)state;
	rng_state = 7;
	for (int iter = 0; iter < 200; iter++) {
		size_t n = 1 + (size_t)below(300);
		unsigned shape = (unsigned)iter % 5;
		uint64_t base = 1ULL << 50;
		struct block b;
		uint8_t *copy;

		for (size_t i = 0; i < n; i++) {
			switch (shape) {
			case 0: v[i] = 12345; break;
			case 1: v[i] = rnd() >> 2; break;
			case 2: base += below(100); v[i] = base; break;
			case 3: v[i] = base + below(3) * 0x100000000ULL; break;
			default: v[i] = (uint64_t)((int64_t)below(9) - 4); break;
			}
		}
		block_encode(&b, v, n);
		seen |= 1U << b.enc;
		copy = malloc(b.len + 1);
		assert_non_null(copy);
		memcpy(copy, b.p, b.len);
		for (size_t cut = 0; cut < b.len; cut++)
			expect_corrupt(b.enc, copy, cut, n);
		copy[b.len] = 0;
		expect_corrupt(b.enc, copy, b.len + 1, n);
		free(copy);
		block_release(&b);
	}
	assert_int_equal(seen, 0x1f);
	free(v);
}

/* Garbage in any encoding: 0 or -IFT_E_CORRUPT, and no access out of bounds. */
static void test_garbage(void **state)
{
	uint8_t p[64];

	(void)state;
	rng_state = 8;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)below(sizeof(p) + 1), n = 1 + (size_t)below(40);
		unsigned enc = (unsigned)below(IFT_ENC_FUNC + 2);
		uint8_t *copy = malloc(len ? len : 1);
		uint64_t *out = xmalloc_u64(n);
		int ret;

		for (size_t i = 0; i < len; i++)
			p[i] = (uint8_t)(below(3) ? below(4) : rnd());
		memcpy(copy, p, len);
		ret = ift_col_decode(enc, copy, len, out, n);
		assert_true(ret == 0 || ret == -IFT_E_CORRUPT);
		free(out);
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_const),
		cmocka_unit_test(test_single_row),
		cmocka_unit_test(test_delta_timestamps),
		cmocka_unit_test(test_dict_widths),
		cmocka_unit_test(test_dict_extremes),
		cmocka_unit_test(test_zigzag_negatives),
		cmocka_unit_test(test_plain_random),
		cmocka_unit_test(test_extreme_values),
		cmocka_unit_test(test_random_shapes),
		cmocka_unit_test(test_func_roundtrip),
		cmocka_unit_test(test_func_refused),
		cmocka_unit_test(test_keydelta),
		cmocka_unit_test(test_keydelta_planes),
		cmocka_unit_test(test_keydelta_large_keys),
		cmocka_unit_test(test_keydelta_planes_width),
		cmocka_unit_test(test_func_corrupt),
		cmocka_unit_test(test_corrupt_encoding),
		cmocka_unit_test(test_corrupt_short_and_trailing),
		cmocka_unit_test(test_corrupt_dict),
		cmocka_unit_test(test_corrupt_cut_and_extended),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests_name("colcodec", tests, NULL, NULL);
}
