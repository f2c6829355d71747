/* SPDX-License-Identifier: MIT */
#ifndef IFT_TRACE_H
#define IFT_TRACE_H

/*
 * The trace file: writer and reader.  docs/trace-format.md is the spec.
 *
 * Nothing here touches tracefs or prints; errors are negative return values
 * (see ift-error.h), or NULL with errno set for functions returning pointers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-error.h"

#define IFT_FORMAT_VERSION	2
#define IFT_FORMAT_MIN_VERSION	2
#define IFT_DEFAULT_TRACE	"ingero.trace"
#define IFT_PART_SUFFIX		".part"

/* Tables and their columns.  Column ids are those written in the file. */
enum ift_table {
	IFT_T_CALLS = 1,
	IFT_T_SWITCHES,
	IFT_T_WAKEUPS,
	IFT_T_PAGE_ALLOCS,
	IFT_T_TASKS,
	IFT_T_SAMPLES,
	IFT_T_PROFILE,
	IFT_T_GPU,
	IFT_T_NR,	/* one past the last; table ids start at 1 */
};

/* Columns every table starts with. */
enum { IFT_C_TS, IFT_C_CPU, IFT_C_PID, IFT_C_TID, IFT_C_COMMON_NR };

enum ift_call_col {
	IFT_CALL_OP = IFT_C_COMMON_NR, IFT_CALL_DUR, IFT_CALL_RET,
	IFT_CALL_FLAGS, IFT_CALL_DEPTH,
	IFT_CALL_A0, IFT_CALL_A1, IFT_CALL_A2, IFT_CALL_A3, IFT_CALL_A4,
	IFT_CALL_A5, IFT_CALL_STACK, IFT_CALL_NR
};
#define IFT_CALL_MAX_ARGS	6
#define IFT_CALL_F_NO_RETURN	0x1
#define IFT_CALL_F_NESTED	0x2
#define IFT_CALL_F_PY		0x4	/* Python frames read in flight, at the site's end */
#define IFT_CALL_F_PY_LATE	0x8	/* Python frames read after the return, dropped */

enum ift_switch_col {
	IFT_SW_PREV_STATE = IFT_C_COMMON_NR, IFT_SW_PREV_PRIO,
	IFT_SW_NEXT_PID, IFT_SW_NEXT_TID, IFT_SW_NEXT_PRIO, IFT_SW_NR
};

enum ift_wakeup_col {
	IFT_WK_KIND = IFT_C_COMMON_NR, IFT_WK_PRIO, IFT_WK_TARGET_CPU,
	IFT_WK_WAKER_PID, IFT_WK_WAKER_TID, IFT_WK_NR
};
enum { IFT_WAKE_WAKING = 1, IFT_WAKE_WAKEUP, IFT_WAKE_WAKEUP_NEW };

enum ift_page_col {
	IFT_PG_ORDER = IFT_C_COMMON_NR, IFT_PG_GFP, IFT_PG_MIGRATETYPE, IFT_PG_NR
};

enum ift_task_col {
	IFT_TK_KIND = IFT_C_COMMON_NR, IFT_TK_CHILD_PID, IFT_TK_CHILD_TID,
	IFT_TK_COMM, IFT_TK_FILE, IFT_TK_PPID, IFT_TK_NR
};
enum ift_task_kind {
	IFT_TASK_FORK = 1, IFT_TASK_CLONE, IFT_TASK_EXEC, IFT_TASK_COMM,
	IFT_TASK_EXIT,
};

enum ift_sample_col {
	IFT_SM_METRIC = IFT_C_COMMON_NR, IFT_SM_SCOPE, IFT_SM_VALUE, IFT_SM_NR
};

/*
 * A samples row of one task (record --page-allocs=count's totals, written
 * once at the end for each thread: its tid), not a counter of the system
 * (tid 0, SCOPE 0 the whole system or 1 + a CPU).
 */
static inline bool ift_sample_of_task(const uint64_t *row)
{
	return row[IFT_C_TID] != 0;
}

/*
 * A profile row: a traced thread's stack, sampled every `profile.period_ns`
 * of its CPU time (record --profile).  STACK is a call site of the STACKS
 * table (0: none could be unwound), with the Python frames the thread was
 * in when they were read, just after the sample (IFT_PF_F_PY).
 */
