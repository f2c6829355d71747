// SPDX-License-Identifier: MIT
/*
 * CPython's frames, followed as the interpreter lays them out (see
 * ift-pystack.h).  The offsets are CPython's own: each layout below was
 * taken with offsetof() from that version's headers (Include/internal,
 * Py_BUILD_CORE), and the unit test checks the one of the Python it is
 * built against (test-pystack.c) by walking its own interpreter, and each
 * by walking a child python of that version where the machine has one
 * (pyenv's 3.11.7, 3.12.1 and 3.13.0 here).
 *
 * A thread state's current frame is the innermost; each frame names its
 * code object, its caller (previous) and the last instruction it executed.
 * The code object has the file and the qualified name as str objects, the
 * first line, and the location table that maps an instruction to its line
 * (Objects/locations.md: an entry per run of code units, each with the
 * change of line from the one before).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ift-arch.h"
#include "ift-error.h"
#include "ift-pystack.h"

/* Frames followed at most: a chain longer than this is a loop in freed memory. */
#define MAX_CHAIN		4096
/* Frames walked before their code objects are read, as one batch */
#define AHEAD_FRAMES		64
/* A location table longer than this is no code object's. */
#define MAX_LINETABLE		(1U << 20)
/* sizeof(_Py_CODEUNIT) */
#define CODEUNIT		2
/* _PyInterpreterFrame.owner of the C stack's shim frames (3.12+) */
#define FRAME_OWNED_BY_CSTACK	3

static const struct ift_py_layout layouts[] = {
	/* 3.8 (3.8.18), 3.9 (3.9.18), 3.10 (3.10.13): frame objects, no native
	   thread id, no qualified name; co_lnotab and f_lasti in bytes, then
	   3.10's co_linetable and f_lasti in code units (LASTI: its offset) */
#define FRAME_OBJECTS(m, lines_, lasti)								\
	{											\
		.major = 3, .minor = (m), .frames = IFT_PY_FRAME_OBJECTS, .lines = (lines_),	\
		.rt_interp_head = 32, .in_next = 0, .in_threads_head = 8,			\
		.ts_next = 8, .ts_pthread = 176, .ts_frame = 24, .ts_cframe_current = -1,	\
		.fr_code = 32, .fr_previous = 24, .fr_instr = (lasti), .fr_size = (lasti) + 4,	\
		.co_filename = 104, .co_qualname = 112, .co_firstlineno = 40,	\
		.co_linetable = 120, .co_code = 48, .co_size = 128,				\
		.by_size = 16, .by_data = 32,							\
		.st_length = 16, .st_state = 32, .st_ascii_data = 48, .st_compact_data = 72,	\
	}
	FRAME_OBJECTS(8, IFT_PY_LNOTAB, 104),
	FRAME_OBJECTS(9, IFT_PY_LNOTAB, 104),
	FRAME_OBJECTS(10, IFT_PY_LINETABLE, 96),
#undef FRAME_OBJECTS
	/* 3.11 (Debian 12's 3.11.2) */
	{
		.major = 3, .minor = 11, .frames = IFT_PY_FRAME_INTERP, .lines = IFT_PY_LOCATIONS,
		.rt_interp_head = 40, .in_next = 0, .in_threads_head = 16,
		.ts_next = 8, .ts_native_tid = 160, .ts_frame = 56, .ts_cframe_current = 8,
		.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .fr_size = 72,
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 72,
		.co_linetable = 136, .co_code = 184, .co_size = 144,
		.by_size = 16, .by_data = 32,
		.st_length = 16, .st_state = 32, .st_ascii_data = 48, .st_compact_data = 72,
	},
	/* 3.12 (3.12.1): the frame's fields moved, str objects lost wstr */
	{
		.major = 3, .minor = 12, .frames = IFT_PY_FRAME_INTERP, .lines = IFT_PY_LOCATIONS,
		.rt_interp_head = 40, .in_next = 0, .in_threads_head = 72,
		.ts_next = 8, .ts_native_tid = 144, .ts_frame = 56, .ts_cframe_current = 0,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 80,
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
		.co_linetable = 136, .co_code = 192, .co_size = 144,
		.by_size = 16, .by_data = 32,
		.st_length = 16, .st_state = 32, .st_ascii_data = 40, .st_compact_data = 56,
	},
	/* 3.13 (3.13.0): no cframe, f_executable and instr_ptr (the instruction
	   executing, where 3.11 and 3.12 keep the one before: the same index) */
	{
		.major = 3, .minor = 13, .frames = IFT_PY_FRAME_INTERP, .lines = IFT_PY_LOCATIONS,
		.rt_interp_head = 632, .in_next = 7264, .in_threads_head = 7344,
		.ts_next = 8, .ts_native_tid = 160, .ts_frame = 72, .ts_cframe_current = -1,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 80,
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
		.co_linetable = 136, .co_code = 200, .co_size = 144,
		.by_size = 16, .by_data = 32,
		.st_length = 16, .st_state = 32, .st_ascii_data = 40, .st_compact_data = 56,
	},
};

