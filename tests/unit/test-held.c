// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util/held.c, the rows held until a watermark that the
 * profile's rows (stack/profile.c) and NVML's (gpu/sampler.c) go through:
 * handed on sorted, none at or past the watermark, a late one dropped and
 * counted, the rows after a failed hand-on kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/held.h"

struct row {
	uint32_t key;
	uint64_t ts;
};

static int by_ts(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

struct out {
	struct row v[32];
	size_t n, fail_at;	/* emit fails on its FAIL_AT-th row (1-based) */
};

static int emit(void *ctx, const void *r)
{
	struct out *o = ctx;

	if (o->n + 1 == o->fail_at)
		return -EIO;
	o->v[o->n++] = *(const struct row *)r;
	return 0;
}

static struct ift_held held(void)
{
	return (struct ift_held){ .size = sizeof(struct row), .cmp = by_ts,
				  .ts_off = offsetof(struct row, ts) };
}

static void add(struct ift_held *h, uint32_t key, uint64_t ts)
{
	struct row r = { key, ts };

	assert_int_equal(ift_held_add(h, &r), 0);
}

static void test_order(void **state)
{
	struct ift_held h = held();
	struct out o = { .n = 0 };

	(void)state;
	add(&h, 2, 30);
	add(&h, 1, 10);
	add(&h, 9, 30);
	add(&h, 3, 50);
	/* below 40: 10, then the two of 30 by key; 50 waits */
	assert_int_equal(ift_held_release(&h, 40, emit, &o), 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.v[0].ts, 10);
	assert_int_equal(o.v[1].key, 2);
	assert_int_equal(o.v[2].key, 9);
	assert_int_equal(h.n, 1);
	/* one older than the last handed on: dropped and counted */
	add(&h, 4, 20);
	add(&h, 5, 45);
	assert_int_equal(ift_held_release(&h, UINT64_MAX, emit, &o), 0);
	assert_int_equal(h.late, 1);
	assert_int_equal(o.n, 5);
	assert_int_equal(o.v[3].ts, 45);
	assert_int_equal(o.v[4].ts, 50);
	assert_int_equal(h.n, 0);
	assert_int_equal(ift_held_release(&h, UINT64_MAX, emit, &o), 0);
	ift_held_free(&h);
	ift_held_free(&h);	/* twice is harmless */
}

/* EMIT failing: its error, that row and the ones after it kept */
static void test_emit_fails(void **state)
{
	struct ift_held h = held();
	struct out o = { .fail_at = 2 };

	(void)state;
	for (uint32_t k = 0; k < 4; k++)
		add(&h, k, 100 - 10 * k);
	assert_int_equal(ift_held_release(&h, UINT64_MAX, emit, &o), -EIO);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.v[0].ts, 70);
	assert_int_equal(h.n, 3);
	o.fail_at = 0;
	assert_int_equal(ift_held_release(&h, UINT64_MAX, emit, &o), 0);
	assert_int_equal(o.n, 4);
	assert_int_equal(o.v[1].ts, 80);
	assert_int_equal(o.v[3].ts, 100);
	assert_int_equal(h.late, 0);
	ift_held_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_emit_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
