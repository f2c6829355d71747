// SPDX-License-Identifier: MIT
/*
 * From raw ring-buffer pages to trace rows.  See include/ift-decode.h.
 *
 * The fast path per record: read common_type, look up the event type in a
 * table built once from the formats (field offsets and sizes), copy the few
 * fields we keep into a parsed event.  Everything that needs the order of
 * events across CPUs (pairing a uprobe's entry with its return when the
 * thread moved to another CPU in between, tgids learnt from clone flags,
 * names) happens after the per-CPU queues are merged.
 */
#include <dirent.h>
#include <errno.h>
#include <event-parse.h>
#include <fcntl.h>
#include <kbuffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "page.h"
#include "util/array.h"
#include "util/buf.h"


/* ---- formats --------------------------------------------------------- */

static void set_field(struct tep_event *ev, struct fld *f, const char *name)
{
	struct tep_format_field *ff = tep_find_field(ev, name);

	memset(f, 0, sizeof(*f));
	if (!ff)
		return;
	f->off = ff->offset;
	f->size = ff->size;
	f->is_signed = ff->flags & TEP_FIELD_IS_SIGNED;
	f->dynamic = ff->flags & TEP_FIELD_IS_DYNAMIC;
}

static const char *const field_names[][MAX_FIELDS] = {
	[K_SWITCH] = { "prev_comm", "prev_pid", "prev_prio", "prev_state",
		       "next_comm", "next_pid", "next_prio" },
	[K_WAKING] = { "comm", "pid", "prio", "target_cpu" },
	[K_WAKEUP] = { "comm", "pid", "prio", "target_cpu" },
	[K_WAKEUP_NEW] = { "comm", "pid", "prio", "target_cpu" },
	[K_NEWTASK] = { "pid", "comm", "clone_flags" },
	[K_FORK] = { "parent_comm", "parent_pid", "child_comm", "child_pid" },
	[K_EXEC] = { "filename", "pid", "old_pid" },
	[K_EXIT] = { "comm", "pid", "prio" },
	[K_RENAME] = { "pid", "oldcomm", "newcomm" },
	[K_PAGE] = { "order", "gfp_flags", "migratetype" },
	[K_RET] = { "ret" },
};

static int add_type(struct ift_decoder *d, struct tep_event *ev, enum kind k,
		    int probe)
{
	struct evtype *t;

	if (ev->id < 0 || ev->id > 65535)
		return 0;
	if (ev->id >= d->ntypes) {
		int n = ev->id + 1;
		struct evtype *v = realloc(d->types, (size_t)n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + d->ntypes, 0, (size_t)(n - d->ntypes) * sizeof(*v));
		d->types = v;
		d->ntypes = n;
	}
	t = &d->types[ev->id];
	t->kind = (uint8_t)k;
	t->probe = probe;
	for (int i = 0; i < MAX_FIELDS; i++)
		if (field_names[k][i])
			set_field(ev, &t->f[i], field_names[k][i]);
	return 0;
}

static int add_named(struct ift_decoder *d, const char *sys, const char *name,
		     enum kind k)
{
	struct tep_event *ev = tep_find_event_by_name(d->tep, sys, name);

	if (!ev)
		return 0;
	return add_type(d, ev, k, -1);
}

/* Declares the op of probe P in the writer; returns its id or an error. */
static int declare_op(struct ift_decoder *d, const struct ift_probe *p)
{
	struct ift_op op = { 0 };

	op.name = p->sym->name;
	op.api = p->lib->api;
	op.nargs = p->sym->spec->nargs;
	for (unsigned a = 0; a < op.nargs; a++)
		op.args[a] = p->sym->spec->args[a].name;
	return ift_writer_op(d->w, &op);
}

uint64_t ift_decoder_probe_op(const struct ift_decoder *d, size_t i)
{
	return i < d->nprobes ? d->op_of_probe[i] : 0;
}

/*
 * Where the probes come from: a session, or an array laid out the same
 * (probe I at V[I]) for tests that have no tracefs to make one.
 */
struct probe_src {
	const struct ift_probe_session *s;
	const struct ift_probe *v;
	size_t n;
};

static size_t src_count(const struct probe_src *src)
{
	return src->s ? ift_probe_count(src->s) : src->n;
}

static const struct ift_probe *src_at(const struct probe_src *src, size_t i)
{
	return src->s ? ift_probe_at(src->s, i) : &src->v[i];
}

