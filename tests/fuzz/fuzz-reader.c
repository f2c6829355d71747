// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the trace reader: `make fuzz`, see tests/fuzz/README.md.
 *
 * The reader takes a path, so each input goes into a memfd opened through
 * /proc/self/fd/N.  Every input is opened three ways (through the index, by
 * scanning, with --verify), and each open trace is walked through every public
 * accessor, every chunk, a cursor over all tables and the text and JSON event
 * formatters, checking what the API promises on the way: a broken promise
 * aborts, so the fuzzer reports it like a crash.
 *
 * Every section carries two CRCs, so nearly every mutation of a real trace
 * stops at a checksum and the parsers behind it would never see fuzzed bytes.
 * Each input is therefore read twice: as it is, and with its header and
 * section checksums recomputed.
 *
 * A few bounds keep one input from running for minutes: a 64 KiB file may
 * legitimately declare millions of rows (CONST columns cost a few bytes a
 * chunk), and walking them proves nothing the first thousands do not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "ift-render.h"
#include "ift-trace.h"

/* Rows decoded per open, chunk by chunk and again through the cursor. */
#define MAX_ROWS	(1U << 18)
/* Inputs whose chunks declare more rows are skipped: see too_slow(). */
#define MAX_DECLARED_ROWS	(1U << 22)
/* Events formatted as text and JSON per input. */
#define MAX_FORMAT	256

static int memfd = -1;
static char path[64];
static FILE *devnull;
static bool replay;	/* IFT_FUZZ_REPLAY=1: run slow inputs in full too */

#define check(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-reader: %s:%d: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

static void setup(void)
{
	memfd = memfd_create("ift-fuzz", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("fuzz-reader: memfd_create");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	replay = getenv("IFT_FUZZ_REPLAY") && !strcmp(getenv("IFT_FUZZ_REPLAY"), "1");
	devnull = fopen("/dev/null", "w");
	if (!devnull) {
		perror("fuzz-reader: /dev/null");
		exit(1);
	}
}

static void load_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (ftruncate(memfd, 0) < 0) {
		perror("fuzz-reader: ftruncate");
		exit(1);
	}
	while (off < size) {
		ssize_t n = pwrite(memfd, data + off, size - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("fuzz-reader: pwrite");
			exit(1);
		}
		off += (size_t)n;
	}
}

/* Touches every byte of S, so ASan sees a string that is not terminated. */
static size_t touch(const char *s)
{
	check(s != NULL);
	return strlen(s);
}

static void walk_meta(const struct ift_trace *t)
{
	size_t n = ift_trace_meta_count(t);

	for (size_t i = 0; i < n; i++) {
		const char *k, *v;

		ift_trace_meta_at(t, i, &k, &v);
		touch(k);
		touch(v);
		/* the last value wins, and meta_at lists one entry per key */
		check(ift_trace_meta(t, k) == v);
	}
	ift_trace_meta(t, "tool.version");
	ift_trace_meta(t, "");
}

static void walk_dicts(const struct ift_trace *t)
{
	size_t nops = ift_trace_op_count(t);
	uint64_t id;

	check(ift_trace_string(t, 0) && !*ift_trace_string(t, 0));
	/* ids have no gap: the first unknown one ends the dictionary */
	for (id = 1; id <= 1U << 17; id++) {
		const char *s = ift_trace_string(t, id);

		if (!s)
			break;
		touch(s);
	}
	check(ift_trace_string(t, id) == NULL);
	check(ift_trace_string(t, UINT64_MAX) == NULL);

	check(ift_trace_op(t, 0) == NULL);
	check(ift_trace_op(t, nops + 1) == NULL);
	for (size_t i = 1; i <= nops; i++) {
		const struct ift_op *op = ift_trace_op(t, i);

		check(op != NULL);
		touch(op->name);
		check(op->nargs <= IFT_CALL_MAX_ARGS);
		for (unsigned a = 0; a < op->nargs; a++)
			touch(op->args[a]);
	}

	for (size_t i = 0; i < ift_trace_library_count(t); i++) {
		const struct ift_library *l = ift_trace_library(t, i);
		unsigned x = 0;

		check(l != NULL);
		touch(l->path);
		touch(l->kind);
		for (size_t b = 0; b < l->build_id_len; b++)
			x += l->build_id[b];
		(void)x;
	}
	check(ift_trace_library(t, ift_trace_library_count(t)) == NULL);

	for (size_t i = 0; i < ift_trace_loss_count(t); i++)
		check(ift_trace_loss(t, i) != NULL);
	check(ift_trace_loss(t, ift_trace_loss_count(t)) == NULL);
	(void)ift_trace_lost_events(t);
}

