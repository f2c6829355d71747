// SPDX-License-Identifier: MIT
/*
 * The trace reader.  Opening reads the metadata sections and the list of
 * chunks (from the INDEX of a finished file, or by scanning section headers);
 * chunks are decoded on demand.  Every length and count read from the file is
 * checked against the bytes that hold it before it is used, so a damaged file
 * gives an error, never a crash or an unbounded allocation.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "format.h"

struct meta_kv {
	char *key, *value;
};

struct rtable {
	struct ift_chunk_info *chunks;
	size_t nchunks, cap;
	uint64_t rows;
	bool have_schema;
	int8_t map[256];	/* file column id -> our column index, -1 unknown */
};

/* What decoding a chunk needs besides the trace: one per thread that loads. */
struct loadctx {
	ZSTD_DCtx *dz;
	struct buf io, raw;	/* io, with dz: the loadctx of the caller's thread */
};

/* A call site as read: frames name strings by id, resolved on access. */
struct rstack {
	struct ift_stack s;
	struct ift_frame *frames;
	uint64_t *ids;		/* module, symbol string id per frame */
	bool resolved;
};

struct ift_trace {
	int fd;
	unsigned version;
	uint64_t header_size;	/* where the first section starts */
	unsigned flags;
	struct ift_recovery rec;

	struct meta_kv *meta;
	size_t nmeta;

	char **strings;		/* id - 1 -> string */
	size_t nstrings;

	struct ift_op *ops;
	size_t nops;

	struct ift_library *libs;
	size_t nlibs;

	struct rstack *stacks;	/* id - 1 -> call site */
	size_t nstacks;

	struct ift_loss *loss;
	size_t nloss;

	struct ift_task *tasks;
	size_t ntasks;
	bool have_tasks, tasks_rebuilt;

	struct rtable t[IFT_T_NR];

	ZSTD_DCtx *dz;
	struct buf io, raw;
};

/* ---- small helpers --------------------------------------------------- */

static int pread_all(int fd, void *p, size_t n, uint64_t off)
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

	if (!rd_str(r, &s, &n))
		return false;
	*out = dup_bytes(s, n);
	return *out != NULL;
}

/* Grows an array of SIZE-byte elements to hold N + 1. */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return v;
	c = *cap ? *cap * 2 : 16;
	p = realloc(v, c * size);
	if (p)
		*cap = c;
	return p;
}

/* ---- section payloads ------------------------------------------------ */

