// SPDX-License-Identifier: MIT
/*
 * The reader thread and its page queue (ift-ringq.h): it empties every
 * CPU's ring into memory, a page at a time, and decodes nothing; the
 * caller's thread takes the queue and hands it on.  Only the queue is
 * shared, under its lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ift-error.h"
#include "ift-perfring.h"
#include "ift-ringq.h"
#include "ift-ring.h"
#include "util/timing.h"

#define PARTIAL_EVERY_NS	50000000ULL	/* a partly filled page, at most this often */
#define IDLE_WAIT_MS		10	/* the thread's sleep when the rings gave nothing */
#define SPARE_PAGES		64	/* pages kept for the thread to reuse */
#define QUEUE_MAX_BYTES		(256ULL << 20)	/* pages read, waiting to be taken */

/*
 * A page read from CPU's tracefs ring (SOURCE 0) and not yet taken, or
 * records of its perf ring (SOURCE 1, --isolate) packed as struct
 * perfrec, or (len < 0) the note that the ring was empty at IDLE_TS:
 * nothing older can still come from it.
 */
struct qpage {
	struct qpage *next;
	int source, cpu, len;
	uint64_t idle_ts;
	unsigned char data[];
};

/* A perf ring's record in a qpage: its raw bytes follow, padded to 8. */
struct perfrec {
	uint64_t ts;
	uint32_t size;
	int32_t cpu;
};

/* Pages and idle notes keep the order they were read in. */
struct ift_ringq {
	struct ift_ring *ring;
	struct ift_perfring *iso;
	bool idle_notes;		/* the rings are on CLOCK_MONOTONIC */
	pthread_mutex_t mu;
	pthread_cond_t more;
	struct qpage *head, *tail, *spare;
	size_t nspare;			/* at most SPARE_PAGES */
	uint64_t bytes, peak;		/* queued now, and at most */
	bool stop, running;
	int err;			/* the thread's error, once */
	pthread_t th;
};

/*
 * A qpage for LEN bytes (a spare page when LEN fits one), once the taker
 * is not far behind unless NOWAIT; NULL without memory.  Called on the
 * reader thread: only the queue's lock is shared.  NOWAIT while a perf
 * ring is read: its lock is held then, and the decoding thread, which
 * the wait is for, may be waiting for it to attach a new task.
 */
static struct qpage *q_get(struct ift_ringq *r, int len, bool nowait)
{
	size_t psize = (size_t)ift_ring_page_size(r->ring);
	size_t size = len > 0 ? (size_t)len : 0;
	struct qpage *p = NULL;

	pthread_mutex_lock(&r->mu);
	/* a taker far behind: stop reading, and let the kernel count the loss */
	while (!nowait && r->bytes > QUEUE_MAX_BYTES && !r->stop) {
		pthread_mutex_unlock(&r->mu);
		poll(NULL, 0, 1);
		pthread_mutex_lock(&r->mu);
	}
	if (size && size <= psize && r->spare) {
		p = r->spare;
		r->spare = p->next;
		r->nspare--;
	}
	pthread_mutex_unlock(&r->mu);
	if (!p)
		p = malloc(sizeof(*p) + (size && size < psize ? psize : size));
	return p;
}

