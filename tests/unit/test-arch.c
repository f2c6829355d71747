// SPDX-License-Identifier: MIT
/*
 * Tests of src/arch: where the calling convention puts each argument the
 * catalog keeps, held against the compiler.  Every catalog function's
 * signature is called here through a pointer of that C type to an assembly
 * stub that saves, at its first instruction, the argument registers, the
 * stack pointer and the stack above it, as a uprobe sees them; each of the
 * function's fetch-args is then evaluated over that state as the kernel
 * would, and must give the value the call passed.  The native descriptor is
 * proven so: on x86-64 natively, on aarch64 by the arm64 build under
 * qemu-user (make check).  The other descriptor's rules are checked against
 * the cases AAPCS64 and the SysV ABI spell out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-arch.h"
#include "ift-discover.h"

#define STACK_COPY	256

/* what the stub saw at its first instruction */
struct entry_state {
	uint64_t regs[8];
	uint64_t sp;
	uint8_t stack[STACK_COPY];
};
struct entry_state entry_seen;

void entry_capture(void);

#if defined(__x86_64__)
__asm__(
	"	.text\n"
	"	.globl entry_capture\n"
	"	.type entry_capture, @function\n"
	"entry_capture:\n"
	"	movq %rdi, entry_seen+0(%rip)\n"
	"	movq %rsi, entry_seen+8(%rip)\n"
	"	movq %rdx, entry_seen+16(%rip)\n"
	"	movq %rcx, entry_seen+24(%rip)\n"
	"	movq %r8, entry_seen+32(%rip)\n"
	"	movq %r9, entry_seen+40(%rip)\n"
	"	movq %rsp, entry_seen+64(%rip)\n"
	"	leaq entry_seen+72(%rip), %rdi\n"
	"	movq %rsp, %rsi\n"
	"	movl $256, %ecx\n"
	"	rep movsb\n"
	"	ret\n"
	"	.size entry_capture, .-entry_capture\n");
#elif defined(__aarch64__)
__asm__(
	"	.text\n"
	"	.globl entry_capture\n"
	"	.type entry_capture, %function\n"
	"entry_capture:\n"
	"	adrp x9, entry_seen\n"
	"	add x9, x9, :lo12:entry_seen\n"
	"	stp x0, x1, [x9, #0]\n"
	"	stp x2, x3, [x9, #16]\n"
	"	stp x4, x5, [x9, #32]\n"
	"	stp x6, x7, [x9, #48]\n"
	"	mov x10, sp\n"
	"	str x10, [x9, #64]\n"
	"	add x11, x9, #72\n"
	"	mov x12, #0\n"
	"1:	ldr x13, [x10, x12]\n"
	"	str x13, [x11, x12]\n"
	"	add x12, x12, #8\n"
	"	cmp x12, #256\n"
	"	b.lt 1b\n"
	"	ret\n"
	"	.size entry_capture, .-entry_capture\n");
#endif

/* ---- the calls, one C type per catalog signature ---------------------- */

typedef uint64_t I;
struct dim3 { unsigned x, y, z; };
struct nccl_id { char internal[128]; };

/* each integer parameter is the address of a buffer of its own */
static uint64_t bufs[16][8];
static struct dim3 dims[16];
static struct nccl_id id;

#define P(k)	((I)(uintptr_t)bufs[k])

