// SPDX-License-Identifier: MIT
/*
 * simcuda: a stand-in CUDA runtime, built as libcudart.so.12, with a modelled
 * device, so the tracer's end-to-end tests can run training-like workloads
 * with known GPU behaviour on machines without a GPU.
 *
 * The device is one thread ("simcuda-dev") that runs the queued work in
 * order, sleeping (not spinning) for each op's modelled duration: a copy
 * takes bytes / bandwidth, a kernel gridDim.x * y * z blocks x
 * SIMCUDA_BLOCK_NS.  Device time runs on its own timeline, as a GPU's does:
 * an op starts when it was submitted or when the op before it ended,
 * whichever is later, however late the device thread itself is woken.
 *
 * What the host sees follows the real runtime where the tracer can tell:
 * copies from pageable memory are staged by the calling thread through a
 * pinned bounce buffer with real memcpy; cudaMemcpy returns once the device
 * finished; cudaMemcpyAsync from pinned memory returns at once; waiting for
 * the device (stream, device, event) spins briefly, then blocks on a
 * condition variable until the device thread signals.  Device memory is
 * address space only: reserved, never backed; reading it yields zeros.
 *
 * The device's busy intervals and each process's device memory go to a
 * shared file that simnvml (libnvidia-ml.so.1) reads from any process
 * (simnvml.h), and to SIMCUDA_BUSY_LOG, the tests' truth.
 *
 * Every exported function is the API itself, never called from inside the
 * library, so a uprobe on it fires once per call of the application.  The
 * environment variables are read once, at the first call; see README.md.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "simnvml.h"

/* ---- the API, declared as the CUDA headers do, without them ------------- */

typedef int cudaError_t;
typedef struct simcuda_stream *cudaStream_t;
typedef struct simcuda_event *cudaEvent_t;
typedef struct { unsigned x, y, z; } dim3;
enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

/* the real runtime's values */
enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorInvalidDeviceFunction = 98,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorNotReady = 600,
};

#define cudaHostAllocDefault		0x00
#define cudaHostAllocPortable		0x01
#define cudaHostAllocMapped		0x02
#define cudaHostAllocWriteCombined	0x04

/* Exported, and kept a function of its own: no inlining, no merging with a
   twin (-fno-ipa-icf in the build does the same for the whole file). */
#define API __attribute__((visibility("default"), noinline, used))

API cudaError_t cudaGetDeviceCount(int *count);
API cudaError_t cudaSetDevice(int device);
API cudaError_t cudaGetDevice(int *device);
API cudaError_t cudaMalloc(void **devPtr, size_t size);
API cudaError_t cudaFree(void *devPtr);
API cudaError_t cudaMallocHost(void **ptr, size_t size);
API cudaError_t cudaFreeHost(void *ptr);
API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				enum cudaMemcpyKind kind, cudaStream_t stream);
API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				 size_t sharedMem, cudaStream_t stream);
API cudaError_t cudaStreamCreate(cudaStream_t *pStream);
API cudaError_t cudaStreamDestroy(cudaStream_t stream);
API cudaError_t cudaStreamSynchronize(cudaStream_t stream);
/* simcuda's own, for a workload's truth: see README.md */
API uint64_t simcuda_sync_done_ns(void);
API cudaError_t cudaDeviceSynchronize(void);
API cudaError_t cudaEventCreate(cudaEvent_t *event);
API cudaError_t cudaEventDestroy(cudaEvent_t event);
API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
API cudaError_t cudaEventSynchronize(cudaEvent_t event);
API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
API cudaError_t cudaGetLastError(void);
API cudaError_t cudaPeekAtLastError(void);
API const char *cudaGetErrorString(cudaError_t error);

/* ---- state -------------------------------------------------------------- */

enum op_type { OP_KERNEL, OP_COPY, OP_EVENT };

struct op {
	uint64_t seq;
	uint64_t submit_ns;		/* CLOCK_MONOTONIC */
	uint64_t dur_ns;
	enum op_type type;
	unsigned busy;			/* enum simnvml_kind; 0: an event */
	uint64_t bytes;			/* a copy's */
	void *zero;			/* host bytes the device writes (zeros) */
	size_t zero_len;
	struct simcuda_event *ev;	/* OP_EVENT */
};

