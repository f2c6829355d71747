// SPDX-License-Identifier: MIT
/*
 * Roles from behaviour.  A task's role says what it did for a CUDA thread,
 * as the state machine saw it; its name only confirms:
 *
 *   cuda thread        the thread with the most CUDA time in its process;
 *   input worker       a thread of another traced process whose wake-ups
 *                      end the CUDA thread's blocked gaps (no call open):
 *                      a DataLoader or multiprocessing.Pool worker, named
 *                      pt_data_worker or python3 alike;
 *   input thread       a thread of the CUDA process that does the same
 *                      itself (an executor thread building batches);
 *   relay              a thread of the CUDA process that passes those
 *                      wake-ups on: woken by tasks of another traced
 *                      process, it then wakes the CUDA thread (Pool's
 *                      result handler reading the workers' pipe; not
 *                      a thread woken by the same writes beside one that
 *                      passed on more, as Pool's worker handler is);
 *   pin-memory thread  a relay that also allocates or registers pinned
 *                      host memory (cudaHostAlloc ...), as the DataLoader's
 *                      pin-memory thread does; pt_data_pin confirms.
 *
 * The wake-up is followed back when it happens: a relay's latest waker
 * from another process is at hand then, and a wake-up is credited to the
 * task that did the work (interval src_*), the relay named beside it
 * (relay_*).  The tallies are per CUDA-calling thread, by source and
 * relay, so memory is bounded by the tasks that fed it.
 *
 * The account (docs/report.md, Roles): per CUDA thread, a graph of who
 * ended its blocked gaps, weighed by the time ended and counted in gaps,
 * each edge on its source; shares are of what the program's own tasks
 * ended.  A feeder needs share and gaps (fed_enough).  Three wake-ups carry
 * no input and each rule tells one from a feeder's: a GIL hand-back by a
 * thread of the CUDA process (THREAD_MIN_PERMILLE; one feeder a gap of its
 * own threads), a poller woken by the same write as the reader (cowoke()),
 * a thread woken from outside once (xwokes).  One case runs the other way:
 * a batch builder that ended few waits, told by its CPU time
 * (assign_siblings(), assign_worker_siblings()).  Nothing else decides.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/array.h"

/* Distinct feeders kept per thread. */
#define MAX_FEEDS	1024
/* A feeder ends at least this share of the fed blocked time, and this many
   gaps or THREAD_MIN_PERMILLE of it: a task that woke the thread once by
   chance is none. */
#define FEED_MIN_PERMILLE	10
#define FEED_MIN_WAKEUPS	3
/* An input thread of the CUDA process, and a relay, end at least this
   share: a thread that hands the GIL back now and then (an mp.Queue feeder
   thread) ends 1-6%, seen with torch 1.13. */
#define THREAD_MIN_PERMILLE	50

/* EV's gaps are enough of the TOTAL fed time to make a feeder (or relay):
   a few, or one long one in a short run (the H200's 7 batches). */
static bool fed_enough(const struct ift_role_evidence *ev, uint64_t total)
{
	if (ev->ns * 1000 < total * FEED_MIN_PERMILLE)
		return false;
	return ev->wakeups >= FEED_MIN_WAKEUPS || ev->ns * 1000 >= total * THREAD_MIN_PERMILLE;
}

static int feed_add(struct az_thread *th, const struct az_by *by, uint64_t ns)
{
	struct az_feed *f = NULL;

	for (uint32_t i = 0; i < th->roles.nfeeds; i++)
		if (th->roles.feeds[i].src_tid == by->src_tid &&
		    th->roles.feeds[i].relay_tid == by->relay_tid) {
			f = &th->roles.feeds[i];
			break;
		}
	if (!f) {
		size_t cap = th->roles.capfeeds;

		if (th->roles.nfeeds == MAX_FEEDS)
			return 0;	/* a thread woken by a thousand tasks has no feeder */
		if (ift_array_grow((void **)&th->roles.feeds, &cap, th->roles.nfeeds + 1,
				   sizeof(*th->roles.feeds)) < 0)
			return -ENOMEM;
		th->roles.capfeeds = (uint32_t)cap;
		f = &th->roles.feeds[th->roles.nfeeds++];
		*f = (struct az_feed){ .src_tid = by->src_tid, .src_pid = by->src_pid,
				       .relay_tid = by->relay_tid, .relay_pid = by->relay_pid };
	}
	f->count++;
	f->ns += ns;
	return 0;
}

