// SPDX-License-Identifier: MIT
/*
 * The decoder on crafted ring-buffer pages (ringfeed.h: event formats as
 * the kernel writes them, no tracefs needed): the sched and task events.
 *
 * test_task_table_grows: the task table is an array that grows by realloc
 * as new tids appear.  One record can meet two or three tasks (the running
 * one, prev and next of a switch, a wakee, a new child); when the table grows
 * for the second of them, a pointer to the first taken before must not be
 * used after.  Each case below puts the growth exactly there: under
 * AddressSanitizer a stale pointer is a heap-use-after-free; in a plain
 * build it showed as a name written to freed memory (the recorder's heap
 * corruption, a crash in malloc seconds later) and, here, as a name row
 * written twice.
 *
 * test_roots_have_parents: a root (the traced command, forked before the
 * trace; a -p process) is never seen starting, so no fork row names its
 * parent: the decoder takes it from /proc when the root is added, for its
 * threads too, and writes it on the rows that make the task known.  The truth
 * is what getppid() says and which process forked whom here.
 *
 * test_late_events_kept: a CPU's ring read empty lets the merge pass that
 * time; an event committed there later (its writer held off the CPU after it
 * reserved the slot: a preempted vCPU) is older than what was merged.  It is
 * kept, moved to the merge point and counted, and the recording goes on:
 * before, the writer refused it ("rows must be appended in time order") and
 * the whole recording was lost (record -a in a 5.10 guest under TCG).
 *
 * test_fields_through_the_queue: what a CPU's queue packs comes out as the
 * ring said it (full names, 64-bit values, negative ones); a name cut to 7
 * bytes or a value to 32 bits in the packing failed it.
 *
 * How uprobe entries and returns become rows of `calls' is
 * test-decode-calls.c's.
 */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <event-parse.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ift-decode.h"
#include "ift-trace.h"
#include "ringfeed.h"

#ifndef CLONE_THREAD	/* <sched.h> has it, through <pthread.h> */
#define CLONE_THREAD	0x00010000ULL
#endif

static void sched_waking(struct feed *f, int32_t waker, int32_t wakee,
			 const char *comm)
{
	uint8_t rec[36] = { 0 };
	int32_t prio = 120;

	common(rec, ID_WAKING, waker);
	strncpy((char *)rec + 8, comm, 16);
	memcpy(rec + 24, &wakee, 4);
	memcpy(rec + 28, &prio, 4);
	put(f, rec, sizeof(rec));
}

/* A decoder on TEP into F, writing a trace at PATH in a new temporary DIR. */
static struct ift_writer *decoder_open(char *dir, char *path, size_t len,
				       struct tep_handle *tep, struct feed *f)
{
	struct ift_decode_opts opts = { 0 };
	struct ift_writer *w;

	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/t.trace", dir);
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	opts.tep = tep;
	opts.w = w;
	assert_int_equal(ift_decoder_new(&opts, &f->d), 0);
	return w;
}

/* N tasks of their own, one name row each: a switch from a task to itself. */
static void fill(struct feed *f, int32_t *tid, int n, uint64_t *rows)
{
	for (int i = 0; i < n; i++, (*tid)++)
		sched_switch(f, *tid, "filler", *tid, "filler");
	*rows += (uint64_t)n;
}

static void test_task_table_grows(void **state)
{
	char dir[] = "/tmp/ift-test-decode.XXXXXX", path[64];
	struct tep_handle *tep = make_tep();
	const struct ift_decode_stats *st;
	struct feed f = { .ts = 1000000000 };
	struct ift_writer *w;
	uint64_t rows = 0;	/* tasks rows expected */
	int32_t tid = TID0;

	(void)state;
	w = decoder_open(dir, path, sizeof(path), tep, &f);

	/* the table holds 256 tasks: 255, then a switch whose prev is the
	   256th and whose next makes it grow */
	fill(&f, &tid, 255, &rows);
	sched_switch(&f, TID0 + 10000, "prev", TID0 + 10001, "next");
	rows += 2;
	/* prev was named by then: no second name row for it */
	sched_switch(&f, TID0 + 10000, "prev", TID0 + 10001, "next");

	/* 512: a waker unknown so far (the 512th) wakes a new task */
	fill(&f, &tid, 512 - 257 - 1, &rows);
	sched_waking(&f, TID0 + 20000, TID0 + 20001, "wakee");
	rows += 1;	/* the waker has no name anywhere: none for it */

	/* 1024: a new parent (the 1024th) starts a thread */
	fill(&f, &tid, 1024 - 513 - 1, &rows);
	task_newtask(&f, TID0 + 30000, TID0 + 30001, "child", CLONE_THREAD);
	rows += 1;
	flush_page(&f);

	assert_int_equal(ift_decoder_finish(f.d, f.ts + 1000), 0);
	st = ift_decoder_stats(f.d);
	assert_int_equal(st->unknown, 0);
	assert_int_equal(st->rows[IFT_T_SWITCHES], 255 + 2 + 254 + 510);
	assert_int_equal(st->rows[IFT_T_WAKEUPS], 1);
	assert_int_equal(st->rows[IFT_T_TASKS], rows);
	assert_int_equal(ift_writer_finish(w), 0);

	ift_decoder_free(f.d);
	ift_writer_free(w);
	tep_free(tep);
	unlink(path);
	rmdir(dir);
}

