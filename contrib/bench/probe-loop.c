/* Calls, N times each in a tight loop, (a) cudaSetDevice of the small library
 * contrib/bench/probe-tiny.c (dlopen'ed RTLD_LOCAL so it cannot clash with
 * libcudart's symbol of that name) and (b) the real cudaGetDeviceCount of
 * libcudart (linked; without a GPU it fails fast, the probes still fire).
 * Prints "tiny_ns cudart_ns": nanoseconds per call, CLOCK_MONOTONIC around
 * each loop.  Used by contrib/bench/overhead.sh.
 *
 * With BATCH, each loop is timed in batches of BATCH calls and the figure
 * is the median batch's: a call's own cost, without the batches another
 * task took the CPU in (contrib/bench/bystander.sh, where the recorder's
 * threads run beside the loop on a machine of few CPUs).
 *
 *   probe-loop N TINY_LIB [BATCH] */
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n, i, batch = 0, nb = 1;
	void *h;
	int (*tiny)(int);
	int count = 0, sink = 0;
	double *bt[2], med[2];

	if (argc < 3 || argc > 4 || (n = atol(argv[1])) <= 0 ||
	    (argc == 4 && ((batch = atol(argv[3])) <= 0 || batch > n))) {
		fprintf(stderr, "usage: probe-loop N TINY_LIB [BATCH]\n");
		return 2;
	}
	h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!h || !(tiny = (int (*)(int))dlsym(h, "cudaSetDevice"))) {
		fprintf(stderr, "probe-loop: %s\n", dlerror());
		return 1;
	}
	if (!batch)
		batch = n;
	nb = n / batch;
	bt[0] = calloc((size_t)nb, sizeof(double));
	bt[1] = calloc((size_t)nb, sizeof(double));
	if (!bt[0] || !bt[1])
		return 1;
	sink += tiny(0) + cudaGetDeviceCount(&count);	/* warm up: lazy binding, runtime init */
	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (i = 0; i < batch; i++)
			sink += tiny((int)i);
		bt[0][b] = (now_ns() - t0) / batch;
	}
	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (i = 0; i < batch; i++)
			sink += cudaGetDeviceCount(&count);
		bt[1][b] = (now_ns() - t0) / batch;
	}
	for (int f = 0; f < 2; f++) {
		qsort(bt[f], (size_t)nb, sizeof(double), cmp_double);
		med[f] = nb % 2 ? bt[f][nb / 2] : (bt[f][nb / 2 - 1] + bt[f][nb / 2]) / 2;
	}
	printf("%.1f %.1f\n", med[0], med[1]);
	return sink == -1;	/* keep the results live */
}
