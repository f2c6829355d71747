/* SPDX-License-Identifier: MIT */
#ifndef IFT_EXPORT_PARQUET_H
#define IFT_EXPORT_PARQUET_H

/*
 * A Parquet file writer, from the format's specification (apache/parquet-
 * format: the Thrift compact protocol footer, PLAIN and RLE_DICTIONARY
 * encodings, zstd pages, column statistics): flat schemas of 64-bit
 * integers, doubles and UTF-8 strings, each column required or optional.
 * Rows are buffered column by column and written as row groups of at most
 * PQ_GROUP_ROWS; one data page per column chunk, strings dictionary-encoded
 * while their dictionary stays small.  Nothing here prints.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pq_type { PQ_INT64 = 1, PQ_DOUBLE, PQ_STRING };

struct pq_column {
	const char *name;
	enum pq_type type;
	bool optional;		/* may hold nulls */
};

/* One value of a row: NULL when IS_NULL (an optional column only). */
struct pq_value {
	bool is_null;
	int64_t i;
	double d;
	const char *s;		/* PQ_STRING: S[0..LEN) */
	size_t len;
};

struct pq_writer;

/*
 * ift_pq_open - a new Parquet file at PATH (created exclusively, not following
 * a link: O_EXCL | O_NOFOLLOW) with the N columns COLS (copied).  Returns 0
 * with *OUT set, or a negative errno.
 */
int ift_pq_open(const char *path, const struct pq_column *cols, size_t n, struct pq_writer **out);
/* The same for PATH in the directory DIRFD (AT_FDCWD: as ift_pq_open()). */
int ift_pq_openat(int dirfd, const char *path, const struct pq_column *cols, size_t n,
	      struct pq_writer **out);

/* ift_pq_add - one row: a value per column, in COLS' order.  0 or a negative error. */
int ift_pq_add(struct pq_writer *w, const struct pq_value *row);

/*
 * ift_pq_close - write what is buffered and the footer, close the file and free
 * W; ABORT: remove the file instead.  Returns 0 or the first error.
 */
int ift_pq_close(struct pq_writer *w, bool abort);

#define PQ_GROUP_ROWS	(1U << 20)

/* Row groups of N rows (1 or more) from now on, instead of PQ_GROUP_ROWS. */
void ift_pq_group_rows(struct pq_writer *w, size_t n);

#endif