enum ift_profile_col { IFT_PF_STACK = IFT_C_COMMON_NR, IFT_PF_FLAGS, IFT_PF_NR };
#define IFT_PF_F_KERNEL		0x1	/* in the kernel (a system call, a fault) */
#define IFT_PF_F_PY		0x2	/* the site ends with its Python frames */
#define IFT_PF_F_IRQ		0x4	/* in the kernel for what took the CPU from
					   the thread's user code: an interrupt
					   (or the softirqs on its way out), a
					   breakpoint trap (a uprobe's) */
#define IFT_PF_F_FAULT		0x8	/* in the kernel for a page fault */

/*
 * A gpu_samples row: NVML's figure METRIC (ift-gpu.h) of GPU (NVML's device
 * index) at TS, over the SPAN ns before it (0: a reading at TS); PID a
 * process on the GPU for proc.used_bytes, else 0.
 */
enum ift_gpu_col {
	IFT_GS_GPU = IFT_C_COMMON_NR, IFT_GS_METRIC, IFT_GS_VALUE, IFT_GS_SPAN, IFT_GS_NR
};

enum ift_col_type { IFT_U64 = 1, IFT_I64, IFT_STR, IFT_TS };

struct ift_column_def {
	const char *name;
	enum ift_col_type type;
};

struct ift_table_def {
	const char *name;
	unsigned ncols;
	const struct ift_column_def *cols;	/* index == column id */
};

/* The schema of a standard table, or NULL for an id we do not know. */
const struct ift_table_def *ift_table_def(unsigned table);
/* Table id by name, or -IFT_E_NO_TABLE. */
int ift_table_by_name(const char *name);

enum ift_api { IFT_API_RUNTIME = 1, IFT_API_DRIVER = 2, IFT_API_NCCL = 3 };

struct ift_op {
	const char *name;
	enum ift_api api;
	unsigned nargs;
	const char *args[IFT_CALL_MAX_ARGS];
};

/*
 * Whether the LEN bytes at S may name an op's argument: a C identifier of at
 * most IFT_ARG_NAME_MAX bytes, as the catalog's names are.  Outputs take the
 * names as keys (JSON members, SQL columns): the writer writes no other, and
 * the reader calls a file with another damaged.
 */
#define IFT_ARG_NAME_MAX	63
bool ift_arg_name_ok(const char *s, size_t len);

struct ift_library {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t dev, ino;
	uint64_t functions;	/* functions probed */
	const char *kind;	/* "cudart", "cuda" or "nccl" (ift_api_lib_kind()) */
};

struct ift_loss {
	uint32_t cpu;
	uint64_t overrun, commit_overrun, dropped, read;
	/* events still in the buffer (the kernel's "entries"): after the last
	   read, what the recorder failed to read; not in the file's losses
	   (0 when read back) but summed in its meta, ring.unread_events */
	uint64_t unread;
};

/* One task of the process/thread table. */
struct ift_comm {
	uint64_t ts;
	const char *comm;
};

#define IFT_TASK_F_STARTED	0x1
#define IFT_TASK_F_EXITED	0x2
#define IFT_TASK_F_THREAD	0x4

struct ift_task {
	uint32_t tid, pid, ppid;
	uint32_t flags;
	uint64_t start_ts, exit_ts;
	unsigned ncomms;
	struct ift_comm *comms;	/* oldest first */
};

/*
 * A call site: the user stack at a traced call (record --stack), innermost
 * frame first.  Frame 0 is the probed function itself; the others are
 * return addresses.
 */
#define IFT_FRAME_F_PYTHON	0x1	/* a CPython interpreter frame */
#define IFT_FRAME_F_FP		0x2	/* from the kernel's frame-pointer chain */
/* a Python function: module = co_filename, symbol = co_qualname, offset = the
   line (0: none); a site's Python frames follow its native ones */
#define IFT_FRAME_F_PYSRC	0x4

struct ift_frame {
	const char *module;	/* file path; "" when no mapping held the address */
	uint64_t offset;	/* file offset in MODULE, or the address */
	const char *symbol;	/* demangled; "" when unknown */
	uint64_t symoff;	/* offset from the symbol's start */
	unsigned flags;
};

struct ift_stack {
	unsigned nframes;
	const struct ift_frame *frames;
};

/* native frames, then Python frames (IFT_FRAME_F_PYSRC) */
#define IFT_STACK_MAX_NATIVE	128
#define IFT_STACK_MAX_PYTHON	64
#define IFT_STACK_MAX_FRAMES	(IFT_STACK_MAX_NATIVE + IFT_STACK_MAX_PYTHON)

/* ---- writer ---------------------------------------------------------- */

struct ift_writer;

struct ift_writer_opts {
	unsigned chunk_rows;	/* rows per chunk; 0 = default (16384) */
	int zstd_level;		/* 0 = default (4); < 0 = store uncompressed */
	bool give;		/* hand the file to uid:gid (through fchown) */
	uid_t uid;
	gid_t gid;
};

/*
 * ift_writer_create - start a trace file
 * Creates PATH.part (mode 0644) and writes the header.  PATH.part is made
 * without following links (O_EXCL|O_NOFOLLOW): an older one is replaced only
 * when it is a regular file of the file's owner, else the error is EEXIST.
 * PATH itself appears only when ift_writer_finish() succeeds.  Returns a writer
 * the caller releases with ift_writer_free(), or NULL with errno set.
 */
struct ift_writer *ift_writer_create(const char *path,
				     const struct ift_writer_opts *opts);

/*
 * Adds a META entry, written by the next ift_writer_flush() after every
 * chunk it writes, so that a value set before a flush may describe the
 * rows appended before it (later values win).
 */
int ift_writer_meta(struct ift_writer *w, const char *key, const char *value);
int ift_writer_metaf(struct ift_writer *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Interns S; returns its string id (> 0), 0 for "" or NULL, or a negative error. */
int64_t ift_writer_string(struct ift_writer *w, const char *s);

/* Declares an op for table `calls'; returns its op id (> 0) or a negative error. */
int ift_writer_op(struct ift_writer *w, const struct ift_op *op);

int ift_writer_library(struct ift_writer *w, const struct ift_library *lib);

/*
 * ift_writer_stack - add a call site to the STACKS table (written with the
 * next flush, after the strings it names).  Returns its stack id (ids go
 * 1, 2, ... in the order of the calls) or a negative error.  Column `stack'
 * of `calls' refers to it.
 */
int64_t ift_writer_stack(struct ift_writer *w, const struct ift_frame *frames,
			 unsigned nframes);

/*
 * ift_writer_task - a task known before the file's first row (a window cut
 * from a longer trace), into the task table the writer ends the file with;
 * the `tasks' rows appended later fold onto it as onto one seen starting.
 */
int ift_writer_task(struct ift_writer *w, const struct ift_task *t);

/* Records the ring-buffer counters of one CPU (the last call per CPU wins). */
int ift_writer_loss(struct ift_writer *w, const struct ift_loss *loss);

/*
 * ift_writer_append - add one row to TABLE
 * ROW holds the table's columns in id order (ift_table_def(table)->ncols
 * values).  Rows of one table must come in non-decreasing ts order, else
 * -IFT_E_ORDER and the row is not added.  Memory stays bounded: full chunks are
 * compressed and written as they fill.
 */
int ift_writer_append(struct ift_writer *w, unsigned table, const uint64_t *row);

/* Writes every partly filled chunk, so a crash after it loses nothing before it. */
int ift_writer_flush(struct ift_writer *w);

/* Bytes written to the file so far, and rows appended per table. */
uint64_t ift_writer_bytes(const struct ift_writer *w);
uint64_t ift_writer_rows(const struct ift_writer *w, unsigned table);

/*
 * ift_writer_finish - flush, write the task table, the index and the trailer,
 * fsync, and rename PATH.part to PATH (-IFT_E_REPLACED, and no rename, when
 * PATH.part is no longer the file created).  After it (success or not) only
 * ift_writer_free() may be called.
 */
int ift_writer_finish(struct ift_writer *w);

/*
 * ift_writer_rotate - finish the file as ift_writer_finish() does and go on
 * into a new one at PATH (PATH.part until it is finished in turn), made as
 * the first was.  Each piece is a whole trace: it starts with every string,
 * op, call site, library and metadata key so far, under the same ids, and
 * ends with the losses and the task table so far; rows keep their order
 * across pieces.  On failure the writer is finished and the new file, if
 * any, left as it is.
 */
int ift_writer_rotate(struct ift_writer *w, const char *path);

/*
 * ift_writer_free - release the writer.  A writer not finished leaves PATH.part
 * on disk: what was flushed stays readable.
 */
void ift_writer_free(struct ift_writer *w);

/* ---- reader ---------------------------------------------------------- */

struct ift_trace;

#define IFT_OPEN_NO_INDEX	0x1	/* scan sections even if an index exists */
#define IFT_OPEN_VERIFY		0x2	/* check every chunk's checksum at open */

/* What the reader could not use in a damaged or unfinished file. */
struct ift_recovery {
	bool finished;		/* trailer and index present and valid */
	bool damaged;		/* something after the last good section */
	uint64_t file_size;
	uint64_t good_bytes;	/* bytes up to the end of the last good section */
	int reason;		/* negative error code of the first bad section */
};

/*
 * ift_trace_open - open a trace for reading
 * On success *OUT is a trace the caller releases with ift_trace_close().  An
 * unfinished or damaged file opens with what it holds before the damage: see
 * ift_trace_recovery().  Returns 0 or a negative error.
 */
int ift_trace_open(const char *path, unsigned flags, struct ift_trace **out);
void ift_trace_close(struct ift_trace *t);

/*
 * ift_trace_follow - read what was added to an unfinished file since it was
 * opened or last followed: a file a recorder is still writing (its
 * PATH.part, which stays the same file when it is renamed at the end).
 * Sets *GREW when whole sections were added; then every pointer the trace
 * gave out before (tasks, chunk infos) is stale, so no analysis or cursor
 * of it may be alive.  A finished file never grows.  Returns 0 or a
 * negative error (-IFT_E_REPLACED: the file shrank).
 */
int ift_trace_follow(struct ift_trace *t, bool *grew);

/*
 * ift_trace_open_run - the N pieces at PATHS of one recording (record
 * --rotate: the same record.run_id, record.piece numbers one after the
 * other, in any order) as one trace: every table's rows in time order
 * across them, the run's dictionaries and metadata (offsets from the
 * first piece's start), its task table.  -IFT_E_PIECES when they are not
 * that; on an error opening one, *BAD is its index.
 */
int ift_trace_open_run(const char *const *paths, size_t n, struct ift_trace **out,
		       size_t *bad);
/*
 * ift_trace_copy - the rows of T from FROM to TO (trace clock, both
 * included) into the new writer W (nothing written to it yet), with T's
 * metadata, dictionaries under the same ids, losses, and the tasks alive
 * at FROM: a trace of that window alone.  The caller finishes W.
 */
int ift_trace_copy(struct ift_trace *t, struct ift_writer *w, uint64_t from, uint64_t to);

/* The files T is read from: its pieces (ift_trace_open_run()), else 1. */
size_t ift_trace_piece_count(const struct ift_trace *t);
/* Whether T is a piece of a rotated recording (record.run_id, record.piece). */
bool ift_trace_is_piece(const struct ift_trace *t);
/*
 * ift_trace_piece_path - FILE.N.trace (FILE less a ".trace" it ends in):
 * the name of piece N of `record -o FILE --rotate', and of snapshot N of
 * --keep-last, into OUT (LEN bytes).
 */
void ift_trace_piece_path(const char *file, unsigned n, char *out, size_t len);

const struct ift_recovery *ift_trace_recovery(const struct ift_trace *t);
unsigned ift_trace_version(const struct ift_trace *t);

/* The last value of KEY, or NULL.  Owned by the trace. */
const char *ift_trace_meta(const struct ift_trace *t, const char *key);
/* KEY's value as a decimal number into *V; false when absent, empty or not
   one (a piece's key left empty, a damaged value). */
bool ift_trace_meta_u64(const struct ift_trace *t, const char *key, uint64_t *v);
/*
 * The recording machine's base page in bytes (host.page_size; 4096 when the
 * trace does not say), and the bytes of a page allocation of ORDER there: 0
 * for an order no allocator has (IFT_PAGE_ORDER_MAX and above: a corrupt
 * row), which every output shows as nothing allocated.
 */
#define IFT_PAGE_ORDER_MAX	32
uint64_t ift_trace_page_size(const struct ift_trace *t);
uint64_t ift_trace_alloc_bytes(const struct ift_trace *t, uint64_t order);
/* Iterates META entries (last value per key, in first-seen order). */
size_t ift_trace_meta_count(const struct ift_trace *t);
void ift_trace_meta_at(const struct ift_trace *t, size_t i,
		       const char **key, const char **value);

/* String by id ("" for 0, NULL for an unknown id).  Owned by the trace. */
const char *ift_trace_string(const struct ift_trace *t, uint64_t id);
/* Op by id, or NULL.  Owned by the trace. */
const struct ift_op *ift_trace_op(const struct ift_trace *t, uint64_t id);
size_t ift_trace_op_count(const struct ift_trace *t);

size_t ift_trace_library_count(const struct ift_trace *t);
const struct ift_library *ift_trace_library(const struct ift_trace *t, size_t i);

size_t ift_trace_loss_count(const struct ift_trace *t);
const struct ift_loss *ift_trace_loss(const struct ift_trace *t, size_t i);
/* Sum of overrun + dropped over all CPUs. */
uint64_t ift_trace_lost_events(const struct ift_trace *t);

/* Call sites by id (1..count), or NULL.  Owned by the trace. */
size_t ift_trace_stack_count(const struct ift_trace *t);
const struct ift_stack *ift_trace_stack(const struct ift_trace *t, uint64_t id);

/* Tasks sorted by tid (then start time).  Owned by the trace. */
size_t ift_trace_task_count(const struct ift_trace *t);
const struct ift_task *ift_trace_task(const struct ift_trace *t, size_t i);
/* The task TID that was alive (or last seen) at TS, or NULL. */
const struct ift_task *ift_trace_task_find(const struct ift_trace *t,
					   uint32_t tid, uint64_t ts);
/* The comm TASK had at TS (its first name if TS is before it). */
const char *ift_task_comm_at(const struct ift_task *task, uint64_t ts);
/* What every output calls tid 0, the CPU's idle task. */
#define IFT_IDLE_COMM	"<idle>"
/* The name TID had at TS: IFT_IDLE_COMM for 0, "" for a tid not in the table. */
const char *ift_trace_comm(const struct ift_trace *t, uint32_t tid, uint64_t ts);
/* True when the task table was rebuilt from the `tasks' rows. */
bool ift_trace_tasks_rebuilt(const struct ift_trace *t);

struct ift_chunk_info {
	unsigned table;
	unsigned piece;		/* of a run joined by ift_trace_open_run(), from 0;
				   0 in a trace of one file */
	uint32_t nrows;
	uint64_t ts_min, ts_max;
	uint64_t offset;	/* of the section in the file */
	uint64_t size;		/* payload bytes in the file */
};

uint64_t ift_trace_rows(const struct ift_trace *t, unsigned table);
uint64_t ift_trace_ts_min(const struct ift_trace *t);	/* over all tables */
uint64_t ift_trace_ts_max(const struct ift_trace *t);
size_t ift_trace_chunk_count(const struct ift_trace *t, unsigned table);
const struct ift_chunk_info *ift_trace_chunk_info(const struct ift_trace *t,
						  unsigned table, size_t i);
/* Index of the first chunk of TABLE that may hold rows at or after TS. */
size_t ift_trace_chunk_seek(const struct ift_trace *t, unsigned table,
			    uint64_t ts);

/* A decoded chunk: col[c][r] is column c of row r, for every known column. */
struct ift_chunk {
	unsigned table;
	uint32_t nrows;
	unsigned ncols;
	uint64_t *col[16];
	uint64_t *mem;		/* private */
	size_t cap;		/* private */
};

/*
 * ift_trace_chunk_load - decode chunk I of TABLE into C
 * C is reused between calls (zero it before the first); release it with
 * ift_chunk_release().  Returns 0 or a negative error (checksum, corrupt data).
 */
int ift_trace_chunk_load(struct ift_trace *t, unsigned table, size_t i,
			 struct ift_chunk *c);
void ift_chunk_release(struct ift_chunk *c);

/*
 * ift_trace_verify - decode every chunk of every table: what a checksum
 * cannot vouch for (a column in an encoding this build does not know,
 * values outside the time range the index gives).  Returns 0, or the first
 * chunk's error with *TABLE and *CHUNK naming it.
 */
int ift_trace_verify(struct ift_trace *t, unsigned *table, size_t *chunk);

/*
 * A cursor merges all tables (or those in MASK, bit N = table N) in time
 * order, from TS_FROM.  Rows with equal ts come in table order.
 */
struct ift_cursor;

struct ift_event {
	unsigned table;
	const uint64_t *row;	/* ift_table_def(table)->ncols values; valid
				   until the next call */
};

struct ift_cursor *ift_cursor_new(struct ift_trace *t, unsigned mask,
				  uint64_t ts_from);
/*
 * How many cursors have read TABLE of T since it was opened: each
 * ift_cursor_new() whose mask holds a table with rows counts one read of it,
 * however far it goes.  What a test counts of a reader's plan.
 */
uint64_t ift_trace_reads(const struct ift_trace *t, unsigned table);
/* 1 with *EV set, 0 at the end, or a negative error. */
int ift_cursor_next(struct ift_cursor *cur, struct ift_event *ev);
void ift_cursor_free(struct ift_cursor *cur);

#endif