struct simcuda_stream {
	uint64_t last;			/* seq of its latest op */
};

struct simcuda_event {
	uint64_t seq;			/* of its latest record; 0: never recorded */
	uint64_t t_ns;			/* device time it completed */
	bool has_time;
};

/* an address range: device allocations, pinned host allocations */
struct range {
	uintptr_t base;
	size_t len;
};

struct table {
	struct range *v;
	size_t n, cap;
};

/* Legacy and per-thread default stream handles (cuda_runtime_api.h). */
#define STREAM_LEGACY		((cudaStream_t)0x1)
#define STREAM_PER_THREAD	((cudaStream_t)0x2)

#define QUEUE_DEPTH	1024	/* ops in flight before a submitter waits */
#define DEV_ALIGN	512	/* cudaMalloc's alignment */

static struct {
	pthread_once_t once;
	cudaError_t init_err;
	bool forked;			/* this is a child of the process that started the device */

	/* configuration, read once */
	double h2d_gbps, d2h_gbps, d2d_gbps;
	uint64_t block_ns, spin_ns;
	bool rt;			/* the device thread at real-time priority */
	size_t bounce_half;		/* bytes of each of the two bounce buffers */
	int ndev;
	size_t mem_bytes;

	/* the device: queue, completions, streams and events, under lock */
	pthread_mutex_t lock;
	pthread_cond_t work;		/* the device thread waits for work */
	pthread_cond_t done;		/* everyone else waits for completions, or room */
	struct op *ring;
	uint64_t submitted;		/* seq of the latest op queued */
	_Atomic uint64_t done_seq;	/* seq of the latest op finished */
	uint64_t *done_ns;		/* by seq % QUEUE_DEPTH: when it finished,
					   written before done_seq says so */
	bool dev_idle;
	unsigned waiters;
	struct simcuda_stream def;	/* the default stream */
	struct simcuda_stream **streams;
	size_t nstreams, capstreams;
	struct simcuda_event **events;
	size_t nevents, capevents;

	/* memory, under mem_lock */
	pthread_mutex_t mem_lock;
	uintptr_t dev_base;		/* reserved, PROT_NONE: never backed */
	struct table dev, pinned;

	/* staging of pageable copies, under stage_lock */
	pthread_mutex_t stage_lock;
	char *bounce[2];
	uint64_t bounce_seq[2];		/* the op that last used each buffer */

	/* the busy intervals and memory NVML reads (simnvml.h), set before the
	   device thread starts */
	struct simnvml_writer nvml;
} g = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.mem_lock = PTHREAD_MUTEX_INITIALIZER,
	.stage_lock = PTHREAD_MUTEX_INITIALIZER,
};

static _Thread_local cudaError_t last_error;
static _Thread_local uint64_t sync_done_ns;	/* simcuda_sync_done_ns() */
static _Thread_local int current_device;

/* ---- helpers ------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* a spinning waiter's hint to the core: pause on x86-64, yield on aarch64 */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* Every error is the thread's last error too, as in the real runtime. */
static cudaError_t fail(cudaError_t e)
{
	if (e != cudaSuccess)
		last_error = e;
	return e;
}

/* A number from the environment, or DEF when unset; an invalid value is
   reported once and ignored. */
static double env_num(const char *name, double def, double min, double max)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max)) {
		fprintf(stderr, "simcuda: ignoring %s='%s': not a number in [%g, %g]\n",
			name, s, min, max);
		return def;
	}
	return v;
}

static void on_fork_child(void)
{
	/* the device thread did not come along */
	g.forked = true;
}

/* Appends P to *V (an array of pointers). */
static int ptr_push(void ***v, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void **q = realloc(*v, c * sizeof(*q));

		if (!q)
			return -1;
		*v = q;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

static bool ptr_remove(void **v, size_t *n, const void *p)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i] == p) {
			v[i] = v[--*n];
			return true;
		}
	return false;
}

