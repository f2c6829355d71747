// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util/buf.c: the varint, svarint and zig-zag encodings of
 * docs/trace-format.md and the bounds-checked read cursor.  Every reader of
 * the trace file stands on ift_rd_varint() and ift_rd_str(), so a value they accept
 * that the spec calls corrupt, or a read past the end, matters everywhere.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"
#include "util/span.h"

static const uint64_t edge_u64[] = {
	0, 1, 126, 127, 128, 129, 255, 256, 16383, 16384, 16385,
	(1ULL << 21) - 1, 1ULL << 21, (1ULL << 28) - 1, 1ULL << 28,
	(1ULL << 35) - 1, 1ULL << 35, (1ULL << 42) - 1, 1ULL << 42,
	(1ULL << 49) - 1, 1ULL << 49, (1ULL << 56) - 1, 1ULL << 56,
	(1ULL << 62) - 1, 1ULL << 62, (1ULL << 63) - 1, 1ULL << 63,
	(1ULL << 63) + 1, UINT64_MAX - 1, UINT64_MAX,
};

static const int64_t edge_i64[] = {
	0, 1, -1, 63, -64, 64, -65, 127, -128, INT32_MAX, INT32_MIN,
	INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The number of bytes LEB128 needs, worked out independently of varint_size. */
static size_t leb_len(uint64_t v)
{
	size_t bits = 64;

	while (bits > 1 && !(v >> (bits - 1)))
		bits--;
	return (bits + 6) / 7;
}

static void test_varint_roundtrip(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(edge_u64); i++) {
		uint64_t v = edge_u64[i], got = ~v;
		struct buf b;
		struct rd r;

		ift_buf_init(&b);
		ift_buf_varint(&b, v);
		assert_false(b.oom);
		assert_int_equal(b.len, leb_len(v));
		assert_int_equal(varint_size(v), b.len);
		/* high bit on every byte but the last */
		for (size_t k = 0; k + 1 < b.len; k++)
			assert_true(b.data[k] & 0x80);
		assert_false(b.data[b.len - 1] & 0x80);

		ift_rd_init(&r, b.data, b.len);
		assert_true(ift_rd_varint(&r, &got));
		assert_true(got == v);
		assert_int_equal(ift_rd_left(&r), 0);
		ift_buf_release(&b);
	}
}

static void test_varint_known_bytes(void **state)
{
	struct buf b;

	(void)state;
	ift_buf_init(&b);
	ift_buf_varint(&b, 0);
	ift_buf_varint(&b, 127);
	ift_buf_varint(&b, 128);
	ift_buf_varint(&b, 300);
	ift_buf_varint(&b, UINT64_MAX);
	{
		static const uint8_t want[] = {
			0x00, 0x7f, 0x80, 0x01, 0xac, 0x02,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		};

		assert_int_equal(b.len, sizeof(want));
		assert_memory_equal(b.data, want, sizeof(want));
	}
	ift_buf_release(&b);
}

static void test_zigzag_edges(void **state)
{
	(void)state;
	/* the mapping itself, from the spec: (v << 1) ^ (v >> 63) */
	assert_true(zigzag(0) == 0);
	assert_true(zigzag(-1) == 1);
	assert_true(zigzag(1) == 2);
	assert_true(zigzag(-2) == 3);
	assert_true(zigzag(INT64_MAX) == UINT64_MAX - 1);
	assert_true(zigzag(INT64_MIN) == UINT64_MAX);
	for (size_t i = 0; i < ARRAY_SIZE(edge_i64); i++)
		assert_true(unzigzag(zigzag(edge_i64[i])) == edge_i64[i]);
	for (size_t i = 0; i < ARRAY_SIZE(edge_u64); i++)
		assert_true(zigzag(unzigzag(edge_u64[i])) == edge_u64[i]);
}

static void test_svarint_roundtrip(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(edge_i64); i++) {
		int64_t v = edge_i64[i], got = ~v;
		struct buf b;
		struct rd r;

		ift_buf_init(&b);
		ift_buf_svarint(&b, v);
		assert_int_equal(b.len, leb_len(zigzag(v)));
		ift_rd_init(&r, b.data, b.len);
		assert_true(ift_rd_svarint(&r, &got));
		assert_true(got == v);
		assert_int_equal(ift_rd_left(&r), 0);
		ift_buf_release(&b);
	}
	/* small magnitudes stay one byte whatever the sign: why ZIGZAG exists */
	for (int64_t v = -64; v < 64; v++) {
		struct buf b;

		ift_buf_init(&b);
		ift_buf_svarint(&b, v);
		assert_int_equal(b.len, 1);
		ift_buf_release(&b);
	}
}

