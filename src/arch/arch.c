// SPDX-License-Identifier: MIT
/*
 * The facts of each architecture the recorder runs on, and the calling
 * conventions' rules for where an argument is at a function's first
 * instruction.  Both descriptors are built on every host (test-arch checks
 * each); ift_arch_native is the one this binary runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>

#include "ift-arch.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* glibc's ld.so.cache: a 64-bit library of each machine (elf/cache.c) */
#define LDCACHE_X8664_LIB64	0x0300
#define LDCACHE_AARCH64_LIB64	0x0a00

/* ---- x86-64: the System V ABI ---------------------------------------- */

static const char *const x86_64_regs[] = { "di", "si", "dx", "cx", "r8", "r9" };

static const char *const x86_64_cuda[] = { "x86_64-linux", NULL };

/* CET builds start functions with it (f3 0f 1e fa) */
static const struct ift_arch_pad x86_64_pads[] = {
	{ { 0xf3, 0x0f, 0x1e, 0xfa }, "endbr64" },
};

/*
 * libunwind's (DWARF's) rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip
 * in the sample's order: ax bx cx dx si di bp sp ip r8-r15
 */
static const int8_t x86_64_unw[] = { 0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8 };

const struct ift_arch ift_arch_x86_64 = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.ldcache_flags = LDCACHE_X8664_LIB64,
	.multiarch = "x86_64-linux-gnu",
	.cuda_targets = x86_64_cuda,
	.int_regs = x86_64_regs,
	.nint_regs = 6,
	.sp = "sp",
	.stack_args_at = 8,
	.big_struct_by_ref = false,
	.struct_spill_closes_regs = false,
	.pads = x86_64_pads,
	.npads = sizeof(x86_64_pads) / sizeof(x86_64_pads[0]),
	/* PERF_REG_X86_AX..IP (bits 0-8) and R8..R15 (16-23) */
	.perf_regs_mask = 0x1ffULL | (0xffULL << 16),
	.perf_nregs = 17,
	.perf_sp = 7,
	.perf_ip = 8,
	.unw_to_perf = x86_64_unw,
	.nunw = sizeof(x86_64_unw),
	.glibc_pthread_tid = 720,
};

/* ---- aarch64: AAPCS64 ------------------------------------------------ */

static const char *const aarch64_regs[] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };

/* servers (Grace, DGX Spark) install sbsa-linux, Jetson's L4T aarch64-linux */
static const char *const aarch64_cuda[] = { "sbsa-linux", "aarch64-linux", NULL };

/*
 * A function built with -mbranch-protection starts with a BTI landing pad,
 * here in memory order.  PACIASP (which also lands an indirect call) is not
 * one to go past: it signs the link register, and a return probe armed after
 * it would hand AUTIASP the trampoline's unsigned address.
 */
static const struct ift_arch_pad aarch64_pads[] = {
	{ { 0x5f, 0x24, 0x03, 0xd5 }, "bti c" },
	{ { 0xdf, 0x24, 0x03, 0xd5 }, "bti jc" },
};

/* x0-x30, sp, pc: the same numbers in both */
static const int8_t aarch64_unw[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
};

const struct ift_arch ift_arch_aarch64 = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.ldcache_flags = LDCACHE_AARCH64_LIB64,
	.multiarch = "aarch64-linux-gnu",
	.cuda_targets = aarch64_cuda,
	.int_regs = aarch64_regs,
	.nint_regs = 8,
	.sp = "sp",
	.stack_args_at = 0,
	.big_struct_by_ref = true,
	.struct_spill_closes_regs = true,
	.pads = aarch64_pads,
	.npads = sizeof(aarch64_pads) / sizeof(aarch64_pads[0]),
	/* PERF_REG_ARM64_X0..X30, SP, PC: bits 0-32 */
	.perf_regs_mask = (1ULL << 33) - 1,
	.perf_nregs = 33,
	.perf_sp = 31,
	.perf_ip = 32,
	.unw_to_perf = aarch64_unw,
	.pac_va_bits = 48,
	.nunw = sizeof(aarch64_unw),
	.glibc_pthread_tid = 208,
};

#if defined(__x86_64__)
const struct ift_arch *const ift_arch_native = &ift_arch_x86_64;
#elif defined(__aarch64__)
const struct ift_arch *const ift_arch_native = &ift_arch_aarch64;
#else
#error "ingero-ftrace knows x86-64 and aarch64 (src/arch/arch.c)"
#endif

const struct ift_arch *ift_arch_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "x86_64"))
		return &ift_arch_x86_64;
	if (!strcmp(name, "aarch64") || !strcmp(name, "arm64"))
		return &ift_arch_aarch64;
	return NULL;
}

/* Eightbytes a parameter takes, passed as its class is; 0: unknown class. */
static unsigned param_words(const struct ift_arch *a, char c, bool *by_ref, bool *memory)
{
	*by_ref = *memory = false;
	switch (c) {
	case IFT_PARAM_INT:
		return 1;
	case IFT_PARAM_DIM3:
		return 2;		/* 12 bytes, in two registers or 16 of stack */
	case IFT_PARAM_NCCL_ID:
		if (a->big_struct_by_ref) {
			*by_ref = true;
			return 1;	/* the copy's address */
		}
		*memory = true;		/* SysV's MEMORY class: all on the stack */
		return 16;
	default:
		return 0;
	}
}

int ift_arch_arg_fetch(const struct ift_arch *a, const char *sig, unsigned param,
		       unsigned part, int deref, char *buf, size_t len)
{
	static const char classes[] = { IFT_PARAM_INT, IFT_PARAM_DIM3, IFT_PARAM_NCCL_ID, 0 };
	unsigned reg = 0, stack = 0;
	bool closed = false;

	if (sig[strspn(sig, classes)])
		return -EINVAL;
	for (unsigned i = 0; sig[i]; i++) {
		bool by_ref, memory, in_regs;
		unsigned words = param_words(a, sig[i], &by_ref, &memory);
		char loc[32];
		int n;

		if (!words)
			return -EINVAL;
		in_regs = !memory && !closed && reg + words <= a->nint_regs;
		if (i == param) {
			/* a struct by reference is one pointer: its parts are memory */
			if (part >= (by_ref ? 1 : words))
				return -EINVAL;
			if (in_regs)
				snprintf(loc, sizeof(loc), "%%%s", a->int_regs[reg + part]);
			else
				snprintf(loc, sizeof(loc), "+%u(%%%s)",
					 a->stack_args_at + 8 * (stack + part), a->sp);
			n = deref >= 0 ? snprintf(buf, len, "+%d(%s)", deref, loc) :
					 snprintf(buf, len, "%s", loc);
			return n < 0 || (size_t)n >= len ? -E2BIG : 0;
		}
		if (in_regs) {
			reg += words;
		} else {
			stack += words;
			if (!memory && a->struct_spill_closes_regs)
				closed = true;
		}
	}
	return -EINVAL;
}

size_t ift_arch_entry_skip(const struct ift_arch *a, const uint8_t *code, size_t len)
{
	for (size_t i = 0; i < a->npads; i++)
		if (len >= sizeof(a->pads[i].bytes) &&
		    !memcmp(code, a->pads[i].bytes, sizeof(a->pads[i].bytes)))
			return sizeof(a->pads[i].bytes);
	return 0;
}