static bool ptr_has(void *const *v, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

/* ---- address tables: sorted by base, no overlaps -------------------------- */

/* Index of the first range whose base is above P. */
static size_t table_upper(const struct table *t, uintptr_t p)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The range holding [p, p + len), or NULL. */
static const struct range *table_covering(const struct table *t, uintptr_t p, size_t len)
{
	size_t i = table_upper(t, p);
	const struct range *r;

	if (!i)
		return NULL;
	r = &t->v[i - 1];
	if (p - r->base >= r->len || len > r->len - (p - r->base))
		return NULL;
	return r;
}

static int table_insert(struct table *t, uintptr_t base, size_t len)
{
	size_t i = table_upper(t, base);

	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 64;
		struct range *v = realloc(t->v, c * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = c;
	}
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i] = (struct range){ base, len };
	t->n++;
	return 0;
}

/* Removes the range that starts at BASE; its length, or 0 when none does. */
static size_t table_remove(struct table *t, uintptr_t base)
{
	size_t i = table_upper(t, base), len;

	if (!i || t->v[i - 1].base != base)
		return 0;
	i--;
	len = t->v[i].len;
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
	t->n--;
	return len;
}

static bool in_device_space(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	return a >= g.dev_base && a - g.dev_base < g.mem_bytes;
}

static bool device_covers(const void *p, size_t len)
{
	bool ok;

	pthread_mutex_lock(&g.mem_lock);
	ok = table_covering(&g.dev, (uintptr_t)p, len) != NULL;
	pthread_mutex_unlock(&g.mem_lock);
	return ok;
}

static bool pinned_covers(const void *p, size_t len)
{
	bool ok;

	pthread_mutex_lock(&g.mem_lock);
	ok = table_covering(&g.pinned, (uintptr_t)p, len) != NULL;
	pthread_mutex_unlock(&g.mem_lock);
	return ok;
}

/* ---- the device --------------------------------------------------------- */

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * A GPU finishes its work whatever the host CPUs are doing; the thread that
 * stands in for it must not wait for a CPU before it can say so, or a busy
 * host would look like a slow device.  So it runs SCHED_FIFO when allowed
 * (root, CAP_SYS_NICE or RLIMIT_RTPRIO), else at nice -20 when allowed, and
 * takes a CPU only for a few microseconds per op.
 */
