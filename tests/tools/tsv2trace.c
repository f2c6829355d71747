// SPDX-License-Identifier: MIT
/*
 * tsv2trace: builds a trace file from tab-separated rows on stdin, so events
 * recorded by another tool (trace-cmd, perf) can be stored in our format and
 * the sizes compared for exactly the same events.
 *
 *   tsv2trace [-o FILE] [-l ZSTD_LEVEL] [-c CHUNK_ROWS]  < rows.tsv
 *
 * Lines:
 *   op <TAB> NAME <TAB> API(1|2) <TAB> ARG,ARG,...    declares an op
 *   meta <TAB> KEY <TAB> VALUE
 *   stack <TAB> MODULE,OFFSET,SYMBOL,SYMOFF,FLAGS <TAB> ...  a call site,
 *      innermost frame first; ids 1, 2, ... in line order (column `stack')
 *   TABLE <TAB> v0 <TAB> v1 ...                       one row: the table's
 *      columns in id order; str columns as text, the `op' column of `calls'
 *      as an op name, numbers in decimal or 0x hex (negative allowed)
 * Rows of a table must be in time order.  Prints "rows N bytes B".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-trace.h"

#define MAX_OPS 256

static char *op_names[MAX_OPS];
static int nops;

static int fail(unsigned long line, const char *what)
{
	fprintf(stderr, "tsv2trace: line %lu: %s\n", line, what);
	return 1;
}

int main(int argc, char **argv)
{
	struct ift_writer_opts opts = { 0 };
	const char *path = "ingero.trace";
	struct ift_writer *w;
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0, rows = 0;
	int ret;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-o"))
			path = argv[i + 1];
		else if (!strcmp(argv[i], "-l"))
			opts.zstd_level = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-c"))
			opts.chunk_rows = (unsigned)atoi(argv[i + 1]);
	}
	w = ift_writer_create(path, &opts);
	if (!w) {
		perror("tsv2trace");
		return 1;
	}
	while (getline(&line, &cap, stdin) > 0) {
		char *f[32], *save = NULL;
		int nf = 0;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		for (char *tok = strtok_r(line, "\t", &save); tok && nf < 32;
		     tok = strtok_r(NULL, "\t", &save))
			f[nf++] = tok;
		if (!nf)
			continue;
		if (!strcmp(f[0], "op")) {
			struct ift_op op = { 0 };
			char *asave = NULL;

			if (nf < 3 || nops == MAX_OPS)
				return fail(lineno, "bad op");
			op.name = f[1];
			op.api = (enum ift_api)atoi(f[2]);
			if (nf > 3)
				for (char *a = strtok_r(f[3], ",", &asave);
				     a && op.nargs < IFT_CALL_MAX_ARGS;
				     a = strtok_r(NULL, ",", &asave))
					op.args[op.nargs++] = a;
			if ((ret = ift_writer_op(w, &op)) < 0)
				return fail(lineno, ift_strerror(ret));
			op_names[nops++] = strdup(f[1]);
			continue;
		}
		if (!strcmp(f[0], "stack")) {
			struct ift_frame fr[30];
			int64_t id;

			for (int k = 1; k < nf; k++) {
				char *fsave = NULL, *m = strtok_r(f[k], ",", &fsave);
				char *o = strtok_r(NULL, ",", &fsave), *y = strtok_r(NULL, ",", &fsave);
				char *so = strtok_r(NULL, ",", &fsave), *fl = strtok_r(NULL, ",", &fsave);

				if (!m || !o || !y || !so || !fl)
					return fail(lineno, "bad frame");
				fr[k - 1].module = strcmp(m, "-") ? m : "";
				fr[k - 1].offset = strtoull(o, NULL, 0);
				fr[k - 1].symbol = strcmp(y, "-") ? y : "";
				fr[k - 1].symoff = strtoull(so, NULL, 0);
				fr[k - 1].flags = (unsigned)strtoul(fl, NULL, 0);
			}
			if ((id = ift_writer_stack(w, fr, (unsigned)(nf - 1))) < 0)
				return fail(lineno, ift_strerror((int)id));
			continue;
		}
		if (!strcmp(f[0], "meta")) {
			if (nf < 3)
				return fail(lineno, "bad meta");
			ift_writer_meta(w, f[1], f[2]);
			continue;
		}
		int table = ift_table_by_name(f[0]);
		const struct ift_table_def *def;
		uint64_t row[16] = { 0 };

		if (table < 0)
			return fail(lineno, "unknown table");
		def = ift_table_def((unsigned)table);
		for (unsigned c = 0; c < def->ncols && (int)c + 1 < nf; c++) {
			const char *v = f[c + 1];

			if (def->cols[c].type == IFT_STR) {
				int64_t id = ift_writer_string(w, v);

				if (id < 0)
					return fail(lineno, ift_strerror((int)id));
				row[c] = (uint64_t)id;
			} else if (table == IFT_T_CALLS && c == IFT_CALL_OP) {
				int k;

				for (k = 0; k < nops && strcmp(op_names[k], v); k++)
					;
				if (k == nops)
					return fail(lineno, "undeclared op");
				row[c] = (uint64_t)k + 1;
			} else {
				row[c] = v[0] == '-' ? (uint64_t)strtoll(v, NULL, 0) :
						       strtoull(v, NULL, 0);
			}
		}
		if ((ret = ift_writer_append(w, (unsigned)table, row)) < 0)
			return fail(lineno, ift_strerror(ret));
		rows++;
	}
	free(line);
	if ((ret = ift_writer_finish(w)) < 0)
		return fail(lineno, ift_strerror(ret));
	printf("rows %lu bytes %" PRIu64 "\n", rows, ift_writer_bytes(w));
	ift_writer_free(w);
	for (int k = 0; k < nops; k++)
		free(op_names[k]);
	return 0;
}
