// SPDX-License-Identifier: MIT
/*
 * The pieces of one recording (record --rotate) read as one trace.  The
 * writer starts each piece with every dictionary entry so far under the
 * same ids, so the last piece's strings, ops, call sites, libraries and
 * metadata are those of the whole run, and every earlier piece's are a
 * prefix of them (checked, not trusted).  Rows keep their order across
 * pieces, so each table's chunks are the pieces' chunks one after the
 * other, each loaded from its own file.  The task table is the last
 * piece's when it was finished (it holds the run's), else every piece's
 * `tasks' rows folded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "util/array.h"

struct member {
	struct ift_trace *t;
	uint64_t seq;
};

static int cmp_seq(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Whether A's dictionaries are a prefix of the run's (B's), id for id. */
static bool prefix_of(const struct ift_trace *a, const struct ift_trace *b)
{
	if (a->nstrings > b->nstrings || a->nops > b->nops || a->nstacks > b->nstacks ||
	    a->nlibs > b->nlibs)
		return false;
	for (size_t i = 0; i < a->nstrings; i++)
		if (strcmp(a->strings[i], b->strings[i]))
			return false;
	for (size_t i = 0; i < a->nops; i++)
		if (strcmp(a->ops[i].name, b->ops[i].name) || a->ops[i].nargs != b->ops[i].nargs)
			return false;
	return true;
}

/*
 * Every table's chunks: the pieces' one after the other, in time order (a
 * piece whose rows begin before the last one's end is of another
 * recording: each reader checked its own order).  A piece writes a table's
 * schema with its first chunk of it, so a piece without rows of a table
 * has none: the columns' map is any piece's that has it, and all of those
 * must agree.
 */
static int join_chunks(struct ift_trace *base, const struct member *m, size_t n)
{
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		struct rtable joined = base->t[tb];
		int err;

		joined.chunks = NULL;
		joined.nchunks = joined.cap = 0;
		joined.rows = 0;
		for (size_t p = 0; p < n; p++) {
			const struct rtable *rt = &m[p].t->t[tb];

			err = -IFT_E_CORRUPT;
			if (rt->nchunks && !rt->have_schema)
				goto corrupt;
			err = -IFT_E_PIECES;
			if (rt->have_schema && joined.have_schema &&
			    memcmp(rt->map, joined.map, sizeof(rt->map)))
				goto corrupt;
			if (rt->have_schema && !joined.have_schema) {
				memcpy(joined.map, rt->map, sizeof(rt->map));
				joined.have_schema = true;
			}
			for (size_t i = 0; i < rt->nchunks; i++) {
				struct ift_chunk_info ci = rt->chunks[i];

				if (joined.nchunks && joined.chunks[joined.nchunks - 1].ts_max > ci.ts_min)
					goto corrupt;
				if (ift_array_grow((void **)&joined.chunks, &joined.cap,
						   joined.nchunks + 1, sizeof(ci)) < 0) {
					free(joined.chunks);
					return -ENOMEM;
				}
				ci.piece = (unsigned)p;
				joined.chunks[joined.nchunks++] = ci;
				joined.rows += ci.nrows;
			}
		}
		free(base->t[tb].chunks);
		base->t[tb] = joined;
		continue;
corrupt:
		free(joined.chunks);
		return err;
	}
	return 0;
}

/* The run's recovery: finished when every piece is, its sizes summed. */
static void join_recovery(struct ift_trace *base, const struct member *m, size_t n)
{
	struct ift_recovery r = { .finished = true };

	for (size_t p = 0; p < n; p++) {
		const struct ift_recovery *x = &m[p].t->rec;

		r.finished &= x->finished;
		r.file_size += x->file_size;
		r.good_bytes += x->good_bytes;
		if (x->damaged && !r.damaged) {
			r.damaged = true;
			r.reason = x->reason;
		}
	}
	base->rec = r;
}

/* record.start_ns of the first piece: the run's offsets start there. */
static int join_meta(struct ift_trace *base, const struct ift_trace *first)
{
	const char *v = ift_trace_meta(first, "record.start_ns");

	for (size_t i = 0; v && i < base->nmeta; i++) {
		char *dup;

		if (strcmp(base->meta[i].key, "record.start_ns"))
			continue;
		if (!(dup = strdup(v)))
			return -ENOMEM;
		free(base->meta[i].value);
		base->meta[i].value = dup;
	}
	return 0;
}

static int join(struct member *m, size_t n)
{
	struct ift_trace *base = m[n - 1].t;
	struct taskmap tasks;
	int ret;

	for (size_t p = 0; p + 1 < n; p++)
		if (!prefix_of(m[p].t, base))
			return -IFT_E_PIECES;
	base->pieces = calloc(n, sizeof(*base->pieces));
	if (!base->pieces)
		return -ENOMEM;
	if ((ret = join_chunks(base, m, n)) < 0 || (ret = join_meta(base, m[0].t)) < 0)
		return ret;
	/* the files move to the run: closing a piece leaves its fd open */
	for (size_t p = 0; p < n; p++) {
		base->pieces[p] = (struct piece){ m[p].t->fd, m[p].t->rec.file_size };
		if (p + 1 < n)
			m[p].t->fd = -1;
	}
	base->npieces = n;
	join_recovery(base, m, n);
	/* an unfinished last piece holds only its own tasks: all the rows then */
	if (base->rec.finished)
		return 0;
	ift_taskmap_init(&tasks);
	base->have_tasks = false;
	ret = ift_reader_tasks_again(base, &tasks);
	ift_taskmap_release(&tasks);
	return ret;
}

int ift_trace_open_run(const char *const *paths, size_t n, struct ift_trace **out,
		       size_t *bad)
{
	struct member *m = calloc(n ? n : 1, sizeof(*m));
	const char *id = NULL;
	int ret = 0;

	*out = NULL;
	*bad = 0;
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n && ret >= 0; i++) {
		const char *rid;

		*bad = i;
		if ((ret = ift_trace_open(paths[i], 0, &m[i].t)) < 0)
			break;
		rid = ift_trace_meta(m[i].t, "record.run_id");
		/* one run, each piece once (checked below, sorted) */
		if (!rid || !ift_trace_meta_u64(m[i].t, "record.piece", &m[i].seq) ||
		    (id && strcmp(id, rid)))
			ret = -IFT_E_PIECES;
		id = rid;
	}
	if (ret >= 0) {
		qsort(m, n, sizeof(*m), cmp_seq);
		for (size_t i = 0; i < n && ret >= 0; i++)
			if (m[i].seq != m[0].seq + i)
				ret = -IFT_E_PIECES;
		*bad = 0;
		if (ret >= 0)
			ret = join(m, n);
	}
	if (ret >= 0) {
		*out = m[n - 1].t;
		m[n - 1].t = NULL;
	}
	for (size_t i = 0; i < n; i++)
		ift_trace_close(m[i].t);
	free(m);
	return ret;
}

size_t ift_trace_piece_count(const struct ift_trace *t)
{
	return t->npieces ? t->npieces : 1;
}

bool ift_trace_is_piece(const struct ift_trace *t)
{
	uint64_t seq;

	return ift_trace_meta(t, "record.run_id") && ift_trace_meta_u64(t, "record.piece", &seq);
}

void ift_trace_piece_path(const char *file, unsigned n, char *out, size_t len)
{
	size_t l = strlen(file), sfx = strlen(".trace");

	if (l > sfx && !strcmp(file + l - sfx, ".trace"))
		l -= sfx;
	snprintf(out, len, "%.*s.%u.trace", (int)l, file, n);
}
