// SPDX-License-Identifier: MIT
/*
 * The state file that simcuda writes and simnvml reads (simnvml.h): built
 * into both libraries, hidden in each.  The writer's side never fails
 * loudly: a simcuda that cannot share its state runs as it did before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "simnvml.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

int simnvml_state_path(char *buf, size_t size)
{
	const char *env = getenv("SIMCUDA_NVML");
	int n;

	if (env && *env)
		n = snprintf(buf, size, "%s", env);
	else
		n = snprintf(buf, size, "/dev/shm/simcuda-nvml.%u", (unsigned)getuid());
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int simnvml_pid_alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

/* Whether FD's header is a state this build can share: the layout, and
   times of this boot (CLOCK_MONOTONIC restarts at each one). */
static int state_usable(int fd)
{
	struct simnvml_header h;
	struct stat sb;

	if (fstat(fd, &sb) < 0 || sb.st_size != (off_t)sizeof(struct simnvml_state) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return 0;
	return atomic_load(&h.magic) == SIMNVML_MAGIC && h.version == SIMNVML_VERSION &&
	       h.nslots == SIMNVML_SLOTS && h.nprocs == SIMNVML_PROCS && h.created_ns <= mono_ns();
}

/* Maps FD's state, first emptying and initialising it when it is not
   usable; under the file's lock, so one process initialises it.  NULL when
   it cannot. */
static struct simnvml_state *state_map_rw(int fd)
{
	struct simnvml_state *st;
	int fresh = !state_usable(fd);

	/* truncating to 0 first zeroes every byte of an old layout */
	if (fresh && (ftruncate(fd, 0) < 0 || ftruncate(fd, sizeof(*st)) < 0))
		return NULL;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED)
		return NULL;
	if (fresh) {
		st->h.version = SIMNVML_VERSION;
		st->h.nslots = SIMNVML_SLOTS;
		st->h.nprocs = SIMNVML_PROCS;
		st->h.created_ns = mono_ns();
		atomic_store_explicit(&st->h.magic, SIMNVML_MAGIC, memory_order_release);
	}
	return st;
}

/* The state at PATH, read-write, created when missing; NULL when it cannot
   be, or the file is another user's (never write into someone else's). */
static struct simnvml_state *state_create(const char *path)
{
	struct simnvml_state *st = NULL;
	struct stat sb;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return NULL;
	if (flock(fd, LOCK_EX) == 0 && fstat(fd, &sb) == 0 && sb.st_uid == geteuid() &&
	    S_ISREG(sb.st_mode))
		st = state_map_rw(fd);
	/* explicitly: the mapping holds the open file, and with it the lock */
	flock(fd, LOCK_UN);
	close(fd);
	return st;
}

/* An entry of ST's process table for PID: its own from before an exec, a
   free one, or one whose process died.  Its index, or -1 when all are
   taken. */
static int proc_claim(struct simnvml_state *st, uint32_t pid)
{
	for (int i = 0; i < SIMNVML_PROCS; i++) {
		struct simnvml_proc *p = &st->procs[i];
		uint32_t old = atomic_load(&p->pid);

		if (old != pid && simnvml_pid_alive(old))
			continue;
		if (atomic_compare_exchange_strong(&p->pid, &old, pid)) {
			atomic_store(&p->mem_bytes, 0);
			return i;
		}
	}
	return -1;
}

void simnvml_writer_create(struct simnvml_writer *w, uint64_t mem_bytes)
{
	const char *log = getenv("SIMCUDA_BUSY_LOG");
	char path[4096];

	*w = (struct simnvml_writer){ .proc = -1, .pid = getpid(), .log_fd = -1 };
	if (log && *log)
		w->log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (simnvml_state_path(path, sizeof(path)) == 0)
		w->st = state_create(path);
	if (!w->st)
		return;
	atomic_store(&w->st->h.total_bytes, mem_bytes);
	w->proc = proc_claim(w->st, (uint32_t)w->pid);
}

