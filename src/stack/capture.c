// SPDX-License-Identifier: MIT
/*
 * Stacks at traced calls, captured through perf events on the uprobes (the
 * state in capture.h; the call sites and waiting samples in sites.c).
 *
 * Each chosen uprobe entry event is opened with perf_event_open() as a
 * tracepoint on each traced task, once per CPU, with inherit so the tasks it
 * creates carry the events too.  Every event of a CPU writes into one ring
 * (PERF_EVENT_IOC_SET_OUTPUT to the first one opened there): an inherited
 * per-CPU event writes to its parent's ring, so the fd count is events x
 * CPUs per traced task we attach to, and the ring count is CPUs.  A sample
 * holds the user registers, the top of the user stack and the kernel's
 * frame-pointer chain; the first event of each task and CPU also reports
 * the task's executable mappings, forks and execs, so addresses can be
 * named after the process is gone.
 *
 * A thread of its own empties the rings into memory as they fill (woken by
 * the kernel at a quarter of a ring), and copies nothing more than the bytes
 * the kernel could read of each stack: at a few microseconds a call, a ring
 * of a few MiB holds only a few milliseconds of 16 KiB samples, far less
 * than an unwind takes.  The recorder's thread unwinds from that queue.
 * Before it decodes the ftrace pages it empties the rings itself too: a call
 * is written only after its return was decoded, by which time the sample of
 * its entry (taken in the same trap, after the ftrace event) is in a ring or
 * in the queue.  When the queue holds QUEUE_MAX_BYTES the thread stops
 * copying, the rings fill and the kernel counts what it drops.
 *
 * Python frames (record --py-stack) cannot wait for the unwinder: they are
 * in the interpreter's memory, not in the copied stack, and change as soon
 * as the call returns.  So the ops that want them wake the thread at every
 * sample, and it reads the calling thread's frames (process_vm_readv) right
 * after copying the sample, then queues them behind it with the moment the
 * read ended.  A call whose return came after that moment gets its site
 * with the Python frames (IFT_CALL_F_PY): they were read while it was in
 * progress, so they are the frames that made it.  One that returned before
 * keeps its native site and says its frames were late (IFT_CALL_F_PY_LATE):
 * a stack is never from a later moment without saying so.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-pystack.h"
#include "ift-stack.h"
#include "util/array.h"
#include "util/perfbuf.h"
#include "util/timing.h"
#include "stack/capture.h"

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group,
		       PERF_FLAG_FD_CLOEXEC);
}

int ift_stacks_alloc(const struct ift_stack_opts *opts, struct ift_writer *w,
		     struct ift_stacks **out)
{
	struct ift_stacks *s;
	pthread_mutexattr_t ma;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *opts;
	s->w = w;
	s->ncpus = n > 0 ? (int)n : 1;
	if (!s->o.stack_bytes)
		s->o.stack_bytes = IFT_STACK_DEFAULT_BYTES;
	s->o.stack_bytes = (s->o.stack_bytes + 7) & ~7U;
	if (s->o.stack_bytes > IFT_STACK_MAX_BYTES)
		s->o.stack_bytes = IFT_STACK_MAX_BYTES;
	if (!s->o.period)
		s->o.period = 1;
	/*
	 * A sample takes its whole --stack-size in the ring, so 4 MiB is 250
	 * calls, a millisecond or two of a tight loop: less than a busy
	 * machine may take to wake the drain thread.  16 MiB per CPU, and no
	 * more than RING_TOTAL_KB in all on a machine of many CPUs.
	 */
	if (!s->o.ring_kb)
		s->o.ring_kb = ift_perfbuf_ring_kb(RING_DEFAULT_KB, RING_MIN_KB, RING_TOTAL_KB,
						   s->ncpus);

	/*
	 * The drain thread runs at real-time priority with Python frames: a
	 * main thread preempted holding MU must not keep it waiting.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&s->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&s->done_cv, NULL);
	s->wake = -1;
	s->rings = calloc((size_t)s->ncpus, sizeof(*s->rings));
	s->u = ift_unwinder_new();
	if (!s->rings || !s->u) {
		ift_stacks_free(s);
		return -ENOMEM;
	}
	for (int c = 0; c < s->ncpus; c++)
		ift_perfbuf_init(&s->rings[c].b);
	ift_unwinder_open_as(s->u, s->o.read_uid, s->o.read_gid);
	*out = s;
	return 0;
}

int ift_stacks_add_event(struct ift_stacks *s, int tp_id, uint64_t op, bool py)
{
	struct evsel *v = realloc(s->ev, (s->nev + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->ev = v;
	if (py && !s->py) {
		s->py = ift_py_reader_new();
		s->pyframes = calloc(IFT_STACK_MAX_PYTHON, sizeof(*s->pyframes));
		if (!s->py || !s->pyframes)
			return -ENOMEM;
	}
	memset(&v[s->nev], 0, sizeof(v[s->nev]));
	v[s->nev].tp_id = tp_id;
	v[s->nev].op = op;
	v[s->nev].py = py;
	s->nev++;
	return 0;
}

int ift_stacks_add_profile(struct ift_stacks *s, uint64_t period_ns, bool py)
{
	int ret;

	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].tp_id < 0)
			return -EEXIST;
	if (!period_ns)
		return -EINVAL;
	if ((ret = ift_stacks_add_event(s, -1, 0, py)) < 0)
		return ret;
	s->ev[s->nev - 1].period = period_ns;
	/* a sample in the kernel: its kernel call chain says how it came in */
	ret = ift_ksyms_load(&s->ksyms, "/proc/kallsyms");
	s->st.kentry_err = ret < 0 ? ret : s->ksyms.n ? 0 : -EPERM;
	return ret == -ENOMEM ? ret : 0;
}

