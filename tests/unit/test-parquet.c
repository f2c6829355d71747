// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/export/parquet.c, under AddressSanitizer and UBSan as
 * every unit test: random files (columns of every kind, nulls, extremes,
 * row groups of every size) read back through a second reading of the
 * specification written here (a Thrift compact protocol parser, the page
 * headers, zstd): the footer's row count and every column chunk's pages,
 * where it says, of the sizes it says, holding the values it counts.  The
 * values themselves are read back by DuckDB in t506.  And what the writer
 * refuses: a null in a required column, an existing file, a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include "export/parquet.h"
#include "pqcheck.h"

/* PATH is a Parquet file of ROWS rows in NCOLS columns (pqcheck.h). */
static void check_file(const char *path, size_t ncols, int64_t rows)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *d;
	long n;
	const char *why;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	d = malloc((size_t)n + 1);
	assert_int_equal(fread(d, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	why = pq_check(d, (size_t)n, ncols, rows);
	if (why)
		fail_msg("%s: %s", path, why);
	free(d);
}

/* ---- tests ---------------------------------------------------------------- */

static uint64_t seed;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void test_random_files(void **state)
{
	char dir[] = "/tmp/test-parquet-XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (unsigned s = 1; s <= 40; s++) {
		struct pq_column cols[6];
		char names[6][8], text[300];
		struct pq_value row[6];
		size_t ncols = 1 + s % 6, rows = rnd() % 3000;
		struct pq_writer *w;

		seed = s * 0x9e3779b97f4a7c15ULL;
		for (size_t c = 0; c < ncols; c++) {
			snprintf(names[c], sizeof(names[c]), "c%zu", c);
			cols[c] = (struct pq_column){ names[c], (enum pq_type)(1 + rnd() % 3),
						      rnd() % 2 };
		}
		snprintf(path, sizeof(path), "%s/f%u.parquet", dir, s);
		assert_int_equal(ift_pq_open(path, cols, ncols, &w), 0);
		if (s % 3)
			ift_pq_group_rows(w, 1 + rnd() % 700);
		for (size_t i = 0; i < rows; i++) {
			for (size_t c = 0; c < ncols; c++) {
				uint64_t x = rnd();
				size_t n = x % 3 ? x % 5 : 64 + x % 200;

				for (size_t k = 0; k < n; k++)
					text[k] = (char)(0x20 + (rnd() % (x % 7 ? 4 : 95)));
				row[c] = (struct pq_value){
					.is_null = cols[c].optional && !(x % 5), .i = (int64_t)rnd(),
					.d = (double)(int64_t)x / 7.0, .s = text, .len = n,
				};
			}
			/* every column its own text: S points at one buffer */
			assert_int_equal(ift_pq_add(w, row), 0);
		}
		assert_int_equal(ift_pq_close(w, false), 0);
		check_file(path, ncols, (int64_t)rows);
		unlink(path);
	}
	rmdir(dir);
}

static void test_refusals(void **state)
{
	static const struct pq_column req[] = { { "id", PQ_INT64, false } };
	char dir[] = "/tmp/test-parquet-XXXXXX", path[64], link[80];
	struct pq_value v = { .is_null = true };
	struct pq_writer *w;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.parquet", dir);
	snprintf(link, sizeof(link), "%s/l.parquet", dir);
	assert_int_equal(ift_pq_open(path, req, 1, &w), 0);
	assert_int_equal(ift_pq_add(w, &v), -EINVAL);	/* a null where none may be */
	assert_int_equal(ift_pq_close(w, false), -EINVAL);	/* the error stays */
	assert_int_equal(stat(path, &st), -1);		/* and the file goes */
	assert_int_equal(ift_pq_open(path, req, 1, &w), 0);
	assert_int_equal(ift_pq_close(w, false), 0);
	check_file(path, 1, 0);
	assert_int_equal(ift_pq_open(path, req, 1, &w), -EEXIST);
	assert_int_equal(symlink("/tmp/elsewhere.parquet", link), 0);
	assert_int_equal(ift_pq_open(link, req, 1, &w), -EEXIST);	/* O_EXCL: never followed */
	assert_int_equal(lstat("/tmp/elsewhere.parquet", &st), -1);
	unlink(link);
	assert_int_equal(ift_pq_open(link, req, 1, &w), 0);
	assert_int_equal(ift_pq_close(w, true), 0);		/* aborted: removed */
	assert_int_equal(stat(link, &st), -1);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_files),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
