// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/ring/, on the running kernel: the per-CPU readers of a
 * tracefs instance's ring buffers (ring.c, mapped and spliced) and the
 * per-task perf rings of --isolate (perfring.c).
 *
 * ring: a private instance, ift_unit_ring_<pid>, with no event enabled and
 * the "mono" clock.  The test writes numbered lines into its trace_marker
 * from the one CPU it is pinned to and walks the pages the readers hand
 * over with a page walker of its own (the kernel's
 * Documentation/trace/ring-buffer-design.rst, include/linux/ring_buffer.h):
 * every line comes back exactly once, in order, from the test's thread,
 * stamped between the clock reads around its write.  Each test removes the
 * instance it made.
 *
 * perfring: syscalls/sys_enter_getppid opened on the test's own thread; N
 * getppid() calls come back as N records of that tracepoint and thread, a
 * ring too small for them wraps, or counts what it drops.
 *
 * Both need root and tracefs: skipped without (failed where CI=true).
 * Skipped too: the mapped reader on a kernel that does not map its rings
 * (before 6.10) or under qemu-user (no ring ioctl), perfring where
 * perf_event_open() is refused or missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <tracefs.h>

#include "ift-perfring.h"
#include "ift-ring.h"
#include "slurp.h"

#define MAXM		16384	/* markers one test writes: 6 pages of 64 KiB */
#define MIN_LINE	32	/* bytes the shortest line takes in a page */
#define RING_PAGES	32	/* the pages of the instance's ring, per CPU */
#define SLACK		100000	/* ns a kernel stamp may trail a clock read before it */
#define PAGE_HDR	16	/* u64 timestamp, u64 commit */
#define COMMIT_MASK	((1U << 27) - 1)
#define EXTEND_GAP_US	150000	/* more than 2^27 ns: a TIME_EXTEND between */

struct fx;

/* One record as ift_perfring_read() handed it. */
struct prec {
	int cpu;
	uint64_t ts;
	uint32_t size;
	uint16_t type;
	int32_t pid, nr;
};

/* The records read in a test, kept in its fixture. */
struct precs {
	struct fx *fx;
	struct prec *v;
	int n, cap;
	int calls;
	int fail_at;		/* the call that returns -EBADMSG, 0: none */
};

struct fx {
	int cpu;			/* the one CPU the test runs on */
	cpu_set_t saved;		/* the affinity to restore */
	bool pinned;
	pid_t tid;
	/* ring */
	struct tracefs_instance *inst;
	struct ift_ring *ring;
	int marker;			/* the instance's trace_marker, -1: none */
	int print_id, buf_off;		/* ftrace/print: its id, where buf[] is */
	int page_size;			/* header_page: PAGE_HDR + its data */
	int written, next;		/* markers written; the one to be seen next */
	uint64_t before[MAXM], after[MAXM];	/* CLOCK_MONOTONIC around each write */
	uint64_t last_ts;
	uint64_t walked;		/* data bytes walked at or past FROM */
	int extends;			/* TIME_EXTEND entries walked */
	int calls;			/* span calls */
	int fail_at;			/* the span call that returns -EBADMSG, 0: none */
	/* perfring */
	struct ift_perfring *perf;
	int tp_id, nr_off;		/* sys_enter_getppid: its id, __syscall_nr */
	uint32_t raw_size;		/* its raw bytes in a sample, 0: not known yet */
	struct precs recs;
};

static bool in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

