// SPDX-License-Identifier: MIT
/*
 * The trace writer.  Rows are buffered per table in column arrays of at most
 * chunk_rows rows; a full buffer is encoded, compressed and written as one
 * CHUNK section, so memory stays bounded whatever the length of the trace.
 * Everything a chunk refers to (strings, ops, the table's schema) is written
 * before it, so the file is readable at every section boundary.
 *
 * A writer can go on into a new file (ift_writer_rotate()): each piece is a
 * whole trace, so the writer keeps every dictionary entry it wrote (the
 * strings are interned anyway; ops, call sites, libraries and metadata in
 * `all' buffers) and writes them all again, under the same ids, at the head
 * of the next piece.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "format.h"
#include "util/array.h"
#include "util/intern.h"
#include "util/outfile.h"

#define DEFAULT_CHUNK_ROWS	16384
#define DEFAULT_ZSTD_LEVEL	4
/*
 * zstd's tables for chunks of the recorder's size (4,096 rows, up to a few
 * hundred KB of columns): level 4 sizes its hash and chain tables for
 * larger inputs, 1.5 MB of context.  2^14 entries each gave the same file
 * to 0.02% (a page-allocation storm of 1.2 million events) with 1.1 MB
 * less, and the recorder's peak RSS 0.4-1.2 MB lower.
 */
#define SMALL_CHUNK_ROWS	4096
#define SMALL_TABLE_LOG		14

struct meta_kv {
	char *key, *value;
};

struct wtable {
	const struct ift_table_def *def;
	uint64_t *cols[IFT_MAX_COLS];
	uint32_t n;
	uint64_t total;
	uint64_t last_ts;
	bool schema_written;
	/* per column: chunks left that reuse the last KEYDELTA decision */
	uint8_t keydelta_trust[IFT_MAX_COLS];
};

struct ift_writer {
	struct ift_outfile out;	/* PATH.part, made without following links */
	unsigned chunk_rows;
	int level;
	uint64_t off;
	int err;		/* sticky: once a write failed, nothing more is written */
	bool finished;

	struct wtable t[IFT_T_NR];

	struct ift_intern strings;	/* string id = its number + 1 */
	size_t strings_flushed;

	struct buf ops;		/* OPS entries not written yet */
	struct buf ops_all;	/* every OPS entry, for the next piece */
	uint32_t nops, ops_flushed;

	struct buf stacks;	/* STACKS entries not written yet */
	struct buf stacks_all;
	uint64_t nstacks, stacks_flushed;

	struct buf meta;	/* META entries not written yet */
	uint32_t nmeta;
	struct meta_kv *meta_all;	/* every key's last value, first-set order */
	size_t nmeta_all;

	struct buf libs_all;	/* every LIBRARY payload, each a varint length first */
	struct ift_writer_opts opts;

	struct ift_loss *loss;
	size_t nloss;

	struct buf index;
	uint64_t nindex;

	struct taskmap tasks;

	ZSTD_CCtx *zc;
	struct buf body, payload, scratch, alt;
};

/* ---- strings --------------------------------------------------------- */

/* The id of string S, interned: 1 for the first, 0 is none. */
static int64_t string_id(struct ift_intern *t, const char *s)
{
	int64_t i = ift_intern(t, s, strlen(s), true);

	if (i == -EOVERFLOW)
		return -IFT_E_LIMIT;
	return i < 0 ? i : i + 1;
}

/* ---- sections -------------------------------------------------------- */

