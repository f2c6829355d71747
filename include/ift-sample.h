/* SPDX-License-Identifier: MIT */
#ifndef IFT_SAMPLE_H
#define IFT_SAMPLE_H

/*
 * sample: system context read from /proc (CPU utilisation per CPU and in
 * total, runnable and blocked tasks, load, memory and swap), about ten times
 * a second during a recording.  Reads only; no tracefs.
 */
#include <stdint.h>

struct ift_sampler;

/* One value.  SCOPE: 0 = the whole system, N + 1 = CPU N. */
typedef int (*ift_sample_fn)(void *ctx, const char *metric, unsigned scope,
			     int64_t value);

/* Allocates a sampler (reads a first /proc/stat baseline).  NULL + errno. */
struct ift_sampler *ift_sampler_new(void);
/* The same, reading PROCDIR instead of /proc (tests use fixture files). */
struct ift_sampler *ift_sampler_new_at(const char *procdir);
void ift_sampler_free(struct ift_sampler *s);

/*
 * ift_sampler_read - read /proc now and call EMIT once per value.  CPU
 * figures are over the interval since the previous call.  Metrics:
 *   cpu.busy_permille, cpu.user_permille, cpu.system_permille,
 *   cpu.iowait_permille, cpu.steal_permille (system and per CPU),
 *   procs.running, procs.blocked, load.1_milli,
 *   mem.total_kb, mem.available_kb, swap.used_kb, swap.in_pages, swap.out_pages
 *   (system only).  Returns 0, an error from /proc, or what EMIT returned if < 0.
 */
int ift_sampler_read(struct ift_sampler *s, ift_sample_fn emit, void *ctx);

/*
 * ift_fault_cost - what one fresh base page costs the thread that first
 * writes it, on this machine now (fault, zeroing, page tables): the median
 * of a few rounds of touching fresh anonymous pages, in wall-clock ns.
 * Returns 0 with *NS >= 1, or -errno (mmap).  Takes a few milliseconds.
 */
int ift_fault_cost(uint64_t *ns);

#endif
