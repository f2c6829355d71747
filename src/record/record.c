// SPDX-License-Identifier: MIT
/*
 * The recording: stages wired together.  See include/ift-record.h.
 *
 * Two threads: a reader thread empties every CPU's ring buffer in turn into
 * memory (spliced a page at a time, it keeps up with the rates uprobes can
 * produce: the trap costs ~1 us per probed call), and the main thread
 * decodes and writes the pages it queued.  Only that queue is shared, under
 * its lock; decoding and writing stay on one thread and need none.  With
 * the rings mapped (--reader, Linux 6.10) the main thread parses them in
 * place itself, and the reader thread reads only the perf rings, if any.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-decode.h"
#include "ift-perfring.h"
#include "ift-probe.h"
#include "ift-record.h"
#include "ift-ring.h"
#include "ift-sample.h"
#include "ift-stack.h"
#include "ift-words.h"
#include "ift-version.h"
#include "util/array.h"

#define SAMPLE_EVERY_NS		100000000ULL	/* /proc about ten times a second */
#define FLUSH_EVERY_NS		1000000000ULL	/* a crash loses at most a second */
#define IDLE_MARGIN_NS		20000000ULL	/* events reserved but not yet committed */
#define PAGES_PER_ROUND		256
#define RESCAN_EVERY_NS		1000000000ULL	/* libraries dlopen()ed while recording */
#define READER_NICE		(-10)
#define PARTIAL_EVERY_NS	50000000ULL	/* a partly filled page, at most this often */
#define IDLE_WAIT_MS		10	/* the reader's sleep when the rings gave nothing */
#define MAPPED_EVERY_NS		10000000ULL	/* a mapped ring, at least this often */
#define SPARE_PAGES		64	/* pages kept for the reader to reuse */
#define QUEUE_MAX_BYTES		(256ULL << 20)	/* pages read, waiting to be decoded */

/*
 * A page read from CPU's tracefs ring (SOURCE 0) and not yet decoded, or
 * records of its perf ring (SOURCE 1, --isolate) packed as struct
 * perfrec, or (len < 0) the note that the ring was empty at IDLE_TS:
 * nothing older can still come from it.
 */
struct qpage {
	struct qpage *next;
	int source, cpu, len;
	uint64_t idle_ts;
	unsigned char data[];
};

/* A perf ring's record in a qpage: its raw bytes follow, padded to 8. */
struct perfrec {
	uint64_t ts;
	uint32_t size;
	int32_t cpu;
};

/*
 * The reader thread empties the rings into memory and decodes nothing:
 * that is cheap (trace-cmd splices to files the same way), so the rings
 * stay empty even while the decoding, on the caller's thread, falls behind
 * a load that leaves it little CPU.  Pages and idle notes keep their order.
 */
struct pagequeue {
	pthread_mutex_t mu;
	pthread_cond_t more;
	struct qpage *head, *tail, *spare;
	size_t nspare;			/* at most SPARE_PAGES */
	uint64_t bytes, peak;		/* queued now, and at most */
	bool stop, running;
	int err;			/* the reader's error, once */
	pthread_t th;
};

struct ift_recorder {
	struct ift_record_opts opts;
	char step[4200];
	struct ift_libset libs;
	/* libraries found while recording, one set each: the probes keep
	   pointers into them, so they never move */
	struct ift_libset **late;
	size_t nlate, narmed;	/* libraries mapped while recording; those probed */
	struct ift_probe_session *probes;
	struct ift_writer *w;
	struct ift_decoder *dec;
	struct ift_ring *ring;
	struct ift_sampler *sampler;
	struct ift_stacks *stacks;	/* --stack, else NULL */
	struct ift_perfring *iso;	/* --isolate's uprobe events, else NULL */
	struct ift_tracefs_caps caps;	/* what the kernel offers */
	struct ift_record_plan plan;	/* and what this recording makes of it */
	bool mono;
	bool started;
	uint64_t start_ns, next_sample, next_flush, next_rescan;
	uint64_t unread;		/* left in the buffers after the last read */
	int nice;			/* this thread's before it read mapped rings,
					   INT_MIN when unchanged */
	struct pace {			/* mapped: when each CPU is read next */
		uint64_t due, last;	/* and when it was read to its end */
	} *pace;
	struct pagequeue q;
};

static int fail(struct ift_recorder *r, const char *step, int err)
{
	snprintf(r->step, sizeof(r->step), "%s", step);
	return err;
}

/* A signal asked to stop while setting up: give up before the next step. */
static bool stopping(const struct ift_recorder *r)
{
	return r->opts.stop && *r->opts.stop;
}

const char *ift_recorder_error(const struct ift_recorder *r)
{
	return r && r->step[0] ? r->step : "record";
}

const struct ift_libset *ift_recorder_libs(const struct ift_recorder *r)
{
	return &r->libs;
}

const struct ift_kfeature *ift_recorder_without(const struct ift_recorder *r, size_t i)
{
	return i < r->plan.nwithout ? r->plan.without[i] : NULL;
}

void ift_record_plan(const struct ift_record_opts *o, const struct ift_tracefs_caps *caps,
		     bool probes, struct ift_record_plan *p)
{
	const struct ift_kfeature *f;
	size_t n;

	memset(p, 0, sizeof(*p));
	p->run = IFT_KF_ALL | (o->all ? 0 : IFT_KF_PIDS) | (probes ? IFT_KF_UPROBES : 0) |
		 (o->no_host ? 0 : IFT_KF_HOST) | (o->stack ? IFT_KF_STACK : 0) |
		 (o->isolate && !o->all && probes ? IFT_KF_ISOLATE : 0) |
		 (o->page_count && !o->no_host ? IFT_KF_PAGE_COUNT : 0);
	p->refusal = ift_kfeature_refusal(caps, p->run);
	/*
	 * The kernel's pid filter needs set_event_pid, and event-fork to
	 * follow the children: without either, the user-space one (the same
	 * trace, more to read).
	 */
	p->user_filter = !o->all && (o->user_filter || !caps->set_event_pid ||
				     !caps->event_fork);
	/* the perf events carry the trace clock: without use_clockid, tracefs */
	p->isolate = (p->run & IFT_KF_ISOLATE) && caps->perf_clockid;
	f = ift_kfeatures(&n);
	for (size_t i = 0; i < n; i++)
		if (ift_kfeature_done_without(&f[i], caps, p->run) &&
		    p->nwithout < sizeof(p->without) / sizeof(p->without[0]))
			p->without[p->nwithout++] = &f[i];
}

int ift_record_probe_mapping(struct ift_tracefs_caps *caps)
{
	/* the smallest rings: only the mapping is tried, nothing traced */
	struct ift_probe_opts popts = { .buffer_kb = 4 };
	struct ift_probe_session *s;
	struct ift_ring *ring;
	int ret;

	caps->ring_mmap = caps->ring_mmap_tried = false;
	if (!caps->root || !caps->instances || !caps->pipe_raw)
		return -EPERM;
	if ((ret = ift_probe_session_create(&popts, &s)) < 0)
		return ret;
	ret = ift_ring_open(ift_probe_instance(s), true, &ring);
	if (!ret) {
		caps->ring_mmap = ift_ring_mapped(ring);
		caps->ring_mmap_tried = true;
		ift_ring_close(ring);
	}
	ift_probe_session_destroy(s);
	return ret;
}

