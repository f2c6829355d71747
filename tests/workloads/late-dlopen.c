// SPDX-License-Identifier: MIT
/*
 * late-dlopen: loads a CUDA runtime with dlopen() well after it started, from
 * a path no search would find, waits until its cudaMalloc is probed (a
 * uprobe writes a breakpoint into the traced process's copy of the code: its
 * first bytes differ from the file's), then calls cudaMalloc every 50 ms,
 * logging
 *   dlopen <t>              when the library was loaded
 *   probed <t>              when the process first saw the breakpoint
 *   call <bytes> <t0> <t1>  for each call
 * so a test can check that calls made once the recorder armed the probes of
 * the new mapping were traced, however long the recorder took to notice it.
 * Exits 3 if no probe came within 120 s.
 *
 *   late-dlopen LIBRARY [DELAY_MS] [CALLS]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_BYTES	16	/* past an endbr64, where a probe may sit */

static unsigned long long now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

struct where {
	uintptr_t addr;
	off_t off;	/* ADDR's offset in its file, -1 until found */
	char path[4096];
};

/* The loaded segment holding ADDR: its file offset there. */
static int find_seg(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct where *w = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || w->addr < lo || w->addr >= lo + ph->p_filesz)
			continue;
		w->off = (off_t)(w->addr - lo + ph->p_offset);
		snprintf(w->path, sizeof(w->path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Waits until the code at FN differs from its file's bytes: the probe. */
static int await_probe(void *fn)
{
	struct where w = { (uintptr_t)fn, -1, "" };
	unsigned char file[PROBE_BYTES];
	unsigned long long deadline = now() + 120ULL * 1000000000ULL;
	int fd;

	dl_iterate_phdr(find_seg, &w);
	if (w.off < 0 || (fd = open(w.path, O_RDONLY)) < 0)
		return -1;
	if (pread(fd, file, sizeof(file), w.off) != (ssize_t)sizeof(file)) {
		close(fd);
		return -1;
	}
	close(fd);
	while (!memcmp((const void *)w.addr, file, sizeof(file)))
		if (now() > deadline || usleep(2000) < 0)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int delay = argc > 2 ? atoi(argv[2]) : 1000, calls = argc > 3 ? atoi(argv[3]) : 40;
	int (*malloc_fn)(void **, size_t);
	void *h, *p;

	if (argc < 2)
		return 2;
	usleep((useconds_t)delay * 1000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&malloc_fn = dlsym(h, "cudaMalloc");
	if (!malloc_fn)
		return 1;
	printf("dlopen %llu\n", now());
	fflush(stdout);
	if (await_probe(*(void **)&malloc_fn) < 0) {
		fprintf(stderr, "late-dlopen: cudaMalloc was not probed in 120 s\n");
		return 3;
	}
	printf("probed %llu\n", now());
	for (int i = 0; i < calls; i++) {
		size_t bytes = 1000 + (size_t)i;
		unsigned long long t0 = now(), t1;

		malloc_fn(&p, bytes);
		t1 = now();
		printf("call %zu %llu %llu\n", bytes, t0, t1);
		usleep(50000);
	}
	return 0;
}
