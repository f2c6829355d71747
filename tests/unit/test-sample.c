// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/sample/sample.c.  Most feed fixture /proc files written
 * here into a mkdtemp directory, with jiffies chosen so the expected permille
 * is worked out by hand in the comments, not by the formula under test.  Two
 * read the real /proc and hold it against what we measure independently: the
 * kernel's own MemAvailable, and the CPU time a child burns by getrusage.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ift-sample.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- what EMIT saw ---------------------------------------------------- */

struct rec {
	char metric[32];
	unsigned scope;
	int64_t value;
};

struct got {
	struct rec r[1024];
	size_t n;
	int fail_at;		/* return -42 on this call (1-based); 0 never */
	size_t calls;
};

static int collect(void *ctx, const char *metric, unsigned scope,
		   int64_t value)
{
	struct got *g = ctx;

	g->calls++;
	if (g->fail_at && g->calls == (size_t)g->fail_at)
		return -42;
	assert_true(g->n < ARRAY_SIZE(g->r));
	assert_true(strlen(metric) < sizeof(g->r[0].metric));
	strcpy(g->r[g->n].metric, metric);
	g->r[g->n].scope = scope;
	g->r[g->n].value = value;
	g->n++;
	return 0;
}

static bool find(const struct got *g, const char *metric, unsigned scope,
		 int64_t *value)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].scope == scope && !strcmp(g->r[i].metric, metric)) {
			if (value)
				*value = g->r[i].value;
			return true;
		}
	return false;
}

static int64_t must(const struct got *g, const char *metric, unsigned scope)
{
	int64_t v = 0;

	if (!find(g, metric, scope, &v))
		fail_msg("no %s for scope %u", metric, scope);
	return v;
}

static size_t count_scope(const struct got *g, unsigned scope)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		n += g->r[i].scope == scope;
	return n;
}

static size_t count_metric(const struct got *g, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		n += !strncmp(g->r[i].metric, prefix, strlen(prefix));
	return n;
}

/* Every value within what its metric can be, whatever the input. */
static void assert_sane(const struct got *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->r[i];

		assert_true(r->value >= 0);
		if (strstr(r->metric, "permille"))
			assert_true(r->value <= 1000);
		else
			assert_int_equal(r->scope, 0);
	}
}

static int read_into(struct ift_sampler *s, struct got *g)
{
	memset(g, 0, sizeof(*g));
	return ift_sampler_read(s, collect, g);
}

/* ---- fixture directory ------------------------------------------------ */

struct fixture {
	char dir[64];
};

static const char *const fixture_files[] = {
	"stat", "loadavg", "meminfo", "vmstat",
};

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/ift-sample.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	for (size_t i = 0; i < ARRAY_SIZE(fixture_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, fixture_files[i]);
		if (unlink(path) < 0)
			rmdir(path);	/* the tests that make it a directory */
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* In place, as the sampler keeps its files open (see sample.c). */
static void put_bytes(const struct fixture *f, const char *name,
		      const char *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put(const struct fixture *f, const char *name, const char *text)
{
	put_bytes(f, name, text, strlen(text));
}

/* ---- /proc/stat text -------------------------------------------------- */

/* user nice system idle iowait irq softirq steal guest guest_nice */
#define NCOL 10

struct row {
	int cpu;		/* -1: the "cpu" total line */
	uint64_t j[NCOL];
};

static char stat_text[1 << 20];

static const char *fmt_stat(const struct row *rows, size_t n, int running,
			    int blocked)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].cpu < 0)
			len += snprintf(stat_text + len, sizeof(stat_text) - len,
					"cpu ");
		else
			len += snprintf(stat_text + len, sizeof(stat_text) - len,
					"cpu%d", rows[i].cpu);
		for (int c = 0; c < NCOL; c++)
			len += snprintf(stat_text + len, sizeof(stat_text) - len,
					" %llu", (unsigned long long)rows[i].j[c]);
		len += snprintf(stat_text + len, sizeof(stat_text) - len, "\n");
	}
	snprintf(stat_text + len, sizeof(stat_text) - len,
		 "intr 538429 0 0 7 0 1\nctxt 856147\nbtime 1700000000\n"
		 "processes 9835\nprocs_running %d\nprocs_blocked %d\n"
		 "softirq 1 2 3 4 5 6 7 8 9 10 11\n", running, blocked);
	return stat_text;
}