/*
 * Plans the recording on what the kernel offers; refuses, naming the
 * feature and its release in check's words, when it lacks one needed.
 */
static int plan(struct ift_recorder *r, bool probes)
{
	char what[400];

	ift_record_plan(&r->opts, &r->caps, probes, &r->plan);
	if (!r->plan.refusal)
		return 0;
	ift_kfeature_str(r->plan.refusal, false, what, sizeof(what));
	snprintf(r->step, sizeof(r->step), "record on this kernel: %s", what);
	return -IFT_E_OLD_KERNEL;
}

/* Whether any library found has functions to probe. */
static bool libs_to_probe(const struct ift_recorder *r)
{
	for (size_t i = 0; i < r->libs.n; i++)
		if (r->libs.v[i].nsyms)
			return true;
	return false;
}

static int find_libs(struct ift_recorder *r)
{
	const struct ift_record_opts *o = &r->opts;
	struct ift_discover_opts d = {
		.argv = o->argv, .envp = o->envp, .pids = o->pids,
		.npids = o->npids, .all_procs = o->all, .run_as = o->run_as,
		.stop = o->stop,
	};
	int ret;

	if (o->ncuda_libs) {
		for (size_t i = 0; i < o->ncuda_libs; i++) {
			ret = ift_libset_add(&r->libs, o->cuda_libs[i], "cuda-lib");
			if (ret < 0) {
				snprintf(r->step, sizeof(r->step), "use '%s'",
					 o->cuda_libs[i]);
				return ret;
			}
			if (ret == 0 && r->libs.n <= i) {
				snprintf(r->step, sizeof(r->step), "use '%s'",
					 o->cuda_libs[i]);
				return -IFT_E_NOT_CUDA;
			}
		}
		return 0;
	}
	ret = ift_discover(&d, &r->libs);
	if (ret < 0)
		fail(r, "find the CUDA libraries", ret);
	return ret < 0 ? ret : 0;
}

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

static int write_library(struct ift_writer *w, const struct ift_lib *l)
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
static void write_fault_cost(struct ift_writer *w, const char *key)
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

