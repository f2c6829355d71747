// SPDX-License-Identifier: MIT
/*
 * The CPU profile of the window (record --profile): what each kind of
 * thread did with its CPU, by line of Python and by native function.
 *
 * The pass counts the `profile' rows by site, thread and kind (in the
 * kernel; inside one of the thread's calls; outside its training loop),
 * nothing more: a thread's role is known only at its end.  Then each count
 * goes to its process's group (all of it) and to its thread's role group:
 * its role's (a thread of none in an input worker's process: the
 * worker's), a CUDA thread's only between its calls in its training loop
 * (the CPU it spent on its own input; inside a call it is the runtime's,
 * before and after the loop the start-up's and the tail's), and its
 * site's frames are tallied there: the innermost Python frame and the
 * innermost native one are each sample's SELF, every frame (once a
 * sample) its TOTAL.  The interpreter's native frames count as one
 * function per interpreter file: how it ran a line is that line's.  A
 * Python line of a package or of the standard library keeps the user's
 * own line under it that it had most often.  Each sample is also one kind
 * of work (sample_work()), whose counts give the fix its finding
 * (ift_profile_finding()); flame.c lays out each role group's stacks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-words.h"
#include "util/array.h"
#include "util/buf.h"
#include "analyze.h"

int ift_az_profile_row(struct ift_analysis *a, const uint64_t *r)
{
	struct az_prof *p = &a->prof;
	uint64_t ts = r[IFT_C_TS];
	const struct ift_loop_info *loop;
	struct az_thread *th;
	struct az_prof_key k;
	int64_t i;

	p->out.samples++;
	th = ift_az_thread_at(a, (uint32_t)r[IFT_C_TID], (uint32_t)r[IFT_C_PID], ts);
	if (!th)
		return -ENOMEM;
	memset(&k, 0, sizeof(k));
	k.stack = r[IFT_PF_STACK];
	k.th = th->idx;
	k.flags = (uint32_t)(r[IFT_PF_FLAGS] & (IFT_PF_F_KERNEL | IFT_PF_F_IRQ));
	for (uint32_t j = 0; j < th->nopen; j++)
		if (th->open[j].ts <= ts && ts < th->open[j].end) {
			k.flags |= AZ_PF_IN_CALL;
			break;
		}
	/* the loops are found before the pass (plan.c) */
	loop = ift_analysis_loop(a, th->tid);
	if (loop && loop->period && (ts < loop->from_ts || ts > loop->to_ts))
		k.flags |= AZ_PF_UNSTEADY;
	if ((i = ift_intern(&p->keys, &k, sizeof(k), true)) < 0)
		return (int)i;
	if (ift_array_grow((void **)&p->n, &p->cap, (size_t)i + 1, sizeof(*p->n)) < 0)
		return -ENOMEM;
	p->n[i]++;
	return 0;
}

/* A frame of a group as it is tallied. */
struct pacc {
	const struct ift_frame *f;	/* NULL: the kernel */
	uint64_t self, total;
	uint64_t stamp;			/* the last sample it was counted in */
	uint32_t caller;		/* 1 + its best caller's entry; 0: none */
	uint64_t caller_n;
	uint32_t group;			/* a role's, or IFT_ROLE_NR + a process's */
	bool py;
};

struct tally {
	struct ift_analysis *a;
	struct ift_intern ents;		/* group, kind and the frame's identity */
	struct pacc *v;
	size_t cap;
	struct ift_intern pairs;	/* (line, caller): entries */
	uint64_t *pn;
	size_t pcap;
	struct buf key;
	uint64_t stamp;
	/* each role group's sites and samples, for its flame graph */
	struct az_flame_in *fl[IFT_ROLE_NR];
	size_t nfl[IFT_ROLE_NR], capfl[IFT_ROLE_NR];
};

/* The user's own code: not a package's, not the standard library's. */
static bool own_line(const struct ift_frame *f)
{
	return f->module[0] && f->module[0] != '<' && ift_py_file_short(f->module) == f->module;
}

