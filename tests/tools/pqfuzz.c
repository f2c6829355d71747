// SPDX-License-Identifier: MIT
/*
 * pqfuzz: a Parquet file of random rows from src/export/parquet.c, and the
 * rows it was given as JSON lines on stdout, for a reader written by others
 * (DuckDB, t506) to be compared against.
 *
 *   pqfuzz -o FILE [-s SEED] [-n ROWS] [-g GROUP_ROWS]
 *
 * Columns: a required and an optional 64-bit integer (extremes, negatives,
 * runs), an optional double (negative zero, huge, tiny; no NaN: JSON has
 * none), an optional string from a few values (dictionary-encoded), an
 * optional string from many (past the dictionary's limit: PLAIN), with
 * empty, long (past the statistics' limit), multi-byte and control
 * characters; nulls in every optional column, a column of nulls only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/parquet.h"

static uint64_t state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static const char *const few[] = {
	"cudaMemcpy", "cudaLaunchKernel", "ncclAllReduce", "", "pt_data_worker",
	"\xc3\xa9t\xc3\xa9 \xe2\x86\xb3 \xf0\x9f\x9a\x80", "quote\" back\\slash",
};

/* A JSON string of S (N bytes) on stdout: UTF-8 as is, the rest escaped. */
static void json_str(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	static const struct pq_column cols[] = {
		{ "id", PQ_INT64, false }, { "v", PQ_INT64, true }, { "d", PQ_DOUBLE, true },
		{ "few", PQ_STRING, true }, { "many", PQ_STRING, true },
		{ "none", PQ_INT64, true },
	};
	const char *path = NULL;
	size_t rows = 1000, group = 0;
	struct pq_writer *w;
	char buf[512];
	int ret;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-o"))
			path = argv[i + 1];
		else if (!strcmp(argv[i], "-s"))
			state ^= strtoull(argv[i + 1], NULL, 10) * 0x9e3779b97f4a7c15ULL;
		else if (!strcmp(argv[i], "-n"))
			rows = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "-g"))
			group = strtoul(argv[i + 1], NULL, 10);
	}
	if (!path) {
		fprintf(stderr, "usage: pqfuzz -o FILE [-s SEED] [-n ROWS] [-g GROUP_ROWS]\n");
		return 2;
	}
	if ((ret = ift_pq_open(path, cols, sizeof(cols) / sizeof(cols[0]), &w)) < 0) {
		fprintf(stderr, "pqfuzz: %s: %s\n", path, strerror(-ret));
		return 1;
	}
	if (group)
		ift_pq_group_rows(w, group);
	for (size_t r = 0; r < rows; r++) {
		struct pq_value v[6];
		uint64_t x = rnd();
		static const double ds[] = { -0.0, 1e300, -1e-300, 0.5, -12345.678 };
		size_t n = 0;

		memset(v, 0, sizeof(v));
		v[0].i = (int64_t)r;
		v[1].is_null = x % 7 == 0;
		v[1].i = x % 5 == 0 ? INT64_MIN : x % 5 == 1 ? INT64_MAX : x % 5 == 2 ? -1 :
			 (int64_t)(rnd() >> (x % 60));
		v[2].is_null = x % 11 == 0;
		v[2].d = x % 3 ? ds[x % 5] : (double)(int64_t)rnd() / 1e6;
		v[3].is_null = x % 13 == 0;
		v[3].s = few[rnd() % (sizeof(few) / sizeof(few[0]))];
		v[3].len = strlen(v[3].s);
		v[4].is_null = x % 17 == 0;
		switch (rnd() % 4) {
		case 0:		/* unique: the dictionary fills up */
			n = (size_t)snprintf(buf, sizeof(buf), "row %zu \xce\xbb %" PRIu64, r,
					     rnd());
			break;
		case 1:		/* long */
			n = 64 + rnd() % 200;
			for (size_t k = 0; k < n; k++)
				buf[k] = (char)('a' + rnd() % 26);
			break;
		case 2:		/* control characters and tabs */
			n = (size_t)snprintf(buf, sizeof(buf), "a\tb\nc\x01%zu", r);
			break;
		default:
			n = 0;
		}
		v[4].s = buf;
		v[4].len = n;
		v[5].is_null = true;
		if ((ret = ift_pq_add(w, v)) < 0) {
			fprintf(stderr, "pqfuzz: %s\n", strerror(-ret));
			ift_pq_close(w, true);
			return 1;
		}
		printf("[%zu,", r);
		if (v[1].is_null)
			printf("null,");
		else
			printf("\"%" PRId64 "\",", v[1].i);
		if (v[2].is_null)
			printf("null,");
		else
			printf("%.17g,", v[2].d);
		if (v[3].is_null)
			printf("null,");
		else
			json_str(v[3].s, v[3].len), putchar(',');
		if (v[4].is_null)
			printf("null,");
		else
			json_str(v[4].s, v[4].len), putchar(',');
		printf("null]\n");
	}
	if ((ret = ift_pq_close(w, false)) < 0) {
		fprintf(stderr, "pqfuzz: %s: %s\n", path, strerror(-ret));
		return 1;
	}
	return 0;
}