static int write_metadata(struct ift_recorder *r)
{
	struct ift_writer *w = r->w;
	struct timespec rt, mt;
	struct utsname u;
	char host[256] = "";
	char *cmd;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
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
	write_fault_cost(w, "host.page_fault_ns.start");
	write_probe_cost(r);
	ift_writer_meta(w, "clock.source", ift_probe_clock(r->probes));
	/* where the uprobes were armed: the traced tasks only, or every process */
	ift_writer_meta(w, "record.isolate", r->plan.isolate ? "1" : "0");
	/* rows: one per allocation; count: per thread, from the kernel, at the end */
	if (!r->opts.no_host)
		ift_writer_meta(w, "record.page_allocs", r->opts.page_count ? "count" : "rows");
	ift_writer_metaf(w, "clock.wall_offset_ns", "%" PRId64,
			 ((int64_t)rt.tv_sec - (int64_t)mt.tv_sec) * (int64_t)1000000000 +
			 ((int64_t)rt.tv_nsec - (int64_t)mt.tv_nsec));
	ift_writer_meta(w, "record.filter", r->opts.all ? "none" :
			r->opts.user_filter ? "user-space" : "kernel");
	/* the recorder's own CPU time is the tracer's cost, not a cause */
	ift_writer_metaf(w, "recorder.pid", "%d", (int)getpid());
	for (size_t i = 0; i < r->libs.n; i++) {
		int ret = write_library(w, &r->libs.v[i]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

static int on_call(void *ctx, uint64_t *row)
{
	struct ift_recorder *r = ctx;

	return r->stacks ? ift_stacks_match(r->stacks, row) : 0;
}

/* The perf events of --stack: one per entry probe of a chosen op. */
static int stacks_setup(struct ift_recorder *r)
{
	const struct ift_record_opts *o = &r->opts;
	struct ift_stack_opts so = {
		.stack_bytes = o->stack_bytes, .period = o->stack_period,
		.read_uid = o->file_uid, .read_gid = o->file_gid,
	};
	size_t n = ift_probe_count(r->probes);
	int ret;

	if ((ret = ift_stacks_alloc(&so, r->w, &r->stacks)) < 0)
		return fail(r, "set up stack sampling", ret);
	for (size_t k = 0; k < o->nstack_ops; k++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (!strcmp(ift_probe_at(r->probes, i)->sym->name, o->stack_ops[k]))
				break;
		if (i == n) {
			snprintf(r->step, sizeof(r->step),
				 "take stacks at '%s': not a probed function", o->stack_ops[k]);
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct ift_probe *p = ift_probe_at(r->probes, i);
		bool want = !o->nstack_ops, py = o->py_stack && !o->npy_ops;

		for (size_t k = 0; k < o->nstack_ops && !want; k++)
			want = !strcmp(p->sym->name, o->stack_ops[k]);
		for (size_t k = 0; o->py_stack && k < o->npy_ops && !py; k++)
			py = !strcmp(p->sym->name, o->py_ops[k]);
		if (!want || p->entry_id < 0)
			continue;
		if ((ret = ift_probe_add_twin(r->probes, i)) < 0)
			return fail(r, "create the uprobes for stack sampling", ret);
		ret = ift_stacks_add_event(r->stacks, ret, ift_decoder_probe_op(r->dec, i), py);
		if (ret < 0)
			return fail(r, "set up stack sampling", ret);
	}
	return 0;
}

/* Adds the perf events (entry, return) of the probes the perf ring has not yet. */
static int isolate_add(struct ift_recorder *r)
{
	size_t n = ift_probe_count(r->probes);
	int ret;

	for (size_t i = ift_perfring_nevents(r->iso) / 2; i < n; i++) {
		const struct ift_probe *p = ift_probe_at(r->probes, i);

		if (p->entry_id < 0 || p->ret_id < 0)
			return -IFT_E_CORRUPT;
		if ((ret = ift_perfring_add_event(r->iso, p->entry_id)) < 0 ||
		    (ret = ift_perfring_add_event(r->iso, p->ret_id)) < 0)
			return ret;
	}
	return 0;
}

/* --isolate: the probes' events, to be opened on each traced task. */
static int isolate_setup(struct ift_recorder *r)
{
	struct ift_perfring_opts po = { .mono = r->mono };
	int ret;

	if ((ret = ift_perfring_alloc(&po, &r->iso)) < 0)
		return ret;
	return isolate_add(r);
}

int ift_recorder_create(const struct ift_record_opts *opts,
			struct ift_recorder **out)
{
	struct ift_probe_opts popts = { 0 };
	struct ift_decode_opts dopts = { 0 };
	struct ift_writer_opts wopts = { 0 };
	struct ift_recorder *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*out = r;
	r->opts = *opts;
	r->nice = INT_MIN;
	ift_libset_init(&r->libs);
	pthread_mutex_init(&r->q.mu, NULL);
	pthread_cond_init(&r->q.more, NULL);

	/* say it plainly before anything else fails for want of privileges */
	{
		const char *dir = ift_tracefs_dir();
		char path[4096];

		if (!dir)
			return fail(r, "find tracefs", errno == EACCES || errno == EPERM ?
				    -errno : -IFT_E_NO_TRACEFS);
		/* privileges first: to a user who cannot read tracefs every
		   feature looks missing */
		snprintf(path, sizeof(path), "%s/instances", dir);
		if (access(path, W_OK) < 0 && errno != ENOENT) {
			snprintf(r->step, sizeof(r->step), "write to tracefs at %s", dir);
			return -errno;
		}
		/* others' teardowns step aside from here to the probes armed */
		ift_probe_setup_begin();
		/* an old kernel: what it lacks, before any file is missed */
		if ((ret = ift_tracefs_probe_caps(&r->caps)) < 0)
			return fail(r, "read what the kernel offers", ret);
		if ((ret = plan(r, false)) < 0)
			return ret;
	}
	if ((ret = find_libs(r)) < 0)
		return ret;
	if (stopping(r))
		return fail(r, "set up", -EINTR);
	if ((ret = plan(r, libs_to_probe(r))) < 0)
		return ret;
	r->opts.user_filter = r->plan.user_filter;

	/*
	 * Runs killed with SIGKILL could not clean up after themselves.  An
	 * instance a live process still holds open is skipped (our name is
	 * our own): the command's caller says so.
	 */
	ret = ift_probe_cleanup_leftovers();
	if (ret < 0 && ret != -ENOENT)
		return fail(r, "remove what killed runs left in tracefs", ret);

	popts.buffer_kb = opts->buffer_kb;
	popts.host_events = !opts->no_host;
	popts.kernel_filter = !r->opts.user_filter && !opts->all;
	popts.all_tasks = opts->all || r->opts.user_filter;
	popts.perf_uprobes = r->plan.isolate;
	popts.page_count = opts->page_count && !opts->no_host;
	if ((ret = ift_probe_session_create(&popts, &r->probes)) < 0)
		return fail(r, "set up the tracefs instance", ret);
	r->mono = !strcmp(ift_probe_clock(r->probes), "mono");
	for (size_t i = 0; i < r->libs.n; i++) {
		if (stopping(r))
			return fail(r, "set up", -EINTR);
		if (!r->libs.v[i].nsyms)
			continue;
		ret = ift_probe_add_lib(r->probes, &r->libs.v[i]);
		if (ret < 0)
			return fail(r, "create the uprobes", ret);
	}

	if (stopping(r))
		return fail(r, "set up", -EINTR);
	/* given to the user through its descriptor: a path may have become a
	   link by the time a chown() by name would follow it */
	wopts.give = opts->file_uid != (uid_t)-1;
	/*
	 * A quarter of the writer's default chunk: its column buffers are most
	 * of the recorder's memory (tables x columns x rows x 8 bytes).  A
	 * page-allocation storm (fixtures/h200/loaderN.trace, 2.76M rows)
	 * came out 5% larger at 4,096 rows a chunk than at 16,384 (5.24 MB
	 * against 4.98 MB; with varint deltas, before KEYDELTA_PLANES, 0.8%).
	 * A recording cut short also loses less: the .part is readable up to
	 * its last complete chunk.
	 */
	wopts.chunk_rows = 4096;
	wopts.uid = opts->file_uid;
	wopts.gid = opts->file_gid;
	r->w = ift_writer_create(opts->output, &wopts);
	if (!r->w) {
		ret = -errno;
		/* what is at the output itself, or the .part beside it */
		if (ret == -IFT_E_NOT_FILE || ret == -EISDIR)
			snprintf(r->step, sizeof(r->step), "write '%s'", opts->output);
		else
			snprintf(r->step, sizeof(r->step), "create '%s%s'", opts->output,
				 IFT_PART_SUFFIX);
		return ret;
	}

	if ((ret = ift_ring_open(ift_probe_instance(r->probes),
				 opts->reader != IFT_READER_SPLICE, &r->ring)) < 0)
		return fail(r, "open the ring buffers", ret);
	if (opts->reader == IFT_READER_MMAP && !ift_ring_mapped(r->ring))
		return fail(r, "read the ring buffers in place (--reader=mmap): this kernel "
			    "maps no trace_pipe_raw (Linux 6.10 and later do)", -IFT_E_OLD_KERNEL);
	if (ift_ring_mapped(r->ring) &&
	    !(r->pace = calloc((size_t)ift_ring_ncpus(r->ring), sizeof(*r->pace))))
		return fail(r, "open the ring buffers", -ENOMEM);
	if ((ret = write_metadata(r)) < 0)
		return fail(r, "write the trace metadata", ret);

	dopts.tep = ift_probe_tep(r->probes);
	dopts.w = r->w;
	dopts.probes = r->probes;
	dopts.user_filter = r->opts.user_filter && !opts->all;
	dopts.on_call = on_call;
	dopts.on_call_ctx = r;
	if ((ret = ift_decoder_new(&dopts, &r->dec)) < 0)
		return fail(r, "read the event formats", ret);
	if (r->plan.isolate && (ret = isolate_setup(r)) < 0)
		return fail(r, "set up the isolated uprobe events", ret);
	if (opts->stack && (ret = stacks_setup(r)) < 0)
		return ret;
	if (opts->all && r->stacks && (ret = ift_stacks_attach(r->stacks, -1, false)) < 0)
		return fail(r, "open the stack sampling events", ret);
	for (size_t i = 0; i < opts->npids; i++)
		if ((ret = ift_recorder_add_pid(r, opts->pids[i])) < 0)
			return fail(r, "trace the given processes", ret);

	/* without /proc the recording still works, with no system context */
	r->sampler = ift_sampler_new();
	return 0;
}

/*
 * The threads PID has now, into *TIDS (the caller frees it) and *N.  0, or
 * -errno when /proc cannot list them (the process is gone, or no /proc).
 */
static int list_tids(pid_t pid, pid_t **tids, size_t *n)
{
	size_t cap = 0;
	struct dirent *de;
	char path[64];
	DIR *dir;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return -errno;
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (ift_array_grow((void **)tids, &cap, *n + 1, sizeof(**tids)) < 0) {
			closedir(dir);
			free(*tids);
			*tids = NULL;
			*n = 0;
			return -ENOMEM;
		}
		(*tids)[(*n)++] = tid;
	}
	closedir(dir);
	return 0;
}

int ift_recorder_add_pid(struct ift_recorder *r, pid_t pid)
{
	pid_t *tids;
	size_t n;
	int ret;

	if ((ret = ift_decoder_add_root(r->dec, pid)) < 0)
		return ret;
	/* the kernel filter takes tids: every thread the process has now */
	ret = list_tids(pid, &tids, &n);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		if (r->iso && (ret = ift_perfring_attach(r->iso, pid, 0)) < 0)
			return fail(r, "open the isolated uprobe events", ret);
		if (r->stacks && (ret = ift_stacks_attach(r->stacks, pid, true)) < 0)
			return fail(r, "open the stack sampling events", ret);
		return ift_probe_add_pids(r->probes, &pid, 1);
	}
	/*
	 * perf events are per thread: each one, following what it creates.
	 * The isolated uprobe events first: a uprobe calls its perf consumers
	 * newest first, so a stack sample is taken before its call's entry.
	 */
	for (size_t i = 0; r->iso && i < n; i++) {
		ret = ift_perfring_attach(r->iso, tids[i], 0);
		if (ret < 0 && ret != -ESRCH) {
			free(tids);
			return fail(r, "open the isolated uprobe events", ret);
		}
	}
	for (size_t i = 0; r->stacks && i < n; i++) {
		if ((ret = ift_stacks_attach(r->stacks, tids[i], i == 0)) < 0) {
			free(tids);
			return fail(r, "open the stack sampling events", ret);
		}
	}
	ret = n ? ift_probe_add_pids(r->probes, tids, n) :
		  ift_probe_add_pids(r->probes, &pid, 1);
	free(tids);
	return ret;
}

/*
 * A qpage for LEN bytes (a spare page when LEN fits one), once the decoder
 * is not far behind unless NOWAIT; NULL without memory.  Called on the
 * reader thread: only the queue's lock is shared.  NOWAIT while a perf
 * ring is read: its lock is held then, and the decoding thread, which
 * the wait is for, may be waiting for it to attach a new task.
 */
static struct qpage *q_get(struct ift_recorder *r, int len, bool nowait)
{
	struct pagequeue *q = &r->q;
	size_t psize = (size_t)ift_ring_page_size(r->ring);
	size_t size = len > 0 ? (size_t)len : 0;
	struct qpage *p = NULL;

	pthread_mutex_lock(&q->mu);
	/* a decoder far behind: stop reading, and let the kernel count the loss */
	while (!nowait && q->bytes > QUEUE_MAX_BYTES && !q->stop) {
		pthread_mutex_unlock(&q->mu);
		poll(NULL, 0, 1);
		pthread_mutex_lock(&q->mu);
	}
	if (size && size <= psize && q->spare) {
		p = q->spare;
		q->spare = p->next;
		q->nspare--;
	}
	pthread_mutex_unlock(&q->mu);
	if (!p)
		p = malloc(sizeof(*p) + (size && size < psize ? psize : size));
	return p;
}

/* Gives back P, unused or decoded: kept for the reader when spares are few. */
static void q_recycle(struct pagequeue *q, struct qpage *p)
{
	pthread_mutex_lock(&q->mu);
	if (q->nspare < SPARE_PAGES) {
		p->next = q->spare;
		q->spare = p;
		q->nspare++;
		p = NULL;
	}
	pthread_mutex_unlock(&q->mu);
	free(p);
}

/* Queues P, its SOURCE, CPU, LEN (< 0: an idle note) and IDLE_TS set. */
static void q_append(struct pagequeue *q, struct qpage *p, int source, int cpu, int len,
		     uint64_t idle_ts)
{
	p->next = NULL;
	p->source = source;
	p->cpu = cpu;
	p->len = len;
	p->idle_ts = idle_ts;
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
	q->bytes += sizeof(*p) + (len > 0 ? (size_t)len : 0);
	if (q->bytes > q->peak)
		q->peak = q->bytes;
	pthread_mutex_unlock(&q->mu);
}

/* An idle note: CPU's ring of SOURCE was empty at IDLE_TS. */
static int q_idle(struct ift_recorder *r, int source, int cpu, uint64_t idle_ts)
{
	struct qpage *p = q_get(r, -1, false);

	if (!p)
		return -ENOMEM;
	q_append(&r->q, p, source, cpu, -1, idle_ts);
	return 0;
}

/* The reader reads a tracefs page straight into a queued page: one copy. */
static void *q_buf(void *ctx, int cpu)
{
	struct ift_recorder *r = ctx;
	struct qpage *p = q_get(r, ift_ring_page_size(r->ring), false);

	(void)cpu;
	return p ? p->data : NULL;
}

static struct qpage *qpage_of(void *data)
{
	return (struct qpage *)(void *)((unsigned char *)data - offsetof(struct qpage, data));
}

static int q_page(void *ctx, int cpu, void *page, int len)
{
	struct ift_recorder *r = ctx;

	if (len > 0)
		q_append(&r->q, qpage_of(page), 0, cpu, len, 0);
	else
		q_recycle(&r->q, qpage_of(page));
	return 0;
}

/*
 * --isolate: a perf ring's records, packed as struct perfrec into a queued
 * page as the reader reads them.
 */
struct perfpack {
	struct ift_recorder *r;
	int cpu;
	size_t len, cap;
	struct qpage *p;
};

static void pack_flush(struct perfpack *pk)
{
	if (pk->p && pk->len)
		q_append(&pk->r->q, pk->p, 1, pk->cpu, (int)pk->len, 0);
	else if (pk->p)
		q_recycle(&pk->r->q, pk->p);
	pk->p = NULL;
	pk->len = 0;
}

static int pack_record(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	struct perfpack *pk = ctx;
	size_t need = sizeof(struct perfrec) + ((size + 7) & ~7U);
	struct perfrec h = { ts, size, cpu };

	if (need > pk->cap)
		return 0;	/* larger than a page: no uprobe record is */
	if (pk->len + need > pk->cap)
		pack_flush(pk);
	if (!pk->p && !(pk->p = q_get(pk->r, (int)pk->cap, true)))
		return -ENOMEM;
	memcpy(pk->p->data + pk->len, &h, sizeof(h));
	memcpy(pk->p->data + pk->len + sizeof(h), raw, size);
	pk->len += need;
	return 0;
}

/* Reads CPU's perf ring into the queue; the records read, or an error. */
static int perf_drain(struct ift_recorder *r, struct perfpack *pk, int cpu)
{
	int n;

	pk->cpu = cpu;
	n = ift_perfring_read(r->iso, cpu, pack_record, pk);
	pack_flush(pk);
	return n;
}

/*
 * --isolate: reads CPU's perf ring into the queue when the CPU's tracefs
 * ring gave pages this round (PAGES), when it is an eighth full, or when
 * LAST (when it was last read) is PARTIAL_EVERY_NS ago, and notes it empty
 * from then.  With the pages: the merge waits for the slowest queue of all,
 * and a perf ring read every 50 ms alone held a busy -p workload's pages
 * back that long (peak RSS 18 MiB against 11.6 through tracefs).  Its own
 * pace, not the tracefs ring's: a page storm keeps that one busy, and a
 * perf ring read only with partial tracefs pages went unread for the
 * storm, holding the merge back until its records came late.  Read at
 * every record, the reader never slept.  The records read, or an error.
 */
static int perf_round(struct ift_recorder *r, struct perfpack *pk, int cpu, uint64_t *last,
		      bool pages)
{
	uint64_t now = ift_now_ns();
	size_t size, used = ift_perfring_pending(r->iso, cpu, &size);
	int n;

	if (!pages && used < size / 8 && now - *last < PARTIAL_EVERY_NS)
		return 0;
	*last = now;
	n = perf_drain(r, pk, cpu);
	/* read to its head at NOW: nothing older can still come */
	if (n >= 0 && r->mono && now > IDLE_MARGIN_NS) {
		int ret = q_idle(r, 1, cpu, now - IDLE_MARGIN_NS);

		if (ret < 0)
			return ret;
	}
	return n;
}

/*
 * Waits up to IDLE_WAIT_MS for more: isolated, in poll() on the perf rings,
 * which the kernel wakes when one is an eighth full (a call loop fills a
 * ring faster than the tracefs rings' pages come); else a plain sleep.  A
 * ring that hung up (HUP[cpu]) is left to the timer from then on.
 */
static void reader_idle(struct ift_recorder *r, struct pollfd *pf, bool *hup)
{
	int n = r->iso ? ift_perfring_ncpus(r->iso) : 0;

	for (int c = 0; c < n; c++) {
		pf[c].fd = hup[c] ? -1 : ift_perfring_fd(r->iso, c);
		pf[c].events = POLLIN;
		pf[c].revents = 0;
	}
	if (poll(n ? pf : NULL, (nfds_t)n, IDLE_WAIT_MS) <= 0)
		return;
	for (int c = 0; c < n; c++)
		if (pf[c].revents & (POLLHUP | POLLERR | POLLNVAL))
			hup[c] = true;
}

static void *reader_main(void *arg)
{
	struct ift_recorder *r = arg;
	struct pagequeue *q = &r->q;
	int ncpus = ift_ring_ncpus(r->ring), ret = 0;
	uint64_t *last = calloc((size_t)ncpus, sizeof(*last));	/* a CPU's last read */
	struct perfpack pk = { r, 0, 0, (size_t)ift_ring_page_size(r->ring), NULL };
	uint64_t *plast = NULL;					/* its perf ring's */
	const struct ift_page_sink sink = { q_buf, q_page, r };
	bool mapped = ift_ring_mapped(r->ring);
	struct pollfd *pf = NULL;
	bool *hup = NULL;

	if (!last || (r->iso &&
		      (!(plast = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*plast))) ||
		       !(pf = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*pf))) ||
		       !(hup = calloc((size_t)ift_perfring_ncpus(r->iso), sizeof(*hup)))))) {
		ret = -ENOMEM;
		goto out;
	}

	/*
	 * It copies pages and nothing else, so it may jump the queue for a
	 * CPU: a load that keeps every CPU busy then still cannot fill a ring.
	 * Only this thread (Linux nice is per thread); root may, others not.
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE);
	for (;;) {
		int pages = 0;
		bool stop;

		pthread_mutex_lock(&q->mu);
		stop = q->stop;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			break;
		for (int cpu = 0; cpu < ncpus && ret >= 0; cpu++) {
			uint64_t before = ift_now_ns();
			/*
			 * The page still filling only now and then: this loop
			 * runs again as soon as any CPU had a full page, and a
			 * read of a few events each time cost more CPU per
			 * event than the decoding (contrib/bench/cost.sh).
			 */
			bool partial = before - last[cpu] >= PARTIAL_EVERY_NS;
			/* mapped rings are the decoding thread's to read */
			int n = mapped ? 0 : ift_ring_drain(r->ring, cpu, PAGES_PER_ROUND, partial,
							    &sink);

			if (n < 0) {
				ret = n;
				break;
			}
			pages += n;
			if (n > 0 || partial)
				last[cpu] = before;
			/* empty at BEFORE: nothing older than that can still come */
			if (!mapped && n == 0 && partial && r->mono && before > IDLE_MARGIN_NS)
				ret = q_idle(r, 0, cpu, before - IDLE_MARGIN_NS);
			if (r->iso && ret >= 0 && cpu < ift_perfring_ncpus(r->iso)) {
				n = perf_round(r, &pk, cpu, &plast[cpu], n > 0);
				if (n < 0) {
					ret = n;
					break;
				}
				pages += n > 0;
			}
		}
		if (ret < 0)
			break;
		if (!pages) {
			reader_idle(r, pf, hup);
			continue;
		}
		/* one wake-up a round, not a page: the decoder takes them all */
		pthread_mutex_lock(&q->mu);
		pthread_cond_signal(&q->more);
		pthread_mutex_unlock(&q->mu);
	}
