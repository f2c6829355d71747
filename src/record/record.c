// SPDX-License-Identifier: MIT
/*
 * The recording: stages wired together.  See include/ift-record.h; its
 * other files are listed in recorder.h.
 *
 * Two threads: a reader thread (ift-ringq.h) empties every CPU's ring
 * buffer in turn into memory (spliced a page at a time, it keeps up with
 * the rates uprobes can produce: the trap costs ~1 us per probed call),
 * and the main thread decodes and writes the pages it queued.  Only that
 * queue is shared, under its lock; decoding and writing stay on one thread
 * and need none.  With the rings mapped (--reader, Linux 6.10) the main
 * thread parses them in place itself, and the reader thread reads only the
 * perf rings, if any.
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
#include "record/recorder.h"

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
		 (o->page_count && !o->no_host ? IFT_KF_PAGE_COUNT : 0) |
		 (o->profile_hz && !o->all ? IFT_KF_PROFILE : 0);
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
	if ((p->run & IFT_KF_PROFILE) && caps->perf_clockid && caps->mono_clock)
		p->profile_hz = o->profile_hz;
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

static int on_call(void *ctx, uint64_t *row)
{
	struct ift_recorder *r = ctx;

	ift_rec_pieces_call(r, row);
	return r->stacks ? ift_stacks_match(r->stacks, row) : 0;
}

/* The perf events of --stack: one per entry probe of a chosen op. */
static int stack_events(struct ift_recorder *r)
{
	const struct ift_record_opts *o = &r->opts;
	size_t n = ift_probe_count(r->probes);
	int ret;

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

/*
 * The stack stage: --stack's events, and --profile's clock, which samples
 * each traced task with its Python frames (a thread without any costs one
 * failed lookup of its interpreter, once per process).
 */
static int stacks_setup(struct ift_recorder *r)
{
	const struct ift_record_opts *o = &r->opts;
	struct ift_stack_opts so = {
		.stack_bytes = o->stack_bytes, .period = o->stack_period,
		.read_uid = o->file_uid, .read_gid = o->file_gid,
	};
	int ret;

	if ((ret = ift_stacks_alloc(&so, r->w, &r->stacks)) < 0)
		return fail(r, "set up stack sampling", ret);
	if (o->stack && (ret = stack_events(r)) < 0)
		return ret;
	if (r->plan.profile_hz &&
	    (ret = ift_stacks_add_profile(r->stacks, 1000000000ULL / r->plan.profile_hz,
					  true)) < 0)
		return fail(r, "set up the profile", ret);
	return 0;
}

/* --isolate: the probes' events, to be opened on each traced task. */
static int isolate_setup(struct ift_recorder *r)
{
	struct ift_perfring_opts po = { .mono = r->mono };
	int ret;

	if ((ret = ift_perfring_alloc(&po, &r->iso)) < 0)
		return ret;
	return ift_rec_isolate_add(r);
}

/*
 * Tracefs, and what the kernel offers: said plainly before anything else
 * fails for want of privileges (to a user who cannot read tracefs every
 * feature looks missing), and before any file is missed on an old kernel.
 */
static int check_tracefs(struct ift_recorder *r)
{
	const char *dir = ift_tracefs_dir();
	char path[4096];
	int ret;

	if (!dir)
		return fail(r, "find tracefs", errno == EACCES || errno == EPERM ?
			    -errno : -IFT_E_NO_TRACEFS);
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK) < 0 && errno != ENOENT) {
		snprintf(r->step, sizeof(r->step), "write to tracefs at %s", dir);
		return -errno;
	}
	/* others' teardowns step aside from here to the probes armed */
	ift_probe_setup_begin();
	if ((ret = ift_tracefs_probe_caps(&r->caps)) < 0)
		return fail(r, "read what the kernel offers", ret);
	return plan(r, false);
}

