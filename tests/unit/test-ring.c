// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/ring/'s tracefs readers, on the running kernel: the
 * per-CPU readers of a tracefs instance's ring buffers (ring.c, mapped and
 * spliced) and the thread that empties them into a queue (ringq.c).  The
 * perf rings of --isolate are test-perfring's.
 *
 * A private instance, ift_unit_ring_<pid>, with no event enabled and
 * the "mono" clock.  The test writes numbered lines into its trace_marker
 * from the one CPU it is pinned to and walks the pages the readers hand
 * over with a page walker of its own (the kernel's
 * Documentation/trace/ring-buffer-design.rst, include/linux/ring_buffer.h):
 * every line comes back exactly once, in order, from the test's thread,
 * stamped between the clock reads around its write.  Each test removes the
 * instance it made.
 *
 * Needs root and tracefs: skipped without (failed where CI=true).  Skipped
 * too: the mapped reader on a kernel that does not map its rings (before
 * 6.10) or under qemu-user (no ring ioctl).
 */
#include "ringfx.h"

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

/* ---- ringq: the thread that empties the rings ---------------------------- */

struct take {
	struct fx *fx;
	int calls, taken, pages, fail_at;
	uint64_t idle_ts;	/* the test CPU's latest idle note */
};

static int tk_page(void *ctx, int cpu, const void *page, int len)
{
	struct take *t = ctx;

	assert_int_equal(t->taken, t->calls);	/* TAKEN first, in every call */
	assert_int_equal(cpu, t->fx->cpu);	/* no other CPU writes a line */
	walk(t->fx, page, len, 0);
	return ++t->pages == t->fail_at ? -EPIPE : 0;
}

static int tk_record(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	(void)ctx, (void)cpu, (void)ts, (void)raw, (void)size;
	fail_msg("a perf record without perf rings");
	return -EINVAL;
}

/* Nothing older than an idle note can come after it. */
static void tk_idle(void *ctx, int source, int cpu, uint64_t ts)
{
	struct take *t = ctx;
	struct fx *fx = t->fx;

	assert_int_equal(source, 0);
	if (cpu != fx->cpu)
		return;
	assert_true(ts >= t->idle_ts);
	t->idle_ts = ts;
	if (fx->written && ts > fx->after[fx->written - 1] + SLACK)
		assert_int_equal(fx->next, fx->written);
}

static int tk_taken(void *ctx)
{
	((struct take *)ctx)->taken++;
	return 0;
}

/* Takes what Q queued until DONE(T) holds, 30 s at most; the last return. */
static int take_until(struct ift_ringq *q, struct take *t, bool (*done)(const struct take *))
{
	const struct ift_ringq_sink sink = { tk_page, tk_record, tk_idle, tk_taken, t };
	uint64_t until = now_ns() + 30000000000ULL;
	int pages, ret = 0;

	while (!done(t) && ret == 0) {
		if (now_ns() > until)
			fail_msg("30 s, and the queue gave %d of %d lines", t->fx->next,
				 t->fx->written);
		t->calls++;
		ret = ift_ringq_take(q, 100, &sink, &pages);
	}
	return ret;
}

static bool all_lines_then_idle(const struct take *t)
{
	return t->fx->next == t->fx->written &&
	       t->idle_ts > t->fx->after[t->fx->written - 1] + SLACK;
}

static bool never(const struct take *t)
{
	(void)t;
	return false;
}

/*
 * Spliced, the thread copies the test CPU's pages into the queue, full and
 * partly filled, and a take hands them on in order after TAKEN; an empty
 * ring is noted idle.  A sink's error stops the handing on and is
 * returned, and what is left is freed (ASan counts it).
 */
static void test_ringq(void **state)
{
	struct fx *fx = *state;
	struct take t = { fx };
	struct ift_ringq *q;

	ring_begin(fx, false);
	assert_int_equal(ift_ringq_start(fx->ring, NULL, true, &q), 0);
	assert_true(ift_ringq_running(q));
	mark(fx, lines(fx, 3));
	assert_int_equal(take_until(q, &t, all_lines_then_idle), 0);
	assert_true(t.pages >= 3);
	assert_true(ift_ringq_peak_bytes(q) >= (uint64_t)fx->page_size);
	ift_ringq_stop(q);
	assert_false(ift_ringq_running(q));
	all_read(fx);
	ift_ringq_free(q);

	assert_int_equal(ift_ringq_start(fx->ring, NULL, false, &q), 0);
	t.fail_at = t.pages + 1;
	mark(fx, lines(fx, 2));
	assert_int_equal(take_until(q, &t, never), -EPIPE);
	ift_ringq_free(q);
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
		T(test_ringq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
