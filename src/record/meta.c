// SPDX-License-Identifier: MIT
/*
 * What the recorder writes about the run beside its events: the metadata
 * (the command, the host, the clocks, what each probe costs), the probed
 * libraries, and the page-allocation counts read from the kernel at the end
 * (--page-allocs=count).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-version.h"
#include "ift-words.h"
#include "util/array.h"
#include "util/timing.h"
#include "record/recorder.h"

static char *shell_quote_argv(char *const *argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; argv && argv[i]; i++)
		len += 4 * strlen(argv[i]) + 3;
	s = p = malloc(len);
	if (!s)
		return NULL;
	*p = 0;
	for (int i = 0; argv && argv[i]; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyz"
					  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
					  "-_./=:,+%@") == strlen(a);

		if (i)
			*p++ = ' ';
		if (plain) {
			p = stpcpy(p, a);
			continue;
		}
		*p++ = '\'';
		for (; *a; a++) {
			if (*a == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *a;
		}
		*p++ = '\'';
	}
	*p = 0;
	return s;
}

int ift_rec_write_library(struct ift_writer *w, const struct ift_lib *l)
{
	struct ift_library lib = {
		.path = l->path, .build_id = l->build_id,
		.build_id_len = l->build_id_len, .dev = (uint64_t)l->dev,
		.ino = (uint64_t)l->ino, .functions = l->nsyms,
		.kind = ift_api_lib_kind(l->api),
	};

	return ift_writer_library(w, &lib);
}

/*
 * What a fresh page costs on this machine (sample/faultcost.c), measured
 * before the command starts and again after tracing stops: the analyzer
 * takes the larger, so load that came with the run is not missed.  Outside
 * tracing, so the recorder's own faults are not in the trace.  Advisory: a
 * failed measurement leaves the key out and the analyzer uses its default.
 */
void ift_rec_write_fault_cost(struct ift_writer *w, const char *key)
{
	uint64_t ns;

	if (!ift_fault_cost(&ns))
		ift_writer_metaf(w, key, "%" PRIu64, ns);
}

/* Isolated, the timed pair is armed as the traced tasks' probes are: perf
   events on this thread, into a ring of their own. */
struct traparm {
	struct ift_recorder *r;
	struct ift_perfring *p;
};

static int trap_arm(void *ctx, int entry_id, int ret_id)
{
	struct traparm *t = ctx;
	struct ift_perfring_opts po = { .ring_kb = 64, .mono = t->r->mono };
	int ret;

	if ((ret = ift_perfring_alloc(&po, &t->p)) < 0 ||
	    (ret = ift_perfring_add_event(t->p, entry_id)) < 0 ||
	    (ret = ift_perfring_add_event(t->p, ret_id)) < 0 ||
	    (ret = ift_perfring_attach(t->p, (pid_t)syscall(SYS_gettid), 0)) < 0) {
		ift_perfring_free(t->p);
		t->p = NULL;
		return ret;
	}
	return 0;
}

static void trap_disarm(void *ctx)
{
	struct traparm *t = ctx;

	ift_perfring_free(t->p);
	t->p = NULL;
}

/*
 * What a call's two probes cost its thread, armed the way this recording
 * arms them (a perf event's output costs more than a tracefs write: the
 * analyzer takes this out of the gaps); none where they cannot be timed.
 */
static void write_probe_cost(struct ift_recorder *r)
{
	struct traparm t = { r, NULL };
	const struct ift_trap_arm arm = { trap_arm, trap_disarm, &t };
	uint64_t ns;

	if (!ift_probe_trap_cost(r->probes, r->plan.isolate ? &arm : NULL, &ns))
		ift_writer_metaf(r->w, "host.probe_ns", "%" PRIu64, ns);
}