const struct ift_py_layout *ift_py_layout(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

int ift_py_read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(*(const pid_t *)ctx, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_ptr(const struct ift_py_mem *m, uint64_t addr, uint64_t *v)
{
	return m->read(m->ctx, addr, v, sizeof(*v));
}

/* The native id of the thread whose state is at TS into *TID. */
static int thread_tid(const struct ift_py_layout *l, const struct ift_py_mem *m,
		      uint64_t ts, uint64_t *tid)
{
	uint64_t pt;
	int32_t t32 = 0;
	int ret;

	if (l->ts_native_tid)
		return read_ptr(m, ts + l->ts_native_tid, tid);
	/* before 3.11, only pthread_self(): glibc keeps the tid in it */
	ret = read_ptr(m, ts + l->ts_pthread, &pt);
	if (!ret && pt)
		ret = m->read(m->ctx, pt + ift_arch_native->glibc_pthread_tid, &t32, sizeof(t32));
	*tid = (uint64_t)(int64_t)t32;
	return ret;
}

int ift_py_thread_is(const struct ift_py_layout *l, const struct ift_py_mem *m,
		     uint64_t tstate, pid_t tid)
{
	uint64_t native = 0;
	int ret = thread_tid(l, m, tstate, &native);

	return ret < 0 ? ret : native == (uint64_t)tid;
}

int ift_py_thread(const struct ift_py_layout *l, const struct ift_py_mem *m,
		  uint64_t runtime, pid_t tid, uint64_t *tstate)
{
	uint64_t interp, ts;
	unsigned n = 0;
	int ret;

	if ((ret = read_ptr(m, runtime + l->rt_interp_head, &interp)) < 0)
		return ret;
	for (; interp && n < MAX_CHAIN; n++) {
		if ((ret = read_ptr(m, interp + l->in_threads_head, &ts)) < 0)
			return ret;
		for (; ts && n < MAX_CHAIN; n++) {
			uint64_t native = 0;

			if ((ret = thread_tid(l, m, ts, &native)) < 0)
				return ret;
			if (native == (uint64_t)tid) {
				*tstate = ts;
				return 0;
			}
			if ((ret = read_ptr(m, ts + l->ts_next, &ts)) < 0)
				return ret;
		}
		if ((ret = read_ptr(m, interp + l->in_next, &interp)) < 0)
			return ret;
	}
	return -ESRCH;
}

/* Appends code point C to OUT (room for N bytes, NUL included) as UTF-8. */
static size_t put_utf8(char *out, size_t at, size_t n, uint32_t c)
{
	char b[4];
	size_t k;

	if (c < 0x80) {
		b[0] = (char)c;
		k = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		k = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		k = 3;
	} else {
		b[0] = (char)(0xf0 | (c >> 18 & 0x07));
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		k = 4;
	}
	if (at + k >= n)
		return at;	/* cut at a character, never inside one */
	memcpy(out + at, b, k);
	return at + k;
}

/*
 * The str object at ADDR into OUT (N bytes) as UTF-8, cut to fit: a compact
 * string, as every identifier and file name is (its state: kind in bits
 * 2-4, compact bit 5, ascii bit 6, in 3.11 as in 3.12 and 3.13).
 */
static int read_str(const struct ift_py_layout *l, const struct ift_py_mem *m,
		    uint64_t addr, char *out, size_t n)
{
	uint8_t hdr[96], buf[IFT_PY_FILE_MAX * 4];
	uint64_t len;
	uint32_t state;
	unsigned kind;
	size_t at = 0;
	int ret;

	out[0] = 0;
	if (!addr)
		return -IFT_E_PY_MOVED;
	if ((ret = m->read(m->ctx, addr, hdr, (size_t)l->st_state + 4)) < 0)
		return ret;
	len = u64_at(hdr, l->st_length);
	state = u32_at(hdr, l->st_state);
	kind = state >> 2 & 7;
	if (!(state & 1U << 5) || (kind != 1 && kind != 2 && kind != 4) || len > 1U << 20)
		return -IFT_E_PY_MOVED;
	if (len > n - 1)
		len = n - 1;
	if ((ret = m->read(m->ctx, addr + (state & 1U << 6 ? l->st_ascii_data : l->st_compact_data),
		      buf, (size_t)len * kind)) < 0)
		return ret;
	for (size_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? buf[i] : kind == 2 ? (uint32_t)(buf[2 * i] | buf[2 * i + 1] << 8) :
			     u32_at(buf, 4 * i);

		at = put_utf8(out, at, n, c);
	}
	out[at] = 0;
	return 0;
}

/* The location table's varints: 6 bits a byte, the lowest first, bit 6 for more. */
static const uint8_t *loc_varint(const uint8_t *p, const uint8_t *end, unsigned *v)
{
	unsigned shift = 0;

	*v = 0;
	while (p < end && shift < 32) {
		uint8_t b = *p++;

		*v |= (unsigned)(b & 63) << shift;
		if (!(b & 64))
			return p;
		shift += 6;
	}
	return NULL;
}

/* 3.8, 3.9 (Objects/lnotab_notes.txt): the line of the last pair whose
   byte offset is at most ADDR. */
static int lnotab_line(const uint8_t *p, size_t len, int firstlineno, long addr)
{
	int line = firstlineno;
	long at = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += p[i];
		if (at > addr)
			break;
		line += (int8_t)p[i + 1];
	}
	return line;
}

/* 3.10: ranges of P[0] bytes, each P[1] lines on (-128: no line). */
static int linetable_line(const uint8_t *p, size_t len, int firstlineno, long addr)
{
	int line = firstlineno;
	long end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t d = (int8_t)p[i + 1];

		end += p[i];
		if (d != -128)
			line += d;
		if (addr < end)
			return d == -128 ? -1 : line;
	}
	return -1;
}

