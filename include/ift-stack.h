/* SPDX-License-Identifier: MIT */
#ifndef IFT_STACK_H
#define IFT_STACK_H

/*
 * stack: the user stack at traced calls (record --stack).
 *
 * The uprobe entry events of the chosen ops are opened a second time, as
 * perf events on the traced tasks (no BPF): each hit copies the user
 * registers and the top of the user stack into a per-CPU perf ring, plus
 * the kernel's frame-pointer chain.  The recorder drains the rings, unwinds
 * each copy with libunwind's remote API over the ELF files' .eh_frame, turns
 * addresses into (file, offset) through the memory maps the same rings
 * report, and keeps each distinct call site once.  A call row gets the id of
 * the site its sample unwound to.  See docs/architecture.md.
 *
 * Nothing here prints or exits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-trace.h"

#define IFT_STACK_DEFAULT_BYTES	16384
#define IFT_STACK_MAX_BYTES	65528	/* the kernel's limit, 8-aligned */

struct ift_stack_opts {
	unsigned stack_bytes;	/* user stack copied per call; 0 = default */
	unsigned period;	/* one call in PERIOD per op and CPU; 0 = 1 */
	unsigned ring_kb;	/* perf ring per CPU; 0 = 16 MiB, 512 MiB in all at most */
	/* the mapped files are opened as this user ((uid_t)-1: as the recorder):
	   the traced user's, who could change what a mapped path leads to */
	uid_t read_uid;
	gid_t read_gid;
};

struct ift_stacks;

/*
 * ift_stacks_alloc - the state, with nothing opened yet.  Call sites go to
 * W as they are found.  The caller frees it with ift_stacks_free().
 */
int ift_stacks_alloc(const struct ift_stack_opts *opts, struct ift_writer *w,
		     struct ift_stacks **out);

/*
 * Samples the tracepoint TP_ID (a uprobe entry event) as op OP of `calls',
 * with the calling thread's Python frames when PY (record --py-stack).
 */
int ift_stacks_add_event(struct ift_stacks *s, int tp_id, uint64_t op, bool py);

/*
 * ift_stacks_add_profile - sample each traced task's stack every PERIOD_NS
 * of its CPU time (record --profile), with its Python frames when PY, as
 * rows of the `profile' table in time order.  At most once.
 */
int ift_stacks_add_profile(struct ift_stacks *s, uint64_t period_ns, bool py);

/*
 * ift_stacks_attach - open every added event on task PID on every CPU (PID
 * -1: every task), following the tasks it creates.  When MAPS, the task's
 * current memory maps are read from /proc (an existing process; a child
 * about to exec reports its maps as it maps them).  Changes the running
 * system: the perf events live until ift_stacks_free().
 */
int ift_stacks_attach(struct ift_stacks *s, pid_t pid, bool maps);

/*
 * ift_stacks_start - start the thread that copies what the rings hold into
 * memory as they fill, so that they never overflow while the caller
 * unwinds.  Without it, ift_stacks_poll() still reads the rings, only later.
 * ift_stacks_stop() ends it (ift_stacks_free() does too).
 */
int ift_stacks_start(struct ift_stacks *s);

/*
 * The recording's start: the profile's clocks run from their attach, in
 * the set-up, and their samples before FROM_NS are not the recording's
 * (no other event is): dropped.
 */
void ift_stacks_profile_from(struct ift_stacks *s, uint64_t from_ns);
void ift_stacks_stop(struct ift_stacks *s);

/*
 * ift_stacks_poll - take what the rings and the thread's queue hold: maps,
 * samples (unwound now).  A sample taken before the call is in the batch.
 * 0 or an error.
 */
int ift_stacks_poll(struct ift_stacks *s);

/*
 * ift_stacks_disable - stop taking samples (changes the running system:
 * every event, and the copies of it the traced tasks' children inherited,
 * is off).  What the rings hold stays for the next ift_stacks_poll().
 * NULL is fine.
 */
void ift_stacks_disable(struct ift_stacks *s);

/*
 * ift_stacks_settle - once S is disabled and polled for the last time:
 * the samples the kernel dropped and never told of (a ring full at the
 * last calls) are counted lost, from what the events counted themselves
 * (stats' FIRED; 0 where a count could not be read, the losses as told).
 */
void ift_stacks_settle(struct ift_stacks *s);

/*
 * ift_stacks_profile_flush - once S is disabled and polled for the last
 * time: write the profile rows still held for their order.
 */
int ift_stacks_profile_flush(struct ift_stacks *s);

/*
 * ift_stacks_match - set ROW[IFT_CALL_STACK] of a `calls' row (written in
 * time order) to the call site of its sample, when one was taken.
 */
int ift_stacks_match(struct ift_stacks *s, uint64_t *row);