static int write_all(struct ift_writer *w, struct iovec *iov, int iovcnt)
{
	while (iovcnt > 0) {
		ssize_t n = writev(w->out.fd, iov, iovcnt);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		w->off += (uint64_t)n;
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int write_section(struct ift_writer *w, unsigned type,
			 const struct buf *p, const struct buf *chunk_index)
{
	uint8_t hdr[IFT_SECTION_HDR];
	struct iovec iov[2];
	uint64_t at = w->off;
	int ret;

	if (w->err)
		return w->err;
	if (p->oom)
		return w->err = -ENOMEM;
	memcpy(hdr, IFT_SYNC, 4);
	ift_put_le16(hdr + 4, (uint16_t)type);
	ift_put_le16(hdr + 6, 0);
	ift_put_le64(hdr + 8, p->len);
	ift_put_le32(hdr + 16, (uint32_t)crc32(0, p->data, (uInt)p->len));
	ift_put_le32(hdr + 20, (uint32_t)crc32(0, hdr, 20));
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = p->data;
	iov[1].iov_len = p->len;
	ret = write_all(w, iov, p->len ? 2 : 1);
	if (ret < 0)
		return w->err = ret;

	ift_buf_varint(&w->index, at);
	ift_buf_varint(&w->index, type);
	if (chunk_index)
		ift_buf_put(&w->index, chunk_index->data, chunk_index->len);
	w->nindex++;
	if (w->index.oom)
		return w->err = -ENOMEM;
	return 0;
}

static int flush_strings(struct ift_writer *w)
{
	struct ift_intern *st = &w->strings;

	if (ift_intern_count(st) == w->strings_flushed)
		return 0;
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, w->strings_flushed + 1);
	ift_buf_varint(&w->payload, ift_intern_count(st) - w->strings_flushed);
	for (size_t i = w->strings_flushed; i < ift_intern_count(st); i++)
		ift_buf_str(&w->payload, ift_intern_get(st, i, NULL));
	w->strings_flushed = ift_intern_count(st);
	return write_section(w, IFT_SEC_STRINGS, &w->payload, NULL);
}

static int flush_ops(struct ift_writer *w)
{
	if (w->nops == w->ops_flushed)
		return 0;
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, w->ops_flushed + 1);
	ift_buf_varint(&w->payload, w->nops - w->ops_flushed);
	ift_buf_put(&w->payload, w->ops.data, w->ops.len);
	ift_buf_clear(&w->ops);
	w->ops_flushed = w->nops;
	return write_section(w, IFT_SEC_OPS, &w->payload, NULL);
}

static int flush_meta(struct ift_writer *w)
{
	if (!w->nmeta)
		return 0;
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, w->nmeta);
	ift_buf_put(&w->payload, w->meta.data, w->meta.len);
	ift_buf_clear(&w->meta);
	w->nmeta = 0;
	return write_section(w, IFT_SEC_META, &w->payload, NULL);
}

/* Call sites: after the strings they name; chunks refer to them. */
static int flush_stacks(struct ift_writer *w)
{
	if (w->nstacks == w->stacks_flushed)
		return 0;
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, w->stacks_flushed + 1);
	ift_buf_varint(&w->payload, w->nstacks - w->stacks_flushed);
	ift_buf_put(&w->payload, w->stacks.data, w->stacks.len);
	ift_buf_clear(&w->stacks);
	w->stacks_flushed = w->nstacks;
	return write_section(w, IFT_SEC_STACKS, &w->payload, NULL);
}

/* What must be in the file before any chunk can refer to it. */
static int flush_dicts(struct ift_writer *w)
{
	int ret;

	if ((ret = flush_strings(w)) < 0 || (ret = flush_stacks(w)) < 0)
		return ret;
	return flush_ops(w);
}

static int write_schema(struct ift_writer *w, unsigned table)
{
	const struct ift_table_def *def = w->t[table].def;

	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, table);
	ift_buf_str(&w->payload, def->name);
	ift_buf_varint(&w->payload, 0);
	ift_buf_varint(&w->payload, def->ncols);
	for (unsigned c = 0; c < def->ncols; c++) {
		ift_buf_varint(&w->payload, c);
		ift_buf_str(&w->payload, def->cols[c].name);
		ift_buf_u8(&w->payload, (uint8_t)def->cols[c].type);
	}
	return write_section(w, IFT_SEC_SCHEMA, &w->payload, NULL);
}

