// SPDX-License-Identifier: MIT
/*
 * The ring-buffer page walker against libtraceevent's kbuffer, on pages
 * crafted with every kind of entry (data of every short length, long data,
 * time extends, absolute stamps, discarded events, trailing padding, lost
 * events): both must yield the same events at the same times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <kbuffer.h>

#include "ift-error.h"
#include "decode/page.h"

#define PAGE 4096

struct ev {
	uint64_t ts;
	int off, size;
};

struct list {
	struct ev v[2048];
	int n;
	const uint8_t *page;
};

static uint64_t rng = 1;

static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Writes a random page into PAGE; returns its commit size. */
static uint32_t craft(uint8_t *page, bool missed, bool stored)
{
	uint8_t *p = page + 16, *end = page + PAGE - 16;
	uint64_t ts = ((uint64_t)rnd() << 20) | rnd();
	uint64_t commit;

	memcpy(page, &ts, 8);
	while (p + 160 < end) {
		uint32_t kind = rnd() % 10, delta = rnd() & ((1U << 27) - 1);

		if (kind < 5) {			/* short data: type_len 1..28 */
			uint32_t words = 1 + rnd() % 28;

			put32(p, words | (delta << 5));
			for (uint32_t i = 0; i < words; i++)
				put32(p + 4 + 4 * i, rnd());
			p += 4 + 4 * words;
		} else if (kind < 7) {		/* long data: type_len 0, length */
			uint32_t len = 4 + rnd() % 40;

			if (p + 8 + len + 4 >= end)
				break;
			put32(p, delta << 5);
			put32(p + 4, len + 4);
			p += 8 + ((len + 3) & ~3U);
		} else if (kind == 7) {		/* time extend */
			put32(p, 30 | (delta << 5));
			put32(p + 4, rnd() & 0xffff);
			p += 8;
		} else if (kind == 8) {		/* absolute stamp */
			put32(p, 31 | (delta << 5));
			put32(p + 4, rnd() & 0xffffff);
			p += 8;
		} else {			/* a discarded event */
			uint32_t len = 4 * (1 + rnd() % 8);

			put32(p, 29 | ((delta | 1) << 5));
			put32(p + 4, len);
			p += 4 + len;
		}
	}
	commit = (uint64_t)(p - (page + 16));
	if (rnd() % 2) {	/* a null event pads the end, inside commit */
		put32(p, 29);
		commit += 4;
	}
	if (missed)
		commit |= 1ULL << 31;
	if (stored) {
		uint64_t lost = 12345;

		commit |= 1ULL << 30;
		memcpy(page + 16 + (commit & ((1U << 27) - 1)), &lost, 8);
	}
	memcpy(page + 8, &commit, 8);
	return (uint32_t)(commit & ((1U << 27) - 1));
}

static int collect(void *ctx, uint64_t ts, const uint8_t *data, int size)
{
	struct list *l = ctx;

	assert_true(l->n < 2048);
	l->v[l->n].ts = ts;
	l->v[l->n].off = (int)(data - l->page);
	l->v[l->n].size = size;
	l->n++;
	return 0;
}

/* The events kbuffer finds in PAGE that start FROM bytes or more into its data. */
static void walk_kbuffer(uint8_t *page, int from, struct list *l, int *missed)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	unsigned long long ts;
	void *rec;

	assert_non_null(kb);
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	*missed = kbuffer_missed_events(kb);
	l->page = page;
	/* its offsets count from the page's start: the header's size first */
	rec = from ? kbuffer_read_at_offset(kb, kbuffer_curr_offset(kb) - kbuffer_curr_index(kb) +
					    from, &ts) :
		     kbuffer_read_event(kb, &ts);
	for (; rec; rec = kbuffer_next_event(kb, &ts))
		collect(l, ts, rec, kbuffer_event_size(kb));
	kbuffer_free(kb);
}

static void same_events(const struct list *a, const struct list *b)
{
	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		assert_int_equal(a->v[i].ts, b->v[i].ts);
		assert_int_equal(a->v[i].off, b->v[i].off);
		assert_int_equal(a->v[i].size, b->v[i].size);
	}
}