static int fd_keep(struct ift_stacks *s, int fd, bool profile)
{
	int **v = profile ? &s->pfds : &s->fds;
	size_t *n = profile ? &s->npfds : &s->nfds, *cap = profile ? &s->pfdcap : &s->fdcap;

	if (ift_array_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = fd;
	return 0;
}

/*
 * The attributes of event I: a uprobe's entry (a sample per call, or one
 * in --stack-period), or the profile's clock (a sample per PERIOD of the
 * task's CPU time, in the kernel too: the user registers and stack are
 * those it entered the kernel with).
 */
static void event_attr(const struct ift_stacks *s, size_t i, bool inherit,
		       struct perf_event_attr *a)
{
	const struct evsel *e = &s->ev[i];

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (e->tp_id < 0) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
		a->sample_period = e->period;
	} else {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = (uint64_t)e->tp_id;
		a->sample_period = s->o.period;
	}
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = ift_arch_native->perf_regs_mask;
	a->sample_stack_user = s->o.stack_bytes;
	/* the profile's kernel frames say why a sample was in the kernel */
	a->exclude_callchain_kernel = e->tp_id >= 0 || !s->ksyms.n;
	if (s->py) {
		/* at every sample: its Python frames are read now */
		a->wakeup_events = 1;
	} else {
		/* wake the drain thread at a quarter of a ring */
		a->watermark = 1;
		a->wakeup_watermark = s->o.ring_kb * 1024 / 4;
	}
	a->inherit = inherit;
	/* the trace clock: a sample is matched to its call by time */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	if (i == 0) {
		/* side band, once per task and CPU */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
	}
}

int ift_stacks_attach(struct ift_stacks *s, pid_t pid, bool maps)
{
	int ret;

	if (maps && pid > 0 && (ret = ift_unwinder_read_maps(s->u, pid)) < 0 &&
	    ret != -ENOENT && ret != -ESRCH)
		return ret;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		for (size_t i = 0; i < s->nev; i++) {
			struct perf_event_attr a;
			uint64_t id, *v;
			int fd;

			event_attr(s, i, pid > 0, &a);
			fd = (int)perf_open(&a, pid, cpu, -1);
			if (fd < 0) {
				/* a CPU that is offline has no events to give */
				if (errno == ENODEV || errno == EINVAL)
					if (i == 0 && cpu > 0)
						break;
				return -errno;
			}
			if ((ret = fd_keep(s, fd, s->ev[i].tp_id < 0)) < 0) {
				close(fd);
				return ret;
			}
			if (s->rings[cpu].b.fd < 0) {
				pthread_mutex_lock(&s->mu);
				ret = ift_perfbuf_map(&s->rings[cpu].b, fd, s->o.ring_kb);
				pthread_mutex_unlock(&s->mu);
				if (ret < 0)
					return ret;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[cpu].b.fd) < 0) {
				return -errno;
			}
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
				return -errno;
			v = realloc(s->ids, (s->nids + 1) * 2 * sizeof(*v));
			if (!v)
				return -ENOMEM;
			s->ids = v;
			v[s->nids * 2] = id;
			v[s->nids * 2 + 1] = i;
			s->nids++;
		}
	}
	return 0;
}

/* ---- reading the rings ------------------------------------------------ */

/* N bytes of host-order data at R into V (util/buf.h's cursor). */
static bool take(struct rd *r, void *v, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	memcpy(v, r->p, n);
	r->p += n;
	return true;
}

/*
 * The Python frames of record PY (LEN bytes, a QREC_PY body) for the sample
 * of TID at TS, interned into OUT: their number, 0 when PY is not that
 * sample's or holds none, or -ENOMEM.
 */
