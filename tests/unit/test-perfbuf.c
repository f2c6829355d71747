// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util/perfbuf.c, the reading of a perf event's mmap'ed
 * ring (--stack's samples, --isolate's uprobe records).  A ring is laid out
 * in memory as the kernel lays it out (the control page, then a data area
 * whose records wrap round its end), with records of known contents; no
 * perf event is opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/perfbuf.h"

#define CTRL	4096	/* the control page */
#define DATA	256	/* a small data area: records wrap often */

struct fake {
	struct ift_perfbuf b;
	uint8_t *mem;
	uint64_t head;		/* where the next record goes */
};

static void fake_init(struct fake *f, uint64_t start)
{
	struct perf_event_mmap_page *mp;

	f->mem = calloc(1, CTRL + DATA);
	assert_non_null(f->mem);
	mp = (struct perf_event_mmap_page *)f->mem;
	mp->data_offset = CTRL;
	mp->data_size = DATA;
	mp->data_tail = start;
	mp->data_head = start;
	f->head = start;
	ift_perfbuf_init(&f->b);
	f->b.base = f->mem;
	f->b.size = DATA;
}

/* A record of LEN bytes in all (8-aligned), its body bytes SEQ, SEQ+1, ... */
static void fake_put(struct fake *f, uint32_t type, uint16_t len, uint8_t seq)
{
	struct perf_event_header h = { type, 0, len };
	uint8_t rec[DATA];

	memcpy(rec, &h, sizeof(h));
	for (unsigned i = sizeof(h); i < len; i++)
		rec[i] = (uint8_t)(seq + i);
	for (unsigned i = 0; i < len; i++)
		f->mem[CTRL + (f->head + i) % DATA] = rec[i];
	f->head += len;
}

static void fake_commit(struct fake *f)
{
	((struct perf_event_mmap_page *)f->mem)->data_head = f->head;
}

struct seen {
	int n, stop_at;
	uint16_t len[16];
	uint8_t first[16], last[16];
};

static int on_rec(void *ctx, const struct perf_event_header *h)
{
	struct seen *s = ctx;
	const uint8_t *b = (const uint8_t *)h;

	if (s->n == s->stop_at)
		return 1;
	assert_true(s->n < 16);
	s->len[s->n] = h->size;
	s->first[s->n] = b[sizeof(*h)];
	s->last[s->n] = b[h->size - 1];
	s->n++;
	return 0;
}

/*
 * test_wrapping_records: records on both sides of the end, one split by
 * it (in its header too), come out whole and in order; the tail moves past
 * what was read, and only what was committed (head) is read.
 */
static void test_wrapping_records(void **state)
{
	struct seen s = { .stop_at = -1 };
	struct fake f;

	(void)state;
	/* 4 bytes before the end: the next header is split */
	fake_init(&f, 3 * DATA - 4);
	fake_put(&f, PERF_RECORD_SAMPLE, 48, 10);	/* header split at 4 */
	fake_put(&f, PERF_RECORD_SAMPLE, 64, 20);
	fake_commit(&f);
	fake_put(&f, PERF_RECORD_SAMPLE, 32, 30);	/* written, not committed */
	assert_int_equal(ift_perfbuf_pending(&f.b), 48 + 64);
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 2);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.len[0], 48);
	assert_int_equal(s.first[0], (uint8_t)(10 + 8));
	assert_int_equal(s.last[0], (uint8_t)(10 + 47));
	assert_int_equal(s.len[1], 64);
	assert_int_equal(s.first[1], (uint8_t)(20 + 8));
	assert_int_equal(s.last[1], (uint8_t)(20 + 63));
	assert_int_equal(((struct perf_event_mmap_page *)f.mem)->data_tail, 3 * DATA - 4 + 112);
	assert_int_equal(ift_perfbuf_pending(&f.b), 0);

	/* committed now: the third, then nothing */
	fake_commit(&f);
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 1);
	assert_int_equal(s.len[2], 32);
	assert_int_equal(s.last[2], (uint8_t)(30 + 31));
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 0);
	f.b.base = NULL;	/* ours, not an mmap */
	ift_perfbuf_release(&f.b);
	free(f.mem);
}

/*
 * test_stop_keeps_record: a callback that stops (> 0) leaves its record
 * in the ring, read again next time; an error stops the same way and is
 * returned.
 */
static int fail_rec(void *ctx, const struct perf_event_header *h)
{
	(void)ctx;
	(void)h;
	return -EIO;
}

static void test_stop_keeps_record(void **state)
{
	struct seen s = { .stop_at = 1 };
	struct fake f;

	(void)state;
	fake_init(&f, 0);
	fake_put(&f, PERF_RECORD_SAMPLE, 40, 1);
	fake_put(&f, PERF_RECORD_LOST, 24, 2);
	fake_commit(&f);
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 1);
	assert_int_equal(ift_perfbuf_pending(&f.b), 24);
	assert_int_equal(ift_perfbuf_read(&f.b, fail_rec, NULL), -EIO);
	assert_int_equal(ift_perfbuf_pending(&f.b), 24);
	s.stop_at = -1;
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 1);
	assert_int_equal(s.len[1], 24);
	/* a header that claims less than itself is not read past */
	fake_put(&f, PERF_RECORD_SAMPLE, 8, 0);
	((struct perf_event_header *)(f.mem + CTRL + (f.head - 8) % DATA))->size = 4;
	fake_commit(&f);
	assert_int_equal(ift_perfbuf_read(&f.b, on_rec, &s), 0);
	f.b.base = NULL;
	ift_perfbuf_release(&f.b);
	free(f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrapping_records),
		cmocka_unit_test(test_stop_keeps_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
