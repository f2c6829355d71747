/*
 * pagetouch - page allocations with their own count, for record
 * --page-allocs (t218): each of THREADS threads (the main one among them)
 * maps MB MiB of anonymous memory without huge pages, writes one byte of
 * every page, and prints its tid and the minor faults the kernel counted
 * for it (getrusage RUSAGE_THREAD): one freshly allocated page each.
 *
 *   pagetouch THREADS MB        one line per thread: "TID MINFLT"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t bytes;
static pthread_barrier_t go;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;

static void *touch(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rusage before, after;
	unsigned char *p;

	(void)arg;
	pthread_barrier_wait(&go);
	getrusage(RUSAGE_THREAD, &before);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("pagetouch: mmap");
		exit(1);
	}
	madvise(p, bytes, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < bytes; i += (size_t)page)
		p[i] = 1;
	getrusage(RUSAGE_THREAD, &after);
	pthread_mutex_lock(&out);
	printf("%ld %ld\n", (long)syscall(SYS_gettid), after.ru_minflt - before.ru_minflt);
	fflush(stdout);
	pthread_mutex_unlock(&out);
	/* kept mapped: a page given back is no allocation less */
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0;
	long mb = argc == 3 ? atol(argv[2]) : 0;
	pthread_t th[64];

	if (n < 1 || n > 64 || mb < 1) {
		fprintf(stderr, "usage: pagetouch THREADS MB\n");
		return 2;
	}
	bytes = (size_t)mb << 20;
	pthread_barrier_init(&go, NULL, (unsigned)n);
	for (int i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, touch, NULL)) {
			fprintf(stderr, "pagetouch: cannot start a thread\n");
			return 1;
		}
	touch(NULL);
	for (int i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