/* Calls the stub as a function of signature SIG; false for one not known here. */
static bool call_as(const char *sig)
{
	void (*f)(void) = entry_capture;

	memset(&entry_seen, 0, sizeof(entry_seen));
	if (!strcmp(sig, ""))
		((void (*)(void))f)();
	else if (!strcmp(sig, "i"))
		((void (*)(I))f)(P(0));
	else if (!strcmp(sig, "ii"))
		((void (*)(I, I))f)(P(0), P(1));
	else if (!strcmp(sig, "iii"))
		((void (*)(I, I, I))f)(P(0), P(1), P(2));
	else if (!strcmp(sig, "iiii"))
		((void (*)(I, I, I, I))f)(P(0), P(1), P(2), P(3));
	else if (!strcmp(sig, "iiiii"))
		((void (*)(I, I, I, I, I))f)(P(0), P(1), P(2), P(3), P(4));
	else if (!strcmp(sig, "iiiiii"))
		((void (*)(I, I, I, I, I, I))f)(P(0), P(1), P(2), P(3), P(4), P(5));
	else if (!strcmp(sig, "iiiiiii"))
		((void (*)(I, I, I, I, I, I, I))f)(P(0), P(1), P(2), P(3), P(4), P(5), P(6));
	else if (!strcmp(sig, "iiiiiiii"))
		((void (*)(I, I, I, I, I, I, I, I))f)(P(0), P(1), P(2), P(3), P(4), P(5), P(6),
						      P(7));
	else if (!strcmp(sig, "iiiiiiiiiii"))
		((void (*)(I, I, I, I, I, I, I, I, I, I, I))f)(P(0), P(1), P(2), P(3), P(4), P(5),
								P(6), P(7), P(8), P(9), P(10));
	else if (!strcmp(sig, "iddiii"))
		((void (*)(I, struct dim3, struct dim3, I, I, I))f)(P(0), dims[1], dims[2], P(3),
								     P(4), P(5));
	else if (!strcmp(sig, "iiui"))
		((void (*)(I, I, struct nccl_id, I))f)(P(0), P(1), id, P(3));
	else if (!strcmp(sig, "iiuii"))
		((void (*)(I, I, struct nccl_id, I, I))f)(P(0), P(1), id, P(3), P(4));
	/* the spill cases of test_spill, natively */
	else if (!strcmp(sig, "iiiiidi"))
		((void (*)(I, I, I, I, I, struct dim3, I))f)(P(0), P(1), P(2), P(3), P(4),
							     dims[5], P(6));
	else if (!strcmp(sig, "iiiiiiidi"))
		((void (*)(I, I, I, I, I, I, I, struct dim3, I))f)(P(0), P(1), P(2), P(3), P(4),
								   P(5), P(6), dims[7], P(8));
	else
		return false;
	return true;
}

static void fill(void)
{
	for (unsigned k = 0; k < 16; k++) {
		for (unsigned w = 0; w < 8; w++)
			bufs[k][w] = 0xa000000000000000ULL | (uint64_t)k << 8 | w;
		dims[k] = (struct dim3){ 0x100 + k, 0x200 + k, 0x300 + k };
	}
	memset(&id, 0x5a, sizeof(id));
}

/* The u64 at ADDR as the kernel would read it then: the stack from the copy. */
static bool mem_read(uint64_t addr, uint64_t *val)
{
	if (addr >= entry_seen.sp && addr + 8 <= entry_seen.sp + STACK_COPY) {
		memcpy(val, entry_seen.stack + (addr - entry_seen.sp), 8);
		return true;
	}
	for (unsigned k = 0; k < 16; k++)
		if (addr >= (uintptr_t)bufs[k] && addr + 8 <= (uintptr_t)bufs[k] + sizeof(bufs[k])) {
			memcpy(val, (const void *)(uintptr_t)addr, 8);
			return true;
		}
	return false;
}

/* A fetch-arg ("%si", "+8(%sp)", "+32(%x0)") over the saved state, as uprobes do. */
static bool fetch_eval(const struct ift_arch *a, const char *s, uint64_t *val)
{
	if (s[0] == '%') {
		if (!strcmp(s + 1, a->sp)) {
			*val = entry_seen.sp;
			return true;
		}
		for (unsigned r = 0; r < a->nint_regs; r++)
			if (!strcmp(s + 1, a->int_regs[r])) {
				*val = entry_seen.regs[r];
				return true;
			}
		return false;
	}
	if (s[0] == '+') {
		char *end, inner[64];
		long off = strtol(s + 1, &end, 10);
		size_t n = strlen(end);
		uint64_t base;

		if (*end != '(' || n < 3 || end[n - 1] != ')' || n - 2 >= sizeof(inner))
			return false;
		memcpy(inner, end + 1, n - 2);
		inner[n - 2] = 0;
		return fetch_eval(a, inner, &base) && mem_read(base + (uint64_t)off, val);
	}
	return false;
}

/* What argument I of F is, as the call passed it. */
static uint64_t passed(const struct ift_func_spec *f, unsigned i)
{
	const struct ift_arg_spec *g = &f->args[i];

	if (f->sig[g->param] == IFT_PARAM_DIM3) {
		const struct dim3 *d = &dims[g->param];

		return g->part ? d->z : d->x | (uint64_t)d->y << 32;
	}
	if (g->deref >= 0)
		return bufs[g->param][g->deref / 8];
	return P(g->param);
}

