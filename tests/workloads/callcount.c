/*
 * callcount - calls cudaGetDeviceCount a known number of times, for the
 * isolation test (t213), as one of two roles:
 *
 *   callcount loop FILE        a bystander: calls it for ever, and after each
 *                              1,024 calls writes its count (8 bytes) to FILE
 *   callcount traced K FILE OUT PID
 *                              calls it K times, then awaits the bystander's
 *                              next 16,384 calls (read from FILE), so the
 *                              bystander provably called while this process's
 *                              probes were armed, then copies the kernel's
 *                              per-probe hit counts (uprobe_profile) to OUT,
 *                              and to OUT.mem the first 4 bytes of
 *                              cudaGetDeviceCount as /proc/PID/mem shows them
 *                              in itself and in the bystander PID, in hex
 *                              (a uprobe's breakpoint: "cc......" on x86-64,
 *                              "a00020d4" on aarch64)
 *
 * The tracefs directory is $IFT_TRACEFS, else /sys/kernel/tracing.
 */
#define _GNU_SOURCE	/* dladdr */
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cudaGetDeviceCount(int *count);

/* Where PID mapped the start of PATH (its load base), or 0. */
static uintptr_t base_in(const char *pid, const char *path)
{
	char maps[64], line[PATH_MAX + 128], file[PATH_MAX];
	uintptr_t lo, off, base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%s/maps", pid);
	if (!(f = fopen(maps, "re")))
		return 0;
	while (!base && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNxPTR "-%*x %*s %" SCNxPTR " %*s %*s %4095s",
			   &lo, &off, file) == 3 && off == 0 && !strcmp(file, path))
			base = lo;
	fclose(f);
	return base;
}

/*
 * The first 4 bytes at ADDR in PID's memory through /proc/PID/mem, as hex
 * into HEX (9 bytes), "-" where they cannot be read: a uprobe's breakpoint
 * is x86-64's int3 (cc) or aarch64's BRK #5 (a0 00 20 d4).
 */
static void peek(const char *pid, uintptr_t addr, char *hex)
{
	char path[64];
	unsigned char b[4];
	int fd;

	strcpy(hex, "-");
	snprintf(path, sizeof(path), "/proc/%s/mem", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (pread(fd, b, sizeof(b), (off_t)addr) == (ssize_t)sizeof(b))
		snprintf(hex, 9, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
	close(fd);
}

/* cudaGetDeviceCount's first bytes in this process and in PID, to OUT. */
static int peek_both(const char *pid, const char *out)
{
	void *fn = dlsym(RTLD_DEFAULT, "cudaGetDeviceCount");
	char lib[PATH_MAX], mine[9], theirs[9];
	uintptr_t them;
	Dl_info info;
	FILE *f;

	if (!fn || !dladdr(fn, &info) || !realpath(info.dli_fname, lib) ||
	    !(them = base_in(pid, lib)) || !(f = fopen(out, "we")))
		return 1;
	peek("self", (uintptr_t)fn, mine);
	peek(pid, them + ((uintptr_t)fn - (uintptr_t)info.dli_fbase), theirs);
	fprintf(f, "%s %s\n", mine, theirs);
	return fclose(f) ? 1 : 0;
}

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
	if (argc == 6 && argv[1][0] == 't') {
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
		snprintf(path, sizeof(path), "%s.mem", argv[4]);
		if (peek_both(argv[5], path))
			return 1;
		snprintf(path, sizeof(path), "%s/uprobe_profile", t ? t : "/sys/kernel/tracing");
		if (!(in = fopen(path, "r")) || !(out = fopen(argv[4], "w")))
			return 1;
		while ((len = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, len, out);
		fclose(in);
		return fclose(out) ? 1 : 0;
	}
	fprintf(stderr, "usage: callcount loop FILE | callcount traced K FILE OUT PID\n");
	return 2;
}
