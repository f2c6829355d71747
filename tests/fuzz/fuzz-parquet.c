// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the Parquet writer (src/export/parquet.c): `make
 * fuzz-parquet`, see tests/fuzz/README.md.  Each input is a program: its
 * first bytes choose the columns (1 to 8, each a type and whether it may be
 * null) and the row group size, the rest are read as values, column after
 * column, row after row (a string's length, then its bytes; a null where the
 * column allows one), until the input ends.  The file is written under /tmp
 * and checked by tests/unit/pqcheck.h, a second
 * reading of the specification: a writer that accepted every row must leave
 * a file whose footer, pages and counts agree; a broken promise aborts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/parquet.h"
#include "../unit/pqcheck.h"

struct in {
	const uint8_t *p, *end;
};

static bool take(struct in *in, void *v, size_t n)
{
	if ((size_t)(in->end - in->p) < n)
		return false;
	memcpy(v, in->p, n);
	in->p += n;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct in in = { data, data + size };
	struct pq_column cols[8];
	char names[8][4];
	struct pq_value row[8];
	struct pq_writer *w;
	uint8_t head, g;
	int64_t rows = 0;
	size_t ncols;
	uint8_t *file;
	long n;
	FILE *fp;
	const char *why;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz-parquet-%d.parquet", (int)getpid());
	if (!take(&in, &head, 1) || !take(&in, &g, 1))
		return 0;
	ncols = 1 + (head & 7);
	for (size_t c = 0; c < ncols; c++) {
		uint8_t t = 0;

		take(&in, &t, 1);
		snprintf(names[c], sizeof(names[c]), "c%zu", c);
		cols[c] = (struct pq_column){ names[c], (enum pq_type)(1 + t % 3), t & 0x80 };
	}
	unlink(path);
	if (ift_pq_open(path, cols, ncols, &w) < 0)
		abort();
	ift_pq_group_rows(w, 1 + g % 64);
	for (bool more = true; more && rows < 100000; ) {
		for (size_t c = 0; c < ncols && more; c++) {
			struct pq_value *v = &row[c];
			uint8_t len = 0;

			memset(v, 0, sizeof(*v));
			v->s = "";
			if (cols[c].optional) {
				uint8_t null = 0;

				more = take(&in, &null, 1);
				v->is_null = null & 1;
				if (v->is_null)
					continue;
			}
			switch (cols[c].type) {
			case PQ_INT64:
				more = more && take(&in, &v->i, 8);
				break;
			case PQ_DOUBLE:
				more = more && take(&in, &v->d, 8);
				break;
			case PQ_STRING:
				more = more && take(&in, &len, 1) && (size_t)(in.end - in.p) >= len;
				if (more) {
					v->s = (const char *)in.p;
					v->len = len;
					in.p += len;
				}
				break;
			}
		}
		if (!more)
			break;
		if (ift_pq_add(w, row) < 0)
			abort();
		rows++;
	}
	if (ift_pq_close(w, false) < 0)
		abort();
	if (!(fp = fopen(path, "rb")))
		abort();
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	file = malloc((size_t)n + 1);
	if (!file || fread(file, 1, (size_t)n, fp) != (size_t)n)
		abort();
	fclose(fp);
	unlink(path);
	if ((why = pq_check(file, (size_t)n, ncols, rows))) {
		fprintf(stderr, "fuzz-parquet: %s\n", why);
		abort();
	}
	free(file);
	return 0;
}