/* Registers the probes of SRC from the first one not known yet. */
static int setup_probes(struct ift_decoder *d, const struct probe_src *src)
{
	size_t n = src_count(src), from = d->nprobes;
	uint64_t *ops;

	if (n <= from)
		return 0;
	ops = realloc(d->op_of_probe, n * sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	d->op_of_probe = ops;
	for (size_t i = from; i < n; i++) {
		const struct ift_probe *p = src_at(src, i);
		struct tep_event *ev;
		size_t j;
		int ret;

		/* one op per function name, whichever library copy it came from */
		for (j = 0; j < i; j++)
			if (!strcmp(src_at(src, j)->sym->name, p->sym->name))
				break;
		if (j < i) {
			d->op_of_probe[i] = d->op_of_probe[j];
		} else {
			ret = declare_op(d, p);
			if (ret < 0)
				return ret;
			d->op_of_probe[i] = (uint64_t)ret;
		}
		if (p->entry_id >= 0 && (ev = tep_find_event(d->tep, p->entry_id))) {
			struct evtype *t;

			if ((ret = add_type(d, ev, K_ENTRY, (int)i)) < 0)
				return ret;
			t = &d->types[ev->id];
			for (unsigned a = 0; a < p->sym->spec->nargs; a++)
				set_field(ev, &t->f[a], p->sym->spec->args[a].name);
		}
		if (p->ret_id >= 0 && (ev = tep_find_event(d->tep, p->ret_id)))
			if ((ret = add_type(d, ev, K_RET, (int)i)) < 0)
				return ret;
		/* counted once set up: after a failure the count claims no
		   probe left unset, and the next sync starts from that one */
		d->nprobes = i + 1;
	}
	return 0;
}

int ift_decoder_sync_probes(struct ift_decoder *d, const struct ift_probe_session *s)
{
	const struct probe_src src = { .s = s };

	return setup_probes(d, &src);
}

int ift_decoder_sync_probe_array(struct ift_decoder *d, const struct ift_probe *v,
				 size_t n)
{
	const struct probe_src src = { .v = v, .n = n };

	return setup_probes(d, &src);
}

size_t ift_decoder_processes(const struct ift_decoder *d, const pid_t **out)
{
	*out = d->procs;
	return d->nprocs;
}

static int proc_add(struct ift_decoder *d, pid_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i] == pid)
			return 0;
	if (ift_array_grow((void **)&d->procs, &d->proccap, d->nprocs + 1, sizeof(*d->procs)) < 0)
		return -ENOMEM;
	d->procs[d->nprocs++] = pid;
	return 0;
}

static void proc_del(struct ift_decoder *d, pid_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i] == pid) {
			d->procs[i] = d->procs[--d->nprocs];
			return;
		}
}

int ift_decoder_new(const struct ift_decode_opts *opts, struct ift_decoder **out)
{
	struct ift_decoder *d;
	struct tep_event *any;
	struct tep_format_field *pf;
	int ret;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->tep = opts->tep;
	d->w = opts->w;
	d->user_filter = opts->user_filter;
	d->on_call = opts->on_call;
	d->on_call_ctx = opts->on_call_ctx;
	d->kbuf = kbuffer_alloc(tep_get_long_size(d->tep) == 4 ? KBUFFER_LSIZE_4 :
				KBUFFER_LSIZE_8,
				tep_is_file_bigendian(d->tep) ? KBUFFER_ENDIAN_BIG :
				KBUFFER_ENDIAN_LITTLE);
	if (!d->kbuf) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = add_named(d, "sched", "sched_switch", K_SWITCH)) < 0 ||
	    (ret = add_named(d, "sched", "sched_waking", K_WAKING)) < 0 ||
	    (ret = add_named(d, "sched", "sched_wakeup", K_WAKEUP)) < 0 ||
	    (ret = add_named(d, "sched", "sched_wakeup_new", K_WAKEUP_NEW)) < 0 ||
	    (ret = add_named(d, "task", "task_newtask", K_NEWTASK)) < 0 ||
	    (ret = add_named(d, "sched", "sched_process_fork", K_FORK)) < 0 ||
	    (ret = add_named(d, "sched", "sched_process_exec", K_EXEC)) < 0 ||
	    (ret = add_named(d, "sched", "sched_process_exit", K_EXIT)) < 0 ||
	    (ret = add_named(d, "task", "task_rename", K_RENAME)) < 0 ||
	    (ret = add_named(d, "kmem", "mm_page_alloc", K_PAGE)) < 0 ||
	    (ret = ift_decoder_sync_probes(d, opts->probes)) < 0)
		goto fail;

	d->own_walker = tep_get_long_size(d->tep) == 8 &&
			!tep_is_file_bigendian(d->tep) &&
			tep_get_header_page_size(d->tep) == 8 &&
			__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	/* common_pid sits at the same place in every event */
	any = tep_get_event(d->tep, 0);
	pf = any ? tep_find_common_field(any, "common_pid") : NULL;
	d->pid_off = pf ? pf->offset : 4;
	d->pid_size = pf ? pf->size : 4;
	pf = any ? tep_find_common_field(any, "common_flags") : NULL;
	d->flags_off = pf && pf->size == 1 ? pf->offset : -1;
	*out = d;
	return 0;
fail:
	ift_decoder_free(d);
	return ret;
}

void ift_decoder_free(struct ift_decoder *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ntasks; i++)
		free(d->tasks[i].stack);
	for (int i = 0; i < d->nq; i++)
		free(d->q[i].buf);
	free(d->q);
	free(d->tasks);
	ift_tidmap_release(&d->tids);
	free(d->active);
	free(d->done);
	free(d->types);
	free(d->op_of_probe);
	free(d->procs);
	if (d->kbuf)
		kbuffer_free(d->kbuf);
	free(d);
}