static bool all_zero(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

/*
 * The column a column is usually a function of (a tgid of its tid), or -1.
 * Key columns are written before the columns that depend on them.
 */
static int func_key(unsigned table, unsigned col)
{
	if (col == IFT_C_PID)
		return IFT_C_TID;
	if (table == IFT_T_SWITCHES && col == IFT_SW_NEXT_PID)
		return IFT_SW_NEXT_TID;
	if (table == IFT_T_WAKEUPS && col == IFT_WK_WAKER_PID)
		return IFT_WK_WAKER_TID;
	return -1;
}

/* The column whose per-key deltas may encode COL better, or -1. */
static int keydelta_key(unsigned col)
{
	return col == IFT_C_TS || col == IFT_C_TID ? IFT_C_CPU : -1;
}

static int flush_table(struct ift_writer *w, unsigned table)
{
	struct wtable *t = &w->t[table];
	int key;
	uint64_t ts_min, ts_max;
	struct buf ix;
	size_t bound;
	int ret;

	if (!t->n)
		return 0;
	if ((ret = flush_dicts(w)) < 0)
		return ret;
	if (!t->schema_written) {
		if ((ret = write_schema(w, table)) < 0)
			return ret;
		t->schema_written = true;
	}

	/*
	 * Columns other columns are encoded against come first, as a reader
	 * decodes in file order: the CPU (per-CPU deltas of ts and tid), then
	 * the rest, then the FUNC columns (a tgid from its tid).
	 */
	ift_buf_clear(&w->body);
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned c = 0; c < t->def->ncols; c++) {
			int kd = keydelta_key(c);

			key = func_key(table, c);
			if ((pass == 0) != (c == IFT_C_CPU) ||
			    (pass == 2) != (key >= 0) || all_zero(t->cols[c], t->n))
				continue;
			ift_buf_varint(&w->body, c);
			if (key >= 0 && ift_col_encode_func(&w->body, t->cols[c],
							t->cols[key], (unsigned)key,
							t->n, &w->scratch))
				continue;
			if (kd < 0 || all_zero(t->cols[kd], t->n)) {
				ift_col_encode(&w->body, t->cols[c], t->n, &w->scratch);
				continue;
			}
			/*
			 * Per-CPU deltas are about as many bytes as plain ones
			 * but far more regular, so zstd does much better on
			 * them (18% less on a page-allocation storm spread over
			 * two CPUs): they win unless clearly larger.  Once they
			 * won, the next chunks use them without the comparison
			 * (it costs a second encoding), until every 8th chunk
			 * checks again.  Timestamps go as byte planes
			 * (KEYDELTA_PLANES), chosen on the same varint count.
			 */
			if (t->keydelta_trust[c]) {
				t->keydelta_trust[c]--;
				if (ift_col_encode_keydelta(&w->body, t->cols[c], t->cols[kd],
							(unsigned)kd, t->n, SIZE_MAX,
							c == IFT_C_TS))
					continue;
				t->keydelta_trust[c] = 0;
			}
			ift_buf_clear(&w->alt);
			ift_col_encode(&w->alt, t->cols[c], t->n, &w->scratch);
			if (ift_col_encode_keydelta(&w->body, t->cols[c], t->cols[kd],
						(unsigned)kd, t->n, w->alt.len + w->alt.len / 4,
						c == IFT_C_TS))
				t->keydelta_trust[c] = 7;
			else
				ift_buf_put(&w->body, w->alt.data, w->alt.len);
		}
	}
	if (w->body.oom || w->scratch.oom || w->alt.oom)
		return w->err = -ENOMEM;

	ts_min = t->cols[IFT_C_TS][0];
	ts_max = t->cols[IFT_C_TS][t->n - 1];
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, table);
	ift_buf_varint(&w->payload, t->n);
	ift_buf_varint(&w->payload, ts_min);
	ift_buf_varint(&w->payload, ts_max - ts_min);

	bound = ZSTD_compressBound(w->body.len);
	if (w->level >= 0 && ift_buf_reserve(&w->payload, 1 + 10 + bound)) {
		uint8_t *hdr = w->payload.data + w->payload.len;
		size_t at = w->payload.len + 1 + varint_size(w->body.len);
		size_t n = ZSTD_compress2(w->zc, w->payload.data + at, bound,
					  w->body.data, w->body.len);

		if (ZSTD_isError(n))
			return w->err = -IFT_E_COMPRESS;
		if (n < w->body.len) {
			*hdr = IFT_CODEC_ZSTD;
			w->payload.len++;
			ift_buf_varint(&w->payload, w->body.len);
			w->payload.len += n;
			goto write;
		}
	}
	ift_buf_u8(&w->payload, IFT_CODEC_NONE);
	ift_buf_varint(&w->payload, w->body.len);
	ift_buf_put(&w->payload, w->body.data, w->body.len);
