// SPDX-License-Identifier: MIT
/*
 * The profile (record --profile) as folded stacks, the format of Brendan
 * Gregg's stackcollapse scripts that flamegraph.pl, speedscope and inferno
 * read: a line per distinct stack, "thread;outermost;...;innermost COUNT".
 * The first frame is the thread's name when sampled; then the stack in the
 * order of its call chain, the Python frames in place of the interpreter's
 * own (which ran them), and "[kernel]" last for a sample taken there.
 * Lines are sorted, equal stacks of different threads of one name added
 * up.  A name's control bytes are escaped as the terminal rule has them,
 * and its ';' as \x3b: nothing from the traced program can make a frame
 * or a line of its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-export.h"
#include "ift-words.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/intern.h"

struct fkey {
	uint64_t stack;
	uint32_t tid;
	uint32_t flags;		/* IFT_PF_F_KERNEL */
};

struct fval {
	uint64_t n, first_ts;
};

struct line {
	char *text;
	uint64_t n;
};

/* S under the terminal rule, ';' escaped, onto B. */
static void put_name(struct buf *b, const char *s)
{
	char tmp[IFT_TEXT_BUF];

	ift_text(tmp, sizeof(tmp), s, IFT_TEXT_TERM);
	for (const char *p = tmp; *p; p++)
		if (*p == ';')
			ift_buf_put(b, "\\x3b", 4);
		else
			ift_buf_u8(b, (uint8_t)*p);
}

/* The folded line of key K (sampled first at TS) into B, NUL-terminated. */
static void fold(struct ift_trace *t, const struct fkey *k, uint64_t ts, struct buf *b)
{
	const struct ift_stack *st = k->stack ? ift_trace_stack(t, k->stack) : NULL;
	const char *comm = ift_trace_comm(t, k->tid, ts);
	const struct ift_frame *fs[IFT_STACK_MAX_FRAMES];
	unsigned n = ift_stack_flame(st, fs, IFT_STACK_MAX_FRAMES);
	char fr[1024];

	ift_buf_clear(b);
	put_name(b, comm && comm[0] ? comm : "?");
	for (unsigned i = 0; i < n; i++) {
		if (fs[i]->flags & IFT_FRAME_F_PYSRC || !fs[i]->symbol[0])
			ift_frame_format(fs[i], fr, sizeof(fr));
		else
			ift_func_format(fs[i], fr, sizeof(fr));
		ift_buf_u8(b, ';');
		put_name(b, fr);
	}
	if (k->flags & IFT_PF_F_KERNEL)
		ift_buf_put(b, ";[kernel]", 9);
	ift_buf_u8(b, 0);
}

static int by_text(const void *x, const void *y)
{
	return strcmp(((const struct line *)x)->text, ((const struct line *)y)->text);
}

/* Every profile row of T counted by thread, site and kind into KEYS, VALS. */
static int count_rows(struct ift_trace *t, struct ift_intern *keys, struct fval **vals,
		      size_t *cap)
{
	struct ift_cursor *cur = ift_cursor_new(t, 1U << IFT_T_PROFILE, 0);
	struct ift_event ev;
	int ret;

	if (!cur)
		return -ENOMEM;
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		struct fkey k = { .stack = ev.row[IFT_PF_STACK], .tid = (uint32_t)ev.row[IFT_C_TID],
				  .flags = (uint32_t)(ev.row[IFT_PF_FLAGS] & IFT_PF_F_KERNEL) };
		int64_t i = ift_intern(keys, &k, sizeof(k), true);

		if (i < 0 || ift_array_grow((void **)vals, cap, (size_t)i + 1, sizeof(**vals)) < 0) {
			ret = i < 0 ? (int)i : -ENOMEM;
			break;
		}
		if (!(*vals)[i].n++)
			(*vals)[i].first_ts = ev.row[IFT_C_TS];
	}
	ift_cursor_free(cur);
	return ret < 0 ? ret : 0;
}

/* The lines of KEYS, sorted, equal ones added up, to OUT. */
static int write_lines(struct ift_trace *t, const struct ift_intern *keys,
		       const struct fval *vals, FILE *out)
{
	size_t n = ift_intern_count(keys);
	struct line *v = calloc(n ? n : 1, sizeof(*v));
	struct buf b;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	ift_buf_init(&b);
	for (size_t i = 0; i < n && !ret; i++) {
		struct fkey k;

		memcpy(&k, ift_intern_get(keys, i, NULL), sizeof(k));
		fold(t, &k, vals[i].first_ts, &b);
		if (b.oom || !(v[i].text = strdup((const char *)b.data)))
			ret = -ENOMEM;
		v[i].n = vals[i].n;
	}
	if (!ret)
		qsort(v, n, sizeof(*v), by_text);
	for (size_t i = 0; i < n && !ret; ) {
		uint64_t sum = 0;
		size_t j = i;

		while (j < n && !strcmp(v[j].text, v[i].text))
			sum += v[j++].n;
		if (fprintf(out, "%s %" PRIu64 "\n", v[i].text, sum) < 0)
			ret = errno ? -errno : -EIO;
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
	ift_buf_release(&b);
	return ret;
}

int ift_export_folded(struct ift_trace *t, FILE *out, const struct ift_export_opts *opts)
{
	struct ift_intern keys;
	struct fval *vals = NULL;
	size_t cap = 0;
	int ret;

	(void)opts;
	ift_intern_init(&keys);
	ret = count_rows(t, &keys, &vals, &cap);
	if (!ret)
		ret = write_lines(t, &keys, vals, out);
	if (!ret && fflush(out))
		ret = -errno;
	ift_intern_release(&keys);
	free(vals);
	return ret;
}