out:
	free(last);
	free(plast);
	free(pf);
	free(hup);
	pthread_mutex_lock(&q->mu);
	if (ret < 0 && !q->err)
		q->err = ret;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static int reader_start(struct ift_recorder *r)
{
	sigset_t all, old;
	int ret;

	/* mapped rings and no perf rings: nothing for it to read */
	if (ift_ring_mapped(r->ring) && !r->iso)
		return 0;
	/* signals are the main thread's: it stops the run */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&r->q.th, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	r->q.running = true;
	return 0;
}

static void reader_stop(struct ift_recorder *r)
{
	if (!r->q.running)
		return;
	pthread_mutex_lock(&r->q.mu);
	r->q.stop = true;
	pthread_mutex_unlock(&r->q.mu);
	pthread_join(r->q.th, NULL);
	r->q.running = false;
}

/* The records perf_drain() packed into a page. */
static int decode_perfrecs(struct ift_recorder *r, const unsigned char *buf, size_t len)
{
	size_t at = 0;
	int ret;

	while (len - at >= sizeof(struct perfrec)) {
		struct perfrec h;

		memcpy(&h, buf + at, sizeof(h));
		at += sizeof(h);
		if (h.size > len - at)
			return -IFT_E_CORRUPT;
		ret = ift_decoder_record(r->dec, h.cpu, h.ts, buf + at, h.size);
		if (ret < 0)
			return ret;
		at += (h.size + 7) & ~7U;
	}
	return 0;
}