/* Gives back P, unused or decoded: kept for the reader when spares are few. */
static void q_recycle(struct ift_ringq *r, struct qpage *p)
{
	pthread_mutex_lock(&r->mu);
	if (r->nspare < SPARE_PAGES) {
		p->next = r->spare;
		r->spare = p;
		r->nspare++;
		p = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	free(p);
}

/* Queues P, its SOURCE, CPU, LEN (< 0: an idle note) and IDLE_TS set. */
static void q_append(struct ift_ringq *r, struct qpage *p, int source, int cpu, int len,
		     uint64_t idle_ts)
{
	p->next = NULL;
	p->source = source;
	p->cpu = cpu;
	p->len = len;
	p->idle_ts = idle_ts;
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = p;
	else
		r->head = p;
	r->tail = p;
	r->bytes += sizeof(*p) + (len > 0 ? (size_t)len : 0);
	if (r->bytes > r->peak)
		r->peak = r->bytes;
	pthread_mutex_unlock(&r->mu);
}

/* An idle note: CPU's ring of SOURCE was empty at IDLE_TS. */
static int q_idle(struct ift_ringq *r, int source, int cpu, uint64_t idle_ts)
{
	struct qpage *p = q_get(r, -1, false);

	if (!p)
		return -ENOMEM;
	q_append(r, p, source, cpu, -1, idle_ts);
	return 0;
}

/* The reader reads a tracefs page straight into a queued page: one copy. */
static void *q_buf(void *ctx, int cpu)
{
	struct ift_ringq *r = ctx;
	struct qpage *p = q_get(r, ift_ring_page_size(r->ring), false);

	(void)cpu;
	return p ? p->data : NULL;
}

static struct qpage *qpage_of(void *data)
{
	return (struct qpage *)(void *)((unsigned char *)data - offsetof(struct qpage, data));
}

static int q_page(void *ctx, int cpu, void *page, int len)
{
	struct ift_ringq *r = ctx;

	if (len > 0)
		q_append(r, qpage_of(page), 0, cpu, len, 0);
	else
		q_recycle(r, qpage_of(page));
	return 0;
}

/*
 * --isolate: a perf ring's records, packed as struct perfrec into a queued
 * page as the reader reads them.
 */
struct perfpack {
	struct ift_ringq *r;
	int cpu;
	size_t len, cap;
	struct qpage *p;
};

static void pack_flush(struct perfpack *pk)
{
	if (pk->p && pk->len)
		q_append(pk->r, pk->p, 1, pk->cpu, (int)pk->len, 0);
	else if (pk->p)
		q_recycle(pk->r, pk->p);
	pk->p = NULL;
	pk->len = 0;
}

static int pack_record(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	struct perfpack *pk = ctx;
	size_t need = sizeof(struct perfrec) + ((size + 7) & ~7U);
	struct perfrec h = { ts, size, cpu };

	if (need > pk->cap)
		return 0;	/* larger than a page: no uprobe record is */
	if (pk->len + need > pk->cap)
		pack_flush(pk);
	if (!pk->p && !(pk->p = q_get(pk->r, (int)pk->cap, true)))
		return -ENOMEM;
	memcpy(pk->p->data + pk->len, &h, sizeof(h));
	memcpy(pk->p->data + pk->len + sizeof(h), raw, size);
	pk->len += need;
	return 0;
}

/* Reads CPU's perf ring into the queue; the records read, or an error. */
static int perf_drain(struct ift_ringq *r, struct perfpack *pk, int cpu)
{
	int n;

	pk->cpu = cpu;
	n = ift_perfring_read(r->iso, cpu, pack_record, pk);
	pack_flush(pk);
	return n;
}

/*
 * --isolate: reads CPU's perf ring into the queue when the CPU's tracefs
 * ring gave pages this round (PAGES), when it is an eighth full, or when
 * LAST (when it was last read) is PARTIAL_EVERY_NS ago, and notes it empty
 * from then.  With the pages: the merge waits for the slowest queue of all,
 * and a perf ring read every 50 ms alone held a busy -p workload's pages
 * back that long (peak RSS 18 MiB against 11.6 through tracefs).  Its own
 * pace, not the tracefs ring's: a page storm keeps that one busy, and a
 * perf ring read only with partial tracefs pages went unread for the
 * storm, holding the merge back until its records came late.  Read at
 * every record, the reader never slept.  The records read, or an error.
 */
static int perf_round(struct ift_ringq *r, struct perfpack *pk, int cpu, uint64_t *last,
		      bool pages)
{
	uint64_t now = ift_mono_ns();
	size_t size, used = ift_perfring_pending(r->iso, cpu, &size);
	int n;

	if (!pages && used < size / 8 && now - *last < PARTIAL_EVERY_NS)
		return 0;
	*last = now;
	n = perf_drain(r, pk, cpu);
	/* read to its head at NOW: nothing older can still come */
	if (n >= 0 && r->idle_notes && now > IFT_RINGQ_IDLE_MARGIN_NS) {
		int ret = q_idle(r, 1, cpu, now - IFT_RINGQ_IDLE_MARGIN_NS);

		if (ret < 0)
			return ret;
	}
	return n;
}

/*
 * Waits up to IDLE_WAIT_MS for more: isolated, in poll() on the perf rings,
 * which the kernel wakes when one is an eighth full (a call loop fills a
 * ring faster than the tracefs rings' pages come); else a plain sleep.  A
 * ring that hung up (HUP[cpu]) is left to the timer from then on.
 */
static void reader_idle(struct ift_ringq *r, struct pollfd *pf, bool *hup)
{
	int n = r->iso ? ift_perfring_ncpus(r->iso) : 0;

	for (int c = 0; c < n; c++) {
		pf[c].fd = hup[c] ? -1 : ift_perfring_fd(r->iso, c);
		pf[c].events = POLLIN;
		pf[c].revents = 0;
	}
	if (poll(n ? pf : NULL, (nfds_t)n, IDLE_WAIT_MS) <= 0)
		return;
	for (int c = 0; c < n; c++)
		if (pf[c].revents & (POLLHUP | POLLERR | POLLNVAL))
			hup[c] = true;
}

static void *reader_main(void *arg)
{
	struct ift_ringq *r = arg;
	int ncpus = ift_ring_ncpus(r->ring), ret = 0;
	uint64_t *last = calloc((size_t)ncpus, sizeof(*last));	/* a CPU's last read */
	struct perfpack pk = { r, 0, 0, (size_t)ift_ring_page_size(r->ring), NULL };
	uint64_t *plast = NULL;					/* its perf ring's */
	const struct ift_page_sink sink = { q_buf, q_page, r };
	bool mapped = ift_ring_mapped(r->ring);
	struct pollfd *pf = NULL;
	bool *hup = NULL;

	if (!last || (r->iso &&
		      (!(plast = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*plast))) ||
		       !(pf = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*pf))) ||
		       !(hup = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*hup)))))) {
		ret = -ENOMEM;
		goto out;
	}

	/*
	 * It copies pages and nothing else, so it may jump the queue for a
	 * CPU: a load that keeps every CPU busy then still cannot fill a ring.
	 * Only this thread (Linux nice is per thread); root may, others not.
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), IFT_RINGQ_NICE);
	for (;;) {
		int pages = 0;
		bool stop;

		pthread_mutex_lock(&r->mu);
		stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (stop)
			break;
		for (int cpu = 0; cpu < ncpus && ret >= 0; cpu++) {
			uint64_t before = ift_mono_ns();
			/*
			 * The page still filling only now and then: this loop
			 * runs again as soon as any CPU had a full page, and a
			 * read of a few events each time cost more CPU per
			 * event than the decoding (contrib/bench/cost.sh).
			 */
			bool partial = before - last[cpu] >= PARTIAL_EVERY_NS;
			/* mapped rings are the decoding thread's to read */
			int n = mapped ? 0 : ift_ring_drain(r->ring, cpu, IFT_RINGQ_PAGES_PER_ROUND, partial,
							    &sink);

			if (n < 0) {
				ret = n;
				break;
			}
			pages += n;
			if (n > 0 || partial)
				last[cpu] = before;
			/* empty at BEFORE: nothing older than that can still come */
			if (!mapped && n == 0 && partial && r->idle_notes &&
			    before > IFT_RINGQ_IDLE_MARGIN_NS)
				ret = q_idle(r, 0, cpu, before - IFT_RINGQ_IDLE_MARGIN_NS);
			if (r->iso && ret >= 0 && cpu < ift_perfring_ncpus(r->iso)) {
				n = perf_round(r, &pk, cpu, &plast[cpu], n > 0);
				if (n < 0) {
					ret = n;
					break;
				}
				pages += n > 0;
			}
		}
		if (ret < 0)
			break;
		if (!pages) {
			reader_idle(r, pf, hup);
			continue;
		}
		/* one wake-up a round, not a page: the taker takes them all */
		pthread_mutex_lock(&r->mu);
		pthread_cond_signal(&r->more);
		pthread_mutex_unlock(&r->mu);
	}
