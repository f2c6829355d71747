// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace check: can recording work here, and what is missing if not.
 * One line per finding, "OK|WARN|FAIL  what  (fix: ...)"; FAIL is something
 * recording cannot do without, WARN something it works around.  The kernel's
 * features, their releases and what a recording does without each come from
 * the core's table (ift_kfeatures()): this file only renders them.
 */
#include <errno.h>
#include <getopt.h>
#include <json.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ift-discover.h"
#include "ift-error.h"
#include "ift-probe.h"
#include "ift-record.h"
#include "ift-render.h"
#include "util/array.h"

extern char **environ;

static const char usage[] = "check [--json] [--cleanup]";
static const char help[] =
	"Checks that this machine can record: each kernel feature recording\n"
	"uses (tracefs, uprobes, instances, pid filtering, the trace clock, the\n"
	"tracepoints, the mapped rings) with the release of Linux that brought\n"
	"it and what a recording does without it, privileges, the CUDA libraries\n"
	"found, and what runs killed before their cleanup left in tracefs.\n\n"
	"    --json       one JSON object instead of lines\n"
	"    --cleanup    remove the leftovers of dead runs\n"
	"\nExits 0 when recording can work, 1 otherwise.\n";

enum verdict { V_OK, V_WARN, V_FAIL };
static const char *const verdict_name[] = { "OK", "WARN", "FAIL" };

struct finding {
	const char *id;			/* stable, for --json readers */
	enum verdict v;
	char what[512];
	const char *fix;		/* NULL when nothing is to be done */
	const char *since;		/* a kernel feature's release, else NULL */
};

struct report {
	struct finding *v;
	size_t n, cap;
	bool oom;
};

/* Adds a finding; FIX is dropped for OK.  Out of memory sets R->oom. */
static void add(struct report *r, const char *id, enum verdict v, const char *fix,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void add(struct report *r, const char *id, enum verdict v, const char *fix,
		const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (ift_array_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)) < 0) {
		r->oom = true;
		return;
	}
	f = &r->v[r->n++];
	f->id = id;
	f->v = v;
	f->fix = v == V_OK ? NULL : fix;
	f->since = NULL;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
}

/* Whether tracefs was mounted before we looked (looking mounts it). */
static bool tracing_mounted(void)
{
	struct mntent ent, *m;
	char line[8192];
	bool found = false;
	FILE *f;

	f = setmntent("/proc/mounts", "re");
	if (!f)
		return false;
	while (!found && (m = getmntent_r(f, &ent, line, sizeof(line))))
		found = !strcmp(m->mnt_type, "tracefs");
	endmntent(f);
	return found;
}

/*
 * What a plain record refuses without is a FAIL; --stack's needs and
 * fallbacks warn; one that no recording needs or uses unasked (the mapped
 * rings) is said, not warned of.
 */
static enum verdict missing_verdict(const struct ift_kfeature *f)
{
	if (!f->needs && !f->uses)
		return V_OK;
	return f->needs & (IFT_KF_ALL | IFT_KF_UPROBES | IFT_KF_HOST) ? V_FAIL : V_WARN;
}

/* One line per kernel feature, in the table's order. */
static void check_features(struct report *r, const struct ift_tracefs_caps *caps,
			   bool was_mounted)
{
	const struct ift_kfeature *f;
	size_t n;

	f = ift_kfeatures(&n);
	for (size_t i = 0; i < n; i++) {
		bool have = ift_kfeature_have(&f[i], caps);
		char what[480];

		ift_kfeature_str(&f[i], have, what, sizeof(what));
		/* tracefs: where the files are, which the other lines read */
		if (!strcmp(f[i].id, "tracefs") && have)
			add(r, f[i].id, V_OK, NULL, "tracefs mounted at %s%s", caps->dir,
			    was_mounted ? "" : " (mounted it now)");
		else if (!strcmp(f[i].id, "tracefs"))
			add(r, f[i].id, missing_verdict(&f[i]), f[i].fix, "%s (files at %s)",
			    what, caps->dir);
		else if (!strcmp(f[i].id, "ring_mmap") && !caps->ring_mmap_tried)
			add(r, f[i].id, V_OK, NULL, "%s: not tried (only a mapping of a ring "
			    "tells, on an instance of check's own: run as root)", f[i].name);
		else
			add(r, f[i].id, have ? V_OK : missing_verdict(&f[i]), f[i].fix, "%s",
			    what);
		if (r->n && !r->oom)
			r->v[r->n - 1].since = f[i].since;
	}
}