/*
 * W, of another process, wakes TH: when W woke another thread of TH's
 * process earlier in the same stint on its CPU, one write of W's woke both
 * (Pool's worker handler polls the workers' result pipe beside its result
 * handler, which reads it), and each counts the wake-up as shared.
 */
static void cowoke(struct ift_analysis *a, struct az_thread *w, struct az_thread *th)
{
	bool same = w->roles.xwake_tid && w->roles.xwake_tid != th->tid && w->roles.xwake_pid == th->pid &&
		    w->st == IFT_SCHED_RUNNING && w->roles.xwake_since == w->since;

	if (same) {
		struct az_thread *o = ift_az_thread_lookup(a, w->roles.xwake_tid);

		th->roles.cowokes++;
		th->roles.cowoke_tid = w->roles.xwake_tid;
		if (o && !w->roles.xwake_shared) {
			o->roles.cowokes++;
			o->roles.cowoke_tid = th->tid;
		}
	}
	w->roles.xwake_tid = th->tid;
	w->roles.xwake_pid = th->pid;
	w->roles.xwake_since = w->since;
	w->roles.xwake_shared = same;
}

int ift_az_roles_wake(struct ift_analysis *a, struct az_thread *th, uint64_t from,
		  uint64_t ts, struct az_by *by)
{
	struct az_thread *w = by->tid ? ift_az_thread_lookup(a, by->tid) : NULL;

	by->src_tid = by->tid;
	by->src_pid = by->pid;
	by->relay_tid = by->relay_pid = 0;
	/*
	 * A thread of TH's own process that was woken by a task of another
	 * process passes on what that task sent: a queue's handler reading
	 * the workers' pipe (it may have several results waiting, and pass
	 * them on without sleeping in between).  Its wake-ups by threads of
	 * its own process are the GIL or a lock handed over, and do not say
	 * where its input came from; one never woken from outside did the
	 * work itself.
	 */
	if (w && w != th && w->pid == th->pid && w->roles.xwoke_tid) {
		by->src_tid = w->roles.xwoke_tid;
		by->src_pid = w->roles.xwoke_pid;
		by->relay_tid = w->tid;
		by->relay_pid = w->pid;
	}
	/* a task outside the trace (khugepaged giving back the mmap lock a
	   fault waited for) passes on no input */
	if (by->tid && by->pid && th->pid && by->pid != th->pid &&
	    (!w || ift_az_thread_followed(a, w, ts))) {
		th->roles.xwoke_tid = by->tid;
		th->roles.xwoke_pid = by->pid;
		th->roles.xwokes++;
		if (w)
			cowoke(a, w, th);
	}
	if (!th->called || th->nopen || !by->src_tid || by->src_tid == th->tid || ts <= from)
		return 0;
	if (by->pid != th->pid)
		return feed_add(th, by, ift_overlap(from, ts, a->lo, a->hi));
	/*
	 * Woken by its own process (a relay too), one feeder a gap: the one
	 * behind its longest wait.  The others hand the GIL or a lock back in
	 * passing (a Python thread blocked again right after it was fed), not
	 * input.
	 */
	if (ift_overlap(from, ts, a->lo, a->hi) > th->roles.gap_ns) {
		th->roles.gap_ns = ift_overlap(from, ts, a->lo, a->hi);
		th->roles.gap_by = *by;
	}
	return 0;
}

int ift_az_roles_gap_end(struct az_thread *th)
{
	int ret = 0;

	if (th->roles.gap_ns)
		ret = feed_add(th, &th->roles.gap_by, th->roles.gap_ns);
	th->roles.gap_ns = 0;
	return ret;
}

