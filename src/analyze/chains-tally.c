// SPDX-License-Identifier: MIT
/*
 * The chains' small machinery: their memory, the tallies of peers (who took
 * a thread's time) and call sites, the system samples over a window, who
 * ran on the CPUs in a window, and the words for durations and sizes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "chains.h"
#include "util/array.h"

/* ---- memory --------------------------------------------------------- */

/* Zeroed memory that lives as long as the collector. */
void *ift_ch_alloc(struct ift_chains *c, size_t n, size_t size)
{
	void *p;

	if (ift_array_grow((void **)&c->blocks, &c->capblocks, c->nblocks + 1, sizeof(void *)) < 0)
		return NULL;
	p = calloc(n ? n : 1, size);
	if (p)
		c->blocks[c->nblocks++] = p;
	return p;
}

__attribute__((format(printf, 2, 3)))
const char *ift_ch_printf(struct ift_chains *c, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = ift_ch_alloc(c, (size_t)n + 1, 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

int ift_ch_peer_add(struct ch_peers *p, uint32_t tid, uint32_t pid, uint64_t ns,
		    uint64_t count)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].tid == tid)
			break;
	if (i == p->n) {
		if (p->n == MAX_PEERS) {
			/* the rest share the last slot: "others" */
			i = p->n - 1;
			p->v[i].tid = UINT32_MAX;
			p->v[i].pid = UINT32_MAX;
		} else {
			if (ift_array_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) < 0)
				return -ENOMEM;
			p->v[p->n++] = (struct ch_peer){ .tid = tid, .pid = pid };
		}
	}
	p->v[i].ns += ns;
	p->v[i].count += count;
	return 0;
}

int ift_ch_peers_merge(struct ch_peers *d, const struct ch_peers *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (ift_ch_peer_add(d, s->v[i].tid, s->v[i].pid, s->v[i].ns, s->v[i].count) < 0)
			return -ENOMEM;
	return 0;
}

static int cmp_site_id(const void *x, const void *y)
{
	const struct ch_site *p = x, *q = y;

	return (p->stack > q->stack) - (p->stack < q->stack);
}

/* One entry per site again: sorted by id, duplicates summed. */
void ift_ch_sites_compact(struct ch_sites *s)
{
	size_t n = 0;

	if (s->n < 2)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_site_id);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].stack == s->v[n].stack) {
			s->v[n].calls += s->v[i].calls;
			s->v[n].cost += s->v[i].cost;
		} else {
			s->v[++n] = s->v[i];
		}
	}
	s->n = n + 1;
}

/*
 * Counts CALLS costing COST from site STACK (0: the call has none, not
 * counted).  Appended, and compacted when full, so the tally holds at most
 * twice the distinct sites: calls of one site often come in runs.
 */
int ift_ch_site_add(struct ch_sites *s, uint64_t stack, uint64_t calls, uint64_t cost)
{
	if (!stack)
		return 0;
	if (s->n && s->v[s->n - 1].stack == stack) {
		s->v[s->n - 1].calls += calls;
		s->v[s->n - 1].cost += cost;
		return 0;
	}
	if (s->n == s->cap) {
		ift_ch_sites_compact(s);
		if ((!s->cap || s->n * 2 > s->cap) &&
		    ift_array_grow((void **)&s->v, &s->cap, s->cap * 2 + 1, sizeof(*s->v)) < 0)
			return -ENOMEM;
	}
	s->v[s->n++] = (struct ch_site){ stack, calls, cost };
	return 0;
}

int ift_ch_sites_merge(struct ch_sites *d, const struct ch_sites *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (ift_ch_site_add(d, s->v[i].stack, s->v[i].calls, s->v[i].cost) < 0)
			return -ENOMEM;
	return 0;
}