static int py_frames_of(struct ift_stacks *s, const uint8_t *py, size_t len, uint32_t tid,
			uint64_t ts, struct pyf *out, uint64_t *read_end)
{
	struct rd r = { py, py + len };
	struct qpy h;
	int n = 0;

	if (!py || !take(&r, &h, sizeof(h)) || h.tid != tid || h.ts != ts || h.n <= 0)
		return 0;
	*read_end = h.read_end;
	for (int i = 0; i < h.n && n < IFT_STACK_MAX_PYTHON; i++) {
		int32_t line;
		uint16_t fl, ql;

		if (!take(&r, &line, 4) || !take(&r, &fl, 2) || !take(&r, &ql, 2) ||
		    (size_t)(r.end - r.p) < (size_t)fl + ql)
			break;
		out[n].file = ift_stk_intern(s, (const char *)r.p, fl);
		out[n].func = ift_stk_intern(s, (const char *)r.p + fl, ql);
		if (!out[n].file || !out[n].func)
			return -ENOMEM;
		out[n++].line = line;
		r.p += fl + ql;
	}
	return n;
}

/*
 * A profile sample: its row waits in profile.c for its order.  The Python
 * frames, read just after the sample while the thread ran on, are the
 * site's end when read (IFT_PF_F_PY); an interrupted frame is still the
 * one it ran in, most often, and the read cannot be checked against the
 * sample as a call's can.
 */
static int on_profile(struct ift_stacks *s, uint16_t misc, const struct prow *base,
		      int64_t native, int64_t withpy, enum ift_kentry entry)
{
	struct prow r = *base;

	s->st.prof_samples++;
	r.stack = (uint64_t)(withpy > 0 ? withpy : native);
	if (withpy > 0) {
		r.flags |= IFT_PF_F_PY;
		s->st.prof_py++;
	}
	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		r.flags |= IFT_PF_F_KERNEL;
		s->st.prof_kernel++;
		if (entry == IFT_KENTRY_IRQ || entry == IFT_KENTRY_TRAP) {
			r.flags |= IFT_PF_F_IRQ;
			s->st.prof_irq += entry == IFT_KENTRY_IRQ;
			s->st.prof_trap += entry == IFT_KENTRY_TRAP;
		} else if (entry == IFT_KENTRY_FAULT) {
			r.flags |= IFT_PF_F_FAULT;
			s->st.prof_fault++;
		} else if (entry == IFT_KENTRY_SYSCALL) {
			s->st.prof_syscall++;
		}
	}
	return ift_stk_profile_add(s, &r);
}

