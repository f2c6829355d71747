// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/ring/perfring.c, on the running kernel: the per-task
 * perf rings of --isolate.  syscalls/sys_enter_getppid opened on the
 * test's own thread; N getppid() calls come back as N records of that
 * tracepoint and thread, a ring too small for them wraps, or counts what
 * it drops.
 *
 * Needs root and tracefs: skipped without (failed where CI=true), and
 * where perf_event_open() is refused or missing.
 */
#include "ringfx.h"

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
		T(test_perf_setup),
		T(test_perf_records),
		T(test_perf_wraps),
		T(test_perf_lost),
		T(test_perf_settle),
		T(test_perf_fn_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