static void device_priority(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (!g.rt || !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		return;
	setpriority(PRIO_PROCESS, (id_t)gettid(), -20);
}

static void *device_main(void *arg)
{
	uint64_t clock = 0;	/* device time: when the last op ended */

	(void)arg;
	pthread_setname_np(pthread_self(), "simcuda-dev");
	/* wake up when an op ends, not up to 50 us later */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	device_priority();
	for (;;) {
		struct op o;
		uint64_t start;

		pthread_mutex_lock(&g.lock);
		while (atomic_load(&g.done_seq) == g.submitted) {
			g.dev_idle = true;
			pthread_cond_wait(&g.work, &g.lock);
		}
		g.dev_idle = false;
		o = g.ring[(atomic_load(&g.done_seq) + 1) % QUEUE_DEPTH];
		pthread_mutex_unlock(&g.lock);

		start = o.submit_ns > clock ? o.submit_ns : clock;
		clock = start + o.dur_ns;
		/* known now, on the device's timeline: published before it runs */
		if (o.busy && o.dur_ns)
			simnvml_writer_busy(&g.nvml, o.busy, start, clock, o.bytes);
		if (clock > now_ns())
			sleep_until(clock);
		if (o.zero)
			memset(o.zero, 0, o.zero_len);

		pthread_mutex_lock(&g.lock);
		/* an event destroyed or recorded again meanwhile keeps its state */
		if (o.type == OP_EVENT && ptr_has((void **)g.events, g.nevents, o.ev) &&
		    o.ev->seq == o.seq) {
			o.ev->t_ns = clock;
			o.ev->has_time = true;
		}
		g.done_ns[o.seq % QUEUE_DEPTH] = now_ns();
		atomic_store(&g.done_seq, o.seq);
		if (g.waiters)
			pthread_cond_broadcast(&g.done);
		pthread_mutex_unlock(&g.lock);
	}
	return NULL;
}

static void nvml_release(void)
{
	simnvml_writer_destroy(&g.nvml);
}

static void init_once(void)
{
	pthread_attr_t attr;
	pthread_t dev;
	void *p;

	g.h2d_gbps = env_num("SIMCUDA_H2D_GBPS", 12, 0.001, 1e6);
	g.d2h_gbps = env_num("SIMCUDA_D2H_GBPS", 12, 0.001, 1e6);
	g.d2d_gbps = env_num("SIMCUDA_D2D_GBPS", 500, 0.001, 1e6);
	g.block_ns = (uint64_t)env_num("SIMCUDA_BLOCK_NS", 1000, 0, 1e9);
	g.spin_ns = (uint64_t)(env_num("SIMCUDA_SPIN_US", 20, 0, 1e6) * 1000);
	g.bounce_half = (size_t)env_num("SIMCUDA_BOUNCE_KB", 2048, 8, 1 << 20) * 1024 / 2;
	g.rt = env_num("SIMCUDA_RT", 1, 0, 1) != 0;
	g.ndev = (int)env_num("SIMCUDA_DEVICES", 1, 0, 64);
	g.mem_bytes = (size_t)env_num("SIMCUDA_MEM_MB", 16384, 1, 1 << 24) << 20;

	g.ring = calloc(QUEUE_DEPTH, sizeof(*g.ring));
	g.done_ns = calloc(QUEUE_DEPTH, sizeof(*g.done_ns));
	if (!g.ring || !g.done_ns)
		goto fail;
	/* the device's address space: reserved so no host memory lands there,
	   never backed, so a host access to it faults as on a real GPU */
	p = mmap(NULL, g.mem_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		goto fail;
	g.dev_base = (uintptr_t)p;
	/* the bounce buffers are pinned memory: resident from the start */
	p = mmap(NULL, 2 * g.bounce_half, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		goto fail;
	g.bounce[0] = p;
	g.bounce[1] = (char *)p + g.bounce_half;

	simnvml_writer_create(&g.nvml, g.mem_bytes);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&dev, &attr, device_main, NULL)) {
		pthread_attr_destroy(&attr);
		simnvml_writer_destroy(&g.nvml);
		goto fail;
	}
	pthread_attr_destroy(&attr);
	pthread_atfork(NULL, NULL, on_fork_child);
	atexit(nvml_release);
	g.init_err = cudaSuccess;
	return;
fail:
	g.init_err = cudaErrorInitializationError;
}

/* Starts the device at the first call; cudaErrorInitializationError when it
   cannot, or in a forked child (the real runtime's answer there too). */
static cudaError_t init(void)
{
	pthread_once(&g.once, init_once);
	if (g.forked)
		return cudaErrorInitializationError;
	if (g.init_err == cudaSuccess && g.ndev == 0)
		return cudaErrorNoDevice;
	return g.init_err;
}

/* A stream handle as the device knows it, or NULL when it is not one;
   under g.lock. */
static struct simcuda_stream *stream_locked(cudaStream_t s)
{
	if (!s || s == STREAM_LEGACY || s == STREAM_PER_THREAD)
		return &g.def;
	return ptr_has((void **)g.streams, g.nstreams, s) ? s : NULL;
}

static bool stream_valid(cudaStream_t s)
{
	bool ok;

	pthread_mutex_lock(&g.lock);
	ok = stream_locked(s) != NULL;
	pthread_mutex_unlock(&g.lock);
	return ok;
}

/* Queues O on stream S: its seq, or 0 when S is not a stream (or O's event
   not an event).  Waits while the queue is full, as the real runtime does
   when its push buffer is. */
static uint64_t submit(cudaStream_t s, struct op *o)
{
	struct simcuda_stream *st;
	uint64_t seq;

	pthread_mutex_lock(&g.lock);
	st = stream_locked(s);
	if (!st || (o->type == OP_EVENT && !ptr_has((void **)g.events, g.nevents, o->ev))) {
		pthread_mutex_unlock(&g.lock);
		return 0;
	}
	while (g.submitted - atomic_load(&g.done_seq) >= QUEUE_DEPTH) {
		g.waiters++;
		pthread_cond_wait(&g.done, &g.lock);
		g.waiters--;
	}
	seq = ++g.submitted;
	o->seq = seq;
	o->submit_ns = now_ns();
	if (o->type == OP_EVENT) {
		o->ev->seq = seq;
		o->ev->has_time = false;
	}
	g.ring[seq % QUEUE_DEPTH] = *o;
	st->last = seq;
	if (g.dev_idle)
		pthread_cond_signal(&g.work);
	pthread_mutex_unlock(&g.lock);
	return seq;
}

/* Waits until op SEQ has finished: spins up to SIMCUDA_SPIN_US, then blocks
   until the device thread signals. */
/*
 * Waits until op SEQ is done, and keeps when it was (0: no op yet) for
 * simcuda_sync_done_ns().  Its slot of done_ns is SEQ's until QUEUE_DEPTH
 * later ops finish, which the thread that waits for it does not submit.
 */
static void wait_seq(uint64_t seq)
{
	uint64_t t0;

	if (atomic_load_explicit(&g.done_seq, memory_order_acquire) >= seq)
		goto done;
	t0 = now_ns();
	while (now_ns() - t0 < g.spin_ns) {
		if (atomic_load_explicit(&g.done_seq, memory_order_acquire) >= seq)
			goto done;
		cpu_relax();
	}
	pthread_mutex_lock(&g.lock);
	g.waiters++;
	while (atomic_load(&g.done_seq) < seq)
		pthread_cond_wait(&g.done, &g.lock);
	g.waiters--;
	pthread_mutex_unlock(&g.lock);
done:
	sync_done_ns = seq && g.done_ns ? g.done_ns[seq % QUEUE_DEPTH] : 0;
}

uint64_t simcuda_sync_done_ns(void)
{
	return sync_done_ns;
}

static void wait_idle(void)
{
	uint64_t seq;

	pthread_mutex_lock(&g.lock);
	seq = g.submitted;
	pthread_mutex_unlock(&g.lock);
	wait_seq(seq);
}

static uint64_t copy_ns(size_t bytes, double gbps)
{
	/* 1 GB/s is one byte per ns */
	return (uint64_t)((double)bytes / gbps + 0.5);
}

/* ---- copies ------------------------------------------------------------- */

/* Host to device from pageable memory: the calling thread copies each chunk
   into one of two pinned bounce buffers while the device takes the other. */
static cudaError_t stage_h2d(cudaStream_t s, const char *src, size_t n, bool async)
{
	uint64_t seq = 0;

	pthread_mutex_lock(&g.stage_lock);
	for (size_t off = 0, i = 0; off < n; off += g.bounce_half, i++) {
		size_t len = n - off < g.bounce_half ? n - off : g.bounce_half;
		struct op o = { .type = OP_COPY, .dur_ns = copy_ns(len, g.h2d_gbps),
				.busy = SIMNVML_H2D, .bytes = len };
		int b = (int)(i & 1);

		wait_seq(g.bounce_seq[b]);
		memcpy(g.bounce[b], src + off, len);
		seq = submit(s, &o);
		if (!seq) {
			pthread_mutex_unlock(&g.stage_lock);
			return cudaErrorInvalidResourceHandle;
		}
		g.bounce_seq[b] = seq;
	}
	/* async: back once the source may be reused, as the real runtime is */
	if (!async)
		wait_seq(seq);
	pthread_mutex_unlock(&g.stage_lock);
	return cudaSuccess;
}

/* Device to pageable host memory: the device fills a bounce buffer (with
   zeros: device memory holds nothing), the calling thread copies it out.
   Synchronous even when asked for async, as in the real runtime. */
static cudaError_t stage_d2h(cudaStream_t s, char *dst, size_t n)
{
	size_t chunks = (n + g.bounce_half - 1) / g.bounce_half;
	uint64_t seq[2] = { 0, 0 };

	pthread_mutex_lock(&g.stage_lock);
	for (size_t i = 0; i < chunks + 1; i++) {
		/* queue chunk i, then drain chunk i - 1 */
		if (i < chunks) {
			size_t off = i * g.bounce_half;
			size_t len = n - off < g.bounce_half ? n - off : g.bounce_half;
			int b = (int)(i & 1);
			struct op o = { .type = OP_COPY, .dur_ns = copy_ns(len, g.d2h_gbps),
					.busy = SIMNVML_D2H, .bytes = len,
					.zero = g.bounce[b], .zero_len = len };

			wait_seq(g.bounce_seq[b]);
			seq[b] = submit(s, &o);
			if (!seq[b]) {
				pthread_mutex_unlock(&g.stage_lock);
				return cudaErrorInvalidResourceHandle;
			}
			g.bounce_seq[b] = seq[b];
		}
		if (i > 0) {
			size_t off = (i - 1) * g.bounce_half;
			size_t len = n - off < g.bounce_half ? n - off : g.bounce_half;
			int b = (int)((i - 1) & 1);

			wait_seq(seq[b]);
			memcpy(dst + off, g.bounce[b], len);
		}
	}
	pthread_mutex_unlock(&g.stage_lock);
	return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			cudaStream_t s, bool async)
{
	bool sdev, ddev;
	struct op o = { .type = OP_COPY, .busy = SIMNVML_D2D, .bytes = n };
	uint64_t seq;
	cudaError_t e = init();

	if (e)
		return e;
	if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	if (!stream_valid(s))
		return cudaErrorInvalidResourceHandle;
	if (!n)
		return cudaSuccess;
	if (!dst || !src)
		return cudaErrorInvalidValue;
	sdev = in_device_space(src);
	ddev = in_device_space(dst);
	if (kind == cudaMemcpyDefault)
		kind = (enum cudaMemcpyKind)(sdev ? (ddev ? cudaMemcpyDeviceToDevice :
						    cudaMemcpyDeviceToHost) :
					     (ddev ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost));
	/* each side where the kind says it is, and a device side allocated */
	if (sdev != (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) ||
	    ddev != (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) ||
	    (sdev && !device_covers(src, n)) || (ddev && !device_covers(dst, n)))
		return cudaErrorInvalidValue;

	switch (kind) {
	case cudaMemcpyHostToHost: {
		/* in stream order, on the host */
		const struct simcuda_stream *st;

		pthread_mutex_lock(&g.lock);
		st = stream_locked(s);
		seq = st ? st->last : 0;
		pthread_mutex_unlock(&g.lock);
		wait_seq(seq);
		memmove(dst, src, n);
		return cudaSuccess;
	}
	case cudaMemcpyHostToDevice:
		if (!pinned_covers(src, n))
			return stage_h2d(s, src, n, async);
		o.dur_ns = copy_ns(n, g.h2d_gbps);
		o.busy = SIMNVML_H2D;
		break;
	case cudaMemcpyDeviceToHost:
		if (!pinned_covers(dst, n))
			return stage_d2h(s, dst, n);
		o.dur_ns = copy_ns(n, g.d2h_gbps);
		o.busy = SIMNVML_D2H;
		o.zero = dst;
		o.zero_len = n;
		break;
	default:
		o.dur_ns = copy_ns(n, g.d2d_gbps);
		break;
	}
	seq = submit(s, &o);
	if (!seq)
		return cudaErrorInvalidResourceHandle;
	if (!async)
		wait_seq(seq);
	return cudaSuccess;
}

/* ---- the API ------------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t e;

	if (!count)
		return fail(cudaErrorInvalidValue);
	e = init();
	*count = e == cudaSuccess ? g.ndev : 0;
	return fail(e);
}

cudaError_t cudaSetDevice(int device)
{
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (device < 0 || device >= g.ndev)
		return fail(cudaErrorInvalidDevice);
	/* the devices share one queue: the number is only remembered */
	current_device = device;
	return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!device)
		return fail(cudaErrorInvalidValue);
	*device = current_device;
	return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	size_t len = (size + DEV_ALIGN - 1) & ~(size_t)(DEV_ALIGN - 1);
	uintptr_t at;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!devPtr)
		return fail(cudaErrorInvalidValue);
	*devPtr = NULL;
	if (!size)
		return cudaSuccess;
	if (len < size || len > g.mem_bytes)
		return fail(cudaErrorMemoryAllocation);
	pthread_mutex_lock(&g.mem_lock);
	/* first fit between the allocations, in address order */
	at = g.dev_base;
	for (size_t i = 0; i <= g.dev.n; i++) {
		uintptr_t next = i < g.dev.n ? g.dev.v[i].base : g.dev_base + g.mem_bytes;

		if (next - at >= len)
			break;
		if (i == g.dev.n) {
			pthread_mutex_unlock(&g.mem_lock);
			return fail(cudaErrorMemoryAllocation);
		}
		at = g.dev.v[i].base + ((g.dev.v[i].len + DEV_ALIGN - 1) & ~(size_t)(DEV_ALIGN - 1));
	}
	if (table_insert(&g.dev, at, size) < 0) {
		pthread_mutex_unlock(&g.mem_lock);
		return fail(cudaErrorMemoryAllocation);
	}
	simnvml_writer_mem(&g.nvml, (int64_t)size);
	pthread_mutex_unlock(&g.mem_lock);
	*devPtr = (void *)at;
	return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
	size_t len;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!devPtr)
		return cudaSuccess;
	/* the memory may be in use by queued work: the real cudaFree waits too */
	wait_idle();
	pthread_mutex_lock(&g.mem_lock);
	len = table_remove(&g.dev, (uintptr_t)devPtr);
	simnvml_writer_mem(&g.nvml, -(int64_t)len);
	pthread_mutex_unlock(&g.mem_lock);
	return len ? cudaSuccess : fail(cudaErrorInvalidValue);
}

