/* SPDX-License-Identifier: MIT */
#ifndef IFT_WORDS_H
#define IFT_WORDS_H

/*
 * The trace's words for people (src/trace/words.c): what the recorder, the
 * analyzer and every output may all say, so that none of them includes
 * another's header for a name or a unit.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ift-trace.h"

/*
 * An API's name where people read it ("runtime", "driver", "nccl"; "?" for
 * an id this build does not know), and the kind of library implementing it
 * as the LIBS section names it ("cudart", "cuda", "nccl").
 */
const char *ift_api_name(enum ift_api api);
const char *ift_api_lib_kind(enum ift_api api);

/* The sched_switch prev_state letters ("R", "R+", "S", "D", ...) into BUF. */
const char *ift_task_state_str(uint64_t state, char *buf, size_t len);

/*
 * A switch's prev_state says the task left the CPU still runnable: no
 * TASK_REPORT bit set, R (yielded) or R+ (preempted), as the kernel counts
 * nivcsw.  Every output's "preempted" is this.
 */
static inline bool ift_task_state_runnable(uint64_t state)
{
	return (state & 0xff) == 0;
}

/* TASK_UNINTERRUPTIBLE alone: D, waiting for I/O or a kernel lock. */
static inline bool ift_task_state_io(uint64_t state)
{
	return (state & 0xff) == 0x2;
}

/*
 * NS as "850ns", "12.3µs", "4.5ms", "1.23s" (at most 8 columns, for tables),
 * or SPACED, in ASCII for running text: "850 ns", "12.3 us", "4.5 ms".
 */
const char *ift_fmt_dur(char *buf, size_t len, uint64_t ns, bool spaced);

/*
 * ift_utf8_len - length (1..4) of the valid UTF-8 sequence at S, or 0 when it
 * is none (overlong, a surrogate, above U+10FFFF, cut short by a NUL): names
 * from the traced program are bytes, and JSON and HTML want text.
 */
size_t ift_utf8_len(const unsigned char *s);

/*
 * Strings from the traced program (names, paths, argv, Python frames, and
 * what SQL makes of them) as an output shows them, under one RULE for each
 * kind of output (src/trace/untrusted.c; docs/security.md, "Untrusted
 * strings"):
 *   IFT_TEXT_TERM   for a terminal: control bytes (C0 and DEL), C1 controls
 *                   (U+0080-U+009F), bidirectional overrides and isolates
 *                   (U+202A-U+202E, U+2066-U+2069) and bytes that begin no
 *                   valid UTF-8 sequence as \xNN, a byte each;
 *   IFT_TEXT_FIELD  the same, and a space as \x20 (a field of a line that
 *                   is split on spaces);
 *   IFT_TEXT_UTF8   for JSON, Parquet, SQLite TEXT and HTML: each byte that
 *                   begins no valid UTF-8 sequence as U+FFFD, the rest as is
 *                   (each format escapes its own specials);
 *   IFT_TEXT_UTF8_ALL IFT_TEXT_UTF8 without the bound below: a value of a
 *                   query's result, which SQL may have built from many.
 * At most IFT_TEXT_MAX bytes of a string are shown: a longer one is cut at a
 * character and ends with "...[+N bytes]", N the bytes left out.
 */
#define IFT_TEXT_MAX	4096
/* room for any string under any rule: a byte becomes at most 4 */
#define IFT_TEXT_BUF	(4 * IFT_TEXT_MAX + 32)

enum ift_text_rule { IFT_TEXT_TERM, IFT_TEXT_FIELD, IFT_TEXT_UTF8, IFT_TEXT_UTF8_ALL };

/* S (NULL: "") under RULE into BUF (LEN bytes, NUL included; cut to fit at a
   character, the bound's mark left out).  Returns BUF. */
const char *ift_text(char *buf, size_t len, const char *s, enum ift_text_rule rule);

/* S under RULE as a string to free(), or NULL (out of memory). */
char *ift_text_dup(const char *s, enum ift_text_rule rule);

/* S under RULE to F.  Returns 0, or -1 when F has an error. */
int ift_text_put(FILE *f, const char *s, enum ift_text_rule rule);

/*
 * Whether the valid UTF-8 sequence P (N bytes, from ift_utf8_len()) is one a
 * terminal acts on or one that makes text read other than it is: C0, DEL, a
 * C1 control (U+0080-U+009F; 0x9b is CSI to many terminals), or a
 * bidirectional embedding, override or isolate (U+202A-U+202E,
 * U+2066-U+2069).  IFT_TEXT_TERM escapes them; HTML shows U+FFFD.
 */
