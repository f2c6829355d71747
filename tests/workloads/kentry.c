/*
 * kentry - CPU time in the kernel for one known reason, for the profile's
 * kernel entries (t704): for SECONDS of wall time,
 *
 *   kentry read SECONDS    read(2) 64 KiB of /dev/zero into one buffer:
 *                          the kernel's time is the system calls'
 *   kentry fault SECONDS   map 16 MiB of fresh anonymous memory, write a
 *                          byte of each page, unmap: the kernel's time is
 *                          mostly the page faults' (zeroing each page)
 *
 * and prints its own CPU split and faults (getrusage RUSAGE_SELF):
 * "user_ns SYS_ns minflt".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 16 << 20;
	struct rusage ru;
	double end;
	int fd;

	if (argc != 3 || (strcmp(argv[1], "read") && strcmp(argv[1], "fault"))) {
		fprintf(stderr, "usage: kentry read|fault SECONDS\n");
		return 2;
	}
	end = now() + atof(argv[2]);
	if (!strcmp(argv[1], "read")) {
		if ((fd = open("/dev/zero", O_RDONLY)) < 0)
			return 1;
		while (now() < end)
			for (int i = 0; i < 64; i++)
				if (read(fd, buf, sizeof(buf)) < 0)
					return 1;
		close(fd);
	} else {
		while (now() < end) {
			unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return 1;
			madvise(p, len, MADV_NOHUGEPAGE);
			for (size_t o = 0; o < len; o += (size_t)page)
				p[o] = 1;
			munmap(p, len);
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("%lld %lld %ld\n",
	       (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
	       (long long)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL,
	       ru.ru_minflt);
	return 0;
}