static void check_kernel(struct report *r, struct ift_tracefs_caps *caps)
{
	bool was_mounted = tracing_mounted();
	int ret;

	ret = ift_tracefs_probe_caps(caps);
	if (ret < 0 || !caps->dir) {
		add(r, "tracefs", V_FAIL,
		    geteuid() ? "run as root: only root can mount tracefs"
			      : "a kernel with CONFIG_FTRACE; mount -t tracefs nodev /sys/kernel/tracing",
		    "tracefs: not mounted and cannot be mounted (%s)",
		    strerror(errno ? errno : ENODEV));
		return;
	}
	/* tracefs is root's only: without access every file looks missing */
	if (access(caps->dir, R_OK | X_OK)) {
		add(r, "tracefs", V_OK, NULL, "tracefs mounted at %s%s", caps->dir,
		    was_mounted ? "" : " (mounted it now)");
		add(r, "features", V_WARN, "run as root",
		    "kernel features: cannot look into %s (%s)", caps->dir, strerror(errno));
	} else {
		/* the one feature only a try shows: failing to try leaves it untold */
		(void)ift_record_probe_mapping(caps);
		check_features(r, caps, was_mounted);
	}
	add(r, "privileges", caps->root ? V_OK : V_FAIL,
	    "run as root (or with CAP_SYS_ADMIN and write access to tracefs)",
	    "privileges: %s write %s", caps->root ? "can" : "cannot", caps->dir);
}

static void check_libs(struct report *r, struct ift_libset *set)
{
	struct ift_discover_opts o = { .envp = environ };
	int ret;

	ret = ift_discover(&o, set);
	if (ret < 0) {
		add(r, "cuda_libraries", V_WARN, "check that the CUDA directories are readable",
		    "CUDA libraries: cannot look for them: %s", ift_strerror(ret));
		return;
	}
	if (!set->n) {
		add(r, "cuda_libraries", V_WARN,
		    "install the CUDA toolkit, or record finds the libraries of the traced command itself",
		    "CUDA libraries: none in the usual CUDA directories");
		return;
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct ift_lib *l = &set->v[i];

		add(r, "cuda_library", l->nsyms ? V_OK : V_WARN,
		    "none: no function of the catalog in this file, nothing to probe",
		    "CUDA library %s: %zu functions (%s, found by %s)", l->path, l->nsyms,
		    ift_api_name(l->api), l->found_by ? l->found_by : "?");
	}
}

static void check_leftovers(struct report *r, bool cleanup, int *cleaned)
{
	struct ift_leftover v[64];
	int n;

	*cleaned = -1;
	if (cleanup) {
		*cleaned = ift_probe_cleanup_leftovers();
		if (*cleaned < 0)
			add(r, "cleanup", V_FAIL, "run as root, and stop readers of those instances",
			    "cleanup: cannot remove leftovers: %s", ift_strerror(*cleaned));
		else
			add(r, "cleanup", V_OK, NULL, "cleanup: removed %d leftover%s of dead runs",
			    *cleaned, *cleaned == 1 ? "" : "s");
	}
	n = ift_probe_count_teardowns();
	if (n > 0)
		add(r, "teardowns", V_OK, NULL, "teardowns: %d finished run%s probes being "
		    "removed by %s helper", n, n == 1 ? "'s" : "s'", n == 1 ? "its" : "their");
	n = ift_probe_find_leftovers(v, sizeof(v) / sizeof(v[0]));
	if (n < 0) {
		add(r, "leftovers", V_WARN, "run as root",
		    "leftovers: cannot look for them: %s", ift_strerror(n));
		return;
	}
	if (!n) {
		add(r, "leftovers", V_OK, NULL, "leftovers: none from dead runs");
		return;
	}
	for (int i = 0; i < n && i < (int)(sizeof(v) / sizeof(v[0])); i++) {
		char holders[256];

		ift_leftover_holders_str(&v[i], holders, sizeof(holders));
		if (v[i].nholders)
			add(r, "leftover", V_WARN,
			    "end those processes, then ingero-ftrace check --cleanup",
			    "leftover %s %s of dead run %d, held open by %s", v[i].kind,
			    v[i].name, (int)v[i].owner, holders);
		else
			add(r, "leftover", V_WARN, "ingero-ftrace check --cleanup",
			    "leftover %s %s of dead run %d", v[i].kind, v[i].name,
			    (int)v[i].owner);
	}
	if (n > (int)(sizeof(v) / sizeof(v[0])))
		add(r, "leftover", V_WARN, "ingero-ftrace check --cleanup",
		    "%d more leftovers", n - (int)(sizeof(v) / sizeof(v[0])));
}