int ift_ch_cmp_peer(const void *x, const void *y)
{
	const struct ch_peer *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns < q->ns ? 1 : -1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

/*
 * A wait for a CPU behind the idle task is no contention: the latency of a
 * wake-up, or a switch-in the kernel did not write (some VMs' idle CPUs).
 * One behind the recorder is the tracer's own cost, not the workload's.
 */
bool ift_ch_excused(const struct ift_chains *c, uint32_t tid, uint32_t pid)
{
	return !tid || (c->recorder && pid == c->recorder);
}

/* ---- the calls, as they close ---------------------------------------- */

/* Index of the first sample at or after TS. */
static size_t sample_at(const struct ift_chains *c, uint64_t ts)
{
	size_t lo = 0, hi = c->a->nsmp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->a->smp[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void sys_sample(const struct ift_sys_sample *m, uint64_t n, struct sysavg *v)
{
	if (m->busy_permille >= 0) {
		v->busy_sum += (uint64_t)m->busy_permille * n;
		v->nbusy += n;
	}
	if (m->running >= 0) {
		v->run_sum += (uint64_t)m->running * n;
		v->nrun += n;
	}
}

/* The samples of [S, E] and the first after it (as ift_ch_sys_add()), of a call
   that closed now. */
int ift_ch_sys_defer(struct ift_chains *c, uint64_t s, uint64_t e, struct sysdefer *d)
{
	size_t i = sample_at(c, s);

	for (; i < c->a->nsmp && c->a->smp[i].ts < e; i++)
		sys_sample(&c->a->smp[i], 1, &d->v);
	if (d->npend && d->pend[d->npend - 1].idx == i) {
		d->pend[d->npend - 1].n++;
		return 0;
	}
	if (ift_array_grow((void **)&d->pend, &d->cap, d->npend + 1, sizeof(*d->pend)) < 0)
		return -ENOMEM;
	d->pend[d->npend++] = (struct ch_pend){ i, 1 };
	return 0;
}

/* The pass is over: the samples counted by index are all read. */
void ift_ch_sys_resolve(const struct ift_chains *c, struct sysdefer *d)
{
	for (size_t k = 0; k < d->npend; k++)
		if (d->pend[k].idx < c->a->nsmp)
			sys_sample(&c->a->smp[d->pend[k].idx], d->pend[k].n, &d->v);
	free(d->pend);
	d->pend = NULL;
	d->npend = d->cap = 0;
}

/* ---- who ran on the CPUs in a window -------------------------------- */

static struct usage_task *usage_task(struct usage *u, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].tid == tid)
			return &u->v[i];
	if (u->n == 4096 || ift_array_grow((void **)&u->v, &u->cap, u->n + 1, sizeof(*u->v)) < 0)
		return NULL;
	u->v[u->n] = (struct usage_task){ .tid = tid, .pid = pid };
	return &u->v[u->n++];
}

static void usage_credit(struct usage *u, uint32_t tid, uint32_t pid, uint64_t ns)
{
	struct usage_task *ut;

	u->known_ns += ns;
	if (!tid) {
		u->idle_ns += ns;
		return;
	}
	ut = usage_task(u, tid, pid);
	if (ut)
		ut->ns += ns;
}

/* The CPUs a window counts: those the trace says it has, else any. */
static bool win_cpu(const struct ift_chains *c, uint32_t cpu)
{
	unsigned n = ift_analysis_summary(c->a)->cpus;

	return cpu < c->ncpu && (!n || cpu < n);
}

/* W, empty, for [FROM, TO]; its buffer is kept. */
void ift_ch_win_open(struct ch_win *w, size_t seq, uint64_t from, uint64_t to)
{
	w->seq = seq;
	w->from = from;
	w->to = to;
	w->final = false;
	w->u.n = 0;
	w->u.idle_ns = w->u.known_ns = 0;
}

/* The switch R on CPU, before c->cpu[CPU] takes it in. */
void ift_ch_win_switch(const struct ift_chains *c, struct ch_win *w, uint32_t cpu,
		       const uint64_t *r)
{
	uint64_t ts = r[IFT_C_TS], since;
	uint32_t tid = (uint32_t)r[IFT_C_TID], pid = (uint32_t)r[IFT_C_PID];
	struct usage_task *ut;

	if (w->final || ts < w->from)
		return;
	if (ts > w->to) {
		/* every switch up to TO is in: the CPUs say who runs at TO */
		ift_ch_win_end(c, w);
		return;
	}
	if (!win_cpu(c, cpu))
		return;
	since = c->cpu[cpu].known ? c->cpu[cpu].since : 0;
	usage_credit(&w->u, tid, pid, ts - (since > w->from ? since : w->from));
	if (ift_task_state_runnable(r[IFT_SW_PREV_STATE]) && tid && (ut = usage_task(&w->u, tid, pid)))
		ut->preempted++;
}

/* The pass is at W's end, no switch after it in: each CPU that switched
   in the window ran what it switched in last up to TO. */
void ift_ch_win_end(const struct ift_chains *c, struct ch_win *w)
{
	if (w->final)
		return;
	for (uint32_t cpu = 0; cpu < c->ncpu; cpu++) {
		const struct ch_cpu *k = &c->cpu[cpu];

		if (win_cpu(c, cpu) && k->known && k->since >= w->from && k->since <= w->to)
			usage_credit(&w->u, k->tid, k->pid, w->to - k->since);
	}
	w->final = true;
}

static int cmp_usage(const void *x, const void *y)
{
	const struct usage_task *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns < q->ns ? 1 : -1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

/* D becomes a copy of S, most time first, for a worst window kept. */
int ift_ch_usage_keep(struct usage *d, const struct usage *s)
{
	if (ift_array_grow((void **)&d->v, &d->cap, s->n, sizeof(*d->v)) < 0)
		return -ENOMEM;
	if (s->n)
		memcpy(d->v, s->v, s->n * sizeof(*d->v));
	d->n = s->n;
	d->idle_ns = s->idle_ns;
	d->known_ns = s->known_ns;
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), cmp_usage);
	return 0;
}

/* ---- formatting ----------------------------------------------------- */

const char *ift_ch_dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, true);
}

const char *ift_ch_bytes_str(char *buf, size_t len, uint64_t b)
{
	if (b < (1ULL << 20))
		snprintf(buf, len, "%.1f KiB", (double)b / 1024);
	else if (b < (1ULL << 30))
		snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
	else
		snprintf(buf, len, "%.2f GiB", (double)b / (1 << 30));
	return buf;
}

unsigned ift_ch_permille(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)((part * 1000 + whole / 2) / whole) : 0;
}

/* The ops that wait for the device: time in them past the run-queue is the
   GPU's, not the host's. */
bool ift_ch_waits_for_device(const char *name)
{
	return strstr(name, "Synchronize") || strstr(name, "Synchronise") ||
	       !strcmp(name, "cudaStreamWaitEvent") || !strcmp(name, "cuStreamWaitEvent");
}

const char *ift_ch_op_name(const struct ift_chains *c, uint32_t op)
{
	const struct ift_op *o = ift_trace_op(c->t, op);

	return o ? o->name : "?";
}

void ift_ch_sys_add(const struct ift_chains *c, uint64_t s, uint64_t e, struct sysavg *v)
{
	for (size_t i = sample_at(c, s); i < c->a->nsmp; i++) {
		sys_sample(&c->a->smp[i], 1, v);
		if (c->a->smp[i].ts >= e)
			break;
	}
}