static void need(bool ok, const char *why)
{
	if (ok)
		return;
	if (in_ci())
		fail_msg("%s; CI must not skip tracing tests", why);
	fprintf(stderr, "skip: %s\n", why);
	skip();
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* NUM after KEY in TEXT ("ID: 5", "field:char buf[];\toffset:16;"), or -1. */
static int field_num(const char *text, const char *key, const char *num_key)
{
	const char *p = text ? strstr(text, key) : NULL;

	if (!p)
		return -1;
	p = strstr(p + strlen(key), num_key);
	return p ? atoi(p + strlen(num_key)) : -1;
}

/* The text of tracefs file REL (events/...), or NULL. */
static char *tracing_text(const char *rel)
{
	char *path = tracefs_get_tracing_file(rel), *text;

	if (!path)
		return NULL;
	text = slurp(path);
	tracefs_put_tracing_file(path);
	return text;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->marker = -1;
	fx->tid = (pid_t)syscall(SYS_gettid);
	fx->recs.fx = fx;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	int ret = 0;

	/* the readers first: an instance whose rings are open cannot go */
	ift_ring_close(fx->ring);
	ift_perfring_free(fx->perf);
	free(fx->recs.v);
	if (fx->marker >= 0)
		close(fx->marker);
	/* tracefs is left as it was: the instance must go */
	if (fx->inst) {
		ret = tracefs_instance_destroy(fx->inst);
		tracefs_instance_free(fx->inst);
	}
	if (fx->pinned)
		sched_setaffinity(0, sizeof(fx->saved), &fx->saved);
	free(fx);
	return ret;
}

/* Runs the test on the CPU it is on now, and only there. */
static void pin(struct fx *fx)
{
	cpu_set_t one;

	assert_int_equal(sched_getaffinity(0, sizeof(fx->saved), &fx->saved), 0);
	fx->cpu = sched_getcpu();
	assert_true(fx->cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(fx->cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	fx->pinned = true;
}

/* ---- ring: a private instance, and its pages walked ---------------------- */

/*
 * Makes the instance (mono clock, RING_PAGES pages a CPU, nothing enabled)
 * and pins the test to a CPU; skips without root or tracefs.
 */
static void instance(struct fx *fx)
{
	char name[64], kb[16], *text, *path;

	need(!geteuid() && tracefs_tracing_dir(), "needs root and tracefs");
	text = tracing_text("events/ftrace/print/format");
	fx->print_id = field_num(text, "ID:", " ");
	fx->buf_off = field_num(text, "field:char buf[];", "offset:");
	free(text);
	text = tracing_text("events/header_page");
	fx->page_size = field_num(text, "field: char data;", "offset:") +
			field_num(text, "field: char data;", "size:");
	free(text);
	assert_true(fx->print_id > 0 && fx->buf_off > 0 && fx->page_size > PAGE_HDR);
	snprintf(kb, sizeof(kb), "%d", RING_PAGES * fx->page_size / 1024);
	snprintf(name, sizeof(name), "ift_unit_ring_%d", (int)getpid());
	fx->inst = tracefs_instance_create(name);
	need(fx->inst != NULL, "cannot make a tracefs instance");
	assert_true(tracefs_instance_file_write(fx->inst, "trace_clock", "mono") > 0);
	assert_true(tracefs_instance_file_write(fx->inst, "buffer_size_kb", kb) > 0);
	path = tracefs_instance_get_file(fx->inst, "trace_marker");
	assert_non_null(path);
	fx->marker = open(path, O_WRONLY | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	assert_true(fx->marker >= 0);
	pin(fx);
}

/* The instance, read mapped if MAP. */
static void ring_begin(struct fx *fx, bool map)
{
	instance(fx);
	assert_int_equal(ift_ring_open(fx->inst, map, &fx->ring), 0);
	assert_non_null(fx->ring);
}

/* Writes N more numbered lines into the instance, each between two clock reads. */
static void mark(struct fx *fx, int n)
{
	for (int i = 0; i < n; i++) {
		char line[32];
		int k = fx->written, len;

		assert_true(k < MAXM);
		len = snprintf(line, sizeof(line), "ift-ring %d\n", k);
		fx->before[k] = now_ns();
		assert_int_equal(write(fx->marker, line, (size_t)len), len);
		fx->after[k] = now_ns();
		fx->written++;
	}
}

/* Lines enough to fill PAGES pages: each takes MIN_LINE bytes or more. */
static int lines(const struct fx *fx, int pages)
{
	return pages * (fx->page_size - PAGE_HDR) / MIN_LINE + 1;
}

/* One data event (EV, LEN bytes) at stamp TS: it must be line fx->next. */
static void check_marker(struct fx *fx, uint64_t ts, const uint8_t *ev, uint32_t len)
{
	const char *buf = (const char *)ev + fx->buf_off;
	int k = fx->next;
	char want[32];

	if (k >= fx->written)
		fail_msg("an event past the %d lines written", fx->written);
	assert_true(len > (uint32_t)fx->buf_off);
	assert_int_equal(get16(ev), fx->print_id);
	assert_int_equal((int32_t)get32(ev + 4), fx->tid);
	snprintf(want, sizeof(want), "ift-ring %d\n", k);
	if (strnlen(buf, len - fx->buf_off) == len - fx->buf_off || strcmp(buf, want))
		fail_msg("event %d: \"%.*s\", want \"%s\"", k, (int)(len - fx->buf_off), buf, want);
	if (ts + SLACK < fx->before[k] || ts > fx->after[k] + SLACK || ts < fx->last_ts)
		fail_msg("line %d stamped %" PRIu64 ", written in [%" PRIu64 ", %" PRIu64
			 "], after %" PRIu64, k, ts, fx->before[k], fx->after[k], fx->last_ts);
	fx->last_ts = ts;
	fx->next++;
}

/*
 * Walks PAGE (LEN bytes readable) from its first event, adding up the time
 * deltas, and checks the data events that start FROM bytes or more into
 * its data, which must be where an event starts (or its end).  Every entry
 * lies inside the committed data.  Returns the committed data bytes.
 */
static int walk(struct fx *fx, const uint8_t *page, int len, int from)
{
	const uint8_t *d = page + PAGE_HDR;
	uint64_t ts = get64(page), commit = get64(page + 8) & COMMIT_MASK;
	uint32_t off = 0;
	bool edge = false;

	assert_true(len > PAGE_HDR && len <= fx->page_size);
	assert_true(commit <= (uint64_t)len - PAGE_HDR);
	assert_true(from >= 0 && (uint64_t)from <= commit);
	while (off < commit) {
		uint32_t h, type_len, delta;
		uint64_t size;
		const uint8_t *ev = NULL;

		edge |= off == (uint32_t)from;
		assert_true(off + 4 <= commit);
		h = get32(d + off);
		type_len = h & 31;
		delta = h >> 5;
		if (type_len >= 29 || type_len == 0)
			assert_true(off + 8 <= commit);
		switch (type_len) {
		case 29:	/* padding: to the end, or a discarded event */
			size = delta ? 4 + (uint64_t)get32(d + off + 4) : commit - off;
			ts += delta;
			break;
		case 30:	/* time extend: the delta's upper bits */
			ts += ((uint64_t)get32(d + off + 4) << 27) + delta;
			fx->extends += off >= (uint32_t)from;
			size = 8;
			break;
		case 31:	/* absolute stamp */
			ts = ((uint64_t)get32(d + off + 4) << 27) | delta;
			size = 8;
			break;
		case 0:		/* data, its length (itself included) next */
			size = 4 + (uint64_t)get32(d + off + 4);
			assert_true(size >= 8);
			ev = d + off + 8;
			ts += delta;
			break;
		default:	/* data of type_len words */
			size = 4 + 4 * type_len;
			ev = d + off + 4;
			ts += delta;
			break;
		}
		assert_true(size >= 4 && off + size <= commit);
		if (ev && off >= (uint32_t)from)
			check_marker(fx, ts, ev, size - (uint32_t)(ev - (d + off)));
		off += (uint32_t)size;
	}
	edge |= off == (uint32_t)from;
	assert_true(edge);
	fx->walked += commit - (uint64_t)from;
	return (int)commit;
}

/* ift_span_fn: the pages of the test's CPU only, each a whole sub-buffer. */
static int on_span(void *ctx, int cpu, const void *page, int len, int from)
{
	struct fx *fx = ctx;

	assert_int_equal(cpu, fx->cpu);
	if (++fx->calls == fx->fail_at)
		return -EBADMSG;
	return walk(fx, page, len, from);
}

/* Every line written was seen; the kernel holds none of them unread. */
static void all_read(struct fx *fx)
{
	struct ift_loss l;

	assert_int_equal(fx->next, fx->written);
	assert_int_equal(ift_ring_stats(fx->ring, fx->cpu, &l), 0);
	assert_int_equal(l.cpu, fx->cpu);
	assert_int_equal(l.unread, 0);
	assert_int_equal(l.read, fx->written);
	assert_int_equal(l.overrun + l.dropped + l.commit_overrun, 0);
}

/*
 * Whether the rings can be read in place here: the kernel maps
 * trace_pipe_raw (6.10) and the process is 64-bit.  If so, the sizes its
 * meta page gives.
 */
static bool kernel_maps(struct fx *fx, uint32_t *subbuf, uint32_t *nr)
{
	char *path = tracefs_instance_get_file(fx->inst, "per_cpu/cpu0/trace_pipe_raw");
	long psize = sysconf(_SC_PAGESIZE);
	uint32_t *meta;
	int fd;

	assert_non_null(path);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	tracefs_put_tracing_file(path);
	assert_true(fd >= 0);
	meta = mmap(NULL, (size_t)psize, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (meta == MAP_FAILED)
		return false;
	/* meta_page_size, meta_struct_len, subbuf_size, nr_subbufs */
	*subbuf = meta[2];
	*nr = meta[3];
	munmap(meta, (size_t)psize);
	return sizeof(void *) == 8;
}

/*
 * Opens the instance's rings mapped, or skips where the kernel does not
 * map them (then the reader must have fallen back to splicing).
 */
static void mapped_begin(struct fx *fx)
{
	uint32_t subbuf = 0, nr = 0;
	bool maps;

	instance(fx);
	maps = kernel_maps(fx, &subbuf, &nr);
	assert_int_equal(ift_ring_open(fx->inst, true, &fx->ring), 0);
	assert_int_equal(ift_ring_mapped(fx->ring), maps);
	if (!maps) {
		fprintf(stderr, "skip: the kernel does not map its rings\n");
		skip();
	}
	assert_int_equal(ift_ring_page_size(fx->ring), fx->page_size);
	assert_int_equal(subbuf, (uint32_t)fx->page_size);
	assert_true(nr > 1);
	assert_int_equal(ift_ring_cpu_bytes(fx->ring), (uint64_t)nr * (subbuf - PAGE_HDR));
	/* the ring holds at least the pages asked for */
	assert_true(ift_ring_cpu_bytes(fx->ring) >= RING_PAGES * (uint64_t)(subbuf - PAGE_HDR));
}

/*
 * ift_ring_read_mapped() of CPU.  Under qemu-user the ring's ioctl is not
 * passed on: nothing to test there.
 */
static int read_cpu(struct fx *fx, int cpu, int max_pages, uint64_t *bytes)
{
	int n = ift_ring_read_mapped(fx->ring, cpu, max_pages, on_span, fx, bytes);
	const char *emu = getenv("IFT_TEST_EMULATOR");

	if ((n == -ENOTTY || n == -ENOSYS) && emu && *emu) {
		fprintf(stderr, "skip: under %s, no TRACE_MMAP_IOCTL_GET_READER\n", emu);
		skip();
	}
	return n;
}

static int read_mapped(struct fx *fx, int max_pages, uint64_t *bytes)
{
	return read_cpu(fx, fx->cpu, max_pages, bytes);
}

/* ---- ring: mapped ---------------------------------------------------------- */

/*
 * An empty ring reads as nothing; a page read in parts (the kernel going on
 * filling it) is handed again from where the last call stopped, and only
 * the new events are parsed; *BYTES adds up to what was parsed.
 */
static void test_mapped_in_parts(void **state)
{
	struct fx *fx = *state;
	uint64_t bytes = 0;
	int n;

	mapped_begin(fx);
	assert_true(ift_ring_ncpus(fx->ring) > fx->cpu);
	for (int cpu = 0; cpu < ift_ring_ncpus(fx->ring); cpu++)
		assert_int_equal(read_cpu(fx, cpu, 8, &bytes), 0);
	assert_int_equal(fx->calls, 0);
	assert_int_equal(bytes, 0);
	/* two lines 150 ms apart: a time extend between them */
	mark(fx, 1);
	usleep(EXTEND_GAP_US);
	mark(fx, 4);
	n = read_mapped(fx, 64, &bytes);
	assert_true(n >= 1 && n < 64);
	assert_int_equal(fx->next, 5);
	assert_true(fx->extends >= 1);
	assert_int_equal(bytes, fx->walked);
	/* three more onto the same page: only they are new */
	mark(fx, 3);
	fx->calls = 0;
	n = read_mapped(fx, 64, &bytes);
	assert_true(n >= 1 && n < 64);
	assert_int_equal(fx->next, 8);
	assert_int_equal(bytes, fx->walked);
	/*
	 * The page read in parts filled up and the kernel went on to more:
	 * one call reads them all, asking past the page it handed out before
	 */
	mark(fx, lines(fx, 3));
	n = read_mapped(fx, 64, &bytes);
	assert_true(n >= 3 && n < 64);
	assert_int_equal(fx->next, fx->written);
	assert_int_equal(bytes, fx->walked);
	/* read to its end: nothing is left */
	assert_int_equal(read_mapped(fx, 64, &bytes), 0);
	assert_int_equal(ift_ring_read_mapped(fx->ring, -1, 1, on_span, fx, NULL), -EINVAL);
	assert_int_equal(ift_ring_read_mapped(fx->ring, ift_ring_ncpus(fx->ring), 1, on_span, fx,
					      NULL), -EINVAL);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 0);
	all_read(fx);
}

/*
 * Many pages: each call with MAX_PAGES 1 parses one and says so, MAX_PAGES
 * calls are made while there is more, and a span's error stops the read
 * and is returned, its page parsed again the next time.
 */
static void test_mapped_pages(void **state)
{
	struct fx *fx = *state;
	uint64_t bytes = 0;
	int n, calls = 0, want;

	mapped_begin(fx);
	want = lines(fx, 4);
	mark(fx, want);
	assert_int_equal(read_mapped(fx, 2, &bytes), 2);
	fx->fail_at = fx->calls + 1;
	assert_int_equal(read_mapped(fx, 1, &bytes), -EBADMSG);
	fx->fail_at = 0;
	while ((n = read_mapped(fx, 1, &bytes)) == 1)
		calls++;
	assert_int_equal(n, 0);
	assert_true(calls >= 2);
	assert_int_equal(bytes, fx->walked);
	assert_int_equal(fx->next, want);
	assert_true(fx->walked >= 4 * (uint64_t)(fx->page_size - PAGE_HDR));
	all_read(fx);
}

/* What the ring holds when tracing stops is flushed, once. */
static void test_mapped_flush(void **state)
{
	struct fx *fx = *state;
	int n, want;

	mapped_begin(fx);
	want = 2 * lines(fx, 2);
	mark(fx, want / 2);
	assert_int_equal(read_mapped(fx, 1, NULL), 1);
	assert_true(fx->next > 0 && fx->next < want / 2);
	mark(fx, want / 2);
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	fx->calls = 0;
	/* the rest: 3 pages and more */
	n = ift_ring_flush(fx->ring, on_span, fx);
	assert_int_equal(n, fx->calls);
	assert_true(n >= 3);
	assert_int_equal(fx->next, want);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 0);
	all_read(fx);
}

/* ---- ring: spliced ------------------------------------------------------- */

/*
 * A sink that hands out a fresh buffer for each page and checks that every
 * one comes back exactly once, on the CPU asked for.
 */
#define SINK_OUT	8

struct sink {
	struct fx *fx;
	void *out[SINK_OUT];	/* the buffers given and not yet back */
	int given, back, filled;
	int fail_at;		/* the page() call that returns -EPIPE, 0: none */
	bool no_mem;
};

static void *sink_buf(void *ctx, int cpu)
{
	struct sink *s = ctx;

	int i = 0;

	assert_int_equal(cpu, s->fx->cpu);
	if (s->no_mem)
		return NULL;
	while (i < SINK_OUT && s->out[i])
		i++;
	assert_true(i < SINK_OUT);
	s->out[i] = malloc((size_t)s->fx->page_size);
	assert_non_null(s->out[i]);
	memset(s->out[i], 0xa5, (size_t)s->fx->page_size);
	s->given++;
	return s->out[i];
}

static int sink_page(void *ctx, int cpu, void *page, int len)
{
	struct sink *s = ctx;
	int i = 0;

	assert_int_equal(cpu, s->fx->cpu);
	assert_non_null(page);
	while (i < SINK_OUT && s->out[i] != page)
		i++;
	if (i == SINK_OUT)
		fail_msg("a page the sink did not give, or gave back twice");
	s->out[i] = NULL;
	s->back++;
	assert_true(len >= 0);
	if (len > 0) {
		walk(s->fx, page, len, 0);
		s->filled++;
	}
	free(page);
	return s->back == s->fail_at ? -EPIPE : 0;
}

static int drain(struct sink *s, int max_pages, bool partial)
{
	const struct ift_page_sink sk = { sink_buf, sink_page, s };

	return ift_ring_drain(s->fx->ring, s->fx->cpu, max_pages, partial, &sk);
}

/*
 * Spliced, only full pages are read, unless PARTIAL and there is none; the
 * page being filled is read then, and its lines are not read again.
 */
static void test_spliced_partial(void **state)
{
	struct fx *fx = *state;
	const struct ift_page_sink sk = { sink_buf, sink_page, NULL };
	struct sink s = { fx };

	ring_begin(fx, false);
	assert_false(ift_ring_mapped(fx->ring));
	assert_int_equal(ift_ring_page_size(fx->ring), fx->page_size);
	assert_int_equal(ift_ring_cpu_bytes(fx->ring), 0);
	assert_int_equal(ift_ring_read_mapped(fx->ring, fx->cpu, 1, on_span, fx, NULL), -EINVAL);
	assert_int_equal(ift_ring_drain(fx->ring, -1, 1, true, &sk), -EINVAL);
	assert_int_equal(ift_ring_drain(fx->ring, ift_ring_ncpus(fx->ring), 1, true, &sk),
			 -EINVAL);
	/* empty: the buffers given come back unused */
	assert_int_equal(drain(&s, 4, true), 0);
	assert_true(s.given >= 1);
	assert_int_equal(s.back, s.given);
	assert_int_equal(s.filled, 0);
	mark(fx, 1);
	usleep(EXTEND_GAP_US);
	mark(fx, 4);
	assert_int_equal(drain(&s, 4, false), 0);
	assert_int_equal(s.filled, 0);
	assert_int_equal(fx->next, 0);
	assert_int_equal(drain(&s, 4, true), 1);
	assert_int_equal(s.filled, 1);
	assert_int_equal(fx->next, 5);
	assert_true(fx->extends >= 1);
	mark(fx, 3);
	assert_int_equal(drain(&s, 4, true), 1);
	assert_int_equal(fx->next, 8);
	assert_int_equal(drain(&s, 4, true), 0);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 0);
	assert_int_equal(s.back, s.given);
	all_read(fx);
}

/*
 * Full pages, MAX_PAGES at a time; the sink's error and its want of memory
 * stop the read and are returned, every buffer back; the rest is flushed.
 */
static void test_spliced_pages(void **state)
{
	struct fx *fx = *state;
	struct sink s = { fx };
	int n, pages = 0, want;

	ring_begin(fx, false);
	want = lines(fx, 6);
	mark(fx, want);
	assert_int_equal(drain(&s, 2, false), 2);
	assert_int_equal(s.filled, 2);
	s.no_mem = true;
	assert_int_equal(drain(&s, 2, false), -ENOMEM);
	s.no_mem = false;
	s.fail_at = s.back + 1;
	assert_int_equal(drain(&s, 2, false), -EPIPE);
	assert_int_equal(s.back, s.given);
	s.fail_at = 0;
	while ((n = drain(&s, 1, false)) == 1)
		pages++;
	assert_int_equal(n, 0);
	assert_true(pages >= 2);
	assert_int_equal(s.back, s.given);
	assert_true(fx->next < want);
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 1);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 0);
	assert_int_equal(fx->next, want);
	all_read(fx);
}