/* Pinned host memory: page-locked and resident, so populated at once. */
static cudaError_t host_alloc(void **p, size_t size)
{
	void *m;

	if (!p)
		return cudaErrorInvalidValue;
	*p = NULL;
	if (!size)
		return cudaSuccess;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (m == MAP_FAILED)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&g.mem_lock);
	if (table_insert(&g.pinned, (uintptr_t)m, size) < 0) {
		pthread_mutex_unlock(&g.mem_lock);
		munmap(m, size);
		return cudaErrorMemoryAllocation;
	}
	pthread_mutex_unlock(&g.mem_lock);
	*p = m;
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	cudaError_t e = init();

	return fail(e ? e : host_alloc(ptr, size));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
				cudaHostAllocWriteCombined))
		return fail(cudaErrorInvalidValue);
	return fail(host_alloc(pHost, size));
}

cudaError_t cudaFreeHost(void *ptr)
{
	size_t len;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!ptr)
		return cudaSuccess;
	wait_idle();
	pthread_mutex_lock(&g.mem_lock);
	len = table_remove(&g.pinned, (uintptr_t)ptr);
	pthread_mutex_unlock(&g.mem_lock);
	if (!len)
		return fail(cudaErrorInvalidValue);
	munmap(ptr, len);
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return fail(copy(dst, src, count, kind, NULL, false));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return fail(copy(dst, src, count, kind, stream, true));
}