/* Every catalog argument, fetched as the native descriptor says, is what was passed. */
static void test_catalog_native(void **state)
{
	unsigned checked = 0;

	(void)state;
	fill();
	for (size_t i = 0; i < ift_cuda_nfuncs; i++) {
		const struct ift_func_spec *f = &ift_cuda_funcs[i];

		if (!call_as(f->sig))
			fail_msg("%s: no caller of signature \"%s\" in test-arch", f->name, f->sig);
		for (unsigned k = 0; k < f->nargs; k++) {
			char fetch[64];
			uint64_t got = 0;

			assert_int_equal(ift_func_arg_fetch(f, k, ift_arch_native, fetch,
							    sizeof(fetch)), 0);
			if (!fetch_eval(ift_arch_native, fetch, &got))
				fail_msg("%s %s: cannot evaluate '%s'", f->name, f->args[k].name,
					 fetch);
			if (got != passed(f, k))
				fail_msg("%s %s at '%s': 0x%llx, passed 0x%llx", f->name,
					 f->args[k].name, fetch, (unsigned long long)got,
					 (unsigned long long)passed(f, k));
			checked++;
		}
	}
	assert_true(checked > 100);
}

static const char *fetch_of(const struct ift_arch *a, const char *sig, unsigned p, unsigned part)
{
	static char buf[64];

	if (ift_arch_arg_fetch(a, sig, p, part, -1, buf, sizeof(buf)))
		return "(error)";
	return buf;
}

/*
 * A struct of two eightbytes that finds one register left goes on the stack;
 * SysV gives that register to the next integer, AAPCS64 (rule C.11) none.
 * Natively, the compiler agrees.
 */
static void test_spill(void **state)
{
	const struct ift_arch *x = &ift_arch_x86_64, *a = &ift_arch_aarch64;

	(void)state;
	assert_string_equal(fetch_of(x, "iiiiidi", 5, 0), "+8(%sp)");
	assert_string_equal(fetch_of(x, "iiiiidi", 5, 1), "+16(%sp)");
	assert_string_equal(fetch_of(x, "iiiiidi", 6, 0), "%r9");
	assert_string_equal(fetch_of(a, "iiiiiiidi", 7, 0), "+0(%sp)");
	assert_string_equal(fetch_of(a, "iiiiiiidi", 7, 1), "+8(%sp)");
	assert_string_equal(fetch_of(a, "iiiiiiidi", 8, 0), "+16(%sp)");
	assert_string_equal(fetch_of(a, "iiiiiiidi", 6, 0), "%x6");

	/* natively, the compiler's placement of the struct and the int after it */
	{
		const char *sig = ift_arch_native == x ? "iiiiidi" : "iiiiiiidi";
		unsigned d = (unsigned)strlen(sig) - 2;
		uint64_t got;

		fill();
		assert_true(call_as(sig));
		assert_true(fetch_eval(ift_arch_native, fetch_of(ift_arch_native, sig, d, 0), &got));
		assert_true(got == (dims[d].x | (uint64_t)dims[d].y << 32));
		assert_true(fetch_eval(ift_arch_native, fetch_of(ift_arch_native, sig, d, 1), &got));
		/* z: the low half of the second eightbyte, the rest padding */
		assert_true((uint32_t)got == dims[d].z);
		assert_true(fetch_eval(ift_arch_native, fetch_of(ift_arch_native, sig, d + 1, 0),
				       &got));
		assert_true(got == P(d + 1));
	}
}

