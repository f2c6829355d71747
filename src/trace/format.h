/* SPDX-License-Identifier: MIT */
#ifndef IFT_TRACE_FORMAT_H
#define IFT_TRACE_FORMAT_H

/* Private to src/trace: the constants and shared pieces of docs/trace-format.md. */
#include <stdint.h>

#include "ift-trace.h"
#include "util/buf.h"
#include "util/tidmap.h"

#define IFT_MAGIC		"\x89IFT\r\n\x1a\n"
#define IFT_END_MAGIC		"\x89IFTEND\n"
#define IFT_SYNC		"ISEC"
#define IFT_HEADER_SIZE		64
#define IFT_SECTION_HDR		24
#define IFT_TRAILER_SIZE	16
#define IFT_BYTE_ORDER		0x0A0B0C0DU
#define IFT_KNOWN_REQUIRED	0ULL	/* required feature bits we understand */

#define IFT_SEC_F_REQUIRED	0x1

enum ift_section {
	IFT_SEC_META = 1,
	IFT_SEC_STRINGS,
	IFT_SEC_SCHEMA,
	IFT_SEC_CHUNK,
	IFT_SEC_LIBRARY,
	IFT_SEC_OPS,
	IFT_SEC_LOSS,
	IFT_SEC_TASKS,
	IFT_SEC_INDEX,
	IFT_SEC_STACKS,
};
#define IFT_SEC_LAST		IFT_SEC_STACKS

enum ift_codec { IFT_CODEC_NONE = 0, IFT_CODEC_ZSTD = 1 };

enum ift_enc {
	IFT_ENC_CONST = 0,
	IFT_ENC_PLAIN,
	IFT_ENC_DELTA,
	IFT_ENC_DICT,
	IFT_ENC_ZIGZAG,
	IFT_ENC_FUNC,
	IFT_ENC_KEYDELTA,
	IFT_ENC_KEYDELTA_PLANES,	/* format version 2 */
};

/* Bounds a reader enforces so corrupt input cannot make it allocate wildly. */
#define IFT_MAX_CHUNK_ROWS	(1U << 20)
#define IFT_MAX_COLS		16
/* The task table: records and names per task kept, rows folded at open. */
#define IFT_MAX_TASKS		(1U << 22)
#define IFT_MAX_COMMS		4096
#define IFT_MAX_TASK_ROWS	(1ULL << 26)

/*
 * ift_col_encode - append "u8 encoding, varint length, bytes" for V[0..N) to OUT,
 * choosing the smallest of the encodings.  SCRATCH is working memory.
 */
void ift_col_encode(struct buf *out, const uint64_t *v, size_t n,
		struct buf *scratch);
/*
 * ift_col_encode_func - append a FUNC block for V when, in this chunk, V is a
 * function of column KEYCOL (values KEY) and not constant; false otherwise
 * (OUT unchanged).  A tgid is a function of the tid in practically every chunk,
 * so it costs a few bytes instead of a column.
 */
bool ift_col_encode_func(struct buf *out, const uint64_t *v, const uint64_t *key,
		     unsigned keycol, size_t n, struct buf *scratch);

/*
 * ift_col_encode_keydelta - append a KEYDELTA block for V (each value minus the
 * previous one with the same key in column KEYCOL) when it takes fewer than
 * LIMIT bytes before compression (as varints); false otherwise (OUT
 * unchanged).  Rows merged from several CPUs are far more regular per CPU:
 * the timestamps and tids of one CPU's stream follow each other closely.
 * PLANES writes the deltas as KEYDELTA_PLANES instead: fixed width, byte k
 * of every row together, which zstd codes far better where the low bytes
 * are noise and the high ones nearly constant (timestamps: 8% smaller on a
 * page-allocation storm than the varints, after zstd).
 */
bool ift_col_encode_keydelta(struct buf *out, const uint64_t *v, const uint64_t *key,
			 unsigned keycol, size_t n, size_t limit, bool planes);

/*
 * ift_col_decode_keyed - decode one column block's bytes into OUT[0..N)
 * For FUNC, KEYS[id] (256 entries, by column id in the file) are the values
 * of the columns decoded so far, NULL for the others.  Returns 0, -ENOMEM or
 * -IFT_E_CORRUPT.
 */
int ift_col_decode_keyed(unsigned enc, const uint8_t *p, size_t len, uint64_t *out,
		     size_t n, uint64_t *const *keys);

/* ift_col_decode - the same for a block that needs no other column (not FUNC). */
int ift_col_decode(unsigned enc, const uint8_t *p, size_t len, uint64_t *out,
	       size_t n);

/*
 * The process/thread table, folded from `tasks' rows (the writer does it as
 * rows arrive, a reader of an unfinished file does it again): comms are
 * string ids here.
 */
struct tcomm {
	uint64_t ts;
	uint64_t str;
};

struct trec {
	uint32_t tid, pid, ppid, flags;
	uint64_t start_ts, exit_ts;
	uint32_t ncomms, cap;
	struct tcomm *comms;
};

struct taskmap {
	struct trec *v;
	size_t n, cap;
	struct ift_tidmap ids;	/* tid -> index of its latest record */
};

void ift_taskmap_init(struct taskmap *m);
void ift_taskmap_release(struct taskmap *m);
/* Folds one `tasks' row (IFT_TK_NR values); 0, -ENOMEM or -IFT_E_LIMIT. */
int ift_taskmap_fold(struct taskmap *m, const uint64_t *row);
/* Adds a record as read from a TASKS section; 0 or -ENOMEM. */
struct trec *ift_taskmap_add(struct taskmap *m, uint32_t tid);
int ift_trec_add_comm(struct trec *r, uint64_t ts, uint64_t str);

#endif