write:
	ift_buf_init(&ix);
	ift_buf_varint(&ix, table);
	ift_buf_varint(&ix, t->n);
	ift_buf_varint(&ix, ts_min);
	ift_buf_varint(&ix, ts_max - ts_min);
	ret = write_section(w, IFT_SEC_CHUNK, &w->payload, &ix);
	ift_buf_release(&ix);
	t->n = 0;
	return ret;
}

static int write_header(struct ift_writer *w)
{
	uint8_t h[IFT_HEADER_SIZE] = { 0 };
	struct timespec now;
	struct iovec iov;

	clock_gettime(CLOCK_REALTIME, &now);
	memcpy(h, IFT_MAGIC, 8);
	ift_put_le16(h + 8, IFT_FORMAT_VERSION);
	ift_put_le16(h + 10, IFT_FORMAT_MIN_VERSION);
	ift_put_le32(h + 12, IFT_HEADER_SIZE);
	ift_put_le64(h + 16, 0);
	ift_put_le64(h + 24, 0);
	ift_put_le32(h + 32, IFT_BYTE_ORDER);
	ift_put_le64(h + 40, (uint64_t)now.tv_sec * 1000000000ULL +
		 (uint64_t)now.tv_nsec);
	ift_put_le32(h + 60, (uint32_t)crc32(0, h, 60));
	iov.iov_base = h;
	iov.iov_len = sizeof(h);
	return write_all(w, &iov, 1);
}

/* ---- API ------------------------------------------------------------- */

struct ift_writer *ift_writer_create(const char *path,
				     const struct ift_writer_opts *opts)
{
	struct ift_writer *w;
	int ret = -ENOMEM;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out.fd = w->out.dirfd = -1;
	w->chunk_rows = opts && opts->chunk_rows ? opts->chunk_rows :
			DEFAULT_CHUNK_ROWS;
	if (w->chunk_rows > IFT_MAX_CHUNK_ROWS)
		w->chunk_rows = IFT_MAX_CHUNK_ROWS;
	w->level = opts && opts->zstd_level ? opts->zstd_level :
		   DEFAULT_ZSTD_LEVEL;
	if (opts)
		w->opts = *opts;
	ift_taskmap_init(&w->tasks);

	w->zc = ZSTD_createCCtx();
	if (!w->zc)
		goto fail;
	/* the parameters stay for every ZSTD_compress2() */
	if (w->level >= 0 &&
	    (ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, w->level)) ||
	     (w->chunk_rows <= SMALL_CHUNK_ROWS &&
	      (ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_hashLog, SMALL_TABLE_LOG)) ||
	       ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_chainLog, SMALL_TABLE_LOG))))))
		goto fail;
	for (unsigned t = 1; t < IFT_T_NR; t++) {
		w->t[t].def = ift_table_def(t);
		for (unsigned c = 0; c < w->t[t].def->ncols; c++) {
			w->t[t].cols[c] = malloc(w->chunk_rows * sizeof(uint64_t));
			if (!w->t[t].cols[c])
				goto fail;
		}
	}

	ret = ift_outfile_create(&w->out, path, opts && opts->give, opts ? opts->uid : 0,
				 opts ? opts->gid : 0);
	if (ret < 0)
		goto fail;
	ret = write_header(w);
	if (ret < 0)
		goto fail;
	return w;
fail:
	ift_outfile_remove(&w->out);
	ift_writer_free(w);
	errno = -ret;
	return NULL;
}

/* KEY's last value, kept for the head of the next piece. */
static int meta_keep(struct ift_writer *w, const char *key, const char *value)
{
	struct meta_kv *kv = NULL;
	char *v = strdup(value);

	for (size_t i = 0; i < w->nmeta_all && !kv; i++)
		if (!strcmp(w->meta_all[i].key, key))
			kv = &w->meta_all[i];
	if (!kv && v) {
		struct meta_kv *all = realloc(w->meta_all, (w->nmeta_all + 1) * sizeof(*all));
		char *k = strdup(key);

		if (all)
			w->meta_all = all;
		if (!all || !k) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		kv = &w->meta_all[w->nmeta_all++];
		*kv = (struct meta_kv){ k, NULL };
	}
	if (!v)
		return -ENOMEM;
	free(kv->value);
	kv->value = v;
	return 0;
}