/*
 * test_fields_through_the_queue: a record waits in its CPU's queue packed
 * (decode.c, queue_put()); what comes out is what the ring said: names of
 * the kernel's full 15 bytes, a prev_state of 64 bits, negative values.
 */
static void test_fields_through_the_queue(void **state)
{
	char dir[] = "/tmp/ift-test-decode.XXXXXX", path[64];
	static const char a15[] = "pt_data_worker7", b15[] = "a-15-byte-name!";
	struct tep_handle *tep = make_tep();
	struct feed f = { .ts = 1000000000 };
	uint8_t rec[64] = { 0 };
	int64_t state64 = (int64_t)0x8000000000000402ULL, prio = -5;
	int32_t prio32 = (int32_t)prio, cpu = -1;
	struct ift_writer *w;
	struct ift_cursor *cur;
	struct ift_trace *t;
	struct ift_event ev;
	uint64_t ts_switch, ts_wake;
	int n = 0, ret;

	(void)state;
	w = decoder_open(dir, path, sizeof(path), tep, &f);

	common(rec, ID_SWITCH, TID0);
	memcpy(rec + 8, a15, 15);
	memcpy(rec + 24, &(int32_t){ TID0 }, 4);
	memcpy(rec + 28, &prio32, 4);
	memcpy(rec + 32, &state64, 8);
	memcpy(rec + 40, b15, 15);
	memcpy(rec + 56, &(int32_t){ TID0 + 1 }, 4);
	memcpy(rec + 60, &prio32, 4);
	put(&f, rec, sizeof(rec));
	ts_switch = f.ts;
	memset(rec, 0, sizeof(rec));
	common(rec, ID_WAKING, TID0 + 1);
	memcpy(rec + 8, a15, 15);
	memcpy(rec + 24, &(int32_t){ TID0 }, 4);
	memcpy(rec + 28, &prio32, 4);
	memcpy(rec + 32, &cpu, 4);
	put(&f, rec, 36);
	ts_wake = f.ts;
	flush_page(&f);
	assert_int_equal(ift_decoder_finish(f.d, f.ts + 1000), 0);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_decoder_free(f.d);
	ift_writer_free(w);
	tep_free(tep);

	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	assert_string_equal(ift_task_comm_at(ift_trace_task_find(t, TID0, ts_switch), ts_switch),
			    a15);
	assert_string_equal(ift_task_comm_at(ift_trace_task_find(t, TID0 + 1, ts_switch),
					     ts_switch), b15);
	cur = ift_cursor_new(t, 1U << IFT_T_SWITCHES | 1U << IFT_T_WAKEUPS, 0);
	assert_non_null(cur);
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		if (ev.table == IFT_T_SWITCHES) {
			assert_int_equal(ev.row[IFT_C_TS], ts_switch);
			assert_int_equal(ev.row[IFT_SW_PREV_STATE], (uint64_t)state64);
			assert_int_equal(ev.row[IFT_SW_PREV_PRIO], (uint64_t)prio);
			assert_int_equal(ev.row[IFT_SW_NEXT_TID], TID0 + 1);
		} else {
			assert_int_equal(ev.row[IFT_C_TS], ts_wake);
			assert_int_equal(ev.row[IFT_C_TID], TID0);
			assert_int_equal(ev.row[IFT_WK_WAKER_TID], TID0 + 1);
			assert_int_equal(ev.row[IFT_WK_TARGET_CPU], (uint64_t)(int64_t)cpu);
		}
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 2);
	ift_cursor_free(cur);
	ift_trace_close(t);
	unlink(path);
	rmdir(dir);
}