/* ---- the roles, once the pass is over ------------------------------ */

static bool has_name(const struct ift_task *task, const char *name)
{
	for (unsigned i = 0; task && i < task->ncomms; i++)
		if (!strcmp(task->comms[i].comm, name))
			return true;
	return false;
}

static struct az_thread *thread_of(struct ift_analysis *a, uint32_t tid, uint32_t pid)
{
	struct az_thread *th = ift_az_thread_lookup(a, tid);

	return th && (!pid || !th->pid || th->pid == pid) ? th : NULL;
}

/* The traced process PID was forked from, when the trace saw the fork. */
static uint32_t forked_from(const struct ift_analysis *a, const struct az_thread *th)
{
	const struct ift_task *task = th->info.task;

	if (!task || !(task->flags & IFT_TASK_F_STARTED))
		task = ift_trace_task_find(a->t, th->pid, th->first_ts);
	return task && (task->flags & IFT_TASK_F_STARTED) ? task->ppid : 0;
}

/* A role for TH unless it has one; a CUDA thread keeps its own. */
static void role_set(struct az_thread *th, enum ift_role role,
		     const struct ift_role_evidence *ev)
{
	if (th->info.role)
		return;
	th->roles.ev = *ev;
	th->info.role = role;
	th->info.role_evidence = &th->roles.ev;
}

/* A feed's key: its relay (RELAY), or its source. */
static uint32_t feed_key(const struct az_feed *f, bool relay)
{
	return relay ? f->relay_tid : f->src_tid;
}

/* Feed I is the first of CT's with its key: each key is tallied once, there. */
static bool first_of(const struct az_thread *ct, uint32_t i, bool relay)
{
	for (uint32_t k = 0; k < i; k++)
		if (feed_key(&ct->roles.feeds[k], relay) == feed_key(&ct->roles.feeds[i], relay))
			return false;
	return true;
}

/*
 * Sums into EV CT's feeds with feed I's key (they all come at or after I):
 * wake-ups and time; for a relay, the process whose wake-ups it passed on
 * most (from_pid); for a source, those that came through a relay and the
 * relay most of them did (via_tid).
 */
static void tally(const struct az_thread *ct, uint32_t i, bool relay,
		  struct ift_role_evidence *ev)
{
	uint32_t key = feed_key(&ct->roles.feeds[i], relay);
	uint64_t best = 0;

	for (uint32_t k = i; k < ct->roles.nfeeds; k++) {
		const struct az_feed *g = &ct->roles.feeds[k];

		if (feed_key(g, relay) != key)
			continue;
		ev->wakeups += g->count;
		ev->ns += g->ns;
		if (!relay && g->relay_tid)
			ev->relayed_wakeups += g->count;
		if ((relay || g->relay_tid) && g->count > best) {
			best = g->count;
			if (relay)
				ev->from_pid = g->src_pid;
			else
				ev->via_tid = g->relay_tid;
		}
	}
}

/* The blocked time of CT's gaps that TID ended itself (as the source, not
   relayed). */
static uint64_t direct_ns(const struct az_thread *ct, uint32_t tid)
{
	uint64_t ns = 0;

	for (uint32_t i = 0; i < ct->roles.nfeeds; i++)
		if (ct->roles.feeds[i].src_tid == tid && !ct->roles.feeds[i].relay_tid)
			ns += ct->roles.feeds[i].ns;
	return ns;
}

/* The blocked time of CT's gaps that TID passed on (as the relay). */
static uint64_t relayed_ns(const struct az_thread *ct, uint32_t tid)
{
	uint64_t ns = 0;

	for (uint32_t i = 0; i < ct->roles.nfeeds; i++)
		if (ct->roles.feeds[i].relay_tid == tid)
			ns += ct->roles.feeds[i].ns;
	return ns;
}

/* The relays of CUDA thread CT: threads that passed on more of its feeding
   than they did themselves (by the blocked time ended: a relay also hands
   the GIL back to it, often and briefly). */