static void print_text(const struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = &r->v[i];

		if (f->fix)
			printf("%-4s  %s  (fix: %s)\n", verdict_name[f->v], f->what, f->fix);
		else
			printf("%-4s  %s\n", verdict_name[f->v], f->what);
	}
}

static int print_json(const struct report *r, const struct ift_tracefs_caps *caps,
		      const struct ift_libset *set, bool ok, int cleaned)
{
	struct json_object *root, *arr, *o;
	int ret;

	root = json_object_new_object();
	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "ok", json_object_new_boolean(ok));
	json_object_object_add(root, "tracefs",
			       caps->dir ? json_object_new_string(caps->dir) : NULL);
	json_object_object_add(root, "debugfs", json_object_new_boolean(caps->debugfs));

	arr = json_object_new_array();
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = &r->v[i];

		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_string(f->id));
		json_object_object_add(o, "status", json_object_new_string(verdict_name[f->v]));
		json_object_object_add(o, "what", json_object_new_string(f->what));
		json_object_object_add(o, "fix", f->fix ? json_object_new_string(f->fix) : NULL);
		if (f->since)
			json_object_object_add(o, "since", json_object_new_string(f->since));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "checks", arr);

	arr = json_object_new_array();
	for (size_t i = 0; i < set->n; i++) {
		const struct ift_lib *l = &set->v[i];

		o = json_object_new_object();
		json_object_object_add(o, "path", json_object_new_string(l->path));
		json_object_object_add(o, "api", json_object_new_string(ift_api_name(l->api)));
		json_object_object_add(o, "functions", json_object_new_int64((int64_t)l->nsyms));
		json_object_object_add(o, "found_by",
				       l->found_by ? json_object_new_string(l->found_by) : NULL);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "libraries", arr);
	if (cleaned >= 0)
		json_object_object_add(root, "cleaned", json_object_new_int(cleaned));

	ret = ift_json_print_pretty(stdout, root);
	json_object_put(root);
	return ret;
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cleanup", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_options co = {
		.usage = usage, .help = help, .shortopts = "+h", .longopts = longopts,
	};
	struct ift_tracefs_caps caps = { 0 };
	struct report r = { 0 };
	struct ift_libset set;
	bool json = false, cleanup = false, ok = true;
	int c, cleaned = -1, status;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'c':
			cleanup = true;
			break;
		}
	}
	if (c < 0)
		return co.status;

	ift_libset_init(&set);
	check_kernel(&r, &caps);
	check_libs(&r, &set);
	if (caps.dir)
		check_leftovers(&r, cleanup, &cleaned);
	if (r.oom) {
		ift_libset_release(&set);
		free(r.v);
		error("cannot check: %s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].v == V_FAIL)
			ok = false;
	status = ok ? EXIT_OK : EXIT_RUNTIME;
	if (json) {
		if (print_json(&r, &caps, &set, ok, cleaned) < 0) {
			error("cannot print JSON: %s", strerror(ENOMEM));
			status = EXIT_RUNTIME;
		}
	} else {
		print_text(&r);
	}
	ift_libset_release(&set);
	free(r.v);
	return status;
}
