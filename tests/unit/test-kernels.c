// SPDX-License-Identifier: MIT
/*
 * Tests of src/probe against kernels older than this one: what each kernel
 * offers is read from fake tracing trees laid out as kernels from 3.10 to
 * 5.10 have them (fixtures/tracefs), which needs neither root nor tracefs;
 * and the page counts of a hist trigger, parsed from a kernel's text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-error.h"
#include "ift-probe.h"
#include "ift-record.h"
#include "slurp.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- kernels older than this one: fake tracing trees -------------------- */

/*
 * fixtures/tracefs/VERSION/files lists the tracing files of that kernel;
 * this lays them out under a fresh directory, empty but for README and
 * trace_clock, which take the text of the fixture files of that name.
 */
struct fake_tree {
	char dir[64];
	bool debugfs;
};

static void fixture_path(char *buf, size_t len, const char *version, const char *file)
{
	const char *dir = getenv("IFT_FIXTURES");

	snprintf(buf, len, "%s/tracefs/%s/%s", dir ? dir : "fixtures", version, file);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			fail_msg("cannot make '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		fail_msg("cannot make '%s': %s", buf, strerror(errno));
}

static void fake_tree_build(struct fake_tree *t, const char *version)
{
	char list[PATH_MAX], line[512], path[PATH_MAX], src[PATH_MAX];
	bool where = false;
	FILE *f;

	snprintf(t->dir, sizeof(t->dir), "/tmp/ift-tracefs-%s-XXXXXX", version);
	assert_non_null(mkdtemp(t->dir));
	fixture_path(list, sizeof(list), version, "files");
	f = fopen(list, "r");
	if (!f)
		fail_msg("cannot open '%s': %s", list, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		char *text;
		int fd;

		line[n] = 0;
		if (!n || line[0] == '#')
			continue;
		if (line[0] == '@') {
			assert_false(where);
			assert_true(!strcmp(line, "@debugfs") || !strcmp(line, "@tracefs"));
			t->debugfs = !strcmp(line, "@debugfs");
			where = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", t->dir, line);
		if (line[n - 1] == '/') {
			mkdirs(path);
			continue;
		}
		*strrchr(path, '/') = 0;
		mkdirs(path);
		path[strlen(path)] = '/';
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			fail_msg("cannot create '%s': %s", path, strerror(errno));
		fixture_path(src, sizeof(src), version, line);
		if (!strchr(line, '/') && (text = slurp(src))) {
			assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
			free(text);
		}
		close(fd);
	}
	fclose(f);
	assert_true(where);
}

/* The tree of the running test; its teardown removes it if the test fails. */
static struct fake_tree tree;

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fake_tree_remove(struct fake_tree *t)
{
	if (t->dir[0] && strncmp(t->dir, "/tmp/ift-tracefs-", 17) == 0)
		nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	t->dir[0] = 0;
}

static int tree_teardown(void **state)
{
	(void)state;
	fake_tree_remove(&tree);
	return 0;
}

/* What each tree must show, field by field of struct ift_tracefs_caps. */
struct kernel_caps {
	const char *version;
	bool debugfs, uprobes, uretprobes, fetch_args, instances, pipe_raw;
	bool set_event_pid, event_fork, mono_clock, sched_events, sched_waking;
	bool task_events, kmem_events, hist_triggers;
};

static const struct kernel_caps kernels[] = {
	/* debugfs, no README probe syntax, no trigger files: fetch-args came later */
	{ "3.10", true, true, true, false, true, true,
	  false, false, false, true, false, true, true, false },
	/* return probes and fetch-args known by instances/ and trigger files */
	{ "4.4", false, true, true, true, true, true,
	  true, false, true, true, true, true, true, false },
	/* README: "p|r[:[<group>/]<event>]" */
	{ "4.9", false, true, true, true, true, true,
	  true, true, true, true, true, true, true, true },
	/* README: "r[maxactive][:[<group>/]<event>]" */
	{ "4.15", false, true, true, true, true, true,
	  true, true, true, true, true, true, true, true },
	{ "4.18", false, true, true, true, true, true,
	  true, true, true, true, true, true, true, true },
	{ "5.10", false, true, true, true, true, true,
	  true, true, true, true, true, true, true, true },
};

/* The caps of VERSION's tree, built in TREE; the one before is removed. */
static void caps_of(const char *version, struct ift_tracefs_caps *caps)
{
	fake_tree_remove(&tree);
	fake_tree_build(&tree, version);
	assert_int_equal(ift_tracefs_probe_caps_at(tree.dir, tree.debugfs, caps), 0);
	assert_string_equal(caps->dir, tree.dir);
}

static void test_kernel_caps(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(kernels); i++) {
		const struct kernel_caps *k = &kernels[i];
		struct ift_tracefs_caps c;

		caps_of(k->version, &c);
		print_message("Linux %s\n", k->version);
		assert_int_equal(c.debugfs, k->debugfs);
		assert_int_equal(c.tracefs, !k->debugfs);
		assert_int_equal(c.perf_clockid, !k->debugfs);
		assert_int_equal(c.uprobes, k->uprobes);
		assert_int_equal(c.uretprobes, k->uretprobes);
		assert_int_equal(c.fetch_args, k->fetch_args);
		assert_int_equal(c.instances, k->instances);
		assert_int_equal(c.pipe_raw, k->pipe_raw);
		assert_int_equal(c.set_event_pid, k->set_event_pid);
		assert_int_equal(c.event_fork, k->event_fork);
		assert_int_equal(c.mono_clock, k->mono_clock);
		assert_int_equal(c.sched_events, k->sched_events);
		assert_int_equal(c.sched_waking, k->sched_waking);
		assert_int_equal(c.task_events, k->task_events);
		assert_int_equal(c.kmem_events, k->kmem_events);
		assert_int_equal(c.hist_triggers, k->hist_triggers);
	}
}

struct hist_seen {
	uint32_t tid[8];
	unsigned order[8];
	uint64_t hits[8];
	size_t n;
};

static int on_hist(void *ctx, uint32_t tid, unsigned order, uint64_t hits)
{
	struct hist_seen *h = ctx;

	if (h->n == 8)
		return -E2BIG;
	h->tid[h->n] = tid;
	h->order[h->n] = order;
	h->hits[h->n++] = hits;
	return 0;
}

/*
 * record --page-allocs=count reads its trigger's table as the kernel prints
 * it (fixtures/hist): every entry, the thread ids full width, Dropped; a
 * line it cannot read is an error, never a count of 0.
 */
static void test_hist_parse(void **state)
{
	const char *dir = getenv("IFT_FIXTURES");
	struct hist_seen h = { 0 };
	uint64_t dropped = 1;
	char path[PATH_MAX], *text;
	static const char *const bad[] = {
		"{ common_pid:        611, order:          0 } hitcount:\n",
		"{ common_pid:        611 } hitcount:          5\n",
		"{ common_pid:        611, order:         99 } hitcount:          5\n",
		"{ common_pid: 99999999999, order:          0 } hitcount:          5\n",
		"Totals:\n    Dropped: many\n",
	};

	(void)state;
	snprintf(path, sizeof(path), "%s/hist/mm_page_alloc.hist", dir ? dir : "fixtures");
	text = slurp(path);
	if (!text)
		fail_msg("cannot read '%s'", path);
	assert_int_equal(ift_hist_parse(text, on_hist, &h, &dropped), 0);
	assert_int_equal(h.n, 4);
	assert_int_equal(h.tid[0], 611);
	assert_int_equal(h.order[0], 0);
	assert_int_equal(h.hits[0], 12800);
	assert_int_equal(h.order[1], 9);
	assert_int_equal(h.hits[1], 3);
	assert_int_equal(h.tid[2], 612);
	assert_int_equal(h.tid[3], 4194304000U);
	assert_int_equal(h.order[3], 2);
	assert_int_equal(h.hits[3], 40);
	assert_int_equal(dropped, 7);
	/* the callback's error ends the walk */
	h.n = 8;
	assert_int_equal(ift_hist_parse(text, on_hist, &h, &dropped), -E2BIG);
	free(text);
	/* an empty table (nothing allocated) */
	h.n = 0;
	assert_int_equal(ift_hist_parse("# event histogram\n\nTotals:\n    Hits: 0\n"
					"    Entries: 0\n    Dropped: 0\n", on_hist, &h, &dropped), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(dropped, 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		h.n = 0;
		if (ift_hist_parse(bad[i], on_hist, &h, &dropped) != -IFT_E_CORRUPT)
			fail_msg("read '%s' as a table", bad[i]);
	}
}

/* "4.15" as 4015000, "2.6.30" as 2006030 */
static long version_num(const char *v)
{
	unsigned a = 0, b = 0, c = 0;

	assert_true(sscanf(v, "%u.%u.%u", &a, &b, &c) >= 2);
	return (long)a * 1000000 + (long)b * 1000 + c;
}

/*
 * The release the table gives each feature agrees with the trees: a tree
 * older than it lacks the feature, one as new or newer has it.
 */
static void test_kernel_feature_versions(void **state)
{
	size_t n;
	const struct ift_kfeature *f = ift_kfeatures(&n);

	(void)state;
	assert_true(n > 10);
	for (size_t i = 0; i < ARRAY_SIZE(kernels); i++) {
		struct ift_tracefs_caps c;

		caps_of(kernels[i].version, &c);
		for (size_t k = 0; k < n; k++) {
			bool want = version_num(kernels[i].version) >= version_num(f[k].since);

			if (ift_kfeature_have(&f[k], &c) != want)
				fail_msg("Linux %s %s %s, which the table says came in %s",
					 kernels[i].version, want ? "lacks" : "has", f[k].id,
					 f[k].since);
		}
	}
}

/* What check says of a feature the kernel lacks: name, release, what is lost. */
static void test_kernel_feature_text(void **state)
{
	struct ift_tracefs_caps c;
	size_t n, missing = 0;
	const struct ift_kfeature *f = ift_kfeatures(&n);
	char buf[512], want[64];

	(void)state;
	caps_of("3.10", &c);
	for (size_t k = 0; k < n; k++) {
		assert_non_null(ift_kfeature_find(f[k].id));
		ift_kfeature_str(&f[k], ift_kfeature_have(&f[k], &c), buf, sizeof(buf));
		if (ift_kfeature_have(&f[k], &c)) {
			assert_non_null(strstr(buf, f[k].use));
			assert_null(strstr(buf, "brought it"));
			continue;
		}
		missing++;
		snprintf(want, sizeof(want), "%s: none;", f[k].name);
		assert_ptr_equal(strstr(buf, want), buf);
		snprintf(want, sizeof(want), "Linux %s brought it", f[k].since);
		assert_non_null(strstr(buf, want));
		assert_non_null(strstr(buf, f[k].without));
	}
	/* tracefs, fetch-args, set_event_pid, event-fork, mono, sched_waking, hist,
	   perf, the mapped rings */
	assert_int_equal(missing, 9);

	ift_kfeature_str(ift_kfeature_find("mono_clock"), false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "mono clock: none; Linux 3.17 brought it; the local clock"));
	ift_kfeature_str(ift_kfeature_find("set_event_pid"), false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "set_event_pid: none; Linux 4.4 brought it; every task's "
			       "events are read and the user-space filter drops"));
	ift_kfeature_str(ift_kfeature_find("sched_waking"), false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Linux 4.3 brought it; sched_wakeup alone"));
	ift_kfeature_str(ift_kfeature_find("fetch_args"), false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Linux 3.14 brought it"));
	assert_non_null(strstr(buf, "record refuses"));
	ift_kfeature_str(ift_kfeature_find("instances"), true, buf, sizeof(buf));
	assert_string_equal(buf, "instances: a ring buffer, trace clock and pid filter of "
			    "the run's own; nothing global changes");
}

/* Which missing feature stops a recording, and which ones it does without. */
static void test_kernel_refusal(void **state)
{
	const unsigned plain = IFT_KF_ALL | IFT_KF_PIDS | IFT_KF_UPROBES | IFT_KF_HOST;
	const unsigned host = IFT_KF_ALL | IFT_KF_PIDS | IFT_KF_HOST;
	struct ift_tracefs_caps c;
	const struct ift_kfeature *f;
	size_t n, without = 0;

	(void)state;
	caps_of("3.10", &c);
	/* functions to probe: the fetch-args of 3.14 */
	f = ift_kfeature_refusal(&c, plain);
	assert_non_null(f);
	assert_string_equal(f->id, "fetch_args");
	/* host events alone: 3.10 does, in user space, on the local clock... */
	assert_null(ift_kfeature_refusal(&c, host));
	f = ift_kfeatures(&n);
	for (size_t k = 0; k < n; k++)
		if (ift_kfeature_done_without(&f[k], &c, host))
			without++;
	/* tracefs, set_event_pid, event-fork, mono, sched_waking; not perf's */
	assert_int_equal(without, 5);
	assert_true(ift_kfeature_done_without(ift_kfeature_find("mono_clock"), &c, host));
	assert_true(ift_kfeature_done_without(ift_kfeature_find("sched_waking"), &c, host));
	assert_true(ift_kfeature_done_without(ift_kfeature_find("set_event_pid"), &c, host));
	assert_false(ift_kfeature_done_without(ift_kfeature_find("perf_clockid"), &c, host));
	/* -a filters nothing, --no-host has no use for sched_waking */
	assert_false(ift_kfeature_done_without(ift_kfeature_find("set_event_pid"), &c,
					       IFT_KF_ALL | IFT_KF_HOST));
	assert_false(ift_kfeature_done_without(ift_kfeature_find("sched_waking"), &c,
					       IFT_KF_ALL));
	/* --stack: the mono clock of 3.17 */
	f = ift_kfeature_refusal(&c, host | IFT_KF_STACK);
	assert_non_null(f);
	assert_string_equal(f->id, "mono_clock");
	c.mono_clock = true;
	/* and perf's use_clockid of 4.1 */
	f = ift_kfeature_refusal(&c, host | IFT_KF_STACK);
	assert_non_null(f);
	assert_string_equal(f->id, "perf_clockid");

	caps_of("4.4", &c);
	assert_null(ift_kfeature_refusal(&c, plain | IFT_KF_STACK));
	assert_true(ift_kfeature_done_without(ift_kfeature_find("event_fork"), &c, plain));
	assert_false(ift_kfeature_done_without(ift_kfeature_find("set_event_pid"), &c, plain));

	/* no instances: nothing can record */
	caps_of("5.10", &c);
	c.instances = false;
	f = ift_kfeature_refusal(&c, IFT_KF_ALL);
	assert_non_null(f);
	assert_string_equal(f->id, "instances");
	c.instances = true;
	c.sched_events = false;
	assert_string_equal(ift_kfeature_refusal(&c, plain)->id, "sched_events");
	/* --no-host */
	assert_null(ift_kfeature_refusal(&c, IFT_KF_ALL | IFT_KF_UPROBES | IFT_KF_STACK));

	/* --page-allocs=count: the hist triggers of 4.7, asked only then */
	caps_of("4.4", &c);
	f = ift_kfeature_refusal(&c, plain | IFT_KF_PAGE_COUNT);
	assert_non_null(f);
	assert_string_equal(f->id, "hist_triggers");
	assert_null(ift_kfeature_refusal(&c, plain));
	assert_false(ift_kfeature_done_without(ift_kfeature_find("hist_triggers"), &c, plain));
	caps_of("4.9", &c);
	assert_null(ift_kfeature_refusal(&c, plain | IFT_KF_PAGE_COUNT));
}

/* Whether PLAN does without the feature ID. */
static bool plan_without(const struct ift_record_plan *p, const char *id)
{
	for (size_t i = 0; i < p->nwithout; i++)
		if (!strcmp(p->without[i]->id, id))
			return true;
	return false;
}

/* What record makes of each kernel: refuses, or does without and says what. */
static void test_kernel_record_plan(void **state)
{
	struct ift_record_opts o = { 0 };
	struct ift_record_plan p;
	struct ift_tracefs_caps c;

	(void)state;
	caps_of("3.10", &c);
	/* counting page allocations: 3.10 has no hist triggers; --no-host asks none */
	o.page_count = true;
	ift_record_plan(&o, &c, false, &p);
	assert_non_null(p.refusal);
	assert_string_equal(p.refusal->id, "hist_triggers");
	o.no_host = true;
	ift_record_plan(&o, &c, false, &p);
	assert_true(!p.refusal || strcmp(p.refusal->id, "hist_triggers"));
	o.page_count = o.no_host = false;
	/* CUDA functions to probe: no fetch-args, so no */
	ift_record_plan(&o, &c, true, &p);
	assert_non_null(p.refusal);
	assert_string_equal(p.refusal->id, "fetch_args");
	/* host events alone: in user space, on the local clock, by sched_wakeup */
	ift_record_plan(&o, &c, false, &p);
	assert_null(p.refusal);
	assert_true(p.user_filter);
	assert_int_equal(p.nwithout, 5);
	assert_true(plan_without(&p, "tracefs"));
	assert_true(plan_without(&p, "set_event_pid"));
	assert_true(plan_without(&p, "event_fork"));
	assert_true(plan_without(&p, "mono_clock"));
	assert_true(plan_without(&p, "sched_waking"));
	/* --stack: the mono clock first */
	o.stack = true;
	ift_record_plan(&o, &c, false, &p);
	assert_non_null(p.refusal);
	assert_string_equal(p.refusal->id, "mono_clock");
	o.stack = false;

	caps_of("4.4", &c);
	ift_record_plan(&o, &c, true, &p);
	assert_null(p.refusal);
	/* set_event_pid, but no event-fork to follow the children with */
	assert_true(p.user_filter);
	assert_int_equal(p.nwithout, 1);
	assert_true(plan_without(&p, "event_fork"));
	/* -a: no filter at all, nothing done without */
	o.all = true;
	ift_record_plan(&o, &c, true, &p);
	assert_false(p.user_filter);
	assert_int_equal(p.nwithout, 0);
	o.all = false;

	for (size_t i = 2; i < ARRAY_SIZE(kernels); i++) {
		caps_of(kernels[i].version, &c);
		o.stack = true;
		ift_record_plan(&o, &c, true, &p);
		assert_null(p.refusal);
		assert_false(p.user_filter);
		assert_int_equal(p.nwithout, 0);
		o.stack = false;
	}
	/* the hidden --user-filter still asks for it */
	o.user_filter = true;
	ift_record_plan(&o, &c, true, &p);
	assert_true(p.user_filter);
	/* no page allocations: a recording without them */
	o.user_filter = false;
	c.kmem_events = false;
	ift_record_plan(&o, &c, true, &p);
	assert_null(p.refusal);
	assert_int_equal(p.nwithout, 1);
	assert_true(plan_without(&p, "kmem_events"));
	/* --no-host does without the sched tracepoints */
	c.sched_events = c.sched_waking = false;
	o.no_host = true;
	ift_record_plan(&o, &c, true, &p);
	assert_null(p.refusal);
	assert_int_equal(p.nwithout, 0);	/* nor kmem */
	o.no_host = false;
	ift_record_plan(&o, &c, true, &p);
	assert_string_equal(p.refusal->id, "sched_events");
}

/*
 * The README's "Kernels" table has a row per feature, with the table's
 * release, and the minimum it gives is the newest a plain record needs.
 */
static void test_kernel_readme_table(void **state)
{
	const char *fix = getenv("IFT_FIXTURES");
	char path[PATH_MAX], row[128], min[64];
	const struct ift_kfeature *f;
	const char *newest = "0.0";
	char *text, *sec, *end;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/../README.md", fix ? fix : "fixtures");
	text = slurp(path);
	if (!text)
		fail_msg("cannot read '%s'", path);
	sec = strstr(text, "\n## Kernels\n");
	assert_non_null(sec);
	end = strstr(sec + 1, "\n## ");
	if (end)
		*end = 0;
	f = ift_kfeatures(&n);
	for (size_t k = 0; k < n; k++) {
		char *line, *cell;

		snprintf(row, sizeof(row), "\n| %s | ", f[k].name);
		line = strstr(sec, row);
		if (!line)
			fail_msg("no row '| %s |' in README's Kernels table", f[k].name);
		/* the third cell: | name | use | since | without | */
		cell = strchr(strchr(line + 2, '|') + 1, '|') + 1;
		snprintf(row, sizeof(row), " %s |", f[k].since);
		if (strncmp(cell, row, strlen(row)))
			fail_msg("README gives %s another release than %s", f[k].name, f[k].since);
		if ((f[k].needs & (IFT_KF_ALL | IFT_KF_PIDS | IFT_KF_UPROBES | IFT_KF_HOST)) &&
		    version_num(f[k].since) > version_num(newest))
			newest = f[k].since;
	}
	snprintf(min, sizeof(min), "**Linux %s** or later", newest);
	if (!strstr(sec, min))
		fail_msg("README's Kernels section does not say %s", min);
	free(text);
}

/* No directory there: an error, and nothing claimed. */
static void test_kernel_no_dir(void **state)
{
	struct ift_tracefs_caps c;

	(void)state;
	assert_int_equal(ift_tracefs_probe_caps_at("/nonexistent/tracing", false, &c), -ENOENT);
	assert_null(c.dir);
	assert_false(c.uprobes);
}

/* ARGV[1], a glob, runs the tests it matches only: 'test_kernel_*' needs no root */

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_kernel_caps, tree_teardown),
		cmocka_unit_test_teardown(test_kernel_feature_versions, tree_teardown),
		cmocka_unit_test_teardown(test_kernel_feature_text, tree_teardown),
		cmocka_unit_test_teardown(test_kernel_refusal, tree_teardown),
		cmocka_unit_test_teardown(test_kernel_record_plan, tree_teardown),
		cmocka_unit_test(test_kernel_readme_table),
		cmocka_unit_test(test_hist_parse),
		cmocka_unit_test(test_kernel_no_dir),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