static void assign_relays(struct ift_analysis *a, struct az_thread *ct, uint64_t total)
{
	for (uint32_t i = 0; i < ct->roles.nfeeds; i++) {
		const struct az_feed *f = &ct->roles.feeds[i];
		struct ift_role_evidence ev = {
			.behaviour = "relayed", .cuda_tid = ct->tid, .cuda_pid = ct->pid,
		};
		struct az_thread *r;

		if (!f->relay_tid || !first_of(ct, i, true))
			continue;
		tally(ct, i, true, &ev);
		if (!fed_enough(&ev, total) || ev.ns < direct_ns(ct, f->relay_tid) ||
		    ev.ns * 1000 < total * THREAD_MIN_PERMILLE)
			continue;
		r = thread_of(a, f->relay_tid, f->relay_pid);
		/*
		 * A relay takes in from outside about as often as it passes on
		 * (a handler may pass on several results a wake-up); a thread
		 * woken from outside once, then handing the GIL back, is none.
		 */
		if (!r || r == ct || r->roles.xwokes * 2 < ev.wakeups)
			continue;
		/*
		 * Woken mostly beside another thread of its process, by the
		 * same writes, it is the reader only when it passed on more
		 * than that one: the other wakes the CUDA thread handing the
		 * GIL back (Pool's worker handler, 5-9% of the fed time).
		 */
		if (r->roles.cowokes * 2 >= r->roles.xwokes && relayed_ns(ct, r->roles.cowoke_tid) > ev.ns)
			continue;
		ev.calls = r->host_alloc_calls;
		if (has_name(r->info.task, "pt_data_pin"))
			ev.name = "pt_data_pin";
		role_set(r, r->host_alloc_calls ? IFT_ROLE_PIN_MEMORY : IFT_ROLE_RELAY, &ev);
	}
}

/* The task of CT's I-th feed when it is the first of its source's feeds
   (others add up with it): its thread, with what it fed in *EV; else NULL. */
static struct az_thread *feed_source(struct ift_analysis *a, struct az_thread *ct, uint32_t i,
				     struct ift_role_evidence *ev)
{
	struct az_thread *src;

	*ev = (struct ift_role_evidence){
		.behaviour = "fed", .cuda_tid = ct->tid, .cuda_pid = ct->pid,
	};
	if (!first_of(ct, i, false))
		return NULL;
	tally(ct, i, false, ev);
	src = thread_of(a, ct->roles.feeds[i].src_tid, ct->roles.feeds[i].src_pid);
	return src && src != ct && src->tid ? src : NULL;
}

/* The least on-CPU time of CT's input threads, or 0 when it has none. */
static uint64_t least_input_cpu(const struct ift_analysis *a, const struct az_thread *ct)
{
	uint64_t least = 0;

	for (size_t i = 0; i < a->nth; i++) {
		const struct az_thread *th = a->th[i];

		if (th->pid != ct->pid || th->info.role != IFT_ROLE_INPUT_THREAD ||
		    th->roles.ev.cuda_tid != ct->tid)
			continue;
		if (!least || th->info.sched.on_cpu_ns < least)
			least = th->info.sched.on_cpu_ns;
	}
	return least;
}

/*
 * A thread of CT's process that woke it a few times, under the shares
 * that make a feeder or an input thread, yet is on a CPU about as much as
 * CT's input threads are, is one of them: a pool's thread whose batches
 * were mostly taken while CT was not waiting, or ended waits others had
 * mostly ended (one executor of four ended 4.4%, in another run 0.8%, of
 * the waits in a 5.10 guest, on a CPU as long as the others).  A thread
 * that only hands the GIL back (an mp.Queue feeder thread) is on a CPU
 * little more than its wake-ups take, far under half of a batch builder's.
 */