out:
	free(last);
	free(plast);
	free(pf);
	free(hup);
	pthread_mutex_lock(&r->mu);
	if (ret < 0 && !r->err)
		r->err = ret;
	pthread_cond_signal(&r->more);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int ift_ringq_start(struct ift_ring *ring, struct ift_perfring *iso, bool idle_notes,
		     struct ift_ringq **out)
{
	struct ift_ringq *r = calloc(1, sizeof(*r));
	sigset_t all, old;
	int ret;

	*out = r;
	if (!r)
		return -ENOMEM;
	r->ring = ring;
	r->iso = iso;
	r->idle_notes = idle_notes;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->more, NULL);
	/* mapped rings and no perf rings: nothing for it to read */
	if (ift_ring_mapped(ring) && !iso)
		return 0;
	/* signals are the caller's: it stops the run */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&r->th, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	r->running = true;
	return 0;
}

bool ift_ringq_running(const struct ift_ringq *r)
{
	return r && r->running;
}

void ift_ringq_stop(struct ift_ringq *r)
{
	if (!r || !r->running)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->th, NULL);
	r->running = false;
}

uint64_t ift_ringq_peak_bytes(const struct ift_ringq *r)
{
	return r ? r->peak : 0;
}

/* The records pack_record() packed into a page, handed on one by one. */
static int take_perfrecs(const struct ift_ringq_sink *sink, const unsigned char *buf,
			 size_t len)
{
	size_t at = 0;
	int ret;

	while (len - at >= sizeof(struct perfrec)) {
		struct perfrec h;

		memcpy(&h, buf + at, sizeof(h));
		at += sizeof(h);
		if (h.size > len - at)
			return -IFT_E_CORRUPT;
		ret = sink->record(sink->ctx, h.cpu, h.ts, buf + at, h.size);
		if (ret < 0)
			return ret;
		at += (h.size + 7) & ~7U;
	}
	return 0;
}

