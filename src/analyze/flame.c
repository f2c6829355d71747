// SPDX-License-Identifier: MIT
/*
 * A profile group's flame graph: its samples' stacks merged into a tree
 * (a frame under its caller, equal frames as profile.c counts them one),
 * laid out for drawing: each box's samples and where it starts, children
 * side by side under their parent, the widest first, boxes narrower than
 * 1/IFT_PROF_FLAME_MIN of the group left out with all above them, and the
 * narrowest more until IFT_PROF_FLAME_BOXES are left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-words.h"
#include "util/array.h"
#include "analyze.h"

struct fnode {
	const struct ift_frame *f;	/* NULL: the kernel (or the root) */
	int64_t key;			/* the frame's identity; -1: the root */
	uint32_t child, next;		/* 1 + index; 0: none */
	uint32_t depth;
	uint64_t w;
};

struct tree {
	struct fnode *v;
	size_t n, cap;
	struct ift_intern ids;		/* frame identities */
	struct buf key;
};

void ift_az_frame_key(struct buf *b, const struct ift_frame *f)
{
	bool py = f && (f->flags & IFT_FRAME_F_PYSRC);

	ift_buf_u8(b, py);
	if (!f)
		return;
	ift_buf_str(b, f->module);
	/* a native function by its name; a file's code without symbols, and
	   the interpreter's own (whose work is the Python line's), as one */
	if (!(f->flags & IFT_FRAME_F_PYTHON) || py)
		ift_buf_str(b, f->symbol);
	if (py || (!f->symbol[0] && !f->module[0]))
		ift_buf_le64(b, f->offset);
}

/* The child of node AT for frame F, made when missing; -ENOMEM. */
static int64_t child(struct tree *t, size_t at, const struct ift_frame *f)
{
	int64_t key;
	uint32_t c;

	ift_buf_clear(&t->key);
	ift_az_frame_key(&t->key, f);
	if (t->key.oom)
		return -ENOMEM;
	if ((key = ift_intern(&t->ids, t->key.data, t->key.len, true)) < 0)
		return key;
	for (c = t->v[at].child; c; c = t->v[c - 1].next)
		if (t->v[c - 1].key == key)
			return c - 1;
	if (t->n >= UINT32_MAX - 1 ||
	    ift_array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
		return -ENOMEM;
	t->v[t->n] = (struct fnode){ .f = f, .key = key, .next = t->v[at].child,
				     .depth = t->v[at].depth + 1 };
	t->v[at].child = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

/* N samples of ST (NULL: none), taken in the kernel when KERNEL. */
static int add(struct tree *t, const struct ift_stack *st, bool kernel, uint64_t n)
{
	const struct ift_frame *fs[IFT_STACK_MAX_FRAMES + 1];
	unsigned nf = ift_stack_flame(st, fs, IFT_STACK_MAX_FRAMES);
	size_t at = 0;

	if (kernel)
		fs[nf++] = NULL;
	t->v[0].w += n;
	for (unsigned i = 0; i < nf; i++) {
		int64_t c = child(t, at, fs[i]);

		if (c < 0)
			return (int)c;
		at = (size_t)c;
		t->v[at].w += n;
	}
	return 0;
}

static int wider(const void *x, const void *y)
{
	const struct fnode *const *p = x, *const *q = y;

	if ((*p)->w != (*q)->w)
		return (*p)->w > (*q)->w ? -1 : 1;
	return (*p)->key < (*q)->key ? -1 : (*p)->key > (*q)->key;
}

/* Node AT's children from X on, wide enough, into OUT (preorder). */
static int layout(const struct tree *t, size_t at, uint64_t x, uint64_t min,
		  struct ift_prof_node *out, size_t *n)
{
	const struct fnode *kids[64], **v = kids;
	size_t nk = 0;
	int ret = 0;

	for (uint32_t c = t->v[at].child; c; c = t->v[c - 1].next)
		nk++;
	if (nk > sizeof(kids) / sizeof(kids[0]) && !(v = malloc(nk * sizeof(*v))))
		return -ENOMEM;
	nk = 0;
	for (uint32_t c = t->v[at].child; c; c = t->v[c - 1].next)
		v[nk++] = &t->v[c - 1];
	qsort(v, nk, sizeof(*v), wider);
	for (size_t i = 0; i < nk && !ret && v[i]->w >= min; i++) {
		out[(*n)++] = (struct ift_prof_node){ .frame = v[i]->f, .depth = v[i]->depth - 1,
						      .x = x, .w = v[i]->w };
		ret = layout(t, (size_t)(v[i] - t->v), x, min, out, n);
		x += v[i]->w;
	}
	if (v != kids)
		free(v);
	return ret;
}

int ift_az_flame(struct ift_analysis *a, struct ift_prof_group *g,
		 const struct az_flame_in *in, size_t nin)
{
	struct tree t = { 0 };
	uint64_t min = g->samples / IFT_PROF_FLAME_MIN;
	struct ift_prof_node *out = NULL;
	size_t n = 0, wide = 0;
	int ret = 0;

	ift_intern_init(&t.ids);
	ift_buf_init(&t.key);
	if (ift_array_grow((void **)&t.v, &t.cap, 1, sizeof(*t.v)) < 0)
		ret = -ENOMEM;
	else
		t.v[t.n++] = (struct fnode){ .key = -1 };
	for (size_t i = 0; !ret && i < nin; i++)
		ret = add(&t, in[i].stack ? ift_trace_stack(a->t, in[i].stack) : NULL,
			  in[i].kernel, in[i].n);
	/* at most IFT_PROF_FLAME_BOXES: a start-up's deep imports, sampled a
	   few times each, would make thousands */
	for (min = min < 1 ? 1 : min;; min *= 2) {
		wide = 0;
		for (size_t i = 1; i < t.n; i++)
			wide += t.v[i].w >= min;
		if (wide <= IFT_PROF_FLAME_BOXES)
			break;
	}
	if (!ret && wide && !(out = ift_az_alloc(a, wide, sizeof(*out))))
		ret = -ENOMEM;
	if (!ret && wide)
		ret = layout(&t, 0, 0, min, out, &n);
	if (!ret) {
		g->flame = out;
		g->nflame = n;
	}
	ift_intern_release(&t.ids);
	ift_buf_release(&t.key);
	free(t.v);
	return ret;
}
