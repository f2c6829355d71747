// SPDX-License-Identifier: MIT
/*
 * Unit tests for the discover stage (src/discover/).  A wrong probe offset
 * fails only when the probe is enabled, or worse, traps in the middle of an
 * instruction; so every offset here is checked against a truth worked out
 * another way: readelf's program headers and symbols, read at test time, and
 * the bytes of the file read with stdio.  ld.so.cache lookups are checked
 * against `ldconfig -p'.  Libraries with a known layout (CET, a text segment
 * whose addresses differ from its file offsets, a hidden old version of a
 * symbol) are built at test time with cc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ift-arch.h"
#include "ift-discover.h"
#include "ift-error.h"
#include "discover/internal.h"

#define CUDART13 "/usr/local/cuda-13.0/lib/libcudart.so.13"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[64];	/* short, so every path built on it fits */
static bool have_fake;	/* tmpdir/lib/libcudart.so.12 and tmpdir/app were built */

/* ---- truth from readelf ------------------------------------------------ */

struct load {
	uint64_t off, vaddr, filesz;
	bool exec;
};

static size_t readelf_loads(const char *path, struct load *v, size_t max)
{
	char cmd[PATH_MAX + 64], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, va, pa, fs, ms;
		int end = 0;

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %n", &off, &va, &pa,
			   &fs, &ms, &end) != 5 || !end || n == max)
			continue;
		/* flags are "R E", "RW ", ... up to the alignment */
		v[n].off = off;
		v[n].vaddr = va;
		v[n].filesz = fs;
		v[n].exec = memchr(line + end, 'E', strcspn(line + end, "0")) != NULL;
		n++;
	}
	pclose(p);
	return n;
}

/*
 * The value of the default-version definition of NAME in the dynamic symbol
 * table, as readelf prints it ("NAME@@VERSION", or plain NAME when the library
 * has no versions).  False when there is none.
 */
static bool readelf_sym(const char *path, const char *name, uint64_t *value)
{
	char cmd[PATH_MAX + 64], line[1024];
	size_t nl = strlen(name);
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -sW --dyn-syms '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char type[32], ndx[32], sym[512];
		unsigned long long val;

		if (sscanf(line, " %*[0-9]: %llx %*s %31s %*s %*s %31s %511s", &val, type, ndx,
			   sym) != 4)
			continue;
		if (strcmp(type, "FUNC") || !strcmp(ndx, "UND") || strncmp(sym, name, nl))
			continue;
		if (sym[nl] && strncmp(sym + nl, "@@", 2))
			continue;
		*value = val;
		found = true;
		break;
	}
	pclose(p);
	return found;
}

/*
 * The compiler of the target and its flag for landing pads at every
 * function's entry (GNUmakefile): x86-64's endbr64, aarch64's bti c.
 */
#ifndef IFT_TEST_CC
#define IFT_TEST_CC	"cc"
#endif
#ifndef IFT_TEST_OBJCOPY
#define IFT_TEST_OBJCOPY "objcopy"
#endif
#if defined(__aarch64__)
#define PADS_FLAG	"-mbranch-protection=bti"
static const uint8_t landing_pad[4] = { 0x5f, 0x24, 0x03, 0xd5 };	/* bti c */
#define LDCONFIG_FLAGS	"libc6,AArch64"
#else
#define PADS_FLAG	"-fcf-protection=full"
static const uint8_t landing_pad[4] = { 0xf3, 0x0f, 0x1e, 0xfa };	/* endbr64 */
#define LDCONFIG_FLAGS	"libc6,x86-64"
#endif

/* Where the probe for NAME belongs, by readelf and the file's own bytes. */
static uint64_t expected_offset(const char *path, const char *name)
{
	struct load loads[32];
	size_t n = readelf_loads(path, loads, ARRAY_SIZE(loads));
	uint64_t value = 0, off = UINT64_MAX;
	uint8_t head[4];
	FILE *f;

	assert_true(n > 0);
	if (!readelf_sym(path, name, &value))
		fail_msg("readelf finds no %s in %s", name, path);
	for (size_t i = 0; i < n; i++)
		if (loads[i].exec && value >= loads[i].vaddr &&
		    value < loads[i].vaddr + loads[i].filesz)
			off = value - loads[i].vaddr + loads[i].off;
	assert_true(off != UINT64_MAX);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fread(head, 1, 4, f), 4);
	fclose(f);
	return memcmp(head, landing_pad, 4) ? off : off + 4;
}

static bool readelf_build_id(const char *path, char *hex, size_t sz)
{
	char cmd[PATH_MAX + 64], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && !found) {
			s += strlen("Build ID: ");
			s[strcspn(s, " \n")] = 0;
			snprintf(hex, sz, "%s", s);
			found = true;
		}
	}
	pclose(p);
	return found;
}