int ift_writer_meta(struct ift_writer *w, const char *key, const char *value)
{
	if (w->finished)
		return -IFT_E_FINISHED;
	if (!value)
		value = "";
	ift_buf_str(&w->meta, key);
	ift_buf_str(&w->meta, value);
	w->nmeta++;
	return w->meta.oom ? -ENOMEM : meta_keep(w, key, value);
}

int ift_writer_metaf(struct ift_writer *w, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	ret = ift_writer_meta(w, key, s);
	free(s);
	return ret;
}

int64_t ift_writer_string(struct ift_writer *w, const char *s)
{
	if (!s || !*s)
		return 0;
	return string_id(&w->strings, s);
}

int ift_writer_op(struct ift_writer *w, const struct ift_op *op)
{
	if (w->finished)
		return -IFT_E_FINISHED;
	if (op->nargs > IFT_CALL_MAX_ARGS || !op->name || !*op->name)
		return -EINVAL;
	for (unsigned i = 0; i < op->nargs; i++)
		if (!op->args[i] || !ift_arg_name_ok(op->args[i], strlen(op->args[i])))
			return -EINVAL;
	for (int k = 0; k < 2; k++) {
		struct buf *b = k ? &w->ops_all : &w->ops;

		ift_buf_str(b, op->name);
		ift_buf_varint(b, op->api);
		ift_buf_varint(b, op->nargs);
		for (unsigned i = 0; i < op->nargs; i++)
			ift_buf_str(b, op->args[i]);
	}
	if (w->ops.oom || w->ops_all.oom)
		return -ENOMEM;
	return (int)++w->nops;
}

int ift_writer_library(struct ift_writer *w, const struct ift_library *lib)
{
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	if ((ret = flush_dicts(w)) < 0)
		return ret;
	ift_buf_clear(&w->payload);
	ift_buf_str(&w->payload, lib->path);
	ift_buf_bytes(&w->payload, lib->build_id, lib->build_id_len);
	ift_buf_varint(&w->payload, lib->dev);
	ift_buf_varint(&w->payload, lib->ino);
	ift_buf_varint(&w->payload, lib->functions);
	ift_buf_str(&w->payload, lib->kind);
	ift_buf_bytes(&w->libs_all, w->payload.data, w->payload.len);
	if (w->libs_all.oom)
		return -ENOMEM;
	return write_section(w, IFT_SEC_LIBRARY, &w->payload, NULL);
}

int64_t ift_writer_stack(struct ift_writer *w, const struct ift_frame *frames,
			 unsigned nframes)
{
	if (w->finished)
		return -IFT_E_FINISHED;
	if (nframes > IFT_STACK_MAX_FRAMES)
		nframes = IFT_STACK_MAX_FRAMES;
	size_t at = w->stacks.len;

	ift_buf_varint(&w->stacks, nframes);
	for (unsigned i = 0; i < nframes; i++) {
		int64_t mod = ift_writer_string(w, frames[i].module);
		int64_t sym = ift_writer_string(w, frames[i].symbol);

		if (mod < 0 || sym < 0)
			return mod < 0 ? mod : sym;
		ift_buf_varint(&w->stacks, (uint64_t)mod);
		ift_buf_varint(&w->stacks, frames[i].offset);
		ift_buf_varint(&w->stacks, (uint64_t)sym);
		ift_buf_varint(&w->stacks, frames[i].symoff);
		ift_buf_varint(&w->stacks, frames[i].flags);
	}
	ift_buf_put(&w->stacks_all, w->stacks.data + at, w->stacks.len - at);
	if (w->stacks.oom || w->stacks_all.oom)
		return -ENOMEM;
	return (int64_t)++w->nstacks;
}

int ift_writer_task(struct ift_writer *w, const struct ift_task *t)
{
	struct trec *r;
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	if (w->tasks.n >= IFT_MAX_TASKS)
		return -IFT_E_LIMIT;
	if (!(r = ift_taskmap_add(&w->tasks, t->tid)))
		return -ENOMEM;
	r->pid = t->pid;
	r->ppid = t->ppid;
	r->flags = t->flags;
	r->start_ts = t->start_ts;
	r->exit_ts = t->exit_ts;
	for (unsigned i = 0; i < t->ncomms; i++) {
		int64_t id = ift_writer_string(w, t->comms[i].comm);

		if (id < 0)
			return (int)id;
		if ((ret = ift_trec_add_comm(r, t->comms[i].ts, (uint64_t)id)) < 0)
			return ret;
	}
	return 0;
}

