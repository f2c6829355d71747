// SPDX-License-Identifier: MIT
/*
 * tasks: forks processes that start threads, renames them, keeps the CPUs
 * busy enough to be preempted and sleeps enough to block, and logs the
 * kernel's own context-switch counters (getrusage) as each task ends:
 *
 *   thread <tid> <pid> <ppid> <name> <nvcsw> <nivcsw> <nvcsw0> <nivcsw0> <t0> <t1>
 *
 * one line per thread (RUSAGE_THREAD at its end; the main thread of each
 * process is logged too).  A test compares them with the recorded switches.
 * <nvcsw0> <nivcsw0> are the counts at main() of the first process, 0 for
 * the others: its counters began with the fork that made it, in the
 * recorder's child, where no trace sees the switches before the child is
 * released (on a loaded machine it is preempted there), and every trace
 * sees those after main() and those of exec and ld.so before it (many in a
 * guest whose files come over 9p).  Forked tasks start at zero.  <t0> and
 * <t1> are CLOCK_MONOTONIC (the trace clock) just before and after the
 * final getrusage: a switch traced before t0 is in its counts, one after t1
 * is not, however long the exit that follows takes.
 *
 *   tasks [PROCS] [THREADS] [MILLISECONDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int work_ms = 300;
static long base_nv, base_niv;	/* the first process's counters at main() */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void work(void)
{
	double end = now() + work_ms / 1000.0;
	volatile unsigned long x = 0;

	while (now() < end) {
		for (int i = 0; i < 200000; i++)
			x += (unsigned long)i;
		usleep(500);	/* a voluntary switch */
	}
}

static void log_self(const char *name, long nv0, long niv0)
{
	struct rusage ru;
	struct timespec t0, t1;
	char line[224];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	getrusage(RUSAGE_THREAD, &ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* one write(): lines from many tasks must not interleave */
	n = snprintf(line, sizeof(line), "thread %d %d %d %s %ld %ld %ld %ld %lld %lld\n",
		     gettid(), getpid(), getppid(), name, ru.ru_nvcsw, ru.ru_nivcsw, nv0, niv0,
		     (long long)t0.tv_sec * 1000000000LL + t0.tv_nsec,
		     (long long)t1.tv_sec * 1000000000LL + t1.tv_nsec);
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

static void *thread_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "wk-%d-%ld", getpid() % 1000, (long)arg);
	prctl(PR_SET_NAME, name);
	work();
	log_self(name, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 3;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	base_nv = ru.ru_nvcsw;
	base_niv = ru.ru_nivcsw;
	if (argc > 3)
		work_ms = atoi(argv[3]);
	for (int p = 0; p < procs; p++) {
		if (fork() == 0) {
			pthread_t th[16];
			char name[16];

			snprintf(name, sizeof(name), "proc-%d", p);
			prctl(PR_SET_NAME, name);
			for (long t = 0; t < threads && t < 16; t++)
				pthread_create(&th[t], NULL, thread_main, (void *)t);
			work();
			for (long t = 0; t < threads && t < 16; t++)
				pthread_join(th[t], NULL);
			log_self(name, 0, 0);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	log_self("tasks", base_nv, base_niv);
	return 0;
}