static void assign_siblings(struct ift_analysis *a, struct az_thread *ct)
{
	uint64_t least = least_input_cpu(a, ct);

	for (uint32_t i = 0; least && i < ct->roles.nfeeds; i++) {
		struct ift_role_evidence ev;
		struct az_thread *src = feed_source(a, ct, i, &ev);

		if (!src || src->pid != ct->pid || src->info.role ||
		    ev.wakeups < FEED_MIN_WAKEUPS || src->info.sched.on_cpu_ns * 2 < least)
			continue;
		role_set(src, IFT_ROLE_INPUT_THREAD, &ev);
	}
}

/* The on-CPU time of every thread of process PID, and whether one is an input worker. */
static uint64_t process_cpu(const struct ift_analysis *a, uint32_t pid, bool *worker)
{
	uint64_t ns = 0;

	*worker = false;
	for (size_t i = 0; i < a->nth; i++) {
		const struct az_thread *th = a->th[i];

		if (th->pid != pid)
			continue;
		ns += th->info.sched.on_cpu_ns;
		if (th->info.role == IFT_ROLE_INPUT_WORKER)
			*worker = true;
	}
	return ns;
}

/*
 * The least on-CPU time, all its threads together, of a worker process of
 * CT forked by PARENT, or 0 when it has none.
 */
static uint64_t least_worker_cpu(struct ift_analysis *a, const struct az_thread *ct,
				 uint32_t parent)
{
	uint64_t least = 0;

	for (size_t i = 0; i < a->nth; i++) {
		const struct az_thread *th = a->th[i];
		uint64_t ns;
		bool worker;

		if (th->info.role != IFT_ROLE_INPUT_WORKER ||
		    th->roles.ev.cuda_tid != ct->tid || forked_from(a, th) != parent)
			continue;
		ns = process_cpu(a, th->pid, &worker);
		if (!least || ns < least)
			least = ns;
	}
	return least;
}

/*
 * The same for worker processes: a process forked by the parent of CT's
 * input workers, none of whose threads is one yet, that woke CT at all,
 * under the share or the count that makes a worker, yet is on a CPU (all
 * its threads) more than half as long as the least busy worker process, is
 * one of them (its batches were taken while CT was not waiting): its time
 * on a CPU says it builds batches, where a thread of CT's own process could
 * be handing the GIL back.  Seen in a 6.12 guest's t400: one worker of four
 * ended 0.13% of the waits, on a CPU as long as the others; in CI's t411
 * (persistent workers, beside another job) one ended 2 of them.  A child
 * that only wakes CT is none, and so is one more thread of a known worker.
 */
static void assign_worker_siblings(struct ift_analysis *a, struct az_thread *ct)
{
	for (uint32_t i = 0; i < ct->roles.nfeeds; i++) {
		struct ift_role_evidence ev;
		struct az_thread *src = feed_source(a, ct, i, &ev);
		uint64_t least, ns;
		bool worker;

		if (!src || src->pid == ct->pid || src->info.role || !ev.wakeups)
			continue;
		if (!(ev.forked_from = forked_from(a, src)))
			continue;
		ns = process_cpu(a, src->pid, &worker);
		least = least_worker_cpu(a, ct, ev.forked_from);
		if (worker || !least || ns * 2 < least)
			continue;
		if (has_name(src->info.task, "pt_data_worker"))
			ev.name = "pt_data_worker";
		role_set(src, IFT_ROLE_INPUT_WORKER, &ev);
	}
}