/* *MAX becomes V when V is more. */
static void raise_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t m = atomic_load(max);

	while (v > m && !atomic_compare_exchange_weak(max, &m, v))
		;
}

/* Claims the next slot and publishes the interval in it: seq 0 while the
   fields change, then its index + 1 (simnvml.h). */
static void ring_put(struct simnvml_state *st, uint32_t pid, enum simnvml_kind kind,
		     uint64_t start_ns, uint64_t end_ns, uint64_t bytes)
{
	uint64_t i = atomic_fetch_add_explicit(&st->h.head, 1, memory_order_relaxed);
	struct simnvml_slot *s = &st->slots[i % SIMNVML_SLOTS];

	atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->start_ns, start_ns, memory_order_relaxed);
	atomic_store_explicit(&s->end_ns, end_ns, memory_order_relaxed);
	atomic_store_explicit(&s->bytes, bytes, memory_order_relaxed);
	atomic_store_explicit(&s->pid, pid, memory_order_relaxed);
	atomic_store_explicit(&s->kind, (uint32_t)kind, memory_order_relaxed);
	atomic_store_explicit(&s->seq, i + 1, memory_order_release);
	raise_max(&st->h.max_op_ns, end_ns - start_ns);
}

void simnvml_writer_busy(struct simnvml_writer *w, enum simnvml_kind kind, uint64_t start_ns,
			 uint64_t end_ns, uint64_t bytes)
{
	char line[64];
	int n;

	if (w->st)
		ring_put(w->st, (uint32_t)w->pid, kind, start_ns, end_ns, bytes);
	if (w->log_fd < 0)
		return;
	/* one write() a line, O_APPEND: processes sharing the log never mix lines */
	n = snprintf(line, sizeof(line), "%llu %llu %s\n", (unsigned long long)start_ns,
		     (unsigned long long)end_ns, kind == SIMNVML_KERNEL ? "kernel" : "copy");
	if (write(w->log_fd, line, (size_t)n) != n)
		return;	/* the truth is lost; the device goes on */
}

void simnvml_writer_mem(struct simnvml_writer *w, int64_t delta)
{
	/* two's complement: adding a negative delta as unsigned subtracts */
	if (w->st && w->proc >= 0)
		atomic_fetch_add(&w->st->procs[w->proc].mem_bytes, (uint64_t)delta);
}

void simnvml_writer_destroy(struct simnvml_writer *w)
{
	uint32_t pid = (uint32_t)w->pid;
	struct simnvml_proc *p;

	/* a forked child inherits the entry but does not own it */
	if (!w->st || w->proc < 0 || w->pid != getpid())
		return;
	p = &w->st->procs[w->proc];
	atomic_store(&p->mem_bytes, 0);
	atomic_compare_exchange_strong(&p->pid, &pid, 0);
	/* the mapping stays: the device thread may still log while exiting */
	w->proc = -1;
}

void simnvml_state_ensure(const char *path)
{
	struct simnvml_state *st = state_create(path);

	if (st)
		munmap(st, sizeof(*st));
}

const struct simnvml_state *simnvml_state_map(const char *path)
{
	const struct simnvml_state *st;
	struct stat sb = { 0 };
	uint64_t magic;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || sb.st_size != (off_t)sizeof(*st)) {
		/* empty: a writer is creating it */
		int e = sb.st_size == 0 ? ENOENT : EPROTO;

		close(fd);
		errno = e;
		return NULL;
	}
	p = mmap(NULL, sizeof(*st), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	st = p;
	magic = atomic_load_explicit(&st->h.magic, memory_order_acquire);
	if (magic == SIMNVML_MAGIC && st->h.version == SIMNVML_VERSION &&
	    st->h.nslots == SIMNVML_SLOTS && st->h.nprocs == SIMNVML_PROCS)
		return st;
	munmap(p, sizeof(*st));
	errno = magic ? EPROTO : ENOENT;
	return NULL;
}

void simnvml_state_unmap(const struct simnvml_state *st)
{
	if (st)
		munmap((void *)st, sizeof(*st));
}
