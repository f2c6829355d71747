/* SPDX-License-Identifier: MIT */
#ifndef UNWIND_CHAIN_H
#define UNWIND_CHAIN_H
/*
 * A known call chain for test-unwind, in a library of its own built with
 * -O2 -fomit-frame-pointer (tests/unit/unwind-chain.c): chain_a calls
 * chain_b calls chain_c, which saves the registers as perf samples them
 * on this machine (ift_arch_native's order: PERF_REG_X86_*, PERF_REG_ARM64_*)
 * and a copy of the stack from the saved sp, as a uprobe's perf event would.
 */
#include <stddef.h>
#include <stdint.h>

#define CHAIN_REGS	33		/* IFT_ARCH_MAX_REGS */
#define CHAIN_STACK	16384

struct chain_snap {
	uint64_t regs[CHAIN_REGS];
	uint64_t top;			/* end of the stack mapping: copy no further */
	size_t len;			/* bytes copied into stack */
	uint64_t stack[CHAIN_STACK / 8];
};

int chain_a(struct chain_snap *s, int x);
int chain_b(struct chain_snap *s, int x);
int chain_c(struct chain_snap *s, int x);
/* Saves the registers as they are in its caller after the call returns. */
void chain_capture(uint64_t *regs);

#endif