/*
 * Decodes what the reader queued, waiting up to TIMEOUT_MS for something
 * when nothing is; *PAGES counts the pages decoded.
 */
static int q_decode(struct ift_recorder *r, int timeout_ms, int *pages)
{
	struct pagequeue *q = &r->q;
	struct qpage *list, *p, *used = NULL;
	int ret = 0;

	*pages = 0;
	pthread_mutex_lock(&q->mu);
	if (!q->head && !q->err && q->running && timeout_ms > 0) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)timeout_ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&q->more, &q->mu, &until);
	}
	list = q->head;
	q->head = q->tail = NULL;
	q->bytes = 0;
	ret = q->err;
	pthread_mutex_unlock(&q->mu);
	/*
	 * The stack samples, after the pages are taken: a call these pages
	 * complete returned after its entry trap wrote its sample, so the
	 * sample is in the perf ring by now.
	 */
	if (ret >= 0 && r->stacks)
		ret = ift_stacks_poll(r->stacks);

	while ((p = list)) {
		list = p->next;
		if (ret >= 0) {
			if (p->len < 0) {
				ift_decoder_cpu_idle(r->dec, p->source, p->cpu, p->idle_ts);
			} else if (p->source) {
				ret = decode_perfrecs(r, p->data, (size_t)p->len);
				(*pages)++;
			} else {
				ret = ift_decoder_page(r->dec, p->cpu, p->data, p->len, 0);
				ret = ret < 0 ? ret : 0;
				(*pages)++;
			}
		}
		if (p->len >= 0 && p->len <= ift_ring_page_size(r->ring)) {
			p->next = used;
			used = p;
		} else {
			free(p);
		}
	}
	if (used) {
		/* back for the reader to fill again, a few: the rest is freed */
		pthread_mutex_lock(&q->mu);
		while (used && q->nspare < SPARE_PAGES) {
			p = used;
			used = p->next;
			p->next = q->spare;
			q->spare = p;
			q->nspare++;
		}
		pthread_mutex_unlock(&q->mu);
		while ((p = used)) {
			used = p->next;
			free(p);
		}
	}
	return ret;
}