static const struct ift_sym *lib_sym(const struct ift_lib *lib, const char *name)
{
	for (size_t i = 0; i < lib->nsyms; i++)
		if (!strcmp(lib->syms[i].name, name))
			return &lib->syms[i];
	return NULL;
}

static void check_offsets(const struct ift_lib *lib, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct ift_sym *s = lib_sym(lib, names[i]);
		uint64_t want;

		if (!s)
			fail_msg("%s not found in %s", names[i], lib->path);
		want = expected_offset(lib->path, names[i]);
		if (s->offset != want)
			fail_msg("%s: offset 0x%" PRIx64 ", readelf says 0x%" PRIx64, names[i],
				 s->offset, want);
		assert_non_null(s->spec);
		assert_int_equal(strncmp(s->spec->name, names[i], strlen(s->spec->name)), 0);
	}
}

static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("'%s' failed (%d)", cmd, rc);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* ---- the real libcudart -------------------------------------------------- */

/* NVIDIA's runtime, where it is one of this machine's (x86-64 only here) */
static bool cudart13_here(void)
{
	uint8_t eh[20];
	FILE *f = fopen(CUDART13, "rb");
	bool ok;

	if (!f)
		return false;
	ok = fread(eh, 1, sizeof(eh), f) == sizeof(eh) &&
	     (eh[18] | eh[19] << 8) == ift_arch_native->elf_machine;
	fclose(f);
	return ok;
}

static void test_cudart_offsets(void **state)
{
	static const char *const names[] = {
		"cudaMalloc", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel",
		"cudaMemcpyAsync_ptsz", "cudaStreamSynchronize_ptsz", "cudaLaunchKernel_ptsz",
	};
	struct ift_libset set;

	(void)state;
	if (!cudart13_here())
		skip();
	ift_libset_init(&set);
	assert_int_equal(ift_libset_add(&set, CUDART13, "test"), 1);
	assert_int_equal(set.n, 1);
	assert_string_equal(set.v[0].path, CUDART13);
	assert_int_equal(set.v[0].api, IFT_API_RUNTIME);
	assert_string_equal(set.v[0].found_by, "test");
	check_offsets(&set.v[0], names, ARRAY_SIZE(names));
	/* readelf prints cudaMalloc@@libcudart.so.13: the version must be gone */
	for (size_t i = 0; i < set.v[0].nsyms; i++) {
		assert_null(strchr(set.v[0].syms[i].name, '@'));
		assert_int_equal(set.v[0].syms[i].spec->api, IFT_API_RUNTIME);
	}
	/* no driver function in a runtime library, and no duplicate names */
	for (size_t i = 0; i < set.v[0].nsyms; i++)
		for (size_t k = i + 1; k < set.v[0].nsyms; k++)
			assert_string_not_equal(set.v[0].syms[i].name, set.v[0].syms[k].name);
	ift_libset_release(&set);
	assert_int_equal(set.n, 0);
	assert_null(set.v);
}

static void test_cudart_build_id(void **state)
{
	struct ift_libset set;
	char want[160], got[160];

	(void)state;
	if (!cudart13_here())
		skip();
	assert_true(readelf_build_id(CUDART13, want, sizeof(want)));
	ift_libset_init(&set);
	assert_int_equal(ift_libset_add(&set, CUDART13, "test"), 1);
	assert_int_equal(set.v[0].build_id_len * 2, strlen(want));
	for (size_t i = 0; i < set.v[0].build_id_len; i++)
		sprintf(got + 2 * i, "%02x", set.v[0].build_id[i]);
	assert_string_equal(got, want);
	ift_libset_release(&set);
}

/* ---- names, errors, dedupe --------------------------------------------- */

/* record --trigger's names: the catalog's, and the variants it probes */
static void test_func_find(void **state)
{
	(void)state;
	assert_string_equal(ift_func_find("cudaStreamSynchronize")->name, "cudaStreamSynchronize");
	assert_string_equal(ift_func_find("cudaMemcpyAsync_ptsz")->name, "cudaMemcpyAsync");
	assert_string_equal(ift_func_find("ncclAllReduce")->name, "ncclAllReduce");
	assert_null(ift_func_find("cudaMallocc"));
	assert_null(ift_func_find("cudaMalloc_ptsz"));	/* no per-thread variant */
	assert_null(ift_func_find("cudaMemcpyAsync_ptszz"));
	assert_null(ift_func_find("cudaMemcpyAsy"));
	assert_null(ift_func_find(""));
}

