// SPDX-License-Identifier: MIT
/*
 * Tests of src/probe against the real kernel (older kernels' fake tracing
 * trees are test-kernels.c's): they need root and tracefs, skip without
 * them, and fail without them when CI=true (a skipped tracing test in CI
 * hides a broken runner).
 *
 * The library under the probes is the real libcudart.so.13; its symbols are
 * resolved here with readelf(1), independently of src/discover, and its
 * cudaMalloc is called by a forked child through dlopen().  What the kernel
 * recorded is read back raw with tracefs_iterate_raw_events() and held against
 * what the child passed and got.
 *
 * Every test leaves uprobe_events and instances/ as it found them; the
 * leftover test plants objects by hand and removes them in its teardown
 * whatever happened.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <ftw.h>
#include <tracefs.h>

#include "ift-discover.h"
#include "ift-error.h"
#include "ift-probe.h"
#include "ift-record.h"
#include "slurp.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The runtime the probes go on: NVIDIA's on x86-64; on aarch64, where it is
 * in no package here, the arm64 build of contrib/simcuda (GNUmakefile).
 * BYTES_REG: where cudaMalloc's size is at its entry, by each ABI.
 */
#ifndef IFT_TEST_CUDART
#define IFT_TEST_CUDART "/usr/local/cuda-13.0/lib/libcudart.so.13"
#endif
#define CUDART IFT_TEST_CUDART
#if defined(__aarch64__)
#define BYTES_REG "%%x1"
#else
#define BYTES_REG "%%si"
#endif
#define MALLOC_BYTES 123456789ULL

/* ---- prerequisites ------------------------------------------------------ */

static bool in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

/* Root and a writable tracefs, or skip (fail in CI). */
static const char *need_root(void)
{
	char path[PATH_MAX];
	const char *dir = NULL;

	if (!geteuid())
		dir = ift_tracefs_dir();
	if (dir) {
		snprintf(path, sizeof(path), "%s/uprobe_events", dir);
		if (!access(path, W_OK))
			return dir;
	}
	if (in_ci())
		fail_msg("needs root and a writable tracefs with uprobes; CI must not skip tracing tests");
	skip();
	return NULL;
}

/*
 * Skip where the test runs under a user-mode emulator (the arm64 build on
 * x86-64, make check): the traps of uprobes never fire in code it
 * translates, and it lacks some system calls (clone3 in QEMU 7.2).  These
 * tests run natively in the arm64 guests (make check-kernels ARCH=aarch64).
 */
static void need_native(const char *why)
{
	const char *emu = getenv("IFT_TEST_EMULATOR");

	if (!emu || !*emu)
		return;
	fprintf(stderr, "skip: under %s: %s\n", emu, why);
	skip();
}

static void need_cudart(void)
{
	if (!access(CUDART, R_OK))
		return;
	if (in_ci())
		fail_msg("'%s' is missing; CI must not skip tracing tests", CUDART);
	skip();
}

/* ---- tracefs as seen from here ------------------------------------------ */

static char *tfile(const char *dir, const char *file)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		fail_msg("path too long");
	return slurp(path);
}

/* uprobe_events lines of GROUP. */
static int group_lines(const char *dir, const char *group)
{
	char *text = tfile(dir, "uprobe_events"), *p, needle[96];
	int n = 0;

	assert_non_null(text);
	snprintf(needle, sizeof(needle), ":%s/", group);
	for (p = text; (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

static bool instance_exists(const char *dir, const char *name)
{
	char path[PATH_MAX * 2];
	struct stat st;

	snprintf(path, sizeof(path), "%s/instances/%s", dir, name);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static void twrite(const char *dir, const char *file, const char *str, bool append)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		fail_msg("cannot open '%s': %s", path, strerror(errno));
	if (write(fd, str, strlen(str)) != (ssize_t)strlen(str))
		fail_msg("cannot write '%s' to '%s': %s", str, path, strerror(errno));
	close(fd);
}

/* Same, without failing: for teardowns. */
static void twrite_quiet(const char *dir, const char *file, const char *str, bool append)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return;
	if (write(fd, str, strlen(str)) < 0)
		(void)0;
	close(fd);
}

static void own_name(char *buf, size_t len)
{
	snprintf(buf, len, "ingero_%d", (int)getpid());
}

/* Nothing of this process's sessions left in tracefs. */
static void assert_clean(const char *dir)
{
	char name[32];

	own_name(name, sizeof(name));
	assert_int_equal(group_lines(dir, name), 0);
	assert_false(instance_exists(dir, name));
}

/* ---- libcudart's symbols, by readelf ------------------------------------ */

struct seg {
	uint64_t off, vaddr, memsz;
};

/* The file offset of the function NAME, from `readelf -lW` and `readelf -Ws`. */
static uint64_t readelf_offset(const char *path, const char *name)
{
	struct seg segs[16];
	size_t nsegs = 0;
	char cmd[PATH_MAX + 64], line[1024];
	uint64_t vaddr = 0;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long o, v, p, fs, ms;

		if (nsegs < ARRAY_SIZE(segs) &&
		    sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx", &o, &v, &p,
			   &fs, &ms) == 5) {
			segs[nsegs].off = o;
			segs[nsegs].vaddr = v;
			segs[nsegs].memsz = ms;
			nsegs++;
		}
	}
	assert_int_equal(pclose(f), 0);
	assert_true(nsegs > 0);

	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char type[32], ndx[16], sym[512];
		unsigned long long v;
		size_t l = strlen(name);

		if (sscanf(line, " %*[0-9]: %llx %*s %31s %*s %*s %15s %511s", &v, type,
			   ndx, sym) != 4)
			continue;
		if (strcmp(type, "FUNC") || !strcmp(ndx, "UND") || strncmp(sym, name, l) ||
		    (sym[l] && sym[l] != '@'))
			continue;
		vaddr = v;
		found = true;
	}
	pclose(f);
	if (!found)
		fail_msg("no function '%s' in '%s'", name, path);
	for (size_t i = 0; i < nsegs; i++)
		if (vaddr >= segs[i].vaddr && vaddr < segs[i].vaddr + segs[i].memsz)
			return vaddr - segs[i].vaddr + segs[i].off;
	fail_msg("'%s' at 0x%" PRIx64 " is in no PT_LOAD", name, vaddr);
	return 0;
}