int ift_writer_loss(struct ift_writer *w, const struct ift_loss *loss)
{
	struct ift_loss *v;

	for (size_t i = 0; i < w->nloss; i++) {
		if (w->loss[i].cpu == loss->cpu) {
			w->loss[i] = *loss;
			return 0;
		}
	}
	v = realloc(w->loss, (w->nloss + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->loss = v;
	w->loss[w->nloss++] = *loss;
	return 0;
}

int ift_writer_append(struct ift_writer *w, unsigned table, const uint64_t *row)
{
	struct wtable *t;
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	if (w->err)
		return w->err;
	if (table == 0 || table >= IFT_T_NR)
		return -IFT_E_NO_TABLE;
	t = &w->t[table];
	if (t->total && row[IFT_C_TS] < t->last_ts)
		return -IFT_E_ORDER;
	if (table == IFT_T_TASKS && (ret = ift_taskmap_fold(&w->tasks, row)) < 0)
		return ret;
	for (unsigned c = 0; c < t->def->ncols; c++)
		t->cols[c][t->n] = row[c];
	t->n++;
	t->total++;
	t->last_ts = row[IFT_C_TS];
	if (t->n == w->chunk_rows)
		return flush_table(w, table);
	return 0;
}

int ift_writer_flush(struct ift_writer *w)
{
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	for (unsigned t = 1; t < IFT_T_NR; t++)
		if ((ret = flush_table(w, t)) < 0)
			return ret;
	if ((ret = flush_dicts(w)) < 0)
		return ret;
	/* last: a value set before the flush describes the chunks before it */
	return flush_meta(w);
}

uint64_t ift_writer_bytes(const struct ift_writer *w)
{
	return w->off;
}

uint64_t ift_writer_rows(const struct ift_writer *w, unsigned table)
{
	return table && table < IFT_T_NR ? w->t[table].total : 0;
}

static int write_loss(struct ift_writer *w)
{
	if (!w->nloss)
		return 0;
	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, w->nloss);
	for (size_t i = 0; i < w->nloss; i++) {
		ift_buf_varint(&w->payload, w->loss[i].cpu);
		ift_buf_varint(&w->payload, w->loss[i].overrun);
		ift_buf_varint(&w->payload, w->loss[i].commit_overrun);
		ift_buf_varint(&w->payload, w->loss[i].dropped);
		ift_buf_varint(&w->payload, w->loss[i].read);
	}
	return write_section(w, IFT_SEC_LOSS, &w->payload, NULL);
}

static int write_tasks(struct ift_writer *w)
{
	const struct taskmap *m = &w->tasks;

	ift_buf_clear(&w->payload);
	ift_buf_varint(&w->payload, m->n);
	for (size_t i = 0; i < m->n; i++) {
		const struct trec *r = &m->v[i];

		ift_buf_varint(&w->payload, r->tid);
		ift_buf_varint(&w->payload, r->pid);
		ift_buf_varint(&w->payload, r->ppid);
		ift_buf_varint(&w->payload, r->flags);
		ift_buf_varint(&w->payload, r->start_ts);
		ift_buf_varint(&w->payload, r->exit_ts);
		ift_buf_varint(&w->payload, r->ncomms);
		for (uint32_t k = 0; k < r->ncomms; k++) {
			ift_buf_varint(&w->payload, r->comms[k].ts);
			ift_buf_varint(&w->payload, r->comms[k].str);
		}
	}
	return write_section(w, IFT_SEC_TASKS, &w->payload, NULL);
}

static int write_index(struct ift_writer *w)
{
	uint64_t at = w->off;
	uint8_t trailer[IFT_TRAILER_SIZE];
	struct iovec iov;
	struct buf p;
	int ret;

	ift_buf_init(&p);
	ift_buf_varint(&p, w->nindex);
	ift_buf_put(&p, w->index.data, w->index.len);
	ret = write_section(w, IFT_SEC_INDEX, &p, NULL);
	ift_buf_release(&p);
	if (ret < 0)
		return ret;
	ift_put_le64(trailer, at);
	memcpy(trailer + 8, IFT_END_MAGIC, 8);
	iov.iov_base = trailer;
	iov.iov_len = sizeof(trailer);
	ret = write_all(w, &iov, 1);
	return ret < 0 ? (w->err = ret) : 0;
}

/* The rows so far, the losses, the task table, the index: the file done. */
static int close_piece(struct ift_writer *w)
{
	int ret;

	if ((ret = ift_writer_flush(w)) < 0 || (ret = write_loss(w)) < 0 ||
	    (ret = write_tasks(w)) < 0 || (ret = write_index(w)) < 0)
		return ret;
	if ((ret = ift_outfile_commit(&w->out)) < 0)
		return w->err = ret;
	return 0;
}

int ift_writer_finish(struct ift_writer *w)
{
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	ret = close_piece(w);
	w->finished = true;
	return ret;
}

/* The head of a new piece: every dictionary entry so far, under its id. */
static int open_piece(struct ift_writer *w)
{
	struct rd r;
	int ret;

	w->off = 0;
	ift_buf_clear(&w->index);
	w->nindex = 0;
	if ((ret = write_header(w)) < 0)
		return ret;
	w->strings_flushed = 0;
	ift_buf_clear(&w->ops);
	ift_buf_put(&w->ops, w->ops_all.data, w->ops_all.len);
	w->ops_flushed = 0;
	ift_buf_clear(&w->stacks);
	ift_buf_put(&w->stacks, w->stacks_all.data, w->stacks_all.len);
	w->stacks_flushed = 0;
	ift_buf_clear(&w->meta);
	w->nmeta = 0;
	for (size_t i = 0; i < w->nmeta_all; i++) {
		ift_buf_str(&w->meta, w->meta_all[i].key);
		ift_buf_str(&w->meta, w->meta_all[i].value);
		w->nmeta++;
	}
	if (w->ops.oom || w->stacks.oom || w->meta.oom)
		return -ENOMEM;
	for (unsigned t = 1; t < IFT_T_NR; t++)
		w->t[t].schema_written = false;
	if ((ret = flush_dicts(w)) < 0 || (ret = flush_meta(w)) < 0)
		return ret;
	ift_rd_init(&r, w->libs_all.data, w->libs_all.len);
	while (ift_rd_left(&r)) {
		const uint8_t *p;
		size_t n;

		/* each as ift_buf_bytes() kept it: a str of the payload's bytes */
		if (!ift_rd_str(&r, &p, &n))
			return -EINVAL;
		ift_buf_clear(&w->payload);
		ift_buf_put(&w->payload, p, n);
		if ((ret = write_section(w, IFT_SEC_LIBRARY, &w->payload, NULL)) < 0)
			return ret;
	}
	return 0;
}

int ift_writer_rotate(struct ift_writer *w, const char *path)
{
	int ret;

	if (w->finished)
		return -IFT_E_FINISHED;
	if (w->err)
		return w->err;
	if ((ret = close_piece(w)) < 0)
		goto fail;
	ift_outfile_release(&w->out);
	w->out.fd = w->out.dirfd = -1;
	ret = ift_outfile_create(&w->out, path, w->opts.give, w->opts.uid, w->opts.gid);
	if (ret < 0 || (ret = open_piece(w)) < 0)
		goto fail;
	return 0;
fail:
	w->finished = true;
	return w->err = ret;
}

void ift_writer_free(struct ift_writer *w)
{
	if (!w)
		return;
	ift_outfile_release(&w->out);
	for (unsigned t = 1; t < IFT_T_NR; t++)
		for (unsigned c = 0; c < IFT_MAX_COLS; c++)
			free(w->t[t].cols[c]);
	ift_intern_release(&w->strings);
	ift_buf_release(&w->ops);
	ift_buf_release(&w->ops_all);
	ift_buf_release(&w->meta);
	for (size_t i = 0; i < w->nmeta_all; i++) {
		free(w->meta_all[i].key);
		free(w->meta_all[i].value);
	}
	free(w->meta_all);
	ift_buf_release(&w->stacks);
	ift_buf_release(&w->stacks_all);
	ift_buf_release(&w->libs_all);
	ift_buf_release(&w->index);
	ift_buf_release(&w->body);
	ift_buf_release(&w->payload);
	ift_buf_release(&w->scratch);
	ift_buf_release(&w->alt);
	ift_taskmap_release(&w->tasks);
	free(w->loss);
	ZSTD_freeCCtx(w->zc);
	free(w);
}