static void walk_tasks(const struct ift_trace *t)
{
	size_t n = ift_trace_task_count(t);

	for (size_t i = 0; i < n; i++) {
		const struct ift_task *k = ift_trace_task(t, i), *f;

		check(k != NULL);
		if (i)	/* sorted by tid */
			check(ift_trace_task(t, i - 1)->tid <= k->tid);
		for (unsigned c = 0; c < k->ncomms; c++)
			touch(k->comms[c].comm);
		touch(ift_task_comm_at(k, 0));
		touch(ift_task_comm_at(k, k->start_ts));
		touch(ift_task_comm_at(k, UINT64_MAX));
		f = ift_trace_task_find(t, k->tid, k->start_ts);
		check(f != NULL && f->tid == k->tid);
		f = ift_trace_task_find(t, k->tid, 0);
		check(f != NULL && f->tid == k->tid);
	}
	check(ift_trace_task(t, n) == NULL);
	(void)ift_trace_tasks_rebuilt(t);
}

/*
 * Decodes every chunk of every table (up to MAX_ROWS rows) and checks each
 * against its chunk_info.  Returns true when every chunk of the trace decoded.
 */
static bool walk_chunks(struct ift_trace *t)
{
	struct ift_chunk c = { 0 };
	uint64_t rows = 0, lo = UINT64_MAX, hi = 0;
	bool all = true;

	for (unsigned tb = 0; tb <= IFT_T_NR; tb++) {
		size_t n = ift_trace_chunk_count(t, tb);
		uint64_t trows = 0;

		if (!tb || tb >= IFT_T_NR) {
			check(n == 0 && ift_trace_rows(t, tb) == 0);
			check(ift_trace_chunk_info(t, tb, 0) == NULL);
			check(ift_trace_chunk_load(t, tb, 0, &c) < 0);
			continue;
		}
		check(ift_trace_chunk_info(t, tb, n) == NULL);
		check(ift_trace_chunk_load(t, tb, n, &c) < 0);
		for (size_t i = 0; i < n; i++) {
			const struct ift_chunk_info *ci = ift_trace_chunk_info(t, tb, i);
			int ret;

			check(ci != NULL && ci->table == tb && ci->nrows >= 1);
			check(ci->ts_min <= ci->ts_max);
			if (i)	/* chunks of a table follow each other in time */
				check(ift_trace_chunk_info(t, tb, i - 1)->ts_max <= ci->ts_min);
			trows += ci->nrows;
			lo = ci->ts_min < lo ? ci->ts_min : lo;
			hi = ci->ts_max > hi ? ci->ts_max : hi;
			check(ift_trace_chunk_seek(t, tb, ci->ts_min) <= i);
			if (rows + ci->nrows > MAX_ROWS) {
				all = false;
				continue;
			}
			rows += ci->nrows;
			ret = ift_trace_chunk_load(t, tb, i, &c);
			if (ret < 0) {
				touch(ift_strerror(ret));
				all = false;
				continue;
			}
			check(c.table == tb && c.nrows == ci->nrows);
			check(c.ncols == ift_table_def(tb)->ncols);
			for (uint32_t r = 0; r < c.nrows; r++) {
				uint64_t ts = c.col[IFT_C_TS][r];

				check(ts >= ci->ts_min && ts <= ci->ts_max);
				check(!r || ts >= c.col[IFT_C_TS][r - 1]);
				/* every known column is readable in every row */
				for (unsigned col = 0; col < c.ncols; col++)
					(void)*(volatile uint64_t *)&c.col[col][r];
			}
		}
		check(trows == ift_trace_rows(t, tb));
		check(ift_trace_chunk_seek(t, tb, UINT64_MAX) <= n);
		check(ift_trace_chunk_seek(t, tb, 0) == 0);
	}
	if (lo <= hi) {
		check(ift_trace_ts_min(t) == lo);
		check(ift_trace_ts_max(t) == hi);
	}
	ift_chunk_release(&c);
	return all;
}

