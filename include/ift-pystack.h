/* SPDX-License-Identifier: MIT */
#ifndef IFT_PYSTACK_H
#define IFT_PYSTACK_H

/*
 * pystack: a CPython thread's Python frames (file, function, line), read
 * from memory the caller's reader gives: another process's through
 * process_vm_readv() as py-spy reads it, without stopping it, or this
 * process's own.  No BPF: the interpreter's frames are not on the C stack
 * (since 3.11 they live in the thread's frame chunks on the heap), so they
 * are followed as the interpreter lays them out, a layout per minor version
 * (struct ift_py_layout, from CPython's headers).
 *
 * The walk reads a frame's fields while the thread may run on: a frame
 * freed under it shows as a pointer that leads nowhere (the reader's
 * error), or as a code object whose names are no compact str objects or
 * whose line table is out of bounds, and the walk stops there with
 * -IFT_E_PY_MOVED.  Which moment a stack is from is the caller's to say.
 *
 * Nothing here prints or exits.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How a version keeps its frames, and their lines. */
enum ift_py_frames {
	IFT_PY_FRAME_OBJECTS,	/* 3.8-3.10: PyFrameObject, f_back, f_lasti */
	IFT_PY_FRAME_INTERP,	/* 3.11+: _PyInterpreterFrame in the thread's chunks */
};

enum ift_py_lines {
	IFT_PY_LNOTAB,		/* 3.8, 3.9: co_lnotab, (bytes, line) pairs */
	IFT_PY_LINETABLE,	/* 3.10: co_linetable, (bytes, line or -128) pairs */
	IFT_PY_LOCATIONS,	/* 3.11+: the location table (Objects/locations.md) */
};

/* Where the walker finds what it reads, as offsets into CPython's structs. */
struct ift_py_layout {
	unsigned major, minor;
	enum ift_py_frames frames;
	enum ift_py_lines lines;
	/* _PyRuntimeState, PyInterpreterState */
	uint16_t rt_interp_head, in_next, in_threads_head;
	/* PyThreadState: the thread's native id (3.11+; 0: none, then the
	   tid in glibc's struct pthread at ts_pthread), the current frame, or
	   (cframe >= 0) a pointer to a _PyCFrame whose current_frame is at
	   that offset */
	uint16_t ts_next, ts_native_tid, ts_pthread, ts_frame;
	int16_t ts_cframe_current;
	/* _PyInterpreterFrame: the code, the caller's frame, the last (3.11,
	   3.12) instruction executed, who owns it (3.12: the C stack's shim
	   frames, skipped); PyFrameObject: f_code, f_back, f_lasti (an int:
	   bytes in 3.8 and 3.9, code units in 3.10) */
	uint16_t fr_code, fr_previous, fr_instr, fr_owner, fr_size;
	/* PyCodeObject (co_qualname: co_name before 3.11) */
	uint16_t co_filename, co_qualname, co_firstlineno, co_linetable, co_code,
		 co_size;
	/* PyBytesObject, PyASCIIObject/PyCompactUnicodeObject */
	uint16_t by_size, by_data, st_length, st_state, st_ascii_data, st_compact_data;
};

/* The layout of CPython MAJOR.MINOR; NULL for a version not known (yet). */
const struct ift_py_layout *ift_py_layout(unsigned major, unsigned minor);

/* Where a process's interpreter is (ift_py_locate()). */
struct ift_py_target {
	char path[PATH_MAX];		/* the mapped file that defines _PyRuntime */
	uint64_t runtime;		/* _PyRuntime's address in the process */
	unsigned major, minor;		/* Py_Version (3.11+), else from the name */
	const struct ift_py_layout *layout;	/* NULL: a version without one */
};

/* Whether a mapped file of base name BASE may hold an interpreter (python3*, libpython3*). */
bool ift_py_interpreter_file(const char *base);

/*
 * ift_py_locate - the CPython of process PID: the executable or libpython
 * mapped there whose ELF symbols define _PyRuntime (the file is read, never
 * run), that symbol's address in the process and the version.  0, -ENOENT
 * for a process without one, or an error reading /proc or its memory.
 */
int ift_py_locate(pid_t pid, struct ift_py_target *t);