static const struct ift_func_spec *spec_of(const char *name)
{
	for (size_t i = 0; i < ift_cuda_nfuncs; i++)
		if (!strcmp(ift_cuda_funcs[i].name, name))
			return &ift_cuda_funcs[i];
	fail_msg("'%s' is not in the catalog", name);
	return NULL;
}

/* The session of the running test, destroyed by its teardown if it fails. */
static struct ift_probe_session *sess;

static int session_teardown(void **state)
{
	(void)state;
	ift_probe_session_destroy(sess);
	sess = NULL;
	return 0;
}

static int create(const struct ift_probe_opts *opts, struct ift_probe_session **s)
{
	int ret = ift_probe_session_create(opts, s);

	if (!ret)
		sess = *s;
	return ret;
}

static void destroy(struct ift_probe_session *s)
{
	ift_probe_session_destroy(s);
	if (s == sess)
		sess = NULL;
}

static const char *const traced[] = { "cudaMalloc", "cudaFree", "cudaStreamSynchronize" };

/* libcudart with the three functions, built by hand. */
static void make_lib(struct ift_lib *lib, struct ift_sym *syms, char *path)
{
	memset(lib, 0, sizeof(*lib));
	lib->path = path;
	lib->api = IFT_API_RUNTIME;
	lib->found_by = "test";
	lib->syms = syms;
	lib->nsyms = ARRAY_SIZE(traced);
	for (size_t i = 0; i < ARRAY_SIZE(traced); i++) {
		syms[i].name = (char *)traced[i];
		syms[i].offset = readelf_offset(path, traced[i]);
		syms[i].spec = spec_of(traced[i]);
	}
	/* what FACTS.md says of this file, checked so a change shows here */
	assert_true(syms[0].offset > 0);
}

/* ---- capabilities and mounting ------------------------------------------ */

static void test_caps(void **state)
{
	struct ift_tracefs_caps caps;
	const char *dir;

	(void)state;
	dir = need_root();
	assert_int_equal(ift_tracefs_probe_caps(&caps), 0);
	assert_string_equal(caps.dir, dir);
	assert_false(caps.debugfs);
	/* every machine of this project runs a kernel that has them all */
	assert_true(caps.tracefs);
	assert_true(caps.uprobes);
	assert_true(caps.uretprobes);
	assert_true(caps.fetch_args);
	assert_true(caps.pipe_raw);
	assert_true(caps.sched_waking);
	assert_true(caps.instances);
	assert_true(caps.set_event_pid);
	assert_true(caps.event_fork);
	assert_true(caps.mono_clock);
	assert_true(caps.sched_events);
	assert_true(caps.kmem_events);
	assert_true(caps.root);
}

/*
 * A fresh boot has no tracefs mounted.  In a private mount namespace, with
 * tracefs and debugfs unmounted there, ift_tracefs_dir() must mount it.  With
 * no /sys/kernel/tracing to mount it on (kernels before 4.1), it must fall
 * back to debugfs and the tracing directory the kernel provides inside.
 */
