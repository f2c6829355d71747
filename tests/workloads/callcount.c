/*
 * callcount - calls cudaGetDeviceCount a known number of times, for the
 * isolation test (t213), as one of two roles:
 *
 *   callcount loop FILE        a bystander: calls it for ever, and after each
 *                              1,024 calls writes its count (8 bytes) to FILE
 *   callcount traced K FILE OUT
 *                              calls it K times, then awaits the bystander's
 *                              next 16,384 calls (read from FILE), so the
 *                              bystander provably called while this process's
 *                              probes were armed, then copies the kernel's
 *                              per-probe hit counts (uprobe_profile) to OUT
 *
 * The tracefs directory is $IFT_TRACEFS, else /sys/kernel/tracing.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int cudaGetDeviceCount(int *count);

static uint64_t count_of(int fd)
{
	uint64_t n = 0;

	if (pread(fd, &n, sizeof(n), 0) != sizeof(n))
		return 0;
	return n;
}

int main(int argc, char **argv)
{
	int c, fd;

	if (argc == 3 && argv[1][0] == 'l') {
		fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return 1;
		for (uint64_t n = 1;; n++) {
			cudaGetDeviceCount(&c);
			if (!(n % 1024) && pwrite(fd, &n, sizeof(n), 0) != sizeof(n))
				return 1;
		}
	}
	if (argc == 5 && argv[1][0] == 't') {
		long k = atol(argv[2]);
		const char *t = getenv("IFT_TRACEFS");
		char path[512], buf[65536];
		struct timespec ms = { 0, 1000000 };
		uint64_t from;
		FILE *in, *out;
		size_t len;

		for (long i = 0; i < k; i++)
			cudaGetDeviceCount(&c);
		if ((fd = open(argv[3], O_RDONLY | O_CLOEXEC)) < 0)
			return 1;
		from = count_of(fd);
		while (count_of(fd) < from + 16384)
			nanosleep(&ms, NULL);
		close(fd);
		snprintf(path, sizeof(path), "%s/uprobe_profile", t ? t : "/sys/kernel/tracing");
		if (!(in = fopen(path, "r")) || !(out = fopen(argv[4], "w")))
			return 1;
		while ((len = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, len, out);
		fclose(in);
		return fclose(out) ? 1 : 0;
	}
	fprintf(stderr, "usage: callcount loop FILE | callcount traced K FILE OUT\n");
	return 2;
}
