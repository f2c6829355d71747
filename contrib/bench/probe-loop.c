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
 * With "serve" it measures once for each line read from stdin, and prints
 * each result as it goes: one process measures every tool, so that what
 * differs from one process to another (where ld.so placed the code, and
 * so its alignment: 1.6 to 2.0 ns a call, run to run, tracing nothing) is
 * not taken for the tools' doing.
 *
 *   probe-loop N TINY_LIB [BATCH [serve]] */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int (*tiny)(int);
static int sink;

/* One measure: each loop's median batch, in ns a call, into MED. */
static void measure(long nb, long batch, double *bt[2], double med[2])
{
	int count = 0;

	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (long i = 0; i < batch; i++)
			sink += tiny((int)i);
		bt[0][b] = (now_ns() - t0) / batch;
	}
	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (long i = 0; i < batch; i++)
			sink += cudaGetDeviceCount(&count);
		bt[1][b] = (now_ns() - t0) / batch;
	}
	for (int f = 0; f < 2; f++) {
		qsort(bt[f], (size_t)nb, sizeof(double), cmp_double);
		med[f] = nb % 2 ? bt[f][nb / 2] : (bt[f][nb / 2 - 1] + bt[f][nb / 2]) / 2;
	}
}

int main(int argc, char **argv)
{
	long n, batch = 0, nb = 1;
	void *h;
	int count = 0;
	bool serve = argc == 5 && !strcmp(argv[4], "serve");
	double *bt[2], med[2];
	char line[64];

	if (argc < 3 || argc > 5 || (n = atol(argv[1])) <= 0 ||
	    (argc >= 4 && ((batch = atol(argv[3])) <= 0 || batch > n)) ||
	    (argc == 5 && !serve)) {
		fprintf(stderr, "usage: probe-loop N TINY_LIB [BATCH [serve]]\n");
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
	if (!serve) {
		measure(nb, batch, bt, med);
		printf("%.1f %.1f\n", med[0], med[1]);
	}
	while (serve && fgets(line, sizeof(line), stdin)) {
		measure(nb, batch, bt, med);
		/* the tiny call takes 2 ns: a tenth is 5% */
		printf("%.3f %.3f\n", med[0], med[1]);
		fflush(stdout);
	}
	return sink == -1;	/* keep the results live */
}
