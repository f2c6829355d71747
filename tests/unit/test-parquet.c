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

/* ---- a Thrift compact protocol reader, into a tree ---------------------- */

struct tnode {
	int16_t id;		/* field id; 0 for a list element */
	uint8_t type;
	int64_t i;		/* an integer; a list's or struct's child count */
	const uint8_t *bin;
	size_t len;
	struct tnode *kids;
};

struct tin {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t t_varint(struct tin *r)
{
	uint64_t v = 0;

	for (int s = 0; s < 64; s += 7) {
		uint8_t b;

		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t t_zz(struct tin *r)
{
	uint64_t v = t_varint(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void t_value(struct tin *r, struct tnode *n, int depth);

static void t_struct(struct tin *r, struct tnode *n, int depth)
{
	int16_t last = 0;
	size_t cap = 0;

	n->type = 12;
	n->i = 0;
	while (!r->bad && r->p < r->end) {
		uint8_t h = *r->p++;
		struct tnode *k;

		if (!h)
			return;
		if (n->i == (int64_t)cap) {
			cap = cap ? 2 * cap : 8;
			n->kids = realloc(n->kids, cap * sizeof(*n->kids));
		}
		k = &n->kids[n->i++];
		memset(k, 0, sizeof(*k));
		k->type = h & 0x0f;
		k->id = h >> 4 ? (int16_t)(last + (h >> 4)) : (int16_t)t_zz(r);
		last = k->id;
		if (k->type == 1 || k->type == 2)
			k->i = k->type == 1;
		else
			t_value(r, k, depth + 1);
	}
	r->bad = true;
}

static void t_value(struct tin *r, struct tnode *n, int depth)
{
	if (depth > 16) {
		r->bad = true;
		return;
	}
	switch (n->type) {
	case 3:
		n->i = r->p < r->end ? (int8_t)*r->p++ : (r->bad = true, 0);
		break;
	case 4: case 5: case 6:
		n->i = t_zz(r);
		break;
	case 8:
		n->len = (size_t)t_varint(r);
		if ((size_t)(r->end - r->p) < n->len)
			r->bad = true;
		else
			n->bin = r->p, r->p += n->len;
		break;
	case 9: {
		uint8_t h = r->p < r->end ? *r->p++ : 0;
		uint8_t et = h & 0x0f;

		n->i = h >> 4 == 15 ? (int64_t)t_varint(r) : h >> 4;
		n->kids = n->i ? calloc((size_t)n->i, sizeof(*n->kids)) : NULL;
		for (int64_t k = 0; k < n->i && !r->bad; k++) {
			n->kids[k].type = et;
			if (et == 12)
				t_struct(r, &n->kids[k], depth + 1);
			else
				t_value(r, &n->kids[k], depth + 1);
		}
		break;
	}
	case 12:
		t_struct(r, n, depth);
		break;
	default:
		r->bad = true;
	}
}

static void t_free(struct tnode *n)
{
	for (int64_t k = 0; (n->type == 9 || n->type == 12) && k < n->i; k++)
		t_free(&n->kids[k]);
	free(n->kids);
}

static const struct tnode *field(const struct tnode *s, int16_t id)
{
	for (int64_t k = 0; s && s->type == 12 && k < s->i; k++)
		if (s->kids[k].id == id)
			return &s->kids[k];
	return NULL;
}

static int64_t ival(const struct tnode *s, int16_t id)
{
	const struct tnode *f = field(s, id);

	assert_non_null(f);
	return f->i;
}

/* ---- the file's structure ------------------------------------------------ */

struct file {
	uint8_t *data;
	size_t len;
};

static void slurp(const char *path, struct file *f)
{
	FILE *fp = fopen(path, "rb");
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	f->len = (size_t)n;
	f->data = malloc(f->len + 1);
	assert_int_equal(fread(f->data, 1, f->len, fp), f->len);
	fclose(fp);
}

/*
 * One page at OFF: its header's sizes, the page decompressed to them; the
 * values it counts.  Returns the offset past it.
 */
static size_t check_page(const struct file *f, size_t off, int want_type, int64_t *values)
{
	struct tin r = { f->data + off, f->data + f->len, false };
	struct tnode h = { 0 };
	int64_t usize, csize;
	const struct tnode *sub;
	void *out;

	t_struct(&r, &h, 0);
	assert_false(r.bad);
	assert_int_equal(ival(&h, 1), want_type);
	usize = ival(&h, 2);
	csize = ival(&h, 3);
	assert_true(csize >= 0 && (size_t)csize <= (size_t)(r.end - r.p));
	out = malloc((size_t)usize + 1);
	assert_int_equal(ZSTD_decompress(out, (size_t)usize + 1, r.p, (size_t)csize), usize);
	sub = field(&h, want_type == 2 ? 7 : 5);
	assert_non_null(sub);
	*values = ival(sub, 1);
	free(out);
	off = (size_t)(r.p - f->data) + (size_t)csize;
	t_free(&h);
	return off;
}

/* The file at PATH is a Parquet file of ROWS rows in NCOLS columns. */
static void check_file(const char *path, size_t ncols, int64_t rows)
{
	struct file f;
	struct tin r;
	struct tnode md = { 0 };
	const struct tnode *groups;
	uint32_t flen;
	int64_t seen = 0;

	slurp(path, &f);
	assert_true(f.len >= 12);
	assert_memory_equal(f.data, "PAR1", 4);
	assert_memory_equal(f.data + f.len - 4, "PAR1", 4);
	memcpy(&flen, f.data + f.len - 8, 4);
	assert_true(flen + 12 <= f.len);
	r = (struct tin){ f.data + f.len - 8 - flen, f.data + f.len - 8, false };
	t_struct(&r, &md, 0);
	assert_false(r.bad);
	assert_ptr_equal(r.p, r.end);
	assert_int_equal(ival(&md, 1), 1);
	assert_int_equal(field(&md, 2)->i, (int64_t)ncols + 1);	/* root + columns */
	assert_int_equal(ival(&md, 3), rows);
	groups = field(&md, 4);
	assert_non_null(groups);
	for (int64_t g = 0; g < groups->i; g++) {
		const struct tnode *rg = &groups->kids[g], *cols = field(rg, 1);
		int64_t grows = ival(rg, 3);

		assert_int_equal(cols->i, (int64_t)ncols);
		assert_true(grows > 0);
		seen += grows;
		for (size_t c = 0; c < ncols; c++) {
			const struct tnode *cm = field(&cols->kids[c], 3);
			const struct tnode *dict = field(cm, 11);
			int64_t v, total = ival(cm, 7);
			size_t at = (size_t)(dict ? dict->i : ival(cm, 9)), start = at;

			assert_int_equal(ival(cm, 4), 6);	/* ZSTD */
			assert_int_equal(ival(cm, 5), grows);
			if (dict)
				at = check_page(&f, at, 2, &v);
			assert_int_equal(at, (size_t)ival(cm, 9));
			at = check_page(&f, at, 0, &v);
			assert_int_equal(v, grows);
			assert_int_equal((int64_t)(at - start), total);
		}
	}
	assert_int_equal(seen, rows);
	t_free(&md);
	free(f.data);
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
		assert_int_equal(pq_open(path, cols, ncols, &w), 0);
		if (s % 3)
			pq_group_rows(w, 1 + rnd() % 700);
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
			assert_int_equal(pq_add(w, row), 0);
		}
		assert_int_equal(pq_close(w, false), 0);
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
	assert_int_equal(pq_open(path, req, 1, &w), 0);
	assert_int_equal(pq_add(w, &v), -EINVAL);	/* a null where none may be */
	assert_int_equal(pq_close(w, false), -EINVAL);	/* the error stays */
	assert_int_equal(stat(path, &st), -1);		/* and the file goes */
	assert_int_equal(pq_open(path, req, 1, &w), 0);
	assert_int_equal(pq_close(w, false), 0);
	check_file(path, 1, 0);
	assert_int_equal(pq_open(path, req, 1, &w), -EEXIST);
	assert_int_equal(symlink("/tmp/elsewhere.parquet", link), 0);
	assert_int_equal(pq_open(link, req, 1, &w), -EEXIST);	/* O_EXCL: never followed */
	assert_int_equal(lstat("/tmp/elsewhere.parquet", &st), -1);
	unlink(link);
	assert_int_equal(pq_open(link, req, 1, &w), 0);
	assert_int_equal(pq_close(w, true), 0);		/* aborted: removed */
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
