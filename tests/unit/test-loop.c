// SPDX-License-Identifier: MIT
/*
 * The training loop of a thread (ift_az_loop_find): on the op sequences of the
 * real traces in fixtures/ (the .ops files in fixtures/loop, run-length coded, one
 * CUDA thread each), and on sequences built here where the loop is known
 * by construction: start-up before it, a period of one, no repetition,
 * noisy iterations of PyTorch's size, two loops, and ten million calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"

/* ---- sequences ------------------------------------------------------ */

struct seq {
	uint32_t *ops;
	size_t n, cap;
	char names[64][40];	/* op id -> name */
	uint32_t nnames;
};

static uint32_t op_id(struct seq *s, const char *name)
{
	for (uint32_t i = 0; i < s->nnames; i++)
		if (!strcmp(s->names[i], name))
			return i;
	assert_true(s->nnames < 64);
	snprintf(s->names[s->nnames], sizeof(s->names[0]), "%s", name);
	return s->nnames++;
}

static void put_id(struct seq *s, uint32_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->ops = realloc(s->ops, s->cap * sizeof(*s->ops));
		assert_non_null(s->ops);
	}
	s->ops[s->n++] = id;
}

/* NAMES: ops separated by spaces, each NAME or NAMExCOUNT; REPEAT times. */
static void put(struct seq *s, unsigned repeat, const char *names)
{
	while (repeat--) {
		const char *p = names;

		while (*p) {
			char name[40];
			unsigned count = 1;
			size_t len = strcspn(p, " ");
			const char *x = memchr(p, 'x', len);

			assert_true(len && len < sizeof(name));
			memcpy(name, p, len);
			name[len] = 0;
			if (x && x > p && x[1] >= '0' && x[1] <= '9') {
				name[x - p] = 0;
				count = (unsigned)atoi(x + 1);
			}
			while (count--)
				put_id(s, op_id(s, name));
			p += len;
			p += strspn(p, " ");
		}
	}
}

static void seq_free(struct seq *s)
{
	free(s->ops);
	memset(s, 0, sizeof(*s));
}

/* fixtures/loop/NAME.ops: "COUNT OP" lines, '#' comments. */
static void load(struct seq *s, const char *name)
{
	const char *dir = getenv("IFT_FIXTURES");
	char path[512], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/loop/%s.ops", dir ? dir : "fixtures", name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open '%s'", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned count;
		char op[40];

		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%u %39s", &count, op), 2);
		while (count--)
			put_id(s, op_id(s, op));
	}
	fclose(f);
}

static struct az_loop find(const struct seq *s)
{
	struct az_loop l;

	assert_int_equal(ift_az_loop_find(s->ops, s->n, &l), 0);
	return l;
}

static void assert_loop(const struct az_loop *l, uint32_t period, uint64_t iters,
			size_t first, size_t end)
{
	if (l->period != period || l->iterations != iters || l->first != first ||
	    l->end != end)
		fail_msg("loop: period %u, %llu iterations, [%zu, %zu); expected %u, "
			 "%llu, [%zu, %zu)", l->period, (unsigned long long)l->iterations,
			 l->first, l->end, period, (unsigned long long)iters, first, end);
}

static void assert_no_loop(const struct az_loop *l)
{
	if (l->period || l->iterations || l->first || l->end)
		fail_msg("a loop where there is none: period %u, %llu iterations, "
			 "[%zu, %zu)", l->period, (unsigned long long)l->iterations,
			 l->first, l->end);
}

/* ---- real traces ---------------------------------------------------- */

/*
 * contrib/gpu/dataloader_bench.py --mode direct on an H200: 7,000,000
 * samples in batches of 1,048,576 are 7 batches.  Calls 0-30 are start-up:
 * cudaGetDeviceCount x3, the model's 6 tensors copied (MemcpyAsync +
 * StreamSynchronize x6), the allocator and cuBLAS setting up, the warm-up
 * forward pass (24-30: 3 GEMMs cuLaunchKernelEx, 2 ReLU cudaLaunchKernel,
 * one cuLaunchKernel, cudaDeviceSynchronize: no copy in it), then the 7 s
 * gap where the dataset is built.  Call 31 is the cudaMalloc of the first
 * batch's device tensor; from 32 each batch is MemcpyAsync,
 * StreamSynchronize, 3 GEMMs and 2 ReLUs interleaved, DeviceSynchronize:
 * 8 calls.  The first batch also grows the allocator (cudaMalloc at 34
 * and 36) and reads the checksum (cudaHostAlloc, MemcpyAsync,
 * StreamSynchronize at 42-44): 5 extra calls in 13.  So the loop is 8
 * calls, 7 iterations, from the first batch's copy (32) to the end (93);
 * the warm-up, a part of an iteration without the copy, stays in start-up.
 */
