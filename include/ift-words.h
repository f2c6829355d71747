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

#include "ift-trace.h"

/* The sched_switch prev_state letters ("R", "R+", "S", "D", ...) into BUF. */
const char *ift_task_state_str(uint64_t state, char *buf, size_t len);

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

/* BYTES as "512 B", "1.2 MiB" (binary units), and N as "1,234,567". */
const char *ift_fmt_bytes(char *buf, size_t len, double bytes);
const char *ift_fmt_count(char *buf, size_t len, uint64_t n);

/* The frame as text: "sym+0x1a (lib.so)", "[python] ...", "lib.so+0x1234". */
void ift_frame_format(const struct ift_frame *f, char *buf, size_t size);

#endif
