/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_TIMING_H
#define IFT_UTIL_TIMING_H

/*
 * What the recorder's measurements of this machine share (the cost of a
 * fresh page, sample/faultcost.c; of a probe's traps, probe/cost.c): a
 * wall clock that counts what a hypervisor took too, as the tracer's clock
 * does, and the median or the least of a few short rounds, so that a
 * preempted round does not count.
 */
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t ift_mono_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns: a realtime read between two
   monotonic ones, the tightest of a few tries, so that a preemption between
   the reads (tens of ms on a loaded emulated machine) does not move it. */
int64_t ift_wall_offset_ns(void);
/* The median of V[0..N) (N > 0), which it sorts. */
uint64_t ift_median_u64(uint64_t *v, size_t n);
/* The least of V[0..N) (N > 0). */
uint64_t ift_min_u64(const uint64_t *v, size_t n);

#endif