static int on_sample(struct ift_stacks *s, uint16_t misc, const uint8_t *p, size_t len,
		     const uint8_t *py, size_t pylen)
{
	struct pyf pyf[IFT_STACK_MAX_PYTHON];
	uint64_t read_end = 0;
	int npy;
	struct rd r = { p, p + len };
	uint64_t id, ts, nr, abi, size, dyn = 0, regs[IFT_ARCH_MAX_REGS];
	uint64_t ips[IFT_STACK_MAX_FRAMES], fp[IFT_STACK_MAX_FRAMES], kips[KCHAIN_MAX];
	const uint8_t *stack = NULL;
	uint32_t pid, tid, cpu[2];
	unsigned nfp = 0, nk = 0, n;
	bool prof, to_py, user = true;
	struct pending pe;
	struct tidq *q;
	size_t ev = SIZE_MAX;
	int64_t site;

	if (!take(&r, &id, 8) || !take(&r, &pid, 4) || !take(&r, &tid, 4) ||
	    !take(&r, &ts, 8) || !take(&r, cpu, 8) || !take(&r, &nr, 8) ||
	    nr > (size_t)(r.end - r.p) / 8)
		return 0;
	/* the kernel's frames (the profile's only), then the user's */
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = 0;

		take(&r, &ip, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			user = ip != (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (!user) {
			/* the outermost ones are the entry's: keep the last */
			kips[nk < KCHAIN_MAX ? nk++ : KCHAIN_MAX - 1] = ip;
		} else if (nfp < IFT_STACK_MAX_FRAMES) {
			fp[nfp++] = ip;
		}
	}
	memset(regs, 0, sizeof(regs));
	if (!take(&r, &abi, 8))
		return 0;
	if (abi && !take(&r, regs, ift_arch_native->perf_nregs * 8))
		return 0;
	if (!take(&r, &size, 8))
		return 0;
	if (size) {
		if (size > (size_t)(r.end - r.p))
			return 0;
		stack = r.p;
		r.p += size;
		if (!take(&r, &dyn, 8) || dyn > size)
			dyn = 0;
	}
	for (size_t i = 0; i < s->nids; i++)
		if (s->ids[2 * i] == id)
			ev = s->ids[2 * i + 1];
	if (ev == SIZE_MAX)
		return 0;
	prof = s->ev[ev].tp_id < 0;
	if (prof && ts < s->prof_from) {
		s->st.prof_before++;
		return 0;
	}
	if (!prof)
		s->st.samples++;
	if ((npy = py_frames_of(s, py, pylen, tid, ts, pyf, &read_end)) < 0)
		return npy;
	/* a profile's sample with its Python frames: the native ones up to
	   the interpreter, which only ran them */
	to_py = prof && npy > 0;
	n = 0;
	if (abi)
		n = (unsigned)ift_unwind_to(s->u, (pid_t)pid, regs, stack, dyn, ips,
					    IFT_STACK_MAX_FRAMES, to_py);
	/*
	 * DWARF first; the frame-pointer chain when it got no further than
	 * the probed function (no unwind table, a file gone).
	 */
	memset(&pe, 0, sizeof(pe));
	for (int with = 0; with < 2; with++) {
		if ((with && !npy) || (!with && to_py))
			continue;
		if (n <= 1 && nfp > n && !to_py)
			site = ift_stk_site_id(s, (pid_t)pid, fp, nfp, true, pyf, with ? (unsigned)npy : 0);
		else
			site = ift_stk_site_id(s, (pid_t)pid, ips, n, false, pyf, with ? (unsigned)npy : 0);
		if (site < 0)
			return (int)site;
		if (with)
			pe.py_stack = (uint64_t)site;
		else
			pe.stack = (uint64_t)site;
	}
	if (prof) {
		struct prow base = { .ts = ts, .cpu = cpu[0], .pid = pid, .tid = tid };

		return on_profile(s, misc, &base, (int64_t)pe.stack, (int64_t)pe.py_stack,
				  ift_ksyms_entry(&s->ksyms, kips, nk));
	}
	if (!(q = ift_stk_tidq_find(s, tid, true)))
		return -ENOMEM;
	pe.ts = ts;
	pe.op = s->ev[ev].op;
	pe.py_end = read_end;
	return ift_stk_pending_add(q, &pe);
}

static bool qbuf_reserve(struct qbuf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 20;
		uint8_t *v;

		while (cap < b->len + n)
			cap *= 2;
		if (!(v = realloc(b->data, cap)))
			return false;
		b->data = v;
		b->cap = cap;
	}
	return true;
}

/*
 * Bytes of sample REC (LEN) to copy: all of it up to its stack, then only
 * the DYN bytes the kernel could read, out of the SIZE it reserved.  0 when
 * the record is not one we can parse: copied whole, on_sample judges it.
 */
static size_t sample_cut(const uint8_t *rec, size_t len, size_t *stack_at,
			 uint64_t *dyn)
{
	struct rd r = { rec, rec + len };
	uint64_t nr, abi, size;

	r.p += 32;	/* id, pid and tid, time, cpu */
	if (r.p > r.end || !take(&r, &nr, 8) || nr > (size_t)(r.end - r.p) / 8)
		return 0;
	r.p += nr * 8;
	if (!take(&r, &abi, 8) ||
	    (abi && (size_t)(r.end - r.p) < ift_arch_native->perf_nregs * 8))
		return 0;
	if (abi)
		r.p += ift_arch_native->perf_nregs * 8;
	*stack_at = (size_t)(r.p - rec);
	if (!take(&r, &size, 8) || !size || size > (size_t)(r.end - r.p) ||
	    (size_t)(r.end - r.p) - size < 8)
		return 0;
	memcpy(dyn, r.p + size, 8);
	if (*dyn > size)
		*dyn = 0;
	return *stack_at + 8 + *dyn + 8;
}

/* Copies REC (LEN bytes, the body of a record of header HD) to the queue. */
static int queue_put(struct ift_stacks *s, const struct perf_event_header *hd,
		     const uint8_t *rec, size_t len)
{
	size_t stack_at = 0, cut = 0, n;
	uint64_t dyn = 0;
	struct qrec q;
	uint8_t *p;

	if (hd->type == PERF_RECORD_SAMPLE)
		cut = sample_cut(rec, len, &stack_at, &dyn);
	n = cut ? cut : len;
	q.size = (uint32_t)((sizeof(q) + n + 7) & ~(size_t)7);
	q.type = (uint16_t)hd->type;
	q.misc = hd->misc;
	if (!qbuf_reserve(&s->queue, q.size))
		return -ENOMEM;
	p = s->queue.data + s->queue.len;
	memcpy(p, &q, sizeof(q));
	p += sizeof(q);
	if (cut) {
		/* the header fields, the stack as DYN bytes, then DYN */
		memcpy(p, rec, stack_at);
		memcpy(p + stack_at, &dyn, 8);
		memcpy(p + stack_at + 8, rec + stack_at + 8, dyn);
		memcpy(p + stack_at + 8 + dyn, &dyn, 8);
	} else {
		memcpy(p, rec, len);
	}
	memset(p + n, 0, q.size - sizeof(q) - n);
	s->queue.len += q.size;
	return 0;
}

