// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/stack/ksyms.c: the entry a profile sample in the
 * kernel came through, from its kernel call chain and a kallsyms file.
 * The files below hold the entry functions of the kernels we run on, by
 * their names there (x86-64 4.19 and 6.x, arm64 5.10 and 6.1), among
 * functions of no entry, out of address order as modules' are; the truth
 * is how each chain was made.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stack/ksyms.h"

static const char kallsyms[] =
	"ffffffff81002000 T vfs_read\n"
	"ffffffff81001000 T entry_SYSCALL_64_after_hwframe\n"
	"ffffffff81001100 T do_syscall_64\n"
	"ffffffff81001200 T asm_exc_page_fault\n"
	"ffffffff81001210 T exc_page_fault\n"
	"ffffffff81001300 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81001400 t handle_softirqs\n"
	"ffffffff81001500 T asm_exc_int3\n"
	"ffffffff81001600 T page_fault\n"
	"ffffffff81001700 T apic_timer_interrupt\n"
	"ffffffff81001800 T smp_apic_timer_interrupt\n"
	"ffffffff81002100 T clear_page_erms\n"
	"ffffffff81002200 T _raw_spin_lock\n"
	"ffffffff81003000 D some_data_not_text\n"
	"ffff800010005000 t el0_sync\n"
	"ffff800010005100 t el0_svc\n"
	"ffff800010005200 t el0_da\n"
	"ffff800010005300 t el0_irq\n"
	"ffff800010005310 T gic_handle_irq\n"
	"ffff800010006000 t el0t_64_sync\n"
	"ffff800010006010 T el0t_64_sync_handler\n"
	"ffff800010006100 T do_mem_abort\n"
	"ffffffffc0001000 t nvidia_isr\t[nvidia]\n";

static char *write_file(const char *text)
{
	static char path[] = "/tmp/ift-ksyms.XXXXXX";
	int fd;

	strcpy(path, "/tmp/ift-ksyms.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static enum ift_kentry entry(const struct ift_ksyms *k, const uint64_t *ips, size_t n)
{
	return ift_ksyms_entry(k, ips, n);
}

static void test_x86(void **state)
{
	struct ift_ksyms k;
	char *path = write_file(kallsyms);
	/* innermost first, each a return address inside its function */
	const uint64_t sys[] = { 0xffffffff81002008, 0xffffffff81001104, 0xffffffff81001010 };
	const uint64_t fault[] = { 0xffffffff81002104, 0xffffffff81001218, 0xffffffff81001204 };
	const uint64_t irq[] = { 0xffffffff81002204, 0xffffffff81001408, 0xffffffff81001304 };
	/* a softirq run in a system call: the system call brought it in */
	const uint64_t sys_irq[] = { 0xffffffff81001408, 0xffffffff81002008, 0xffffffff81001010 };
	const uint64_t trap[] = { 0xffffffff81002204, 0xffffffff81001535 };
	const uint64_t old_fault[] = { 0xffffffff81002104, 0xffffffff81001604 };
	const uint64_t old_irq[] = { 0xffffffff81001804, 0xffffffff81001704 };
	const uint64_t none[] = { 0xffffffff81002008, 0xffffffff81002204 };
	const uint64_t module[] = { 0xffffffffc0001004 };

	(void)state;
	assert_int_equal(ift_ksyms_load(&k, path), 0);
	unlink(path);
	assert_int_equal(k.n, 22);	/* text only */
	assert_int_equal(entry(&k, sys, 3), IFT_KENTRY_SYSCALL);
	assert_int_equal(entry(&k, fault, 3), IFT_KENTRY_FAULT);
	assert_int_equal(entry(&k, irq, 3), IFT_KENTRY_IRQ);
	assert_int_equal(entry(&k, sys_irq, 3), IFT_KENTRY_SYSCALL);
	assert_int_equal(entry(&k, trap, 2), IFT_KENTRY_TRAP);
	assert_int_equal(entry(&k, old_fault, 2), IFT_KENTRY_FAULT);
	assert_int_equal(entry(&k, old_irq, 2), IFT_KENTRY_IRQ);
	assert_int_equal(entry(&k, none, 2), IFT_KENTRY_UNKNOWN);
	assert_int_equal(entry(&k, module, 1), IFT_KENTRY_UNKNOWN);
	assert_int_equal(entry(&k, NULL, 0), IFT_KENTRY_UNKNOWN);
	/* below every symbol: none */
	assert_int_equal(entry(&k, (const uint64_t[]){ 0x1000 }, 1), IFT_KENTRY_UNKNOWN);
	ift_ksyms_free(&k);
	ift_ksyms_free(&k);	/* twice is harmless */
}

/* arm64: el0_sync (5.10) and el0t_64_sync (5.13+) take system calls and
   faults alike: the handler inside says which */
static void test_arm64(void **state)
{
	struct ift_ksyms k;
	char *path = write_file(kallsyms);
	const uint64_t sys[] = { 0xffffffff81002008, 0xffff800010005104, 0xffff800010005008 };
	const uint64_t fault[] = { 0xffffffff81002104, 0xffff800010006104, 0xffff800010005204,
				   0xffff800010006014, 0xffff800010006004 };
	const uint64_t irq[] = { 0xffffffff81002204, 0xffff800010005314, 0xffff800010005304 };
	const uint64_t sync_only[] = { 0xffffffff81002008, 0xffff800010005008 };

	(void)state;
	assert_int_equal(ift_ksyms_load(&k, path), 0);
	unlink(path);
	assert_int_equal(entry(&k, sys, 3), IFT_KENTRY_SYSCALL);
	assert_int_equal(entry(&k, fault, 5), IFT_KENTRY_FAULT);
	assert_int_equal(entry(&k, irq, 3), IFT_KENTRY_IRQ);
	assert_int_equal(entry(&k, sync_only, 2), IFT_KENTRY_UNKNOWN);
	ift_ksyms_free(&k);
}

/* kptr_restrict: every address 0, nothing told apart; no file: its errno */
static void test_hidden(void **state)
{
	struct ift_ksyms k;
	char *path = write_file("0000000000000000 T entry_SYSCALL_64_after_hwframe\n"
				"0000000000000000 T vfs_read\n");
	const uint64_t ips[] = { 0 };

	(void)state;
	assert_int_equal(ift_ksyms_load(&k, path), 0);
	unlink(path);
	assert_int_equal(k.n, 0);
	assert_int_equal(entry(&k, ips, 1), IFT_KENTRY_UNKNOWN);
	ift_ksyms_free(&k);
	assert_int_equal(ift_ksyms_load(&k, "/nonexistent/kallsyms"), -ENOENT);
	assert_int_equal(k.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86),
		cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_hidden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