static void test_against_kbuffer(void **state)
{
	static uint8_t page[PAGE];
	static struct list a, b;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		bool missed = round % 7 == 0, stored = missed && round % 2;
		int64_t our_missed;
		int kb_missed;

		uint32_t size;
		int from;

		memset(page, 0, sizeof(page));
		size = craft(page, missed, stored);
		a.n = b.n = 0;
		walk_kbuffer(page, 0, &a, &kb_missed);
		b.page = page;
		assert_int_equal(ift_page_walk(page, PAGE, 0, collect, &b, &our_missed), (int)size);
		same_events(&a, &b);
		if (!missed)
			assert_int_equal(our_missed, 0);
		else if (stored)
			assert_int_equal(our_missed, 12345);
		else
			assert_true(our_missed != 0);
		/*
		 * kbuffer reports lost events only while positioned on the
		 * page's first entry, so not when the page starts with a time
		 * extend; where it does report them, we must agree.
		 */
		if (kb_missed)
			assert_int_equal(our_missed, kb_missed);

		/*
		 * The same page walked again from anywhere in it, as a page
		 * read in place is: the events from there on, at the same
		 * times (the deltas before still count), and no loss again.
		 */
		from = 1 + (int)(rnd() % size);
		a.n = b.n = 0;
		walk_kbuffer(page, from, &a, &kb_missed);
		assert_int_equal(ift_page_walk(page, PAGE, from, collect, &b, &our_missed),
				 (int)size);
		same_events(&a, &b);
		assert_int_equal(our_missed, 0);
	}
}

/*
 * A page the kernel still fills, read in place: each walk takes what is
 * committed, the next one starts where it ended, and together they give
 * the page's events once each.
 */
static void test_growing_page(void **state)
{
	static uint8_t page[PAGE] __attribute__((aligned(8)));
	static uint8_t part[PAGE] __attribute__((aligned(8)));
	static struct list whole, pieces;

	(void)state;
	for (int round = 0; round < 500; round++) {
		uint64_t commit;
		uint32_t size;
		int64_t missed;
		int from = 0, kb_missed;

		memset(page, 0, sizeof(page));
		size = craft(page, false, false);
		whole.n = pieces.n = 0;
		walk_kbuffer(page, 0, &whole, &kb_missed);
		/* the page as it was at each of a few commits: a prefix of events */
		memcpy(part, page, sizeof(part));
		pieces.page = part;
		for (int k = 0; k < whole.n; k += 1 + (int)(rnd() % 9)) {
			const struct ev *e = &whole.v[k];

			/* committed up to the end of event K */
			commit = (uint64_t)(e->off + e->size - 16);
			memcpy(part + 8, &commit, 8);
			from = ift_page_walk(part, PAGE, from, collect, &pieces, &missed);
			assert_int_equal(from, (int)commit);
		}
		commit = size;
		memcpy(part + 8, &commit, 8);
		assert_int_equal(ift_page_walk(part, PAGE, from, collect, &pieces, &missed),
				 (int)size);
		same_events(&whole, &pieces);
	}
}

static int count(void *ctx, uint64_t ts, const uint8_t *data, int size)
{
	(void)ts;
	(void)data;
	(void)size;
	(*(int *)ctx)++;
	return 0;
}

/* Pages that do not hold together give an error, never a read past the end. */
static void test_corrupt(void **state)
{
	static uint8_t page[PAGE];
	int64_t missed;
	uint64_t commit;
	int n = 0;

	(void)state;
	assert_int_equal(ift_page_walk(page, 8, 0, count, &n, &missed), -IFT_E_CORRUPT);
	commit = PAGE;	/* more data than the page holds */
	memcpy(page + 8, &commit, 8);
	assert_int_equal(ift_page_walk(page, PAGE, 0, count, &n, &missed), -IFT_E_CORRUPT);
	commit = 8;	/* a long event whose length runs off the data */
	memcpy(page + 8, &commit, 8);
	put32(page + 16, 0);
	put32(page + 20, 4000);
	assert_int_equal(ift_page_walk(page, PAGE, 0, count, &n, &missed), -IFT_E_CORRUPT);
	commit = 0;	/* a walk from past the data */
	memcpy(page + 8, &commit, 8);
	assert_int_equal(ift_page_walk(page, PAGE, 4, count, &n, &missed), -IFT_E_CORRUPT);
	for (int round = 0; round < 20000; round++) {
		for (int i = 16; i < PAGE; i += 4)
			put32(page + i, rnd());
		commit = rnd() % (PAGE + 64);
		memcpy(page + 8, &commit, 8);
		/* any result but a crash (ASan checks the reads) */
		ift_page_walk(page, PAGE, (int)(rnd() % 64), count, &n, &missed);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_kbuffer),
		cmocka_unit_test(test_growing_page),
		cmocka_unit_test(test_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
