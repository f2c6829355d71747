// SPDX-License-Identifier: MIT
/*
 * What one traced call's probes cost the thread that makes it: the trap of
 * its entry uprobe and of its return probe, timed on a function of this
 * program's own.  The analyzer takes it out of the time a thread spends on a
 * CPU between two calls (analyze/chains-pass.c): that time holds the end of
 * one call's return trap and the start of the next call's entry trap, the
 * tracer's time and not the program's.  A pair took 1.4-1.9 us on this
 * project's VMs and 3.6 us in an emulated (TCG) 5.10 guest; there the first
 * calls of a process pay 50-170 us more while the emulator translates the
 * traps' code, which no calibration sees.  With tracing off the pair writes
 * no event: a lower bound (2.1-2.4 us with tracing on here).  Isolated
 * (record --isolate) the pair is armed as perf events that write their
 * records, as the traced tasks' are: 2.3-2.8 us here against 1.3-1.5
 * through tracefs, on a host busy with two emulators.
 *
 * The cost depends on the first instruction at the probed address (FACTS:
 * `push %rbp` is emulated, most others single-stepped), so the target is
 * built as the CUDA libraries' functions are: a frame pointer first, no
 * endbr64 (GNUmakefile builds this file with -fno-omit-frame-pointer
 * -fcf-protection=none).  It is timed in wall-clock time over a few short
 * rounds, of which the fastest is kept: what is taken out of a gap must be
 * the tracer's, and a round on a loaded machine is longer by whatever
 * preempted it (the median of 7 rounds read 4.2 us here, under two busy
 * emulators, where the probes added 2.0 us to a call).  In a 6.1 guest the
 * fastest of 7 read 8.0-8.1 us in three runs and 14.1 us in a fourth: 15
 * rounds after one untimed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"
#include "util/timing.h"

/* Calls it makes (it is no leaf: compilers drop a leaf's frame pointer),
   and the calls of it, go through pointers the optimizer cannot see
   through, so it is neither inlined nor a tail call. */
static unsigned step(unsigned x)
{
	return x + 1;
}

static unsigned (*volatile inner)(unsigned) = step;

__attribute__((noinline, noclone, used))
unsigned ift_tfs_trap_target(unsigned x)
{
	return inner(x) + 1;
}

static unsigned (*volatile target)(unsigned) = ift_tfs_trap_target;
static volatile unsigned sink;

uint64_t ift_tfs_trap_target_time(void)
{
	uint64_t v[TFS_TRAP_ROUNDS];
	unsigned x = 0;

	/* a round untimed: the first hit maps the return trampoline, and an
	   emulator translates the traps' code on their first runs */
	for (int i = 0; i < TFS_TRAP_CALLS; i++)
		x = target(x);
	for (int r = 0; r < TFS_TRAP_ROUNDS; r++) {
		uint64_t t0 = ift_mono_ns();

		for (int i = 0; i < TFS_TRAP_CALLS; i++)
			x = target(x);
		v[r] = (ift_mono_ns() - t0) / TFS_TRAP_CALLS;
	}
	sink = x;
	return ift_min_u64(v, TFS_TRAP_ROUNDS);
}

int ift_tfs_trap_target_where(char *path, size_t len, uint64_t *off)
{
	uintptr_t addr = (uintptr_t)ift_tfs_trap_target;
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		uint64_t pgoff;
		int name = 0;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64 " %*s %*s %n",
			   &lo, &hi, &pgoff, &name) < 3 || addr < lo || addr >= hi)
			continue;
		/* an anonymous or deleted mapping has no file to probe */
		line[strcspn(line, "\n")] = '\0';
		if (!name || line[name] != '/' || strstr(line + name, " (deleted)"))
			break;
		/* uprobe_events splits its line at blanks */
		if (strpbrk(line + name, " \t")) {
			ret = -EINVAL;
			break;
		}
		if (strlen(line + name) >= len) {
			ret = -ENAMETOOLONG;
			break;
		}
		strcpy(path, line + name);
		*off = addr - lo + pgoff;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
