// SPDX-License-Identifier: MIT
/*
 * Per-CPU ring-buffer readers.  A blocking read() of trace_pipe_raw returns
 * one page per call and a naive reader falls behind (it kept 0.6% of 4M
 * events here); splice() moves many pages per call and kept up to ~4.5M
 * events/s.  tracefs_cpu_buffered_read() splices into a pipe and hands us one
 * page at a time from it.  Mapped, the kernel's own sub-buffers are read:
 * Documentation/trace/ring-buffer-map.rst.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <tracefs.h>
#include <unistd.h>

#include "ift-ring.h"

/*
 * The meta page of a mapped ring: include/uapi/linux/trace_mmap.h of Linux
 * 6.10, which the C library's headers of older systems do not have.  The
 * kernel may make it longer (meta_struct_len), never different.
 */
struct trace_buffer_meta {
	uint32_t meta_page_size;
	uint32_t meta_struct_len;
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	struct {
		uint64_t lost_events;
		uint32_t id;
		uint32_t read;
	} reader;
	uint64_t flags;
	uint64_t entries;
	uint64_t overrun;
	uint64_t read;
	uint64_t reserved1;
	uint64_t reserved2;
};

#define TRACE_MMAP_IOCTL_GET_READER	_IO('R', 0x20)

/* A sub-buffer: u64 timestamp, then the commit, whose low 27 bits are the
   bytes of data that follow (events/header_page) */
#define PAGE_HDR	16
#define COMMIT_SIZE	((1U << 27) - 1)

/*
 * One CPU's mapped ring.  The reader sub-buffer (meta->reader.id) is ours
 * until the next GET_READER: the kernel writes into it only while it is
 * also the page being filled, and then only past its commit.  READ is how
 * far into its data we parsed; the kernel's own reader.read is of no use
 * here, as GET_READER counts the whole page read when it hands it out.
 */
struct mcpu {
	int fd;
	volatile struct trace_buffer_meta *meta;
	size_t meta_len;
	unsigned char *data;
	size_t data_len;
	uint32_t subbuf_size, nr_subbufs;
	uint32_t id;
	int read;
};

struct ift_ring {
	struct tracefs_instance *inst;
	int ncpus;
	int page_size;
	struct tracefs_cpu **tcpu;	/* NULL for a CPU we could not open */
	struct mcpu *map;		/* mapped: one per CPU, fd -1 if offline */
	void *page;
};

static int count_cpus(struct tracefs_instance *inst)
{
	char path[64];
	int n = 0;

	/* per_cpu/cpuN exists for every possible CPU the buffer has */
	for (;;) {
		char *p;
		int ok;

		snprintf(path, sizeof(path), "per_cpu/cpu%d", n);
		p = tracefs_instance_get_file(inst, path);
		if (!p)
			return -ENOMEM;
		ok = access(p, F_OK) == 0;
		tracefs_put_tracing_file(p);
		if (!ok)
			return n;
		n++;
	}
}

static void unmap_cpu(struct mcpu *m)
{
	if (m->data)
		munmap(m->data, m->data_len);
	if (m->meta)
		munmap((void *)m->meta, m->meta_len);
	if (m->fd >= 0)
		close(m->fd);
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}

/*
 * Maps CPU's ring: the meta page, then every sub-buffer.  0, -ENOENT for
 * an offline CPU, or the error of a kernel that does not map its rings
 * (before 6.10: ENODEV from mmap).  Not inherited by a fork: a helper that
 * outlives us must not keep the instance busy.
 */
static int map_cpu(struct tracefs_instance *inst, int cpu, struct mcpu *m)
{
	long psize = sysconf(_SC_PAGESIZE);
	char path[64], *file;
	void *p;
	int err;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	if (!(file = tracefs_instance_get_file(inst, path)))
		return -ENOMEM;
	m->fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	err = errno;
	tracefs_put_tracing_file(file);
	if (m->fd < 0)
		return err == ENOENT || err == ENODEV ? -ENOENT : -err;
	p = mmap(NULL, (size_t)psize, PROT_READ, MAP_SHARED, m->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	m->meta = p;
	m->meta_len = (size_t)psize;
	if (m->meta->meta_struct_len < offsetof(struct trace_buffer_meta, flags) ||
	    m->meta->meta_page_size < (uint32_t)psize || !m->meta->subbuf_size ||
	    !m->meta->nr_subbufs) {
		errno = EPROTO;
		goto fail;
	}
	if (m->meta->meta_page_size > (uint32_t)psize) {
		size_t len = m->meta->meta_page_size;

		munmap(p, m->meta_len);
		m->meta = NULL;
		if ((p = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, 0)) == MAP_FAILED)
			goto fail;
		m->meta = p;
		m->meta_len = len;
	}
	m->subbuf_size = m->meta->subbuf_size;
	m->nr_subbufs = m->meta->nr_subbufs;
	m->data_len = (size_t)m->subbuf_size * m->nr_subbufs;
	p = mmap(NULL, m->data_len, PROT_READ, MAP_SHARED, m->fd, (off_t)m->meta_len);
	if (p == MAP_FAILED)
		goto fail;
	m->data = p;
	if (madvise((void *)m->meta, m->meta_len, MADV_DONTFORK) < 0 ||
	    madvise(m->data, m->data_len, MADV_DONTFORK) < 0)
		goto fail;
	m->id = m->meta->reader.id;
	m->read = (int)m->meta->reader.read;
	return 0;
fail:
	err = errno;
	unmap_cpu(m);
	return -err;
}

