// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util/intern.c, the interned strings under the trace
 * writer's string table and the Parquet dictionaries.  The truth is a plain
 * list searched from its start.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/intern.h"

static void test_empty(void **state)
{
	struct ift_intern t;

	(void)state;
	ift_intern_init(&t);
	assert_int_equal(ift_intern_count(&t), 0);
	assert_int_equal(ift_intern(&t, "x", 1, false), -ENOENT);
	assert_int_equal(ift_intern_count(&t), 0);
	ift_intern_release(&t);
	ift_intern_release(&t);	/* twice is harmless */
}

/* Numbers in the order of first addition; the same bytes, the same number;
   bytes are compared whole (NULs inside, a prefix is another string). */
static void test_numbers(void **state)
{
	static const struct { const char *p; size_t n; int64_t want; } v[] = {
		{ "cpu.busy_permille", 17, 0 }, { "cpu", 3, 1 }, { "", 0, 2 },
		{ "cpu.busy_permille", 17, 0 }, { "a\0b", 3, 3 }, { "a\0c", 3, 4 },
		{ "a", 1, 5 }, { "", 0, 2 }, { "cpu", 3, 1 },
	};
	struct ift_intern t;
	size_t n;

	(void)state;
	ift_intern_init(&t);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(ift_intern(&t, v[i].p, v[i].n, true), v[i].want);
	assert_int_equal(ift_intern_count(&t), 6);
	assert_int_equal(ift_intern_bytes(&t), 17 + 3 + 0 + 3 + 3 + 1);
	assert_string_equal(ift_intern_get(&t, 0, &n), "cpu.busy_permille");
	assert_int_equal(n, 17);
	assert_memory_equal(ift_intern_get(&t, 4, &n), "a\0c", 4);	/* and its NUL */
	assert_int_equal(n, 3);
	assert_string_equal(ift_intern_get(&t, 2, &n), "");
	assert_int_equal(n, 0);
	/* looking up adds nothing */
	assert_int_equal(ift_intern(&t, "b", 1, false), -ENOENT);
	assert_int_equal(ift_intern(&t, "a", 1, false), 5);
	assert_int_equal(ift_intern_count(&t), 6);
	ift_intern_release(&t);
}

/* 20,000 strings, each added twice in a shuffled order: the numbers are
   the order of first addition, across the table's growth. */
static void test_many(void **state)
{
	enum { N = 20000 };
	struct ift_intern t;
	int64_t *first = malloc(N * sizeof(*first));
	int64_t next = 0;
	char s[32];

	(void)state;
	assert_non_null(first);
	ift_intern_init(&t);
	for (size_t i = 0; i < N; i++)
		first[i] = -1;
	for (size_t k = 0; k < 2 * N; k++) {
		size_t i = (k * 7919) % N;	/* 7919 is prime to N */
		int64_t got;

		snprintf(s, sizeof(s), "sym_%zu", i);
		got = ift_intern(&t, s, strlen(s), true);
		if (first[i] < 0)
			first[i] = next++;
		assert_int_equal(got, first[i]);
	}
	assert_int_equal(ift_intern_count(&t), N);
	for (size_t i = 0; i < N; i++) {
		snprintf(s, sizeof(s), "sym_%zu", i);
		assert_string_equal(ift_intern_get(&t, (size_t)first[i], NULL), s);
	}
	ift_intern_release(&t);
	free(first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}