/* ROWS[i] += D[i] for every column, row by row. */
static void advance(struct row *rows, const struct row *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++)
			rows[i].j[c] += d[i].j[c];
}

/* ---- exact figures ---------------------------------------------------- */

static void test_stat_permille(void **state)
{
	struct fixture *f = *state;
	struct row rows[] = {
		{ -1, { 9000001, 1234, 400000, 80000000, 9000, 100, 2000, 77, 500, 0 } },
		{ 0, { 123456, 7, 23456, 987654, 321, 12, 34, 5, 100, 0 } },
		{ 1, { 5, 0, 6, 7, 8, 0, 0, 0, 0, 0 } },
		{ 2, { 42, 42, 42, 42, 42, 42, 42, 42, 0, 0 } },
	};
	/*
	 * cpu0: total 1000; busy = 300+100+100+20+20+10 = 550, user = 300+100
	 * = 400, system = 100+20+20 = 140, iowait 50.
	 * cpu1: total 1000, all but 10 idle.
	 * cpu2: total 3, 2 of them user: 666.7 rounds to 667.
	 * total: their sum, 2003; busy 562 -> 280.6 -> 281, user 412 -> 205.7
	 * -> 206, system 140 -> 69.9 -> 70, iowait 50 -> 24.96 -> 25.
	 * guest moves by 5, inside user already: it must not count twice.
	 */
	const struct row d[] = {
		{ -1, { 312, 100, 100, 1391, 50, 20, 20, 10, 5, 0 } },
		{ 0, { 300, 100, 100, 400, 50, 20, 20, 10, 5, 0 } },
		{ 1, { 10, 0, 0, 990, 0, 0, 0, 0, 0, 0 } },
		{ 2, { 2, 0, 0, 1, 0, 0, 0, 0, 0, 0 } },
	};
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", fmt_stat(rows, 4, 1, 0));
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	/* the first read compares with the baseline new() took */
	advance(rows, d, 4);
	put(f, "stat", fmt_stat(rows, 4, 3, 1));
	assert_int_equal(read_into(s, &g), 0);

	assert_int_equal(must(&g, "cpu.busy_permille", 1), 550);
	assert_int_equal(must(&g, "cpu.user_permille", 1), 400);
	assert_int_equal(must(&g, "cpu.system_permille", 1), 140);
	assert_int_equal(must(&g, "cpu.iowait_permille", 1), 50);
	assert_int_equal(must(&g, "cpu.steal_permille", 1), 10);

	assert_int_equal(must(&g, "cpu.busy_permille", 2), 10);
	assert_int_equal(must(&g, "cpu.user_permille", 2), 10);
	assert_int_equal(must(&g, "cpu.system_permille", 2), 0);
	assert_int_equal(must(&g, "cpu.iowait_permille", 2), 0);
	assert_int_equal(must(&g, "cpu.steal_permille", 2), 0);

	assert_int_equal(must(&g, "cpu.busy_permille", 3), 667);
	assert_int_equal(must(&g, "cpu.user_permille", 3), 667);

	assert_int_equal(must(&g, "cpu.busy_permille", 0), 281);
	assert_int_equal(must(&g, "cpu.user_permille", 0), 206);
	assert_int_equal(must(&g, "cpu.system_permille", 0), 70);
	assert_int_equal(must(&g, "cpu.iowait_permille", 0), 25);
	/* steal 10 of 2003: 4.99 -> 5 */
	assert_int_equal(must(&g, "cpu.steal_permille", 0), 5);

	assert_int_equal(must(&g, "procs.running", 0), 3);
	assert_int_equal(must(&g, "procs.blocked", 0), 1);

	/* 5 CPU figures for the total and each of 3 CPUs, and no others */
	assert_int_equal(count_metric(&g, "cpu."), 20);
	assert_int_equal(count_scope(&g, 4), 0);
	/* no loadavg, meminfo or vmstat in this directory: skipped */
	assert_int_equal(g.n, 22);
	assert_sane(&g);

	/* the same file again: no jiffy went by, so no CPU figure */
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(count_metric(&g, "cpu."), 0);
	assert_int_equal(must(&g, "procs.running", 0), 3);

	/* and the interval after that is measured from the last read */
	advance(rows, d, 4);
	advance(rows, d, 4);
	put(f, "stat", fmt_stat(rows, 4, 2, 0));
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 550);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 281);
	ift_sampler_free(s);
}

