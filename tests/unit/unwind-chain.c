// SPDX-License-Identifier: MIT
/*
 * The call chain test-unwind unwinds (see unwind-chain.h).  Built without
 * frame pointers and without sibling calls, each function with a frame of
 * its own, so only .eh_frame can tell where each return address lies.
 */
#include "unwind-chain.h"

/* where chain_capture puts sp: perf's index of it */
#if defined(__x86_64__)
#define CHAIN_SP	7
#else
#define CHAIN_SP	31
#endif

/*
 * The registers in the caller right after the call: ip = the return
 * address, sp = above it.  Callee-saved ones are as the caller left them;
 * rax is clobbered, as any call may.
 */
#if defined(__x86_64__)
__asm__(
	"	.text\n"
	"	.globl chain_capture\n"
	"	.type chain_capture, @function\n"
	"chain_capture:\n"
	"	.cfi_startproc\n"
	"	movq %rax, 0(%rdi)\n"
	"	movq %rbx, 8(%rdi)\n"
	"	movq %rcx, 16(%rdi)\n"
	"	movq %rdx, 24(%rdi)\n"
	"	movq %rsi, 32(%rdi)\n"
	"	movq %rdi, 40(%rdi)\n"
	"	movq %rbp, 48(%rdi)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, 56(%rdi)\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, 64(%rdi)\n"
	"	movq %r8, 72(%rdi)\n"
	"	movq %r9, 80(%rdi)\n"
	"	movq %r10, 88(%rdi)\n"
	"	movq %r11, 96(%rdi)\n"
	"	movq %r12, 104(%rdi)\n"
	"	movq %r13, 112(%rdi)\n"
	"	movq %r14, 120(%rdi)\n"
	"	movq %r15, 128(%rdi)\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size chain_capture, .-chain_capture\n");
#elif defined(__aarch64__)
/* x0-x30, sp (the caller's: nothing pushed), pc = the return address (lr) */
__asm__(
	"	.text\n"
	"	.globl chain_capture\n"
	"	.type chain_capture, %function\n"
	"chain_capture:\n"
	"	.cfi_startproc\n"
	"	stp x0, x1, [x0, #0]\n"
	"	stp x2, x3, [x0, #16]\n"
	"	stp x4, x5, [x0, #32]\n"
	"	stp x6, x7, [x0, #48]\n"
	"	stp x8, x9, [x0, #64]\n"
	"	stp x10, x11, [x0, #80]\n"
	"	stp x12, x13, [x0, #96]\n"
	"	stp x14, x15, [x0, #112]\n"
	"	stp x16, x17, [x0, #128]\n"
	"	stp x18, x19, [x0, #144]\n"
	"	stp x20, x21, [x0, #160]\n"
	"	stp x22, x23, [x0, #176]\n"
	"	stp x24, x25, [x0, #192]\n"
	"	stp x26, x27, [x0, #208]\n"
	"	stp x28, x29, [x0, #224]\n"
	"	str x30, [x0, #240]\n"
	"	mov x1, sp\n"
	"	str x1, [x0, #248]\n"
	"	str x30, [x0, #256]\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size chain_capture, .-chain_capture\n");
#else
#error "chain_capture for x86-64 and aarch64 only"
#endif

__attribute__((noinline)) int chain_c(struct chain_snap *s, int x)
{
	volatile int pad[24];
	const volatile uint64_t *from;
	size_t n;

	for (int i = 0; i < 24; i++)
		pad[i] = i;
	pad[x & 15] = x;
	chain_capture(s->regs);
	/*
	 * Word by word through volatile: no memcpy (a sanitizer's would check
	 * the test's instrumented frames above) and no page past the stack.
	 */
	from = (const volatile uint64_t *)(uintptr_t)s->regs[CHAIN_SP];
	n = s->top > s->regs[CHAIN_SP] ? (size_t)(s->top - s->regs[CHAIN_SP]) / 8 : 0;
	if (n > CHAIN_STACK / 8)
		n = CHAIN_STACK / 8;
	for (size_t i = 0; i < n; i++)
		s->stack[i] = from[i];
	s->len = n * 8;
	return pad[(x + 1) & 15] + 1;
}

__attribute__((noinline)) int chain_b(struct chain_snap *s, int x)
{
	volatile int pad[40];

	for (int i = 0; i < 40; i++)
		pad[i] = i;
	pad[x & 31] = x;
	return chain_c(s, x + 1) + pad[(x + 3) & 31] + 1;
}

__attribute__((noinline)) int chain_a(struct chain_snap *s, int x)
{
	volatile long pad[8];

	for (int i = 0; i < 8; i++)
		pad[i] = i;
	pad[x & 7] = x;
	return chain_b(s, x * 2) + (int)pad[(x + 5) & 7] + 1;
}