/* The kernel's counters of each CPU: the lines unread on ours, none elsewhere. */
static void test_stats(void **state)
{
	struct fx *fx = *state;
	struct ift_loss l;

	ring_begin(fx, false);
	mark(fx, 50);
	for (int cpu = 0; cpu < ift_ring_ncpus(fx->ring); cpu++) {
		memset(&l, 0xff, sizeof(l));
		assert_int_equal(ift_ring_stats(fx->ring, cpu, &l), 0);
		assert_int_equal(l.cpu, cpu);
		assert_int_equal(l.unread, cpu == fx->cpu ? 50 : 0);
		assert_int_equal(l.read, 0);
		assert_int_equal(l.overrun + l.commit_overrun + l.dropped, 0);
	}
	assert_true(ift_ring_stats(fx->ring, 4096, &l) < 0);
	assert_int_equal(ift_ring_flush(fx->ring, on_span, fx), 1);
	all_read(fx);
}

/* ---- perfring: sys_enter_getppid on the test's own thread ---------------- */

/* ift_perfring_fn: keeps each record's fields, checked after the read. */
static int on_rec(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	struct precs *r = ctx;
	const uint8_t *b = raw;
	struct prec *p;

	if (++r->calls == r->fail_at)
		return -EBADMSG;
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 256;

		p = realloc(r->v, (size_t)cap * sizeof(*r->v));
		if (!p)
			return -ENOMEM;
		r->v = p;
		r->cap = cap;
	}
	p = &r->v[r->n++];
	memset(p, 0, sizeof(*p));
	p->cpu = cpu;
	p->ts = ts;
	p->size = size;
	if (size >= (uint32_t)r->fx->nr_off + 4) {
		p->type = get16(b);
		p->pid = (int32_t)get32(b + 4);
		p->nr = (int32_t)get32(b + r->fx->nr_off);
	}
	return 0;
}

