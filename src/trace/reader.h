/* SPDX-License-Identifier: MIT */
#ifndef IFT_TRACE_READER_H
#define IFT_TRACE_READER_H

/*
 * Private to the trace reader: reader.c opens a trace and answers its
 * accessors, sections.c reads the sections and their payloads, chunk.c
 * decodes a chunk, cursor.c merges the tables in time order.
 */
#include <stdbool.h>
#include <stdint.h>
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
	uint64_t reads[IFT_T_NR];	/* cursors over each table (ift_trace_reads) */
	uint64_t header_size;	/* where the first section starts */
	unsigned flags;
	struct ift_recovery rec;

	struct meta_kv *meta;
	size_t nmeta;
	uint64_t page_size;	/* host.page_size, or 4096 */

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

	/* a run joined from pieces (run.c): each one's file, in order, and
	   the trace's own fd is the last's; none for one file */
	struct piece {
		int fd;
		uint64_t size;
	} *pieces;
	size_t npieces;

	ZSTD_DCtx *dz;
	struct buf io, raw;
};

/*
 * The task table again, after sections were added (a file followed, a run
 * joined): the TASKS section where the writer finished (parsed into TASKS),
 * else every `tasks' row, folded.  Pointers to the old table are stale.
 */
int ift_reader_tasks_again(struct ift_trace *t, struct taskmap *tasks);

/* The uncompressed header of a CHUNK payload. */
struct chunk_hdr {
	uint64_t table, nrows, ts_min, ts_span, body_size;
	uint8_t codec;
};

struct sec {
	int fd;			/* the file it is in */
	uint64_t off;
	uint16_t type, flags;
	uint64_t len;
	uint32_t crc;
};

/* pread() of exactly N bytes at OFF: 0, -errno, or -IFT_E_TRUNCATED at the end. */
int ift_pread_all(int fd, void *p, size_t n, uint64_t off);
/* Reads and checks the header of the section at OFF. */
int ift_read_sec_hdr(const struct ift_trace *t, uint64_t off, struct sec *s);
/* The same in file FD of SIZE bytes (a piece of a joined run). */
int ift_read_sec_hdr_in(int fd, uint64_t size, uint64_t off, struct sec *s);
/* Reads the payload of S into IO and checks its checksum. */
int ift_read_payload_into(const struct ift_trace *t, const struct sec *s, struct buf *io);
/* Reads the payload of S into t->io and checks its checksum. */
int ift_read_payload(struct ift_trace *t, const struct sec *s);
/* Parses the uncompressed header of a CHUNK payload; false when it is bad. */
bool ift_parse_chunk_hdr(struct rd *r, struct chunk_hdr *h);
/*
 * Handles one section.  For a chunk listed in the INDEX, CH is its header as
 * the index gives it and the payload is read only when the chunk is loaded;
 * otherwise the payload is read and its checksum checked here.
 */
int ift_handle_section(struct ift_trace *t, const struct sec *s,
		   const struct chunk_hdr *ch, struct taskmap *tasks);
/* Decodes chunk I of TABLE into C with LC's buffers: safe to run in another
   thread than the trace's other users, each with its own LC. */
int ift_chunk_load(const struct ift_trace *t, struct loadctx *lc, unsigned table,
	       size_t i, struct ift_chunk *c);

#endif
