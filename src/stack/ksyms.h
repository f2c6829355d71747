/* SPDX-License-Identifier: MIT */
#ifndef IFT_STACK_KSYMS_H
#define IFT_STACK_KSYMS_H

/*
 * The entry a profile sample in the kernel came through (ksyms.c): from
 * the kernel's call chain of the sample and /proc/kallsyms.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ift_kentry {
	IFT_KENTRY_UNKNOWN,
	IFT_KENTRY_SYSCALL,
	IFT_KENTRY_FAULT,
	IFT_KENTRY_IRQ,		/* an interrupt, or the softirqs on its way out */
	IFT_KENTRY_TRAP,	/* a breakpoint: a uprobe's, the tracer's own */
};

struct ift_ksym {
	uint64_t addr;
	enum ift_kentry kind;
};

/* The kernel's text symbols, by address; N 0 when none could be read. */
struct ift_ksyms {
	struct ift_ksym *v;
	size_t n;
};

/*
 * ift_ksyms_load - read PATH (/proc/kallsyms) into K.  Returns 0 (K->n 0
 * when the addresses are hidden: kptr_restrict) or a negative errno, K
 * empty.
 */
int ift_ksyms_load(struct ift_ksyms *k, const char *path);
/* The entry of a kernel call chain IPS (N, innermost first): the first
   entry function from the outermost frame inwards. */
enum ift_kentry ift_ksyms_entry(const struct ift_ksyms *k, const uint64_t *ips, size_t n);
void ift_ksyms_free(struct ift_ksyms *k);

#endif
