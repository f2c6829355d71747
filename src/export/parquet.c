// SPDX-License-Identifier: MIT
/*
 * Parquet, written from the specification (apache/parquet-format's
 * README, Encodings.md and parquet.thrift; field ids below are the
 * thrift file's).  A file is "PAR1", the column chunks of each row group
 * (an optional dictionary page, then one data page v1, each zstd-compressed
 * after its Thrift-encoded page header), the FileMetaData in the Thrift
 * compact protocol, its length (4 bytes, little endian) and "PAR1".
 *
 * Invariants: a column's values are buffered as they will be written (PLAIN:
 * 8 bytes per number, 4-byte length + bytes per string; nulls not stored,
 * only their definition level); the statistics cover exactly the values
 * of the chunk they describe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "export/parquet.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/intern.h"

#define ZSTD_LEVEL	3
/* strings dictionary-encoded while the dictionary stays within these */
#define DICT_MAX_ENTRIES	65536
#define DICT_MAX_BYTES		(1U << 20)
/* min/max of strings kept while both are this short (the footer's size) */
#define STATS_MAX_STRING	64

/* ---- the Thrift compact protocol (only what the footer needs) --------- */

enum {
	CT_I32 = 5, CT_I64 = 6, CT_BINARY = 8,
	CT_LIST = 9, CT_STRUCT = 12,
};

/* A struct being written: the last field id, for the header's delta. */
struct tw {
	struct buf *b;
	int16_t last[16];	/* per nesting level */
	int depth;
};

static void t_field(struct tw *t, int16_t id, uint8_t type)
{
	int16_t delta = (int16_t)(id - t->last[t->depth]);

	if (delta > 0 && delta <= 15) {
		ift_buf_u8(t->b, (uint8_t)(delta << 4 | type));
	} else {
		ift_buf_u8(t->b, type);
		ift_buf_varint(t->b, zigzag(id));
	}
	t->last[t->depth] = id;
}

static void t_i32(struct tw *t, int16_t id, int32_t v)
{
	t_field(t, id, CT_I32);
	ift_buf_varint(t->b, zigzag(v));
}

static void t_i64(struct tw *t, int16_t id, int64_t v)
{
	t_field(t, id, CT_I64);
	ift_buf_varint(t->b, zigzag(v));
}

static void t_bin(struct tw *t, int16_t id, const void *p, size_t n)
{
	t_field(t, id, CT_BINARY);
	ift_buf_bytes(t->b, p, n);
}

/* A list of N elements of TYPE as field ID (its elements follow). */
static void t_list(struct tw *t, int16_t id, uint8_t type, size_t n)
{
	t_field(t, id, CT_LIST);
	if (n < 15) {
		ift_buf_u8(t->b, (uint8_t)(n << 4 | type));
	} else {
		ift_buf_u8(t->b, (uint8_t)(0xf0 | type));
		ift_buf_varint(t->b, n);
	}
}

/* A struct: as field ID, or as a list element (ID 0). */
static void t_begin(struct tw *t, int16_t id)
{
	if (id)
		t_field(t, id, CT_STRUCT);
	t->last[++t->depth] = 0;
}

static void t_end(struct tw *t)
{
	ift_buf_u8(t->b, 0);	/* STOP */
	t->depth--;
}

/* ---- Parquet's enums --------------------------------------------------- */

enum { PT_INT64 = 2, PT_DOUBLE = 5, PT_BYTE_ARRAY = 6 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_ZSTD = 6 };
enum { CONVERTED_UTF8 = 0 };

/* ---- the writer --------------------------------------------------------- */

/* A string dictionary: its values by index, interned. */
struct dict {
	struct ift_intern v;
	bool full;		/* past the limits: the chunk is PLAIN */
};