/* The entry of frame F (NULL: the kernel) in GROUP; -ENOMEM. */
static int64_t entry(struct tally *t, uint32_t group, const struct ift_frame *f)
{
	bool py = f && (f->flags & IFT_FRAME_F_PYSRC);
	int64_t i;

	ift_buf_clear(&t->key);
	ift_buf_le32(&t->key, group);
	ift_az_frame_key(&t->key, f);
	if (t->key.oom)
		return -ENOMEM;
	if ((i = ift_intern(&t->ents, t->key.data, t->key.len, true)) < 0)
		return i;
	if (ift_array_grow((void **)&t->v, &t->cap, (size_t)i + 1, sizeof(*t->v)) < 0)
		return -ENOMEM;
	if (!t->v[i].stamp && !t->v[i].self && !t->v[i].total) {
		t->v[i].f = f;
		t->v[i].group = group;
		t->v[i].py = py;
	}
	return i;
}

/* N samples of F in GROUP: SELF when innermost; once a sample. */
static int count(struct tally *t, uint32_t group, const struct ift_frame *f, bool self,
		 uint64_t n, int64_t *at)
{
	int64_t i = entry(t, group, f);

	if (i < 0)
		return (int)i;
	if (at)
		*at = i;
	if (self)
		t->v[i].self += n;
	if (t->v[i].stamp != t->stamp) {
		t->v[i].stamp = t->stamp;
		t->v[i].total += n;
	}
	return 0;
}

/* N samples of the Python line at entry LINE made from the user's line at
   entry CALLER. */
static int count_caller(struct tally *t, int64_t line, int64_t caller, uint64_t n)
{
	uint32_t k[2] = { (uint32_t)line, (uint32_t)caller };
	int64_t i = ift_intern(&t->pairs, k, sizeof(k), true);

	if (i < 0)
		return (int)i;
	if (ift_array_grow((void **)&t->pn, &t->pcap, (size_t)i + 1, sizeof(*t->pn)) < 0)
		return -ENOMEM;
	t->pn[i] += n;
	return 0;
}

/* The work a line of Python does, by its file as people name it. */
static enum ift_prof_work line_work(const struct ift_frame *f)
{
	static const struct {
		const char *file;	/* a prefix of ift_py_file_short()'s */
		enum ift_prof_work work;
	} files[] = {
		{ "PIL/", IFT_WORK_DECODE }, { "cv2/", IFT_WORK_DECODE },
		{ "imageio/", IFT_WORK_DECODE }, { "torchvision/io/", IFT_WORK_DECODE },
		{ "simplejpeg/", IFT_WORK_DECODE }, { "turbojpeg", IFT_WORK_DECODE },
		{ "torchvision/transforms/", IFT_WORK_TRANSFORM },
		{ "albumentations/", IFT_WORK_TRANSFORM },
		{ "torch/utils/data/_utils/collate.py", IFT_WORK_COLLATE },
	};
	const char *file = ift_py_file_short(f->module);

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strncmp(file, files[i].file, strlen(files[i].file)))
			return files[i].work;
	return own_line(f) ? IFT_WORK_PYTHON : IFT_WORK_UNKNOWN;
}

/* The work a native function (NULL: the kernel) does, by its file or name. */
static enum ift_prof_work native_work(const struct ift_frame *f)
{
	static const char *const decoders[] = {
		"libjpeg", "libturbojpeg", "libpng", "libz.", "libwebp", "libopenjp2",
		"libtiff", "libavcodec", "libnvjpeg", "libopencv_imgcodecs", "_imaging.",
	};
	const char *base;

	if (!f)
		return IFT_WORK_KERNEL;
	if (strstr(f->symbol, "THPVariable_getitem") || strstr(f->symbol, "applySlicing"))
		return IFT_WORK_INDEXING;
	base = strrchr(f->module, '/');
	base = base ? base + 1 : f->module;
	for (size_t i = 0; i < sizeof(decoders) / sizeof(decoders[0]); i++)
		if (!strncmp(base, decoders[i], strlen(decoders[i])))
			return IFT_WORK_DECODE;
	return IFT_WORK_UNKNOWN;
}

/*
 * What a sample of site ST went to: the outermost frame of a known package
 * inside the user's own line (PARTS' Python frames, OWN the index of the
 * user's innermost line or NFRAMES), else its innermost native code of a
 * known library, else the kernel (KERNEL), else the user's own line.
 */
static enum ift_prof_work sample_work(const struct ift_stack *st,
				      const struct ift_stack_parts *p, unsigned own,
				      bool kernel)
{
	for (unsigned k = own; k-- > p->native;) {
		enum ift_prof_work w = line_work(&st->frames[k]);

		if (w != IFT_WORK_UNKNOWN && w != IFT_WORK_PYTHON)
			return w;
	}
	for (unsigned k = 0; k < p->native; k++) {
		enum ift_prof_work w = native_work(&st->frames[k]);

		if (w != IFT_WORK_UNKNOWN && w != IFT_WORK_KERNEL)
			return w;
	}
	if (kernel)
		return IFT_WORK_KERNEL;
	return own < p->nframes ? IFT_WORK_PYTHON : IFT_WORK_UNKNOWN;
}

