// SPDX-License-Identifier: MIT
/*
 * cuda-seq: calls the real CUDA runtime in a known sequence and logs each
 * call with the CLOCK_MONOTONIC times it took before and after, so a test
 * can check the recorded calls against the program's own truth.  Without a
 * GPU the calls fail fast, but their probes fire all the same.
 *
 * Output, one line per call:  name <TAB> ret <TAB> t_before <TAB> t_after
 *                             <TAB> arg=value ...
 * With CUDA_SEQ_SCHEDSTAT=FILE, at its end it writes "TID RUN_DELAY_NS" there:
 * the kernel's count of its wait for a CPU (/proc/thread-self/schedstat).
 *
 *   cuda-seq [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct { unsigned x, y, z; } dim3;

int cudaGetDeviceCount(int *n);
int cudaSetDevice(int dev);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream);
int cudaMemsetAsync(void *p, int v, size_t n, void *stream);
int cudaStreamSynchronize(void *stream);
int cudaDeviceSynchronize(void);
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
		     size_t shared, void *stream);

/* "TID RUN_DELAY_NS" into PATH, if given and the kernel keeps the count. */
static void schedstat(const char *path)
{
	unsigned long long on_cpu, delay;
	FILE *f;

	if (!path || !(f = fopen("/proc/thread-self/schedstat", "r")))
		return;
	if (fscanf(f, "%llu %llu", &on_cpu, &delay) == 2) {
		FILE *o = fopen(path, "w");

		if (o) {
			fprintf(o, "%ld %llu\n", (long)getpid(), delay);
			fclose(o);
		}
	}
	fclose(f);
}

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}


int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, n = 0;
	static char host[1 << 16];
	void *stream = (void *)0x5a5a000ULL, *dev = (void *)0x7000000ULL;
	void *p = NULL;

	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	{
		uint64_t t0 = now();
		int r = cudaGetDeviceCount(&n);
		uint64_t t1 = now();

		printf("cudaGetDeviceCount\t%d\t%llu\t%llu\n", r,
		       (unsigned long long)t0, (unsigned long long)t1);
	}
	for (int i = 0; i < rounds; i++) {
		size_t bytes = 4096u * (size_t)(i + 1);
		dim3 grid = { (unsigned)i + 1, 2, 1 }, block = { 128, 1, 1 };
		const void *func = (const void *)(0x400000ULL + (uint64_t)i * 16);

		{
			uint64_t t0 = now();
			int r = cudaMalloc(&p, bytes);
			uint64_t t1 = now();

			printf("cudaMalloc\t%d\t%llu\t%llu\tbytes=%zu\n", r,
			       (unsigned long long)t0, (unsigned long long)t1, bytes);
		}
		{
			uint64_t t0 = now();
			int r = cudaMemcpy(dev, host, bytes, 1);
			uint64_t t1 = now();

			printf("cudaMemcpy\t%d\t%llu\t%llu\tdst=%llu\tsrc=%llu\tbytes=%zu\tkind=1\n",
			       r, (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)(uintptr_t)dev,
			       (unsigned long long)(uintptr_t)host, bytes);
		}
		{
			uint64_t t0 = now();
			int r = cudaMemcpyAsync(host, dev, bytes / 2, 2, stream);
			uint64_t t1 = now();

			printf("cudaMemcpyAsync\t%d\t%llu\t%llu\tdst=%llu\tsrc=%llu\tbytes=%zu\tkind=2\tstream=%llu\n",
			       r, (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)(uintptr_t)host,
			       (unsigned long long)(uintptr_t)dev, bytes / 2,
			       (unsigned long long)(uintptr_t)stream);
		}
		{
			uint64_t t0 = now();
			int r = cudaLaunchKernel(func, grid, block, NULL, 256, stream);
			uint64_t t1 = now();

			printf("cudaLaunchKernel\t%d\t%llu\t%llu\tfunc=%llu\tshared_mem=256\tstream=%llu\n",
			       r, (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)(uintptr_t)func,
			       (unsigned long long)(uintptr_t)stream);
		}
		{
			uint64_t t0 = now();
			int r = cudaStreamSynchronize(stream);
			uint64_t t1 = now();

			printf("cudaStreamSynchronize\t%d\t%llu\t%llu\tstream=%llu\n", r,
			       (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)(uintptr_t)stream);
		}
		{
			uint64_t t0 = now();
			int r = cudaFree(dev);
			uint64_t t1 = now();

			printf("cudaFree\t%d\t%llu\t%llu\tptr=%llu\n", r,
			       (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)(uintptr_t)dev);
		}
	}
	{
		uint64_t t0 = now();
		int r = cudaDeviceSynchronize();
		uint64_t t1 = now();

		printf("cudaDeviceSynchronize\t%d\t%llu\t%llu\n", r,
		       (unsigned long long)t0, (unsigned long long)t1);
	}
	schedstat(getenv("CUDA_SEQ_SCHEDSTAT"));
	return 0;
}