/*
 * Records [FROM, FROM + N) of R, the last it holds: getppid() entries of
 * task TID on the test's CPU, in time order, stamped within [T0, T1] when
 * T1, of fx->raw_size bytes when known.
 */
static void check_recs(const struct precs *r, int from, int n, pid_t tid, uint64_t t0,
		       uint64_t t1)
{
	const struct fx *fx = r->fx;

	assert_int_equal(r->n, from + n);
	for (int i = from; i < from + n; i++) {
		const struct prec *p = &r->v[i];

		if (p->type != fx->tp_id || p->pid != tid || p->nr != SYS_getppid ||
		    p->cpu != fx->cpu)
			fail_msg("record %d: type %u pid %d nr %d cpu %d, want %d %d %d %d", i,
				 p->type, p->pid, p->nr, p->cpu, fx->tp_id, (int)tid,
				 (int)SYS_getppid, fx->cpu);
		if (fx->raw_size && p->size != fx->raw_size)
			fail_msg("record %d: %u raw bytes, want %u", i, p->size, fx->raw_size);
		if (t1 && (p->ts + SLACK < t0 || p->ts > t1 + SLACK))
			fail_msg("record %d stamped %" PRIu64 ", not in [%" PRIu64 ", %" PRIu64 "]",
				 i, p->ts, t0, t1);
		if (i > 0 && p->ts < r->v[i - 1].ts)
			fail_msg("record %d stamped before the one ahead of it", i);
	}
}