/* 3.11+: an entry per run of code units (Objects/locations.md). */
static int locations_line(const uint8_t *table, size_t len, int firstlineno, long index)
{
	const uint8_t *p = table, *end = table + len;
	long start = 0;
	int line = firstlineno;

	while (p < end && (*p & 0x80)) {
		unsigned code = *p >> 3 & 15, units = (*p & 7) + 1, v;
		int delta = 0;

		p++;
		switch (code) {
		case 13:	/* no columns */
		case 14:	/* long form: the line's change first */
			if (!(p = loc_varint(p, end, &v)))
				return -1;
			delta = v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
			break;
		case 10:	/* one line: the change is the code's */
		case 11:
		case 12:
			delta = (int)code - 10;
			break;
		default:	/* 0-9, the same line; 15, no line */
			break;
		}
		line += delta;
		if (index < start + (long)units)
			return code == 15 ? -1 : line;
		start += units;
		/* the entry's other bytes: up to the next with bit 7 set */
		while (p < end && !(*p & 0x80))
			p++;
	}
	return -1;
}

int ift_py_line(enum ift_py_lines lines, const uint8_t *table, size_t len, int firstlineno,
		long addr)
{
	if (addr < 0)
		return firstlineno;
	switch (lines) {
	case IFT_PY_LNOTAB:
		return lnotab_line(table, len, firstlineno, addr);
	case IFT_PY_LINETABLE:
		return linetable_line(table, len, firstlineno, addr);
	case IFT_PY_LOCATIONS:
		return locations_line(table, len, firstlineno, addr / CODEUNIT);
	}
	return -1;
}

