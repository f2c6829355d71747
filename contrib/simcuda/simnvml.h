/* SPDX-License-Identifier: MIT */
/*
 * The device state that simcuda (libcudart.so.12) shares with simnvml
 * (libnvidia-ml.so.1) through a file mapped MAP_SHARED: each process of
 * simcuda writes its device's busy intervals and its own entry in the
 * process table; simnvml, in any process of the same user, reads them as
 * NVML reads the driver.  Several simcuda processes share one file as
 * processes share one GPU.  See README.md, "NVML".
 *
 * Writers never lock: a slot of the ring is claimed with a fetch-add on
 * head and published with a per-slot sequence (a seqlock of one writer),
 * so a reader that sees seq == index + 1 before and after copying a slot
 * has a whole interval.  Every shared field is atomic for that reason.
 */
#ifndef SIMNVML_H
#define SIMNVML_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define SIMNVML_MAGIC	0x314c4d564e4d4953ULL	/* "SIMNVML1" in memory order */
#define SIMNVML_VERSION	1
#define SIMNVML_SLOTS	65536		/* busy intervals kept, a power of two */
#define SIMNVML_PROCS	64		/* simcuda processes at once */

/* An interval is published when the device thread takes its op: after the
   op's start by a wake-up, taken to be this much at most.  Readers wait
   that long before a period is final, and rely on it to stop reading. */
#define SIMNVML_LAG_NS	20000000ULL

/* What kept the device busy.  Copies across PCIe say which way. */
enum simnvml_kind {
	SIMNVML_KERNEL = 1,
	SIMNVML_D2D = 2,		/* device to device copy, memset */
	SIMNVML_H2D = 3,		/* PCIe to the device (NVML's RX) */
	SIMNVML_D2H = 4,		/* PCIe from the device (NVML's TX) */
};

/* One busy interval on the device's timeline, CLOCK_MONOTONIC ns.  Valid
   while seq == its index + 1; 0 while a writer fills it. */
struct simnvml_slot {
	_Atomic uint64_t seq;
	_Atomic uint64_t start_ns, end_ns;
	_Atomic uint64_t bytes;			/* copies: bytes moved */
	_Atomic uint32_t pid;
	_Atomic uint32_t kind;			/* enum simnvml_kind */
};

/* A process of simcuda; pid 0: free.  A pid whose process died without
   clearing it (kill -9) is skipped by readers and taken by writers. */
struct simnvml_proc {
	_Atomic uint32_t pid;
	uint32_t pad;
	_Atomic uint64_t mem_bytes;		/* device memory it allocated */
};

struct simnvml_header {
	_Atomic uint64_t magic;			/* SIMNVML_MAGIC once the rest is set */
	uint32_t version;			/* SIMNVML_VERSION */
	uint32_t nslots;			/* SIMNVML_SLOTS */
	uint32_t nprocs;			/* SIMNVML_PROCS */
	uint32_t pad;
	uint64_t created_ns;			/* CLOCK_MONOTONIC: the "driver" loaded */
	_Atomic uint64_t total_bytes;		/* device memory, the last SIMCUDA_MEM_MB */
	_Atomic uint64_t head;			/* slots claimed, ever */
	_Atomic uint64_t max_op_ns;		/* the longest interval published */
};

/* The file, all of it: 2.5 MiB, mostly the ring. */
struct simnvml_state {
	struct simnvml_header h;
	struct simnvml_proc procs[SIMNVML_PROCS];
	struct simnvml_slot slots[SIMNVML_SLOTS];
};

/* simcuda's side: where its busy intervals go. */
struct simnvml_writer {
	struct simnvml_state *st;		/* NULL: no shared state */
	int proc;				/* its entry in st->procs; -1: none */
	pid_t pid;				/* the process that holds the entry */
	int log_fd;				/* SIMCUDA_BUSY_LOG; -1: none */
};

/* The state file's path into BUF: $SIMCUDA_NVML, else
   /dev/shm/simcuda-nvml.<uid>.  0, or -1 when it does not fit. */
int simnvml_state_path(char *buf, size_t size);

/* Maps the state file, creating and initialising it when needed, registers
   the calling process with MEM_BYTES of device memory, and opens
   SIMCUDA_BUSY_LOG.  Whatever fails is left off in silence: W then logs
   less (st NULL, or log_fd -1).  Changes the system: the file. */
void simnvml_writer_create(struct simnvml_writer *w, uint64_t mem_bytes);

/* Publishes one busy interval [START, END) of KIND, and its truth line. */
void simnvml_writer_busy(struct simnvml_writer *w, enum simnvml_kind kind, uint64_t start_ns,
			 uint64_t end_ns, uint64_t bytes);

/* The process's allocated device memory grows by DELTA (negative: shrinks). */
void simnvml_writer_mem(struct simnvml_writer *w, int64_t delta);

/* Clears the process's entry, when this process made it (not a forked
   child).  Safe to call twice. */
void simnvml_writer_destroy(struct simnvml_writer *w);

/* The state at PATH, mapped read-only: NULL with errno set when there is
   none (ENOENT), or it is not a state file of this version (EPROTO).  The
   caller unmaps it with simnvml_state_unmap(). */
const struct simnvml_state *simnvml_state_map(const char *path);
/* Creates the state at PATH when it is missing (the driver is loaded, no
   process has used the device yet), as simcuda would; quietly not when it
   cannot be, or is another user's. */
void simnvml_state_ensure(const char *path);
void simnvml_state_unmap(const struct simnvml_state *st);

/* Whether process PID still runs (kill(pid, 0) does not say ESRCH). */
int simnvml_pid_alive(uint32_t pid);

#endif
