/*
 * A page-allocation storm: P processes, each ROUNDS times allocating MB
 * MiB, writing every page of it and freeing it (glibc gives a block this
 * large back to the kernel at once, so every round faults fresh pages in).
 * Prints the wall time in seconds of the whole storm, CLOCK_MONOTONIC from
 * the first fork to the last exit.  Used by contrib/bench/storm.sh.
 *
 *   page-storm P ROUNDS MB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int procs, rounds, status, bad = 0;
	size_t bytes;
	double t0;

	if (argc != 4 || (procs = atoi(argv[1])) <= 0 || (rounds = atoi(argv[2])) <= 0 ||
	    atol(argv[3]) <= 0) {
		fprintf(stderr, "usage: page-storm P ROUNDS MB\n");
		return 2;
	}
	bytes = (size_t)atol(argv[3]) << 20;
	t0 = now_s();
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			for (int r = 0; r < rounds; r++) {
				char *b = malloc(bytes);

				if (!b)
					_exit(1);
				memset(b, r + 1, bytes);
				/* the pages are used: the compiler may not drop the
				   malloc, memset and free as dead */
				__asm__ volatile("" : : "r"(b) : "memory");
				free(b);
			}
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	printf("%.4f\n", now_s() - t0);
	return bad;
}
