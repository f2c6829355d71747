// SPDX-License-Identifier: MIT
/*
 * --isolate: the uprobe events as per-task perf events (see ift-perfring.h).
 *
 * A sample is PERF_SAMPLE_TIME | PERF_SAMPLE_RAW, in that order in the
 * record: u64 time; u32 size; the raw bytes,
 * which are the event's record as the tracefs ring holds it (common_type,
 * common_flags, common_preempt_count, common_pid, then the fetch args),
 * padded so the record stays 8-aligned.  Its CPU is its ring's: every event
 * of a CPU writes there, and an inherited one writes to its parent's.  Rings are mapped by the thread that
 * attaches and read by the reader thread: MU covers the rings, and only
 * them, so that attaching to a process of many threads (thousands of
 * perf_event_open) never holds the reader, and its tracefs rings, up.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ift-perfring.h"
#include "util/array.h"
#include "util/perfbuf.h"

/* a machine of many CPUs: no more than this in all */
#define RING_TOTAL_KB	(64 * 1024)
#define RING_MIN_KB	64

struct ift_perfring {
	struct ift_perfring_opts o;
	int ncpus;
	pthread_mutex_t mu;
	struct ift_perfbuf *rings;	/* per CPU */
	int *ev;			/* tracepoint ids */
	size_t nev, evcap;
	int *fds;
	size_t nfds, fdcap;
	bool raised;			/* RLIMIT_NOFILE raised once */
	struct ift_perfring_stats st;
};

int ift_perfring_alloc(const struct ift_perfring_opts *opts, struct ift_perfring **out)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct ift_perfring *p;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->o = *opts;
	p->ncpus = n > 0 ? (int)n : 1;
	if (!p->o.ring_kb)
		p->o.ring_kb = ift_perfbuf_ring_kb(IFT_PERFRING_DEFAULT_KB, RING_MIN_KB,
						   RING_TOTAL_KB, p->ncpus);
	pthread_mutex_init(&p->mu, NULL);
	p->rings = calloc((size_t)p->ncpus, sizeof(*p->rings));
	if (!p->rings) {
		ift_perfring_free(p);
		return -ENOMEM;
	}
	for (int c = 0; c < p->ncpus; c++)
		ift_perfbuf_init(&p->rings[c]);
	*out = p;
	return 0;
}

int ift_perfring_add_event(struct ift_perfring *p, int tp_id)
{
	if (ift_array_grow((void **)&p->ev, &p->evcap, p->nev + 1, sizeof(*p->ev)) < 0)
		return -ENOMEM;
	p->ev[p->nev] = tp_id;
	return (int)p->nev++;
}

size_t ift_perfring_nevents(const struct ift_perfring *p)
{
	return p->nev;
}

int ift_perfring_ncpus(const struct ift_perfring *p)
{
	return p->ncpus;
}

/*
 * An event on every CPU for every traced task is many descriptors on a big
 * machine (events x CPUs per task): take what the hard limit allows, once.
 * The command was forked before anything was attached and keeps its own.
 */
static bool raise_nofile(struct ift_perfring *p)
{
	struct rlimit rl;

	if (p->raised || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return false;
	p->raised = true;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static int open_one(struct ift_perfring *p, int tp_id, pid_t tid, int cpu)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)tp_id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	a.inherit = 1;
	/* the reader sleeps in poll() until a ring is an eighth full, and
	   reads it from then: a ring needs room for one sleep's records only */
	a.watermark = 1;
	a.wakeup_watermark = p->o.ring_kb * 1024U / 8;
	if (p->o.mono) {
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
	}
	for (;;) {
		fd = (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || errno != EMFILE || !raise_nofile(p))
			break;
	}
	return fd < 0 ? -errno : fd;
}