/* Reads LEN bytes at ADDR into BUF: 0, or a negative errno. */
typedef int (*ift_py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * Another process's memory as the walks below read it: READ, and AHEAD if
 * not NULL, told that LEN bytes at each of ADDR[0..N) are read next, so
 * that it may fetch them at once.  AHEAD is a hint: READ answers alone.
 */
struct ift_py_mem {
	ift_py_read_fn read;
	void (*ahead)(void *ctx, const uint64_t *addr, size_t n, size_t len);
	void *ctx;
};

/* A reader of process *(pid_t *)CTX's memory (process_vm_readv()). */
int ift_py_read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * One look at a process's memory: the pages read are kept until the next
 * ift_py_snap_begin(), so a walk that reads a page many times (a frame
 * chunk, a code object's neighbours) reads it once, and AHEAD fetches every
 * page it is told of in one process_vm_readv().  Pages may be seen at
 * slightly different times (the process runs on); a walk checks what it
 * reads as it does without the snapshot.
 */
struct ift_py_snap;
struct ift_py_snap *ift_py_snap_new(void);	/* NULL: no memory */
void ift_py_snap_free(struct ift_py_snap *s);
/* A new look at PID's memory, through *M (its read and ahead) until the next. */
void ift_py_snap_begin(struct ift_py_snap *s, pid_t pid, struct ift_py_mem *m);
/* The process_vm_readv() calls made, and the pages they read, so far. */
void ift_py_snap_stats(const struct ift_py_snap *s, uint64_t *calls, uint64_t *pages);

#define IFT_PY_FILE_MAX	256
#define IFT_PY_FUNC_MAX	128

struct ift_py_frame {
	char file[IFT_PY_FILE_MAX];	/* co_filename, UTF-8, cut to fit */
	char func[IFT_PY_FUNC_MAX];	/* co_qualname ("Loader.__next__") */
	int line;			/* -1: the instruction has no line */
};

/*
 * ift_py_thread - the PyThreadState of the thread with native id TID in the
 * runtime at RUNTIME (the address of _PyRuntime), any interpreter: its
 * address in *TSTATE, 0 if found, -ESRCH if not, or a reader's error.
 */
int ift_py_thread(const struct ift_py_layout *l, const struct ift_py_mem *m,
		  uint64_t runtime, pid_t tid, uint64_t *tstate);

/* 1 if the PyThreadState at TSTATE is the one of native thread TID, 0 if
   not, or a reader's error: a state found before, checked before use. */
int ift_py_thread_is(const struct ift_py_layout *l, const struct ift_py_mem *m,
		     uint64_t tstate, pid_t tid);

/*
 * One process's code objects as a walk read them (names, line table), so
 * that a frame whose code was seen costs two reads.  An entry stands only
 * while the object at its address still names the same file, name and line
 * table objects and first line.
 */
struct ift_py_codes;
struct ift_py_codes *ift_py_codes_new(void);	/* NULL: no memory */
void ift_py_codes_free(struct ift_py_codes *c);
void ift_py_codes_stats(const struct ift_py_codes *c, uint64_t *hits, uint64_t *misses);

/*
 * ift_py_frames - the Python frames of the thread whose PyThreadState is at
 * TSTATE, innermost first, at most MAX into OUT, through the process's
 * CODES (NULL: read every code object).  Their number; -IFT_E_PY_MOVED
 * when a frame or code object read is not one (the thread moved on while it
 * was read), or a reader's error.
 */
int ift_py_frames(const struct ift_py_layout *l, const struct ift_py_mem *m,
		  struct ift_py_codes *codes, uint64_t tstate, struct ift_py_frame *out,
		  size_t max);

/*
 * The Python frames of any thread of the processes the caller names, read
 * with process_vm_readv() (py-spy's way, the thread not stopped): each
 * process's interpreter is located once (ift_py_locate()), its code objects
 * kept (struct ift_py_codes), until ift_py_reader_forget() (an exec, an
 * exit).  A process without CPython, or with a version without a layout,
 * is remembered as such.
 */
struct ift_py_reader;
struct ift_py_reader *ift_py_reader_new(void);	/* NULL: no memory */
void ift_py_reader_free(struct ift_py_reader *r);

/*
 * ift_py_reader_frames - the frames of thread TID of process PID now, as
 * ift_py_frames() gives them: their number (0: the process has no CPython
 * we can read, or the thread no thread state or no frame), or an error.
 */
int ift_py_reader_frames(struct ift_py_reader *r, pid_t pid, pid_t tid,
			 struct ift_py_frame *out, size_t max);

/* PID exec'ed or exited: what was found of it no longer holds. */
void ift_py_reader_forget(struct ift_py_reader *r, pid_t pid);

/*
 * PID mapped the file PATH (the executable segment perf reports): if it is
 * an interpreter's (python3*, libpython3*) and PID has none located yet,
 * locate it now, before the process makes a call whose frames would wait
 * for that.  0 or -ENOMEM.
 */
int ift_py_reader_mapped(struct ift_py_reader *r, pid_t pid, const char *path);

/* Process PID was forked by PPID: the same interpreter at the same place. */
int ift_py_reader_fork(struct ift_py_reader *r, pid_t pid, pid_t ppid);

/*
 * ift_py_line - the line of the instruction at byte offset ADDR (< 0: before
 * the first) by a code object's line table of format LINES (LEN bytes), the
 * object starting at line FIRSTLINENO, as that version's PyCode_Addr2Line()
 * gives it: -1 for an instruction without a line.
 */
int ift_py_line(enum ift_py_lines lines, const uint8_t *table, size_t len, int firstlineno,
		long addr);

#endif