bool ift_text_control(const unsigned char *p, size_t n);

/*
 * ift_text_utf8 - the LEN bytes at S under RULE (IFT_TEXT_UTF8 or _UTF8_ALL)
 * for an output that takes a length: S itself where the rule changes
 * nothing (valid UTF-8 within the bound, the common case: no copy, *COPY
 * NULL), else a copy to free() in *COPY (a NUL inside ends it), returned.
 * NULL when out of memory.
 */
const char *ift_text_utf8(const char *s, size_t len, enum ift_text_rule rule, char **copy);

/* Whether the LEN bytes at S are valid UTF-8 with no NUL. */
bool ift_text_is_utf8(const char *s, size_t len);

/* BYTES as "512 B", "1.2 MiB" (binary units), and N as "1,234,567". */
const char *ift_fmt_bytes(char *buf, size_t len, double bytes);
const char *ift_fmt_count(char *buf, size_t len, uint64_t n);

/*
 * The frame as text: "sym+0x1a (lib.so)", "[python] ...", "lib.so+0x1234";
 * a Python function's frame (IFT_FRAME_F_PYSRC) as "FILE:LINE in FUNC", its
 * file as ift_py_file_short() gives it (":LINE" left out for line 0).
 */
void ift_frame_format(const struct ift_frame *f, char *buf, size_t size);

/*
 * A function as a profile names it, its offset left out: a native one as
 * "symbol (file)" ("inflate (libz.so.1)"), the interpreter's as a whole
 * ("[python] (libpython3.11.so.1.0)"), a file's code without symbols as
 * one ("[no symbol] (libz.so.1)"), "[kernel]" for F NULL; a Python line,
 * or an address outside every file, as ift_frame_format().
 */
void ift_func_format(const struct ift_frame *f, char *buf, size_t size);

/*
 * ift_py_file_short - a Python file's path as people know it: inside a
 * site-packages or dist-packages directory, the path from there, as
 * `import' names the module ("torch/utils/data/dataloader.py"); in the
 * standard library, from its "pythonX.Y" directory under a lib directory
 * ("python3.11/threading.py"); any other path (the user's own code,
 * "<frozen ...>", "<string>") as recorded.  Returns a pointer into FILE:
 * every form is a suffix of it.
 */
const char *ift_py_file_short(const char *file);

/*
 * Where a call site's frames sit in the call chain they came from.  The
 * file holds the native frames (the probed function out to main), then the
 * Python frames (IFT_FRAME_F_PYSRC: the function that made the call out to
 * <module>).  In the chain, the Python functions are the callers of the
 * native code the interpreter called into, and are run by the
 * interpreter's own frames: innermost first, frames [0, inner) (the probed
 * function out to the code Python called, a C extension, ctypes), then the
 * Python frames [native, nframes), then [inner, native) (the interpreter,
 * from its innermost frame flagged IFT_FRAME_F_PYTHON, out to main).  The
 * Python frames go in as one run at the innermost interpreter frame: where
 * an extension called back into Python, the native frames between two
 * Python functions are shown among the interpreter's.  A site without an
 * interpreter frame (the unwind stopped short of it) has inner == native:
 * the Python frames follow every native one.  Without Python frames the
 * chain is the file's order.
 */
struct ift_stack_parts {
	unsigned inner;		/* native frames below the interpreter */
	unsigned native;	/* native frames; the rest are Python frames */
	unsigned nframes;
};

/* The parts of ST (NULL: a site the file lacks, no frames). */
void ift_stack_parts(const struct ift_stack *st, struct ift_stack_parts *p);

/* The index in the site's frames of the K-th frame (K < p->nframes) of its
   call chain, innermost first. */
unsigned ift_stack_chain_index(const struct ift_stack_parts *p, unsigned k);

/*
 * The frames of ST as a flame graph stacks them, outermost first, into OUT
 * (at most MAX): the call chain, with the interpreter's own frames left out
 * when ST has Python frames (they ran them).  Returns how many.
 */
unsigned ift_stack_flame(const struct ift_stack *st, const struct ift_frame **out,
			 unsigned max);

/* The innermost Python frame of ST (the line that made the call), or NULL
   when it has none. */
const struct ift_frame *ift_stack_py_top(const struct ift_stack *st);

/* Orders Python frames by file, function, then line (0 when the same). */
int ift_py_frame_cmp(const struct ift_frame *x, const struct ift_frame *y);

#endif
