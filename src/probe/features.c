// SPDX-License-Identifier: MIT
/*
 * The kernel features recording uses, each with the release of Linux that
 * brought it and what a recording does without it: one table that check
 * lists, record obeys and the README's "Kernels" section is written from.
 *
 * A release is the first mainline one whose source has the feature (see
 * the README for the trees read); distribution kernels may have it earlier
 * by a backport, which is why record decides by what the kernel's tracing
 * files show, never by its version number.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ift-probe.h"

#define CAP(field) offsetof(struct ift_tracefs_caps, field)

static const struct ift_kfeature features[] = {
	{ "tracefs", "tracefs", "4.1",
	  "the tracing files in a file system of their own",
	  "the same files in debugfs/tracing serve",
	  "none needed",
	  0, IFT_KF_ALL, CAP(tracefs) },
	{ "uprobes", "uprobes", "3.5",
	  "an entry probe (uprobe_events) on each traced CUDA function",
	  "no CUDA call can be traced: record refuses (with no CUDA library to probe it "
	  "records host events alone)",
	  "a kernel built with CONFIG_UPROBE_EVENTS=y",
	  IFT_KF_UPROBES, IFT_KF_UPROBES, CAP(uprobes) },
	{ "uretprobes", "uretprobes", "3.10",
	  "a return probe (r:) on each traced function, for when each call ends",
	  "no call has an end: record refuses",
	  "Linux 3.10 or later, with CONFIG_UPROBE_EVENTS=y",
	  IFT_KF_UPROBES, IFT_KF_UPROBES, CAP(uretprobes) },
	{ "fetch_args", "uprobe fetch-args", "3.14",
	  "$retval and +offs(%reg), for return codes and arguments on the stack or in a "
	  "struct (cudaLaunchKernel's stream)",
	  "uprobes fetch registers only: record refuses rather than lose return codes and "
	  "streams",
	  "Linux 3.14 or later",
	  IFT_KF_UPROBES, IFT_KF_UPROBES, CAP(fetch_args) },
	{ "instances", "instances", "3.10",
	  "a ring buffer, trace clock and pid filter of the run's own; nothing global changes",
	  "only the system's one buffer, which other tools share: record refuses",
	  "Linux 3.10 or later",
	  IFT_KF_ALL, IFT_KF_ALL, CAP(instances) },
	{ "trace_pipe_raw", "trace_pipe_raw", "2.6.30",
	  "per-CPU ring pages, spliced out without a copy",
	  "nothing to read the events from: record refuses",
	  "a kernel with CONFIG_FTRACE",
	  IFT_KF_ALL, IFT_KF_ALL, CAP(pipe_raw) },
	{ "set_event_pid", "set_event_pid", "4.4",
	  "the kernel keeps the traced tasks' events only",
	  "every task's events are read and the user-space filter drops the others' "
	  "(the same trace, more to read)",
	  "none needed, it only costs more",
	  0, IFT_KF_PIDS, CAP(set_event_pid) },
	{ "event_fork", "event-fork", "4.7",
	  "the kernel's pid filter follows the traced tasks' children",
	  "set_event_pid would miss the children: the user-space filter follows them "
	  "(the same trace, more to read)",
	  "none needed, it only costs more",
	  0, IFT_KF_PIDS, CAP(event_fork) },
	{ "mono_clock", "mono clock", "3.17",
	  "event times on CLOCK_MONOTONIC, the clock of /proc samples and --stack's samples",
	  "the local clock (sched_clock): /proc samples and wall-clock times line up with "
	  "events only roughly, and --stack refuses",
	  "Linux 3.17 or later",
	  IFT_KF_STACK, IFT_KF_ALL, CAP(mono_clock) },
	{ "sched_events", "sched tracepoints", "3.4",
	  "sched_switch, sched_wakeup(_new) and sched_process_fork/exec/exit, for "
	  "off-CPU time, wake-ups and the process tree",
	  "no host evidence: record refuses unless --no-host (CUDA calls alone)",
	  "a kernel with CONFIG_TRACEPOINTS",
	  IFT_KF_HOST, IFT_KF_HOST, CAP(sched_events) },
	{ "sched_waking", "sched_waking", "4.3",
	  "the waker of each wake-up, in the waker's own context",
	  "sched_wakeup alone: a wake-up queued to another CPU is seen from that CPU's "
	  "interrupt, with no waker",
	  "Linux 4.3 or later",
	  0, IFT_KF_HOST, CAP(sched_waking) },
	{ "task_newtask", "task_newtask", "3.3",
	  "clone flags, which tell a new thread from a new process",
	  "threads are told from processes by /proc, which misses the short-lived",
	  "Linux 3.3 or later",
	  0, IFT_KF_HOST, CAP(task_events) },
	{ "kmem_events", "kmem:mm_page_alloc", "2.6.32",
	  "page allocations, for memory-pressure causes",
	  "no page allocations: page-fault storms go unseen",
	  "a kernel with CONFIG_TRACEPOINTS",
	  0, IFT_KF_HOST, CAP(kmem_events) },
	{ "hist_triggers", "hist triggers", "4.7",
	  "--page-allocs=count: page allocations counted per thread in the kernel, "
	  "none written to the rings",
	  "--page-allocs=count refuses (by default every allocation is a row, as "
	  "without the option)",
	  "a kernel with CONFIG_HIST_TRIGGERS=y",
	  IFT_KF_PAGE_COUNT, IFT_KF_PAGE_COUNT, CAP(hist_triggers) },
	{ "perf_clockid", "perf use_clockid", "4.1",
	  "--stack's and --profile's samples and --isolate's uprobe events on the trace clock",
	  "--stack refuses; --profile is off; --isolate arms the uprobes in every process, "
	  "as without it (seen as tracefs, which came in the same release)",
	  "Linux 4.1 or later",
	  IFT_KF_STACK, IFT_KF_STACK | IFT_KF_ISOLATE | IFT_KF_PROFILE, CAP(perf_clockid) },
	/* no recording needs or uses it unasked: --reader=mmap refuses and
	   auto splices by what the mapping itself does, not by this table */
	{ "ring_mmap", "mapped rings", "6.10",
	  "--reader=mmap|auto parses each CPU's ring where it lies (mmap of trace_pipe_raw), "
	  "no copy",
	  "the rings are spliced, the default, for the same trace; --reader=mmap refuses",
	  "Linux 6.10 or later, for --reader=mmap only",
	  0, 0, CAP(ring_mmap) },
};