static int in_private_mounts(bool no_tracing_dir)
{
	struct ift_tracefs_caps caps;
	struct statfs sfs;
	const char *dir, *want;

	/* in a chroot "/" is no mount point (EINVAL): every mount changed
	   here is under /sys, made private instead */
	if (unshare(CLONE_NEWNS) ||
	    (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
	     (errno != EINVAL || mount(NULL, "/sys", NULL, MS_REC | MS_PRIVATE, NULL))))
		return 10;
	umount2("/sys/kernel/debug", MNT_DETACH);
	if (umount2("/sys/kernel/tracing", MNT_DETACH))
		return 11;
	if (!statfs("/sys/kernel/tracing", &sfs) && sfs.f_type == TRACEFS_MAGIC)
		return 12;
	if (no_tracing_dir) {
		/* a /sys/kernel with debug/ only */
		if (mount("none", "/sys/kernel", "tmpfs", 0, "size=64k") ||
		    mkdir("/sys/kernel/debug", 0700))
			return 13;
	}
	want = no_tracing_dir ? "/sys/kernel/debug/tracing" : "/sys/kernel/tracing";
	dir = ift_tracefs_dir();
	if (!dir || strcmp(dir, want))
		return 14;
	if (statfs(dir, &sfs) || sfs.f_type != TRACEFS_MAGIC)
		return 15;
	/* and libtracefs looks in the same place */
	if (!tracefs_tracing_dir() || strcmp(tracefs_tracing_dir(), dir))
		return 16;
	/* debugfs/tracing is tracefs here, automounted: not the debugfs of old */
	if (ift_tracefs_probe_caps(&caps) || strcmp(caps.dir, want) ||
	    caps.debugfs || !caps.tracefs || !caps.uprobes || !caps.instances)
		return 17;
	return 0;
}

static void test_mounts_tracefs(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	need_root();
	for (int old = 0; old < 2; old++) {
		pid = fork();
		assert_true(pid >= 0);
		if (!pid)
			_exit(in_private_mounts(old));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 10 && !in_ci())
			skip();		/* no private mount namespace here (a container) */
		if (WEXITSTATUS(status))
			fail_msg("%s: step %d failed", old ? "debugfs" : "tracefs",
				 WEXITSTATUS(status));
	}
	/* nothing changed out here */
	assert_string_equal(ift_tracefs_dir(), "/sys/kernel/tracing");
}

/* ---- a session traces a child's cudaMalloc ------------------------------ */

struct child_result {
	int rc_malloc, rc_free, rc_sync;
	uint64_t ptr;
};

