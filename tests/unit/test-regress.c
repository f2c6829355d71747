// SPDX-License-Identifier: MIT
/*
 * Every input the fuzzer found a bug with (tests/fuzz/crashes/), replayed
 * through the reader as any command would use it: open (index and scan),
 * load every chunk, walk a cursor.  Each must give a clean result or a clean
 * error; under ASan+UBSan the build catches what the bug was.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ift-trace.h"

#define CRASHES "tests/fuzz/crashes"

static void walk(const char *path, unsigned flags)
{
	struct ift_chunk c = { 0 };
	struct ift_cursor *cur;
	struct ift_event ev;
	struct ift_trace *t;
	int ret;

	ret = ift_trace_open(path, flags, &t);
	if (ret < 0) {
		/* a clean error: a message, never a crash */
		assert_true(ift_strerror(ret)[0] != 0);
		return;
	}
	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		for (size_t i = 0; i < ift_trace_chunk_count(t, tb); i++) {
			ret = ift_trace_chunk_load(t, tb, i, &c);
			assert_true(ret == 0 || ift_strerror(ret)[0]);
		}
	ift_chunk_release(&c);
	cur = ift_cursor_new(t, ~0U, 0);
	assert_non_null(cur);
	while ((ret = ift_cursor_next(cur, &ev)) > 0)
		;
	ift_cursor_free(cur);
	ift_trace_close(t);
}

static void test_replay(void **state)
{
	struct dirent *de;
	char path[512];
	unsigned n = 0;
	DIR *d;

	(void)state;
	d = opendir(CRASHES);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CRASHES, de->d_name);
		walk(path, 0);
		walk(path, IFT_OPEN_NO_INDEX);
		n++;
	}
	closedir(d);
	assert_true(n >= 5);
}

/* The index must not hide a chunk that a scan finds. */
static void test_index_hides_nothing(void **state)
{
	struct ift_trace *a, *b;

	(void)state;
	assert_int_equal(ift_trace_open(CRASHES "/index-chunk-unknown-table", 0, &a), 0);
	assert_int_equal(ift_trace_open(CRASHES "/index-chunk-unknown-table",
					IFT_OPEN_NO_INDEX, &b), 0);
	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		assert_int_equal(ift_trace_rows(a, tb), ift_trace_rows(b, tb));
	ift_trace_close(a);
	ift_trace_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_index_hides_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