/* The feeders of CUDA thread CT: relays, then the sources over the floor. */
static void assign_feeders(struct ift_analysis *a, struct az_thread *ct)
{
	uint64_t total = 0, wakeups = 0, own = 0, traced = 0;

	for (uint32_t i = 0; i < ct->roles.nfeeds; i++) {
		const struct az_thread *src = ift_az_thread_lookup(a, ct->roles.feeds[i].src_tid);

		total += ct->roles.feeds[i].ns;
		wakeups += ct->roles.feeds[i].count;
		if (ct->roles.feeds[i].src_pid == ct->pid)
			own += ct->roles.feeds[i].ns;
		/* the machine's own threads (khugepaged giving back the mmap
		   lock) wake it too, and are no other process feeding it */
		if (src && src->followed)
			traced += ct->roles.feeds[i].ns;
	}
	if (!wakeups)
		return;
	/* a feeder's share is of what the program's own tasks fed: the
	   machine's threads are no candidates, and where they end most of
	   the waits (khugepaged under emulation) every share would shrink */
	if (traced)
		total = traced;
	assign_relays(a, ct, total);
	for (uint32_t i = 0; i < ct->roles.nfeeds; i++) {
		struct ift_role_evidence ev;
		struct az_thread *src = feed_source(a, ct, i, &ev);

		if (!src || !fed_enough(&ev, total))
			continue;
		if (src->pid == ct->pid) {
			/*
			 * One that only hands the GIL back now and then (a queue's
			 * feeder thread, a pool's maintenance thread) ends a few
			 * percent of the waits at most; and where other processes
			 * feed the CUDA thread more than its own threads do, those
			 * are the GIL going round, not input.
			 */
			if (ev.ns * 1000 < total * THREAD_MIN_PERMILLE || own * 2 < traced)
				continue;
			role_set(src, IFT_ROLE_INPUT_THREAD, &ev);
			continue;
		}
		ev.forked_from = forked_from(a, src);
		if (has_name(src->info.task, "pt_data_worker"))
			ev.name = "pt_data_worker";
		/* a process outside the trace (not followed) is no worker of it */
		if (!ev.forked_from && !a->all_followed && !src->execed &&
		    !(src->info.task && (src->info.task->flags & IFT_TASK_F_STARTED)))
			continue;
		role_set(src, IFT_ROLE_INPUT_WORKER, &ev);
	}
	if (own * 2 >= traced)
		assign_siblings(a, ct);
	assign_worker_siblings(a, ct);
}

const char *ift_role_name(enum ift_role role)
{
	static const char *const names[IFT_ROLE_NR] = {
		[IFT_ROLE_CUDA_THREAD] = "cuda thread",
		[IFT_ROLE_CUDA_PROCESS] = "cuda process",
		[IFT_ROLE_INPUT_WORKER] = "input worker",
		[IFT_ROLE_INPUT_THREAD] = "input thread",
		[IFT_ROLE_RELAY] = "relay",
		[IFT_ROLE_PIN_MEMORY] = "pin-memory thread",
	};

	return (unsigned)role < IFT_ROLE_NR ? names[role] : NULL;
}

int ift_az_roles_assign(struct ift_analysis *a)
{
	for (size_t i = 0; i < a->nth; i++) {
		struct az_thread *th = a->th[i];

		if (th->info.role == IFT_ROLE_CUDA_THREAD) {
			th->roles.ev = (struct ift_role_evidence){
				.behaviour = "cuda calls", .cuda_tid = th->tid,
				.cuda_pid = th->pid, .calls = th->cuda_calls_all,
			};
			th->info.role_evidence = &th->roles.ev;
		}
	}
	for (size_t i = 0; i < a->nth; i++) {
		struct az_thread *th = a->th[i];

		if (th->info.role == IFT_ROLE_CUDA_THREAD)
			assign_feeders(a, th);
	}
	/* a process whose threads feed is an input worker */
	for (size_t i = 0; i < a->nprocs; i++) {
		struct ift_process_info *p = &a->procs[i];

		for (size_t k = 0; k < p->nthreads && !p->role_evidence; k++) {
			const struct ift_thread_info *ti = p->threads[k];

			if (p->role == IFT_ROLE_CUDA_PROCESS) {
				if (ti->role == IFT_ROLE_CUDA_THREAD)
					p->role_evidence = ti->role_evidence;
			} else if (ti->role == IFT_ROLE_INPUT_WORKER) {
				p->role = ti->role;
				p->role_evidence = ti->role_evidence;
				break;
			}
		}
	}
	return 0;
}

void ift_az_roles_release(struct az_roles *r)
{
	free(r->feeds);
	r->feeds = NULL;
	r->nfeeds = r->capfeeds = 0;
}