/* Waits for the go byte, then calls libcudart and reports what it got. */
static void __attribute__((noreturn)) cuda_child(int go, int res)
{
	int (*cuda_malloc)(void **, size_t);
	int (*cuda_free)(void *);
	int (*cuda_sync)(void *);
	struct child_result r = { -1, -1, -1, 0 };
	void *h, *p = NULL;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	h = dlopen(CUDART, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		_exit(3);
	*(void **)&cuda_malloc = dlsym(h, "cudaMalloc");
	*(void **)&cuda_free = dlsym(h, "cudaFree");
	*(void **)&cuda_sync = dlsym(h, "cudaStreamSynchronize");
	if (!cuda_malloc || !cuda_free || !cuda_sync)
		_exit(4);
	/* no GPU needed: without a driver these fail, but they are called */
	r.rc_malloc = cuda_malloc(&p, MALLOC_BYTES);
	r.ptr = (uint64_t)(uintptr_t)p;
	r.rc_free = cuda_free(p);
	r.rc_sync = cuda_sync(NULL);
	if (write(res, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(5);
	_exit(0);	/* no atexit: libcudart's and the sanitizers' are not ours */
}

struct seen {
	const struct ift_probe_session *s;
	pid_t child;
	unsigned entries[3], returns[3];
	unsigned others;		/* uprobe events of other tasks */
	uint64_t bytes, ptr, stream;
	bool stream_seen;
	int ret[3];
	unsigned exits;			/* sched_process_exit of the child */
	int exit_id;
};

static int on_event(struct tep_event *ev, struct tep_record *rec, int cpu, void *arg)
{
	struct seen *sn = arg;
	unsigned long long pid = 0, val = 0;

	(void)cpu;
	if (tep_get_common_field_val(NULL, ev, "common_pid", rec, &pid, 0))
		return 0;
	if (ev->id == sn->exit_id) {
		if (!tep_get_field_val(NULL, ev, "pid", rec, &val, 0) && (pid_t)val == sn->child)
			sn->exits++;
		return 0;
	}
	for (size_t i = 0; i < ift_probe_count(sn->s); i++) {
		const struct ift_probe *p = ift_probe_at(sn->s, i);
		size_t k;

		if (ev->id != p->entry_id && ev->id != p->ret_id)
			continue;
		if ((pid_t)pid != sn->child) {
			sn->others++;
			return 0;
		}
		for (k = 0; k < ARRAY_SIZE(traced); k++)
			if (!strcmp(p->sym->name, traced[k]))
				break;
		assert_true(k < ARRAY_SIZE(traced));
		if (ev->id == p->entry_id) {
			sn->entries[k]++;
			if (k == 0 && !tep_get_field_val(NULL, ev, "bytes", rec, &val, 0))
				sn->bytes = val;
			if (k == 1 && !tep_get_field_val(NULL, ev, "ptr", rec, &val, 0))
				sn->ptr = val;
			if (k == 2 && !tep_get_field_val(NULL, ev, "stream", rec, &val, 0)) {
				sn->stream = val;
				sn->stream_seen = true;
			}
		} else {
			sn->returns[k]++;
			assert_int_equal(tep_get_field_val(NULL, ev, "ret", rec, &val, 0), 0);
			sn->ret[k] = (int)(int32_t)(uint32_t)val;
		}
		return 0;
	}
	return 0;
}

static long read_number(const char *dir, const char *name, const char *file)
{
	char path[PATH_MAX], *text;
	long v;

	if (snprintf(path, sizeof(path), "instances/%s/%s", name, file) >= (int)sizeof(path))
		fail_msg("path too long");
	text = tfile(dir, path);
	assert_non_null(text);
	v = strtol(text, NULL, 10);
	free(text);
	return v;
}

/* A new session's instance: off, with what was asked, and the top
   level's own settings untouched (TOP_BEFORE, freed here). */
static void check_instance(const char *dir, const char *name, struct ift_probe_session *s,
			   char *top_before)
{
	char rel[PATH_MAX], *text, *top_after;

	/* the instance, off, with what was asked */
	assert_true(instance_exists(dir, name));
	assert_int_equal(read_number(dir, name, "tracing_on"), 0);
	/* rounded up to whole sub-buffers */
	assert_in_range(read_number(dir, name, "buffer_size_kb"), 1024, 1100);
	assert_int_equal(read_number(dir, name, "options/event-fork"), 1);
	assert_int_equal(read_number(dir, name, "events/sched/sched_switch/enable"), 1);
	assert_int_equal(read_number(dir, name, "events/sched/sched_process_exit/enable"), 1);
	assert_int_equal(read_number(dir, name, "events/kmem/mm_page_alloc/enable"), 1);
	assert_string_equal(ift_probe_clock(s), "mono");
	snprintf(rel, sizeof(rel), "instances/%s/trace_clock", name);
	text = tfile(dir, rel);
	assert_non_null(strstr(text, "[mono]"));
	free(text);
	/* the top level is not ours: unchanged */
	top_after = tfile(dir, "events/sched/sched_switch/enable");
	assert_string_equal(top_before, top_after);
	free(top_before);
	free(top_after);
}

/* What the kernel recorded of the child: each call once, with what it
   passed, returning what it got, and nobody else's. */
static void check_seen(const struct seen *sn, const struct child_result *r)
{
	/* each call once, with what the child passed, returning what it got */
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(sn->entries[k], 1);
		assert_int_equal(sn->returns[k], 1);
	}
	assert_int_equal(sn->bytes, MALLOC_BYTES);
	assert_int_equal(sn->ptr, r->ptr);
	assert_true(sn->stream_seen);
	assert_int_equal(sn->stream, 0);
	assert_int_equal(sn->ret[0], r->rc_malloc);
	assert_int_equal(sn->ret[1], r->rc_free);
	assert_int_equal(sn->ret[2], r->rc_sync);
	/* set_event_pid kept everyone else's calls out */
	assert_int_equal(sn->others, 0);
	/* and the host events came along */
	assert_int_equal(sn->exits, 1);
}

static void test_session_traces_child(void **state)
{
	struct ift_probe_opts opts = { .buffer_kb = 1024, .host_events = true,
				       .kernel_filter = true };
	struct ift_probe_session *s = NULL, *second = NULL;
	struct ift_sym syms[ARRAY_SIZE(traced)];
	struct child_result r;
	struct ift_lib lib;
	struct seen sn = { 0 };
	struct tep_handle *tep;
	struct tep_event *ev;
	char name[32], libpath[] = CUDART, rel[PATH_MAX], want[PATH_MAX];
	char *text, *top_before;
	int go[2], res[2], status, ret;
	const char *dir;
	pid_t child;

	(void)state;
	dir = need_root();
	need_cudart();
	need_native("a uprobe's trap never fires in the code it translates");
	make_lib(&lib, syms, libpath);
	own_name(name, sizeof(name));
	top_before = tfile(dir, "events/sched/sched_switch/enable");
	assert_non_null(top_before);

	ret = create(&opts, &s);
	assert_int_equal(ret, 0);
	assert_non_null(s);
	/* one session per process: a second would take the same name */
	assert_int_equal(create(&opts, &second), -EBUSY);
	assert_null(second);

	check_instance(dir, name, s, top_before);

	ret = ift_probe_add_lib(s, &lib);
	assert_int_equal(ret, 3);
	assert_int_equal(ift_probe_count(s), 3);
	assert_int_equal(group_lines(dir, name), 6);
	for (size_t i = 0; i < 3; i++) {
		const struct ift_probe *p = ift_probe_at(s, i);

		assert_ptr_equal(p->lib, &lib);
		assert_ptr_equal(p->sym, &syms[i]);
		snprintf(want, sizeof(want), "%s_0", traced[i]);
		assert_string_equal(p->entry_event, want);
		snprintf(want, sizeof(want), "%s_0_ret", traced[i]);
		assert_string_equal(p->ret_event, want);
		assert_int_equal(p->entry_id, -1);
		snprintf(rel, sizeof(rel), "events/%s/%s/enable", name, p->ret_event);
		assert_int_equal(read_number(dir, name, rel), 1);
	}
	assert_null(ift_probe_at(s, 3));
	/* the probes sit at file offsets, with the catalog's fetch args */
	text = tfile(dir, "uprobe_events");
	snprintf(want, sizeof(want), "p:%s/cudaMalloc_0 " CUDART ":0x%016" PRIx64 " bytes=" BYTES_REG ":u64",
		 name, syms[0].offset);
	if (!strstr(text, want))
		fail_msg("no '%s' in uprobe_events:\n%s", want, text);
	snprintf(want, sizeof(want), "r:%s/cudaMalloc_0_ret " CUDART ":0x%016" PRIx64 " ret=$retval:s32",
		 name, syms[0].offset);
	if (!strstr(text, want))
		fail_msg("no '%s' in uprobe_events:\n%s", want, text);
	free(text);

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(res), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(go[1]);
		close(res[0]);
		cuda_child(go[0], res[1]);
	}
	close(go[0]);
	close(res[1]);
	assert_int_equal(ift_probe_add_pids(s, &child, 1), 0);
	snprintf(rel, sizeof(rel), "instances/%s/set_event_pid", name);
	text = tfile(dir, rel);
	assert_int_equal(strtol(text, NULL, 10), child);
	free(text);
	assert_int_equal(ift_probe_start(s), 0);
	assert_int_equal(read_number(dir, name, "tracing_on"), 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(go[1]);
	close(res[0]);
	assert_int_equal(ift_probe_stop(s), 0);
	assert_int_equal(read_number(dir, name, "tracing_on"), 0);

	tep = ift_probe_tep(s);
	assert_non_null(tep);
	assert_ptr_equal(ift_probe_tep(s), tep);
	for (size_t i = 0; i < 3; i++) {
		assert_true(ift_probe_at(s, i)->entry_id >= 0);
		assert_true(ift_probe_at(s, i)->ret_id >= 0);
		assert_true(ift_probe_at(s, i)->ret_id != ift_probe_at(s, i)->entry_id);
	}
	ev = tep_find_event_by_name(tep, "sched", "sched_process_exit");
	assert_non_null(ev);
	sn.exit_id = ev->id;
	sn.s = s;
	sn.child = child;
	assert_int_equal(tracefs_iterate_raw_events(tep, ift_probe_instance(s), NULL, 0,
						    on_event, &sn), 0);

	check_seen(&sn, &r);

	destroy(s);
	assert_clean(dir);
}

/* ---- teardown of half-built sessions ------------------------------------ */

static void test_destroy_half_built(void **state)
{
	struct ift_probe_opts opts = { .kernel_filter = true };
	struct ift_probe_session *s;
	struct ift_sym syms[ARRAY_SIZE(traced)];
	struct ift_lib lib, bad;
	char name[32], path[] = CUDART, missing[] = "/nonexistent/libcudart.so.13";
	char spaced[] = "/tmp/lib cudart.so";
	const char *dir;

	(void)state;
	dir = need_root();
	need_cudart();
	need_native("the kernel is the host's, whose uprobes take no aarch64 register");
	make_lib(&lib, syms, path);
	own_name(name, sizeof(name));

	ift_probe_session_destroy(NULL);

	/* created, nothing added */
	assert_int_equal(create(&opts, &s), 0);
	assert_true(instance_exists(dir, name));
	destroy(s);
	assert_clean(dir);

	/* a library that is not there: an error, and nothing stays */
	assert_int_equal(create(&opts, &s), 0);
	bad = lib;
	bad.path = missing;
	assert_true(ift_probe_add_lib(s, &bad) < 0);
	assert_int_equal(ift_probe_count(s), 0);
	assert_int_equal(group_lines(dir, name), 0);
	bad.path = spaced;
	assert_int_equal(ift_probe_add_lib(s, &bad), -EINVAL);
	destroy(s);
	assert_clean(dir);

	/*
	 * One function with an offset past the end of the file: defined, but
	 * refused at enable; it is taken back and the others stay.
	 */
	assert_int_equal(create(&opts, &s), 0);
	syms[1].offset = 0x7fffff00;
	assert_int_equal(ift_probe_add_lib(s, &lib), 2);
	assert_int_equal(ift_probe_count(s), 2);
	assert_int_equal(group_lines(dir, name), 4);
	/* a second library gets its own names */
	syms[1].offset = readelf_offset(path, traced[1]);
	assert_int_equal(ift_probe_add_lib(s, &lib), 3);
	assert_int_equal(group_lines(dir, name), 10);
	assert_string_equal(ift_probe_at(s, 2)->entry_event, "cudaMalloc_1");
	/* enabled and started: destroy must disable before deleting (EBUSY) */
	assert_int_equal(ift_probe_start(s), 0);
	destroy(s);
	assert_clean(dir);

	/* the instance removed behind the session's back: the group still goes */
	assert_int_equal(create(&opts, &s), 0);
	assert_int_equal(ift_probe_add_lib(s, &lib), 3);
	assert_non_null(ift_probe_tep(s));
	{
		char rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "instances/%s/events/enable", name);
		twrite(dir, rel, "0", false);
		snprintf(rel, sizeof(rel), "%s/instances/%s", dir, name);
		assert_int_equal(rmdir(rel), 0);
	}
	destroy(s);
	assert_clean(dir);

	/* objects under our name left by someone else are replaced, not reused */
	{
		char cmd[PATH_MAX], rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/instances/%s", dir, name);
		assert_int_equal(mkdir(rel, 0750), 0);
		snprintf(cmd, sizeof(cmd), "p:%s/stale %s:0x%" PRIx64 "\n", name, CUDART,
			 syms[0].offset);
		twrite(dir, "uprobe_events", cmd, true);
		snprintf(rel, sizeof(rel), "instances/%s/tracing_on", name);
		twrite(dir, rel, "1", false);
	}
	assert_int_equal(create(&opts, &s), 0);
	assert_int_equal(group_lines(dir, name), 0);
	assert_int_equal(read_number(dir, name, "tracing_on"), 0);
	destroy(s);
	assert_clean(dir);
}

/* ---- leftovers ---------------------------------------------------------- */

struct planted {
	const char *dir;
	pid_t dead, self, reused, renamed;	/* pids in the names */
	pid_t kids[3];				/* live children to kill */
	uint64_t off;
};

static struct planted pl;

/* Names ingero_<pid> must not be confused with; per process, as a test run
   elsewhere at the same time removes its own in its teardown. */
static char lookalikes[3][32];

static void name_lookalikes(void)
{
	snprintf(lookalikes[0], sizeof(lookalikes[0]), "otherTool%d", (int)getpid());
	snprintf(lookalikes[1], sizeof(lookalikes[1]), "ingero_%dx", (int)getpid());
	snprintf(lookalikes[2], sizeof(lookalikes[2]), "ingero_0%d", (int)getpid());
}

static void plant_group(const char *group)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "p:%s/cudaMalloc_0 %s:0x%" PRIx64 " bytes=" BYTES_REG ":u64\n",
		 group, CUDART, pl.off);
	twrite(pl.dir, "uprobe_events", cmd, true);
}