/*
 * Runs a cursor over the tables in MASK from FROM, formatting the first FORMAT
 * events.  Returns the number of events, or -1 if the cursor failed or was cut
 * short.
 */
static long walk_cursor(struct ift_trace *t, unsigned mask, uint64_t from,
			long format)
{
	struct ift_cursor *cur = ift_cursor_new(t, mask, from);
	struct ift_event ev;
	uint64_t last = 0;
	long n = 0;
	int ret;

	check(cur != NULL);
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		const uint64_t *r = ev.row;
		const struct ift_task *k;

		check(ev.table >= 1 && ev.table < IFT_T_NR);
		check(mask & (1U << ev.table));
		check(r[IFT_C_TS] >= from);
		check(!n || r[IFT_C_TS] >= last);	/* merged in time order */
		last = r[IFT_C_TS];
		touch(ift_event_name(t, &ev));
		k = ift_trace_task_find(t, (uint32_t)r[IFT_C_TID], r[IFT_C_TS]);
		if (k) {
			check(k->tid == (uint32_t)r[IFT_C_TID]);
			touch(ift_task_comm_at(k, r[IFT_C_TS]));
		}
		if (n < format) {
			check(ift_out_event_text(devnull, t, &ev) == 0);
			check(ift_out_event_json(devnull, t, &ev) == 0);
		}
		if (++n >= (long)MAX_ROWS) {
			ift_cursor_free(cur);
			return -1;
		}
	}
	if (ret < 0)
		touch(ift_strerror(ret));
	ift_cursor_free(cur);
	return ret < 0 ? -1 : n;
}

struct summary {
	bool ok, finished, all_chunks;
	uint64_t rows[IFT_T_NR];
	size_t chunks[IFT_T_NR];
	size_t nmeta, nops, nlibs, nloss, ntasks;
};

/* Opens the memfd with FLAGS and walks it all; FORMAT as for walk_cursor(). */
static void walk(const uint8_t *data, size_t size, unsigned flags, long format,
		 struct summary *sum)
{
	const struct ift_recovery *rec;
	struct ift_trace *t = (struct ift_trace *)1;
	uint64_t total = 0;
	long n;
	int ret;

	memset(sum, 0, sizeof(*sum));
	ret = ift_trace_open(path, flags, &t);
	if (ret < 0) {
		check(t == NULL);
		touch(ift_strerror(ret));
		return;
	}
	check(ret == 0 && t != NULL);
	rec = ift_trace_recovery(t);
	check(rec->file_size == size);
	check(rec->good_bytes <= rec->file_size);
	check(!(rec->finished && rec->damaged));
	if (rec->damaged)
		touch(ift_strerror(rec->reason));
	(void)ift_trace_version(t);

	walk_meta(t);
	walk_dicts(t);
	walk_tasks(t);
	sum->all_chunks = walk_chunks(t);
	for (unsigned tb = 1; tb < IFT_T_NR; tb++)
		total += ift_trace_rows(t, tb);

	n = walk_cursor(t, ~0U, 0, format);
	/* when every chunk decodes, the cursor yields every row */
	if (sum->all_chunks && total < MAX_ROWS)
		check(n >= 0 && (uint64_t)n == total);
	if (total) {	/* one table, from the middle of the trace */
		uint64_t mid = ift_trace_ts_min(t) / 2 + ift_trace_ts_max(t) / 2;

		walk_cursor(t, 1U << (unsigned)(data[size - 1] % IFT_T_NR), mid, 0);
	}
	check(walk_cursor(t, 0, 0, 0) == 0);