/* The device writes COUNT bytes at its own bandwidth, in stream order. */
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	struct op o = { .type = OP_COPY, .busy = SIMNVML_D2D, .bytes = count };
	cudaError_t e = init();

	(void)value;
	if (e)
		return fail(e);
	if (!stream_valid(stream))
		return fail(cudaErrorInvalidResourceHandle);
	if (!count)
		return cudaSuccess;
	if (!devPtr || !in_device_space(devPtr) || !device_covers(devPtr, count))
		return fail(cudaErrorInvalidValue);
	o.dur_ns = copy_ns(count, g.d2d_gbps);
	if (!submit(stream, &o))
		return fail(cudaErrorInvalidResourceHandle);
	return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			     size_t sharedMem, cudaStream_t stream)
{
	struct op o = { .type = OP_KERNEL, .busy = SIMNVML_KERNEL };
	uint64_t blocks;
	cudaError_t e = init();

	(void)args;
	if (e)
		return fail(e);
	if (!func)
		return fail(cudaErrorInvalidDeviceFunction);
	/* the limits of every GPU since compute capability 3.0 */
	if (!gridDim.x || !gridDim.y || !gridDim.z || !blockDim.x || !blockDim.y ||
	    !blockDim.z || gridDim.x > 0x7fffffffu || gridDim.y > 65535 || gridDim.z > 65535 ||
	    blockDim.z > 64 || (uint64_t)blockDim.x * blockDim.y * blockDim.z > 1024 ||
	    sharedMem > 227 * 1024)
		return fail(cudaErrorInvalidConfiguration);
	blocks = (uint64_t)gridDim.x * gridDim.y * gridDim.z;
	o.dur_ns = blocks * g.block_ns;
	if (!submit(stream, &o))
		return fail(cudaErrorInvalidResourceHandle);
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	struct simcuda_stream *s;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!pStream)
		return fail(cudaErrorInvalidValue);
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(cudaErrorMemoryAllocation);
	pthread_mutex_lock(&g.lock);
	if (ptr_push((void ***)&g.streams, &g.nstreams, &g.capstreams, s) < 0) {
		pthread_mutex_unlock(&g.lock);
		free(s);
		return fail(cudaErrorMemoryAllocation);
	}
	pthread_mutex_unlock(&g.lock);
	*pStream = s;
	return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	bool found;
	cudaError_t e = init();

	if (e)
		return fail(e);
	/* its queued work goes on: the ops do not point at the stream */
	pthread_mutex_lock(&g.lock);
	found = ptr_remove((void **)g.streams, &g.nstreams, stream);
	pthread_mutex_unlock(&g.lock);
	if (!found)
		return fail(cudaErrorInvalidResourceHandle);
	free(stream);
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	struct simcuda_stream *st;
	uint64_t seq;
	cudaError_t e = init();

	if (e)
		return fail(e);
	pthread_mutex_lock(&g.lock);
	st = stream_locked(stream);
	seq = st ? st->last : 0;
	pthread_mutex_unlock(&g.lock);
	if (!st)
		return fail(cudaErrorInvalidResourceHandle);
	wait_seq(seq);
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t e = init();

	if (e)
		return fail(e);
	wait_idle();
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	struct simcuda_event *ev;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!event)
		return fail(cudaErrorInvalidValue);
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return fail(cudaErrorMemoryAllocation);
	pthread_mutex_lock(&g.lock);
	if (ptr_push((void ***)&g.events, &g.nevents, &g.capevents, ev) < 0) {
		pthread_mutex_unlock(&g.lock);
		free(ev);
		return fail(cudaErrorMemoryAllocation);
	}
	pthread_mutex_unlock(&g.lock);
	*event = ev;
	return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	bool found;
	cudaError_t e = init();

	if (e)
		return fail(e);
	pthread_mutex_lock(&g.lock);
	found = ptr_remove((void **)g.events, &g.nevents, event);
	pthread_mutex_unlock(&g.lock);
	if (!found)
		return fail(cudaErrorInvalidResourceHandle);
	free(event);
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	struct op o = { .type = OP_EVENT, .ev = event };
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!submit(stream, &o))
		return fail(cudaErrorInvalidResourceHandle);
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	uint64_t seq = 0;
	bool found;
	cudaError_t e = init();

	if (e)
		return fail(e);
	pthread_mutex_lock(&g.lock);
	found = ptr_has((void **)g.events, g.nevents, event);
	if (found)
		seq = event->seq;
	pthread_mutex_unlock(&g.lock);
	if (!found)
		return fail(cudaErrorInvalidResourceHandle);
	/* never recorded: nothing to wait for */
	wait_seq(seq);
	return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	cudaError_t r = cudaSuccess;
	cudaError_t e = init();

	if (e)
		return fail(e);
	if (!ms)
		return fail(cudaErrorInvalidValue);
	pthread_mutex_lock(&g.lock);
	if (!ptr_has((void **)g.events, g.nevents, start) ||
	    !ptr_has((void **)g.events, g.nevents, end) || !start->seq || !end->seq)
		r = cudaErrorInvalidResourceHandle;
	else if (!start->has_time || !end->has_time)
		r = cudaErrorNotReady;
	else
		*ms = (float)(((double)end->t_ns - (double)start->t_ns) / 1e6);
	pthread_mutex_unlock(&g.lock);
	return fail(r);
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;

	last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

const char *cudaGetErrorString(cudaError_t error)
{
	switch (error) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInitializationError: return "initialization error";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
	case cudaErrorInvalidDeviceFunction: return "invalid device function";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorNotReady: return "device not ready";
	}
	return "unrecognized error code";
}