static void getppids(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* The records of every CPU's ring into R; their count. */
static int read_all(struct fx *fx, struct precs *r)
{
	int total = 0;

	for (int cpu = 0; cpu < ift_perfring_ncpus(fx->perf); cpu++) {
		int n = ift_perfring_read(fx->perf, cpu, on_rec, r);

		assert_true(n >= 0);
		total += n;
	}
	return total;
}

/* The tracepoint, or skip; the test pinned to its CPU. */
static void perf_begin(struct fx *fx)
{
	char *text;

	need(!geteuid() && tracefs_tracing_dir(), "needs root and tracefs");
	text = tracing_text("events/syscalls/sys_enter_getppid/format");
	if (!text) {
		/* a kernel without CONFIG_FTRACE_SYSCALLS */
		fprintf(stderr, "skip: no syscalls/sys_enter_getppid\n");
		skip();
	}
	fx->tp_id = field_num(text, "ID:", " ");
	fx->nr_off = field_num(text, "field:int __syscall_nr;", "offset:");
	free(text);
	assert_true(fx->tp_id > 0 && fx->nr_off >= 8);
	pin(fx);
}

/* Skips where perf_event_open() is refused, or missing (qemu-user). */
static void perf_skip(int ret)
{
	if (ret != -EACCES && ret != -ENOSYS)
		return;
	fprintf(stderr, "skip: perf_event_open: %s\n", strerror(-ret));
	skip();
}

/* Rings of KB KiB (0: the default) and the event on the test's thread, or skip. */
static void perf_open(struct fx *fx, unsigned kb, bool mono)
{
	const struct ift_perfring_opts o = { .ring_kb = kb, .mono = mono };
	int ret;

	perf_begin(fx);
	assert_int_equal(ift_perfring_alloc(&o, &fx->perf), 0);
	assert_int_equal(ift_perfring_add_event(fx->perf, fx->tp_id), 0);
	ret = ift_perfring_attach(fx->perf, fx->tid, 0);
	perf_skip(ret);
	assert_int_equal(ret, 0);
}

/*
 * The raw bytes of a sample whose record takes REC bytes of the ring: a
 * header, PERF_SAMPLE_TIME's u64, PERF_SAMPLE_RAW's u32 size, the bytes.
 */
static uint32_t raw_size(size_t rec)
{
	assert_true(rec > sizeof(struct perf_event_header) + 12);
	return (uint32_t)(rec - sizeof(struct perf_event_header) - 12);
}

/* The data area a ring of KB KiB gets: a power of 2 of pages. */
static size_t ring_bytes(unsigned kb)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = page;

	while (n < (size_t)kb * 1024)
		n *= 2;
	return n;
}