static void test_h200_direct(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	load(&s, "direct");
	assert_int_equal(s.n, 93);
	l = find(&s);
	assert_loop(&l, 8, 7, 32, 93);
	assert_string_equal(s.names[s.ops[l.first]], "cudaMemcpyAsync");
	assert_string_equal(s.names[s.ops[l.end - 1]], "cudaDeviceSynchronize");
	seq_free(&s);
}

/* --mode loaderN: the feeding thread makes the same calls (the workers
   make none); the same loop. */
static void test_h200_loader(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	load(&s, "loaderN");
	l = find(&s);
	assert_loop(&l, 8, 7, 32, 93);
	seq_free(&s);
}

/*
 * fixtures/examples, each one simtrain's training thread (or cuda-seq's):
 * the iterations are the --steps of its command (README.md there), the
 * start-up its cudaSetDevice, cudaStreamCreate, cudaMalloc x2 (and
 * cudaMallocHost for pinned buffers), the tail its frees.
 */
static void test_examples(void **state)
{
	static const struct {
		const char *name;
		uint32_t period;
		uint64_t iters;
		size_t first, end, n;
	} ex[] = {
		/* Memcpy, LaunchKernel x3, StreamSynchronize; 150 steps */
		{ "dataloader-starvation", 5, 150, 4, 754, 757 },
		/* MemcpyAsync, LaunchKernel x3, StreamSynchronize; 150 steps */
		{ "direct-indexing", 5, 150, 5, 755, 759 },
		/* MemcpyAsync, LaunchKernel x20, StreamSynchronize; 150 steps */
		{ "noisy-neighbour", 22, 150, 5, 3305, 3309 },
		/* Memcpy, LaunchKernel, StreamSynchronize; 30 steps */
		{ "page-alloc-storm", 3, 30, 4, 94, 97 },
		/* MemcpyAsync, LaunchKernel, StreamSynchronize; 60 steps */
		{ "gpu-bound", 3, 60, 5, 185, 189 },
		/* cuda-seq 20: cudaGetDeviceCount, then 20 rounds of its loop
		   (Malloc, Memcpy, MemcpyAsync, LaunchKernel,
		   StreamSynchronize, Free), then cudaDeviceSynchronize */
		{ "cudart-sequence", 6, 20, 1, 121, 122 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct seq s = { 0 };
		struct az_loop l;

		load(&s, ex[i].name);
		assert_int_equal(s.n, ex[i].n);
		l = find(&s);
		print_message("%s: period %u, %llu iterations, [%zu, %zu)\n", ex[i].name,
			      l.period, (unsigned long long)l.iterations, l.first, l.end);
		assert_loop(&l, ex[i].period, ex[i].iters, ex[i].first, ex[i].end);
		seq_free(&s);
	}
}

/* ---- built here ----------------------------------------------------- */

/* Short repeats at start-up are not the loop; the loop starts at its first
   copy, after the start-up's gap. */
static void test_startup(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	put(&s, 1, "cudaGetDevicex10 cudaMallocx3 cudaStreamCreate cudaGetDevicex4 cudaMalloc");
	put(&s, 50, "cudaMemcpyAsync cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 1, "cudaDeviceSynchronize cudaFree cudaFree");
	l = find(&s);
	assert_loop(&l, 3, 50, 19, 169);
	assert_string_equal(s.names[s.ops[l.first]], "cudaMemcpyAsync");
	seq_free(&s);
}

/* The phase rule: the loop begins where the calls start repeating the
   unit, exactly, even where that is inside what the program calls its
   start-up (op ids cannot tell the two apart). */
static void test_phase(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	put(&s, 1, "cudaSetDevice cudaMalloc cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 10, "cudaMemcpy cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 1, "cudaMemcpy cudaFree");
	l = find(&s);
	/* [2, 35): LaunchKernel, StreamSynchronize, Memcpy x 11; the last
	   Memcpy ends it, the unit begins with the LaunchKernel */
	assert_loop(&l, 3, 11, 2, 35);
	seq_free(&s);

	/*
	 * The first iteration has an extra call, so exact repetition starts
	 * after it (the S at 6: S M L ...); a whole iteration with the extra
	 * call goes back to the S at 2, then single calls exactly: the L at
	 * 1 is the op before S.  The unit is then L S M; the last complete
	 * one ends with the M at 34, the L S after it are the tail.
	 */
	put(&s, 1, "cudaSetDevice cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 1, "cudaMemcpy cudaLaunchKernel cudaMalloc cudaStreamSynchronize");
	put(&s, 10, "cudaMemcpy cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 1, "cudaFree");
	l = find(&s);
	assert_loop(&l, 3, 11, 1, 35);
	assert_string_equal(s.names[s.ops[l.first]], "cudaLaunchKernel");
	assert_string_equal(s.names[s.ops[l.end - 1]], "cudaMemcpy");
	seq_free(&s);
}

static void test_period_one(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	put(&s, 1, "cudaSetDevice cudaMalloc cudaLaunchKernelx100 cudaDeviceSynchronize");
	l = find(&s);
	assert_loop(&l, 1, 100, 2, 102);
	seq_free(&s);

	/* three, the fewest */
	put(&s, 1, "cudaSetDevice cudaLaunchKernelx3 cudaFree");
	l = find(&s);
	assert_loop(&l, 1, 3, 1, 4);
	seq_free(&s);
}

/* cuda-seq's own sequence, by its source: cudaGetDeviceCount, ROUNDS x 6
   calls, cudaDeviceSynchronize. */
static void cuda_seq(struct seq *s, unsigned rounds)
{
	put(s, 1, "cudaGetDeviceCount");
	put(s, rounds, "cudaMalloc cudaMemcpy cudaMemcpyAsync cudaLaunchKernel "
		       "cudaStreamSynchronize cudaFree");
	put(s, 1, "cudaDeviceSynchronize");
}

static void test_no_loop(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;
	char name[32];

	(void)state;
	/* 58 calls of 12 ops, never one twice in a row, no sequence three times */
	for (unsigned i = 0; i < 58; i++) {
		snprintf(name, sizeof(name), "op%u", (i * 7 + i / 12) % 12);
		put(&s, 1, name);
	}
	l = find(&s);
	assert_no_loop(&l);
	seq_free(&s);

	/* two rounds are not a loop; three are */
	cuda_seq(&s, 2);
	l = find(&s);
	assert_no_loop(&l);
	seq_free(&s);
	cuda_seq(&s, 3);
	l = find(&s);
	assert_loop(&l, 6, 3, 1, 19);
	seq_free(&s);

	/* too short for anything, and nothing */
	put(&s, 1, "cudaMalloc cudaMalloc");
	l = find(&s);
	assert_no_loop(&l);
	assert_int_equal(ift_az_loop_find(NULL, 0, &l), 0);
	assert_no_loop(&l);
	seq_free(&s);
}

/*
 * An iteration of PyTorch's size and make-up: the batch's copies, a
 * forward and backward pass of launches with events between, the
 * optimizer, a loss read back.  NOISE: an extra cudaMalloc every 7th
 * iteration (the allocator growing), a missing cudaEventQuery every 11th.
 */
static void pytorch_iteration(struct seq *s, unsigned i, bool noise)
{
	put(s, 1, "cudaMemcpyAsync cudaMemcpyAsync cudaStreamSynchronize cudaGetDevice");
	put(s, 6, "cudaLaunchKernelx5 cudaEventRecord cudaLaunchKernelx4");
	if (noise && i % 7 == 3)
		put(s, 1, "cudaMalloc");
	put(s, 6, "cudaLaunchKernelx6 cudaGetDevice cudaLaunchKernelx3");
	put(s, 1, "cudaEventRecord");
	if (!noise || i % 11 != 5)
		put(s, 1, "cudaEventQuery");
	put(s, 1, "cudaLaunchKernelx12 cudaMemcpyAsync cudaStreamSynchronize");
}

#define PT_PERIOD	(4 + 60 + 60 + 2 + 14)

static void test_noisy_pytorch(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;
	size_t first, end;

	(void)state;
	/* start-up: devices, the model's 40 tensors copied (a loop of 2 of
	   its own, 80 calls), warm-up: a forward pass without the copy */
	put(&s, 1, "cudaGetDevicex10 cudaGetDeviceCount cudaMallocx3");
	put(&s, 40, "cudaMemcpyAsync cudaStreamSynchronize");
	put(&s, 6, "cudaLaunchKernelx5 cudaEventRecord cudaLaunchKernelx4");
	put(&s, 1, "cudaDeviceSynchronize cudaHostAlloc");
	first = s.n;
	for (unsigned i = 0; i < 200; i++)
		pytorch_iteration(&s, i, true);
	end = s.n;
	/* eval at the end, then the tail */
	put(&s, 5, "cudaMemcpyAsync cudaLaunchKernelx30 cudaMemcpyAsync cudaStreamSynchronize");
	put(&s, 1, "cudaDeviceSynchronize cudaFree cudaFree");
	l = find(&s);
	assert_loop(&l, PT_PERIOD, 200, first, end);
	seq_free(&s);
}

/* Train then eval, each its own sequence: the loop is the one covering
   more calls, wherever it lies. */
static void test_two_loops(void **state)
{
	struct seq s = { 0 };
	struct az_loop l;

	(void)state;
	put(&s, 1, "cudaSetDevice cudaMallocx2");
	put(&s, 100, "cudaMemcpyAsync cudaLaunchKernelx4 cudaEventRecord cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 40, "cudaMemcpy cudaLaunchKernelx3 cudaMemcpy");
	put(&s, 1, "cudaFree");
	l = find(&s);
	assert_loop(&l, 8, 100, 3, 803);

	seq_free(&s);
	put(&s, 1, "cudaSetDevice cudaMallocx2");
	put(&s, 30, "cudaMemcpyAsync cudaLaunchKernelx4 cudaEventRecord cudaLaunchKernel cudaStreamSynchronize");
	put(&s, 100, "cudaMemcpy cudaLaunchKernelx3 cudaMemcpy");
	put(&s, 1, "cudaFree");
	l = find(&s);
	assert_loop(&l, 5, 100, 243, 743);
	seq_free(&s);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Bounded work: IFT_TEST_LOOP_CALLS calls (default 1M; the bench is 10M)
   of 137-call iterations, one in 50 with an extra call, one in 50 missing
   one, between 5000 calls of start-up and a tail. */
static void test_large(void **state)
{
	const char *env = getenv("IFT_TEST_LOOP_CALLS");
	size_t n = env ? strtoull(env, NULL, 10) : 1000000, k = 0, first, end;
	uint32_t *ops = malloc(n * sizeof(*ops)), unit[137];
	uint64_t x = 88172645463325252ull, iters = 0;
	struct az_loop l;
	double t;

	(void)state;
	assert_non_null(ops);
	assert_true(n > 20000);
	for (unsigned i = 0; i < 137; i++)
		unit[i] = i == 0 ? 1 : i == 136 ? 2 : i % 7 == 3 ? 3 : i % 11 == 5 ? 4 : 5;
	for (; k < 5000; k++)
		ops[k] = 100 + k % 97;
	first = k;
	for (bool last = false; !last; iters++) {
		last = k + 3 * 137 > n - 3000;
		for (unsigned i = 0; i < 137; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* the first and last iterations are whole */
			if (iters && !last && x % (50 * 137) == 0)
				ops[k++] = 6;
			if (iters && !last && x % (50 * 137) == 1)
				continue;
			ops[k++] = unit[i];
		}
	}
	end = k;
	while (k < n)
		ops[k] = 200 + k % 13, k++;
	t = now();
	assert_int_equal(ift_az_loop_find(ops, n, &l), 0);
	t = now() - t;
	print_message("%zu calls: %.3f s\n", n, t);
	assert_loop(&l, 137, iters, first, end);
	free(ops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h200_direct),
		cmocka_unit_test(test_h200_loader),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_startup),
		cmocka_unit_test(test_phase),
		cmocka_unit_test(test_period_one),
		cmocka_unit_test(test_no_loop),
		cmocka_unit_test(test_noisy_pytorch),
		cmocka_unit_test(test_two_loops),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
