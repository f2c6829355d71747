// SPDX-License-Identifier: MIT
/*
 * Why a profile sample found its thread in the kernel: the kernel's own
 * call chain of the sample (perf's, innermost first) ends, outermost, in
 * the entry the thread came in through, which /proc/kallsyms names.  The
 * first entry function met from the outermost frame inwards decides: a
 * system call, a page fault, an interrupt (a hard interrupt, or the
 * softirqs run on its way out), which took the CPU from the thread's user
 * code without the thread asking for it, or a breakpoint trap: a uprobe's,
 * the tracer's own time in the thread.
 *
 * Entry names move between kernel versions (page_fault became
 * asm_exc_page_fault in 5.8, el0_sync's handlers el0t_64_sync's in 5.13),
 * so each kind lists the names of 4.9 to 6.x on x86-64 and arm64.  Only
 * text symbols are kept, with their kind (most have none): 16 bytes each,
 * 2 MB for the 121,000 of this 6.18 kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/ksyms.h"

/* A name that marks an entry: exactly NAME, or starting with it (PREFIX). */
struct entry_name {
	const char *name;
	bool prefix;
	enum ift_kentry kind;
};

static const struct entry_name entries[] = {
	/* system calls: x86-64, its 32-bit entries, arm64 */
	{ "entry_SYSCALL", true, IFT_KENTRY_SYSCALL },
	{ "entry_SYSENTER", true, IFT_KENTRY_SYSCALL },
	{ "entry_INT80", true, IFT_KENTRY_SYSCALL },
	{ "do_syscall_", true, IFT_KENTRY_SYSCALL },
	{ "do_fast_syscall_", true, IFT_KENTRY_SYSCALL },
	{ "__do_fast_syscall_", true, IFT_KENTRY_SYSCALL },
	{ "el0_svc", true, IFT_KENTRY_SYSCALL },
	{ "do_el0_svc", true, IFT_KENTRY_SYSCALL },
	{ "invoke_syscall", false, IFT_KENTRY_SYSCALL },
	/* page faults */
	{ "asm_exc_page_fault", false, IFT_KENTRY_FAULT },
	{ "exc_page_fault", false, IFT_KENTRY_FAULT },
	{ "page_fault", false, IFT_KENTRY_FAULT },
	{ "async_page_fault", false, IFT_KENTRY_FAULT },
	{ "do_page_fault", false, IFT_KENTRY_FAULT },
	{ "do_user_addr_fault", false, IFT_KENTRY_FAULT },
	{ "el0_da", false, IFT_KENTRY_FAULT },
	{ "el0_ia", false, IFT_KENTRY_FAULT },
	{ "do_mem_abort", false, IFT_KENTRY_FAULT },
	{ "do_translation_fault", false, IFT_KENTRY_FAULT },
	/* interrupts, and the softirqs run on their way out */
	{ "asm_sysvec_", true, IFT_KENTRY_IRQ },
	{ "sysvec_", true, IFT_KENTRY_IRQ },
	{ "asm_common_interrupt", false, IFT_KENTRY_IRQ },
	{ "common_interrupt", false, IFT_KENTRY_IRQ },
	{ "apic_timer_interrupt", false, IFT_KENTRY_IRQ },
	{ "smp_apic_timer_interrupt", false, IFT_KENTRY_IRQ },
	{ "reschedule_interrupt", false, IFT_KENTRY_IRQ },
	{ "call_function_interrupt", false, IFT_KENTRY_IRQ },
	{ "do_IRQ", false, IFT_KENTRY_IRQ },
	{ "irq_exit", false, IFT_KENTRY_IRQ },
	{ "irq_exit_rcu", false, IFT_KENTRY_IRQ },
	{ "__irq_exit_rcu", false, IFT_KENTRY_IRQ },
	{ "__do_softirq", false, IFT_KENTRY_IRQ },
	{ "handle_softirqs", false, IFT_KENTRY_IRQ },
	{ "el0_irq", true, IFT_KENTRY_IRQ },
	{ "el0t_64_irq", true, IFT_KENTRY_IRQ },
	{ "el0_interrupt", false, IFT_KENTRY_IRQ },
	{ "el1_irq", false, IFT_KENTRY_IRQ },
	{ "el1_interrupt", false, IFT_KENTRY_IRQ },
	{ "gic_handle_irq", false, IFT_KENTRY_IRQ },
	/* breakpoints: the uprobes' traps (int3; arm64's brk) */
	{ "asm_exc_int3", false, IFT_KENTRY_TRAP },
	{ "exc_int3", false, IFT_KENTRY_TRAP },
	{ "int3", false, IFT_KENTRY_TRAP },
	{ "do_int3", false, IFT_KENTRY_TRAP },
	{ "do_int3_user", false, IFT_KENTRY_TRAP },
	{ "el0_dbg", false, IFT_KENTRY_TRAP },
	{ "el0_brk64", false, IFT_KENTRY_TRAP },
	{ "do_debug_exception", false, IFT_KENTRY_TRAP },
};

static enum ift_kentry kind_of(const char *name)
{
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		const struct entry_name *e = &entries[i];

		if (e->prefix ? !strncmp(name, e->name, strlen(e->name)) : !strcmp(name, e->name))
			return e->kind;
	}
	return IFT_KENTRY_UNKNOWN;
}

static int by_addr(const void *x, const void *y)
{
	const struct ift_ksym *p = x, *q = y;

	return p->addr < q->addr ? -1 : p->addr > q->addr;
}

int ift_ksyms_load(struct ift_ksyms *k, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512], type, name[256];
	unsigned long long addr;
	size_t cap = 0;

	memset(k, 0, sizeof(*k));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (k->n == cap) {
			struct ift_ksym *v = realloc(k->v, (cap = cap ? 2 * cap : 65536) * sizeof(*v));

			if (!v) {
				fclose(f);
				ift_ksyms_free(k);
				return -ENOMEM;
			}
			k->v = v;
		}
		k->v[k->n++] = (struct ift_ksym){ addr, kind_of(name) };
	}
	fclose(f);
	/* hidden (kptr_restrict): every address 0, nothing to tell apart */
	if (k->n && !k->v[k->n - 1].addr && !k->v[0].addr)
		k->n = 0;
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), by_addr);
	return 0;
}

/* The kind of the symbol holding IP: the last one at or below it. */
static enum ift_kentry kind_at(const struct ift_ksyms *k, uint64_t ip)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->v[lo - 1].kind : IFT_KENTRY_UNKNOWN;
}

enum ift_kentry ift_ksyms_entry(const struct ift_ksyms *k, const uint64_t *ips, size_t n)
{
	for (size_t i = n; k->n && i-- > 0;) {
		enum ift_kentry e = kind_at(k, ips[i]);

		if (e != IFT_KENTRY_UNKNOWN)
			return e;
	}
	return IFT_KENTRY_UNKNOWN;
}

void ift_ksyms_free(struct ift_ksyms *k)
{
	free(k->v);
	memset(k, 0, sizeof(*k));
}