int ift_rec_write_metadata(struct ift_recorder *r)
{
	struct ift_writer *w = r->w;
	struct utsname u;
	char host[256] = "";
	char *cmd;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	ift_writer_meta(w, "tool.version", IFT_VERSION);
	if (r->opts.argv) {
		cmd = shell_quote_argv(r->opts.argv);
		if (!cmd)
			return -ENOMEM;
		ift_writer_meta(w, "cmdline", cmd);
		free(cmd);
	}
	/* one key, every pid: a key given twice keeps its last value */
	if (r->opts.npids) {
		/* "-2147483648 " at most a pid */
		char *pids = malloc(r->opts.npids * 12 + 1);
		size_t n = 0;

		if (!pids)
			return -ENOMEM;
		for (size_t i = 0; i < r->opts.npids; i++)
			n += (size_t)sprintf(pids + n, "%s%d", i ? " " : "", r->opts.pids[i]);
		ift_writer_meta(w, "record.pid", pids);
		free(pids);
	}
	if (r->opts.all)
		ift_writer_meta(w, "record.scope", "system");
	ift_writer_meta(w, "host.name", host);
	ift_writer_meta(w, "kernel.release", u.release);
	/* the machine the recorder was built for: the call arguments' ABI */
	ift_writer_meta(w, "host.arch", ift_arch_native->name);
	/* a page allocation's order counts these: 4 KiB, or 16 or 64 on arm64 */
	ift_writer_metaf(w, "host.page_size", "%ld", sysconf(_SC_PAGESIZE));
	ift_writer_metaf(w, "cpu.count", "%d", ift_ring_ncpus(r->ring));
	/* how the rings were read: in place, or spliced and copied once */
	ift_writer_meta(w, "ring.reader", ift_ring_mapped(r->ring) ? "mmap" : "splice");
	ift_rec_write_fault_cost(w, "host.page_fault_ns.start");
	write_probe_cost(r);
	ift_writer_meta(w, "clock.source", ift_probe_clock(r->probes));
	/* where the uprobes were armed: the traced tasks only, or every process */
	ift_writer_meta(w, "record.isolate", r->plan.isolate ? "1" : "0");
	/* rows: one per allocation; count: per thread, from the kernel, at the end */
	if (!r->opts.no_host)
		ift_writer_meta(w, "record.page_allocs", r->opts.page_count ? "count" : "rows");
	ift_writer_metaf(w, "clock.wall_offset_ns", "%" PRId64, ift_wall_offset_ns());
	ift_writer_meta(w, "record.filter", r->opts.all ? "none" :
			r->opts.user_filter ? "user-space" : "kernel");
	/* the recorder's own CPU time is the tracer's cost, not a cause */
	ift_writer_metaf(w, "recorder.pid", "%d", (int)getpid());
	for (size_t i = 0; i < r->libs.n; i++) {
		int ret = ift_rec_write_library(w, &r->libs.v[i]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* --page-allocs=count: the kernel's table, an entry per thread and order */
struct page_count {
	uint32_t tid;
	unsigned order;
	uint64_t hits;
};

struct page_counts {
	struct page_count *v;
	size_t n, cap;
};

static int on_page_count(void *ctx, uint32_t tid, unsigned order, uint64_t hits)
{
	struct page_counts *pc = ctx;

	if (ift_array_grow((void **)&pc->v, &pc->cap, pc->n + 1, sizeof(*pc->v)) < 0)
		return -ENOMEM;
	pc->v[pc->n++] = (struct page_count){ tid, order, hits };
	return 0;
}

static int cmp_page_count(const void *a, const void *b)
{
	const struct page_count *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * The counts as rows of `samples' at TS, two per traced thread that
 * allocated (kmem.page_allocs, kmem.page_alloc_bytes), with its process
 * and thread: what the report counts per thread instead of page_allocs
 * rows.  The table's overflow goes to the metadata, and so does a table
 * that cannot be read (the recording is kept without the counts).  0 or
 * the writer's error.
 */
int ift_rec_write_page_counts(struct ift_recorder *r, uint64_t ts)
{
	struct page_counts pc = { 0 };
	/* the bytes of an order: host.page_size's, as the reader counts them */
	uint64_t dropped, page = (uint64_t)sysconf(_SC_PAGESIZE);
	int64_t m_n, m_b;
	int ret;

	ret = ift_probe_page_counts(r->probes, on_page_count, &pc, &dropped);
	if (ret < 0) {
		free(pc.v);
		return ift_writer_metaf(r->w, "kmem.count_error", "%s", ift_strerror(ret));
	}
	qsort(pc.v, pc.n, sizeof(*pc.v), cmp_page_count);
	m_n = ift_writer_string(r->w, "kmem.page_allocs");
	m_b = ift_writer_string(r->w, "kmem.page_alloc_bytes");
	if (m_n < 0 || m_b < 0)
		ret = (int)(m_n < 0 ? m_n : m_b);
	for (size_t i = 0, j; ret >= 0 && i < pc.n; i = j) {
		uint64_t row[IFT_SM_NR] = { ts }, n = 0, bytes = 0;
		uint32_t tgid;

		for (j = i; j < pc.n && pc.v[j].tid == pc.v[i].tid; j++) {
			n += pc.v[j].hits;
			bytes += pc.v[j].hits * (page << pc.v[j].order);
		}
		if (!ift_decoder_traced(r->dec, pc.v[i].tid, &tgid))
			continue;
		row[IFT_C_PID] = tgid;
		row[IFT_C_TID] = pc.v[i].tid;
		row[IFT_SM_METRIC] = (uint64_t)m_n;
		row[IFT_SM_VALUE] = n;
		if ((ret = ift_writer_append(r->w, IFT_T_SAMPLES, row)) < 0)
			break;
		row[IFT_SM_METRIC] = (uint64_t)m_b;
		row[IFT_SM_VALUE] = bytes;
		ret = ift_writer_append(r->w, IFT_T_SAMPLES, row);
	}
	free(pc.v);
	if (ret >= 0)
		ift_writer_metaf(r->w, "kmem.count_dropped", "%" PRIu64, dropped);
	return ret;
}