struct col {
	struct pq_column c;
	struct buf values;	/* PLAIN values of the group's non-null rows */
	uint8_t *defs;		/* 1 present, 0 null, per row (optional only) */
	size_t ndefs;
	uint64_t nulls;
	struct dict d;
	uint32_t *idx;		/* dictionary index of each non-null value */
	size_t nidx;
	/* statistics of the group */
	bool have;
	int64_t imin, imax;
	double dmin, dmax;
	bool nan;
	size_t smin, smax;	/* offsets in values of the least and greatest */
};

struct chunk_meta {
	int64_t dict_off, data_off, size, usize, nvalues, nulls;
	bool dict;
	struct buf min, max;
	bool stats;
};

struct group_meta {
	struct chunk_meta *c;
	int64_t rows, bytes;
};

struct pq_writer {
	int fd;
	int dirfd;		/* where PATH is: AT_FDCWD, or our copy */
	char *path;
	struct col *cols;
	size_t ncols;
	size_t rows;		/* buffered */
	size_t group_rows;	/* rows per row group */
	int64_t off;		/* written so far */
	int64_t total;
	struct group_meta *groups;
	size_t ngroups;
	ZSTD_CCtx *z;
	struct buf page, zbuf;
	int err;
};

static int write_all(struct pq_writer *w, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n) {
		ssize_t r = write(w->fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		c += r;
		n -= (size_t)r;
		w->off += r;
	}
	return 0;
}

int ift_pq_open(const char *path, const struct pq_column *cols, size_t n, struct pq_writer **out)
{
	return ift_pq_openat(AT_FDCWD, path, cols, n, out);
}

int ift_pq_openat(int dirfd, const char *path, const struct pq_column *cols, size_t n,
	      struct pq_writer **out)
{
	struct pq_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w || !(w->cols = calloc(n, sizeof(*w->cols))) || !(w->path = strdup(path)) ||
	    !(w->z = ZSTD_createCCtx())) {
		if (w) {
			free(w->cols);
			free(w->path);
		}
		free(w);
		return -ENOMEM;
	}
	w->dirfd = dirfd == AT_FDCWD ? AT_FDCWD : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (w->dirfd == -1)
		w->err = -errno;
	w->ncols = n;
	w->group_rows = PQ_GROUP_ROWS;
	for (size_t i = 0; i < n; i++) {
		w->cols[i].c = cols[i];
		if (!(w->cols[i].c.name = strdup(cols[i].name)))
			w->err = -ENOMEM;
	}
	w->fd = w->err ? -1 : openat(w->dirfd, path,
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (w->fd < 0 || (w->err = write_all(w, "PAR1", 4)) < 0) {
		int err = w->err ? w->err : -errno;

		ift_pq_close(w, true);
		return err;
	}
	*out = w;
	return 0;
}

/* The dictionary index of string P (N bytes), added if new; -1: full. */
static int64_t dict_index(struct dict *d, const uint8_t *p, size_t n)
{
	int64_t k;

	if (d->full)
		return -1;
	k = ift_intern(&d->v, p, n, false);
	if (k != -ENOENT)
		return k < 0 ? -2 : k;
	/* the page holds each value as a 4-byte length and its bytes */
	if (ift_intern_count(&d->v) >= DICT_MAX_ENTRIES ||
	    ift_intern_bytes(&d->v) + 4 * ift_intern_count(&d->v) + 4 + n > DICT_MAX_BYTES) {
		d->full = true;
		return -1;
	}
	k = ift_intern(&d->v, p, n, true);
	return k < 0 ? -2 : k;
}

static void dict_reset(struct dict *d)
{
	ift_intern_release(&d->v);
	d->full = false;
}

/*
 * Orders string P (N bytes) against the PLAIN value at offset AT of B as
 * Parquet's statistics do: bytes, unsigned.
 */
static int str_cmp(const uint8_t *p, size_t n, const struct buf *b, size_t at)
{
	uint32_t bn;
	int c;

	memcpy(&bn, b->data + at, 4);
	c = memcmp(p, b->data + at + 4, n < bn ? n : bn);
	return c ? c : (n > bn) - (n < bn);
}