static void test_cuda_lib_api(void **state)
{
	static const struct {
		const char *name;
		enum ift_api api;
	} cases[] = {
		{ "libcudart.so", IFT_API_RUNTIME },
		{ "libcudart.so.13", IFT_API_RUNTIME },
		{ "libcudart.so.12.4.127", IFT_API_RUNTIME },
		{ "libcudart-d0da41ae.so.11.0", IFT_API_RUNTIME },
		{ "libcuda.so", IFT_API_DRIVER },
		{ "libcuda.so.1", IFT_API_DRIVER },
		{ "libcuda.so.580.65.06", IFT_API_DRIVER },
		{ "libcudart_static.a", 0 },
		{ "libcudadevrt.a", 0 },
		{ "libcudnn.so.9", 0 },
		{ "libcublas.so.13", 0 },
		{ "libcuda.so1", 0 },
		{ "libcudax.so", 0 },
		{ "cudart.so", 0 },
		{ "libc.so.6", 0 },
		{ "", 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (ift_cuda_lib_api(cases[i].name) != cases[i].api)
			fail_msg("'%s': api %d, want %d", cases[i].name,
				 (int)ift_cuda_lib_api(cases[i].name), (int)cases[i].api);
}

static void test_not_cuda_and_errors(void **state)
{
	struct ift_libset set;
	char path[PATH_MAX];

	(void)state;
	ift_libset_init(&set);
	/* a real shared library with CUDA's functions but not its name */
	snprintf(path, sizeof(path), "%s/libfoo.so.1", tmpdir);
	if (have_fake)
		run("cp '%s/lib/libcudart.so.12' '%s'", tmpdir, path);
	else
		run("cp /bin/true '%s'", path);
	assert_int_equal(ift_libset_add(&set, path, "test"), 0);
	assert_int_equal(set.n, 0);
	/* CUDA's name on something that is not ELF */
	snprintf(path, sizeof(path), "%s/libcudart.so.99", tmpdir);
	write_file(path, "INPUT(libcudart.so.13)\n");
	assert_int_equal(ift_libset_add(&set, path, "test"), -IFT_E_NOT_ELF);
	snprintf(path, sizeof(path), "%s/libcuda.so.1", tmpdir);
	write_file(path, "");
	assert_int_equal(ift_libset_add(&set, path, "test"), -IFT_E_NOT_ELF);
	/* a bare ELF identification with no header behind it */
	snprintf(path, sizeof(path), "%s/libcuda.so.2", tmpdir);
	write_file(path, "\177ELF\002\001\001");
	assert_int_equal(ift_libset_add(&set, path, "test"), -IFT_E_NOT_ELF);
	/* ELF, but an object file, not something a process can map */
	if (have_fake) {
		snprintf(path, sizeof(path), "%s/libcuda.so.3", tmpdir);
		run(IFT_TEST_CC " -c -o '%s' '%s/fake.c'", path, tmpdir);
		assert_int_equal(ift_libset_add(&set, path, "test"), -ENOEXEC);
	}
	snprintf(path, sizeof(path), "%s/libcudart.so.404", tmpdir);
	assert_int_equal(ift_libset_add(&set, path, "test"), -ENOENT);
	assert_int_equal(ift_libset_add(&set, tmpdir, "test"), 0);	/* a directory of another name */
	assert_int_equal(set.n, 0);
	ift_libset_release(&set);
}

static void test_dedupe_symlink(void **state)
{
	char real[PATH_MAX], l1[PATH_MAX], l2[PATH_MAX];
	struct ift_libset set;

	(void)state;
	if (!have_fake)
		skip();
	snprintf(real, sizeof(real), "%s/lib/libcudart.so.12", tmpdir);
	snprintf(l1, sizeof(l1), "%s/lib/libcudart.so", tmpdir);
	snprintf(l2, sizeof(l2), "%s/libcudart-link.so.12", tmpdir);
	assert_int_equal(symlink("libcudart.so.12", l1), 0);
	assert_int_equal(symlink(l1, l2), 0);
	ift_libset_init(&set);
	assert_int_equal(ift_libset_add(&set, l2, "first"), 1);
	assert_int_equal(ift_libset_add(&set, real, "second"), 0);
	assert_int_equal(ift_libset_add(&set, l1, "third"), 0);
	assert_int_equal(set.n, 1);
	/* the real path, links resolved, and the first finder kept */
	{
		char *want = realpath(real, NULL);

		assert_non_null(want);
		assert_string_equal(set.v[0].path, want);
		free(want);
	}
	assert_string_equal(set.v[0].found_by, "first");
	ift_libset_release(&set);
	unlink(l1);
	unlink(l2);
}

/* ---- a library built here: CET, vaddr != offset, a hidden old version ---- */

static const char fake_src[] =
	"#include <stddef.h>\n"
	"int cudaMalloc_new(void **p, size_t n) { *p = (void *)n; return 0; }\n"
	"int cudaMalloc_old(void **p, size_t n) { *p = (void *)(n + 1); return 1; }\n"
	"__asm__(\".symver cudaMalloc_old, cudaMalloc@OLD\");\n"
	"__asm__(\".symver cudaMalloc_new, cudaMalloc@@libcudart.so.12\");\n"
	"int cudaMemcpyAsync(void *d, const void *s, size_t n, int k, void *st)"
	" { return d == s ? (int)n : k + (st != 0); }\n"
	"int cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, int k, void *st)"
	" { return d == s ? (int)n + 1 : k + (st != 0); }\n"
	"int cudaStreamSynchronize(void *s) { return s != 0; }\n"
	"int cudaLaunchKernel(const void *f) { return f != 0; }\n"
	"int cuLaunchKernel(const void *f) { return f == 0; }\n";

static const char fake_map[] =
	"OLD { global: cudaMalloc; };\n"
	"libcudart.so.12 { global: cu*; local: *; } OLD;\n";

static void test_fake_offsets(void **state)
{
	static const char *const names[] = {
		"cudaMalloc", "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz",
		"cudaStreamSynchronize", "cudaLaunchKernel",
	};
	struct ift_libset set;
	char path[PATH_MAX];
	struct load loads[16];
	size_t nl;
	uint64_t v_new, v_old = 0;

	(void)state;
	if (!have_fake)
		skip();
	snprintf(path, sizeof(path), "%s/lib/libcudart.so.12", tmpdir);
	/* the layout this test relies on, so it cannot pass by accident */
	nl = readelf_loads(path, loads, ARRAY_SIZE(loads));
	for (size_t i = 0; i < nl; i++)
		if (loads[i].exec)
			assert_true(loads[i].vaddr != loads[i].off);
	assert_true(readelf_sym(path, "cudaMalloc", &v_new));
	ift_libset_init(&set);
	assert_int_equal(ift_libset_add(&set, path, "test"), 1);
	check_offsets(&set.v[0], names, ARRAY_SIZE(names));
	/* every function starts with a landing pad, and the probe goes after it */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const struct ift_sym *s = lib_sym(&set.v[0], names[i]);
		uint64_t value;

		assert_true(readelf_sym(path, names[i], &value));
		assert_true(s->offset == value - 0x10000 + 4);
	}
	/* the hidden cudaMalloc@OLD lies elsewhere and must not win */
	{
		char cmd[PATH_MAX + 64], line[512];
		FILE *p;

		snprintf(cmd, sizeof(cmd), "readelf -sW --dyn-syms '%s'", path);
		p = popen(cmd, "r");
		assert_non_null(p);
		while (fgets(line, sizeof(line), p))
			if (strstr(line, " cudaMalloc@OLD"))
				sscanf(line, " %*[0-9]: %" SCNx64, &v_old);
		pclose(p);
	}
	assert_true(v_old && v_old != v_new);
	assert_true(lib_sym(&set.v[0], "cudaMalloc")->offset == v_new - 0x10000 + 4);
	/* per-thread variants only where the library has them; no driver names */
	assert_null(lib_sym(&set.v[0], "cudaLaunchKernel_ptsz"));
	assert_null(lib_sym(&set.v[0], "cuLaunchKernel"));
	assert_int_equal(set.v[0].nsyms, ARRAY_SIZE(names));
	assert_true(set.v[0].build_id_len == 20);
	ift_libset_release(&set);
}

/*
 * Names that only .symtab has, with their version still on ("name@@VER" as
 * the assembler writes a .symver): found, without the version.  objcopy adds
 * them to the fake library, where .dynsym cannot answer for them.
 */
static void test_symtab_versioned(void **state)
{
	char src[PATH_MAX], path[PATH_MAX];
	struct ift_libset set;
	const struct ift_sym *s;

	(void)state;
	if (!have_fake || system("command -v " IFT_TEST_OBJCOPY " >/dev/null 2>&1"))
		skip();
	snprintf(src, sizeof(src), "%s/lib/libcudart.so.12", tmpdir);
	snprintf(path, sizeof(path), "%s/symtab/libcudart.so.12", tmpdir);
	run("mkdir -p '%s/symtab' && " IFT_TEST_OBJCOPY
	    " --add-symbol 'cudaFree@@libcudart.so.12=.text:0x20,function,global'"
	    " --add-symbol 'cudaFreeHost@OLD=.text:0x30,function,global'"
	    " --add-symbol 'cudaSetDevice=.text:0x40,object,global'"
	    " --add-symbol 'cudaMallocHost@OLD=.text:0x50,function,global'"
	    " --add-symbol 'cudaMallocHost@@libcudart.so.12=.text:0x60,function,global'"
	    " '%s' '%s'", tmpdir, src, path);
	ift_libset_init(&set);
	assert_int_equal(ift_libset_add(&set, path, "test"), 1);
	s = lib_sym(&set.v[0], "cudaFree");
	assert_non_null(s);
	assert_true(s->offset == expected_offset(path, "cudaFree"));
	/* a hidden version is better than nothing when it is all there is */
	s = lib_sym(&set.v[0], "cudaFreeHost");
	assert_non_null(s);
	assert_true(s->offset == expected_offset(path, "cudaFreeHost@OLD"));
	/* the default version wins over an old one listed before it */
	s = lib_sym(&set.v[0], "cudaMallocHost");
	assert_non_null(s);
	assert_true(s->offset == expected_offset(path, "cudaMallocHost"));
	assert_true(s->offset != expected_offset(path, "cudaMallocHost@OLD"));
	/* not a function */
	assert_null(lib_sym(&set.v[0], "cudaSetDevice"));
	for (size_t i = 0; i < set.v[0].nsyms; i++)
		assert_null(strchr(set.v[0].syms[i].name, '@'));
	assert_int_equal(set.v[0].nsyms, 8);
	ift_libset_release(&set);
}

/* ---- ld.so.cache against ldconfig -p ------------------------------------ */

static void test_ldcache_vs_ldconfig(void **state)
{
	char line[PATH_MAX + 256], **seen = NULL;
	size_t checked = 0, nseen = 0;
	struct ldcache c;
	FILE *p;

	(void)state;
	if (ift_ldcache_load(&c, "/etc/ld.so.cache"))
		skip();
	p = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p", "r");
	assert_non_null(p);
	/* "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1" */
	while (fgets(line, sizeof(line), p)) {
		char name[256], flags[128], path[PATH_MAX];
		const char *got;
		bool dup = false;

		if (sscanf(line, " %255s (%127[^)]) => %4095s", name, flags, path) != 3)
			continue;
		if (strcmp(flags, LDCONFIG_FLAGS))
			continue;	/* 32-bit, or a hwcaps subdirectory */
		/* ldconfig lists first the entry ld.so takes: compare that one */
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = !strcmp(seen[i], name);
		if (dup)
			continue;
		seen = realloc(seen, (nseen + 1) * sizeof(*seen));
		assert_non_null(seen);
		seen[nseen] = strdup(name);
		assert_non_null(seen[nseen++]);
		got = ift_ldcache_lookup(&c, name);
		if (!got || strcmp(got, path))
			fail_msg("%s: cache says %s, ldconfig -p %s", name, got ? got : "nothing",
				 path);
		checked++;
	}
	pclose(p);
	/* an emulated arm64 build reads the x86-64 host's cache: nothing to compare */
	if (!checked && getenv("IFT_TEST_EMULATOR")) {
		ift_ldcache_release(&c);
		skip();
	}
	assert_true(checked > 10);
	assert_null(ift_ldcache_lookup(&c, "libthis-is-not-there.so.1"));
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	ift_ldcache_release(&c);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A cache as ldconfig writes it, with the traps of a real one: the 32-bit
 * library of the same name first, and a glibc-hwcaps entry before the plain one.
 */
static void test_ldcache_synthetic(void **state)
{
	static const struct {
		uint32_t flags;
		const char *key, *value;
		uint64_t hwcap;
	} e[] = {
		{ 0x0003, "libfoo.so.1", "/lib32/libfoo.so.1", 0 },		/* i386 */
		{ 0x0303, "libfoo.so.1", "/v3/libfoo.so.1", 1ULL << 62 },	/* x86-64-v3 */
		{ 0x0303, "libfoo.so.1", "/lib64/libfoo.so.1", 0 },
		{ 0x0803, "libbar.so.2", "/libx32/libbar.so.2", 0 },		/* x32 */
		{ 0x0303, "libbaz.so.3", "/v3/libbaz.so.3", 1ULL << 62 },
		{ 0x0a03, "libfoo.so.1", "/arm64/libfoo.so.1", 0 },		/* aarch64 */
		{ 0x0a03, "libqux.so.4", "/arm64/libqux.so.4", 0 },
	};
	uint8_t buf[4096] = "glibc-ld.so.cache1.1";
	size_t n = ARRAY_SIZE(e), str = 48 + 24 * n;
	char path[PATH_MAX];
	struct ldcache c;
	FILE *f;

	(void)state;
	put32(buf + 20, (uint32_t)n);
	buf[28] = 2;	/* little-endian */
	for (size_t i = 0; i < n; i++) {
		uint8_t *ent = buf + 48 + 24 * i;

		put32(ent, e[i].flags);
		put32(ent + 4, (uint32_t)str);
		str += (size_t)sprintf((char *)buf + str, "%s", e[i].key) + 1;
		put32(ent + 8, (uint32_t)str);
		str += (size_t)sprintf((char *)buf + str, "%s", e[i].value) + 1;
		put32(ent + 16, (uint32_t)e[i].hwcap);
		put32(ent + 20, (uint32_t)(e[i].hwcap >> 32));
	}
	put32(buf + 24, (uint32_t)(str - 48 - 24 * n));
	snprintf(path, sizeof(path), "%s/synthetic.cache", tmpdir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, str, f), str);
	fclose(f);
	assert_int_equal(ift_ldcache_load(&c, path), 0);
	/* this machine's entries, whichever it is */
	assert_int_equal(c.machine, ift_arch_native->ldcache_flags);
	/* as an x86-64 ld.so reads it */
	c.machine = ift_arch_x86_64.ldcache_flags;
	assert_string_equal(ift_ldcache_lookup(&c, "libfoo.so.1"), "/lib64/libfoo.so.1");
	assert_null(ift_ldcache_lookup(&c, "libbar.so.2"));
	assert_string_equal(ift_ldcache_lookup(&c, "libbaz.so.3"), "/v3/libbaz.so.3");
	assert_null(ift_ldcache_lookup(&c, "libfoo.so"));
	assert_null(ift_ldcache_lookup(&c, "libqux.so.4"));
	/* as an aarch64 one does */
	c.machine = ift_arch_aarch64.ldcache_flags;
	assert_string_equal(ift_ldcache_lookup(&c, "libfoo.so.1"), "/arm64/libfoo.so.1");
	assert_string_equal(ift_ldcache_lookup(&c, "libqux.so.4"), "/arm64/libqux.so.4");
	assert_null(ift_ldcache_lookup(&c, "libbaz.so.3"));
	ift_ldcache_release(&c);
}

static void test_ldcache_broken(void **state)
{
	char path[PATH_MAX];
	struct ldcache c;
	uint8_t hdr[48 + 24] = "glibc-ld.so.cache1.1";
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/ld.so.cache", tmpdir);
	write_file(path, "ld.so-1.7.0");
	assert_int_equal(ift_ldcache_load(&c, path), -EINVAL);
	ift_ldcache_release(&c);
	/* one entry claimed, strings pointing far outside the file */
	hdr[20] = 1;
	hdr[48] = 0x03;
	hdr[49] = 0x03;
	memset(hdr + 52, 0xff, 8);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	assert_int_equal(ift_ldcache_load(&c, path), 0);
	assert_null(ift_ldcache_lookup(&c, "libc.so.6"));
	ift_ldcache_release(&c);
	/* more entries than the file holds */
	hdr[20] = 2;
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	assert_int_equal(ift_ldcache_load(&c, path), -EINVAL);
	ift_ldcache_release(&c);
	assert_int_equal(ift_ldcache_load(&c, "/nonexistent/ld.so.cache"), -ENOENT);
	ift_ldcache_release(&c);
}

/* ---- the dynamic section and the closure -------------------------------- */

static void test_dyn_read(void **state)
{
	struct dso_dyn dyn;
	char path[PATH_MAX], want[PATH_MAX + 8];
	bool cudart = false, libc = false;

	(void)state;
	if (!have_fake)
		skip();
	snprintf(path, sizeof(path), "%s/app", tmpdir);
	assert_int_equal(ift_dso_dyn_read(path, &dyn), 0);
	for (size_t i = 0; i < dyn.nneeded; i++) {
		cudart |= !strcmp(dyn.needed[i], "libcudart.so.12");
		libc |= !strcmp(dyn.needed[i], "libc.so.6");
	}
	assert_true(cudart && libc);
	snprintf(want, sizeof(want), "%s/lib", tmpdir);
	assert_non_null(dyn.runpath);
	assert_string_equal(dyn.runpath, want);
	assert_null(dyn.rpath);
	ift_dso_dyn_release(&dyn);

	snprintf(path, sizeof(path), "%s/lib/libcudart.so.12", tmpdir);
	assert_int_equal(ift_dso_dyn_read(path, &dyn), 0);
	assert_string_equal(dyn.soname, "libcudart.so.12");
	ift_dso_dyn_release(&dyn);

	snprintf(path, sizeof(path), "%s/libcudart.so.99", tmpdir);
	write_file(path, "not ELF");
	assert_int_equal(ift_dso_dyn_read(path, &dyn), -IFT_E_NOT_ELF);
	ift_dso_dyn_release(&dyn);
	assert_int_equal(ift_dso_dyn_read(tmpdir, &dyn), -EISDIR);
	ift_dso_dyn_release(&dyn);
}

static const struct ift_lib *set_find(const struct ift_libset *set, const char *path)
{
	char *real = realpath(path, NULL);
	const struct ift_lib *hit = NULL;

	if (!real)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].path, real))
			hit = &set->v[i];
	free(real);
	return hit;
}