/* Allocation, events, a task gone and nothing to attach: nothing opened. */
static void test_perf_setup(void **state)
{
	struct fx *fx = *state;
	const struct ift_perfring_opts o = { 0 };
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;
	size_t size = 1;
	pid_t dead;
	int ret;

	perf_begin(fx);
	assert_int_equal(ift_perfring_alloc(&o, &fx->perf), 0);
	assert_int_equal(ift_perfring_ncpus(fx->perf), (int)sysconf(_SC_NPROCESSORS_CONF));
	assert_int_equal(ift_perfring_nevents(fx->perf), 0);
	assert_int_equal(ift_perfring_add_event(fx->perf, fx->tp_id), 0);
	assert_int_equal(ift_perfring_add_event(fx->perf, fx->tp_id), 1);
	assert_int_equal(ift_perfring_nevents(fx->perf), 2);
	/* nothing from index 2 on: nothing to open */
	assert_int_equal(ift_perfring_attach(fx->perf, fx->tid, 2), 0);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.tasks, 0);
	assert_int_equal(st.fds, 0);
	assert_int_equal(st.ring_bytes, 0);
	for (int cpu = 0; cpu < ift_perfring_ncpus(fx->perf); cpu++) {
		assert_int_equal(ift_perfring_fd(fx->perf, cpu), -1);
		assert_int_equal(ift_perfring_pending(fx->perf, cpu, &size), 0);
		assert_int_equal(size, 0);
		assert_int_equal(ift_perfring_read(fx->perf, cpu, on_rec, r), 0);
	}
	assert_int_equal(ift_perfring_fd(fx->perf, -1), -1);
	assert_int_equal(ift_perfring_read(fx->perf, -1, on_rec, r), -EINVAL);
	assert_int_equal(ift_perfring_read(fx->perf, ift_perfring_ncpus(fx->perf), on_rec, r),
			 -EINVAL);
	assert_int_equal(ift_perfring_pending(fx->perf, -1, &size), 0);
	assert_int_equal(r->calls, 0);
	/* a task that is gone */
	dead = fork();
	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	ret = ift_perfring_attach(fx->perf, dead, 0);
	perf_skip(ret);
	assert_int_equal(ret, -ESRCH);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.tasks, 0);
	assert_int_equal(st.fds, 0);
}

