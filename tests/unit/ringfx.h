/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_RINGFX_H
#define IFT_TESTS_RINGFX_H

/*
 * The fixture test-ring and test-perfring share: one CPU pinned, a private
 * tracefs instance or a perf ring, and what a test read of them.  Every
 * test leaves tracefs as it found it (teardown removes the instance).
 * Tracing tests are skipped without root and tracefs, and fail instead
 * where CI=true.
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
#include "ift-ringq.h"
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

static inline bool in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

static inline void need(bool ok, const char *why)
{
	if (ok)
		return;
	if (in_ci())
		fail_msg("%s; CI must not skip tracing tests", why);
	fprintf(stderr, "skip: %s\n", why);
	skip();
}

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* NUM after KEY in TEXT ("ID: 5", "field:char buf[];\toffset:16;"), or -1. */
static inline int field_num(const char *text, const char *key, const char *num_key)
{
	const char *p = text ? strstr(text, key) : NULL;

	if (!p)
		return -1;
	p = strstr(p + strlen(key), num_key);
	return p ? atoi(p + strlen(num_key)) : -1;
}

/* The text of tracefs file REL (events/...), or NULL. */
static inline char *tracing_text(const char *rel)
{
	char *path = tracefs_get_tracing_file(rel), *text;

	if (!path)
		return NULL;
	text = slurp(path);
	tracefs_put_tracing_file(path);
	return text;
}

static inline int setup(void **state)
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

static inline int teardown(void **state)
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
static inline void pin(struct fx *fx)
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

#endif