/*
 * N samples of site ST (NULL: none) in group G, with FLAGS (IFT_PF_F_KERNEL:
 * in the kernel, IFT_PF_F_IRQ: for an interrupt).  The kernel's time is its
 * work where the thread went there (a system call, a page fault); an
 * interrupt's is the work of the code it interrupted.
 */
static int tally_site(struct tally *t, struct ift_prof_group *g, uint32_t gid,
		      const struct ift_stack *st, uint32_t flags, uint64_t n)
{
	bool kernel = flags & IFT_PF_F_KERNEL;
	struct ift_stack_parts parts;
	int64_t own = -1, at, lines[IFT_STACK_MAX_PYTHON];
	unsigned nl = 0, own_k = 0;
	int ret = 0;

	t->stamp++;
	g->samples += n;
	ift_stack_parts(st, &parts);
	if (kernel) {
		g->kernel += n;
		g->interrupt += flags & IFT_PF_F_IRQ ? n : 0;
		ret = count(t, gid, NULL, true, n, NULL);
	}
	for (unsigned k = 0; !ret && k < parts.native; k++)
		ret = count(t, gid, &st->frames[k], !kernel && k == 0, n, NULL);
	if (parts.nframes > parts.native)
		g->python += n;
	for (unsigned k = parts.native; !ret && k < parts.nframes; k++) {
		ret = count(t, gid, &st->frames[k], k == parts.native, n, &at);
		if (own < 0 && own_line(&st->frames[k])) {
			own = at;
			own_k = k;
		}
		else if (own < 0 && nl < IFT_STACK_MAX_PYTHON)
			lines[nl++] = at;
	}
	/* the lines inside the packages the user's line called */
	for (unsigned k = 0; !ret && own >= 0 && k < nl; k++)
		ret = count_caller(t, lines[k], own, n);
	g->work[sample_work(st, &parts, own >= 0 ? own_k : parts.nframes,
			    kernel && !(flags & IFT_PF_F_IRQ))] += n;
	return ret;
}

/* Most self first, then most total, then the frame's order. */
static int by_self(const void *x, const void *y)
{
	const struct ift_prof_frame *p = x, *q = y;

	if (p->self != q->self)
		return p->self > q->self ? -1 : 1;
	if (p->total != q->total)
		return p->total > q->total ? -1 : 1;
	if (!p->frame || !q->frame)
		return !p->frame - !q->frame;
	return ift_py_frame_cmp(p->frame, q->frame);
}

/* Group GID's top frames from the tally into G: its lines, or its native
   frames. */