/* The trace file, made as the user who ran record through sudo would make it. */
static int open_writer(struct ift_recorder *r)
{
	struct ift_writer_opts wopts = { 0 };
	const char *path;
	int ret;

	/* given to the user through its descriptor: a path may have become a
	   link by the time a chown() by name would follow it */
	wopts.give = r->opts.file_uid != (uid_t)-1;
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
	wopts.uid = r->opts.file_uid;
	wopts.gid = r->opts.file_gid;
	path = ift_rec_first_path(r);
	r->wopts = wopts;
	r->w = ift_writer_create(path, &wopts);
	if (!r->w) {
		ret = -errno;
		/* what is at the output itself, or the .part beside it */
		if (ret == -IFT_E_NOT_FILE || ret == -EISDIR)
			snprintf(r->step, sizeof(r->step), "write '%s'", path);
		else
			snprintf(r->step, sizeof(r->step), "create '%s%s'", path,
				 IFT_PART_SUFFIX);
		return ret;
	}
	return ift_rec_pieces_meta(r);
}

int ift_recorder_create(const struct ift_record_opts *opts,
			struct ift_recorder **out)
{
	struct ift_probe_opts popts = { 0 };
	struct ift_decode_opts dopts = { 0 };
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
	ift_rec_gpu_open_self(r);

	if ((ret = check_tracefs(r)) < 0)
		return ret;
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
	if ((ret = open_writer(r)) < 0)
		return ret;
	if ((ret = ift_ring_open(ift_probe_instance(r->probes),
				 opts->reader != IFT_READER_SPLICE, &r->ring)) < 0)
		return fail(r, "open the ring buffers", ret);
	if (opts->reader == IFT_READER_MMAP && !ift_ring_mapped(r->ring))
		return fail(r, "read the ring buffers in place (--reader=mmap): this kernel "
			    "maps no trace_pipe_raw (Linux 6.10 and later do)", -IFT_E_OLD_KERNEL);
	if (ift_ring_mapped(r->ring) &&
	    !(r->pace = calloc((size_t)ift_ring_ncpus(r->ring), sizeof(*r->pace))))
		return fail(r, "open the ring buffers", -ENOMEM);
	if ((ret = ift_rec_write_metadata(r)) < 0)
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
	if ((opts->stack || r->plan.profile_hz) && (ret = stacks_setup(r)) < 0)
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
int ift_rec_list_tids(pid_t pid, pid_t **tids, size_t *n)
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
	ret = ift_rec_list_tids(pid, &tids, &n);
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

int ift_recorder_start(struct ift_recorder *r)
{
	int ret = ift_probe_start(r->probes);

	if (ret < 0)
		return fail(r, "start tracing", ret);
	/* tracing is on: the profile's samples are the recording's from now */
	ift_stacks_profile_from(r->stacks, ift_now_ns());
	if ((ret = ift_ringq_start(r->ring, r->iso, r->mono, &r->reader)) < 0)
		return fail(r, "start the ring-buffer reader", ret);
	/*
	 * Mapped, this thread reads the rings, and a ring is all the room its
	 * events have until then: it jumps the queue as the reader thread
	 * does (decoding and writing with it), until tracing stops.
	 */
	if (ift_ring_mapped(r->ring)) {
		errno = 0;
		r->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
		if (errno || setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), IFT_RINGQ_NICE) < 0)
			r->nice = INT_MIN;
	}
	if (r->stacks && (ret = ift_stacks_start(r->stacks)) < 0)
		return fail(r, "start the stack reader", ret);
	r->started = true;
	r->start_ns = ift_now_ns();
	r->piece_start_ns = r->start_ns;
	r->next_sample = r->start_ns;
	r->next_flush = r->start_ns + FLUSH_EVERY_NS;
	r->next_rescan = r->start_ns + RESCAN_EVERY_NS;
	ift_writer_metaf(r->w, "record.start_ns", "%" PRIu64, r->start_ns);
	ift_rec_gpu_start(r);
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

static int on_page(void *ctx, int cpu, const void *page, int len)
{
	struct ift_recorder *r = ctx;
	int ret = ift_decoder_page(r->dec, cpu, page, len, 0);

	return ret < 0 ? ret : 0;
}

static int on_record(void *ctx, int cpu, uint64_t ts, const void *raw, uint32_t size)
{
	struct ift_recorder *r = ctx;

	return ift_decoder_record(r->dec, cpu, ts, raw, size);
}