static void plant_instance(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/instances/%s", pl.dir, name);
	if (mkdir(path, 0750))
		fail_msg("cannot create '%s': %s", path, strerror(errno));
	snprintf(path, sizeof(path), "instances/%s/tracing_on", name);
	twrite(pl.dir, path, "0", false);
}

static void unplant(const char *name)
{
	char rel[PATH_MAX], cmd[160];

	if (!name[0])
		return;
	snprintf(rel, sizeof(rel), "instances/%s/events/enable", name);
	twrite_quiet(pl.dir, rel, "0", false);
	snprintf(rel, sizeof(rel), "%s/instances/%s", pl.dir, name);
	rmdir(rel);
	snprintf(cmd, sizeof(cmd), "-:%s/cudaMalloc_0\n", name);
	twrite_quiet(pl.dir, "uprobe_events", cmd, true);
}

static void reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

static int leftovers_teardown(void **state)
{
	char name[32];
	pid_t pids[4] = { pl.dead, pl.self, pl.reused, pl.renamed };

	(void)state;
	if (!pl.dir)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(pl.kids); i++)
		reap(&pl.kids[i]);
	/* instances first: the dead group is enabled in two of them */
	for (size_t i = 0; i < ARRAY_SIZE(lookalikes); i++)
		unplant(lookalikes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++)
		if (pids[i] > 0) {
			snprintf(name, sizeof(name), "ingero_%d", (int)pids[i]);
			unplant(name);
		}
	memset(&pl, 0, sizeof(pl));
	return 0;
}