const struct ift_decode_stats *ift_decoder_stats(const struct ift_decoder *d)
{
	return &d->stats;
}

/* ---- parsing (per CPU, any order between CPUs) ------------------------ */

static int64_t get_int(const uint8_t *data, int size, const struct fld *f)
{
	const uint8_t *p;

	if (!f->size || f->off + f->size > size)
		return 0;
	p = data + f->off;
	switch (f->size) {
	case 1: return f->is_signed ? (int64_t)*(const int8_t *)p : (int64_t)*p;
	case 2: { int16_t v; memcpy(&v, p, 2); return f->is_signed ? (int64_t)v : (int64_t)(uint16_t)v; }
	case 4: { int32_t v; memcpy(&v, p, 4); return f->is_signed ? (int64_t)v : (int64_t)(uint32_t)v; }
	case 8: { int64_t v; memcpy(&v, p, 8); return v; }
	}
	return 0;
}

/* A char[N] or __data_loc char[] field into OUT (NUL-terminated, cut to LEN - 1). */
static void get_str(const uint8_t *data, int size, const struct fld *f,
		    char *out, size_t len)
{
	int off = f->off, n = f->size;

	out[0] = 0;
	if (!f->size || f->off + f->size > size)
		return;
	if (f->dynamic) {
		uint32_t loc;

		memcpy(&loc, data + f->off, 4);
		off = (int)(loc & 0xffff);
		n = (int)(loc >> 16);
		if (off + n > size)
			return;
	}
	if ((size_t)n >= len)
		n = (int)len - 1;
	memcpy(out, data + off, (size_t)n);
	out[n] = 0;
	out[strnlen(out, (size_t)n)] = 0;
}

/*
 * Records wait in their CPU's queue until every CPU has passed their time:
 * the idle margin (20 ms) and a round of the reader at least, 8,000 to
 * 16,000 records a CPU in a page-allocation storm on two CPUs.  Parsed in
 * full (struct pev, 120 bytes) those were the recorder's largest memory,
 * so a queue holds them packed: the time as 8 bytes (the merge compares
 * heads in place), the kind with the interrupt bit, the ids as zig-zag
 * varints, then the values the kind has (queue_nx) and its two names as a
 * length and their bytes.  A page allocation takes about 24 bytes.
 */
static const uint8_t queue_nx[] = {
	[K_SWITCH] = 3, [K_WAKING] = 2, [K_WAKEUP] = 2, [K_WAKEUP_NEW] = 2,
	[K_NEWTASK] = 1, [K_PAGE] = 3, [K_ENTRY] = IFT_CALL_MAX_ARGS, [K_RET] = 1,
};
#define QUEUE_REC_MAX	(8 + 1 + 4 * 5 + 10 + IFT_CALL_MAX_ARGS * 10 + 2 * 16)

static uint8_t *put_name(uint8_t *p, const char *s)
{
	size_t n = strnlen(s, 15);

	*p++ = (uint8_t)n;
	memcpy(p, s, n);
	return p + n;
}

/* E packed at the tail of Q; -ENOMEM. */
static int queue_put(struct cpuq *q, const struct pev *e)
{
	uint8_t *p;

	if (q->tail + QUEUE_REC_MAX > q->cap) {
		if (q->head) {
			memmove(q->buf, q->buf + q->head, q->tail - q->head);
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail + QUEUE_REC_MAX > q->cap) {
			/* not ift_array_grow(): zeroing would touch pages never used */
			size_t cap = q->cap ? q->cap * 2 : 4096;
			uint8_t *b = realloc(q->buf, cap);

			if (!b)
				return -ENOMEM;
			q->buf = b;
			q->cap = cap;
		}
	}
	p = q->buf + q->tail;
	ift_put_le64(p, e->ts);
	p += 8;
	*p++ = (uint8_t)(e->kind | (e->irq ? 0x80 : 0));
	p = put_varint(p, zigzag(e->tid));
	p = put_varint(p, zigzag(e->a));
	p = put_varint(p, zigzag(e->b));
	p = put_varint(p, zigzag(e->probe));
	p = put_varint(p, e->str);
	for (unsigned i = 0; i < queue_nx[e->kind]; i++)
		p = put_varint(p, zigzag(e->x[i]));
	p = put_name(p, e->c1);
	p = put_name(p, e->c2);
	q->tail = (size_t)(p - q->buf);
	q->n++;
	return 0;
}

static uint64_t queue_head_ts(const struct cpuq *q)
{
	return ift_le64(q->buf + q->head);
}

static uint64_t take_varint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b = *p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*pp = p;
	return v;
}

static const uint8_t *take_name(const uint8_t *p, char *s)
{
	memcpy(s, p + 1, *p);
	s[*p] = 0;
	return p + 1 + *p;
}