/* Many values back to back: each read must stop exactly at its own end. */
static void test_varint_sequence(void **state)
{
	struct buf b;
	struct rd r;

	(void)state;
	ift_buf_init(&b);
	for (size_t i = 0; i < ARRAY_SIZE(edge_u64); i++) {
		ift_buf_varint(&b, edge_u64[i]);
		ift_buf_svarint(&b, (int64_t)edge_u64[i]);
	}
	ift_rd_init(&r, b.data, b.len);
	for (size_t i = 0; i < ARRAY_SIZE(edge_u64); i++) {
		uint64_t u;
		int64_t s;

		assert_true(ift_rd_varint(&r, &u));
		assert_true(u == edge_u64[i]);
		assert_true(ift_rd_svarint(&r, &s));
		assert_true((uint64_t)s == edge_u64[i]);
	}
	assert_int_equal(ift_rd_left(&r), 0);
	ift_buf_release(&b);
}

static void expect_bad_varint(const uint8_t *p, size_t n)
{
	uint64_t v = 0x1234;
	int64_t s = 0x1234;
	struct rd r;

	ift_rd_init(&r, p, n);
	assert_false(ift_rd_varint(&r, &v));
	/* a failed read neither moves the cursor nor stores a value */
	assert_ptr_equal(r.p, p);
	assert_true(v == 0x1234);
	assert_false(ift_rd_svarint(&r, &s));
	assert_ptr_equal(r.p, p);
	assert_false(ift_rd_varint_max(&r, UINT64_MAX, &v));
}

static void test_varint_overlong(void **state)
{
	uint8_t p[16];

	(void)state;
	/* 11 bytes: longer than any 64-bit value needs */
	memset(p, 0x80, sizeof(p));
	p[10] = 0x00;
	expect_bad_varint(p, 11);
	p[10] = 0x01;
	expect_bad_varint(p, 11);
	memset(p, 0xff, sizeof(p));
	p[10] = 0x01;
	expect_bad_varint(p, 11);
	expect_bad_varint(p, sizeof(p));

	/* 10 bytes whose last one carries more than the top bit: > 2^64 - 1 */
	memset(p, 0xff, sizeof(p));
	p[9] = 0x02;
	expect_bad_varint(p, 10);
	p[9] = 0x7f;
	expect_bad_varint(p, 10);
	memset(p, 0x80, sizeof(p));
	p[9] = 0x02;	/* 2^64 exactly */
	expect_bad_varint(p, 10);
}

static void test_varint_ten_bytes(void **state)
{
	uint8_t p[10];
	uint64_t v;
	struct rd r;

	(void)state;
	/* 2^63: the only bit a 10th byte may carry */
	memset(p, 0x80, sizeof(p));
	p[9] = 0x01;
	ift_rd_init(&r, p, sizeof(p));
	assert_true(ift_rd_varint(&r, &v));
	assert_true(v == 1ULL << 63);
	assert_int_equal(ift_rd_left(&r), 0);

	/* a padded but in-range encoding is at most 10 bytes: the spec allows it */
	memset(p, 0x80, sizeof(p));
	p[0] = 0x85;
	p[9] = 0x00;
	ift_rd_init(&r, p, sizeof(p));
	assert_true(ift_rd_varint(&r, &v));
	assert_true(v == 5);
}

static void test_varint_truncated(void **state)
{
	struct buf b;

	(void)state;
	ift_buf_init(&b);
	for (size_t i = 0; i < ARRAY_SIZE(edge_u64); i++) {
		ift_buf_clear(&b);
		ift_buf_varint(&b, edge_u64[i]);
		/* every proper prefix ends on a byte with the continuation bit */
		for (size_t n = 0; n < b.len; n++)
			expect_bad_varint(b.data, n);
	}
	ift_buf_release(&b);
}