/* Maps every CPU's ring, or none: 0 when all are, else a negative error. */
static int map_all(struct ift_ring *r)
{
	int mapped = 0, ret = 0;

	if (!(r->map = calloc((size_t)r->ncpus, sizeof(*r->map))))
		return -ENOMEM;
	for (int cpu = 0; cpu < r->ncpus; cpu++)
		r->map[cpu].fd = -1;
	for (int cpu = 0; cpu < r->ncpus && ret >= 0; cpu++) {
		ret = map_cpu(r->inst, cpu, &r->map[cpu]);
		if (ret == -ENOENT)
			ret = 0;	/* an offline CPU */
		else if (ret == 0)
			mapped++;
	}
	if (ret >= 0 && !mapped)
		ret = -ENODEV;
	if (ret >= 0)
		r->page_size = (int)r->map[0].subbuf_size;
	for (int cpu = 0; ret >= 0 && cpu < r->ncpus; cpu++)
		if (r->map[cpu].fd >= 0 && (int)r->map[cpu].subbuf_size != r->page_size)
			ret = -EPROTO;
	if (ret < 0) {
		for (int cpu = 0; cpu < r->ncpus; cpu++)
			unmap_cpu(&r->map[cpu]);
		free(r->map);
		r->map = NULL;
	}
	return ret;
}