/* The record at the head of non-empty Q into E, and off the queue. */
static void queue_take(struct cpuq *q, struct pev *e)
{
	const uint8_t *p = q->buf + q->head;

	memset(e, 0, sizeof(*e));
	e->ts = ift_le64(p);
	p += 8;
	e->kind = *p & 0x7f;
	e->irq = *p++ & 0x80;
	e->cpu = q->cpu;
	e->tid = (int32_t)unzigzag(take_varint(&p));
	e->a = (int32_t)unzigzag(take_varint(&p));
	e->b = (int32_t)unzigzag(take_varint(&p));
	e->probe = (int32_t)unzigzag(take_varint(&p));
	e->str = take_varint(&p);
	for (unsigned i = 0; i < queue_nx[e->kind]; i++)
		e->x[i] = unzigzag(take_varint(&p));
	p = take_name(p, e->c1);
	p = take_name(p, e->c2);
	q->head = (size_t)(p - q->buf);
	if (!--q->n)
		q->head = q->tail = 0;
}

/*
 * The queue of CPU's records from SOURCE (0: the tracefs rings, 1: the perf
 * rings of --isolate), NULL without memory.  Queues interleave, CPU * 2 +
 * SOURCE.  A queue holds back the merge only once live: every tracefs CPU up
 * to the highest seen (as the rings are read in CPU order), a perf ring from
 * its first record or idle note.
 */
static struct cpuq *queue_get(struct ift_decoder *d, int source, int cpu)
{
	int idx = cpu * 2 + source;

	if (idx >= d->nq) {
		struct cpuq *q = realloc(d->q, (size_t)(idx + 1) * sizeof(*q));

		if (!q)
			return NULL;
		memset(q + d->nq, 0, (size_t)(idx + 1 - d->nq) * sizeof(*q));
		for (int i = d->nq; i <= idx; i++)
			q[i].cpu = (uint16_t)(i / 2);
		d->q = q;
		d->nq = idx + 1;
	}
	if (source)
		d->q[idx].live = true;
	else
		for (int i = idx; i >= 0 && !d->q[i].live; i -= 2)
			d->q[i].live = true;
	return &d->q[idx];
}

static int parse_record(struct ift_decoder *d, struct cpuq *q, int cpu, uint64_t ts,
			const uint8_t *data, int size)
{
	const struct evtype *t;
	struct pev ev, *e = &ev;
	uint16_t id;
	char file[256];

	d->stats.events++;
	if (size < 8)
		return 0;
	memcpy(&id, data, 2);
	if (id >= d->ntypes || d->types[id].kind == K_NONE) {
		d->stats.unknown++;
		return 0;
	}
	t = &d->types[id];
	memset(e, 0, offsetof(struct pev, c1));
	e->c1[0] = e->c2[0] = 0;
	e->str = 0;
	e->ts = ts;
	e->kind = t->kind;
	e->cpu = (uint16_t)cpu;
	e->probe = t->probe;
	e->tid = (int32_t)get_int(data, size, &(struct fld){ d->pid_off, d->pid_size, true, false });
	/* TRACE_FLAG_HARDIRQ 0x08, _SOFTIRQ 0x10, _NMI 0x40 (kernel/trace/trace.h) */
	e->irq = d->flags_off >= 0 && d->flags_off < size &&
		 (((const uint8_t *)data)[d->flags_off] & 0x58);
	switch (t->kind) {
	case K_SWITCH:
		get_str(data, size, &t->f[0], e->c1, 16);
		e->a = (int32_t)get_int(data, size, &t->f[1]);
		e->x[0] = get_int(data, size, &t->f[2]);
		e->x[1] = get_int(data, size, &t->f[3]);
		get_str(data, size, &t->f[4], e->c2, 16);
		e->b = (int32_t)get_int(data, size, &t->f[5]);
		e->x[2] = get_int(data, size, &t->f[6]);
		break;
	case K_WAKING:
	case K_WAKEUP:
	case K_WAKEUP_NEW:
		get_str(data, size, &t->f[0], e->c1, 16);
		e->a = (int32_t)get_int(data, size, &t->f[1]);
		e->x[0] = get_int(data, size, &t->f[2]);
		e->x[1] = get_int(data, size, &t->f[3]);
		break;
	case K_NEWTASK:
		e->a = (int32_t)get_int(data, size, &t->f[0]);
		get_str(data, size, &t->f[1], e->c1, 16);
		e->x[0] = get_int(data, size, &t->f[2]);
		break;
	case K_FORK:
		e->a = (int32_t)get_int(data, size, &t->f[1]);
		get_str(data, size, &t->f[2], e->c1, 16);
		e->b = (int32_t)get_int(data, size, &t->f[3]);
		break;
	case K_EXEC:
		get_str(data, size, &t->f[0], file, sizeof(file));
		e->a = (int32_t)get_int(data, size, &t->f[1]);
		e->b = (int32_t)get_int(data, size, &t->f[2]);
		{
			int64_t id2 = ift_writer_string(d->w, file);

			if (id2 < 0)
				return (int)id2;
			e->str = (uint64_t)id2;
		}
		/* the kernel names the task after the file it executes */
		{
			const char *base = strrchr(file, '/');

			base = base ? base + 1 : file;
			/* TASK_COMM_LEN: the kernel cuts it to 15 bytes */
			memcpy(e->c1, base, strnlen(base, 15));
			e->c1[strnlen(base, 15)] = 0;
		}
		break;
	case K_EXIT:
		get_str(data, size, &t->f[0], e->c1, 16);
		e->a = (int32_t)get_int(data, size, &t->f[1]);
		break;
	case K_RENAME:
		e->a = (int32_t)get_int(data, size, &t->f[0]);
		get_str(data, size, &t->f[2], e->c1, 16);
		break;
	case K_PAGE:
		e->x[0] = get_int(data, size, &t->f[0]);
		e->x[1] = get_int(data, size, &t->f[1]);
		e->x[2] = get_int(data, size, &t->f[2]);
		break;
	case K_ENTRY:
		for (int a = 0; a < IFT_CALL_MAX_ARGS; a++)
			e->x[a] = get_int(data, size, &t->f[a]);
		break;
	case K_RET:
		e->x[0] = get_int(data, size, &t->f[0]);
		break;
	}
	return queue_put(q, e);
}