static uint64_t thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* The evsel of sample REC (LEN bytes), or NULL. */
static const struct evsel *sample_evsel(const struct ift_stacks *s, const uint8_t *rec,
					size_t len)
{
	uint64_t id;

	if (len < 8)
		return NULL;
	memcpy(&id, rec, 8);	/* PERF_SAMPLE_IDENTIFIER comes first */
	for (size_t i = 0; i < s->nids; i++)
		if (s->ids[2 * i] == id)
			return &s->ev[s->ids[2 * i + 1]];
	return NULL;
}

/* The bucket of a lag of NS in struct ift_stacks.py_lag. */
static unsigned py_lag_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned e;

	if (us < 2 * PY_LAG_SUB)
		return (unsigned)us;
	e = 63 - (unsigned)__builtin_clzll(us) - PY_LAG_SUB_BITS; /* us >> e: [SUB, 2 SUB) */
	if (e >= PY_LAG_STEPS / PY_LAG_SUB - 1)
		return PY_LAG_STEPS - 1;
	return PY_LAG_SUB * (e + 1) + (unsigned)(us >> e) - PY_LAG_SUB;
}

/*
 * After record HD (body REC, LEN bytes) was queued: for a sample of an op
 * that wants them, the calling thread's Python frames now, queued behind
 * it (QREC_PY); for an exec or a process's exit, forget what was found of
 * its interpreter.  The caller holds MU.
 */