struct child {
	pid_t tid;
	int n;
};

static void *child_main(void *arg)
{
	struct child *c = arg;

	c->tid = (pid_t)syscall(SYS_gettid);
	getppids(c->n);
	return NULL;
}

/*
 * The records of N calls, stamped with CLOCK_MONOTONIC, in the ring of the
 * CPU they were made on; a thread the task starts later is followed.
 */
static void test_perf_records(void **state)
{
	struct fx *fx = *state;
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;
	struct child c = { 0, 25 };
	size_t pending, size;
	uint64_t t0, t1;
	pthread_t th;

	perf_open(fx, 16, true);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.tasks, 1);
	assert_int_equal(st.fds, sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(st.ring_bytes, ring_bytes(16));
	assert_true(ift_perfring_fd(fx->perf, fx->cpu) >= 0);
	t0 = now_ns();
	getppids(100);
	t1 = now_ns();
	pending = ift_perfring_pending(fx->perf, fx->cpu, &size);
	assert_int_equal(size, ring_bytes(16));
	/* a header, the time, the raw size and bytes, 8-aligned: at most 64 bytes each */
	assert_true(pending >= 100 * 24 && pending <= 100 * 64 && pending % 800 == 0);
	fx->raw_size = raw_size(pending / 100);
	assert_true(fx->raw_size >= (uint32_t)fx->nr_off + 4);
	assert_int_equal(read_all(fx, r), 100);
	assert_int_equal(ift_perfring_pending(fx->perf, fx->cpu, &size), 0);
	check_recs(r, 0, 100, fx->tid, t0, t1);
	assert_int_equal(pthread_create(&th, NULL, child_main, &c), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(read_all(fx, r), 25);
	check_recs(r, 100, 25, c.tid, t1, now_ns());
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, 125);
	assert_int_equal(st.lost, 0);
}