/* Takes the whole queue, waiting up to TIMEOUT_MS when it is empty; *ERR
   gets the thread's error. */
static struct qpage *take_all(struct ift_ringq *r, int timeout_ms, int *err)
{
	struct qpage *list;

	pthread_mutex_lock(&r->mu);
	if (!r->head && !r->err && r->running && timeout_ms > 0) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)timeout_ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&r->more, &r->mu, &until);
	}
	list = r->head;
	r->head = r->tail = NULL;
	r->bytes = 0;
	*err = r->err;
	pthread_mutex_unlock(&r->mu);
	return list;
}

/* Gives back the pages of USED, a few for the thread to fill again. */
static void give_back(struct ift_ringq *r, struct qpage *used)
{
	struct qpage *p;

	pthread_mutex_lock(&r->mu);
	while (used && r->nspare < SPARE_PAGES) {
		p = used;
		used = p->next;
		p->next = r->spare;
		r->spare = p;
		r->nspare++;
	}
	pthread_mutex_unlock(&r->mu);
	while ((p = used)) {
		used = p->next;
		free(p);
	}
}

int ift_ringq_take(struct ift_ringq *r, int timeout_ms, const struct ift_ringq_sink *sink,
		    int *pages)
{
	struct qpage *list, *p, *used = NULL;
	int ret;

	*pages = 0;
	list = take_all(r, timeout_ms, &ret);
	if (ret >= 0 && sink->taken)
		ret = sink->taken(sink->ctx);
	while ((p = list)) {
		list = p->next;
		if (ret >= 0) {
			if (p->len < 0) {
				sink->idle(sink->ctx, p->source, p->cpu, p->idle_ts);
			} else if (p->source) {
				ret = take_perfrecs(sink, p->data, (size_t)p->len);
				(*pages)++;
			} else {
				ret = sink->page(sink->ctx, p->cpu, p->data, p->len);
				(*pages)++;
			}
		}
		if (p->len >= 0 && p->len <= ift_ring_page_size(r->ring)) {
			p->next = used;
			used = p;
		} else {
			free(p);
		}
	}
	if (used)
		give_back(r, used);
	return ret;
}

void ift_ringq_free(struct ift_ringq *r)
{
	struct qpage *p;

	if (!r)
		return;
	ift_ringq_stop(r);
	while ((p = r->head)) {
		r->head = p->next;
		free(p);
	}
	while ((p = r->spare)) {
		r->spare = p->next;
		free(p);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->more);
	free(r);
}