static void q_free(struct pagequeue *q)
{
	struct qpage *p;

	while ((p = q->head)) {
		q->head = p->next;
		free(p);
	}
	while ((p = q->spare)) {
		q->spare = p->next;
		free(p);
	}
	q->tail = NULL;
}

int ift_recorder_start(struct ift_recorder *r)
{
	int ret = ift_probe_start(r->probes);

	if (ret < 0)
		return fail(r, "start tracing", ret);
	if ((ret = reader_start(r)) < 0)
		return fail(r, "start the ring-buffer reader", ret);
	/*
	 * Mapped, this thread reads the rings, and a ring is all the room its
	 * events have until then: it jumps the queue as the reader thread
	 * does (decoding and writing with it), until tracing stops.
	 */
	if (ift_ring_mapped(r->ring)) {
		errno = 0;
		r->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
		if (errno || setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE) < 0)
			r->nice = INT_MIN;
	}
	if (r->stacks && (ret = ift_stacks_start(r->stacks)) < 0)
		return fail(r, "start the stack reader", ret);
	r->started = true;
	r->start_ns = ift_now_ns();
	r->next_sample = r->start_ns;
	r->next_flush = r->start_ns + FLUSH_EVERY_NS;
	r->next_rescan = r->start_ns + RESCAN_EVERY_NS;
	ift_writer_metaf(r->w, "record.start_ns", "%" PRIu64, r->start_ns);
	return 0;
}

static int on_span(void *ctx, int cpu, const void *page, int len, int from)
{
	return ift_decoder_page(ctx, cpu, page, len, from);
}

static int on_perfrec(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	return ift_decoder_record(ctx, cpu, ts, raw, size);
}

struct sample_ctx {
	struct ift_writer *w;
	uint64_t ts;
};