static int col_add(struct col *c, const struct pq_value *v)
{
	if (c->c.optional) {
		uint8_t *d = c->defs;

		if (!(c->ndefs & 1023) && !(d = realloc(c->defs, c->ndefs + 1024)))
			return -ENOMEM;
		c->defs = d;
		c->defs[c->ndefs++] = !v->is_null;
		if (v->is_null) {
			c->nulls++;
			return 0;
		}
	} else if (v->is_null) {
		return -EINVAL;
	}
	switch (c->c.type) {
	case PQ_INT64:
		if (!c->have || v->i < c->imin)
			c->imin = v->i;
		if (!c->have || v->i > c->imax)
			c->imax = v->i;
		ift_buf_le64(&c->values, (uint64_t)v->i);
		break;
	case PQ_DOUBLE: {
		uint64_t bits;

		if (v->d != v->d)
			c->nan = true;
		else {
			if (!c->have || v->d < c->dmin)
				c->dmin = v->d;
			if (!c->have || v->d > c->dmax)
				c->dmax = v->d;
		}
		memcpy(&bits, &v->d, 8);
		ift_buf_le64(&c->values, bits);
		break;
	}
	case PQ_STRING: {
		size_t at = c->values.len;
		int64_t k;

		if (v->len > UINT32_MAX)
			return -E2BIG;
		ift_buf_le32(&c->values, (uint32_t)v->len);
		ift_buf_put(&c->values, v->s, v->len);
		if (c->values.oom)
			return -ENOMEM;
		if (!c->have || str_cmp((const uint8_t *)v->s, v->len, &c->values, c->smin) < 0)
			c->smin = at;
		if (!c->have || str_cmp((const uint8_t *)v->s, v->len, &c->values, c->smax) > 0)
			c->smax = at;
		if ((k = dict_index(&c->d, (const uint8_t *)v->s, v->len)) == -2)
			return -ENOMEM;
		if (k >= 0) {
			uint32_t *x = c->idx;

			if (!(c->nidx & 1023) && !(x = realloc(c->idx, (c->nidx + 1024) *
							       sizeof(*x))))
				return -ENOMEM;
			c->idx = x;
			c->idx[c->nidx++] = (uint32_t)k;
		}
		break;
	}
	}
	c->have = true;
	return c->values.oom ? -ENOMEM : 0;
}

/*
 * The RLE / bit-packing hybrid of N values V of WIDTH bits, bit-packed in
 * groups of 8 (the last one padded with zeros), into B.
 */
static void hybrid(struct buf *b, const uint32_t *v32, const uint8_t *v8, size_t n,
		   unsigned width)
{
	size_t groups = (n + 7) / 8;

	ift_buf_varint(b, (uint64_t)groups << 1 | 1);
	for (size_t g = 0; g < groups; g++) {
		uint64_t acc = 0;
		unsigned bits = 0;

		for (size_t k = g * 8; k < g * 8 + 8; k++) {
			uint64_t x = k < n ? (v32 ? v32[k] : v8[k]) : 0;

			acc |= x << bits;
			bits += width;
			while (bits >= 8) {
				ift_buf_u8(b, (uint8_t)acc);
				acc >>= 8;
				bits -= 8;
			}
		}
	}
}