static int on_event(void *ctx, uint64_t ts, const uint8_t *data, int size)
{
	struct ift_decoder *d = ctx;
	struct cpuq *q = d->cur_q;
	int ret = parse_record(d, q, d->cur_cpu, ts, data, size);

	if (ts > q->wm)
		q->wm = ts;
	return ret;
}

int ift_decoder_page(struct ift_decoder *d, int cpu, const void *page, int len, int from)
{
	unsigned long long ts;
	struct cpuq *q;
	void *rec;
	int ret, missed;

	if (cpu < 0 || cpu > 65535 || from < 0)
		return -EINVAL;
	if (!(q = queue_get(d, 0, cpu)))
		return -ENOMEM;
	if (d->own_walker) {
		int64_t lost;

		d->cur_cpu = cpu;
		d->cur_q = q;
		ret = ift_page_walk(page, len, from, on_event, d, &lost);
		if (lost > 0)
			d->stats.missed += (uint64_t)lost;
		return ret;
	}
	/* kbuffer reads the page, it does not write it */
	if (kbuffer_load_subbuffer(d->kbuf, (void *)(uintptr_t)page) < 0 ||
	    from > kbuffer_subbuffer_size(d->kbuf))
		return -IFT_E_CORRUPT;
	missed = from ? 0 : kbuffer_missed_events(d->kbuf);
	if (missed > 0)
		d->stats.missed += (uint64_t)missed;
	/* kbuffer's offsets count from the page's start: the header's size first */
	rec = from ? kbuffer_read_at_offset(d->kbuf, kbuffer_curr_offset(d->kbuf) -
					    kbuffer_curr_index(d->kbuf) + from, &ts) :
		     kbuffer_read_event(d->kbuf, &ts);
	for (; rec; rec = kbuffer_next_event(d->kbuf, &ts)) {
		int size = kbuffer_event_size(d->kbuf);

		if ((ret = parse_record(d, q, cpu, ts, rec, size)) < 0)
			return ret;
		if (ts > q->wm)
			q->wm = ts;
	}
	return kbuffer_subbuffer_size(d->kbuf);
}

int ift_decoder_record(struct ift_decoder *d, int cpu, uint64_t ts,
		       const void *rec, uint32_t size)
{
	struct cpuq *q;
	int ret;

	if (cpu < 0 || cpu > 65535 || size > INT32_MAX)
		return -EINVAL;
	if (!(q = queue_get(d, 1, cpu)))
		return -ENOMEM;
	if ((ret = parse_record(d, q, cpu, ts, rec, (int)size)) < 0)
		return ret;
	if (ts > q->wm)
		q->wm = ts;
	return 0;
}

void ift_decoder_cpu_idle(struct ift_decoder *d, int source, int cpu, uint64_t ts)
{
	struct cpuq *q;

	if (cpu < 0 || cpu > 65535 || source < 0 || source > 1 ||
	    !(q = queue_get(d, source, cpu)))
		return;
	if (ts > q->wm)
		q->wm = ts;
}

/* ---- tasks ----------------------------------------------------------- */

static struct task *task_lookup(struct ift_decoder *d, int32_t tid)
{
	size_t i;

	return ift_tidmap_get(&d->tids, (uint32_t)tid, &i) ? &d->tasks[i] : NULL;
}

bool ift_decoder_traced(struct ift_decoder *d, uint32_t tid, uint32_t *tgid)
{
	const struct task *t = task_lookup(d, (int32_t)tid);

	*tgid = t && t->tgid > 0 ? (uint32_t)t->tgid : tid;
	return !d->user_filter || (t && t->traced);
}

/*
 * TID's tgid (TID itself when /proc does not say) and its parent process'
 * tgid (0 when /proc does not say).  For a thread the kernel gives the
 * parent of its process, as the task table does.  status escapes the name
 * it shows first, so a name cannot forge the lines after it.
 */
static void proc_ids(int32_t tid, int32_t *tgid, int32_t *ppid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	*tgid = tid;
	*ppid = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	if ((p = strstr(buf, "\nTgid:")))
		*tgid = (int32_t)strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nPPid:")))
		*ppid = (int32_t)strtol(p + 6, NULL, 10);
}