/* The other machine's rules where the ABIs differ, each spelled out. */
static void test_abi_rules(void **state)
{
	const struct ift_arch *x = &ift_arch_x86_64, *a = &ift_arch_aarch64;
	char buf[64];

	(void)state;
	/* cudaLaunchKernel: two dim3 in two registers each */
	assert_string_equal(fetch_of(x, "iddiii", 2, 0), "%cx");
	assert_string_equal(fetch_of(x, "iddiii", 5, 0), "+16(%sp)");
	assert_string_equal(fetch_of(a, "iddiii", 2, 0), "%x3");
	assert_string_equal(fetch_of(a, "iddiii", 2, 1), "%x4");
	assert_string_equal(fetch_of(a, "iddiii", 5, 0), "%x7");
	/* the ninth integer: past x86-64's return address, at aarch64's sp */
	assert_string_equal(fetch_of(x, "iiiiiiiiiii", 8, 0), "+24(%sp)");
	assert_string_equal(fetch_of(a, "iiiiiiiiiii", 8, 0), "+0(%sp)");
	assert_string_equal(fetch_of(a, "iiiiiiiiiii", 10, 0), "+16(%sp)");
	/* ncclUniqueId by value: all on the stack, or a pointer in a register */
	assert_string_equal(fetch_of(x, "iiui", 3, 0), "%dx");
	assert_string_equal(fetch_of(a, "iiui", 2, 0), "%x2");
	assert_string_equal(fetch_of(a, "iiui", 3, 0), "%x3");
	assert_string_equal(fetch_of(x, "iiiiiiui", 7, 0), "+136(%sp)");
	/* a field through a pointer, and through one on the stack */
	assert_int_equal(ift_arch_arg_fetch(a, "iii", 0, 0, 32, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "+32(%x0)");
	assert_int_equal(ift_arch_arg_fetch(x, "iiiiiii", 6, 0, 16, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "+16(+8(%sp))");
	/* what is not there */
	assert_int_equal(ift_arch_arg_fetch(x, "ii", 2, 0, -1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ift_arch_arg_fetch(x, "id", 1, 2, -1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ift_arch_arg_fetch(a, "iu", 1, 1, -1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ift_arch_arg_fetch(x, "iz", 0, 0, -1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ift_arch_arg_fetch(x, "iiiiiii", 6, 0, -1, buf, 4), -E2BIG);
}

/* Landing pads: each machine's own, and only those. */
static void test_entry_skip(void **state)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t push_rbp[4] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t bti_c[4] = { 0x5f, 0x24, 0x03, 0xd5 };
	static const uint8_t paciasp[4] = { 0x3f, 0x23, 0x03, 0xd5 };
	static const uint8_t stp_fp_lr[4] = { 0xfd, 0x7b, 0xbf, 0xa9 };

	(void)state;
	assert_int_equal(ift_arch_entry_skip(&ift_arch_x86_64, endbr64, 4), 4);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_x86_64, endbr64, 3), 0);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_x86_64, push_rbp, 4), 0);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_x86_64, bti_c, 4), 0);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_aarch64, bti_c, 4), 4);
	/* a return probe after PACIASP would break AUTIASP: it stays put */
	assert_int_equal(ift_arch_entry_skip(&ift_arch_aarch64, paciasp, 4), 0);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_aarch64, stp_fp_lr, 4), 0);
	assert_int_equal(ift_arch_entry_skip(&ift_arch_aarch64, endbr64, 4), 0);
}

static void test_find(void **state)
{
	(void)state;
	assert_ptr_equal(ift_arch_find("x86_64"), &ift_arch_x86_64);
	assert_ptr_equal(ift_arch_find("aarch64"), &ift_arch_aarch64);
	assert_ptr_equal(ift_arch_find("arm64"), &ift_arch_aarch64);
	assert_null(ift_arch_find("riscv64"));
	assert_null(ift_arch_find(NULL));
#if defined(__x86_64__)
	assert_ptr_equal(ift_arch_native, &ift_arch_x86_64);
#elif defined(__aarch64__)
	assert_ptr_equal(ift_arch_native, &ift_arch_aarch64);
#endif
	/* the perf mask has as many bits as the sample has registers */
	for (int i = 0; i < 2; i++) {
		const struct ift_arch *a = i ? &ift_arch_aarch64 : &ift_arch_x86_64;

		assert_int_equal(__builtin_popcountll(a->perf_regs_mask), a->perf_nregs);
		assert_true(a->perf_nregs <= IFT_ARCH_MAX_REGS);
		assert_true(a->perf_sp < a->perf_nregs && a->perf_ip < a->perf_nregs);
		for (unsigned r = 0; r < a->nunw; r++)
			assert_true(a->unw_to_perf[r] < (int)a->perf_nregs);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_native),
		cmocka_unit_test(test_spill),
		cmocka_unit_test(test_abi_rules),
		cmocka_unit_test(test_entry_skip),
		cmocka_unit_test(test_find),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
