/* Calls, N times each in a tight loop, (a) cudaSetDevice of the small library
 * contrib/bench/probe-tiny.c (dlopen'ed RTLD_LOCAL so it cannot clash with
 * libcudart's symbol of that name) and (b) the real cudaGetDeviceCount of
 * libcudart (linked; without a GPU it fails fast, the probes still fire).
 * Prints "tiny_ns cudart_ns": nanoseconds per call, CLOCK_MONOTONIC around
 * each loop.  Used by contrib/bench/overhead.sh.
 *
 *   probe-loop N TINY_LIB */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int cudaGetDeviceCount(int *count);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n, i;
	void *h;
	int (*tiny)(int);
	int count = 0, sink = 0;
	double t0, t1, t2;

	if (argc != 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: probe-loop N TINY_LIB\n");
		return 2;
	}
	h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!h || !(tiny = (int (*)(int))dlsym(h, "cudaSetDevice"))) {
		fprintf(stderr, "probe-loop: %s\n", dlerror());
		return 1;
	}
	sink += tiny(0) + cudaGetDeviceCount(&count);	/* warm up: lazy binding, runtime init */
	t0 = now_ns();
	for (i = 0; i < n; i++)
		sink += tiny((int)i);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		sink += cudaGetDeviceCount(&count);
	t2 = now_ns();
	printf("%.1f %.1f\n", (t1 - t0) / n, (t2 - t1) / n);
	return sink == -1;	/* keep the results live */
}
