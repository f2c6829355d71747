// SPDX-License-Identifier: MIT
/*
 * The load for the capacity benchmark: THREADS threads each call
 * cudaSetDevice of the small library contrib/bench/probe-tiny.c RATE times a
 * second (0: as fast as they can) for SECONDS, paced against
 * CLOCK_MONOTONIC, while WORKERS forked processes touch fresh memory and
 * yield (page allocations and context switches).  Writes the calls made, the
 * truth a tracer's uprobe events are counted against (an entry and a return
 * each).  Used by contrib/bench/capacity.sh.
 *
 *   hammer TINY_LIB SECONDS THREADS RATE WORKERS OUT
 *
 * The count goes to the file OUT: a tracer may write on stdout too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int (*tiny)(int);
static double seconds, rate;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *caller(void *arg)
{
	long *calls = arg, n = 0;
	double t0 = now(), end = t0 + seconds, t;

	while ((t = now()) < end) {
		/* catch up to the rate: the calls due by now, in a burst of at most 64 */
		long due = rate > 0 ? (long)((t - t0) * rate) + 1 : n + 64;

		for (int k = 0; n < due && k < 64; k++, n++)
			tiny((int)n);
	}
	*calls = n;
	return NULL;
}

static void toucher(double end)
{
	const size_t len = 8 << 20;

	while (now() < end) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
		sched_yield();
		usleep(1000);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int threads, workers;
	pthread_t th[64];
	long calls[64], total = 0;
	pid_t pids[64];
	void *h;
	FILE *out;

	if (argc != 7) {
		fprintf(stderr, "usage: hammer TINY_LIB SECONDS THREADS RATE WORKERS OUT\n");
		return 2;
	}
	seconds = atof(argv[2]);
	threads = atoi(argv[3]);
	rate = atof(argv[4]);
	workers = atoi(argv[5]);
	if (threads < 1 || threads > 64 || workers < 0 || workers > 64 || seconds <= 0) {
		fprintf(stderr, "hammer: bad arguments\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h || !(tiny = (int (*)(int))dlsym(h, "cudaSetDevice"))) {
		fprintf(stderr, "hammer: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < workers; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			toucher(now() + seconds);
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, caller, &calls[i]);
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		total += calls[i];
	}
	for (int i = 0; i < workers; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	out = fopen(argv[6], "w");
	if (!out || fprintf(out, "%ld\n", total) < 0 || fclose(out)) {
		perror(argv[6]);
		return 1;
	}
	return 0;
}