static int py_after(struct ift_stacks *s, const struct perf_event_header *hd,
		    const uint8_t *rec, size_t len)
{
	const struct evsel *ev;
	struct qrec q;
	struct qpy h;
	uint32_t ids[4];
	uint64_t t0;
	size_t need;
	uint8_t *p;
	int n;

	if (hd->type == PERF_RECORD_COMM && (hd->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    len >= 4) {
		memcpy(ids, rec, 4);
		ift_py_reader_forget(s->py, (pid_t)ids[0]);
		return 0;
	}
	if (hd->type == PERF_RECORD_EXIT && len >= 16) {
		memcpy(ids, rec, 16);	/* pid, ppid, tid, ptid */
		if (ids[0] == ids[2])
			ift_py_reader_forget(s->py, (pid_t)ids[0]);
		return 0;
	}
	if (hd->type == PERF_RECORD_FORK && len >= 16) {
		memcpy(ids, rec, 16);	/* pid, ppid, tid, ptid */
		return ids[0] != ids[1] ? ift_py_reader_fork(s->py, (pid_t)ids[0],
							     (pid_t)ids[1]) : 0;
	}
	if (hd->type == PERF_RECORD_MMAP2 && len > MMAP2_NAME) {
		const char *name = (const char *)rec + MMAP2_NAME;

		memcpy(ids, rec, 4);	/* pid, tid, addr, len, pgoff, ..., the name */
		if (!memchr(name, 0, len - MMAP2_NAME))
			return 0;
		return ift_py_reader_mapped(s->py, (pid_t)ids[0], name);
	}
	if (hd->type != PERF_RECORD_SAMPLE || !(ev = sample_evsel(s, rec, len)) || !ev->py ||
	    len < 24)
		return 0;
	memcpy(ids, rec + 8, 8);	/* pid, tid */
	memcpy(&h.ts, rec + 16, 8);
	h.tid = ids[1];
	t0 = thread_ns();
	n = ift_py_reader_frames(s->py, (pid_t)ids[0], (pid_t)ids[1], s->pyframes,
				 IFT_STACK_MAX_PYTHON);
	h.read_end = ift_mono_ns();
	s->st.py_read_ns += thread_ns() - t0;
	if (n == -ENOMEM)
		return n;
	/* the calls' figures: a profile's read has no call to be late for */
	if (ev->tp_id < 0)
		goto queue;
	if (h.read_end > h.ts) {
		uint64_t lag = h.read_end - h.ts;

		s->py_lag[py_lag_bucket(lag)]++;
		if (lag > s->st.py_lag_max_ns)
			s->st.py_lag_max_ns = lag;
	}
	if (n > 0)
		s->st.py_read++;
	else if (n == 0)
		s->st.py_none++;
	else
		s->st.py_failed++;
queue:
	h.n = n;
	need = sizeof(h);
	for (int i = 0; i < n; i++)
		need += 8 + strlen(s->pyframes[i].file) + strlen(s->pyframes[i].func);
	q.size = (uint32_t)((sizeof(q) + need + 7) & ~(size_t)7);
	q.type = QREC_PY;
	q.misc = 0;
	if (!qbuf_reserve(&s->queue, q.size))
		return -ENOMEM;
	p = s->queue.data + s->queue.len;
	memset(p, 0, q.size);
	memcpy(p, &q, sizeof(q));
	p += sizeof(q);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (int i = 0; i < n; i++) {
		const struct ift_py_frame *f = &s->pyframes[i];
		uint16_t fl = (uint16_t)strlen(f->file), ql = (uint16_t)strlen(f->func);
		int32_t line = f->line;

		memcpy(p, &line, 4);
		memcpy(p + 4, &fl, 2);
		memcpy(p + 6, &ql, 2);
		memcpy(p + 8, f->file, fl);
		memcpy(p + 8 + fl, f->func, ql);
		p += 8 + fl + ql;
	}
	s->queue.len += q.size;
	return 0;
}

/* One record into the queue; stops (1) at QUEUE_MAX_BYTES, read again later. */
static int ring_record(void *ctx, const struct perf_event_header *hd)
{
	struct ift_stacks *s = ctx;
	const uint8_t *rec = (const uint8_t *)hd + sizeof(*hd);
	size_t len = hd->size - sizeof(*hd);
	int ret;

	if (s->queue.len >= QUEUE_MAX_BYTES)
		return 1;
	if ((ret = queue_put(s, hd, rec, len)) < 0 || !s->py)
		return ret;
	return py_after(s, hd, rec, len);
}

/*
 * Copies what RG holds into the queue and frees it for the kernel; the
 * caller holds MU.  Returns the records copied, or an error.
 */
static int ring_drain(struct ift_stacks *s, struct ring *rg)
{
	return ift_perfbuf_read(&rg->b, ring_record, s);
}

/* Every ring into the queue; the caller holds MU. */
static int drain_all(struct ift_stacks *s)
{
	int n = 0, ret;

	for (int c = 0; c < s->ncpus; c++) {
		uint64_t t;

		if (!s->rings[c].b.base)
			continue;
		t = ift_mono_ns();
		if ((ret = ring_drain(s, &s->rings[c])) < 0)
			return ret;
		/* stopped at QUEUE_MAX_BYTES: not read to its end */
		if (s->queue.len < QUEUE_MAX_BYTES)
			s->rings[c].drained = t;
		n += ret;
	}
	return n;
}

static void *drain_main(void *arg)
{
	struct ift_stacks *s = arg;
	struct pollfd *pfd = calloc((size_t)s->ncpus + 1, sizeof(*pfd));
	int ret = pfd ? 0 : -ENOMEM;

	/* it copies and nothing more: let it run before the traced tasks */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), DRAIN_NICE);
	/*
	 * Python frames are only worth reading while their call is in
	 * progress: a woken drain thread that waits for a CPU behind the
	 * traced program's busy threads reads them after the call returned.
	 * Real-time (the lowest priority) where allowed, so that it runs at
	 * its wake-up; each wake-up is one sample's frames, bounded by the
	 * calls sampled (--stack-period).
	 */
	if (s->py) {
		struct sched_param sp = { .sched_priority = 1 };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	while (ret >= 0) {
		uint64_t req;
		int n, np = 0;

		pthread_mutex_lock(&s->mu);
		if (s->stop) {
			pthread_mutex_unlock(&s->mu);
			break;
		}
		req = s->drain_req;
		ret = n = drain_all(s);
		/* every sample the asker waited for is in the queue now */
		s->drain_done = req;
		pthread_cond_broadcast(&s->done_cv);
		for (int c = 0; c < s->ncpus; c++)
			if (s->rings[c].b.base && !s->rings[c].hup) {
				pfd[np].fd = s->rings[c].b.fd;
				pfd[np++].events = POLLIN;
			}
		if (s->wake >= 0) {
			pfd[np].fd = s->wake;
			pfd[np++].events = POLLIN;
		}
		pthread_mutex_unlock(&s->mu);
		if (ret < 0 || n)
			continue;
		/* the kernel wakes us at the watermark; the timeout, to stop */
		if (poll(pfd, (nfds_t)np, DRAIN_IDLE_MS) <= 0)
			continue;
		/* a ring whose task is gone polls ready for ever: drained, not polled */
		pthread_mutex_lock(&s->mu);
		for (int i = 0, c = 0; i < np; i++) {
			if (pfd[i].fd == s->wake) {
				uint64_t v;

				if (pfd[i].revents & POLLIN && read(s->wake, &v, sizeof(v)) < 0)
					v = 0;	/* drained all the same */
				continue;
			}
			if (!(pfd[i].revents & (POLLHUP | POLLERR)))
				continue;
			for (c = 0; c < s->ncpus; c++)
				if (s->rings[c].b.fd == pfd[i].fd)
					s->rings[c].hup = true;
		}
		pthread_mutex_unlock(&s->mu);
	}
	free(pfd);
	pthread_mutex_lock(&s->mu);
	if (ret < 0 && !s->err)
		s->err = ret;
	s->running_drain = false;
	pthread_cond_broadcast(&s->done_cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

void ift_stacks_profile_from(struct ift_stacks *s, uint64_t from_ns)
{
	if (s)
		s->prof_from = from_ns;
}

int ift_stacks_start(struct ift_stacks *s)
{
	sigset_t all, old;
	int ret;

	if (s->running)
		return 0;
	if (s->py && s->wake < 0 && (s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	s->running_drain = true;
	/* signals are the recorder's main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&s->th, NULL, drain_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		s->running_drain = false;
		return -ret;
	}
	s->running = true;
	return 0;
}

void ift_stacks_disable(struct ift_stacks *s)
{
	if (s) {
		ift_perfbuf_disable(s->pfds, s->npfds);
		ift_perfbuf_disable(s->fds, s->nfds);
	}
}

/*
 * A sample the kernel cannot fit in a full ring is counted in the ring and
 * told as PERF_RECORD_LOST in front of the next record that fits: the drops
 * of the last calls, while the ring was full, are told only if some record
 * comes after (a side-band one at a task's exit may, on its CPU).  The
 * events' own counts are every call they saw, sampled or dropped.
 */
void ift_stacks_settle(struct ift_stacks *s)
{
	uint64_t known = s->st.samples + s->st.lost;

	/* a count that cannot be read leaves the losses as told */
	if (ift_perfbuf_count(s->fds, s->nfds, &s->st.fired) < 0) {
		s->st.fired = 0;
		return;
	}
	/*
	 * One sample per call at period 1; at N, one in N per task and CPU,
	 * which no sum of counts tells exactly.  A task still alive (a
	 * daemon the command left) has not given its count yet: fewer.
	 */
	if (s->o.period == 1 && s->st.fired > known)
		s->st.lost += s->st.fired - known;
}

void ift_stacks_stop(struct ift_stacks *s)
{
	if (!s || !s->running)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	s->running = false;
}

/*
 * One record of the batch: side band when !SAMPLES, samples when SAMPLES.
 * A sample's Python frames, when read, are the record after it (PY, PYLEN).
 */
static int on_record(struct ift_stacks *s, const struct qrec *q, const uint8_t *rec,
		     size_t len, bool samples, const uint8_t *py, size_t pylen)
{
	bool sb = q->type != PERF_RECORD_SAMPLE && q->type != PERF_RECORD_LOST &&
		  q->type != QREC_PY;

	if (sb == samples)
		return 0;
	switch (q->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(s, q->misc, rec, len, py, pylen);
	case PERF_RECORD_LOST:
		if (len >= 16) {
			const struct evsel *e = sample_evsel(s, rec, len);
			uint64_t lost;

			/* id, lost: the event's */
			memcpy(&lost, rec + 8, 8);
			if (e && e->tp_id < 0)
				s->st.prof_lost += lost;
			else
				s->st.lost += lost;
		}
		return 0;
	case PERF_RECORD_MMAP2: {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_gen;
			uint32_t prot, flags;
		} m;
		const char *name = (const char *)rec + sizeof(m);

		if (len <= sizeof(m))
			return 0;
		memcpy(&m, rec, sizeof(m));
		if (!memchr(name, 0, len - sizeof(m)))
			return 0;
		return ift_unwinder_map(s->u, (pid_t)m.pid, m.addr, m.addr + m.len,
					m.pgoff, name);
	}
	case PERF_RECORD_COMM:
		if ((q->misc & PERF_RECORD_MISC_COMM_EXEC) && len >= 8) {
			uint32_t pid;

			memcpy(&pid, rec, 4);
			ift_unwinder_exec(s->u, (pid_t)pid);
		}
		return 0;
	case PERF_RECORD_FORK:
		if (len >= 8) {
			uint32_t ids[2];

			memcpy(ids, rec, 8);	/* pid, ppid */
			ift_unwinder_fork(s->u, (pid_t)ids[0], (pid_t)ids[1]);
		}
		return 0;
	}
	return 0;
}

int ift_stacks_poll(struct ift_stacks *s)
{
	struct qbuf b;
	uint64_t t0, below;
	int ret;

	pthread_mutex_lock(&s->mu);
	ret = s->err;
	if (ret >= 0 && s->py && s->running_drain) {
		/* the drain thread reads the rings and the frames: ask, wait */
		uint64_t req = ++s->drain_req, one = 1;

		if (write(s->wake, &one, sizeof(one)) < 0 && errno != EAGAIN)
			ret = -errno;
		while (ret >= 0 && s->drain_done < req && s->running_drain)
			pthread_cond_wait(&s->done_cv, &s->mu);
		if (ret >= 0 && s->drain_done < req && (ret = drain_all(s)) > 0)
			ret = 0;	/* it stopped: drain here */
		if (ret >= 0)
			ret = s->err;
	} else if (ret >= 0 && (ret = drain_all(s)) > 0) {
		ret = 0;
	}
	/* the profile's rows before BELOW are all in the queue now */
	below = UINT64_MAX;
	for (int c = 0; c < s->ncpus; c++)
		if (s->rings[c].b.base && s->rings[c].drained < below)
			below = s->rings[c].drained;
	below = below > PROFILE_MARGIN_NS ? below - PROFILE_MARGIN_NS : 0;
	/* take the queue, leave the last batch's memory in its place */
	b = s->queue;
	s->queue = s->batch;
	s->queue.len = 0;
	pthread_mutex_unlock(&s->mu);
	s->batch = b;
	if (ret < 0)
		return ret;
	/*
	 * Maps first, from every CPU: a library a thread mapped on one CPU
	 * may be called on another one before we get to it.
	 */
	t0 = b.len ? thread_ns() : 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t at = 0; at + sizeof(struct qrec) <= b.len; ) {
			const uint8_t *py = NULL;
			size_t pylen = 0, next;
			struct qrec q, nq;

			memcpy(&q, b.data + at, sizeof(q));
			next = at + q.size;
			if (next + sizeof(nq) <= b.len) {
				memcpy(&nq, b.data + next, sizeof(nq));
				if (nq.type == QREC_PY) {
					py = b.data + next + sizeof(nq);
					pylen = nq.size - sizeof(nq);
				}
			}
			ret = on_record(s, &q, b.data + at + sizeof(q), q.size - sizeof(q),
					pass == 1, py, pylen);
			if (ret < 0)
				return ret;
			at += q.size;
		}
	}
	if (b.len)
		s->st.unwind_ns += thread_ns() - t0;
	return ift_stk_profile_write(s, below);
}

/* Bucket I's upper end (exclusive), in ns. */
static uint64_t py_lag_top(unsigned i)
{
	unsigned e;

	if (i < 2 * PY_LAG_SUB)
		return (i + 1) * (uint64_t)1000;
	e = i / PY_LAG_SUB - 1;
	return ((uint64_t)(i % PY_LAG_SUB + PY_LAG_SUB + 1) << e) * 1000;
}

/*
 * The lag that P per cent of the reads took at most, rounded up to its
 * bucket's end and never past the longest one.
 */
static uint64_t py_lag_at(const struct ift_stacks *s, unsigned p)
{
	uint64_t n = 0, seen = 0, max = s->st.py_lag_max_ns;

	for (unsigned i = 0; i < PY_LAG_STEPS; i++)
		n += s->py_lag[i];
	for (unsigned i = 0; n && i < PY_LAG_STEPS - 1; i++)
		if ((seen += s->py_lag[i]) * 100 >= n * p) {
			uint64_t up = py_lag_top(i);

			return up < max ? up : max;
		}
	return max;
}

void ift_stacks_stats(const struct ift_stacks *s, struct ift_stack_stats *st)
{
	*st = s->st;
	st->prof_late = s->prof.late;
	st->py_lag_p50_ns = py_lag_at(s, 50);
	st->py_lag_p99_ns = py_lag_at(s, 99);
	st->rings = st->ring_bytes = 0;
	for (int c = 0; s->rings && c < s->ncpus; c++)
		if (s->rings[c].b.base) {
			st->rings++;
			st->ring_bytes = s->rings[c].b.size;
		}
}

void ift_stacks_free(struct ift_stacks *s)
{
	if (!s)
		return;
	ift_stacks_stop(s);
	for (int c = 0; s->rings && c < s->ncpus; c++)
		ift_perfbuf_release(&s->rings[c].b);
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	for (size_t i = 0; i < s->npfds; i++)
		close(s->pfds[i]);
	free(s->pfds);
	ift_held_free(&s->prof);
	free(s->rings);
	free(s->ev);
	free(s->ids);
	for (size_t i = 0; i < s->nq; i++)
		free(s->q[i].v);
	free(s->q);
	ift_tidmap_release(&s->qmap);
	for (size_t i = 0; i < s->strcap; i++)
		free(s->strs[i]);
	free(s->strs);
	ift_py_reader_free(s->py);
	free(s->pyframes);
	ift_intern_release(&s->sites);
	ift_unwinder_free(s->u);
	ift_ksyms_free(&s->ksyms);
	if (s->wake >= 0)
		close(s->wake);
	pthread_cond_destroy(&s->done_cv);
	free(s->queue.data);
	free(s->batch.data);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