static void wait_comm(pid_t pid, const char *comm)
{
	char path[64], want[32], *got;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(want, sizeof(want), "%s\n", comm);
	for (int i = 0; i < 500; i++) {
		bool done;

		got = slurp(path);
		done = got && !strcmp(got, want);
		free(got);
		if (done)
			return;
		usleep(10000);
	}
	fail_msg("pid %d never got the name '%s'", (int)pid, comm);
}

/*
 * A child that sleeps, named ingero-ftrace when RENAMED; with exactly pid PID
 * when PID > 0 (clone3 set_tid, root only).
 */
static pid_t clone_pid(pid_t pid)
{
	struct clone_args args;
	pid_t tid[1] = { pid };
	long ret;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	if (pid > 0) {
		args.set_tid = (uint64_t)(uintptr_t)tid;
		args.set_tid_size = 1;
	}
	ret = syscall(SYS_clone3, &args, sizeof(args));
	if (ret < 0)
		fail_msg("clone3 with pid %d: %s", (int)pid, strerror(errno));
	return (pid_t)ret;
}

static pid_t sleeper(pid_t pid, bool renamed)
{
	pid_t ret = clone_pid(pid);

	if (!ret) {
		if (renamed)
			prctl(PR_SET_NAME, "ingero-ftrace", 0, 0, 0);
		for (;;)
			pause();
	}
	if (renamed)
		wait_comm(ret, "ingero-ftrace");
	return ret;
}