int ift_perfring_attach(struct ift_perfring *p, pid_t tid, size_t from)
{
	int ret = 0;

	if (from >= p->nev)
		return 0;
	for (int cpu = 0; cpu < p->ncpus && ret >= 0; cpu++) {
		for (size_t i = from; i < p->nev; i++) {
			int fd = open_one(p, p->ev[i], tid, cpu);

			if (fd < 0) {
				/* a CPU that is offline has no events to give */
				if ((fd == -ENODEV || fd == -EINVAL) && i == from && cpu > 0)
					break;
				ret = fd;
				break;
			}
			if (ift_array_grow((void **)&p->fds, &p->fdcap, p->nfds + 1,
					   sizeof(*p->fds)) < 0) {
				close(fd);
				ret = -ENOMEM;
				break;
			}
			p->fds[p->nfds++] = fd;
			pthread_mutex_lock(&p->mu);
			if (p->rings[cpu].fd < 0)
				ret = ift_perfbuf_map(&p->rings[cpu], fd, p->o.ring_kb);
			else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->rings[cpu].fd) < 0)
				ret = -errno;
			pthread_mutex_unlock(&p->mu);
			if (ret < 0)
				break;
		}
	}
	if (ret >= 0)
		p->st.tasks++;
	return ret;
}

void ift_perfring_disable(struct ift_perfring *p)
{
	ift_perfbuf_disable(p->fds, p->nfds);
}

void ift_perfring_settle(struct ift_perfring *p)
{
	uint64_t fired;

	if (ift_perfbuf_count(p->fds, p->nfds, &fired) < 0)
		return;
	pthread_mutex_lock(&p->mu);
	/* fewer where a child of a traced task lives on: its count is not in yet */
	if (fired > p->st.records + p->st.lost)
		p->st.lost = fired - p->st.records;
	pthread_mutex_unlock(&p->mu);
}

struct read_ctx {
	struct ift_perfring *p;
	int cpu;
	ift_perfring_fn fn;
	void *ctx;
};

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct read_ctx *rc = arg;
	const uint8_t *b = (const uint8_t *)(h + 1);
	size_t len = h->size - sizeof(*h);
	uint64_t ts, lost;
	uint32_t size;
	int ret;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (len < 12)
			return 0;
		memcpy(&ts, b, 8);
		memcpy(&size, b + 8, 4);
		if (size > len - 12)
			return 0;
		/* a record FN refuses stays in the ring, handed again: counted
		   once, when taken */
		ret = rc->fn(rc->ctx, rc->cpu, ts, b + 12, size);
		if (ret == 0)
			rc->p->st.records++;
		return ret;
	case PERF_RECORD_LOST:
		/* u64 id, u64 lost */
		if (len >= 16) {
			memcpy(&lost, b + 8, 8);
			rc->p->st.lost += lost;
		}
		return 0;
	default:
		return 0;
	}
}

int ift_perfring_read(struct ift_perfring *p, int cpu, ift_perfring_fn fn, void *ctx)
{
	struct read_ctx rc = { p, cpu, fn, ctx };
	int ret;

	if (cpu < 0 || cpu >= p->ncpus)
		return -EINVAL;
	pthread_mutex_lock(&p->mu);
	ret = ift_perfbuf_read(&p->rings[cpu], on_record, &rc);
	pthread_mutex_unlock(&p->mu);
	return ret;
}

int ift_perfring_fd(struct ift_perfring *p, int cpu)
{
	int fd;

	if (cpu < 0 || cpu >= p->ncpus)
		return -1;
	pthread_mutex_lock(&p->mu);
	fd = p->rings[cpu].fd;
	pthread_mutex_unlock(&p->mu);
	return fd;
}

size_t ift_perfring_pending(struct ift_perfring *p, int cpu, size_t *size)
{
	size_t n;

	*size = 0;
	if (cpu < 0 || cpu >= p->ncpus)
		return 0;
	pthread_mutex_lock(&p->mu);
	n = ift_perfbuf_pending(&p->rings[cpu]);
	*size = p->rings[cpu].size;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void ift_perfring_stats(struct ift_perfring *p, struct ift_perfring_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	st->ring_bytes = 0;
	for (int c = 0; c < p->ncpus; c++)
		if (p->rings[c].base)
			st->ring_bytes = p->rings[c].size;
	pthread_mutex_unlock(&p->mu);
	st->fds = p->nfds;
}

void ift_perfring_free(struct ift_perfring *p)
{
	if (!p)
		return;
	for (int c = 0; p->rings && c < p->ncpus; c++)
		ift_perfbuf_release(&p->rings[c]);
	for (size_t i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p->fds);
	free(p->rings);
	free(p->ev);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
