// SPDX-License-Identifier: MIT
/*
 * faultcost: what one fresh page costs the thread that first writes it on
 * this machine, now: the fault, the zeroing, the page-table update.  The
 * analyzer weighs a thread's page allocations with it (chains.c): a page
 * costs 1.5 us on one host and 5 us on the same host under a memory-hungry
 * neighbour or a hypervisor taking time, and a constant would call a
 * page-fault storm "building input" on the slow one.
 *
 * It is measured the way a program meets the cost, by touching fresh
 * anonymous pages one by one, in wall-clock time as the tracer measures the
 * thread's time on a CPU (time a hypervisor took is in both).  Rounds are
 * short and the median is kept, so a preemption in one round does not count.
 * Pages are the base size (MADV_NOHUGEPAGE): mm_page_alloc counts base pages.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ift-sample.h"
#include "util/timing.h"

/* 256 pages a round, 7 rounds: about 3 ms on the machines we test on */
#define FC_PAGES	256
#define FC_ROUNDS	7

int ift_fault_cost(uint64_t *ns)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	uint64_t v[FC_ROUNDS];

	if (page <= 0)
		return -EINVAL;
	len = (size_t)page * FC_PAGES;
	for (int r = 0; r < FC_ROUNDS; r++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t t0;

		if (p == MAP_FAILED)
			return -errno;
		/* advice only: where THP is off the pages are small anyway */
		madvise((void *)p, len, MADV_NOHUGEPAGE);
		t0 = ift_mono_ns();
		for (size_t i = 0; i < len; i += (size_t)page)
			p[i] = 1;
		v[r] = (ift_mono_ns() - t0) / FC_PAGES;
		munmap((void *)p, len);
	}
	*ns = ift_median_u64(v, FC_ROUNDS);
	if (!*ns)
		*ns = 1;
	return 0;
}
