/* SPDX-License-Identifier: MIT */
#ifndef IFT_ARCH_H
#define IFT_ARCH_H

/*
 * arch: what the recorder must know of the CPU it runs on, one descriptor per
 * architecture (src/arch/arch.c), the native one chosen at build time.  Every
 * descriptor is compiled on every host, so the rules of each are unit-tested
 * on any machine; nothing here touches the running system.
 *
 * Only the record half asks: a trace file is the same bytes whichever
 * machine wrote it (docs/trace-format.md), and says which in host.arch.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most user registers any descriptor samples (aarch64: x0-x30, sp, pc). */
#define IFT_ARCH_MAX_REGS	33

/*
 * A parameter of a C signature, by what the calling convention does with it
 * (the catalog's signatures are strings of these):
 *   'i'  an integer or pointer of at most 8 bytes
 *   'd'  dim3 by value: a 12-byte struct of three unsigned ints
 *   'u'  ncclUniqueId by value: a 128-byte struct
 */
#define IFT_PARAM_INT		'i'
#define IFT_PARAM_DIM3		'd'
#define IFT_PARAM_NCCL_ID	'u'

/* A 4-byte instruction a function may start with that a probe goes after. */
struct ift_arch_pad {
	uint8_t bytes[4];
	const char *what;	/* "endbr64", "bti c" */
};

struct ift_arch {
	const char *name;		/* as uname -m says it: "x86_64", "aarch64" */
	uint16_t elf_machine;		/* e_machine of the files it runs (EM_*) */
	/* ld.so.cache's flags of a 64-bit library of this machine (FLAG_*) */
	uint32_t ldcache_flags;
	const char *multiarch;		/* Debian's triplet: "x86_64-linux-gnu" */
	/* CUDA's targets/ directories, most specific first, NULL-terminated */
	const char *const *cuda_targets;

	/* -- calling convention, at a function's first instruction -- */
	const char *const *int_regs;	/* integer argument registers, uprobe syntax */
	unsigned nint_regs;
	const char *sp;			/* the stack pointer, uprobe syntax */
	/* offset from sp of the first argument passed on the stack: 8 past
	   x86-64's return address, 0 on aarch64 (the link register has it) */
	unsigned stack_args_at;
	/* a struct over 16 bytes by value: a pointer to a copy in the next
	   argument register (AAPCS64) rather than the whole on the stack (SysV) */
	bool big_struct_by_ref;
	/* a struct of two eightbytes that finds one register left: AAPCS64
	   passes it on the stack and uses no argument register after it; SysV
	   leaves that register to the integer arguments that follow */
	bool struct_spill_closes_regs;

	/* -- where an entry probe goes -- */
	const struct ift_arch_pad *pads;
	size_t npads;

	/* -- perf's user registers (PERF_SAMPLE_REGS_USER) -- */
	uint64_t perf_regs_mask;	/* sample_regs_user */
	unsigned perf_nregs;		/* bits set in it: the sample's u64s */
	unsigned perf_sp, perf_ip;	/* indices of sp and pc in the sample */
	/* the sample's index of each register as libunwind numbers them
	   (UNW_X86_64_*, UNW_AARCH64_*: the DWARF numbers), -1 for none */
	const int8_t *unw_to_perf;
	unsigned nunw;
	/* pointer authentication (aarch64 PAC): the bits from here up of a
	   return address signed by paciasp hold its code, not the address
	   (Linux's user addresses are below 2^48 but where a process asked
	   for more, up to 2^52); 0: none */
	unsigned pac_va_bits;

	/* glibc's struct pthread: offset of the thread id (nptl/descr.h) */
	unsigned glibc_pthread_tid;
};

extern const struct ift_arch ift_arch_x86_64;
extern const struct ift_arch ift_arch_aarch64;

/* The machine this binary was built for. */
extern const struct ift_arch *const ift_arch_native;

/* The descriptor of NAME ("x86_64", "aarch64"; "arm64" too), or NULL. */
const struct ift_arch *ift_arch_find(const char *name);

/*
 * ift_arch_arg_fetch - where argument PARAM (0-based) of a function of
 * signature SIG is at its first instruction, as a uprobe fetch-arg written
 * into BUF (LEN bytes): "%si", "%x1", "+8(%sp)".  PART picks the eightbyte of
 * a struct by value (dim3: 0 = x and y, 1 = z in its low 32 bits, the rest
 * undefined).  DEREF >= 0 reads the u64 at
 * that offset of the pointer there instead ("+32(%di)").  Returns 0, or
 * -EINVAL for a parameter or part SIG does not have, -E2BIG when BUF is
 * short.
 */
int ift_arch_arg_fetch(const struct ift_arch *a, const char *sig, unsigned param,
		       unsigned part, int deref, char *buf, size_t len);

/*
 * ift_arch_entry_skip - how many bytes of CODE (LEN bytes at a function's
 * start) an entry probe goes past: a landing pad the function starts with
 * (x86-64's endbr64, which a uprobe would single-step at ~14x the cost of
 * what follows; aarch64's "bti c").  0 when it starts with none.
 */
size_t ift_arch_entry_skip(const struct ift_arch *a, const uint8_t *code, size_t len);

#endif
