// SPDX-License-Identifier: MIT
/*
 * late-dlopen: loads a CUDA runtime with dlopen() well after it started, from
 * a path no search would find, then calls cudaMalloc every 50 ms, logging
 *   dlopen <t>            when the library was loaded
 *   call <bytes> <t0> <t1>  for each call
 * so a test can check that calls made once the recorder noticed the new
 * mapping were traced.
 *
 *   late-dlopen LIBRARY [DELAY_MS] [CALLS]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv)
{
	int delay = argc > 2 ? atoi(argv[2]) : 1000, calls = argc > 3 ? atoi(argv[3]) : 40;
	int (*malloc_fn)(void **, size_t);
	void *h, *p;

	if (argc < 2)
		return 2;
	usleep((useconds_t)delay * 1000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&malloc_fn = dlsym(h, "cudaMalloc");
	if (!malloc_fn)
		return 1;
	printf("dlopen %llu\n", now());
	for (int i = 0; i < calls; i++) {
		size_t bytes = 1000 + (size_t)i;
		unsigned long long t0 = now(), t1;

		malloc_fn(&p, bytes);
		t1 = now();
		printf("call %zu %llu %llu\n", bytes, t0, t1);
		usleep(50000);
	}
	return 0;
}