static void proc_comm(int32_t tid, char *out)
{
	char path[64];
	ssize_t n;
	int fd;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, 15);
	close(fd);
	if (n <= 0)
		n = 0;
	out[n] = 0;
	out[strcspn(out, "\n")] = 0;
}

/* Room for N more tasks: until then task_get() does not move d->tasks. */
static int task_reserve(struct ift_decoder *d, size_t n)
{
	return ift_array_grow((void **)&d->tasks, &d->taskcap, d->ntasks + n, sizeof(*d->tasks));
}

/*
 * The task TID, created (tgid from /proc) when new.  NULL on ENOMEM.
 * Creating one may move d->tasks: pointers from earlier calls go stale
 * unless task_reserve() made room for it first.
 */
static struct task *task_get(struct ift_decoder *d, int32_t tid)
{
	struct task *t = task_lookup(d, tid);

	if (t)
		return t;
	if (task_reserve(d, 1) < 0 || ift_tidmap_set(&d->tids, (uint32_t)tid, d->ntasks) < 0)
		return NULL;
	t = &d->tasks[d->ntasks++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (tid)
		proc_ids(tid, &t->tgid, &t->ppid);
	t->active = -1;
	return t;
}

/*
 * Notes the name TID has at TS (COMM, or from /proc when NULL) and writes a
 * `comm' row when it is the first seen or a new one.
 */
static int task_named(struct ift_decoder *d, struct task *t, const char *comm,
		      uint64_t ts, uint16_t cpu)
{
	char buf[16];
	uint64_t row[IFT_TK_NR] = { 0 };
	int64_t id;

	if (t->tid == 0)
		return 0;	/* the idle task has a name per CPU: not worth rows */
	if (!comm) {
		if (t->named)
			return 0;
		proc_comm(t->tid, buf);
		comm = buf;
	}
	if (!*comm || (t->named && !strncmp(t->comm, comm, sizeof(t->comm))))
		return 0;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->named = true;
	id = ift_writer_string(d->w, t->comm);
	if (id < 0)
		return (int)id;
	row[IFT_C_TS] = ts;
	row[IFT_C_CPU] = cpu;
	row[IFT_C_PID] = (uint64_t)t->tgid;
	row[IFT_C_TID] = (uint64_t)t->tid;
	row[IFT_TK_KIND] = IFT_TASK_COMM;
	row[IFT_TK_COMM] = (uint64_t)id;
	row[IFT_TK_PPID] = (uint64_t)t->ppid;
	return ift_dec_append(d, IFT_T_TASKS, row);
}

int ift_decoder_add_root(struct ift_decoder *d, pid_t pid)
{
	char path[64];
	struct dirent *de;
	struct task *t;
	DIR *dir;

	t = task_get(d, pid);
	if (!t || proc_add(d, pid) < 0)
		return -ENOMEM;
	t->traced = true;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		int32_t tid = (int32_t)strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		t = task_get(d, tid);
		if (!t) {
			closedir(dir);
			return -ENOMEM;
		}
		t->traced = true;
	}
	closedir(dir);
	return 0;
}

/* ---- merged processing ----------------------------------------------- */

static bool keep(struct ift_decoder *d, const struct pev *e, struct task *cur)
{
	struct task *t;

	if (!d->user_filter)
		return true;
	if (cur && cur->traced)
		return true;
	switch (e->kind) {
	case K_SWITCH:
		return ((t = task_lookup(d, e->a)) && t->traced) ||
		       ((t = task_lookup(d, e->b)) && t->traced);
	case K_WAKING:
	case K_WAKEUP:
	case K_WAKEUP_NEW:
		return (t = task_lookup(d, e->a)) && t->traced;
	}
	return false;
}

/* prev and next, each with its name; the row is prev's */
static int process_switch(struct ift_decoder *d, const struct pev *e, uint64_t *row)
{
	struct task *a, *b;
	int ret;

	if (!(a = task_get(d, e->a)) || !(b = task_get(d, e->b)))
		return -ENOMEM;
	if ((ret = task_named(d, a, e->c1, e->ts, e->cpu)) < 0 ||
	    (ret = task_named(d, b, e->c2, e->ts, e->cpu)) < 0)
		return ret;
	row[IFT_C_PID] = (uint64_t)a->tgid;
	row[IFT_C_TID] = (uint64_t)a->tid;
	row[IFT_SW_PREV_STATE] = (uint64_t)e->x[1];
	row[IFT_SW_PREV_PRIO] = (uint64_t)e->x[0];
	row[IFT_SW_NEXT_PID] = (uint64_t)b->tgid;
	row[IFT_SW_NEXT_TID] = (uint64_t)b->tid;
	row[IFT_SW_NEXT_PRIO] = (uint64_t)e->x[2];
	return ift_dec_append(d, IFT_T_SWITCHES, row);
}