static void on_idle(void *ctx, int source, int cpu, uint64_t ts)
{
	struct ift_recorder *r = ctx;

	ift_decoder_cpu_idle(r->dec, source, cpu, ts);
}

/*
 * The stack samples, after the pages are taken: a call these pages
 * complete returned after its entry trap wrote its sample, so the sample
 * is in the perf ring by now.
 */
static int on_taken(void *ctx)
{
	struct ift_recorder *r = ctx;

	return r->stacks ? ift_stacks_poll(r->stacks) : 0;
}

/*
 * Decodes what the reader thread queued, waiting up to TIMEOUT_MS for
 * something when nothing is; *PAGES counts the pages decoded.
 */
static int take_queue(struct ift_recorder *r, int timeout_ms, int *pages)
{
	const struct ift_ringq_sink sink = { on_page, on_record, on_idle, on_taken, r };

	*pages = 0;
	return r->reader ? ift_ringq_take(r->reader, timeout_ms, &sink, pages) : 0;
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

/*
 * Mapped: parses what each CPU's ring holds where it lies, up to
 * IFT_RINGQ_PAGES_PER_ROUND pages, when the CPU is due, and notes it read to its end.
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
		n = ift_ring_read_mapped(r->ring, cpu, IFT_RINGQ_PAGES_PER_ROUND, on_span, r->dec, &bytes);
		if (n < 0)
			return n;
		pages += n;
		if (n == IFT_RINGQ_PAGES_PER_ROUND) {
			pc->due = 0;	/* more waits: the next round */
			*due = 0;
			continue;
		}
		/* to its end at BEFORE: nothing older than that can still come */
		if (r->mono && before > IFT_RINGQ_IDLE_MARGIN_NS)
			ift_decoder_cpu_idle(r->dec, 0, cpu, before - IFT_RINGQ_IDLE_MARGIN_NS);
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
		if (!pages && !ift_ringq_running(r->reader) && timeout_ms > 0)
			poll(NULL, 0, timeout_ms);
	}
	/* waits for the reader up to TIMEOUT_MS when it has nothing */
	if ((ret = take_queue(r, pages ? 0 : timeout_ms, &pages)) < 0)
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
	if ((ret = ift_rec_gpu_poll(r, now)) < 0)
		return fail(r, "read the GPU samples", ret);
	/* a library mapped later is probed where the kernel can */
	if (now >= r->next_rescan && !r->opts.ncuda_libs &&
	    !ift_kfeature_refusal(&r->caps, IFT_KF_UPROBES)) {
		r->next_rescan = now + RESCAN_EVERY_NS;
		if ((ret = ift_rec_rescan(r)) < 0)
			return fail(r, "probe a library loaded while recording", ret);
	}
	if (now >= r->next_flush) {
		r->next_flush = now + FLUSH_EVERY_NS;
		/* for a reader of the recording in progress (top): every row
		   before it is in the chunks this flush writes, or earlier */
		ift_writer_metaf(r->w, "record.complete_ns", "%" PRIu64,
				 ift_decoder_complete(r->dec));
		if ((ret = ift_writer_flush(r->w)) < 0)
			return fail(r, "write the trace file", ret);
		if ((ret = ift_rec_pieces_poll(r, now)) < 0)
			return fail(r, "start the trace's next piece", ret);
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
	st->bytes = r->pieces_bytes + ift_writer_bytes(r->w);
	memcpy(st->rows, ds->rows, sizeof(st->rows));
	/* the stack stage writes these, not the decoder */
	st->rows[IFT_T_PROFILE] = ift_writer_rows(r->w, IFT_T_PROFILE);
	st->rows[IFT_T_GPU] = ift_writer_rows(r->w, IFT_T_GPU);
	ift_rec_gpu_status(r, &st->gpu_status, &st->gpu_devices);
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
		st->prof_samples = ss.prof_samples;
		st->prof_dropped = ss.prof_lost + ss.prof_late;
		st->py_lag_p50_ns = ss.py_lag_p50_ns;
		st->py_lag_p99_ns = ss.py_lag_p99_ns;
	}
}