/* Writes PAGE (its header's fields given) compressed; returns its size. */
static int write_page(struct pq_writer *w, int type, size_t nvalues, int encoding,
		      bool dict_page, int64_t *written, int64_t *uwritten)
{
	struct buf h;
	struct tw t = { .b = &h };
	size_t bound = ZSTD_compressBound(w->page.len), zn;
	int ret;

	ift_buf_clear(&w->zbuf);
	if (!ift_buf_reserve(&w->zbuf, bound))
		return -ENOMEM;
	zn = ZSTD_compressCCtx(w->z, w->zbuf.data, bound, w->page.data, w->page.len, ZSTD_LEVEL);
	if (ZSTD_isError(zn))
		return -EIO;
	if (w->page.len > INT32_MAX || zn > INT32_MAX || nvalues > INT32_MAX)
		return -E2BIG;
	ift_buf_init(&h);
	t_begin(&t, 0);
	t_i32(&t, 1, type);
	t_i32(&t, 2, (int32_t)w->page.len);
	t_i32(&t, 3, (int32_t)zn);
	if (dict_page) {
		t_begin(&t, 7);
		t_i32(&t, 1, (int32_t)nvalues);
		t_i32(&t, 2, encoding);
		t_end(&t);
	} else {
		t_begin(&t, 5);
		t_i32(&t, 1, (int32_t)nvalues);
		t_i32(&t, 2, encoding);
		t_i32(&t, 3, ENC_RLE);
		t_i32(&t, 4, ENC_RLE);
		t_end(&t);
	}
	t_end(&t);
	ret = h.oom ? -ENOMEM : write_all(w, h.data, h.len);
	if (!ret)
		ret = write_all(w, w->zbuf.data, zn);
	*written += (int64_t)(h.len + zn);
	*uwritten += (int64_t)(h.len + w->page.len);
	ift_buf_release(&h);
	return ret;
}

/* Column C of the buffered group into the file, its metadata into M. */
static int write_chunk(struct pq_writer *w, struct col *c, size_t rows, struct chunk_meta *m)
{
	bool dict = c->c.type == PQ_STRING && !c->d.full && c->nidx && c->nidx == rows - c->nulls;
	int ret;

	memset(m, 0, sizeof(*m));
	m->nvalues = (int64_t)rows;
	m->nulls = (int64_t)c->nulls;
	if (dict) {
		m->dict = true;
		m->dict_off = w->off;
		ift_buf_clear(&w->page);
		for (size_t i = 0; i < ift_intern_count(&c->d.v); i++) {
			size_t len;
			const char *v = ift_intern_get(&c->d.v, i, &len);

			ift_buf_le32(&w->page, (uint32_t)len);
			ift_buf_put(&w->page, v, len);
		}
		if (w->page.oom)
			return -ENOMEM;
		if ((ret = write_page(w, PAGE_DICTIONARY, ift_intern_count(&c->d.v), ENC_PLAIN, true,
				      &m->size, &m->usize)) < 0)
			return ret;
	}
	m->data_off = w->off;
	ift_buf_clear(&w->page);
	if (c->c.optional) {
		struct buf lv;

		ift_buf_init(&lv);
		hybrid(&lv, NULL, c->defs, c->ndefs, 1);
		ift_buf_le32(&w->page, (uint32_t)lv.len);
		ift_buf_put(&w->page, lv.data, lv.len);
		if (lv.oom)
			w->page.oom = true;
		ift_buf_release(&lv);
	}
	if (dict) {
		unsigned width = 1;

		while (width < 32 && (ift_intern_count(&c->d.v) - 1) >> width)
			width++;
		ift_buf_u8(&w->page, (uint8_t)width);
		hybrid(&w->page, c->idx, NULL, c->nidx, width);
	} else {
		ift_buf_put(&w->page, c->values.data, c->values.len);
	}
	if (w->page.oom)
		return -ENOMEM;
	if ((ret = write_page(w, PAGE_DATA, rows, dict ? ENC_RLE_DICTIONARY : ENC_PLAIN, false,
			      &m->size, &m->usize)) < 0)
		return ret;
	/* statistics: min and max as PLAIN values (strings without their length) */
	ift_buf_init(&m->min);
	ift_buf_init(&m->max);
	if (c->have && c->c.type == PQ_INT64) {
		ift_buf_le64(&m->min, (uint64_t)c->imin);
		ift_buf_le64(&m->max, (uint64_t)c->imax);
		m->stats = true;
	} else if (c->have && c->c.type == PQ_DOUBLE && !c->nan) {
		ift_buf_put(&m->min, &c->dmin, 8);
		ift_buf_put(&m->max, &c->dmax, 8);
		m->stats = true;
	} else if (c->have && c->c.type == PQ_STRING) {
		uint32_t a, b;

		memcpy(&a, c->values.data + c->smin, 4);
		memcpy(&b, c->values.data + c->smax, 4);
		if (a <= STATS_MAX_STRING && b <= STATS_MAX_STRING) {
			ift_buf_put(&m->min, c->values.data + c->smin + 4, a);
			ift_buf_put(&m->max, c->values.data + c->smax + 4, b);
			m->stats = true;
		}
	}
	return m->min.oom || m->max.oom ? -ENOMEM : 0;
}

