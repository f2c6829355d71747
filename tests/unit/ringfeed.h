/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_RINGFEED_H
#define IFT_TESTS_RINGFEED_H
/*
 * Crafted ring-buffer pages for the decoder's tests (test-decode.c,
 * test-decode-calls.c): the page header and the sched and task event
 * formats as the kernel writes them, parsed into a tep (make_tep()), and a
 * feed that packs records 1 us apart into pages of one CPU's ring and hands
 * each full page to the decoder (put(), flush_page()).  No tracefs needed.
 * Include after cmocka.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <event-parse.h>

#include "ift-decode.h"

#define PAGE		4096
#define PAGE_HDR	16
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

enum { ID_SWITCH = 372, ID_WAKING = 375, ID_NEWTASK = 205, ID_EXIT = 317 };

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

static const char exit_fmt[] =
	"name: sched_process_exit\nID: 317\n" COMMON
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio\n";

struct feed {
	struct ift_decoder *d;
	uint8_t page[PAGE];
	size_t used;		/* data bytes after the header */
	uint64_t ts, page_ts;
	uint64_t last;		/* ts of the page's last record */
	int cpu;		/* the ring the page comes from */
};

static void flush_page(struct feed *f)
{
	uint64_t commit = f->used;

	if (!f->used)
		return;
	memcpy(f->page, &f->page_ts, 8);
	memcpy(f->page + 8, &commit, 8);
	assert_int_equal(ift_decoder_page(f->d, f->cpu, f->page, PAGE, 0), (int)commit);
	memset(f->page, 0, sizeof(f->page));
	f->used = 0;
}

/*
 * Appends one record (LEN a multiple of 4, at most 112) 1 us after the last,
 * or 1 us after the time a test set in F->ts (test-decode-calls.c's at()).
 */
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
		/* the 27-bit time delta of the record header */
		assert_true(f->ts >= f->last && f->ts - f->last < 1U << 27);
		hdr = (uint32_t)(len / 4) | (uint32_t)(f->ts - f->last) << 5;
	}
	f->last = f->ts;
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
	assert_int_equal(tep_parse_format(tep, &ev, exit_fmt,
					  sizeof(exit_fmt) - 1, "sched"), 0);
	return tep;
}

#endif