struct ift_stack_stats {
	uint64_t samples;	/* stacks copied by the kernel and read */
	uint64_t lost;		/* samples the perf rings dropped */
	uint64_t fired;		/* calls the events saw (settled; period 1: samples + lost) */
	uint64_t sites;		/* distinct call sites */
	uint64_t matched;	/* calls given a site */
	uint64_t unmatched;	/* samples no call claimed */
	uint64_t fp_fallback;	/* sites from the frame-pointer chain */
	uint64_t unwind_ns;	/* recorder CPU time spent unwinding and naming */
	uint64_t py_read;	/* --py-stack: samples whose Python frames were read */
	uint64_t py_none;	/* samples of threads without Python frames */
	uint64_t py_failed;	/* reads that failed (the thread moved on, gone) */
	uint64_t py_in_flight;	/* calls given Python frames read while in flight */
	uint64_t py_late;	/* calls whose Python frames were read after they returned */
	uint64_t py_read_ns;	/* recorder CPU time spent reading them */
	/*
	 * From a sample's time to the end of its read (wake-up, queue and
	 * read): a call shorter than this gets no Python frames.  Median,
	 * 99th percentile (rounded up to 8 us) and maximum, in ns.
	 */
	uint64_t py_lag_p50_ns, py_lag_p99_ns, py_lag_max_ns;
	/* --profile: stacks sampled; in the kernel; with Python frames; those
	   that came after a later one was written (the rows are in time
	   order), and the rings dropped; those taken before the recording
	   began (during the set-up: not unwound, not counted as sampled) */
	uint64_t prof_samples, prof_kernel, prof_py, prof_late, prof_lost, prof_before;
	/* of those in the kernel, come in by an interrupt (or the softirqs on
	   its way out), a breakpoint trap (a uprobe's), a page fault and a
	   system call, as the kernel's call chain of each says; 0 when
	   KENTRY_ERR says why it could not */
	uint64_t prof_irq, prof_trap, prof_fault, prof_syscall;
	int kentry_err;		/* 0: /proc/kallsyms read; else a negative
				   errno, or -EPERM when it hides addresses */
	uint64_t rings;		/* perf rings mapped, one per CPU with events */
	uint64_t ring_bytes;	/* the data area of each */
};
void ift_stacks_stats(const struct ift_stacks *s, struct ift_stack_stats *st);

/* Closes the perf events and frees S (NULL is fine). */
void ift_stacks_free(struct ift_stacks *s);

/* ---- offline pieces, usable without perf (and by unit tests) ---------- */

struct ift_unwinder;

/* An unwinder with its own module cache; NULL with errno on failure. */
struct ift_unwinder *ift_unwinder_new(void);
void ift_unwinder_free(struct ift_unwinder *u);

/*
 * U opens the files it reads with the permissions of UID:GID (setfsuid),
 * not the recorder's: (uid_t)-1 or 0, as the recorder.
 */
void ift_unwinder_open_as(struct ift_unwinder *u, uid_t uid, gid_t gid);

/* Tells U that PID maps [START, END) of PATH at file offset PGOFF. */
int ift_unwinder_map(struct ift_unwinder *u, pid_t pid, uint64_t start,
		     uint64_t end, uint64_t pgoff, const char *path);
/* Reads /proc/PID/maps into U; 0 or a negative error. */
int ift_unwinder_read_maps(struct ift_unwinder *u, pid_t pid);
/* PID was created by a fork of PPID (copies its maps) or exec'ed (drops them). */
void ift_unwinder_fork(struct ift_unwinder *u, pid_t pid, pid_t ppid);
void ift_unwinder_exec(struct ift_unwinder *u, pid_t pid);

/*
 * ift_unwind - unwind the stack of PID from REGS (the user registers as perf
 * samples them on this machine: ift_arch_native's perf_regs_mask, in bit
 * order) and the copy STACK (LEN bytes from its sp) with the unwind tables of the mapped ELF
 * files.  Fills up to MAX addresses (the pc, then return addresses);
 * returns how many (at least 1).
 */
int ift_unwind(struct ift_unwinder *u, pid_t pid, const uint64_t *regs,
	       const void *stack, size_t len, uint64_t *ips, int max);
/*
 * The same, stopping at the first frame in a CPython interpreter's file
 * when TO_PYTHON (kept): for a stack whose Python frames were read, what
 * lies outside is the interpreter running them, out to main, and a deep
 * Python stack took 480 us a sample to unwind whole.
 */
int ift_unwind_to(struct ift_unwinder *u, pid_t pid, const uint64_t *regs,
		  const void *stack, size_t len, uint64_t *ips, int max, bool to_python);

/*
 * ift_unwinder_frame - name address IP of PID: its file and offset, symbol
 * (demangled), offset in it, flags.  RET_ADDR: IP is a return address (the
 * symbol is looked up at IP - 1).  Strings are owned by U.
 */
void ift_unwinder_frame(struct ift_unwinder *u, pid_t pid, uint64_t ip,
			bool ret_addr, struct ift_frame *f);

#endif