int ift_ring_open(struct tracefs_instance *inst, bool map, struct ift_ring **out)
{
	struct ift_ring *r;
	int n, opened = 0;

	*out = NULL;
	n = count_cpus(inst);
	if (n <= 0)
		return n < 0 ? n : -ENODEV;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->inst = inst;
	r->ncpus = n;
	r->tcpu = calloc((size_t)n, sizeof(*r->tcpu));
	if (!r->tcpu) {
		free(r);
		return -ENOMEM;
	}
	/*
	 * A kernel that cannot map its rings, or a CPU's that fails: spliced.
	 * Mapped, the pages are read as a 64-bit kernel lays them out (an
	 * 8-byte commit): a 32-bit process may be on a 32-bit kernel.
	 */
	if (map && sizeof(void *) == 8 && map_all(r) == 0) {
		*out = r;
		return 0;
	}
	for (int cpu = 0; cpu < n; cpu++) {
		r->tcpu[cpu] = tracefs_cpu_open(inst, cpu, true);
		if (!r->tcpu[cpu])
			continue;	/* an offline CPU */
		opened++;
		if (!r->page_size)
			r->page_size = tracefs_cpu_read_size(r->tcpu[cpu]);
	}
	if (!opened || r->page_size <= 0) {
		ift_ring_close(r);
		return -ENODEV;
	}
	r->page = malloc((size_t)r->page_size);
	if (!r->page) {
		ift_ring_close(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

int ift_ring_ncpus(const struct ift_ring *r)
{
	return r->ncpus;
}

int ift_ring_page_size(const struct ift_ring *r)
{
	return r->page_size;
}

bool ift_ring_mapped(const struct ift_ring *r)
{
	return r->map != NULL;
}

uint64_t ift_ring_cpu_bytes(const struct ift_ring *r)
{
	for (int cpu = 0; r->map && cpu < r->ncpus; cpu++)
		if (r->map[cpu].fd >= 0)
			return (uint64_t)r->map[cpu].nr_subbufs * (r->map[cpu].subbuf_size - PAGE_HDR);
	return 0;
}

int ift_ring_read_mapped(struct ift_ring *r, int cpu, int max_pages, ift_span_fn fn, void *ctx,
			 uint64_t *bytes)
{
	struct mcpu *m;
	int calls = 0, asked = 0;

	if (!r->map || cpu < 0 || cpu >= r->ncpus)
		return -EINVAL;
	m = &r->map[cpu];
	if (m->fd < 0)
		return 0;
	while (calls < max_pages) {
		uint32_t id = m->meta->reader.id;
		const unsigned char *page;
		uint64_t commit;
		int n;

		if (id >= m->nr_subbufs)
			return -EPROTO;
		if (id != m->id) {
			/* a fresh page: the one before went back to the writer */
			m->id = id;
			m->read = 0;
		}
		page = m->data + (size_t)id * m->subbuf_size;
		memcpy(&commit, page + 8, sizeof(commit));
		if ((int)(commit & COMMIT_SIZE) > m->read) {
			n = fn(ctx, cpu, page, (int)m->subbuf_size, m->read);
			if (n < 0)
				return n;
			if (bytes)
				*bytes += (uint64_t)(n - m->read);
			m->read = n;
			calls++;
			asked = 0;
			continue;
		}
		/*
		 * All of it parsed: ask for the next.  A page the kernel has
		 * not counted read yet comes back once, counted read now (as
		 * far as it was committed); the second ask swaps in the next
		 * page.  Twice nothing new: the ring is empty.
		 */
		if (asked == 2)
			break;
		if (ioctl(m->fd, TRACE_MMAP_IOCTL_GET_READER) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		asked++;
	}
	return calls;
}

/*
 * One page of TC into a buffer of SINK: a full one (spliced) or, unless
 * FULL, the one being filled.  1, 0 when there was none, or an error.
 */
static int read_one(struct tracefs_cpu *tc, int cpu, bool full,
		    const struct ift_page_sink *sink)
{
	void *page = sink->buf(sink->ctx, cpu);
	int n, err, ret;

	if (!page)
		return -ENOMEM;
	n = full ? tracefs_cpu_buffered_read(tc, page, true) : tracefs_cpu_read(tc, page, true);
	err = n < 0 && errno != EAGAIN && errno != EINTR ? -errno : 0;
	ret = sink->page(sink->ctx, cpu, page, n > 0 ? n : 0);
	if (err || ret < 0)
		return err ? err : ret;
	return n > 0;
}

int ift_ring_drain(struct ift_ring *r, int cpu, int max_pages, bool partial,
		   const struct ift_page_sink *sink)
{
	struct tracefs_cpu *tc;
	int pages = 0, n = 0;

	if (cpu < 0 || cpu >= r->ncpus)
		return -EINVAL;
	tc = r->tcpu[cpu];
	if (!tc)
		return 0;
	while (pages < max_pages && (n = read_one(tc, cpu, true, sink)) > 0)
		pages++;
	if (n < 0)
		return n;
	if (pages || !partial)
		return pages;
	/* nothing full: take the page being filled, so quiet CPUs are not late */
	return read_one(tc, cpu, false, sink);
}


/* A page spliced or read whole: its events from the start. */
static int whole_page(ift_span_fn fn, void *ctx, int cpu, void *page, int len)
{
	int n = fn(ctx, cpu, page, len, 0);

	return n < 0 ? n : 0;
}

int ift_ring_flush(struct ift_ring *r, ift_span_fn fn, void *ctx)
{
	int total = 0;

	for (int cpu = 0; r->map && cpu < r->ncpus; cpu++) {
		/* read until GET_READER gives nothing more: the kernel then
		   counts every event read, and none is left over as unread */
		int n = ift_ring_read_mapped(r, cpu, 1 << 30, fn, ctx, NULL);

		if (n < 0)
			return n;
		total += n;
	}
	for (int cpu = 0; !r->map && cpu < r->ncpus; cpu++) {
		struct tracefs_cpu *tc = r->tcpu[cpu];
		int n, ret;

		if (!tc)
			continue;
		/* what is already spliced into the pipe, then the rest */
		while ((n = tracefs_cpu_buffered_read(tc, r->page, true)) > 0) {
			if ((ret = whole_page(fn, ctx, cpu, r->page, n)) < 0)
				return ret;
			total++;
		}
		while ((n = tracefs_cpu_flush(tc, r->page)) > 0) {
			if ((ret = whole_page(fn, ctx, cpu, r->page, n)) < 0)
				return ret;
			total++;
		}
	}
	return total;
}

int ift_ring_stats(struct ift_ring *r, int cpu, struct ift_loss *out)
{
	char path[64], *text, *line, *save = NULL;
	int len;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	text = tracefs_instance_file_read(r->inst, path, &len);
	if (!text)
		return errno ? -errno : -EIO;
	memset(out, 0, sizeof(*out));
	out->cpu = (uint32_t)cpu;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;

		if (sscanf(line, "overrun: %llu", &v) == 1)
			out->overrun = v;
		else if (sscanf(line, "commit overrun: %llu", &v) == 1)
			out->commit_overrun = v;
		else if (sscanf(line, "dropped events: %llu", &v) == 1)
			out->dropped = v;
		else if (sscanf(line, "read events: %llu", &v) == 1)
			out->read = v;
		else if (sscanf(line, "entries: %llu", &v) == 1)
			out->unread = v;
	}
	free(text);
	return 0;
}

void ift_ring_close(struct ift_ring *r)
{
	if (!r)
		return;
	for (int cpu = 0; cpu < r->ncpus; cpu++) {
		if (r->tcpu && r->tcpu[cpu])
			tracefs_cpu_close(r->tcpu[cpu]);
		if (r->map)
			unmap_cpu(&r->map[cpu]);
	}
	free(r->map);
	free(r->tcpu);
	free(r->page);
	free(r);
}