static void test_varint_max(void **state)
{
	struct buf b;
	struct rd r;
	uint64_t v;

	(void)state;
	ift_buf_init(&b);
	ift_buf_varint(&b, 1000);
	ift_rd_init(&r, b.data, b.len);
	assert_true(ift_rd_varint_max(&r, 1000, &v));
	assert_true(v == 1000);
	ift_rd_init(&r, b.data, b.len);
	assert_false(ift_rd_varint_max(&r, 999, &v));
	ift_rd_init(&r, b.data, b.len);
	assert_false(ift_rd_varint_max(&r, 0, &v));
	ift_buf_release(&b);
}

static void test_rd_str_bounds(void **state)
{
	static const char text[] = "a\0b";	/* a NUL inside is allowed */
	const uint8_t *s;
	struct buf b;
	struct rd r;
	size_t len;

	(void)state;
	ift_buf_init(&b);
	ift_buf_bytes(&b, text, 3);
	ift_buf_str(&b, "");
	ift_buf_str(&b, NULL);
	ift_buf_str(&b, "xyz");
	ift_rd_init(&r, b.data, b.len);
	assert_true(ift_rd_str(&r, &s, &len));
	assert_int_equal(len, 3);
	assert_memory_equal(s, text, 3);
	assert_true(ift_rd_str(&r, &s, &len));
	assert_int_equal(len, 0);
	assert_true(ift_rd_str(&r, &s, &len));
	assert_int_equal(len, 0);
	assert_true(ift_rd_str(&r, &s, &len));
	assert_int_equal(len, 3);
	assert_memory_equal(s, "xyz", 3);
	assert_int_equal(ift_rd_left(&r), 0);
	assert_false(ift_rd_str(&r, &s, &len));

	/* length exactly the bytes left: fine; one more: refused */
	{
		uint8_t p[4] = { 3, 'a', 'b', 'c' };

		ift_rd_init(&r, p, sizeof(p));
		assert_true(ift_rd_str(&r, &s, &len));
		assert_int_equal(len, 3);
		assert_ptr_equal(s, p + 1);
		p[0] = 4;
		ift_rd_init(&r, p, sizeof(p));
		assert_false(ift_rd_str(&r, &s, &len));
	}
	/* a huge length must not wrap the pointer arithmetic */
	ift_buf_clear(&b);
	ift_buf_varint(&b, UINT64_MAX);
	ift_buf_put(&b, "abc", 3);
	ift_rd_init(&r, b.data, b.len);
	assert_false(ift_rd_str(&r, &s, &len));
	ift_buf_clear(&b);
	ift_buf_varint(&b, (uint64_t)SIZE_MAX - 2);
	ift_buf_put(&b, "abc", 3);
	ift_rd_init(&r, b.data, b.len);
	assert_false(ift_rd_str(&r, &s, &len));
	/* a bad length varint */
	{
		uint8_t p[2] = { 0x83, 0x80 };

		ift_rd_init(&r, p, sizeof(p));
		assert_false(ift_rd_str(&r, &s, &len));
	}
	ift_buf_release(&b);
}

static void test_rd_u8_skip(void **state)
{
	uint8_t p[3] = { 7, 8, 9 }, v;
	struct rd r;

	(void)state;
	ift_rd_init(&r, p, sizeof(p));
	assert_true(ift_rd_u8(&r, &v));
	assert_int_equal(v, 7);
	assert_false(ift_rd_skip(&r, 3));
	assert_int_equal(ift_rd_left(&r), 2);
	assert_true(ift_rd_skip(&r, 2));
	assert_false(ift_rd_u8(&r, &v));
	assert_true(ift_rd_skip(&r, 0));
	assert_false(ift_rd_skip(&r, SIZE_MAX));
}