static int parse_meta(struct ift_trace *t, struct rd *r)
{
	uint64_t n;

	if (!rd_varint_max(r, rd_left(r) / 2, &n))
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

	if (!rd_varint(r, &first) || first != t->nstrings + 1 ||
	    !rd_varint_max(r, rd_left(r), &n))
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

	if (!rd_varint(r, &first) || first != t->nstacks + 1 ||
	    !rd_varint_max(r, rd_left(r), &n))
		return -IFT_E_CORRUPT;
	v = realloc(t->stacks, (t->nstacks + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->stacks = v;
	while (n--) {
		struct rstack *st = &t->stacks[t->nstacks];
		uint64_t flags;

		memset(st, 0, sizeof(*st));
		if (!rd_varint_max(r, IFT_STACK_MAX_FRAMES, &nf))
			return -IFT_E_CORRUPT;
		st->frames = calloc(nf + 1, sizeof(*st->frames));
		st->ids = calloc(2 * nf + 1, sizeof(*st->ids));
		t->nstacks++;	/* owned from here on, freed with the trace */
		if (!st->frames || !st->ids)
			return -ENOMEM;
		for (unsigned i = 0; i < nf; i++) {
			struct ift_frame *f = &st->frames[i];

			if (!rd_varint(r, &st->ids[2 * i]) ||
			    !rd_varint(r, &f->offset) ||
			    !rd_varint(r, &st->ids[2 * i + 1]) ||
			    !rd_varint(r, &f->symoff) ||
			    !rd_varint_max(r, UINT32_MAX, &flags))
				return -IFT_E_CORRUPT;
			f->flags = (unsigned)flags;
			st->s.nframes++;
		}
		st->s.frames = st->frames;
	}
	return 0;
}

static int parse_ops(struct ift_trace *t, struct rd *r)
{
	uint64_t first, n, api, nargs;
	struct ift_op *v;

	if (!rd_varint(r, &first) || first != t->nops + 1 ||
	    !rd_varint_max(r, rd_left(r) / 3, &n))
		return -IFT_E_CORRUPT;
	v = realloc(t->ops, (t->nops + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->ops = v;
	while (n--) {
		struct ift_op *op = &t->ops[t->nops];
		char *s;

		memset(op, 0, sizeof(*op));
		if (!rd_strdup(r, &s))
			return -IFT_E_CORRUPT;
		op->name = s;
		t->nops++;	/* owned from here on, freed with the trace */
		if (!rd_varint(r, &api) ||
		    !rd_varint_max(r, IFT_CALL_MAX_ARGS, &nargs))
			return -IFT_E_CORRUPT;
		op->api = (enum ift_api)api;
		for (unsigned i = 0; i < nargs; i++) {
			if (!rd_strdup(r, &s))
				return -IFT_E_CORRUPT;
			op->args[i] = s;
			op->nargs++;
		}
	}
	return 0;
}

static int parse_schema(struct ift_trace *t, struct rd *r)
{
	const struct ift_table_def *def;
	uint64_t table, flags, ncols, id;
	const uint8_t *name;
	struct rtable *rt;
	size_t len;
	uint8_t type;

	if (!rd_varint(r, &table) || !rd_str(r, &name, &len) ||
	    !rd_varint(r, &flags) || !rd_varint_max(r, 255, &ncols))
		return -IFT_E_CORRUPT;
	def = ift_table_def((unsigned)table);
	if (!def || table >= IFT_T_NR)
		return 0;	/* a table of a newer writer: its chunks are skipped */
	rt = &t->t[table];
	memset(rt->map, -1, sizeof(rt->map));
	while (ncols--) {
		if (!rd_varint_max(r, 255, &id) || !rd_str(r, &name, &len) ||
		    !rd_u8(r, &type))
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
	if (!rd_strdup(r, &path) || !rd_str(r, &id, &idlen) ||
	    !rd_varint(r, &lib->dev) || !rd_varint(r, &lib->ino) ||
	    !rd_varint(r, &lib->functions) || !rd_strdup(r, &kind))
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

	if (!rd_varint_max(r, rd_left(r) / 5, &n))
		return -IFT_E_CORRUPT;
	while (n--) {
		struct ift_loss l;
		size_t i;

		for (int k = 0; k < 5; k++)
			if (!rd_varint(r, &v[k]))
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

	if (!rd_varint_max(r, rd_left(r) / 7, &n))
		return -IFT_E_CORRUPT;
	while (n--) {
		struct trec *rec;

		for (int k = 0; k < 6; k++)
			if (!rd_varint(r, &v[k]))
				return -IFT_E_CORRUPT;
		if (!rd_varint_max(r, rd_left(r) / 2, &nc))
			return -IFT_E_CORRUPT;
		rec = taskmap_add(m, (uint32_t)v[0]);
		if (!rec)
			return -ENOMEM;
		rec->pid = (uint32_t)v[1];
		rec->ppid = (uint32_t)v[2];
		rec->flags = (uint32_t)v[3];
		rec->start_ts = v[4];
		rec->exit_ts = v[5];
		while (nc--) {
			if (!rd_varint(r, &ts) ||
			    !rd_varint_max(r, t->nstrings, &str))
				return -IFT_E_CORRUPT;
			if (trec_add_comm(rec, ts, str) < 0)
				return -ENOMEM;
		}
	}
	t->have_tasks = true;
	return 0;
}

/* The uncompressed header of a CHUNK payload. */
struct chunk_hdr {
	uint64_t table, nrows, ts_min, ts_span, body_size;
	uint8_t codec;
};

static bool parse_chunk_hdr(struct rd *r, struct chunk_hdr *h)
{
	return rd_varint(r, &h->table) &&
	       rd_varint(r, &h->nrows) && h->nrows >= 1 &&
	       h->nrows <= IFT_MAX_CHUNK_ROWS &&
	       rd_varint(r, &h->ts_min) && rd_varint(r, &h->ts_span) &&
	       h->ts_min + h->ts_span >= h->ts_min &&
	       rd_u8(r, &h->codec) && rd_varint(r, &h->body_size) &&
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
	ci = grow(rt->chunks, rt->nchunks, &rt->cap, sizeof(*ci));
	if (!ci)
		return -ENOMEM;
	rt->chunks = ci;
	ci = &rt->chunks[rt->nchunks++];
	ci->table = (unsigned)h->table;
	ci->nrows = (uint32_t)h->nrows;
	ci->ts_min = h->ts_min;
	ci->ts_max = h->ts_min + h->ts_span;
	ci->offset = off;
	ci->size = size;
	rt->rows += h->nrows;
	return 0;
}

/* ---- sections -------------------------------------------------------- */

struct sec {
	uint64_t off;
	uint16_t type, flags;
	uint64_t len;
	uint32_t crc;
};

/* Reads and checks the header of the section at OFF. */
static int read_sec_hdr(const struct ift_trace *t, uint64_t off, struct sec *s)
{
	uint8_t h[IFT_SECTION_HDR];
	int ret;

	if (off + IFT_SECTION_HDR > t->rec.file_size || off + IFT_SECTION_HDR < off)
		return -IFT_E_TRUNCATED;
	ret = pread_all(t->fd, h, sizeof(h), off);
	if (ret < 0)
		return ret;
	if (memcmp(h, IFT_SYNC, 4) || le32(h + 20) != (uint32_t)crc32(0, h, 20))
		return -IFT_E_CORRUPT;
	s->off = off;
	s->type = le16(h + 4);
	s->flags = le16(h + 6);
	s->len = le64(h + 8);
	s->crc = le32(h + 16);
	if (s->len > t->rec.file_size - off - IFT_SECTION_HDR)
		return -IFT_E_TRUNCATED;
	return 0;
}

/* Reads the payload of S into IO and checks its checksum. */
static int read_payload_into(const struct ift_trace *t, const struct sec *s, struct buf *io)
{
	int ret;

	buf_clear(io);
	if (s->len > SIZE_MAX / 2 || !buf_reserve(io, (size_t)s->len))
		return -ENOMEM;
	ret = pread_all(t->fd, io->data, (size_t)s->len, s->off + IFT_SECTION_HDR);
	if (ret < 0)
		return ret;
	io->len = (size_t)s->len;
	if ((uint32_t)crc32(0, io->data, (uInt)s->len) != s->crc)
		return -IFT_E_CHECKSUM;
	return 0;
}

/* Reads the payload of S into t->io and checks its checksum. */
static int read_payload(struct ift_trace *t, const struct sec *s)
{
	return read_payload_into(t, s, &t->io);
}

/*
 * Handles one section.  For a chunk listed in the INDEX, CH is its header as
 * the index gives it and the payload is read only when the chunk is loaded;
 * otherwise the payload is read and its checksum checked here.
 */
static int handle_section(struct ift_trace *t, const struct sec *s,
			  const struct chunk_hdr *ch, struct taskmap *tasks)
{
	struct chunk_hdr h;
	struct rd r;
	int ret;

	if (s->type == IFT_SEC_CHUNK && ch)
		return add_chunk(t, s->off, s->len, ch);
	if (s->type > IFT_SEC_LAST || s->type == 0)
		return (s->flags & IFT_SEC_F_REQUIRED) ? -IFT_E_FEATURE : 0;
	ret = read_payload(t, s);
	if (ret < 0)
		return ret;
	rd_init(&r, t->io.data, t->io.len);
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
		taskmap_release(tasks);
		return parse_tasks(t, &r, tasks);
	case IFT_SEC_CHUNK:
		if (!parse_chunk_hdr(&r, &h))
			return -IFT_E_CORRUPT;
		return add_chunk(t, s->off, s->len, &h);
	case IFT_SEC_STACKS:
		return parse_stacks(t, &r);
	case IFT_SEC_INDEX:
		return 0;
	}
	return 0;
}

static void reset_contents(struct ift_trace *t, struct taskmap *tasks);

/* Whether the chunk at OFF says it belongs to TABLE. */
static bool chunk_table_is(struct ift_trace *t, uint64_t off, uint64_t table)
{
	uint8_t head[IFT_SECTION_HDR + 10];
	uint64_t v;
	struct rd r;

	if (off + sizeof(head) > t->rec.file_size ||
	    pread_all(t->fd, head, sizeof(head), off) < 0 ||
	    memcmp(head, IFT_SYNC, 4) || le16(head + 4) != IFT_SEC_CHUNK)
		return false;
	rd_init(&r, head + IFT_SECTION_HDR, 10);
	return rd_varint(&r, &v) && v == table;
}

/* Opens through the INDEX of a finished file; < 0 means: scan instead. */
static int open_indexed(struct ift_trace *t, struct taskmap *tasks)
{
	uint8_t tr[IFT_TRAILER_SIZE];
	struct sec idx, s;
	struct rd r;
	uint64_t n, prev_end = t->header_size;
	uint8_t *copy;
	int ret;

	if (t->rec.file_size < IFT_HEADER_SIZE + IFT_SECTION_HDR + IFT_TRAILER_SIZE)
		return -IFT_E_TRUNCATED;
	ret = pread_all(t->fd, tr, sizeof(tr), t->rec.file_size - sizeof(tr));
	if (ret < 0)
		return ret;
	if (memcmp(tr + 8, IFT_END_MAGIC, 8))
		return -IFT_E_TRUNCATED;
	ret = read_sec_hdr(t, le64(tr), &idx);
	if (ret < 0)
		return ret;
	if (idx.type != IFT_SEC_INDEX ||
	    idx.off + IFT_SECTION_HDR + idx.len + IFT_TRAILER_SIZE != t->rec.file_size)
		return -IFT_E_CORRUPT;
	ret = read_payload(t, &idx);
	if (ret < 0)
		return ret;
	/* handle_section reuses t->io */
	copy = malloc(t->io.len ? t->io.len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, t->io.data, t->io.len);
	rd_init(&r, copy, t->io.len);
	ret = -IFT_E_CORRUPT;
	if (!rd_varint_max(&r, rd_left(&r) / 2, &n))
		goto out;
	while (n--) {
		struct chunk_hdr h;
		uint64_t off, type, next;

		if (!rd_varint(&r, &off) || !rd_varint(&r, &type) ||
		    off != prev_end || type > UINT16_MAX)
			goto out;
		s.off = off;
		s.type = (uint16_t)type;
		s.flags = 0;
		if (type == IFT_SEC_CHUNK) {
			if (!rd_varint(&r, &h.table) || !rd_varint(&r, &h.nrows) ||
			    !rd_varint(&r, &h.ts_min) || !rd_varint(&r, &h.ts_span) ||
			    h.nrows == 0 || h.nrows > IFT_MAX_CHUNK_ROWS ||
			    h.ts_min + h.ts_span < h.ts_min)
				goto out;
			/* sections are contiguous: a chunk ends where the next starts */
			next = n ? 0 : idx.off;
			if (n) {
				struct rd peek = r;

				if (!rd_varint(&peek, &next))
					goto out;
			}
			if (next < off + IFT_SECTION_HDR)
				goto out;
			s.len = next - off - IFT_SECTION_HDR;
			prev_end = next;
			/*
			 * A chunk of a table we do not know is skipped unread:
			 * make sure the index does not hide one we do know.
			 */
			if ((h.table == 0 || h.table >= IFT_T_NR) &&
			    !chunk_table_is(t, off, h.table))
				goto out;
			ret = handle_section(t, &s, &h, tasks);
		} else {
			ret = read_sec_hdr(t, off, &s);
			if (ret < 0 || s.type != type)
				goto bad;
			prev_end = off + IFT_SECTION_HDR + s.len;
			ret = handle_section(t, &s, NULL, tasks);
		}
		if (ret < 0)
			goto bad;
		ret = -IFT_E_CORRUPT;
	}
	ret = prev_end == idx.off && !rd_left(&r) ? 0 : -IFT_E_CORRUPT;
	goto out;
bad:
	if (ret >= 0 || ret == -IFT_E_TRUNCATED || ret == -IFT_E_CHECKSUM)
		ret = -IFT_E_CORRUPT;
out:
	free(copy);
	if (ret == 0)
		t->rec.finished = true;
	return ret;
}

/* Opens by reading every section in order, stopping at the first bad one. */
static int open_scan(struct ift_trace *t, struct taskmap *tasks)
{
	uint64_t off = t->header_size;
	struct sec s;
	int ret = 0;

	while (off < t->rec.file_size) {
		/* a finished file ends with INDEX and the trailer */
		if (t->rec.file_size - off == IFT_TRAILER_SIZE) {
			uint8_t tr[IFT_TRAILER_SIZE];

			ret = pread_all(t->fd, tr, sizeof(tr), off);
			if (ret < 0)
				return ret;
			if (!memcmp(tr + 8, IFT_END_MAGIC, 8)) {
				t->rec.finished = true;
				off += IFT_TRAILER_SIZE;
				break;
			}
		}
		ret = read_sec_hdr(t, off, &s);
		if (ret < 0)
			break;
		/* handle_section checks the payload checksum of every section */
		ret = handle_section(t, &s, NULL, tasks);
		if (ret == -ENOMEM || ret == -IFT_E_FEATURE)
			return ret;
		if (ret < 0)
			break;
		off += IFT_SECTION_HDR + s.len;
	}
	t->rec.good_bytes = off;
	if (off < t->rec.file_size) {
		t->rec.damaged = true;
		t->rec.finished = false;
		t->rec.reason = ret < 0 ? ret : -IFT_E_CORRUPT;
	}
	return 0;
}

static int check_header(struct ift_trace *t)
{
	uint8_t h[IFT_HEADER_SIZE];
	uint64_t req;
	int ret;

	if (t->rec.file_size == 0)
		return -IFT_E_EMPTY;
	if (t->rec.file_size < IFT_HEADER_SIZE) {
		size_t n = (size_t)t->rec.file_size;

		ret = pread_all(t->fd, h, n, 0);
		if (ret < 0)
			return ret;
		return memcmp(h, IFT_MAGIC, n < 8 ? n : 8) ? -IFT_E_NOT_TRACE :
							     -IFT_E_TRUNCATED;
	}
	ret = pread_all(t->fd, h, sizeof(h), 0);
	if (ret < 0)
		return ret;
	if (memcmp(h, IFT_MAGIC, 8))
		return -IFT_E_NOT_TRACE;
	if (le32(h + 60) != (uint32_t)crc32(0, h, 60))
		return -IFT_E_HEADER;
	if (le32(h + 32) != IFT_BYTE_ORDER)
		return -IFT_E_BYTE_ORDER;
	t->version = le16(h + 8);
	if (le16(h + 10) > IFT_FORMAT_VERSION)
		return -IFT_E_TOO_NEW;
	req = le64(h + 16);
	if (req & ~IFT_KNOWN_REQUIRED)
		return -IFT_E_FEATURE;
	/* a newer writer may grow the header: skip what we do not know */
	t->header_size = le32(h + 12);
	if (t->header_size < IFT_HEADER_SIZE)
		return -IFT_E_HEADER;
	if (t->header_size > t->rec.file_size)
		return -IFT_E_TRUNCATED;
	return 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct ift_task *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ts != y->start_ts)
		return x->start_ts < y->start_ts ? -1 : 1;
	/*
	 * Records of one tid tied on start time (tasks not seen starting have
	 * 0): a later one is only made once the one before it exited, so
	 * exited first, by exit time, is the order they lived in.  qsort need
	 * not keep equal keys in place, and ift_trace_task_find relies on it.
	 */
	if ((x->flags ^ y->flags) & IFT_TASK_F_EXITED)
		return x->flags & IFT_TASK_F_EXITED ? -1 : 1;
	return (x->exit_ts > y->exit_ts) - (x->exit_ts < y->exit_ts);
}

static int rebuild_tasks(struct ift_trace *t, struct taskmap *m)
{
	struct ift_chunk c = { 0 };
	int ret = 0;

	taskmap_release(m);
	/* rows a crafted file can declare cheaply must not cost unbounded time */
	if (t->t[IFT_T_TASKS].rows > IFT_MAX_TASK_ROWS)
		return -IFT_E_LIMIT;
	for (size_t i = 0; i < t->t[IFT_T_TASKS].nchunks && !ret; i++) {
		uint64_t row[IFT_TK_NR];

		ret = ift_trace_chunk_load(t, IFT_T_TASKS, i, &c);
		for (uint32_t k = 0; !ret && k < c.nrows; k++) {
			for (unsigned col = 0; col < IFT_TK_NR; col++)
				row[col] = c.col[col][k];
			ret = taskmap_fold(m, row);
		}
	}
	ift_chunk_release(&c);
	t->tasks_rebuilt = true;
	return ret;
}

/* Turns the folded records into the public task table. */
static int publish_tasks(struct ift_trace *t, struct taskmap *m)
{
	t->tasks = calloc(m->n ? m->n : 1, sizeof(*t->tasks));
	if (!t->tasks)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct trec *r = &m->v[i];
		struct ift_task *k = &t->tasks[t->ntasks++];

		k->tid = r->tid;
		k->pid = r->pid;
		k->ppid = r->ppid;
		k->flags = r->flags;
		k->start_ts = r->start_ts;
		k->exit_ts = r->exit_ts;
		k->comms = calloc(r->ncomms ? r->ncomms : 1, sizeof(*k->comms));
		if (!k->comms)
			return -ENOMEM;
		for (uint32_t c = 0; c < r->ncomms; c++) {
			const char *s = ift_trace_string(t, r->comms[c].str);

			if (!s)
				return -IFT_E_CORRUPT;
			k->comms[c].ts = r->comms[c].ts;
			k->comms[c].comm = s;
		}
		k->ncomms = r->ncomms;
	}
	qsort(t->tasks, t->ntasks, sizeof(*t->tasks), cmp_task);
	return 0;
}

static void reset_contents(struct ift_trace *t, struct taskmap *tasks)
{
	for (size_t i = 0; i < t->nmeta; i++) {
		free(t->meta[i].key);
		free(t->meta[i].value);
	}
	free(t->meta);
	t->meta = NULL;
	t->nmeta = 0;
	for (size_t i = 0; i < t->nstrings; i++)
		free(t->strings[i]);
	free(t->strings);
	t->strings = NULL;
	t->nstrings = 0;
	for (size_t i = 0; i < t->nops; i++) {
		free((char *)t->ops[i].name);
		for (unsigned a = 0; a < t->ops[i].nargs; a++)
			free((char *)t->ops[i].args[a]);
	}
	free(t->ops);
	t->ops = NULL;
	t->nops = 0;
	for (size_t i = 0; i < t->nlibs; i++) {
		free((char *)t->libs[i].path);
		free((char *)t->libs[i].kind);
		free((uint8_t *)t->libs[i].build_id);
	}
	free(t->libs);
	t->libs = NULL;
	t->nlibs = 0;
	for (size_t i = 0; i < t->nstacks; i++) {
		free(t->stacks[i].frames);
		free(t->stacks[i].ids);
	}
	free(t->stacks);
	t->stacks = NULL;
	t->nstacks = 0;
	free(t->loss);
	t->loss = NULL;
	t->nloss = 0;
	for (unsigned i = 0; i < IFT_T_NR; i++)
		free(t->t[i].chunks);
	memset(t->t, 0, sizeof(t->t));
	t->have_tasks = false;
	t->rec.finished = false;
	if (tasks)
		taskmap_release(tasks);
}

int ift_trace_open(const char *path, unsigned flags, struct ift_trace **out)
{
	struct ift_trace *t;
	struct taskmap tasks;
	struct stat st;
	int ret;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	taskmap_init(&tasks);
	t->flags = flags;
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(t->fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto fail;
	}
	t->rec.file_size = (uint64_t)st.st_size;
	t->dz = ZSTD_createDCtx();
	if (!t->dz) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = check_header(t);
	if (ret < 0)
		goto fail;

	ret = -1;
	if (!(flags & (IFT_OPEN_NO_INDEX | IFT_OPEN_VERIFY)))
		ret = open_indexed(t, &tasks);
	if (ret == -ENOMEM || ret == -IFT_E_FEATURE)
		goto fail;
	if (ret < 0) {
		reset_contents(t, &tasks);
		ret = open_scan(t, &tasks);
		if (ret < 0)
			goto fail;
	} else {
		t->rec.good_bytes = t->rec.file_size;
	}

	if (!t->have_tasks)
		ret = rebuild_tasks(t, &tasks);
	if (ret == 0)
		ret = publish_tasks(t, &tasks);
	if (ret < 0)
		goto fail;
	taskmap_release(&tasks);
	*out = t;
	return 0;
fail:
	taskmap_release(&tasks);
	ift_trace_close(t);
	return ret;
}

void ift_trace_close(struct ift_trace *t)
{
	if (!t)
		return;
	reset_contents(t, NULL);
	for (size_t i = 0; i < t->ntasks; i++)
		free(t->tasks[i].comms);
	free(t->tasks);
	if (t->fd >= 0)
		close(t->fd);
	ZSTD_freeDCtx(t->dz);
	buf_release(&t->io);
	buf_release(&t->raw);
	free(t);
}

/* ---- accessors ------------------------------------------------------- */

const struct ift_recovery *ift_trace_recovery(const struct ift_trace *t)
{
	return &t->rec;
}

unsigned ift_trace_version(const struct ift_trace *t)
{
	return t->version;
}

const char *ift_trace_meta(const struct ift_trace *t, const char *key)
{
	for (size_t i = 0; i < t->nmeta; i++)
		if (!strcmp(t->meta[i].key, key))
			return t->meta[i].value;
	return NULL;
}

size_t ift_trace_meta_count(const struct ift_trace *t)
{
	return t->nmeta;
}

void ift_trace_meta_at(const struct ift_trace *t, size_t i, const char **key,
		       const char **value)
{
	*key = t->meta[i].key;
	*value = t->meta[i].value;
}

const char *ift_trace_string(const struct ift_trace *t, uint64_t id)
{
	if (id == 0)
		return "";
	if (id > t->nstrings)
		return NULL;
	return t->strings[id - 1];
}

const struct ift_op *ift_trace_op(const struct ift_trace *t, uint64_t id)
{
	if (id == 0 || id > t->nops)
		return NULL;
	return &t->ops[id - 1];
}

size_t ift_trace_op_count(const struct ift_trace *t)
{
	return t->nops;
}

size_t ift_trace_stack_count(const struct ift_trace *t)
{
	return t->nstacks;
}

const struct ift_stack *ift_trace_stack(const struct ift_trace *t, uint64_t id)
{
	struct rstack *st;

	if (id == 0 || id > t->nstacks)
		return NULL;
	st = &t->stacks[id - 1];
	if (!st->resolved) {
		/* strings come before the stacks naming them; an id out of
		   range (a damaged file) reads as unknown */
		for (unsigned i = 0; i < st->s.nframes; i++) {
			const char *m = ift_trace_string(t, st->ids[2 * i]);
			const char *y = ift_trace_string(t, st->ids[2 * i + 1]);

			st->frames[i].module = m ? m : "";
			st->frames[i].symbol = y ? y : "";
		}
		st->resolved = true;
	}
	return &st->s;
}

size_t ift_trace_library_count(const struct ift_trace *t)
{
	return t->nlibs;
}

const struct ift_library *ift_trace_library(const struct ift_trace *t, size_t i)
{
	return i < t->nlibs ? &t->libs[i] : NULL;
}

size_t ift_trace_loss_count(const struct ift_trace *t)
{
	return t->nloss;
}

const struct ift_loss *ift_trace_loss(const struct ift_trace *t, size_t i)
{
	return i < t->nloss ? &t->loss[i] : NULL;
}

uint64_t ift_trace_lost_events(const struct ift_trace *t)
{
	uint64_t n = 0;

	for (size_t i = 0; i < t->nloss; i++)
		n += t->loss[i].overrun + t->loss[i].dropped;
	return n;
}

size_t ift_trace_task_count(const struct ift_trace *t)
{
	return t->ntasks;
}

const struct ift_task *ift_trace_task(const struct ift_trace *t, size_t i)
{
	return i < t->ntasks ? &t->tasks[i] : NULL;
}

const struct ift_task *ift_trace_task_find(const struct ift_trace *t,
					   uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = t->ntasks;
	const struct ift_task *best = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->tasks[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* records of a reused tid are sorted by start: take the last begun */
	for (; lo < t->ntasks && t->tasks[lo].tid == tid; lo++)
		if (!best || t->tasks[lo].start_ts <= ts)
			best = &t->tasks[lo];
	return best;
}

const char *ift_task_comm_at(const struct ift_task *task, uint64_t ts)
{
	const char *comm = NULL;

	for (unsigned i = 0; i < task->ncomms; i++)
		if (!comm || task->comms[i].ts <= ts)
			comm = task->comms[i].comm;
	return comm ? comm : "";
}

bool ift_trace_tasks_rebuilt(const struct ift_trace *t)
{
	return t->tasks_rebuilt;
}

uint64_t ift_trace_rows(const struct ift_trace *t, unsigned table)
{
	return table && table < IFT_T_NR ? t->t[table].rows : 0;
}

uint64_t ift_trace_ts_min(const struct ift_trace *t)
{
	uint64_t v = UINT64_MAX;
	bool any = false;

	/* UINT64_MAX is a valid time, so it cannot also mean "no rows" */
	for (unsigned i = 1; i < IFT_T_NR; i++) {
		if (t->t[i].nchunks && (!any || t->t[i].chunks[0].ts_min < v))
			v = t->t[i].chunks[0].ts_min;
		any |= t->t[i].nchunks != 0;
	}
	return any ? v : 0;
}

uint64_t ift_trace_ts_max(const struct ift_trace *t)
{
	uint64_t v = 0;

	for (unsigned i = 1; i < IFT_T_NR; i++) {
		const struct rtable *rt = &t->t[i];

		if (rt->nchunks && rt->chunks[rt->nchunks - 1].ts_max > v)
			v = rt->chunks[rt->nchunks - 1].ts_max;
	}
	return v;
}

size_t ift_trace_chunk_count(const struct ift_trace *t, unsigned table)
{
	return table && table < IFT_T_NR ? t->t[table].nchunks : 0;
}

const struct ift_chunk_info *ift_trace_chunk_info(const struct ift_trace *t,
						  unsigned table, size_t i)
{
	if (!table || table >= IFT_T_NR || i >= t->t[table].nchunks)
		return NULL;
	return &t->t[table].chunks[i];
}

size_t ift_trace_chunk_seek(const struct ift_trace *t, unsigned table,
			    uint64_t ts)
{
	const struct rtable *rt;
	size_t lo = 0, hi;

	if (!table || table >= IFT_T_NR)
		return 0;
	rt = &t->t[table];
	hi = rt->nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rt->chunks[mid].ts_max < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- chunks ---------------------------------------------------------- */

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

/* Decodes chunk I of TABLE into C with LC's buffers: safe to run in another
   thread than the trace's other users, each with its own LC. */
static int chunk_load(const struct ift_trace *t, struct loadctx *lc, unsigned table,
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
	ret = read_sec_hdr(t, ci->offset, &s);
	if (ret < 0)
		return ret == -IFT_E_TRUNCATED ? -IFT_E_CORRUPT : ret;
	if (s.type != IFT_SEC_CHUNK || s.len != ci->size)
		return -IFT_E_CORRUPT;
	ret = read_payload_into(t, &s, &lc->io);
	if (ret < 0)
		return ret;
	rd_init(&r, lc->io.data, lc->io.len);
	if (!parse_chunk_hdr(&r, &h) || h.table != table || h.nrows != ci->nrows ||
	    h.ts_min != ci->ts_min || h.ts_min + h.ts_span != ci->ts_max)
		return -IFT_E_CORRUPT;

	buf_clear(&lc->raw);
	if (h.codec == IFT_CODEC_ZSTD) {
		size_t n;

		if (!buf_reserve(&lc->raw, (size_t)h.body_size))
			return -ENOMEM;
		n = ZSTD_decompressDCtx(lc->dz, lc->raw.data, (size_t)h.body_size,
					r.p, rd_left(&r));
		if (ZSTD_isError(n) || n != h.body_size)
			return -IFT_E_DECOMPRESS;
		lc->raw.len = n;
		rd_init(&r, lc->raw.data, lc->raw.len);
	} else if (h.codec != IFT_CODEC_NONE || rd_left(&r) != h.body_size) {
		return -IFT_E_CORRUPT;
	}

	ret = chunk_alloc(c, def, ci->nrows);
	if (ret < 0)
		return ret;
	c->table = table;
	while (rd_left(&r)) {
		uint64_t id, len;
		uint8_t enc;
		int idx;

		if (!rd_varint_max(&r, 255, &id) || !rd_u8(&r, &enc) ||
		    !rd_varint_max(&r, rd_left(&r), &len))
			return -IFT_E_CORRUPT;
		idx = rt->map[id];
		if (idx >= 0) {
			if (seen[idx])
				return -IFT_E_CORRUPT;
			seen[idx] = true;
			ret = col_decode_keyed(enc, r.p, (size_t)len, c->col[idx],
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
	int ret = chunk_load(t, &lc, table, i, c);

	/* the buffers may have grown */
	t->io = lc.io;
	t->raw = lc.raw;
	return ret;
}

/* ---- cursor ---------------------------------------------------------- */

/*
 * A cursor over many chunks decodes them one ahead in a second thread (the
 * prefetcher): decompressing and decoding a chunk is about half of reading
 * a trace, and it overlaps the caller's work on the chunk before.  Each
 * table has one slot ahead; the prefetcher takes the wanted slot whose
 * chunk starts first, as that table will run out first.
 */
enum { PF_IDLE, PF_WANTED, PF_LOADING, PF_READY };

#define PF_MIN_CHUNKS	4	/* fewer ahead: not worth a thread */

struct curtab {
	unsigned table;
	size_t chunk, nchunks;
	uint32_t row;
	struct ift_chunk c;
	bool loaded, done;
	bool stale;		/* its current row moved: fill before use */
	uint64_t ts;		/* ts of its current row; UINT64_MAX when done */
	/* the prefetcher's slot, under the cursor's lock */
	struct ift_chunk pf;
	size_t pf_chunk;
	int pf_state, pf_ret;
};

struct ift_cursor {
	struct ift_trace *t;
	struct curtab tab[IFT_T_NR];
	unsigned ntab;
	uint64_t row[IFT_MAX_COLS];
	uint64_t from;

	bool threaded;
	bool stop;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a slot changed state, or stop */
	struct loadctx lc;	/* the prefetcher's buffers */
};

static struct curtab *pf_wanted(struct ift_cursor *cur)
{
	struct curtab *best = NULL;
	uint64_t best_ts = UINT64_MAX;

	for (unsigned i = 0; i < cur->ntab; i++) {
		struct curtab *ct = &cur->tab[i];
		const struct ift_chunk_info *ci;

		if (ct->pf_state != PF_WANTED)
			continue;
		ci = ift_trace_chunk_info(cur->t, ct->table, ct->pf_chunk);
		if (!best || (ci && ci->ts_min < best_ts)) {
			best = ct;
			best_ts = ci ? ci->ts_min : UINT64_MAX;
		}
	}
	return best;
}

static void *prefetcher(void *arg)
{
	struct ift_cursor *cur = arg;

	pthread_mutex_lock(&cur->lock);
	for (;;) {
		struct curtab *ct = NULL;
		size_t k;
		int ret;

		while (!cur->stop && !(ct = pf_wanted(cur)))
			pthread_cond_wait(&cur->cond, &cur->lock);
		if (cur->stop)
			break;
		ct->pf_state = PF_LOADING;
		k = ct->pf_chunk;
		pthread_mutex_unlock(&cur->lock);
		ret = chunk_load(cur->t, &cur->lc, ct->table, k, &ct->pf);
		pthread_mutex_lock(&cur->lock);
		ct->pf_ret = ret;
		ct->pf_state = PF_READY;
		pthread_cond_broadcast(&cur->cond);
	}
	pthread_mutex_unlock(&cur->lock);
	return NULL;
}

/* Loads chunk ct->chunk into ct->c, from the prefetcher's slot when it has
   it, and asks for the one after. */
static int curtab_load(struct ift_cursor *cur, struct curtab *ct)
{
	bool mine = true;
	int ret = 0;

	if (!cur->threaded)
		return ift_trace_chunk_load(cur->t, ct->table, ct->chunk, &ct->c);
	pthread_mutex_lock(&cur->lock);
	if (ct->pf_state != PF_IDLE && ct->pf_chunk == ct->chunk) {
		if (ct->pf_state == PF_WANTED) {
			/* not started: quicker to load it here */
			ct->pf_state = PF_IDLE;
		} else {
			struct ift_chunk tmp;

			while (ct->pf_state != PF_READY)
				pthread_cond_wait(&cur->cond, &cur->lock);
			tmp = ct->c;
			ct->c = ct->pf;
			ct->pf = tmp;
			ret = ct->pf_ret;
			ct->pf_state = PF_IDLE;
			mine = false;
		}
	}
	/* the slot is idle here: nothing else is ever asked of it */
	pthread_mutex_unlock(&cur->lock);
	if (mine)
		ret = ift_trace_chunk_load(cur->t, ct->table, ct->chunk, &ct->c);
	if (ret >= 0 && ct->chunk + 1 < ct->nchunks) {
		pthread_mutex_lock(&cur->lock);
		ct->pf_chunk = ct->chunk + 1;
		ct->pf_state = PF_WANTED;
		pthread_cond_broadcast(&cur->cond);
		pthread_mutex_unlock(&cur->lock);
	}
	return ret;
}

/* Makes sure CT has a current row; 0, or a negative error. */
static int curtab_fill(struct ift_cursor *cur, struct curtab *ct)
{
	int ret;

	while (!ct->done) {
		if (ct->loaded && ct->row < ct->c.nrows) {
			if (ct->c.col[IFT_C_TS][ct->row] >= cur->from)
				return 0;
			ct->row++;
			continue;
		}
		if (ct->loaded)
			ct->chunk++;
		if (ct->chunk >= ct->nchunks) {
			ct->done = true;
			break;
		}
		ret = curtab_load(cur, ct);
		if (ret < 0) {
			ct->done = true;
			return ret;
		}
		ct->loaded = true;
		ct->row = 0;
	}
	return 0;
}

static void cursor_start_prefetch(struct ift_cursor *cur)
{
	size_t ahead = 0;

	for (unsigned i = 0; i < cur->ntab; i++)
		ahead += cur->tab[i].nchunks - cur->tab[i].chunk;
	if (ahead < PF_MIN_CHUNKS)
		return;
	cur->lc.dz = ZSTD_createDCtx();
	if (!cur->lc.dz)
		return;
	if (pthread_mutex_init(&cur->lock, NULL))
		goto no_mutex;
	if (pthread_cond_init(&cur->cond, NULL))
		goto no_cond;
	if (pthread_create(&cur->thread, NULL, prefetcher, cur))
		goto no_thread;
	cur->threaded = true;
	return;
no_thread:
	pthread_cond_destroy(&cur->cond);
no_cond:
	pthread_mutex_destroy(&cur->lock);
no_mutex:
	/* reading goes on in the caller's thread alone */
	ZSTD_freeDCtx(cur->lc.dz);
	cur->lc.dz = NULL;
}

struct ift_cursor *ift_cursor_new(struct ift_trace *t, unsigned mask,
				  uint64_t ts_from)
{
	struct ift_cursor *cur = calloc(1, sizeof(*cur));

	if (!cur)
		return NULL;
	cur->t = t;
	cur->from = ts_from;
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		struct curtab *ct;

		if (!(mask & (1U << tb)) || !t->t[tb].nchunks)
			continue;
		ct = &cur->tab[cur->ntab++];
		ct->table = tb;
		ct->nchunks = t->t[tb].nchunks;
		ct->chunk = ift_trace_chunk_seek(t, tb, ts_from);
		ct->stale = true;
	}
	cursor_start_prefetch(cur);
	return cur;
}

int ift_cursor_next(struct ift_cursor *cur, struct ift_event *ev)
{
	struct curtab *best = NULL;
	int ret;

	/*
	 * Only the table that gave the last row has moved: the others keep
	 * their current row and its time, so each call fills one table.
	 */
	for (unsigned i = 0; i < cur->ntab; i++) {
		struct curtab *ct = &cur->tab[i];

		if (ct->stale) {
			ret = curtab_fill(cur, ct);
			if (ret < 0)
				return ret;
			ct->stale = false;
			ct->ts = ct->done ? UINT64_MAX : ct->c.col[IFT_C_TS][ct->row];
		}
		if (!ct->done && (!best || ct->ts < best->ts))
			best = ct;
	}
	if (!best)
		return 0;
	for (unsigned c = 0; c < best->c.ncols; c++)
		cur->row[c] = best->c.col[c][best->row];
	best->row++;
	best->stale = true;
	ev->table = best->table;
	ev->row = cur->row;
	return 1;
}

void ift_cursor_free(struct ift_cursor *cur)
{
	if (!cur)
		return;
	if (cur->threaded) {
		pthread_mutex_lock(&cur->lock);
		cur->stop = true;
		pthread_cond_broadcast(&cur->cond);
		pthread_mutex_unlock(&cur->lock);
		pthread_join(cur->thread, NULL);
		pthread_cond_destroy(&cur->cond);
		pthread_mutex_destroy(&cur->lock);
		ZSTD_freeDCtx(cur->lc.dz);
		buf_release(&cur->lc.io);
		buf_release(&cur->lc.raw);
	}
	for (unsigned i = 0; i < cur->ntab; i++) {
		ift_chunk_release(&cur->tab[i].c);
		ift_chunk_release(&cur->tab[i].pf);
	}
	free(cur);
}
