// SPDX-License-Identifier: MIT
/*
 * The remote unwinder on saved stack bytes, as the recorder feeds it: the
 * registers and a copy of the stack taken in-process at a known point of a
 * chain built without frame pointers (libunwchain.so, unwind-chain.c), the
 * modules from /proc/self/maps.  Then the same stack cut short, random
 * bytes and random registers: fewer frames, never a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-stack.h"

/* the sample's registers on this machine (perf's order) */
#define NREGS	((int)ift_arch_native->perf_nregs)
#define SP	((int)ift_arch_native->perf_sp)
#define IP	((int)ift_arch_native->perf_ip)
#include "ift-words.h"
#include "unwind-chain.h"

#define MAXF	64

static struct chain_snap snap;

/* End of the mapping holding ADDR in /proc/self/maps, or 0. */
static uint64_t map_end(uint64_t addr)
{
	unsigned long long lo, hi;
	char line[4400];
	uint64_t end = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	while (!end && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	fclose(f);
	return end;
}

/* Runs the chain from here: its frames then test_caller's. */
static __attribute__((noinline)) void test_caller(void)
{
	volatile int here = 0;

	memset(&snap, 0, sizeof(snap));
	snap.top = map_end((uint64_t)(uintptr_t)&here);
	assert_true(snap.top != 0);
	assert_true(chain_a(&snap, here + 3) > 0);	/* pads hold 0.. and x */
	assert_true(snap.len > 256);
}

/*
 * The test unwinds its own stack.  AddressSanitizer's fake stacks (found
 * stack use after return, on by default from gcc 14) would move its frames
 * off it: they stay on the real one.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_stack_use_after_return=0";
}

static struct ift_unwinder *unwinder(void)
{
	struct ift_unwinder *u = ift_unwinder_new();

	assert_non_null(u);
	assert_int_equal(ift_unwinder_read_maps(u, getpid()), 0);
	return u;
}

/* Frame I's symbol, as the recorder names it (return addresses at ip - 1). */
static const char *sym(struct ift_unwinder *u, const uint64_t *ips, int i)
{
	struct ift_frame f;

	ift_unwinder_frame(u, getpid(), ips[i], i > 0, &f);
	return f.symbol;
}

static void test_chain(void **state)
{
	static const char *const want[] = { "chain_c", "chain_b", "chain_a", "test_caller" };
	struct ift_unwinder *u = unwinder();
	uint64_t ips[MAXF];
	struct ift_frame f;
	char buf[256];
	int n;

	(void)state;
	test_caller();
	n = ift_unwind(u, getpid(), snap.regs, snap.stack, snap.len, ips, MAXF);
	assert_true(n >= 4);
	for (int i = 0; i < 4; i++)
		if (strcmp(sym(u, ips, i), want[i]))
			fail_msg("frame %d is '%s', want '%s'", i, sym(u, ips, i), want[i]);
	/*
	 * the test's own caller is cmocka's, then main's: every frame named,
	 * up to main.  Past it is libc's start-up, whose outermost frame ends
	 * the walk natively; under qemu-user 10 (Debian 13) one more address,
	 * read from the stack QEMU built, follows (0x557f3dff235ed8: in no
	 * mapping, past arm64's address space).
	 */
	bool main_seen = false;

	for (int i = 4; i < n && !main_seen; i++) {
		ift_unwinder_frame(u, getpid(), ips[i], true, &f);
		if (f.module[0] != '/')
			fail_msg("frame %d of %d (0x%" PRIx64 ") is in '%s'", i, n, ips[i], f.module);
		main_seen = !strcmp(f.symbol, "main");
	}
	assert_true(main_seen);
	/* formatted as report shows it */
	ift_unwinder_frame(u, getpid(), ips[1], true, &f);
	ift_frame_format(&f, buf, sizeof(buf));
	if (strncmp(buf, "chain_b+0x", 10) || !strstr(buf, " (libunwchain.so)"))
		fail_msg("frame 1 formats as '%s'", buf);
	/* the return address lies inside chain_b, after its start */
	assert_true(f.symoff > 0);
	/* MAX frames at most */
	assert_int_equal(ift_unwind(u, getpid(), snap.regs, snap.stack, snap.len, ips, 2), 2);
	assert_int_equal(ift_unwind(u, getpid(), snap.regs, snap.stack, snap.len, ips, 0), 0);
	ift_unwinder_free(u);
}

/* Fewer bytes: a prefix of the full unwind, never longer with less. */
static void test_cut(void **state)
{
	struct ift_unwinder *u = unwinder();
	uint64_t full[MAXF], ips[MAXF];
	int nfull, prev = 1, n;

	(void)state;
	test_caller();
	nfull = ift_unwind(u, getpid(), snap.regs, snap.stack, snap.len, full, MAXF);
	assert_true(nfull >= 4);
	for (size_t len = 0; len <= snap.len; len += 8) {
		n = ift_unwind(u, getpid(), snap.regs, snap.stack, len, ips, MAXF);
		assert_true(n >= 1 && n <= nfull);
		assert_true(n >= prev);
		for (int i = 0; i < n; i++)
			assert_true(ips[i] == full[i]);
		prev = n;
	}
	/* no bytes at all: only the pc */
	n = ift_unwind(u, getpid(), snap.regs, snap.stack, 0, ips, MAXF);
	assert_int_equal(n, 1);
	assert_string_equal(sym(u, ips, 0), "chain_c");
	assert_int_equal(prev, nfull);
	ift_unwinder_free(u);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random stack bytes under real registers, then random registers too. */
static void test_garbage(void **state)
{
	struct ift_unwinder *u = unwinder();
	static uint64_t junk[CHAIN_STACK / 8];
	uint64_t regs[IFT_ARCH_MAX_REGS], ips[MAXF], x = 0x9e3779b97f4a7c15ull;
	struct ift_frame f;
	char buf[256];

	(void)state;
	test_caller();
	for (int round = 0; round < 3000; round++) {
		size_t len = (size_t)(rnd(&x) % (CHAIN_STACK / 8)) * 8;
		int n;

		for (size_t i = 0; i < CHAIN_STACK / 8; i++)
			junk[i] = rnd(&x);
		/* some words point back into the copy or at the chain's code */
		for (int k = 0; k < 64; k++)
			junk[rnd(&x) % (CHAIN_STACK / 8)] = rnd(&x) & 1 ?
				snap.regs[SP] + rnd(&x) % CHAIN_STACK :
				snap.regs[IP] + rnd(&x) % 4096 - 2048;
		memcpy(regs, snap.regs, sizeof(regs));
		switch (round % 3) {
		case 0:	/* the chain's registers, garbage stack */
			break;
		case 1:	/* garbage everything */
			for (int r = 0; r < NREGS; r++)
				regs[r] = rnd(&x);
			break;
		case 2:	/* a pc in the chain's code, the rest garbage */
			for (int r = 0; r < NREGS; r++)
				if (r != SP)
					regs[r] = rnd(&x);
			regs[IP] = snap.regs[IP] + rnd(&x) % 512 - 256;
			break;
		}
		n = ift_unwind(u, getpid(), regs, junk, len, ips, MAXF);
		assert_true(n >= 1 && n <= MAXF);
		assert_true(ips[0] == regs[IP]);
		for (int i = 0; i < n; i++) {
			ift_unwinder_frame(u, getpid(), ips[i], i > 0, &f);
			ift_frame_format(&f, buf, sizeof(buf));
			assert_true(buf[0] != 0);
		}
	}
	ift_unwinder_free(u);
}

/* Frames no map holds, and modules without the symbol: per ift_frame_format. */
static void test_unknown(void **state)
{
	struct ift_unwinder *u = unwinder();
	struct ift_frame f;
	const char *lib = NULL;
	char buf[256], line[4400], path[4097];
	unsigned long long lo, hi, off;
	FILE *m;

	(void)state;
	/* address 0x10: no mapping */
	ift_unwinder_frame(u, getpid(), 0x10, true, &f);
	assert_string_equal(f.module, "");
	assert_string_equal(f.symbol, "");
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown] 0x10");
	/* a pid the unwinder never heard of */
	ift_unwinder_frame(u, 999999, (uint64_t)(uintptr_t)chain_b, false, &f);
	ift_frame_format(&f, buf, sizeof(buf));
	assert_true(!strncmp(buf, "[unknown] 0x", 12));

	/* the library's path, from the maps */
	m = fopen("/proc/self/maps", "re");
	assert_non_null(m);
	while (!lib && fgets(line, sizeof(line), m))
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4096s", &lo, &hi, &off, path) == 4 &&
		    strstr(path, "/libunwchain.so"))
			lib = path;
	fclose(m);
	assert_non_null(lib);
	/* a made-up process that maps it at 0x400000 from offset 0: its ELF
	   header (offset 0x10) lies in no function */
	assert_int_equal(ift_unwinder_map(u, 4242, 0x400000, 0x500000, 0, lib), 0);
	ift_unwinder_frame(u, 4242, 0x400010, false, &f);
	assert_string_equal(f.symbol, "");
	assert_true(f.offset == 0x10);
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "libunwchain.so+0x10");
	/* a python frame with no symbol keeps its mark */
	f.flags = IFT_FRAME_F_PYTHON;
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "[python] libunwchain.so+0x10");
	/* anonymous and pseudo mappings add nothing */
	assert_int_equal(ift_unwinder_map(u, 4243, 0x400000, 0x500000, 0, "[vdso]"), 0);
	ift_unwinder_frame(u, 4243, 0x400010, false, &f);
	assert_string_equal(f.module, "");
	/* a file that is not ELF: named by its path, unwinds no further */
	assert_int_equal(ift_unwinder_map(u, 4244, 0x400000, 0x500000, 0, "/proc/self/status"), 0);
	ift_unwinder_frame(u, 4244, 0x400010, false, &f);
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "status+0x10");
	{
		uint64_t regs[IFT_ARCH_MAX_REGS] = { 0 }, ips[MAXF];

		regs[IP] = 0x400010;
		regs[SP] = 0x7ff000;
		assert_int_equal(ift_unwind(u, 4244, regs, snap.stack, 4096, ips, MAXF), 1);
	}
	ift_unwinder_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