/* The row is the wakee's; CUR, the running task, woke it */
static int process_wakeup(struct ift_decoder *d, const struct pev *e, struct task *cur,
			  uint64_t *row)
{
	struct task *a;
	int ret;

	if (!(a = task_get(d, e->a)))
		return -ENOMEM;
	if ((ret = task_named(d, a, e->c1, e->ts, e->cpu)) < 0 ||
	    (ret = task_named(d, cur, NULL, e->ts, e->cpu)) < 0)
		return ret;
	row[IFT_C_PID] = (uint64_t)a->tgid;
	row[IFT_C_TID] = (uint64_t)a->tid;
	row[IFT_WK_KIND] = e->kind == K_WAKING ? IFT_WAKE_WAKING :
			   e->kind == K_WAKEUP ? IFT_WAKE_WAKEUP :
			   IFT_WAKE_WAKEUP_NEW;
	row[IFT_WK_PRIO] = (uint64_t)e->x[0];
	row[IFT_WK_TARGET_CPU] = (uint64_t)e->x[1];
	/* from an interrupt, the task it interrupted did not wake anyone */
	row[IFT_WK_WAKER_PID] = e->irq ? 0 : (uint64_t)cur->tgid;
	row[IFT_WK_WAKER_TID] = e->irq ? 0 : (uint64_t)cur->tid;
	return ift_dec_append(d, IFT_T_WAKEUPS, row);
}

/* CUR made a task: a thread of its process or a process of its own */
static int process_newtask(struct ift_decoder *d, const struct pev *e, struct task *cur,
			   uint64_t *row)
{
	int32_t child = e->kind == K_NEWTASK ? e->a : e->b;
	struct task *a;
	bool thread;
	int64_t id;
	int ret;

	if ((ret = task_named(d, cur, NULL, e->ts, e->cpu)) < 0)
		return ret;
	if (!(a = task_get(d, child)))
		return -ENOMEM;
	/* a reused tid starts afresh: the calls its old task left open (its
	   exit unseen) never returned, and are written so */
	if ((ret = ift_dec_task_close_calls(d, a, e->ts)) < 0)
		return ret;
	if (e->kind == K_NEWTASK)
		thread = (uint64_t)e->x[0] & CLONE_THREAD_FLAG;
	else
		thread = a->tgid != a->tid;
	a->tgid = thread ? cur->tgid : child;
	/* the event says it better than /proc read since */
	if (!thread)
		a->ppid = cur->tgid;
	else if (cur->ppid)
		a->ppid = cur->ppid;
	a->traced = cur->traced;
	a->born_ts = e->kind == K_NEWTASK ? e->ts : 0;
	snprintf(a->comm, sizeof(a->comm), "%s", e->c1);
	a->named = true;
	id = ift_writer_string(d->w, a->comm);
	if (id < 0)
		return (int)id;
	if (!thread && (ret = proc_add(d, a->tid)) < 0)
		return ret;
	row[IFT_TK_KIND] = thread ? IFT_TASK_CLONE : IFT_TASK_FORK;
	row[IFT_TK_CHILD_PID] = (uint64_t)a->tgid;
	row[IFT_TK_CHILD_TID] = (uint64_t)a->tid;
	row[IFT_TK_COMM] = (uint64_t)id;
	return ift_dec_append(d, IFT_T_TASKS, row);
}

static int process_exec(struct ift_decoder *d, const struct pev *e, uint64_t *row)
{
	struct task *cur;
	int64_t id;

	/* after exec the task has the leader's tid, whoever called it */
	if (!(cur = task_get(d, e->a)))
		return -ENOMEM;
	snprintf(cur->comm, sizeof(cur->comm), "%s", e->c1);
	cur->named = true;
	cur->tgid = e->a;
	id = ift_writer_string(d->w, cur->comm);
	if (id < 0)
		return (int)id;
	row[IFT_C_PID] = (uint64_t)cur->tgid;
	row[IFT_C_TID] = (uint64_t)cur->tid;
	row[IFT_TK_KIND] = IFT_TASK_EXEC;
	row[IFT_TK_COMM] = (uint64_t)id;
	row[IFT_TK_FILE] = e->str;
	row[IFT_TK_PPID] = (uint64_t)cur->ppid;
	return ift_dec_append(d, IFT_T_TASKS, row);
}

/* CUR ends: the calls it left open never return */
static int process_exit(struct ift_decoder *d, const struct pev *e, struct task *cur,
			uint64_t *row)
{
	int ret;

	if ((ret = task_named(d, cur, e->c1, e->ts, e->cpu)) < 0 ||
	    (ret = ift_dec_task_close_calls(d, cur, e->ts)) < 0)
		return ret;
	if (cur->tid == cur->tgid)
		proc_del(d, cur->tid);
	row[IFT_TK_KIND] = IFT_TASK_EXIT;
	row[IFT_TK_PPID] = (uint64_t)cur->ppid;
	return ift_dec_append(d, IFT_T_TASKS, row);
}