static int group_top(struct tally *t, struct ift_prof_group *g, uint32_t gid, bool py)
{
	struct ift_prof_frame *v = NULL;
	size_t n = 0, cap = 0, cnt = ift_intern_count(&t->ents);
	struct ift_prof_frame *out;

	for (size_t i = 0; i < cnt; i++) {
		const struct pacc *e = &t->v[i];

		if (e->group != gid || e->py != py)
			continue;
		if (ift_array_grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (struct ift_prof_frame){
			.frame = e->f, .self = e->self, .total = e->total,
			.caller = e->caller ? t->v[e->caller - 1].f : NULL,
			.caller_samples = e->caller_n,
		};
	}
	if (n)
		qsort(v, n, sizeof(*v), by_self);
	if (n > IFT_PROF_TOP)
		n = IFT_PROF_TOP;
	out = n ? ift_az_alloc(t->a, n, sizeof(*out)) : NULL;
	if (n && !out) {
		free(v);
		return -ENOMEM;
	}
	if (n)
		memcpy(out, v, n * sizeof(*out));
	free(v);
	if (py) {
		g->lines = out;
		g->nlines = n;
	} else {
		g->native = out;
		g->nnative = n;
	}
	return 0;
}

static int by_u32(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;

	return (p > q) - (p < q);
}

/* The processes of the threads SEEN in each group. */
static int count_procs(struct ift_analysis *a, const uint32_t *seen,
		       struct ift_prof_group *groups)
{
	uint32_t *pids = malloc((a->nth ? a->nth : 1) * sizeof(*pids));

	if (!pids)
		return -ENOMEM;
	for (unsigned r = 0; r < IFT_ROLE_NR; r++) {
		size_t n = 0;

		for (size_t i = 0; i < a->nth; i++)
			if (seen[i] & (1u << r))
				pids[n++] = a->th[i]->pid;
		qsort(pids, n, sizeof(*pids), by_u32);
		for (size_t i = 0; i < n; i++)
			groups[r].procs += !i || pids[i] != pids[i - 1];
	}
	free(pids);
	return 0;
}

/* Each thread's role group (its role, or its process's as an input
   worker) and process group (-1: none listed). */
static void thread_groups(const struct ift_analysis *a, uint8_t *role, int64_t *proc)
{
	for (size_t i = 0; i < a->nth; i++) {
		role[i] = (uint8_t)a->th[i]->info.role;
		proc[i] = -1;
		for (size_t k = 0; k < a->nprocs; k++) {
			if (a->procs[k].pid != a->th[i]->pid)
				continue;
			proc[i] = (int64_t)k;
			if (!role[i] && a->procs[k].role == IFT_ROLE_INPUT_WORKER)
				role[i] = IFT_ROLE_INPUT_WORKER;
		}
	}
}

/*
 * Each count of the pass into its thread's role group and its process's
 * group (GS: the roles', then the listed processes'); the threads and
 * processes of each group counted once.
 */
static int tally_all(struct tally *t, struct ift_prof_group *gs)
{
	struct ift_analysis *a = t->a;
	struct az_prof *p = &a->prof;
	size_t nk = ift_intern_count(&p->keys), nth = a->nth ? a->nth : 1;
	uint32_t *seen = calloc(nth, sizeof(*seen));
	uint8_t *role = calloc(nth, sizeof(*role));
	int64_t *proc = calloc(nth, sizeof(*proc));
	int ret = 0;

	if (!seen || !role || !proc) {
		ret = -ENOMEM;
		goto out;
	}
	thread_groups(a, role, proc);
	for (size_t i = 0; !ret && i < nk; i++) {
		struct az_prof_key k;
		const struct ift_stack *st;
		struct ift_prof_group *g;

		memcpy(&k, ift_intern_get(&p->keys, i, NULL), sizeof(k));
		st = k.stack ? ift_trace_stack(a->t, k.stack) : NULL;
		/* its process's: everything it did */
		if (proc[k.th] >= 0) {
			uint32_t gid = IFT_ROLE_NR + (uint32_t)proc[k.th];

			g = &gs[gid];
			g->role = a->procs[proc[k.th]].role;
			g->procs = 1;
			g->threads += !(seen[k.th] & (1u << IFT_ROLE_NR));
			seen[k.th] |= 1u << IFT_ROLE_NR;
			ret = tally_site(t, g, gid, st, k.flags, p->n[i]);
		}
		/* a CUDA thread's CPU inside its calls is the runtime's, and
		   outside its training loop its start-up's or its tail's */
		if (ret || (role[k.th] == IFT_ROLE_CUDA_THREAD &&
			    (k.flags & (AZ_PF_IN_CALL | AZ_PF_UNSTEADY))))
			continue;
		g = &gs[role[k.th]];
		g->role = role[k.th];
		if (!(seen[k.th] & (1u << g->role))) {
			seen[k.th] |= 1u << g->role;
			g->threads++;
		}
		ret = tally_site(t, g, role[k.th], st, k.flags, p->n[i]);
		if (!ret && ift_array_grow((void **)&t->fl[g->role], &t->capfl[g->role],
					   t->nfl[g->role] + 1, sizeof(**t->fl)) < 0)
			ret = -ENOMEM;
		if (!ret)
			t->fl[g->role][t->nfl[g->role]++] = (struct az_flame_in){
				.stack = k.stack, .n = p->n[i],
				.kernel = k.flags & IFT_PF_F_KERNEL };
	}
	if (ret >= 0)
		ret = count_procs(a, seen, gs);
out:
	free(seen);
	free(role);
	free(proc);
	return ret;
}

/* Each line's caller: the user's line it had most samples under. */
static void best_callers(struct tally *t)
{
	for (size_t i = 0; i < ift_intern_count(&t->pairs); i++) {
		uint32_t k[2];

		memcpy(k, ift_intern_get(&t->pairs, i, NULL), sizeof(k));
		if (t->pn[i] > t->v[k[0]].caller_n) {
			t->v[k[0]].caller_n = t->pn[i];
			t->v[k[0]].caller = k[1] + 1;
		}
	}
}

static void tally_release(struct tally *t)
{
	ift_intern_release(&t->ents);
	ift_intern_release(&t->pairs);
	ift_buf_release(&t->key);
	free(t->v);
	free(t->pn);
	for (unsigned r = 0; r < IFT_ROLE_NR; r++)
		free(t->fl[r]);
}

int ift_az_profile_build(struct ift_analysis *a)
{
	struct az_prof *p = &a->prof;
	const char *period = ift_trace_meta(a->t, "profile.period_ns");
	size_t ng = 0, ngs = IFT_ROLE_NR + a->nprocs;
	struct ift_prof_group *gs;
	struct tally t = { .a = a };
	int ret;

	p->out.period_ns = period ? strtoull(period, NULL, 10) : 0;
	if (!p->out.period_ns)
		return 0;
	/* in the analysis's memory: the processes point at theirs */
	if (!(gs = ift_az_alloc(a, ngs, sizeof(*gs))))
		return -ENOMEM;
	memset(gs, 0, ngs * sizeof(*gs));
	ift_intern_init(&t.ents);
	ift_intern_init(&t.pairs);
	ift_buf_init(&t.key);
	ret = tally_all(&t, gs);
	if (ret >= 0)
		best_callers(&t);
	for (uint32_t gid = 0; ret >= 0 && gid < ngs; gid++) {
		if (!gs[gid].samples)
			continue;
		gs[gid].cpu_ns = gs[gid].samples * p->out.period_ns;
		if ((ret = group_top(&t, &gs[gid], gid, true)) >= 0)
			ret = group_top(&t, &gs[gid], gid, false);
		if (ret >= 0 && gid < IFT_ROLE_NR)
			ret = ift_az_flame(a, &gs[gid], t.fl[gid], t.nfl[gid]);
		if (gid >= IFT_ROLE_NR)
			a->procs[gid - IFT_ROLE_NR].profile = &gs[gid];
		else
			gs[ng++] = gs[gid];	/* the roles' with samples first */
	}
	tally_release(&t);
	if (ret < 0)
		return ret;
	p->out.groups = gs;
	p->out.ngroups = ng;
	return 0;
}

void ift_profile_finding(const struct ift_prof_group *g, struct ift_prof_finding *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned w = IFT_WORK_UNKNOWN + 1; w <= IFT_WORK_PYTHON; w++)
		if (g->work[w] > f->samples && g->work[w] * 5 >= g->samples) {
			f->work = (enum ift_prof_work)w;
			f->samples = g->work[w];
		}
	if (f->work == IFT_WORK_UNKNOWN)
		return;
	/* its top frame: the lists are most self first */
	for (size_t i = 0; !f->top && i < g->nlines; i++)
		if (line_work(g->lines[i].frame) == f->work)
			f->top = &g->lines[i];
	for (size_t i = 0; !f->top && i < g->nnative; i++)
		if (native_work(g->native[i].frame) == f->work)
			f->top = &g->native[i];
	if (!f->top)
		f->work = IFT_WORK_UNKNOWN;
}