/*
 * A ring of one page read again and again: records wrap round its end,
 * some split across it, and each comes back whole.
 */
static void test_perf_wraps(void **state)
{
	struct fx *fx = *state;
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;
	size_t size, pending, rec, at = 0;
	int total = 0, per, split = 0;

	perf_open(fx, 4, false);
	getppids(10);
	pending = ift_perfring_pending(fx->perf, fx->cpu, &size);
	assert_int_equal(size, ring_bytes(4));
	rec = pending / 10;
	assert_int_equal(pending, rec * 10);
	fx->raw_size = raw_size(rec);
	/* a round fills half the ring: nothing is dropped */
	per = (int)(size / 2 / rec);
	getppids(per - 10);
	while (at < 4 * size) {
		assert_int_equal(ift_perfring_pending(fx->perf, fx->cpu, &size), per * rec);
		assert_int_equal(read_all(fx, r), per);
		for (int i = 0; i < per; i++, at += rec)
			split += at % size + rec > size;
		total += per;
		getppids(per);
	}
	assert_int_equal(read_all(fx, r), per);
	total += per;
	assert_true(split >= 1);
	check_recs(r, 0, total, fx->tid, 0, 0);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, total);
	assert_int_equal(st.lost, 0);
}

/*
 * A ring too small for the calls keeps what fits and drops the rest; the
 * kernel tells how many in front of the next record that fits.
 */
static void test_perf_lost(void **state)
{
	struct fx *fx = *state;
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;
	size_t size, pending;
	int calls, kept;

	perf_open(fx, 4, false);
	getppids(1);
	pending = ift_perfring_pending(fx->perf, fx->cpu, &size);
	calls = 2 * (int)(size / pending) + 100;
	getppids(calls - 1);
	/* as many as fit, no more */
	assert_true(ift_perfring_pending(fx->perf, fx->cpu, &size) <= size);
	kept = read_all(fx, r);
	assert_true(kept * pending <= size && (kept + 1) * pending > size);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, kept);
	assert_int_equal(st.lost, 0);
	/* the next one fits, told after the loss */
	getppids(1);
	assert_true(read_all(fx, r) >= 1);
	assert_int_equal(r->n, kept + 1);
	check_recs(r, 0, kept + 1, fx->tid, 0, 0);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, kept + 1);
	assert_int_equal(st.lost, calls - kept);
}

/*
 * Disabled, the event records nothing more; settled, what it dropped at
 * the end, never told of, is counted from its own count.
 */
static void test_perf_settle(void **state)
{
	struct fx *fx = *state;
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;
	size_t size, rec;
	int calls, kept;

	perf_open(fx, 4, false);
	getppids(1);
	rec = ift_perfring_pending(fx->perf, fx->cpu, &size);
	calls = 2 * (int)(size / rec) + 100;
	getppids(calls - 1);
	kept = read_all(fx, r);
	assert_true(kept > 0 && kept < calls);
	ift_perfring_disable(fx->perf);
	getppids(10);
	assert_int_equal(read_all(fx, r), 0);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.lost, 0);
	ift_perfring_settle(fx->perf);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, kept);
	assert_int_equal(st.lost, calls - kept);
	check_recs(r, 0, kept, fx->tid, 0, 0);
}

/*
 * FN's error stops the read and is returned; the record it refused is
 * handed again the next time, and counted once.
 */
static void test_perf_fn_error(void **state)
{
	struct fx *fx = *state;
	struct ift_perfring_stats st;
	struct precs *r = &fx->recs;

	perf_open(fx, 16, false);
	getppids(20);
	r->fail_at = 3;
	assert_int_equal(ift_perfring_read(fx->perf, fx->cpu, on_rec, r), -EBADMSG);
	assert_int_equal(r->n, 2);
	assert_int_equal(read_all(fx, r), 18);
	check_recs(r, 0, 20, fx->tid, 0, 0);
	ift_perfring_stats(fx->perf, &st);
	assert_int_equal(st.records, 20);
	assert_int_equal(st.lost, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mapped_in_parts),
		T(test_mapped_pages),
		T(test_mapped_flush),
		T(test_spliced_partial),
		T(test_spliced_pages),
		T(test_stats),
		T(test_perf_setup),
		T(test_perf_records),
		T(test_perf_wraps),
		T(test_perf_lost),
		T(test_perf_settle),
		T(test_perf_fn_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