static int on_sample(void *ctx, const char *metric, unsigned scope, int64_t value)
{
	struct sample_ctx *sc = ctx;
	uint64_t row[IFT_SM_NR] = { sc->ts };
	int64_t id = ift_writer_string(sc->w, metric);

	if (id < 0)
		return (int)id;
	row[IFT_SM_METRIC] = (uint64_t)id;
	row[IFT_SM_SCOPE] = scope;
	row[IFT_SM_VALUE] = (uint64_t)value;
	return ift_writer_append(sc->w, IFT_T_SAMPLES, row);
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
static int write_page_counts(struct ift_recorder *r, uint64_t ts)
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

static bool have_lib(const struct ift_recorder *r, const struct ift_lib *lib)
{
	for (size_t i = 0; i < r->libs.n; i++)
		if (r->libs.v[i].dev == lib->dev && r->libs.v[i].ino == lib->ino)
			return true;
	for (size_t k = 0; k < r->nlate; k++)
		if (r->late[k]->v[0].dev == lib->dev && r->late[k]->v[0].ino == lib->ino)
			return true;
	return false;
}

/*
 * --isolate: the events of probes added while recording, opened on every
 * thread of every traced process (the inherited events of the first ones
 * do not cover them).  Events x CPUs descriptors per thread: a library
 * loaded late in a process of many threads costs many.
 */
static int isolate_late(struct ift_recorder *r)
{
	size_t from = ift_perfring_nevents(r->iso), np;
	const pid_t *pids;
	int ret;

	if ((ret = isolate_add(r)) < 0)
		return ret;
	np = ift_decoder_processes(r->dec, &pids);
	for (size_t i = 0; i < np; i++) {
		pid_t *tids;
		size_t n;

		ret = list_tids(pids[i], &tids, &n);
		if (ret == -ENOMEM)
			return ret;
		/* a task gone meanwhile is no error */
		for (size_t k = 0; k < n && ret >= 0; k++)
			if ((ret = ift_perfring_attach(r->iso, tids[k], from)) == -ESRCH)
				ret = 0;
		free(tids);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Probes a CUDA library a traced process mapped after the recording began. */
static int probe_late(struct ift_recorder *r, struct ift_lib *lib)
{
	struct ift_libset *set, **v;
	char key[48];
	int ret;

	v = realloc(r->late, (r->nlate + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->late = v;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->v = malloc(sizeof(*set->v));
	if (!set->v) {
		free(set);
		return -ENOMEM;
	}
	/* take the library over from the scan's set */
	set->v[0] = *lib;
	set->n = set->cap = 1;
	memset(lib, 0, sizeof(*lib));
	r->late[r->nlate++] = set;
	set->v[0].found_by = "mapped while recording";
	if (!set->v[0].nsyms)
		return 0;
	ret = ift_probe_add_lib(r->probes, &set->v[0]);
	if (ret < 0)
		return ret;
	if ((ret = write_library(r->w, &set->v[0])) < 0)
		return ret;
	if ((ret = ift_decoder_sync_probes(r->dec, r->probes)) < 0)
		return ret;
	if (r->iso && (ret = isolate_late(r)) < 0)
		return ret;
	/* from here on every call of it is traced (isolated: armed in each
	   task CPU by CPU, so its first trap came before this) */
	snprintf(key, sizeof(key), "late.%zu.path", r->narmed);
	if ((ret = ift_writer_meta(r->w, key, set->v[0].path)) < 0)
		return ret;
	snprintf(key, sizeof(key), "late.%zu.armed_ns", r->narmed++);
	return ift_writer_metaf(r->w, key, "%" PRIu64, ift_now_ns());
}

static int rescan(struct ift_recorder *r)
{
	const pid_t *pids;
	size_t n = ift_decoder_processes(r->dec, &pids);
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		struct ift_libset found;

		ift_libset_init(&found);
		/* a process gone in between is not an error */
		if (ift_discover_maps(pids[i], &found) > 0)
			for (size_t k = 0; k < found.n && ret >= 0; k++)
				if (!have_lib(r, &found.v[k]))
					ret = probe_late(r, &found.v[k]);
		ift_libset_release(&found);
	}
	return ret;
}

/*
 * Mapped: parses what each CPU's ring holds where it lies, up to
 * PAGES_PER_ROUND pages, when the CPU is due, and notes it read to its end.
 * A CPU read to the page its writer is filling is due again when, at the
 * rate it was just written, a quarter of its ring has filled, and
 * MAPPED_EVERY_NS later at most: read again and again as it fills, that
 * page's lines bounce between the writer's CPU and ours (a probed call
 * cost 1.17-1.23x the spliced reader's overhead, which takes full pages
 * only, and 1.09-1.11x paced so: docs/benchmarks.md); the rest of
 * the ring is room for a recorder held off its CPU, and for a burst after
 * a quiet time, which MAPPED_EVERY_NS bounds (flat-out uprobes on a CPU
 * write some 50 MB/s here: half a MiB in that time).  The pages parsed,
 * or an error; *DUE gets the time the next CPU is due.
 */
static int read_mapped(struct ift_recorder *r, uint64_t *due)
{
	uint64_t quarter = ift_ring_cpu_bytes(r->ring) / 4;
	int pages = 0;

	*due = UINT64_MAX;
	for (int cpu = 0; cpu < ift_ring_ncpus(r->ring); cpu++) {
		struct pace *pc = &r->pace[cpu];
		uint64_t before = ift_now_ns(), bytes = 0, wait;
		int n;

		if (before < pc->due) {
			if (pc->due < *due)
				*due = pc->due;
			continue;
		}
		n = ift_ring_read_mapped(r->ring, cpu, PAGES_PER_ROUND, on_span, r->dec, &bytes);
		if (n < 0)
			return n;
		pages += n;
		if (n == PAGES_PER_ROUND) {
			pc->due = 0;	/* more waits: the next round */
			*due = 0;
			continue;
		}
		/* to its end at BEFORE: nothing older than that can still come */
		if (r->mono && before > IDLE_MARGIN_NS)
			ift_decoder_cpu_idle(r->dec, 0, cpu, before - IDLE_MARGIN_NS);
		/* the first time, the next round: its rate is not known yet */
		wait = pc->last ? MAPPED_EVERY_NS : 0;
		if (bytes && pc->last && before > pc->last &&
		    quarter * (before - pc->last) / bytes < wait)
			wait = quarter * (before - pc->last) / bytes;
		pc->last = before;
		pc->due = before + wait;
		if (pc->due < *due)
			*due = pc->due;
	}
	return pages;
}

int ift_recorder_poll(struct ift_recorder *r, int timeout_ms)
{
	uint64_t now;
	int ret, pages = 0;

	if (ift_ring_mapped(r->ring)) {
		uint64_t due, now0;

		if ((pages = read_mapped(r, &due)) < 0)
			return fail(r, "read the ring buffers", pages);
		/* no CPU had anything: wait, but not past the next one due */
		now0 = ift_now_ns();
		if (!pages && due != UINT64_MAX && due > now0 &&
		    (due - now0) / 1000000 < (uint64_t)timeout_ms)
			timeout_ms = (int)((due - now0 + 999999) / 1000000);
		/* and here when no thread fills a queue */
		if (!pages && !r->q.running && timeout_ms > 0)
			poll(NULL, 0, timeout_ms);
	}
	/* waits for the reader up to TIMEOUT_MS when it has nothing */
	if ((ret = q_decode(r, pages ? 0 : timeout_ms, &pages)) < 0)
		return fail(r, "read the ring buffers", ret);
	if ((ret = ift_decoder_advance(r->dec)) < 0)
		return fail(r, "decode the events", ret);
	now = ift_now_ns();
	if (r->sampler && now >= r->next_sample) {
		struct sample_ctx sc = { r->w, now };

		r->next_sample = now + SAMPLE_EVERY_NS;
		ret = ift_sampler_read(r->sampler, on_sample, &sc);
		if (ret < 0 && ret != -ENOENT)
			return fail(r, "sample /proc", ret);
	}
	/* a library mapped later is probed where the kernel can */
	if (now >= r->next_rescan && !r->opts.ncuda_libs &&
	    !ift_kfeature_refusal(&r->caps, IFT_KF_UPROBES)) {
		r->next_rescan = now + RESCAN_EVERY_NS;
		if ((ret = rescan(r)) < 0)
			return fail(r, "probe a library loaded while recording", ret);
	}
	if (now >= r->next_flush) {
		r->next_flush = now + FLUSH_EVERY_NS;
		if ((ret = ift_writer_flush(r->w)) < 0)
			return fail(r, "write the trace file", ret);
	}
	return 0;
}

/*
 * The events lost: the kernel's count of those it dropped and, once the
 * last page was read, those the buffers still hold (lost to the trace as
 * surely).  STORE, once then: the losses per CPU and what was left unread.
 */
static uint64_t lost_events(struct ift_recorder *r, bool store)
{
	uint64_t lost = 0, unread = 0;

	for (int cpu = 0; cpu < ift_ring_ncpus(r->ring); cpu++) {
		struct ift_loss l;

		if (ift_ring_stats(r->ring, cpu, &l) < 0)
			continue;
		lost += l.overrun + l.dropped;
		unread += l.unread;
		if (store)
			ift_writer_loss(r->w, &l);
	}
	if (store) {
		r->unread = unread;
		ift_writer_metaf(r->w, "ring.unread_events", "%" PRIu64, unread);
	}
	return lost + r->unread;
}

void ift_recorder_status(struct ift_recorder *r, struct ift_record_status *st)
{
	const struct ift_decode_stats *ds = ift_decoder_stats(r->dec);

	memset(st, 0, sizeof(*st));
	st->elapsed_ns = r->started ? ift_now_ns() - r->start_ns : 0;
	st->events = ds->events;
	st->lost = r->ring ? lost_events(r, false) : 0;
	if (st->lost < ds->missed)
		st->lost = ds->missed;
	if (r->iso) {
		struct ift_perfring_stats ps;

		ift_perfring_stats(r->iso, &ps);
		st->lost += ps.lost;
	}
	st->bytes = ift_writer_bytes(r->w);
	memcpy(st->rows, ds->rows, sizeof(st->rows));
	st->filtered = ds->filtered;
	st->unpaired_returns = ds->unpaired_returns;
	st->late = ds->late;
	st->late_max_ns = ds->late_max_ns;
	st->nest_closed = ds->nest_closed;
	if (r->stacks) {
		struct ift_stack_stats ss;

		ift_stacks_stats(r->stacks, &ss);
		st->stack_samples = ss.samples;
		st->stack_lost = ss.lost;
		st->stack_sites = ss.sites;
		st->stack_matched = ss.matched;
		st->stack_unwind_ns = ss.unwind_ns;
		st->py_in_flight = ss.py_in_flight;
		st->py_late = ss.py_late;
		st->py_read = ss.py_read;
		st->py_read_ns = ss.py_read_ns;
		st->py_lag_p50_ns = ss.py_lag_p50_ns;
		st->py_lag_p99_ns = ss.py_lag_p99_ns;
	}
}

int ift_recorder_finish(struct ift_recorder *r, int exit_status)
{
	uint64_t stop;
	int ret, pages;

	ift_probe_stop(r->probes);
	if (r->nice != INT_MIN)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), r->nice);
	r->nice = INT_MIN;
	if (r->iso)
		ift_perfring_disable(r->iso);
	/* no sample after this: the last poll (q_decode) takes them all */
	ift_stacks_disable(r->stacks);
	stop = ift_now_ns();
	write_fault_cost(r->w, "host.page_fault_ns.stop");
	/* what the reader queued, then what is left in the rings */
	reader_stop(r);
	if ((ret = q_decode(r, 0, &pages)) < 0)
		return fail(r, "read the ring buffers", ret);
	ret = ift_ring_flush(r->ring, on_span, r->dec);
	for (int cpu = 0; ret >= 0 && r->iso && cpu < ift_perfring_ncpus(r->iso); cpu++)
		ret = ift_perfring_read(r->iso, cpu, on_perfrec, r->dec);
	if (ret >= 0 && r->iso)
		ift_perfring_settle(r->iso);
	if (ret < 0)
		return fail(r, "read the ring buffers", ret);
	if ((ret = ift_decoder_finish(r->dec, stop)) < 0)
		return fail(r, "decode the events", ret);
	if (r->stacks)
		ift_stacks_settle(r->stacks);
	if (r->opts.page_count && (ret = write_page_counts(r, stop)) < 0)
		return fail(r, "read the page-allocation counts", ret);
	lost_events(r, true);
	{
		const struct ift_decode_stats *ds = ift_decoder_stats(r->dec);

		ift_writer_metaf(r->w, "decode.late", "%" PRIu64, ds->late);
		ift_writer_metaf(r->w, "decode.late_max_ns", "%" PRIu64, ds->late_max_ns);
		ift_writer_metaf(r->w, "decode.nest_closed", "%" PRIu64, ds->nest_closed);
	}
	ift_writer_metaf(r->w, "record.queue_peak_bytes", "%" PRIu64, r->q.peak);
	if (r->stacks) {
		struct ift_stack_stats ss;

		ift_stacks_stats(r->stacks, &ss);
		ift_writer_metaf(r->w, "stack.samples", "%" PRIu64, ss.samples);
		ift_writer_metaf(r->w, "stack.lost", "%" PRIu64, ss.lost);
		ift_writer_metaf(r->w, "stack.fired", "%" PRIu64, ss.fired);
		ift_writer_metaf(r->w, "stack.sites", "%" PRIu64, ss.sites);
		ift_writer_metaf(r->w, "stack.unmatched", "%" PRIu64,
				 ss.samples - ss.matched);
		ift_writer_metaf(r->w, "stack.bytes", "%u", r->opts.stack_bytes ?
				 r->opts.stack_bytes : IFT_STACK_DEFAULT_BYTES);
		ift_writer_metaf(r->w, "stack.period", "%u", r->opts.stack_period ?
				 r->opts.stack_period : 1);
		if (r->opts.py_stack) {
			ift_writer_metaf(r->w, "py.read", "%" PRIu64, ss.py_read);
			ift_writer_metaf(r->w, "py.in_flight", "%" PRIu64, ss.py_in_flight);
			ift_writer_metaf(r->w, "py.late", "%" PRIu64, ss.py_late);
			ift_writer_metaf(r->w, "py.none", "%" PRIu64, ss.py_none);
			ift_writer_metaf(r->w, "py.failed", "%" PRIu64, ss.py_failed);
			ift_writer_metaf(r->w, "py.read_ns", "%" PRIu64, ss.py_read_ns);
			ift_writer_metaf(r->w, "py.lag_p50_ns", "%" PRIu64, ss.py_lag_p50_ns);
			ift_writer_metaf(r->w, "py.lag_p99_ns", "%" PRIu64, ss.py_lag_p99_ns);
			ift_writer_metaf(r->w, "py.lag_max_ns", "%" PRIu64, ss.py_lag_max_ns);
		}
		ift_writer_metaf(r->w, "stack.rings", "%" PRIu64, ss.rings);
		ift_writer_metaf(r->w, "stack.ring_bytes", "%" PRIu64, ss.ring_bytes);
	}
	if (r->iso) {
		struct ift_perfring_stats ps;

		ift_perfring_stats(r->iso, &ps);
		ift_writer_metaf(r->w, "isolate.records", "%" PRIu64, ps.records);
		ift_writer_metaf(r->w, "isolate.lost", "%" PRIu64, ps.lost);
		ift_writer_metaf(r->w, "isolate.events_open", "%" PRIu64, ps.fds);
		ift_writer_metaf(r->w, "isolate.ring_bytes", "%" PRIu64, ps.ring_bytes);
	}
	ift_writer_metaf(r->w, "record.stop_ns", "%" PRIu64, stop);
	if (exit_status >= 0)
		ift_writer_metaf(r->w, "record.exit_status", "%d", exit_status);
	if ((ret = ift_writer_finish(r->w)) < 0)
		return fail(r, "finish the trace file", ret);
	return 0;
}

static pid_t destroy(struct ift_recorder *r, bool behind)
{
	pid_t helper = 0;
	int go = -1;

	reader_stop(r);
	if (behind) {
		/* our threads stopped before the fork, our descriptors kept:
		   the helper closes the last copies of the perf events */
		ift_stacks_stop(r->stacks);
		helper = ift_probe_session_hand_off(r->probes, &go);
		if (helper > 0)
			r->probes = NULL;
		else
			helper = 0;
	}
	/* the perf events first: they hold the uprobes too */
	ift_stacks_free(r->stacks);
	r->stacks = NULL;
	ift_perfring_free(r->iso);
	r->iso = NULL;
	q_free(&r->q);
	pthread_mutex_destroy(&r->q.mu);
	pthread_cond_destroy(&r->q.more);
	ift_ring_close(r->ring);
	free(r->pace);
	/* our copies are closed: the helper may go on */
	if (go >= 0)
		close(go);
	/* first what the system holds, then our memory */
	ift_probe_session_destroy(r->probes);
	ift_decoder_free(r->dec);
	ift_writer_free(r->w);
	ift_sampler_free(r->sampler);
	ift_libset_release(&r->libs);
	for (size_t k = 0; k < r->nlate; k++) {
		ift_libset_release(r->late[k]);
		free(r->late[k]);
	}
	free(r->late);
	free(r);
	return helper;
}

void ift_recorder_destroy(struct ift_recorder *r)
{
	if (r)
		destroy(r, false);
}

pid_t ift_recorder_destroy_behind(struct ift_recorder *r)
{
	return r ? destroy(r, true) : 0;
}
