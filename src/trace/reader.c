// SPDX-License-Identifier: MIT
/*
 * The trace reader.  Opening reads the metadata sections and the list of
 * chunks (from the INDEX of a finished file, or by scanning section headers:
 * sections.c); chunks are decoded on demand (chunk.c), alone or by a cursor
 * over many tables (cursor.c).  Every length and count read from the file is
 * checked against the bytes that hold it before it is used, so a damaged file
 * gives an error, never a crash or an unbounded allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "reader.h"

/* Whether the chunk at OFF says it belongs to TABLE. */
static bool chunk_table_is(struct ift_trace *t, uint64_t off, uint64_t table)
{
	uint8_t head[IFT_SECTION_HDR + 10];
	uint64_t v;
	struct rd r;

	if (off + sizeof(head) > t->rec.file_size ||
	    ift_pread_all(t->fd, head, sizeof(head), off) < 0 ||
	    memcmp(head, IFT_SYNC, 4) || ift_le16(head + 4) != IFT_SEC_CHUNK)
		return false;
	ift_rd_init(&r, head + IFT_SECTION_HDR, 10);
	return ift_rd_varint(&r, &v) && v == table;
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
	ret = ift_pread_all(t->fd, tr, sizeof(tr), t->rec.file_size - sizeof(tr));
	if (ret < 0)
		return ret;
	if (memcmp(tr + 8, IFT_END_MAGIC, 8))
		return -IFT_E_TRUNCATED;
	ret = ift_read_sec_hdr(t, ift_le64(tr), &idx);
	if (ret < 0)
		return ret;
	if (idx.type != IFT_SEC_INDEX ||
	    idx.off + IFT_SECTION_HDR + idx.len + IFT_TRAILER_SIZE != t->rec.file_size)
		return -IFT_E_CORRUPT;
	ret = ift_read_payload(t, &idx);
	if (ret < 0)
		return ret;
	/* ift_handle_section reuses t->io */
	copy = malloc(t->io.len ? t->io.len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, t->io.data, t->io.len);
	ift_rd_init(&r, copy, t->io.len);
	ret = -IFT_E_CORRUPT;
	if (!ift_rd_varint_max(&r, ift_rd_left(&r) / 2, &n))
		goto out;
	while (n--) {
		struct chunk_hdr h;
		uint64_t off, type, next;

		if (!ift_rd_varint(&r, &off) || !ift_rd_varint(&r, &type) ||
		    off != prev_end || type > UINT16_MAX)
			goto out;
		s.fd = t->fd;
		s.off = off;
		s.type = (uint16_t)type;
		s.flags = 0;
		if (type == IFT_SEC_CHUNK) {
			if (!ift_rd_varint(&r, &h.table) || !ift_rd_varint(&r, &h.nrows) ||
			    !ift_rd_varint(&r, &h.ts_min) || !ift_rd_varint(&r, &h.ts_span) ||
			    h.nrows == 0 || h.nrows > IFT_MAX_CHUNK_ROWS ||
			    h.ts_min + h.ts_span < h.ts_min)
				goto out;
			/* sections are contiguous: a chunk ends where the next starts */
			next = n ? 0 : idx.off;
			if (n) {
				struct rd peek = r;

				if (!ift_rd_varint(&peek, &next))
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
			ret = ift_handle_section(t, &s, &h, tasks);
		} else {
			ret = ift_read_sec_hdr(t, off, &s);
			if (ret < 0 || s.type != type)
				goto bad;
			prev_end = off + IFT_SECTION_HDR + s.len;
			ret = ift_handle_section(t, &s, NULL, tasks);
		}
		if (ret < 0)
			goto bad;
		ret = -IFT_E_CORRUPT;
	}
	ret = prev_end == idx.off && !ift_rd_left(&r) ? 0 : -IFT_E_CORRUPT;
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

/*
 * Reads every section in order from OFF, stopping at the first bad one:
 * what is before it is the trace.  A section the writer has not finished
 * writing is one such (its payload runs past the end, or fails its
 * checksum), so a file still being written reads up to its last whole
 * section, and reads on from there once it grew (ift_trace_follow()).
 */
static int scan_from(struct ift_trace *t, uint64_t off, struct taskmap *tasks)
{
	struct sec s;
	int ret = 0;

	while (off < t->rec.file_size) {
		/* a finished file ends with INDEX and the trailer */
		if (t->rec.file_size - off == IFT_TRAILER_SIZE) {
			uint8_t tr[IFT_TRAILER_SIZE];

			ret = ift_pread_all(t->fd, tr, sizeof(tr), off);
			if (ret < 0)
				return ret;
			if (!memcmp(tr + 8, IFT_END_MAGIC, 8)) {
				t->rec.finished = true;
				off += IFT_TRAILER_SIZE;
				break;
			}
		}
		ret = ift_read_sec_hdr(t, off, &s);
		if (ret < 0)
			break;
		/* ift_handle_section checks the payload checksum of every section */
		ret = ift_handle_section(t, &s, NULL, tasks);
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

		ret = ift_pread_all(t->fd, h, n, 0);
		if (ret < 0)
			return ret;
		return memcmp(h, IFT_MAGIC, n < 8 ? n : 8) ? -IFT_E_NOT_TRACE :
							     -IFT_E_TRUNCATED;
	}
	ret = ift_pread_all(t->fd, h, sizeof(h), 0);
	if (ret < 0)
		return ret;
	if (memcmp(h, IFT_MAGIC, 8))
		return -IFT_E_NOT_TRACE;
	if (ift_le32(h + 60) != (uint32_t)crc32(0, h, 60))
		return -IFT_E_HEADER;
	if (ift_le32(h + 32) != IFT_BYTE_ORDER)
		return -IFT_E_BYTE_ORDER;
	t->version = ift_le16(h + 8);
	if (ift_le16(h + 10) > IFT_FORMAT_VERSION)
		return -IFT_E_TOO_NEW;
	req = ift_le64(h + 16);
	if (req & ~IFT_KNOWN_REQUIRED)
		return -IFT_E_FEATURE;
	/* a newer writer may grow the header: skip what we do not know */
	t->header_size = ift_le32(h + 12);
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

	ift_taskmap_release(m);
	/* rows a crafted file can declare cheaply must not cost unbounded time */
	if (t->t[IFT_T_TASKS].rows > IFT_MAX_TASK_ROWS)
		return -IFT_E_LIMIT;
	for (size_t i = 0; i < t->t[IFT_T_TASKS].nchunks && !ret; i++) {
		uint64_t row[IFT_TK_NR];

		ret = ift_trace_chunk_load(t, IFT_T_TASKS, i, &c);
		for (uint32_t k = 0; !ret && k < c.nrows; k++) {
			for (unsigned col = 0; col < IFT_TK_NR; col++)
				row[col] = c.col[col][k];
			ret = ift_taskmap_fold(m, row);
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
		ift_taskmap_release(tasks);
}

/*
 * The recording machine's base page: a power of two from 4 KiB (x86-64,
 * most arm64 kernels) to 64 KiB (arm64 kernels built for it, as on Grace
 * servers).  Anything else, or nothing (traces before host.page_size, all
 * x86-64), reads as 4 KiB.
 */
static uint64_t page_size_of(const char *v)
{
	char *end;
	unsigned long long n;

	if (!v)
		return 4096;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n < 4096 || n > 65536 || (n & (n - 1)))
		return 4096;
	return n;
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
	ift_taskmap_init(&tasks);
	t->flags = flags;
	/* O_NONBLOCK: a FIFO opens at once, without a writer, to be refused */
	t->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (t->fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(t->fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -IFT_E_NOT_FILE;
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
		ret = scan_from(t, t->header_size, &tasks);
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
	ift_taskmap_release(&tasks);
	t->page_size = page_size_of(ift_trace_meta(t, "host.page_size"));
	*out = t;
	return 0;
fail:
	ift_taskmap_release(&tasks);
	ift_trace_close(t);
	return ret;
}

static void drop_tasks(struct ift_trace *t)
{
	for (size_t i = 0; i < t->ntasks; i++)
		free(t->tasks[i].comms);
	free(t->tasks);
	t->tasks = NULL;
	t->ntasks = 0;
}

int ift_reader_tasks_again(struct ift_trace *t, struct taskmap *tasks)
{
	int ret = 0;

	drop_tasks(t);
	t->tasks_rebuilt = false;
	if (!t->have_tasks)
		ret = rebuild_tasks(t, tasks);
	return ret < 0 ? ret : publish_tasks(t, tasks);
}

int ift_trace_follow(struct ift_trace *t, bool *grew)
{
	uint64_t good = t->rec.good_bytes;
	bool had_tasks = t->have_tasks;
	struct taskmap tasks;
	struct stat st;
	int ret;

	*grew = false;
	/* a joined run is read whole (its pieces are finished but the last) */
	if (t->rec.finished || t->npieces)
		return 0;
	if (fstat(t->fd, &st) < 0)
		return -errno;
	/* a file that shrank was not written by one writer from the start */
	if ((uint64_t)st.st_size < good)
		return -IFT_E_REPLACED;
	if ((uint64_t)st.st_size == t->rec.file_size)
		return 0;
	t->rec.file_size = (uint64_t)st.st_size;
	t->rec.damaged = false;
	t->rec.reason = 0;
	ift_taskmap_init(&tasks);
	ret = scan_from(t, good, &tasks);
	if (ret >= 0 && t->rec.good_bytes > good) {
		*grew = true;
		/* the TASKS section, once read, is the table: nothing after it adds */
		if (!had_tasks)
			ret = ift_reader_tasks_again(t, &tasks);
		t->page_size = page_size_of(ift_trace_meta(t, "host.page_size"));
	}
	ift_taskmap_release(&tasks);
	return ret;
}

void ift_trace_close(struct ift_trace *t)
{
	if (!t)
		return;
	reset_contents(t, NULL);
	drop_tasks(t);
	for (size_t i = 0; i < t->npieces; i++)
		if (t->pieces[i].fd >= 0 && t->pieces[i].fd != t->fd)
			close(t->pieces[i].fd);
	free(t->pieces);
	if (t->fd >= 0)
		close(t->fd);
	ZSTD_freeDCtx(t->dz);
	ift_buf_release(&t->io);
	ift_buf_release(&t->raw);
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

bool ift_trace_meta_u64(const struct ift_trace *t, const char *key, uint64_t *v)
{
	const char *s = ift_trace_meta(t, key);
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

uint64_t ift_trace_page_size(const struct ift_trace *t)
{
	return t->page_size;
}

uint64_t ift_trace_alloc_bytes(const struct ift_trace *t, uint64_t order)
{
	return order < IFT_PAGE_ORDER_MAX ? t->page_size << order : 0;
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
	const char *unread = ift_trace_meta(t, "ring.unread_events");
	uint64_t n = 0;

	for (size_t i = 0; i < t->nloss; i++)
		n += t->loss[i].overrun + t->loss[i].dropped;
	/* what the recorder left in the buffers is as lost as what was dropped */
	if (unread)
		n += strtoull(unread, NULL, 10);
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

const char *ift_trace_comm(const struct ift_trace *t, uint32_t tid, uint64_t ts)
{
	const struct ift_task *task;

	if (!tid)
		return IFT_IDLE_COMM;
	task = ift_trace_task_find(t, tid, ts);
	return task ? ift_task_comm_at(task, ts) : "";
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