	sum->ok = true;
	sum->finished = rec->finished;
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		sum->rows[tb] = ift_trace_rows(t, tb);
		sum->chunks[tb] = ift_trace_chunk_count(t, tb);
	}
	sum->nmeta = ift_trace_meta_count(t);
	sum->nops = ift_trace_op_count(t);
	sum->nlibs = ift_trace_library_count(t);
	sum->nloss = ift_trace_loss_count(t);
	sum->ntasks = ift_trace_task_count(t);
	ift_trace_close(t);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Recomputes the header CRC and the CRCs of every section that fits, walking
 * the sections by their lengths as a scanning reader does.  Returns true when
 * it changed a byte.
 */
static bool fix_checksums(uint8_t *p, size_t size)
{
	uint8_t old[8];
	bool changed = false;
	size_t off = 64;

	if (size < 64 || memcmp(p, "\x89IFT\r\n\x1a\n", 8))
		return false;
	memcpy(old, p + 60, 4);
	put32(p + 60, (uint32_t)crc32(0, p, 60));
	changed |= memcmp(old, p + 60, 4) != 0;
	while (size - off >= 24 && !memcmp(p + off, "ISEC", 4)) {
		uint64_t len = get64(p + off + 8);

		if (len > size - off - 24)
			break;
		memcpy(old, p + off + 16, 8);
		put32(p + off + 16, (uint32_t)crc32(0, p + off + 24, (uInt)len));
		put32(p + off + 20, (uint32_t)crc32(0, p + off, 20));
		changed |= memcmp(old, p + off + 16, 8) != 0;
		off += 24 + (size_t)len;
	}
	return changed;
}

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/*
 * A chunk of CONST columns declares up to 2^20 rows in a few dozen bytes, and
 * opening an unfinished file folds every row of table `tasks'.  The reader
 * bounds that (IFT_MAX_TASK_ROWS), but under the sanitizers even the bounded
 * work outlasts the fuzzer's timeout: such inputs are skipped for speed, and
 * tests/fuzz/crashes/ holds two that the replay runs in full.
 */
static bool too_slow(const uint8_t *p, size_t size)
{
	uint64_t rows = 0;
	size_t off = 64;

	while (size >= 64 && size - off >= 24 && !memcmp(p + off, "ISEC", 4)) {
		uint64_t len = get64(p + off + 8), v[4];
		const uint8_t *q = p + off + 24, *end;
		bool hdr = true;

		if (len > size - off - 24)
			break;
		end = q + len;
		if (p[off + 4] == 4 && p[off + 5] == 0) {	/* a CHUNK */
			for (int i = 0; i < 4 && hdr; i++)
				hdr = get_varint(&q, end, &v[i]);
			if (hdr)
				rows += v[1] < (1U << 20) ? v[1] : 1U << 20;
		}
		off += 24 + (size_t)len;
	}
	return rows > MAX_DECLARED_ROWS;
}

static void run(const uint8_t *data, size_t size)
{
	struct summary idx, scan, verify;

	if (!replay && too_slow(data, size))
		return;
	load_input(data, size);
	walk(data, size, 0, MAX_FORMAT, &idx);
	walk(data, size, IFT_OPEN_NO_INDEX, idx.ok ? 0 : MAX_FORMAT, &scan);
	walk(data, size, IFT_OPEN_VERIFY, 0, &verify);

	/*
	 * The spec: a reader may use the INDEX or scan the sections, and both
	 * give the same result.  The index is trusted for chunk headers until a
	 * chunk is loaded, so compare only when every chunk decoded.
	 */
	if (idx.ok && idx.finished && idx.all_chunks) {
		check(scan.ok && scan.finished);
		check(scan.nmeta == idx.nmeta && scan.nops == idx.nops);
		check(scan.nlibs == idx.nlibs && scan.nloss == idx.nloss);
		check(scan.ntasks == idx.ntasks);
		for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
			check(scan.rows[tb] == idx.rows[tb]);
			check(scan.chunks[tb] == idx.chunks[tb]);
		}
	}
	/* --verify scans too: it must agree with a plain scan */
	check(scan.ok == verify.ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	if (memfd < 0)
		setup();
	run(data, size);

	fixed = malloc(size ? size : 1);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	if (fix_checksums(fixed, size))
		run(fixed, size);
	free(fixed);
	return 0;
}
