// SPDX-License-Identifier: MIT
/*
 * The decoder on crafted ring-buffer pages (event formats as the kernel
 * writes them, no tracefs needed).
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
 */
#include <pthread.h>
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

#define PAGE		4096
#define PAGE_HDR	16
#ifndef CLONE_THREAD	/* <sched.h> has it, through <pthread.h> */
#define CLONE_THREAD	0x00010000ULL
#endif
/* above PID_MAX_LIMIT: no /proc entry answers for them */
#define TID0		5000000

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

enum { ID_SWITCH = 372, ID_WAKING = 375, ID_NEWTASK = 205 };

static const char switch_fmt[] =
	"name: sched_switch\nID: 372\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";

static const char waking_fmt[] =
	"name: sched_waking\nID: 375\n" COMMON
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"pid=%d\", REC->pid\n";

static const char newtask_fmt[] =
	"name: task_newtask\nID: 205\n" COMMON
	"\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
	"\tfield:u64 clone_flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:short oom_score_adj;\toffset:40;\tsize:2;\tsigned:1;\n\n"
	"print fmt: \"pid=%d\", REC->pid\n";

struct feed {
	struct ift_decoder *d;
	uint8_t page[PAGE];
	size_t used;		/* data bytes after the header */
	uint64_t ts, page_ts;
	int cpu;		/* the ring the page comes from */
};

static void flush_page(struct feed *f)
{
	uint64_t commit = f->used;

	if (!f->used)
		return;
	memcpy(f->page, &f->page_ts, 8);
	memcpy(f->page + 8, &commit, 8);
	assert_int_equal(ift_decoder_page(f->d, f->cpu, f->page, PAGE), 0);
	memset(f->page, 0, sizeof(f->page));
	f->used = 0;
}

/* Appends one record (LEN a multiple of 4, at most 112) 1 us after the last. */
static void put(struct feed *f, const uint8_t *rec, size_t len)
{
	uint32_t hdr;

	if (PAGE_HDR + f->used + 4 + len > PAGE)
		flush_page(f);
	f->ts += 1000;
	if (!f->used) {
		f->page_ts = f->ts;
		hdr = (uint32_t)(len / 4);
	} else {
		hdr = (uint32_t)(len / 4) | 1000U << 5;
	}
	memcpy(f->page + PAGE_HDR + f->used, &hdr, 4);
	memcpy(f->page + PAGE_HDR + f->used + 4, rec, len);
	f->used += 4 + len;
}

static void common(uint8_t *rec, uint16_t id, int32_t pid)
{
	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
}

static void sched_switch(struct feed *f, int32_t prev, const char *prev_comm,
			 int32_t next, const char *next_comm)
{
	uint8_t rec[64] = { 0 };
	int32_t prio = 120;

	common(rec, ID_SWITCH, prev);
	strncpy((char *)rec + 8, prev_comm, 16);
	memcpy(rec + 24, &prev, 4);
	memcpy(rec + 28, &prio, 4);
	strncpy((char *)rec + 40, next_comm, 16);
	memcpy(rec + 56, &next, 4);
	memcpy(rec + 60, &prio, 4);
	put(f, rec, sizeof(rec));
}

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

static void task_newtask(struct feed *f, int32_t parent, int32_t child,
			 const char *comm, uint64_t flags)
{
	uint8_t rec[44] = { 0 };

	common(rec, ID_NEWTASK, parent);
	memcpy(rec + 8, &child, 4);
	strncpy((char *)rec + 12, comm, 16);
	memcpy(rec + 32, &flags, 8);
	put(f, rec, sizeof(rec));
}

static struct tep_handle *make_tep(void)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_event *ev;

	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	assert_int_equal(tep_parse_header_page(tep, (char *)header_page,
					       sizeof(header_page) - 1, 8), 0);
	assert_int_equal(tep_parse_format(tep, &ev, switch_fmt,
					  sizeof(switch_fmt) - 1, "sched"), 0);
	assert_int_equal(tep_parse_format(tep, &ev, waking_fmt,
					  sizeof(waking_fmt) - 1, "sched"), 0);
	assert_int_equal(tep_parse_format(tep, &ev, newtask_fmt,
					  sizeof(newtask_fmt) - 1, "task"), 0);
	return tep;
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
	struct ift_decode_opts opts = { 0 };
	struct tep_handle *tep = make_tep();
	const struct ift_decode_stats *st;
	struct feed f = { .ts = 1000000000 };
	struct ift_writer *w;
	uint64_t rows = 0;	/* tasks rows expected */
	int32_t tid = TID0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	opts.tep = tep;
	opts.w = w;
	assert_int_equal(ift_decoder_new(&opts, &f.d), 0);

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
	struct ift_decode_opts opts = { 0 };
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

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	opts.tep = tep;
	opts.w = w;
	assert_int_equal(ift_decoder_new(&opts, &f.d), 0);
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
	struct ift_decode_opts opts = { 0 };
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
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = ift_writer_create(path, NULL);
	assert_non_null(w);
	opts.tep = tep;
	opts.w = w;
	assert_int_equal(ift_decoder_new(&opts, &f.d), 0);

	/* CPU 1's writer stamps two switches, then is held off its CPU */
	late_ts = f.ts;
	/* CPU 0 runs on for 4 us; CPU 1 reads empty up to then */
	f.cpu = 0;
	for (int i = 0; i < 4; i++)
		sched_switch(&f, TID0 + i, "cpu0", TID0 + i, "cpu0");
	merged_ts = f.ts;
	flush_page(&f);
	ift_decoder_cpu_idle(f.d, 1, merged_ts);
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
		cmocka_unit_test(test_roots_have_parents),
		cmocka_unit_test(test_late_events_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