/*
 * The code objects a walk has read, by address: their names and line table,
 * so that a frame costs two reads (the frame, the code object's head) once
 * its code was seen.  An entry is used only while the code object at that
 * address still names the same file, name and line table objects (which it
 * holds references to, so they cannot have been freed and reused while it
 * lives) and the same first line.  Direct-mapped: a collision replaces.
 */
#define CODES_SLOTS	1024
/* A longer line table is not kept: its first line stands for its lines. */
#define LINETABLE_MAX	4096

struct code_entry {
	uint64_t addr;			/* 0: empty */
	uint64_t filename, qualname, linetable;
	int32_t first;
	uint32_t table_len;		/* UINT32_MAX: too long, FIRST is the line */
	uint8_t *table;
	char file[IFT_PY_FILE_MAX], func[IFT_PY_FUNC_MAX];
};

struct ift_py_codes {
	struct code_entry e[CODES_SLOTS];
	uint64_t hits, misses;
};

struct ift_py_codes *ift_py_codes_new(void)
{
	return calloc(1, sizeof(struct ift_py_codes));
}

void ift_py_codes_free(struct ift_py_codes *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CODES_SLOTS; i++)
		free(c->e[i].table);
	free(c);
}

void ift_py_codes_stats(const struct ift_py_codes *c, uint64_t *hits, uint64_t *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}

/* The code object at CODE as read, into E (its table malloc()ed). */
static int read_code_entry(const struct ift_py_layout *l, const struct ift_py_mem *m,
			   uint64_t code, const uint8_t *co, struct code_entry *e)
{
	uint64_t size;
	int ret;

	e->addr = code;
	e->filename = u64_at(co, l->co_filename);
	e->qualname = u64_at(co, l->co_qualname);
	e->linetable = u64_at(co, l->co_linetable);
	memcpy(&e->first, co + l->co_firstlineno, sizeof(e->first));
	e->table = NULL;
	if ((ret = read_str(l, m, e->filename, e->file, sizeof(e->file))) < 0 ||
	    (ret = read_str(l, m, e->qualname, e->func, sizeof(e->func))) < 0)
		return ret;
	if (e->first < 0 || !e->linetable)
		return -IFT_E_PY_MOVED;
	if ((ret = read_ptr(m, e->linetable + l->by_size, &size)) < 0)
		return ret;
	if (size > MAX_LINETABLE)
		return -IFT_E_PY_MOVED;
	if (size > LINETABLE_MAX) {
		/* its table in pieces would need the walk's state */
		e->table_len = UINT32_MAX;
		return 0;
	}
	e->table_len = (uint32_t)size;
	if (!(e->table = malloc(size ? (size_t)size : 1)))
		return -ENOMEM;
	if ((ret = m->read(m->ctx, e->linetable + l->by_data, e->table, (size_t)size)) < 0) {
		free(e->table);
		e->table = NULL;
		return ret;
	}
	return 0;
}

static void entry_to_frame(const struct ift_py_layout *l, const struct code_entry *e,
			   long addr, struct ift_py_frame *f)
{
	memcpy(f->file, e->file, sizeof(f->file));
	memcpy(f->func, e->func, sizeof(f->func));
	f->line = e->table_len == UINT32_MAX ? e->first :
		  ift_py_line(l->lines, e->table, e->table_len, e->first, addr);
}

/* One frame's code object at CODE, its instruction at byte offset ADDR, into F. */
static int read_code(const struct ift_py_layout *l, const struct ift_py_mem *m,
		     struct ift_py_codes *codes, uint64_t code, long addr,
		     struct ift_py_frame *f)
{
	uint8_t co[512];
	struct code_entry tmp, *e;
	int32_t first;
	int ret;

