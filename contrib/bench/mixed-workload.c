// SPDX-License-Identifier: MIT
/*
 * The realistic event mix for size benchmarks: N forked workers renamed
 * pt_data_worker that allocate, touch and free fresh memory (page
 * allocations, context switches), while the main thread calls the real CUDA
 * runtime in a loop (the calls fail fast without a GPU, but their probes fire).
 *
 *   mixed-workload SECONDS [MB_PER_ALLOC] [WORKERS] [START_DELAY_MS]
 *
 * START_DELAY_MS lets a recorder attach (-p) before the workers exist.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the runtime's C signatures, without the CUDA headers */
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream);
int cudaStreamSynchronize(void *stream);

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	size_t sz = (size_t)(argc > 2 ? atoi(argv[2]) : 50) << 20;
	int workers = argc > 3 ? atoi(argv[3]) : 4;
	int delay_ms = argc > 4 ? atoi(argv[4]) : 0;
	char buf[4096] = { 0 };
	void *d = NULL;
	long n = 0;
	double end;

	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	for (int k = 0; k < workers; k++) {
		if (fork() == 0) {
			prctl(PR_SET_NAME, "pt_data_worker");
			end = now() + secs;
			while (now() < end) {
				/* above glibc's mmap threshold: fresh pages every time */
				char *p = malloc(sz);

				memset(p, 1, sz);
				__asm__ volatile("" : : "r"(p) : "memory");
				free(p);
			}
			_exit(0);
		}
	}
	end = now() + secs;
	while (now() < end) {
		cudaMalloc(&d, 1 << 20);
		cudaMemcpyAsync(d, buf, sizeof(buf), 1, NULL);
		cudaMemcpy(d, buf, sizeof(buf), 1);
		cudaStreamSynchronize(NULL);
		cudaFree(d);
		n++;
		usleep(200);
	}
	while (wait(NULL) > 0)
		;
	printf("iterations %ld\n", n);
	return 0;
}