/* Kernels before 2.6.11 had no steal, before 2.6 only four columns. */
static void test_stat_few_columns(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", "cpu  100 0 100 800\ncpu0 100 0 100 800 0\n");
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);
	/* user 100, system 0, idle 900 -> busy 100; cpu0 also iowait 100 */
	put(f, "stat", "cpu  200 0 100 1700\ncpu0 200 0 100 1600 100\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 100);
	assert_int_equal(must(&g, "cpu.iowait_permille", 0), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	assert_int_equal(must(&g, "cpu.iowait_permille", 1), 100);
	assert_int_equal(must(&g, "cpu.steal_permille", 1), 0);
	ift_sampler_free(s);
}

static void test_meminfo_loadavg_vmstat(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", "cpu  1 0 1 10 0 0 0 0 0 0\n");
	put(f, "loadavg", "1.62 1.27 0.64 3/103 9835\n");
	put(f, "meminfo",
	    "MemTotal:       16384000 kB\n"
	    "MemFree:         1000000 kB\n"
	    "MemAvailable:   12288000 kB\n"
	    "Buffers:            3776 kB\n"
	    "SwapCached:          999 kB\n"
	    "SwapTotal:       2097152 kB\n"
	    "SwapFree:        1572864 kB\n"
	    "Zswap:                 0 kB\n");
	put(f, "vmstat", "pgpgin 5\npswpinx 999\npswpin 100\npswpout 7\n"
			 "pgfault 123\n");
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	put(f, "vmstat", "pgpgin 5\npswpinx 1\npswpin 130\npswpout 7\n"
			 "pgfault 124\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "load.1_milli", 0), 1620);
	assert_int_equal(must(&g, "mem.total_kb", 0), 16384000);
	assert_int_equal(must(&g, "mem.available_kb", 0), 12288000);
	assert_int_equal(must(&g, "swap.used_kb", 0), 2097152 - 1572864);
	/* deltas from the baseline new() took */
	assert_int_equal(must(&g, "swap.in_pages", 0), 30);
	assert_int_equal(must(&g, "swap.out_pages", 0), 0);
	assert_sane(&g);

	put(f, "loadavg", "0.07 0.02 0.00 1/99 1\n");
	put(f, "vmstat", "pswpin 131\npswpout 9\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "load.1_milli", 0), 70);
	assert_int_equal(must(&g, "swap.in_pages", 0), 1);
	assert_int_equal(must(&g, "swap.out_pages", 0), 2);

	/* a counter that goes back has no delta, and is the new baseline */
	put(f, "loadavg", "12.5 1 1 1/1 1\n");
	put(f, "vmstat", "pswpin 50\npswpout 9\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "load.1_milli", 0), 12500);
	assert_false(find(&g, "swap.in_pages", 0, NULL));
	assert_int_equal(must(&g, "swap.out_pages", 0), 0);
	put(f, "vmstat", "pswpin 60\npswpout 9\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "swap.in_pages", 0), 10);

	/* a counter missing for a read starts over after it */
	put(f, "vmstat", "pswpout 9\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_false(find(&g, "swap.in_pages", 0, NULL));
	put(f, "vmstat", "pswpin 70\npswpout 9\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_false(find(&g, "swap.in_pages", 0, NULL));

	/* MemAvailable came with 3.14; SwapFree > SwapTotal is nonsense */
	put(f, "meminfo", "MemTotal: 100 kB\nSwapTotal: 5 kB\nSwapFree: 6 kB\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "mem.total_kb", 0), 100);
	assert_false(find(&g, "mem.available_kb", 0, NULL));
	assert_false(find(&g, "swap.used_kb", 0, NULL));
	ift_sampler_free(s);
}

/* ---- CPUs going offline and online ------------------------------------ */

static void test_hotplug(void **state)
{
	struct fixture *f = *state;
	struct row rows[] = {
		{ -1, { 4000, 0, 0, 36000 } },
		{ 0, { 1000, 0, 0, 9000 } },
		{ 1, { 1000, 0, 0, 9000 } },
		{ 2, { 1000, 0, 0, 9000 } },
		{ 3, { 1000, 0, 0, 9000 } },
		{ 9, { 70, 0, 0, 30 } },
	};
	/* every CPU: 100 user, 900 idle -> busy 100 per interval */
	const struct row step[] = {
		{ -1, { 300, 0, 0, 2700 } },
		{ 0, { 100, 0, 0, 900 } },
		{ 1, { 100, 0, 0, 900 } },
		{ 2, { 0 } },
		{ 3, { 100, 0, 0, 900 } },
		{ 9, { 0 } },
	};
	struct row out[4];
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", fmt_stat(rows, 5, 1, 0));
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	/* cpu2 goes offline: its line is gone */
	advance(rows, step, 6);
	out[0] = rows[0], out[1] = rows[1], out[2] = rows[2], out[3] = rows[4];
	put(f, "stat", fmt_stat(out, 4, 1, 0));
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 100);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	assert_int_equal(must(&g, "cpu.busy_permille", 2), 100);
	assert_int_equal(count_scope(&g, 3), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 4), 100);

	/*
	 * cpu2 comes back, having run half busy while we did not see it,
	 * and cpu9 appears.  Neither has a figure yet: compared with the
	 * read before it went, cpu2 would report over the wrong interval.
	 */
	advance(rows, step, 6);
	rows[3].j[0] += 500, rows[3].j[3] += 500;
	put(f, "stat", fmt_stat(rows, 6, 1, 0));
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(count_scope(&g, 3), 0);
	assert_int_equal(count_scope(&g, 10), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);

	/* from now on both report, from the read they came back in */
	advance(rows, step, 6);
	rows[3].j[0] += 250, rows[3].j[3] += 750;
	rows[5].j[0] += 1, rows[5].j[3] += 3;
	put(f, "stat", fmt_stat(rows, 6, 1, 0));
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 3), 250);
	assert_int_equal(must(&g, "cpu.busy_permille", 10), 250);
	assert_int_equal(must(&g, "cpu.busy_permille", 4), 100);
	assert_int_equal(count_scope(&g, 5), 0);
	assert_sane(&g);
	ift_sampler_free(s);
}

/* ---- what /proc should never say -------------------------------------- */

static const char base_stat[] =
	"cpu  1000 0 1000 8000 0 0 0 0 0 0\n"
	"cpu0 500 0 500 4000 0 0 0 0 0 0\n"
	"cpu1 500 0 500 4000 0 0 0 0 0 0\n"
	"procs_running 2\n";

/* Each against BASE_STAT: what must (not) come out. */
static void test_garbage_stat(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", base_stat);
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	/* empty: nothing at all */
	put(f, "stat", "");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(g.n, 0);

	/*
	 * Cut short in cpu1's line: "600 0 500 49" could be "600 0 500 4900
	 * ...", so the line is dropped, not read as a smaller number.
	 */
	put(f, "stat", base_stat);
	assert_int_equal(read_into(s, &g), 0);
	put(f, "stat", "cpu  1100 0 1000 8900 0 0 0 0 0 0\n"
		       "cpu0 600 0 500 4900 0 0 0 0 0 0\n"
		       "cpu1 600 0 500 49");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 100);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	assert_int_equal(count_scope(&g, 2), 0);

	/* junk in the numbers, too few columns, overflow, absurd CPU numbers */
	put(f, "stat", base_stat);
	assert_int_equal(read_into(s, &g), 0);
	put(f, "stat", "cpu  1100 0 1000 8900 0 0 0 0 0 0\n"
		       "cpu0 600x 0 500 4900 0 0 0 0 0 0\n"
		       "cpu1 600 0 500\n"
		       "cpu2 99999999999999999999 0 1 1\n"
		       "cpu99999999 1 2 3 4\n"
		       "cpu4294967297 1 2 3 4\n"
		       "cpu-1 1 2 3 4\n"
		       "cpux 1 2 3 4\n"
		       "procs_running -3\n"
		       "procs_blocked\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 100);
	assert_int_equal(count_metric(&g, "cpu."), 5);
	assert_int_equal(g.n, 5);

	/* a second line for a CPU is ignored; the first counts */
	put(f, "stat", base_stat);
	assert_int_equal(read_into(s, &g), 0);
	put(f, "stat", "cpu0 600 0 500 4900 0 0 0 0 0 0\n"
		       "cpu0 500 0 500 5000 0 0 0 0 0 0\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	assert_int_equal(count_metric(&g, "cpu."), 5);

	/* counters that go back count as no time, never as a huge one */
	put(f, "stat", base_stat);
	assert_int_equal(read_into(s, &g), 0);
	put(f, "stat", "cpu  900 0 900 7000 0 0 0 0 0 0\n"
		       "cpu0 600 0 500 3000 0 0 0 0 0 0\n"
		       "cpu1 1 1 1 1 1 1 1 1\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_false(find(&g, "cpu.busy_permille", 0, NULL));
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 1000);
	assert_sane(&g);

	/* a jump past any real interval is not a figure */
	put(f, "stat", "cpu0 600 0 500 3000 0 0 0 0 0 0\n");
	assert_int_equal(read_into(s, &g), 0);
	put(f, "stat", "cpu0 18446744073709551615 0 500 3000 0 0 0 0 0 0\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(g.n, 0);

	/* NUL bytes and no newline at all */
	{
		static const char nul[] = "cpu0 1\0 2 3 4 5\ncpu1\0\0\0";

		put_bytes(f, "stat", nul, sizeof(nul) - 1);
	}
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(g.n, 0);
	ift_sampler_free(s);
}

/* Thousands of IRQs make a long intr line: what follows it still counts. */
static void test_long_stat(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;
	char *text;
	size_t len = 0, size = 600 * 1024;

	text = malloc(size);
	assert_non_null(text);
	put(f, "stat", base_stat);
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	len += snprintf(text, size, "cpu  1100 0 1000 8900 0 0 0 0 0 0\nintr");
	while (len < size - 100)
		len += snprintf(text + len, size - len, " %zu", len);
	len += snprintf(text + len, size - len,
			"\nprocs_running 7\nprocs_blocked 2\n");
	put_bytes(f, "stat", text, len);
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 0), 100);
	assert_int_equal(must(&g, "procs.running", 0), 7);
	assert_int_equal(must(&g, "procs.blocked", 0), 2);
	ift_sampler_free(s);
	free(text);
}

static void test_garbage_other_files(void **state)
{
	static const char *const loadavg_bad[] = {
		"", "\n", "abc 1 2\n", "1.5", "-1.00 0 0\n", "1.2.3 0 0\n",
		"99999999999999999999.0 0 0\n", ".5 0 0\n", "1x 0 0\n",
	};
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", base_stat);
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);

	for (size_t i = 0; i < ARRAY_SIZE(loadavg_bad); i++) {
		put(f, "loadavg", loadavg_bad[i]);
		assert_int_equal(read_into(s, &g), 0);
		if (find(&g, "load.1_milli", 0, NULL))
			fail_msg("load from '%s'", loadavg_bad[i]);
	}
	/* more decimals than the kernel prints: truncated to thousandths */
	put(f, "loadavg", "3.14159 0 0\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "load.1_milli", 0), 3141);
	put(f, "loadavg", "7\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "load.1_milli", 0), 7000);

	put(f, "meminfo", "MemTotal: abc kB\nMemAvailable:\nSwapTotal: 1 kB\n"
			  "MemTotal 5 kB\nMemAvailable: 12");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(count_metric(&g, "mem."), 0);
	assert_int_equal(count_metric(&g, "swap."), 0);

	put(f, "vmstat", "pswpin\npswpout x\npswpin 12 13\n");
	assert_int_equal(read_into(s, &g), 0);
	put(f, "vmstat", "pswpin\npswpout x\npswpin 12 13\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(count_metric(&g, "swap."), 0);
	ift_sampler_free(s);
}

/*
 * Token soup into every file, against a sampler that has seen good files:
 * nothing may crash (the sanitizer build watches reads past the buffer) and
 * whatever comes out must be in range.
 */
static void test_fuzz(void **state)
{
	static const char *const tok[] = {
		"cpu", "cpu0", "cpu1", "cpu7", "cpu ", " ", "  ", "\t", "\n",
		"\n", "\n", "0", "1", "42", "999999", "18446744073709551615",
		"99999999999999999999", "procs_running ", "procs_blocked ",
		"MemTotal:", "MemAvailable:", "SwapTotal:", "SwapFree:", " kB",
		"pswpin ", "pswpout ", ".", "1.5", "x", "-", "/",
	};
	struct fixture *f = *state;
	struct ift_sampler *s;
	unsigned seed = 12345;
	char text[2048];
	struct got g;

	put(f, "stat", base_stat);
	put(f, "loadavg", "1.00 1 1 1/1 1\n");
	put(f, "meminfo", "MemTotal: 10 kB\n");
	put(f, "vmstat", "pswpin 1\npswpout 1\n");
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);
	for (int iter = 0; iter < 4000; iter++) {
		size_t len = 0, n;
		int ret;

		seed = seed * 1103515245 + 12345;
		n = (seed >> 16) % 200;
		for (size_t k = 0; k < n; k++) {
			const char *t;
			size_t tl;

			seed = seed * 1103515245 + 12345;
			if ((seed >> 16) % 40 == 0) {
				/* any byte at all, NUL included */
				text[len++] = (char)(seed >> 24);
				continue;
			}
			t = tok[(seed >> 16) % ARRAY_SIZE(tok)];
			tl = strlen(t);
			if (len + tl > sizeof(text))
				break;
			memcpy(text + len, t, tl);
			len += tl;
		}
		put_bytes(f, fixture_files[iter % 4], text, len);
		ret = read_into(s, &g);
		assert_int_equal(ret, 0);
		assert_sane(&g);
	}
	ift_sampler_free(s);
}

/* ---- failures --------------------------------------------------------- */

static void test_missing_and_unreadable(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	char path[128];
	struct got g;

	/* no stat: no sampler */
	errno = 0;
	assert_null(ift_sampler_new_at(f->dir));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(ift_sampler_new_at("/nonexistent/ift-sample"));
	assert_int_equal(errno, ENOENT);

	/* stat that cannot be read */
	snprintf(path, sizeof(path), "%s/stat", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	errno = 0;
	assert_null(ift_sampler_new_at(f->dir));
	assert_int_equal(errno, EISDIR);
	assert_int_equal(rmdir(path), 0);

	/*
	 * A file that exists but cannot be read is an error, but the others
	 * still report: the recorder loses one figure, not all of them.
	 */
	put(f, "stat", base_stat);
	put(f, "loadavg", "2.00 1 1 1/1 1\n");
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);
	snprintf(path, sizeof(path), "%s/meminfo", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(read_into(s, &g), -EISDIR);
	assert_int_equal(must(&g, "load.1_milli", 0), 2000);
	assert_int_equal(must(&g, "procs.running", 0), 2);
	assert_int_equal(rmdir(path), 0);
	/* and once it is there, it is read */
	put(f, "meminfo", "MemTotal: 10 kB\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "mem.total_kb", 0), 10);
	ift_sampler_free(s);
	ift_sampler_free(NULL);
}

/* EMIT's error stops the read and is returned; the next interval is intact. */
static void test_emit_error(void **state)
{
	struct fixture *f = *state;
	struct ift_sampler *s;
	struct got g;

	put(f, "stat", "cpu0 0 0 0 1000\n");
	s = ift_sampler_new_at(f->dir);
	assert_non_null(s);
	put(f, "stat", "cpu0 500 0 0 1500\n");
	memset(&g, 0, sizeof(g));
	g.fail_at = 2;
	assert_int_equal(ift_sampler_read(s, collect, &g), -42);
	assert_int_equal(g.calls, 2);
	/* 100 busy of 1000 since the read EMIT stopped, not 600 of 2000 */
	put(f, "stat", "cpu0 600 0 0 2400\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	/* no EMIT: the baseline moves on all the same */
	put(f, "stat", "cpu0 1600 0 0 2400\n");
	assert_int_equal(ift_sampler_read(s, NULL, NULL), 0);
	put(f, "stat", "cpu0 1700 0 0 3300\n");
	assert_int_equal(read_into(s, &g), 0);
	assert_int_equal(must(&g, "cpu.busy_permille", 1), 100);
	ift_sampler_free(s);
}

/* ---- the real /proc --------------------------------------------------- */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The cpuN lines of /proc/stat, read with stdio: the CPUs online now. */
static unsigned count_proc_cpus(void)
{
	char line[4096];
	unsigned n = 0, cpu;
	FILE *fp = fopen("/proc/stat", "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		/* %u would skip the blanks of the total line "cpu  56677" */
		if (!strncmp(line, "cpu", 3) && line[3] >= '0' &&
		    line[3] <= '9' && sscanf(line + 3, "%u ", &cpu) == 1)
			n++;
	fclose(fp);
	return n;
}

static int64_t meminfo_kb(const char *key)
{
	char line[256];
	long long v = -1, x;
	size_t kl = strlen(key);
	FILE *fp = fopen("/proc/meminfo", "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, kl) && line[kl] == ':' &&
		    sscanf(line + kl + 1, "%lld", &x) == 1)
			v = x;
	fclose(fp);
	return v;
}

static void test_real_proc(void **state)
{
	struct ift_sampler *s;
	int64_t busy, avail, total, truth;
	unsigned ncpu, scopes = 0;
	struct got g;

	(void)state;
	s = ift_sampler_new();
	assert_non_null(s);
	sleep_ms(200);
	assert_int_equal(read_into(s, &g), 0);
	truth = meminfo_kb("MemAvailable");
	ncpu = count_proc_cpus();

	busy = must(&g, "cpu.busy_permille", 0);
	assert_true(busy >= 0 && busy <= 1000);
	assert_true(must(&g, "procs.running", 0) >= 1);
	assert_true(must(&g, "procs.blocked", 0) >= 0);
	assert_true(must(&g, "load.1_milli", 0) >= 0);
	total = must(&g, "mem.total_kb", 0);
	assert_int_equal(total, meminfo_kb("MemTotal"));
	avail = must(&g, "mem.available_kb", 0);
	assert_true(avail <= total);
	assert_true(truth > 0);
	if (avail < truth * 95 / 100 || avail > truth * 105 / 100)
		fail_msg("MemAvailable %lld kB, sampler %lld kB",
			 (long long)truth, (long long)avail);
	assert_true(find(&g, "swap.used_kb", 0, NULL));
	assert_true(find(&g, "swap.in_pages", 0, NULL));
	assert_true(find(&g, "swap.out_pages", 0, NULL));
	assert_sane(&g);

	/* every online CPU ticked in 200 ms, so each has its figures */
	for (size_t i = 0; i < g.n; i++)
		scopes += g.r[i].scope && !strcmp(g.r[i].metric,
						  "cpu.busy_permille");
	assert_int_equal(scopes, ncpu);
	ift_sampler_free(s);
}

/* The first CPU we may run on. */
static int first_allowed_cpu(void)
{
	cpu_set_t set;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	fail_msg("no CPU in our affinity mask");
	return -1;
}

/*
 * A child pinned to one CPU burns 300 ms of CPU between two reads.  The truth
 * is its own CPU time by getrusage over the wall time between the reads: on
 * its CPU that is nearly 1000 permille, over all of them 1000 / ncpu (500 on
 * two).  Other load only adds to busy, so the checks are lower bounds; the
 * slack covers the jiffy rounding of /proc/stat at both reads (a few ticks
 * in 30 per CPU).
 */
static void test_cpu_burn(void **state)
{
	struct ift_sampler *s;
	struct rusage ru;
	double t0, t1, child_s;
	int64_t truth_total, truth_cpu, busy_total, busy_cpu;
	int cpu, status;
	unsigned ncpu;
	struct got g;
	pid_t pid;

	(void)state;
	cpu = first_allowed_cpu();
	ncpu = count_proc_cpus();
	s = ift_sampler_new();
	assert_non_null(s);
	t0 = now_s(CLOCK_MONOTONIC);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cpu_set_t set;
		volatile unsigned long spin = 0;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			_exit(2);
		while (now_s(CLOCK_PROCESS_CPUTIME_ID) < 0.3)
			for (int k = 0; k < 10000; k++)
				spin++;
		_exit(0);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	t1 = now_s(CLOCK_MONOTONIC);
	assert_int_equal(read_into(s, &g), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	child_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	assert_true(child_s >= 0.29);
	truth_cpu = (int64_t)(child_s / (t1 - t0) * 1000);
	truth_total = truth_cpu / ncpu;
	busy_total = must(&g, "cpu.busy_permille", 0);
	busy_cpu = must(&g, "cpu.busy_permille", (unsigned)cpu + 1);
	if (busy_total < truth_total - truth_total / 8 - 30)
		fail_msg("busy %lld permille over %u CPUs, child alone %lld",
			 (long long)busy_total, ncpu, (long long)truth_total);
	if (busy_cpu < truth_cpu - truth_cpu / 8 - 60)
		fail_msg("cpu%d busy %lld permille, child alone %lld", cpu,
			 (long long)busy_cpu, (long long)truth_cpu);
	if (ncpu == 2)
		assert_true(busy_total >= 400 - 50);
	ift_sampler_free(s);
}

#define FIXTURE_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_stat_permille),
		FIXTURE_TEST(test_stat_few_columns),
		FIXTURE_TEST(test_meminfo_loadavg_vmstat),
		FIXTURE_TEST(test_hotplug),
		FIXTURE_TEST(test_garbage_stat),
		FIXTURE_TEST(test_long_stat),
		FIXTURE_TEST(test_garbage_other_files),
		FIXTURE_TEST(test_fuzz),
		FIXTURE_TEST(test_missing_and_unreadable),
		FIXTURE_TEST(test_emit_error),
		cmocka_unit_test(test_real_proc),
		cmocka_unit_test(test_cpu_burn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