	if (l->co_size > sizeof(co))
		return -EINVAL;
	if ((ret = m->read(m->ctx, code, co, l->co_size)) < 0)
		return ret;
	if (!codes) {
		ret = read_code_entry(l, m, code, co, &tmp);
		if (ret >= 0)
			entry_to_frame(l, &tmp, addr, f);
		free(tmp.table);
		return ret;
	}
	e = &codes->e[(code >> 4) * 0x9e3779b97f4a7c15ULL >> 54];
	memcpy(&first, co + l->co_firstlineno, sizeof(first));
	if (e->addr == code && e->filename == u64_at(co, l->co_filename) &&
	    e->qualname == u64_at(co, l->co_qualname) &&
	    e->linetable == u64_at(co, l->co_linetable) && e->first == first) {
		codes->hits++;
		entry_to_frame(l, e, addr, f);
		return 0;
	}
	codes->misses++;
	free(e->table);
	memset(e, 0, sizeof(*e));
	if ((ret = read_code_entry(l, m, code, co, e)) < 0) {
		free(e->table);
		memset(e, 0, sizeof(*e));
		return ret;
	}
	entry_to_frame(l, e, addr, f);
	return 0;
}

/*
 * The byte offset in CODE of frame FR's instruction.  3.11, 3.12: the last
 * executed (one unit before the first at the start); 3.13: the one
 * executing; 3.8-3.10: f_lasti, -1 at the start.  Each is what that
 * version's PyCode_Addr2Line() is asked for.
 */
static long instr_addr(const struct ift_py_layout *l, const uint8_t *fr, uint64_t code)
{
	int32_t lasti;

	if (l->frames == IFT_PY_FRAME_INTERP)
		return (long)(int64_t)(u64_at(fr, l->fr_instr) - (code + l->co_code));
	memcpy(&lasti, fr + l->fr_instr, sizeof(lasti));
	if (lasti < 0)
		return -1;
	return l->lines == IFT_PY_LINETABLE ? (long)lasti * CODEUNIT : lasti;
}

int ift_py_frames(const struct ift_py_layout *l, const struct ift_py_mem *m,
		  struct ift_py_codes *codes, uint64_t tstate, struct ift_py_frame *out,
		  size_t max)
{
	uint8_t fr[256];
	uint64_t frame, code[AHEAD_FRAMES];
	long instr[AHEAD_FRAMES];
	size_t n = 0, k = 0, batch;
	int ret;

	if (l->fr_size > sizeof(fr))
		return -EINVAL;
	if ((ret = read_ptr(m, tstate + l->ts_frame, &frame)) < 0)
		return ret;
	if (l->ts_cframe_current >= 0 && frame &&
	    (ret = read_ptr(m, frame + (uint64_t)l->ts_cframe_current, &frame)) < 0)
		return ret;
	/* the frames a batch at a time, then their code objects, told ahead */
	while (frame && n < max) {
		for (batch = 0; frame && n + batch < max && batch < AHEAD_FRAMES; k++) {
			if (k == MAX_CHAIN)
				return -IFT_E_PY_MOVED;
			if ((ret = m->read(m->ctx, frame, fr, l->fr_size)) < 0)
				return ret;
			if (l->frames == IFT_PY_FRAME_OBJECTS ||
			    l->minor < 12 || fr[l->fr_owner] != FRAME_OWNED_BY_CSTACK) {
				code[batch] = u64_at(fr, l->fr_code);
				instr[batch] = instr_addr(l, fr, code[batch]);
				batch++;
			}
			frame = u64_at(fr, l->fr_previous);
		}
		if (m->ahead)
			m->ahead(m->ctx, code, batch, l->co_size);
		for (size_t i = 0; i < batch; i++, n++)
			if ((ret = read_code(l, m, codes, code[i], instr[i], &out[n])) < 0)
				return ret;
	}
	return (int)n;
}