/* --profile's figures (docs/trace-format.md): what it took, and what not. */
static void profile_meta(struct ift_recorder *r)
{
	struct ift_stack_stats ss;

	if (!r->plan.profile_hz)
		return;
	ift_stacks_stats(r->stacks, &ss);
	ift_writer_metaf(r->w, "profile.hz", "%u", r->plan.profile_hz);
	ift_writer_metaf(r->w, "profile.period_ns", "%llu",
			 1000000000ULL / r->plan.profile_hz);
	ift_writer_metaf(r->w, "profile.samples", "%" PRIu64, ss.prof_samples);
	ift_writer_metaf(r->w, "profile.kernel", "%" PRIu64, ss.prof_kernel);
	ift_writer_metaf(r->w, "profile.py", "%" PRIu64, ss.prof_py);
	ift_writer_metaf(r->w, "profile.late", "%" PRIu64, ss.prof_late);
	ift_writer_metaf(r->w, "profile.lost", "%" PRIu64, ss.prof_lost);
	ift_writer_metaf(r->w, "profile.before", "%" PRIu64, ss.prof_before);
	ift_writer_metaf(r->w, "profile.irq", "%" PRIu64, ss.prof_irq);
	ift_writer_metaf(r->w, "profile.trap", "%" PRIu64, ss.prof_trap);
	ift_writer_metaf(r->w, "profile.fault", "%" PRIu64, ss.prof_fault);
	ift_writer_metaf(r->w, "profile.syscall", "%" PRIu64, ss.prof_syscall);
	/* how a sample in the kernel was told apart, or why it was not */
	ift_writer_metaf(r->w, "profile.kernel_entry", "%s",
			 !ss.kentry_err ? "kallsyms" : ss.kentry_err == -EPERM ?
			 "no: /proc/kallsyms hides the addresses (kernel.kptr_restrict)" :
			 "no: /proc/kallsyms cannot be read");
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
	ift_rec_write_fault_cost(r->w, "host.page_fault_ns.stop");
	/* what the reader queued, then what is left in the rings */
	ift_ringq_stop(r->reader);
	if ((ret = take_queue(r, 0, &pages)) < 0)
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
	if (r->stacks) {
		ift_stacks_settle(r->stacks);
		if ((ret = ift_stacks_profile_flush(r->stacks)) < 0)
			return fail(r, "write the profile", ret);
	}
	if (r->opts.page_count && (ret = ift_rec_write_page_counts(r, stop)) < 0)
		return fail(r, "read the page-allocation counts", ret);
	if ((ret = ift_rec_gpu_finish(r, stop)) < 0)
		return fail(r, "read the GPU samples", ret);
	lost_events(r, true);
	{
		const struct ift_decode_stats *ds = ift_decoder_stats(r->dec);

		ift_writer_metaf(r->w, "decode.late", "%" PRIu64, ds->late);
		ift_writer_metaf(r->w, "decode.late_max_ns", "%" PRIu64, ds->late_max_ns);
		ift_writer_metaf(r->w, "decode.nest_closed", "%" PRIu64, ds->nest_closed);
	}
	ift_writer_metaf(r->w, "record.queue_peak_bytes", "%" PRIu64, ift_ringq_peak_bytes(r->reader));
	if (r->stacks)
		profile_meta(r);
	if (r->stacks && r->opts.stack) {
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
	if ((ret = ift_rec_pieces_finish(r, stop)) < 0)
		return fail(r, "write the last snapshot", ret);
	return 0;
}

static pid_t destroy(struct ift_recorder *r, bool behind)
{
	pid_t helper = 0;
	int go = -1;

	ift_ringq_stop(r->reader);
	ift_rec_gpu_free(r);
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
	ift_ringq_free(r->reader);
	r->reader = NULL;
	ift_ring_close(r->ring);
	free(r->pace);
	/* our copies are closed: the helper may go on */
	if (go >= 0)
		close(go);
	/* first what the system holds, then our memory */
	ift_probe_session_destroy(r->probes);
	ift_decoder_free(r->dec);
	ift_writer_free(r->w);
	ift_rec_pieces_free(r);
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