const struct ift_kfeature *ift_kfeatures(size_t *n)
{
	*n = sizeof(features) / sizeof(features[0]);
	return features;
}

const struct ift_kfeature *ift_kfeature_find(const char *id)
{
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (!strcmp(features[i].id, id))
			return &features[i];
	return NULL;
}

bool ift_kfeature_have(const struct ift_kfeature *f, const struct ift_tracefs_caps *caps)
{
	return *(const bool *)((const char *)caps + f->cap);
}

void ift_kfeature_str(const struct ift_kfeature *f, bool have, char *buf, size_t len)
{
	if (have)
		snprintf(buf, len, "%s: %s", f->name, f->use);
	else
		snprintf(buf, len, "%s: none; Linux %s brought it; %s", f->name, f->since,
			 f->without);
}

const struct ift_kfeature *ift_kfeature_refusal(const struct ift_tracefs_caps *caps,
						unsigned run)
{
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if ((features[i].needs & run) && !ift_kfeature_have(&features[i], caps))
			return &features[i];
	return NULL;
}

bool ift_kfeature_done_without(const struct ift_kfeature *f,
			       const struct ift_tracefs_caps *caps, unsigned run)
{
	return !(f->needs & run) && (f->uses & run) && !ift_kfeature_have(f, caps);
}