static bool listed(const struct ift_leftover *v, int n, const char *kind, const char *name)
{
	for (int i = 0; i < n && i < 256; i++)
		if (!strcmp(v[i].kind, kind) && !strcmp(v[i].name, name))
			return true;
	return false;
}

/*
 * NAME must be in the list.  Outside CI, where others may record at the same
 * time (record removes leftovers when it starts), it may be gone instead:
 * their cleanup found it first.  A cleanup that cannot find it leaves it.
 */
static void assert_found(const struct ift_leftover *v, int n, const char *kind,
			 const char *name)
{
	bool there = !strcmp(kind, "instance") ? instance_exists(pl.dir, name)
					       : group_lines(pl.dir, name) > 0;

	if (listed(v, n, kind, name))
		return;
	if (!there && !in_ci())
		return;
	fail_msg("%s %s is not listed as a leftover%s", kind, name,
		 there ? "" : " (and is gone)");
}

/*
 * While the objects are planted, every pid in their names belongs to a
 * sleeping child named ingero-ftrace, so that no cleanup running meanwhile
 * (record does one when it starts) takes them.  Then, just before looking,
 * the children are swapped: the dead run's is killed; two others are killed
 * and their pids taken again, at once, by new children (clone3 set_tid) that
 * started well after the objects: one keeps its name (a reused pid), one
 * renames itself ingero-ftrace (a live run: its name counts, not its age).
 */
/*
 * A hand-off: the helper waits for GO, holding the instance's lock, then
 * removes what destroy() would, and the name is free again.
 */
static void test_hand_off(void **state)
{
	struct ift_probe_opts opts = { .kernel_filter = true };
	struct ift_probe_session *s;
	struct ift_sym syms[ARRAY_SIZE(traced)];
	struct ift_lib lib;
	char name[32], path[] = CUDART, inst[PATH_MAX * 2];
	const char *dir;
	pid_t helper;
	int go, st, fd;

	(void)state;
	dir = need_root();
	need_cudart();
	need_native("the kernel is the host's, whose uprobes take no aarch64 register");
	make_lib(&lib, syms, path);
	own_name(name, sizeof(name));

	assert_int_equal(create(&opts, &s), 0);
	assert_int_equal(ift_probe_add_lib(s, &lib), 3);
	helper = ift_probe_session_hand_off(s, &go);
	assert_true(helper > 0);
	sess = NULL;
	assert_true(go >= 0);
	/* the helper waits for us: all there, the instance locked */
	assert_true(instance_exists(dir, name));
	assert_int_equal(group_lines(dir, name), 6);
	snprintf(inst, sizeof(inst), "%s/instances/%s", dir, name);
	fd = open(inst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_SH | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);
	/* a stop signal meant for the run (pkill -f of its command line, which
	   the helper shares) ends no teardown: pending as GO closes, a helper
	   that took it dies in its read */
	assert_int_equal(kill(helper, SIGTERM), 0);
	assert_int_equal(kill(helper, SIGINT), 0);
	assert_int_equal(kill(helper, SIGHUP), 0);

	close(go);
	assert_int_equal(waitpid(helper, &st, 0), helper);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_clean(dir);

	/* the name is ours again */
	assert_int_equal(create(&opts, &s), 0);
	destroy(s);
	assert_clean(dir);
}