static void col_reset(struct col *c)
{
	ift_buf_clear(&c->values);
	c->ndefs = c->nidx = 0;
	c->nulls = 0;
	c->have = c->nan = false;
	dict_reset(&c->d);
}

static int flush_group(struct pq_writer *w)
{
	struct group_meta *g;
	int ret = 0;

	if (!w->rows)
		return 0;
	g = realloc(w->groups, (w->ngroups + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	w->groups = g;
	g = &w->groups[w->ngroups];
	if (!(g->c = calloc(w->ncols, sizeof(*g->c))))
		return -ENOMEM;
	w->ngroups++;
	g->rows = (int64_t)w->rows;
	g->bytes = 0;
	for (size_t i = 0; i < w->ncols && ret >= 0; i++) {
		ret = write_chunk(w, &w->cols[i], w->rows, &g->c[i]);
		g->bytes += g->c[i].usize;
		col_reset(&w->cols[i]);
	}
	w->total += (int64_t)w->rows;
	w->rows = 0;
	return ret;
}

void ift_pq_group_rows(struct pq_writer *w, size_t n)
{
	w->group_rows = n ? n : 1;
}

int ift_pq_add(struct pq_writer *w, const struct pq_value *row)
{
	if (w->err)
		return w->err;
	for (size_t i = 0; i < w->ncols; i++)
		if ((w->err = col_add(&w->cols[i], &row[i])) < 0)
			return w->err;
	if (++w->rows >= w->group_rows)
		w->err = flush_group(w);
	return w->err;
}

/* The FileMetaData of everything written, into B. */
static void footer(struct pq_writer *w, struct buf *b)
{
	struct tw t = { .b = b };

	t_begin(&t, 0);
	t_i32(&t, 1, 1);
	t_list(&t, 2, CT_STRUCT, w->ncols + 1);
	t_begin(&t, 0);
	t_bin(&t, 4, "schema", 6);
	t_i32(&t, 5, (int32_t)w->ncols);
	t_end(&t);
	for (size_t i = 0; i < w->ncols; i++) {
		const struct pq_column *c = &w->cols[i].c;

		t_begin(&t, 0);
		t_i32(&t, 1, c->type == PQ_INT64 ? PT_INT64 : c->type == PQ_DOUBLE ? PT_DOUBLE :
			  PT_BYTE_ARRAY);
		t_i32(&t, 3, c->optional ? REP_OPTIONAL : REP_REQUIRED);
		t_bin(&t, 4, c->name, strlen(c->name));
		if (c->type == PQ_STRING) {
			t_i32(&t, 6, CONVERTED_UTF8);
			t_begin(&t, 10);	/* LogicalType: STRING */
			t_begin(&t, 1);
			t_end(&t);
			t_end(&t);
		}
		t_end(&t);
	}
	t_i64(&t, 3, w->total);
	t_list(&t, 4, CT_STRUCT, w->ngroups);
	for (size_t g = 0; g < w->ngroups; g++) {
		const struct group_meta *gm = &w->groups[g];

		t_begin(&t, 0);
		t_list(&t, 1, CT_STRUCT, w->ncols);
		for (size_t i = 0; i < w->ncols; i++) {
			const struct chunk_meta *m = &gm->c[i];
			const struct pq_column *c = &w->cols[i].c;

			t_begin(&t, 0);
			t_i64(&t, 2, m->dict ? m->dict_off : m->data_off);
			t_begin(&t, 3);
			t_i32(&t, 1, c->type == PQ_INT64 ? PT_INT64 : c->type == PQ_DOUBLE ?
				  PT_DOUBLE : PT_BYTE_ARRAY);
			t_list(&t, 2, CT_I32, m->dict ? 3 : 2);
			ift_buf_varint(b, zigzag(ENC_RLE));
			ift_buf_varint(b, zigzag(ENC_PLAIN));
			if (m->dict)
				ift_buf_varint(b, zigzag(ENC_RLE_DICTIONARY));
			t_list(&t, 3, CT_BINARY, 1);
			ift_buf_bytes(b, c->name, strlen(c->name));
			t_i32(&t, 4, CODEC_ZSTD);
			t_i64(&t, 5, m->nvalues);
			t_i64(&t, 6, m->usize);
			t_i64(&t, 7, m->size);
			t_i64(&t, 9, m->data_off);
			if (m->dict)
				t_i64(&t, 11, m->dict_off);
			t_begin(&t, 12);
			t_i64(&t, 3, m->nulls);
			if (m->stats) {
				t_bin(&t, 5, m->max.data, m->max.len);
				t_bin(&t, 6, m->min.data, m->min.len);
			}
			t_end(&t);
			t_end(&t);
			t_end(&t);
		}
		t_i64(&t, 2, gm->bytes);
		t_i64(&t, 3, gm->rows);
		t_end(&t);
	}
	t_bin(&t, 6, "ingero-ftrace", 13);
	/* min_value/max_value follow each type's own order */
	t_list(&t, 7, CT_STRUCT, w->ncols);
	for (size_t i = 0; i < w->ncols; i++) {
		t_begin(&t, 0);
		t_begin(&t, 1);
		t_end(&t);
		t_end(&t);
	}
	t_end(&t);
}

int ift_pq_close(struct pq_writer *w, bool abort)
{
	int ret = 0;

	if (!w)
		return 0;
	ret = w->err;
	if (!abort && !ret)
		ret = flush_group(w);
	if (!abort && !ret) {
		struct buf b;

		ift_buf_init(&b);
		footer(w, &b);
		ift_buf_le32(&b, (uint32_t)b.len);
		ift_buf_put(&b, "PAR1", 4);
		ret = b.oom ? -ENOMEM : b.len - 8 > UINT32_MAX ? -E2BIG : write_all(w, b.data, b.len);
		ift_buf_release(&b);
	}
	if (w->fd >= 0 && close(w->fd) < 0 && !ret)
		ret = -errno;
	if ((abort || ret) && w->fd >= 0)
		unlinkat(w->dirfd, w->path, 0);
	if (w->dirfd >= 0)
		close(w->dirfd);
	for (size_t i = 0; i < w->ncols; i++) {
		free((char *)w->cols[i].c.name);
		ift_buf_release(&w->cols[i].values);
		free(w->cols[i].defs);
		free(w->cols[i].idx);
		dict_reset(&w->cols[i].d);
	}
	for (size_t g = 0; g < w->ngroups; g++) {
		for (size_t i = 0; w->groups[g].c && i < w->ncols; i++) {
			ift_buf_release(&w->groups[g].c[i].min);
			ift_buf_release(&w->groups[g].c[i].max);
		}
		free(w->groups[g].c);
	}
	free(w->groups);
	free(w->cols);
	free(w->path);
	ift_buf_release(&w->page);
	ift_buf_release(&w->zbuf);
	ZSTD_freeCCtx(w->z);
	free(w);
	return ret;
}
