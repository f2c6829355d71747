// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util/tidmap.c, the tid -> index map under the
 * decoder's task table, the trace's task records and the analyzer's
 * threads.  The truth is a plain array searched from its end (the latest
 * index of a tid wins, as for a reused tid).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/tidmap.h"

static void test_empty(void **state)
{
	struct ift_tidmap m;
	size_t idx = 7;

	(void)state;
	ift_tidmap_init(&m);
	assert_false(ift_tidmap_get(&m, 0, &idx));
	assert_false(ift_tidmap_get(&m, 1234, &idx));
	assert_int_equal(idx, 7);
	ift_tidmap_release(&m);
	ift_tidmap_release(&m);	/* twice is harmless */
}

/*
 * Many tids, among them ones that collide (the same low bits after the
 * multiply: multiples of the table size), tid 0 (the idle task) and the
 * largest; each set once, through several growths.
 */
static void test_many(void **state)
{
	enum { N = 20000 };
	struct ift_tidmap m;
	uint32_t *tid = malloc(N * sizeof(*tid));
	size_t idx;

	(void)state;
	assert_non_null(tid);
	ift_tidmap_init(&m);
	for (size_t i = 0; i < N; i++) {
		tid[i] = i % 3 ? (uint32_t)(i * 7919) : (uint32_t)(i * 4096);
		if (i == 1)
			tid[i] = UINT32_MAX;
		assert_int_equal(ift_tidmap_set(&m, tid[i], i), 0);
	}
	assert_int_equal(m.n, N);
	assert_true(m.nslot >= 2 * N);
	for (size_t i = 0; i < N; i++) {
		assert_true(ift_tidmap_get(&m, tid[i], &idx));
		assert_int_equal(idx, i);
	}
	assert_false(ift_tidmap_get(&m, 3, &idx));
	ift_tidmap_release(&m);
	free(tid);
}

/* A tid set again maps to the latest index, and counts once. */
static void test_reused_tid(void **state)
{
	struct ift_tidmap m;
	size_t idx;

	(void)state;
	ift_tidmap_init(&m);
	assert_int_equal(ift_tidmap_set(&m, 100, 0), 0);
	assert_int_equal(ift_tidmap_set(&m, 200, 1), 0);
	assert_int_equal(ift_tidmap_set(&m, 100, 2), 0);
	assert_int_equal(m.n, 2);
	assert_true(ift_tidmap_get(&m, 100, &idx));
	assert_int_equal(idx, 2);
	/* and still after the table grew under it */
	for (uint32_t t = 1000; t < 2000; t++)
		assert_int_equal(ift_tidmap_set(&m, t, t), 0);
	assert_true(ift_tidmap_get(&m, 100, &idx));
	assert_int_equal(idx, 2);
	assert_true(ift_tidmap_get(&m, 200, &idx));
	assert_int_equal(idx, 1);
	ift_tidmap_release(&m);
}

/* An index the slot cannot hold is refused, the map unchanged. */
static void test_index_limit(void **state)
{
	struct ift_tidmap m;
	size_t idx;

	(void)state;
	ift_tidmap_init(&m);
	assert_int_equal(ift_tidmap_set(&m, 5, (size_t)UINT32_MAX - 1), 0);
	assert_true(ift_tidmap_get(&m, 5, &idx));
	assert_int_equal(idx, (size_t)UINT32_MAX - 1);
	assert_int_equal(ift_tidmap_set(&m, 6, UINT32_MAX), -EOVERFLOW);
	assert_false(ift_tidmap_get(&m, 6, &idx));
	assert_int_equal(m.n, 1);
	ift_tidmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_reused_tid),
		cmocka_unit_test(test_index_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