static void *blocked_thread(void *arg)
{
	int *fds = arg;
	pid_t tid = gettid();
	char c;

	if (write(fds[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(fds[2], &c, 1) < 0)
		;
	return NULL;
}

static uint32_t ppid_of(const struct ift_trace *t, pid_t tid, uint64_t ts)
{
	const struct ift_task *k = ift_trace_task_find(t, (uint32_t)tid, ts);

	assert_non_null(k);
	return k->ppid;
}

static void test_roots_have_parents(void **state)
{
	char dir[] = "/tmp/ift-test-decode.XXXXXX", path[64];
	struct tep_handle *tep = make_tep();
	struct feed f = { .ts = 1000000000 };
	int ready[2], go[2], tfds[3];
	struct ift_writer *w;
	struct ift_trace *t;
	pthread_t th;
	pid_t child, tid, self = getpid();
	char c = 0;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* a name that looks like status' next lines, and stat's ')' */
		prctl(PR_SET_NAME, "x)\nPPid:\t1 (");
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		while (read(go[0], &c, 1) < 0)
			;
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* a second thread here: the table says its process's parent */
	tfds[1] = ready[1];
	tfds[2] = go[0];
	assert_int_equal(pthread_create(&th, NULL, blocked_thread, tfds), 0);
	assert_int_equal(read(ready[0], &tid, sizeof(tid)), (ssize_t)sizeof(tid));

	w = decoder_open(dir, path, sizeof(path), tep, &f);
	assert_int_equal(ift_decoder_add_root(f.d, self), 0);
	assert_int_equal(ift_decoder_add_root(f.d, child), 0);

	/* each seen first running, then: the child forks, the test clones */
	sched_switch(&f, self, "test", self, "test");
	sched_switch(&f, tid, "thread", tid, "thread");
	sched_switch(&f, child, "child", child, "child");
	sched_switch(&f, TID0, "nobody", TID0, "nobody");
	task_newtask(&f, child, TID0 + 1, "grandchild", 0);
	task_newtask(&f, self, TID0 + 2, "clone", CLONE_THREAD);
	flush_page(&f);
	assert_int_equal(ift_decoder_finish(f.d, f.ts + 1000), 0);
	assert_int_equal(ift_writer_finish(w), 0);
	ift_decoder_free(f.d);
	ift_writer_free(w);

	assert_int_equal(write(go[1], "xx", 2), 2);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(waitpid(child, NULL, 0), child);

	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	assert_int_equal(ppid_of(t, self, f.ts), (uint32_t)getppid());
	assert_int_equal(ppid_of(t, tid, f.ts), (uint32_t)getppid());
	assert_int_equal(ppid_of(t, child, f.ts), (uint32_t)self);
	assert_int_equal(ppid_of(t, TID0, f.ts), 0);	/* /proc knows nothing */
	assert_int_equal(ppid_of(t, TID0 + 1, f.ts), (uint32_t)child);
	assert_int_equal(ppid_of(t, TID0 + 2, f.ts), (uint32_t)getppid());
	ift_trace_close(t);

	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
	tep_free(tep);
	unlink(path);
	rmdir(dir);
}

static void test_late_events_kept(void **state)
{
	char dir[] = "/tmp/ift-test-decode.XXXXXX", path[64];
	struct tep_handle *tep = make_tep();
	const struct ift_decode_stats *st;
	struct feed f = { .ts = 1000000000 };
	struct ift_writer *w;
	struct ift_trace *t;
	struct ift_cursor *cur;
	struct ift_event ev;
	uint64_t late_ts, merged_ts, prev = 0, n = 0;
	int ret;

	(void)state;
	w = decoder_open(dir, path, sizeof(path), tep, &f);

	/* CPU 1's writer stamps two switches, then is held off its CPU */
	late_ts = f.ts;
	/* CPU 0 runs on for 4 us; CPU 1 reads empty up to then */
	f.cpu = 0;
	for (int i = 0; i < 4; i++)
		sched_switch(&f, TID0 + i, "cpu0", TID0 + i, "cpu0");
	merged_ts = f.ts;
	flush_page(&f);
	ift_decoder_cpu_idle(f.d, 0, 1, merged_ts);
	assert_int_equal(ift_decoder_advance(f.d), 0);
	assert_int_equal(ift_decoder_stats(f.d)->rows[IFT_T_SWITCHES], 4);

	/* ... and commits them now, stamped before what was merged */
	f.cpu = 1;
	f.ts = late_ts;
	sched_switch(&f, TID0 + 10, "cpu1", TID0 + 10, "cpu1");
	sched_switch(&f, TID0 + 11, "cpu1", TID0 + 11, "cpu1");
	flush_page(&f);
	f.ts = merged_ts;
	f.cpu = 0;
	sched_switch(&f, TID0 + 20, "cpu0", TID0 + 20, "cpu0");
	flush_page(&f);
	assert_int_equal(ift_decoder_advance(f.d), 0);
	assert_int_equal(ift_decoder_finish(f.d, f.ts + 1000), 0);
	st = ift_decoder_stats(f.d);
	assert_int_equal(st->rows[IFT_T_SWITCHES], 7);
	assert_int_equal(st->late, 2);
	/* the first was stamped 1 us after LATE_TS, the merge was at MERGED_TS */
	assert_int_equal(st->late_max_ns, merged_ts - (late_ts + 1000));
	assert_int_equal(ift_writer_finish(w), 0);
	ift_decoder_free(f.d);
	ift_writer_free(w);

	/* every row is there, in time order, the late ones at the merge point */
	assert_int_equal(ift_trace_open(path, 0, &t), 0);
	cur = ift_cursor_new(t, 1U << IFT_T_SWITCHES, 0);
	assert_non_null(cur);
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		uint64_t ts = ev.row[IFT_C_TS], tid = ev.row[IFT_C_TID];

		assert_true(ts >= prev);
		if (tid == TID0 + 10 || tid == TID0 + 11)
			assert_int_equal(ts, merged_ts);
		prev = ts;
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 7);
	ift_cursor_free(cur);
	ift_trace_close(t);

	tep_free(tep);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_table_grows),
		cmocka_unit_test(test_fields_through_the_queue),
		cmocka_unit_test(test_roots_have_parents),
		cmocka_unit_test(test_late_events_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
