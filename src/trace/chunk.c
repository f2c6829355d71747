// SPDX-License-Identifier: MIT
/*
 * The trace reader's chunks (reader.h): one CHUNK section read, checked,
 * decompressed and decoded column by column into a struct ift_chunk, with
 * the rows' times held to the range the index and the chunk header vouch for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "reader.h"

void ift_chunk_release(struct ift_chunk *c)
{
	free(c->mem);
	memset(c, 0, sizeof(*c));
}

static int chunk_alloc(struct ift_chunk *c, const struct ift_table_def *def,
		       uint32_t nrows)
{
	size_t need = (size_t)def->ncols * nrows;

	if (need > c->cap) {
		uint64_t *m = realloc(c->mem, need * sizeof(*m));

		if (!m)
			return -ENOMEM;
		c->mem = m;
		c->cap = need;
	}
	memset(c->col, 0, sizeof(c->col));
	for (unsigned i = 0; i < def->ncols; i++)
		c->col[i] = c->mem + (size_t)i * nrows;
	c->ncols = def->ncols;
	c->nrows = nrows;
	return 0;
}

int ift_chunk_load(const struct ift_trace *t, struct loadctx *lc, unsigned table,
	       size_t i, struct ift_chunk *c)
{
	const struct ift_chunk_info *ci = ift_trace_chunk_info(t, table, i);
	const struct ift_table_def *def = ift_table_def(table);
	const struct rtable *rt;
	struct chunk_hdr h;
	struct sec s;
	struct rd r;
	bool seen[IFT_MAX_COLS] = { false };
	uint64_t *keys[256] = { NULL };	/* decoded columns by file column id */
	int ret;

	if (!ci)
		return -IFT_E_NO_TABLE;
	rt = &t->t[table];
	if (ci->piece >= (t->npieces ? t->npieces : 1))
		return -IFT_E_CORRUPT;
	ret = t->npieces ? ift_read_sec_hdr_in(t->pieces[ci->piece].fd,
					       t->pieces[ci->piece].size, ci->offset, &s) :
			   ift_read_sec_hdr(t, ci->offset, &s);
	if (ret < 0)
		return ret == -IFT_E_TRUNCATED ? -IFT_E_CORRUPT : ret;
	if (s.type != IFT_SEC_CHUNK || s.len != ci->size)
		return -IFT_E_CORRUPT;
	ret = ift_read_payload_into(t, &s, &lc->io);
	if (ret < 0)
		return ret;
	ift_rd_init(&r, lc->io.data, lc->io.len);
	if (!ift_parse_chunk_hdr(&r, &h) || h.table != table || h.nrows != ci->nrows ||
	    h.ts_min != ci->ts_min || h.ts_min + h.ts_span != ci->ts_max)
		return -IFT_E_CORRUPT;

	ift_buf_clear(&lc->raw);
	if (h.codec == IFT_CODEC_ZSTD) {
		size_t n;

		if (!ift_buf_reserve(&lc->raw, (size_t)h.body_size))
			return -ENOMEM;
		n = ZSTD_decompressDCtx(lc->dz, lc->raw.data, (size_t)h.body_size,
					r.p, ift_rd_left(&r));
		if (ZSTD_isError(n) || n != h.body_size)
			return -IFT_E_DECOMPRESS;
		lc->raw.len = n;
		ift_rd_init(&r, lc->raw.data, lc->raw.len);
	} else if (h.codec != IFT_CODEC_NONE || ift_rd_left(&r) != h.body_size) {
		return -IFT_E_CORRUPT;
	}

	ret = chunk_alloc(c, def, ci->nrows);
	if (ret < 0)
		return ret;
	c->table = table;
	while (ift_rd_left(&r)) {
		uint64_t id, len;
		uint8_t enc;
		int idx;

		if (!ift_rd_varint_max(&r, 255, &id) || !ift_rd_u8(&r, &enc) ||
		    !ift_rd_varint_max(&r, ift_rd_left(&r), &len))
			return -IFT_E_CORRUPT;
		idx = rt->map[id];
		if (idx >= 0) {
			if (seen[idx])
				return -IFT_E_CORRUPT;
			seen[idx] = true;
			ret = ift_col_decode_keyed(enc, r.p, (size_t)len, c->col[idx],
					       c->nrows, keys);
			if (ret < 0)
				return ret;
			keys[id] = c->col[idx];
		}
		r.p += len;
	}
	for (unsigned k = 0; k < def->ncols; k++)
		if (!seen[k])
			memset(c->col[k], 0, c->nrows * sizeof(uint64_t));
	/* the index and the chunk header vouch for the time range: hold them to it */
	for (uint32_t k = 0; k < c->nrows; k++) {
		uint64_t ts = c->col[IFT_C_TS][k];

		if (ts < ci->ts_min || ts > ci->ts_max ||
		    (k && ts < c->col[IFT_C_TS][k - 1]))
			return -IFT_E_CORRUPT;
	}
	return 0;
}

int ift_trace_chunk_load(struct ift_trace *t, unsigned table, size_t i,
			 struct ift_chunk *c)
{
	struct loadctx lc = { t->dz, t->io, t->raw };
	int ret = ift_chunk_load(t, &lc, table, i, c);

	/* the buffers may have grown */
	t->io = lc.io;
	t->raw = lc.raw;
	return ret;
}

int ift_trace_verify(struct ift_trace *t, unsigned *table, size_t *chunk)
{
	struct ift_chunk c = { 0 };
	int ret = 0;

	for (unsigned tb = 1; tb < IFT_T_NR && !ret; tb++) {
		for (size_t i = 0; i < ift_trace_chunk_count(t, tb); i++) {
			ret = ift_trace_chunk_load(t, tb, i, &c);
			if (ret < 0) {
				*table = tb;
				*chunk = i;
				break;
			}
		}
	}
	ift_chunk_release(&c);
	return ret;
}