static void test_discover_runpath(void **state)
{
	char app[PATH_MAX], lib[PATH_MAX];
	char *argv[] = { app, NULL };
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	struct ift_discover_opts opts = { .argv = argv, .envp = envp };
	const struct ift_lib *l;
	struct ift_libset set;
	int ret;

	(void)state;
	if (!have_fake)
		skip();
	snprintf(app, sizeof(app), "%s/app", tmpdir);
	snprintf(lib, sizeof(lib), "%s/lib/libcudart.so.12", tmpdir);
	ift_libset_init(&set);
	ret = ift_discover(&opts, &set);
	assert_true(ret >= 1);
	assert_int_equal((size_t)ret, set.n);
	l = set_find(&set, lib);
	assert_non_null(l);
	assert_string_equal(l->found_by, "DT_NEEDED");
	assert_int_equal(l->nsyms, 5);
	ift_libset_release(&set);

	/* a command that is nowhere on PATH */
	argv[0] = (char *)"ift-no-such-command-here";
	ift_libset_init(&set);
	assert_int_equal(ift_discover(&opts, &set), -ENOENT);
	ift_libset_release(&set);
}

static void test_discover_maps(void **state)
{
	char lib[PATH_MAX];
	struct ift_libset set;
	const struct ift_lib *l;
	void *h;

	(void)state;
	if (!have_fake)
		skip();
	snprintf(lib, sizeof(lib), "%s/lib/libcudart.so.12", tmpdir);
	ift_libset_init(&set);
	assert_int_equal(ift_discover_maps(getpid(), &set), 0);
	assert_null(set_find(&set, lib));
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_true(ift_discover_maps(getpid(), &set) >= 1);
	l = set_find(&set, lib);
	assert_non_null(l);
	assert_string_equal(l->found_by, "proc-maps");
	/* a second look adds nothing */
	assert_int_equal(ift_discover_maps(getpid(), &set), 0);
	dlclose(h);
	ift_libset_release(&set);
	/* a process that is gone */
	{
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (!pid)
			_exit(0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		ift_libset_init(&set);
		assert_int_equal(ift_discover_maps(pid, &set), -ENOENT);
		ift_libset_release(&set);
	}
}

/* ---- the Python interpreter --------------------------------------------- */

static void test_python_child(void **state)
{
	char script[PATH_MAX], *out = NULL;
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	struct timespec t0, t1;
	int ret;

	(void)state;
	/* an "interpreter" that prints like Python does */
	snprintf(script, sizeof(script), "%s/fakepy", tmpdir);
	write_file(script, "#!/bin/sh\necho /prefix; echo /site/one; echo \"$1\"\n");
	assert_int_equal(chmod(script, 0755), 0);
	assert_int_equal(ift_python_sys_path(script, "python3", envp, NULL, NULL, 5000, &out), 0);
	assert_string_equal(out, "/prefix\n/site/one\n-c\n");
	free(out);

	/* one that fails */
	write_file(script, "#!/bin/sh\necho /x; exit 3\n");
	assert_int_equal(ift_python_sys_path(script, "python3", envp, NULL, NULL, 5000, &out), -ECHILD);
	assert_null(out);

	/* one that hangs, and a child of it that keeps the pipe open */
	write_file(script, "#!/bin/sh\nsleep 30 & sleep 30\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = ift_python_sys_path(script, "python3", envp, NULL, NULL, 300, &out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(ret, -ETIMEDOUT);
	assert_null(out);
	assert_true(t1.tv_sec - t0.tv_sec < 5);

	/* one that closes its output and then does not exit */
	write_file(script, "#!/bin/sh\necho /prefix; exec >&-; sleep 30\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = ift_python_sys_path(script, "python3", envp, NULL, NULL, 300, &out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(ret, -ETIMEDOUT);
	assert_null(out);
	assert_true(t1.tv_sec - t0.tv_sec < 5);

	/* no stdin: a read gets end of file at once, not the terminal */
	write_file(script, "#!/bin/sh\nread x || echo eof\n");
	assert_int_equal(ift_python_sys_path(script, "python3", envp, NULL, NULL, 5000, &out), 0);
	assert_string_equal(out, "eof\n");
	free(out);

	/* nothing to run */
	assert_int_equal(ift_python_sys_path("/nonexistent/python3", "python3", envp, NULL, NULL, 1000, &out),
			 -ECHILD);
}

static void test_discover_python_wheels(void **state)
{
	char site[PATH_MAX], env_pp[PATH_MAX + 16];
	char *argv[] = { (char *)"python3", NULL };
	char *envp[] = { env_pp, (char *)"PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	struct ift_discover_opts opts = { .argv = argv, .envp = envp };
	struct ift_libset set;
	const struct ift_lib *a, *b;
	char p1[PATH_MAX + 64], p2[PATH_MAX + 64];

	(void)state;
	if (!have_fake)
		skip();
	/* a real python3 on the given PATH, not a shim that needs $HOME */
	if (system("PATH=/usr/local/bin:/usr/bin:/bin python3 -c 'import sys' >/dev/null 2>&1"))
		skip();
	snprintf(site, sizeof(site), "%s/site", tmpdir);
	snprintf(env_pp, sizeof(env_pp), "PYTHONPATH=%s", site);
	snprintf(p1, sizeof(p1), "%s/nvidia/cuda_runtime/lib/libcudart.so.12", site);
	snprintf(p2, sizeof(p2), "%s/torch/lib/libcudart-abc123.so.12", site);
	run("mkdir -p '%s/nvidia/cuda_runtime/lib' '%s/torch/lib'", site, site);
	run("cp '%s/lib/libcudart.so.12' '%s'", tmpdir, p1);
	run("cp '%s/lib/libcudart.so.12' '%s'", tmpdir, p2);
	ift_libset_init(&set);
	assert_true(ift_discover(&opts, &set) >= 2);
	a = set_find(&set, p1);
	b = set_find(&set, p2);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->found_by, "python");
	assert_string_equal(b->found_by, "python");
	assert_int_equal(b->api, IFT_API_RUNTIME);
	assert_int_equal(b->nsyms, 5);
	ift_libset_release(&set);
}

/* ---- setup -------------------------------------------------------------- */

static int group_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ift-test-discover.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/lib", tmpdir);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/fake.c", tmpdir);
	write_file(path, fake_src);
	snprintf(path, sizeof(path), "%s/fake.map", tmpdir);
	write_file(path, fake_map);
	snprintf(path, sizeof(path), "%s/app.c", tmpdir);
	write_file(path, "int cudaMalloc(void **p, unsigned long n);\n"
			 "int main(void) { void *p; return cudaMalloc(&p, 1); }\n");
	/*
	 * -Ttext-segment moves the addresses away from the file offsets, which
	 * libcudart.so.13 has equal: an offset taken for an address fails here.
	 */
	snprintf(path, sizeof(path),
		 "cd '%s' && " IFT_TEST_CC " -shared -fPIC -O1 " PADS_FLAG
		 " -Wl,-soname,libcudart.so.12 -Wl,--version-script=fake.map"
		 " -Wl,-Ttext-segment=0x10000 -o lib/libcudart.so.12 fake.c 2>/dev/null &&"
		 " " IFT_TEST_CC " -o app app.c -Llib -l:libcudart.so.12"
		 " -Wl,--enable-new-dtags,-rpath,'%s/lib' 2>/dev/null", tmpdir, tmpdir);
	have_fake = system(path) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* $PLATFORM as glibc's ld.so chooses it (init_cpu_features): on Intel CPUs
 * from the CPU's features, not only from AT_PLATFORM */
static void test_ldso_platform(void **state)
{
	struct ldso_cpu none = { 0 }, cpu;
	const struct ldso_cpu haswell = {
		.intel = true, .avx2 = true, .fma = true, .bmi1 = true, .bmi2 = true,
		.lzcnt = true, .movbe = true, .popcnt = true,
	};

	(void)state;
	assert_string_equal(ift_ldso_platform(&none, "x86_64"), "x86_64");
	/* no AT_PLATFORM: the machine's own name */
	assert_string_equal(ift_ldso_platform(&none, NULL), ift_arch_native->name);
	assert_string_equal(ift_ldso_platform(&haswell, "x86_64"), "haswell");
	/* a Skylake-SP or later: AVX512CD without ER is still haswell */
	cpu = haswell;
	cpu.avx512cd = true;
	assert_string_equal(ift_ldso_platform(&cpu, "x86_64"), "haswell");
	/* Knights Landing */
	cpu.avx512er = cpu.avx512pf = true;
	assert_string_equal(ift_ldso_platform(&cpu, "x86_64"), "xeon_phi");
	/* ER without PF is no xeon_phi: haswell, by the other features */
	cpu.avx512pf = false;
	assert_string_equal(ift_ldso_platform(&cpu, "x86_64"), "haswell");
	/* one feature short of haswell */
	cpu = haswell;
	cpu.movbe = false;
	assert_string_equal(ift_ldso_platform(&cpu, "x86_64"), "x86_64");
	/* the same features on another vendor's CPU: AT_PLATFORM */
	cpu = haswell;
	cpu.intel = false;
	assert_string_equal(ift_ldso_platform(&cpu, "x86_64"), "x86_64");
	/* this CPU: what the real ld.so would say is checked by t102 */
	ift_ldso_cpu_read(&cpu);
	assert_non_null(ift_ldso_platform(&cpu, "x86_64"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_func_find),
		cmocka_unit_test(test_cuda_lib_api),
		cmocka_unit_test(test_cudart_offsets),
		cmocka_unit_test(test_cudart_build_id),
		cmocka_unit_test(test_not_cuda_and_errors),
		cmocka_unit_test(test_dedupe_symlink),
		cmocka_unit_test(test_fake_offsets),
		cmocka_unit_test(test_symtab_versioned),
		cmocka_unit_test(test_ldcache_vs_ldconfig),
		cmocka_unit_test(test_ldcache_synthetic),
		cmocka_unit_test(test_ldcache_broken),
		cmocka_unit_test(test_dyn_read),
		cmocka_unit_test(test_discover_runpath),
		cmocka_unit_test(test_discover_maps),
		cmocka_unit_test(test_python_child),
		cmocka_unit_test(test_discover_python_wheels),
		cmocka_unit_test(test_ldso_platform),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