void ift_az_profile_release(struct ift_analysis *a)
{
	ift_intern_release(&a->prof.keys);
	free(a->prof.n);
}

const struct ift_profile *ift_analysis_profile(const struct ift_analysis *a)
{
	return &a->prof.out;
}

const char *ift_prof_work_name(enum ift_prof_work w)
{
	static const char *const names[] = {
		[IFT_WORK_DECODE] = "decode", [IFT_WORK_TRANSFORM] = "transform",
		[IFT_WORK_COLLATE] = "collate", [IFT_WORK_INDEXING] = "indexing",
		[IFT_WORK_KERNEL] = "kernel", [IFT_WORK_PYTHON] = "python",
	};

	return (unsigned)w <= IFT_WORK_PYTHON ? names[w] : NULL;
}

const char *ift_prof_group_name(enum ift_role role)
{
	switch (role) {
	case IFT_ROLE_NONE:
		return "other threads";
	case IFT_ROLE_CUDA_THREAD:
		return "cuda threads, between calls in their loop";
	default:
		return ift_role_name(role);
	}
}

const struct ift_prof_group *ift_profile_group(const struct ift_profile *p, enum ift_role role)
{
	for (size_t i = 0; i < p->ngroups; i++)
		if (p->groups[i].role == role)
			return &p->groups[i];
	return NULL;
}