static int process(struct ift_decoder *d, const struct pev *e)
{
	uint64_t row[16] = { 0 };	/* wide enough for any table */
	struct task *cur, *a;
	int ret;

	/* cur and the one or two tasks the event is about all point into
	   d->tasks: room for the three first, so that creating one does not
	   move the table under the others */
	if (task_reserve(d, 3) < 0)
		return -ENOMEM;
	cur = task_get(d, e->tid);
	if (!cur)
		return -ENOMEM;
	if (!keep(d, e, cur)) {
		d->stats.filtered++;
		return 0;
	}
	row[IFT_C_TS] = e->ts;
	row[IFT_C_CPU] = e->cpu;
	row[IFT_C_PID] = (uint64_t)cur->tgid;
	row[IFT_C_TID] = (uint64_t)cur->tid;

	switch (e->kind) {
	case K_SWITCH:
		return process_switch(d, e, row);
	case K_WAKING:
	case K_WAKEUP:
	case K_WAKEUP_NEW:
		return process_wakeup(d, e, cur, row);
	case K_FORK:
		/* task_newtask, just before, said the same with clone flags */
		if ((a = task_lookup(d, e->b)) && a->born_ts && e->ts >= a->born_ts)
			return 0;
		/* without it, a thread is told by /proc */
		__attribute__((fallthrough));
	case K_NEWTASK:
		return process_newtask(d, e, cur, row);
	case K_EXEC:
		return process_exec(d, e, row);
	case K_EXIT:
		return process_exit(d, e, cur, row);
	case K_RENAME:
		if (!(a = task_get(d, e->a)))
			return -ENOMEM;
		return task_named(d, a, e->c1, e->ts, e->cpu);
	case K_PAGE:
		if ((ret = task_named(d, cur, NULL, e->ts, e->cpu)) < 0)
			return ret;
		row[IFT_PG_ORDER] = (uint64_t)e->x[0];
		row[IFT_PG_GFP] = (uint64_t)e->x[1];
		row[IFT_PG_MIGRATETYPE] = (uint64_t)e->x[2];
		return ift_dec_append(d, IFT_T_PAGE_ALLOCS, row);
	case K_ENTRY:
		if ((ret = task_named(d, cur, NULL, e->ts, e->cpu)) < 0)
			return ret;
		return ift_dec_call_entry(d, cur, e);
	case K_RET:
		return ift_dec_call_return(d, cur, e);
	}
	return 0;
}

/*
 * Merges the CPU queues in time order, up to LIMIT (inclusive).
 *
 * Every row leaves here no earlier than the one before it (the writer's
 * tables are in time order), even when an event comes after the merge has
 * passed its time: a CPU's watermark is a promise the kernel cannot always
 * keep.  A writer that reserved its event and was then held off its CPU
 * (a hypervisor's vCPU preemption, an emulated guest's round-robin) commits
 * it after the reader found that CPU empty, and a ring may hold an event
 * stamped a little before the one ahead of it.  Such an event is kept, at
 * the merge point, and counted with how far it was moved: losing the
 * recording, or the event, would be worse than a few ms of skew.
 */
static int merge_until(struct ift_decoder *d, uint64_t limit)
{
	int ret;

	for (;;) {
		struct cpuq *best = NULL;
		uint64_t best_ts = 0;
		struct pev ev, *e = &ev;

		for (int c = 0; c < d->nq; c++) {
			struct cpuq *q = &d->q[c];

			if (q->n && (!best || queue_head_ts(q) < best_ts)) {
				best = q;
				best_ts = queue_head_ts(q);
			}
		}
		if (!best || best_ts > limit)
			break;
		queue_take(best, e);
		if (e->ts < d->horizon) {
			d->stats.late++;
			if (d->horizon - e->ts > d->stats.late_max_ns)
				d->stats.late_max_ns = d->horizon - e->ts;
			e->ts = d->horizon;
		}
		d->horizon = e->ts;
		ret = process(d, e);
		if (ret < 0)
			return ret;
	}
	return ift_dec_calls_emit(d, false);
}

/*
 * Without the mono clock the recorder cannot tell an empty CPU how late it
 * is: an empty CPU is then taken to be complete up to a second behind the
 * latest event seen anywhere, so one idle CPU cannot hold back the rest.
 */
#define IDLE_LAG_NS	1000000000ULL

int ift_decoder_advance(struct ift_decoder *d)
{
	uint64_t wm = UINT64_MAX, latest = 0;

	if (!d->nq)
		return 0;
	for (int c = 0; c < d->nq; c++)
		if (d->q[c].live && d->q[c].wm > latest)
			latest = d->q[c].wm;
	for (int c = 0; c < d->nq; c++) {
		struct cpuq *q = &d->q[c];

		if (!q->live)
			continue;
		if (!q->n && latest > IDLE_LAG_NS && q->wm < latest - IDLE_LAG_NS)
			q->wm = latest - IDLE_LAG_NS;
		if (q->wm < wm)
			wm = q->wm;
	}
	return merge_until(d, wm);
}

uint64_t ift_decoder_complete(const struct ift_decoder *d)
{
	uint64_t open = ift_dec_calls_open_min(d);

	return open < d->horizon ? open : d->horizon;
}

int ift_decoder_finish(struct ift_decoder *d, uint64_t stop_ts)
{
	int ret = merge_until(d, UINT64_MAX);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < d->ntasks; i++)
		if ((ret = ift_dec_task_close_calls(d, &d->tasks[i], stop_ts)) < 0)
			return ret;
	return ift_dec_calls_emit(d, true);
}
