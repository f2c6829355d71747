// SPDX-License-Identifier: MIT
/*
 * The trace reader's sections (reader.h): each section's header and payload
 * read and checked, and what the metadata sections hold taken into the trace
 * (strings, ops, schemas, libraries, losses, tasks, call sites, and the list
 * of chunks).  Every length and count read from the file is checked against
 * the bytes that hold it before it is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "reader.h"
#include "util/array.h"

/* ---- small helpers --------------------------------------------------- */

int ift_pread_all(int fd, void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -IFT_E_TRUNCATED;
		p = (char *)p + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static char *dup_bytes(const uint8_t *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static bool rd_strdup(struct rd *r, char **out)
{
	const uint8_t *s;
	size_t n;

	if (!ift_rd_str(r, &s, &n))
		return false;
	*out = dup_bytes(s, n);
	return *out != NULL;
}

/* ---- section payloads ------------------------------------------------ */

static int parse_meta(struct ift_trace *t, struct rd *r)
{
	uint64_t n;

	if (!ift_rd_varint_max(r, ift_rd_left(r) / 2, &n))
		return -IFT_E_CORRUPT;
	while (n--) {
		char *k, *v;
		size_t i;

		if (!rd_strdup(r, &k))
			return -IFT_E_CORRUPT;
		if (!rd_strdup(r, &v)) {
			free(k);
			return -IFT_E_CORRUPT;
		}
		for (i = 0; i < t->nmeta; i++)
			if (!strcmp(t->meta[i].key, k))
				break;
		if (i < t->nmeta) {
			free(k);
			free(t->meta[i].value);
			t->meta[i].value = v;
			continue;
		}
		struct meta_kv *m = realloc(t->meta, (t->nmeta + 1) * sizeof(*m));

		if (!m) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		t->meta = m;
		t->meta[t->nmeta].key = k;
		t->meta[t->nmeta].value = v;
		t->nmeta++;
	}
	return 0;
}

static int parse_strings(struct ift_trace *t, struct rd *r)
{
	uint64_t first, n;
	char **v;

	if (!ift_rd_varint(r, &first) || first != t->nstrings + 1 ||
	    !ift_rd_varint_max(r, ift_rd_left(r), &n))
		return -IFT_E_CORRUPT;
	v = realloc(t->strings, (t->nstrings + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->strings = v;
	while (n--) {
		if (!rd_strdup(r, &t->strings[t->nstrings]))
			return -IFT_E_CORRUPT;
		t->nstrings++;
	}
	return 0;
}

static int parse_stacks(struct ift_trace *t, struct rd *r)
{
	uint64_t first, n, nf;
	struct rstack *v;

	if (!ift_rd_varint(r, &first) || first != t->nstacks + 1 ||
	    !ift_rd_varint_max(r, ift_rd_left(r), &n))
		return -IFT_E_CORRUPT;
	v = realloc(t->stacks, (t->nstacks + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->stacks = v;
	while (n--) {
		struct rstack *st = &t->stacks[t->nstacks];
		uint64_t flags;

		memset(st, 0, sizeof(*st));
		if (!ift_rd_varint_max(r, IFT_STACK_MAX_FRAMES, &nf))
			return -IFT_E_CORRUPT;
		st->frames = calloc(nf + 1, sizeof(*st->frames));
		st->ids = calloc(2 * nf + 1, sizeof(*st->ids));
		t->nstacks++;	/* owned from here on, freed with the trace */
		if (!st->frames || !st->ids)
			return -ENOMEM;
		for (unsigned i = 0; i < nf; i++) {
			struct ift_frame *f = &st->frames[i];

			if (!ift_rd_varint(r, &st->ids[2 * i]) ||
			    !ift_rd_varint(r, &f->offset) ||
			    !ift_rd_varint(r, &st->ids[2 * i + 1]) ||
			    !ift_rd_varint(r, &f->symoff) ||
			    !ift_rd_varint_max(r, UINT32_MAX, &flags))
				return -IFT_E_CORRUPT;
			f->flags = (unsigned)flags;
			st->s.nframes++;
		}
		st->s.frames = st->frames;
	}
	return 0;
}

/* Frees the ops from FROM on: a section that fails adds none. */
static void drop_ops(struct ift_trace *t, size_t from)
{
	while (t->nops > from) {
		struct ift_op *op = &t->ops[--t->nops];

		free((char *)op->name);
		for (unsigned a = 0; a < op->nargs; a++)
			free((char *)op->args[a]);
	}
}

static int parse_op(struct rd *r, struct ift_op *op)
{
	uint64_t api, nargs;
	const uint8_t *name;
	size_t len;
	char *s;

	memset(op, 0, sizeof(*op));
	if (!rd_strdup(r, &s))
		return -IFT_E_CORRUPT;
	op->name = s;
	if (!ift_rd_varint(r, &api) || !ift_rd_varint_max(r, IFT_CALL_MAX_ARGS, &nargs))
		return -IFT_E_CORRUPT;
	op->api = (enum ift_api)api;
	for (unsigned i = 0; i < nargs; i++) {
		if (!ift_rd_str(r, &name, &len) || !ift_arg_name_ok((const char *)name, len))
			return -IFT_E_CORRUPT;
		if (!(s = dup_bytes(name, len)))
			return -ENOMEM;
		op->args[i] = s;
		op->nargs++;
	}
	return 0;
}

static int parse_ops(struct ift_trace *t, struct rd *r)
{
	size_t before = t->nops;
	uint64_t first, n;
	struct ift_op *v;
	int ret = 0;

	if (!ift_rd_varint(r, &first) || first != t->nops + 1 ||
	    !ift_rd_varint_max(r, ift_rd_left(r) / 3, &n))
		return -IFT_E_CORRUPT;
	v = realloc(t->ops, (t->nops + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->ops = v;
	while (n-- && !ret) {
		/* owned from here on, freed with the trace or by drop_ops() */
		ret = parse_op(r, &t->ops[t->nops++]);
	}
	if (ret < 0)
		drop_ops(t, before);
	return ret;
}

static int parse_schema(struct ift_trace *t, struct rd *r)
{
	const struct ift_table_def *def;
	uint64_t table, flags, ncols, id;
	const uint8_t *name;
	struct rtable *rt;
	size_t len;
	uint8_t type;

	if (!ift_rd_varint(r, &table) || !ift_rd_str(r, &name, &len) ||
	    !ift_rd_varint(r, &flags) || !ift_rd_varint_max(r, 255, &ncols))
		return -IFT_E_CORRUPT;
	def = ift_table_def((unsigned)table);
	if (!def || table >= IFT_T_NR)
		return 0;	/* a table of a newer writer: its chunks are skipped */
	rt = &t->t[table];
	memset(rt->map, -1, sizeof(rt->map));
	while (ncols--) {
		if (!ift_rd_varint_max(r, 255, &id) || !ift_rd_str(r, &name, &len) ||
		    !ift_rd_u8(r, &type))
			return -IFT_E_CORRUPT;
		for (unsigned c = 0; c < def->ncols; c++)
			if (strlen(def->cols[c].name) == len &&
			    !memcmp(def->cols[c].name, name, len))
				rt->map[id] = (int8_t)c;
	}
	if (rt->map[0] != IFT_C_TS)
		return -IFT_E_CORRUPT;
	rt->have_schema = true;
	return 0;
}

static int parse_library(struct ift_trace *t, struct rd *r)
{
	struct ift_library *lib;
	const uint8_t *id;
	size_t idlen;
	char *path = NULL, *kind = NULL;
	uint8_t *bid = NULL;

	lib = realloc(t->libs, (t->nlibs + 1) * sizeof(*lib));
	if (!lib)
		return -ENOMEM;
	t->libs = lib;
	lib = &t->libs[t->nlibs];
	memset(lib, 0, sizeof(*lib));
	if (!rd_strdup(r, &path) || !ift_rd_str(r, &id, &idlen) ||
	    !ift_rd_varint(r, &lib->dev) || !ift_rd_varint(r, &lib->ino) ||
	    !ift_rd_varint(r, &lib->functions) || !rd_strdup(r, &kind))
		goto corrupt;
	bid = malloc(idlen + 1);
	if (!bid)
		goto corrupt;
	memcpy(bid, id, idlen);
	lib->path = path;
	lib->kind = kind;
	lib->build_id = bid;
	lib->build_id_len = idlen;
	t->nlibs++;
	return 0;
corrupt:
	free(path);
	free(kind);
	return -IFT_E_CORRUPT;
}

static int parse_loss(struct ift_trace *t, struct rd *r)
{
	uint64_t n, v[5];

	if (!ift_rd_varint_max(r, ift_rd_left(r) / 5, &n))
		return -IFT_E_CORRUPT;
	while (n--) {
		/* unread is not in the file (the meta's ring.unread_events) */
		struct ift_loss l = { 0 };
		size_t i;

		for (int k = 0; k < 5; k++)
			if (!ift_rd_varint(r, &v[k]))
				return -IFT_E_CORRUPT;
		l.cpu = (uint32_t)v[0];
		l.overrun = v[1];
		l.commit_overrun = v[2];
		l.dropped = v[3];
		l.read = v[4];
		for (i = 0; i < t->nloss; i++)
			if (t->loss[i].cpu == l.cpu)
				break;
		if (i == t->nloss) {
			struct ift_loss *p = realloc(t->loss, (i + 1) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->loss = p;
			t->nloss++;
		}
		t->loss[i] = l;
	}
	return 0;
}

static int parse_tasks(struct ift_trace *t, struct rd *r, struct taskmap *m)
{
	uint64_t n, v[6], nc, ts, str;

	if (!ift_rd_varint_max(r, ift_rd_left(r) / 7, &n))
		return -IFT_E_CORRUPT;
	while (n--) {
		struct trec *rec;

		for (int k = 0; k < 6; k++)
			if (!ift_rd_varint(r, &v[k]))
				return -IFT_E_CORRUPT;
		if (!ift_rd_varint_max(r, ift_rd_left(r) / 2, &nc))
			return -IFT_E_CORRUPT;
		rec = ift_taskmap_add(m, (uint32_t)v[0]);
		if (!rec)
			return -ENOMEM;
		rec->pid = (uint32_t)v[1];
		rec->ppid = (uint32_t)v[2];
		rec->flags = (uint32_t)v[3];
		rec->start_ts = v[4];
		rec->exit_ts = v[5];
		while (nc--) {
			if (!ift_rd_varint(r, &ts) ||
			    !ift_rd_varint_max(r, t->nstrings, &str))
				return -IFT_E_CORRUPT;
			if (ift_trec_add_comm(rec, ts, str) < 0)
				return -ENOMEM;
		}
	}
	t->have_tasks = true;
	return 0;
}

bool ift_parse_chunk_hdr(struct rd *r, struct chunk_hdr *h)
{
	return ift_rd_varint(r, &h->table) &&
	       ift_rd_varint(r, &h->nrows) && h->nrows >= 1 &&
	       h->nrows <= IFT_MAX_CHUNK_ROWS &&
	       ift_rd_varint(r, &h->ts_min) && ift_rd_varint(r, &h->ts_span) &&
	       h->ts_min + h->ts_span >= h->ts_min &&
	       ift_rd_u8(r, &h->codec) && ift_rd_varint(r, &h->body_size) &&
	       /* no column block takes more than 1 + 10 + 10 bytes a value */
	       h->body_size <= h->nrows * IFT_MAX_COLS * 21 + 1024;
}

static int add_chunk(struct ift_trace *t, uint64_t off, uint64_t size,
		     const struct chunk_hdr *h)
{
	struct rtable *rt;
	struct ift_chunk_info *ci;

	if (h->table == 0 || h->table >= IFT_T_NR)
		return 0;	/* a table we do not know */
	rt = &t->t[h->table];
	if (!rt->have_schema)
		return -IFT_E_CORRUPT;
	if (rt->nchunks &&
	    rt->chunks[rt->nchunks - 1].ts_max > h->ts_min)
		return -IFT_E_CORRUPT;
	if (ift_array_grow((void **)&rt->chunks, &rt->cap, rt->nchunks + 1, sizeof(*ci)) < 0)
		return -ENOMEM;
	ci = &rt->chunks[rt->nchunks++];
	ci->table = (unsigned)h->table;
	ci->piece = 0;		/* the file's own; a joined run sets its own */
	ci->nrows = (uint32_t)h->nrows;
	ci->ts_min = h->ts_min;
	ci->ts_max = h->ts_min + h->ts_span;
	ci->offset = off;
	ci->size = size;
	rt->rows += h->nrows;
	return 0;
}

/* ---- sections -------------------------------------------------------- */

int ift_read_sec_hdr(const struct ift_trace *t, uint64_t off, struct sec *s)
{
	return ift_read_sec_hdr_in(t->fd, t->rec.file_size, off, s);
}

int ift_read_sec_hdr_in(int fd, uint64_t size, uint64_t off, struct sec *s)
{
	uint8_t h[IFT_SECTION_HDR];
	int ret;

	if (off + IFT_SECTION_HDR > size || off + IFT_SECTION_HDR < off)
		return -IFT_E_TRUNCATED;
	ret = ift_pread_all(fd, h, sizeof(h), off);
	if (ret < 0)
		return ret;
	if (memcmp(h, IFT_SYNC, 4) || ift_le32(h + 20) != (uint32_t)crc32(0, h, 20))
		return -IFT_E_CORRUPT;
	s->fd = fd;
	s->off = off;
	s->type = ift_le16(h + 4);
	s->flags = ift_le16(h + 6);
	s->len = ift_le64(h + 8);
	s->crc = ift_le32(h + 16);
	if (s->len > size - off - IFT_SECTION_HDR)
		return -IFT_E_TRUNCATED;
	return 0;
}

int ift_read_payload_into(const struct ift_trace *t, const struct sec *s, struct buf *io)
{
	int ret;

	ift_buf_clear(io);
	if (s->len > SIZE_MAX / 2 || !ift_buf_reserve(io, (size_t)s->len))
		return -ENOMEM;
	(void)t;
	ret = ift_pread_all(s->fd, io->data, (size_t)s->len, s->off + IFT_SECTION_HDR);
	if (ret < 0)
		return ret;
	io->len = (size_t)s->len;
	if ((uint32_t)crc32(0, io->data, (uInt)s->len) != s->crc)
		return -IFT_E_CHECKSUM;
	return 0;
}

int ift_read_payload(struct ift_trace *t, const struct sec *s)
{
	return ift_read_payload_into(t, s, &t->io);
}

int ift_handle_section(struct ift_trace *t, const struct sec *s,
		   const struct chunk_hdr *ch, struct taskmap *tasks)
{
	struct chunk_hdr h;
	struct rd r;
	int ret;

	if (s->type == IFT_SEC_CHUNK && ch)
		return add_chunk(t, s->off, s->len, ch);
	if (s->type > IFT_SEC_LAST || s->type == 0)
		return (s->flags & IFT_SEC_F_REQUIRED) ? -IFT_E_FEATURE : 0;
	ret = ift_read_payload(t, s);
	if (ret < 0)
		return ret;
	ift_rd_init(&r, t->io.data, t->io.len);
	switch (s->type) {
	case IFT_SEC_META:
		return parse_meta(t, &r);
	case IFT_SEC_STRINGS:
		return parse_strings(t, &r);
	case IFT_SEC_SCHEMA:
		return parse_schema(t, &r);
	case IFT_SEC_OPS:
		return parse_ops(t, &r);
	case IFT_SEC_LIBRARY:
		return parse_library(t, &r);
	case IFT_SEC_LOSS:
		return parse_loss(t, &r);
	case IFT_SEC_TASKS:
		ift_taskmap_release(tasks);
		return parse_tasks(t, &r, tasks);
	case IFT_SEC_CHUNK:
		if (!ift_parse_chunk_hdr(&r, &h))
			return -IFT_E_CORRUPT;
		return add_chunk(t, s->off, s->len, &h);
	case IFT_SEC_STACKS:
		return parse_stacks(t, &r);
	case IFT_SEC_INDEX:
		return 0;
	}
	return 0;
}