static void test_leftovers(void **state)
{
	struct ift_leftover v[256];
	char dead[32], self[32], reused[32], renamed[32], rel[PATH_MAX];
	int n;

	(void)state;
	pl.dir = need_root();
	need_cudart();
	need_native("its sleepers are forked with clone3, which the emulator refuses");
	pl.off = readelf_offset(CUDART, "cudaMalloc");
	name_lookalikes();

	pl.kids[0] = pl.dead = sleeper(0, true);
	pl.kids[1] = pl.reused = sleeper(0, true);
	pl.kids[2] = pl.renamed = sleeper(0, true);
	pl.self = getpid();
	snprintf(dead, sizeof(dead), "ingero_%d", (int)pl.dead);
	snprintf(self, sizeof(self), "ingero_%d", (int)pl.self);
	snprintf(reused, sizeof(reused), "ingero_%d", (int)pl.reused);
	snprintf(renamed, sizeof(renamed), "ingero_%d", (int)pl.renamed);

	/* a killed run: its group, enabled in its instance and in another tool's */
	plant_group(dead);
	plant_instance(dead);
	for (size_t i = 0; i < ARRAY_SIZE(lookalikes); i++) {
		plant_group(lookalikes[i]);
		plant_instance(lookalikes[i]);
	}
	snprintf(rel, sizeof(rel), "instances/%s/events/%s/cudaMalloc_0/enable", dead, dead);
	twrite(pl.dir, rel, "1", false);
	snprintf(rel, sizeof(rel), "instances/%s/events/%s/cudaMalloc_0/enable",
		 lookalikes[0], dead);
	twrite(pl.dir, rel, "1", false);
	/* this process is alive, whatever its name */
	plant_group(self);
	/* runs whose pids are taken later by other processes */
	plant_instance(reused);
	plant_group(renamed);

	/* later: clearly after the objects, with 1 s of slack between clocks */
	usleep(1600 * 1000);
	reap(&pl.kids[1]);
	pl.kids[1] = sleeper(pl.reused, false);
	reap(&pl.kids[2]);
	pl.kids[2] = sleeper(pl.renamed, true);
	reap(&pl.kids[0]);

	n = ift_probe_find_leftovers(v, ARRAY_SIZE(v));
	assert_true(n >= 0);
	assert_found(v, n, "uprobe group", dead);
	assert_found(v, n, "instance", dead);
	/* another program started after the instance: the pid was reused */
	assert_found(v, n, "instance", reused);
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(v); i++) {
		assert_string_not_equal(v[i].name, self);
		assert_string_not_equal(v[i].name, renamed);
		for (size_t k = 0; k < ARRAY_SIZE(lookalikes); k++)
			assert_string_not_equal(v[i].name, lookalikes[k]);
		if (!strcmp(v[i].name, dead))
			assert_int_equal(v[i].owner, pl.dead);
	}
	/*
	 * The process that looks owns its name, whatever its name and age: the
	 * reused pid itself does not see its instance as a leftover.
	 */
	reap(&pl.kids[1]);
	pl.kids[1] = clone_pid(pl.reused);
	if (!pl.kids[1]) {
		struct ift_leftover mine[256];
		int m = ift_probe_find_leftovers(mine, ARRAY_SIZE(mine));

		_exit(m < 0 ? 2 : listed(mine, m, "instance", reused) ? 1 : 0);
	}
	{
		int status;

		assert_int_equal(waitpid(pl.kids[1], &status, 0), pl.kids[1]);
		pl.kids[1] = 0;
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	/* a short array: the count of all of them, only MAX filled */
	if (in_ci())
		assert_int_equal(ift_probe_find_leftovers(v, 1), n);

	n = ift_probe_cleanup_leftovers();
	assert_true(n >= (in_ci() ? 3 : 0));
	assert_int_equal(group_lines(pl.dir, dead), 0);
	assert_false(instance_exists(pl.dir, dead));
	assert_false(instance_exists(pl.dir, reused));
	/* untouched: the live, the renamed live one, other tools, lookalikes */
	assert_int_equal(group_lines(pl.dir, self), 1);
	assert_int_equal(group_lines(pl.dir, renamed), 1);
	for (size_t k = 0; k < ARRAY_SIZE(lookalikes); k++) {
		assert_int_equal(group_lines(pl.dir, lookalikes[k]), 1);
		assert_true(instance_exists(pl.dir, lookalikes[k]));
	}
	/* none of ours remain */
	n = ift_probe_find_leftovers(v, ARRAY_SIZE(v));
	assert_true(n >= 0);
	assert_false(listed(v, n, "uprobe group", dead));
	assert_false(listed(v, n, "instance", dead));
	assert_false(listed(v, n, "instance", reused));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_mounts_tracefs),
		cmocka_unit_test_teardown(test_session_traces_child, session_teardown),
		cmocka_unit_test_teardown(test_destroy_half_built, session_teardown),
		cmocka_unit_test_teardown(test_hand_off, session_teardown),
		cmocka_unit_test_teardown(test_leftovers, leftovers_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