static void test_fixed_le(void **state)
{
	uint8_t p[8];
	struct buf b;

	(void)state;
	ift_put_le16(p, 0xA1B2);
	assert_int_equal(p[0], 0xB2);
	assert_int_equal(p[1], 0xA1);
	assert_int_equal(ift_le16(p), 0xA1B2);
	ift_put_le32(p, 0x0A0B0C0DU);
	assert_memory_equal(p, "\x0d\x0c\x0b\x0a", 4);
	assert_int_equal(ift_le32(p), 0x0A0B0C0DU);
	ift_put_le64(p, 0x8877665544332211ULL);
	assert_memory_equal(p, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	assert_true(ift_le64(p) == 0x8877665544332211ULL);
	ift_put_le64(p, UINT64_MAX);
	assert_true(ift_le64(p) == UINT64_MAX);

	ift_buf_init(&b);
	ift_buf_le16(&b, 0x0102);
	ift_buf_le32(&b, 0x03040506);
	ift_buf_le64(&b, 0x0708090a0b0c0d0eULL);
	ift_buf_u8(&b, 0xff);
	assert_int_equal(b.len, 15);
	assert_int_equal(ift_le16(b.data), 0x0102);
	assert_int_equal(ift_le32(b.data + 2), 0x03040506);
	assert_true(ift_le64(b.data + 6) == 0x0708090a0b0c0d0eULL);
	assert_int_equal(b.data[14], 0xff);
	ift_buf_release(&b);
}

/* Growth across the first capacity and many doublings keeps every byte. */
static void test_buf_growth(void **state)
{
	struct buf b;

	(void)state;
	ift_buf_init(&b);
	for (unsigned i = 0; i < 100000; i++)
		ift_buf_u8(&b, (uint8_t)(i * 7));
	assert_false(b.oom);
	assert_int_equal(b.len, 100000);
	assert_true(b.cap >= b.len);
	for (unsigned i = 0; i < 100000; i++)
		assert_int_equal(b.data[i], (uint8_t)(i * 7));
	ift_buf_clear(&b);
	assert_int_equal(b.len, 0);
	assert_true(ift_buf_reserve(&b, 1000000));
	assert_true(b.cap >= 1000000);
	ift_buf_put(&b, "x", 0);	/* nothing to add */
	assert_int_equal(b.len, 0);
	ift_buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.cap, 0);
}

/* ift_appendf: cut to fit, NUL-ended, the end saturating at LEN - 1, and
   not a byte past the buffer (the guard bytes after it stay). */
/* util/span.h: N bytes at an address inside a range, and a sum that
   would wrap (the unwinder's stack copy read at a garbage CFA) is not */
static void test_span_holds(void **state)
{
	const uint64_t top = UINT64_MAX - 15;	/* a copy of 16 bytes there */

	(void)state;
	assert_true(ift_span_holds(4096, 16, 4096, 8));
	assert_true(ift_span_holds(4096, 16, 4104, 8));
	assert_false(ift_span_holds(4096, 16, 4105, 8));
	assert_false(ift_span_holds(4096, 16, 4095, 8));
	assert_false(ift_span_holds(4096, 4, 4096, 8));
	assert_true(ift_span_holds(top, 16, top + 8, 8));
	/* addr + 8 wraps to 0, under base + len: it read 8 bytes past the copy */
	assert_false(ift_span_holds(top - 8, 16, UINT64_MAX - 7, 8));
	assert_false(ift_span_holds(4096, 16, UINT64_MAX - 3, 8));
}

static void test_appendf(void **state)
{
	char mem[16 + 4];
	char *b = mem;
	size_t n;

	(void)state;
	memset(mem, 'G', sizeof(mem));
	n = ift_appendf(b, 16, 0, "%s", "abc");
	assert_int_equal(n, 3);
	assert_string_equal(b, "abc");
	n = ift_appendf(b, 16, n, "-%d-", 12345);
	assert_int_equal(n, 10);
	assert_string_equal(b, "abc-12345-");
	n = ift_appendf(b, 16, n, "%s", "0123456789");
	assert_int_equal(n, 15);
	assert_string_equal(b, "abc-12345-01234");
	for (int k = 0; k < 3; k++) {
		n = ift_appendf(b, 16, n, "%s", "more");
		assert_int_equal(n, 15);
	}
	assert_string_equal(b, "abc-12345-01234");
	assert_memory_equal(mem + 16, "GGGG", 4);
	n = ift_appendf(b, 1, 0, "%s", "x");
	assert_int_equal(n, 0);
	assert_int_equal(b[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_roundtrip),
		cmocka_unit_test(test_varint_known_bytes),
		cmocka_unit_test(test_zigzag_edges),
		cmocka_unit_test(test_svarint_roundtrip),
		cmocka_unit_test(test_varint_sequence),
		cmocka_unit_test(test_varint_overlong),
		cmocka_unit_test(test_varint_ten_bytes),
		cmocka_unit_test(test_varint_truncated),
		cmocka_unit_test(test_varint_max),
		cmocka_unit_test(test_rd_str_bounds),
		cmocka_unit_test(test_rd_u8_skip),
		cmocka_unit_test(test_fixed_le),
		cmocka_unit_test(test_buf_growth),
		cmocka_unit_test(test_appendf),
		cmocka_unit_test(test_span_holds),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
