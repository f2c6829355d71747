// SPDX-License-Identifier: MIT
/*
 * simtrain: training loops with known host pathologies, on the stand-in CUDA
 * runtime (contrib/simcuda), each logging its own truth as JSON lines so an
 * end-to-end test can hold the tracer's report against it.
 *
 *   simtrain MODE [-o FILE] [--steps N] [--workers N] [--batch ROWS]
 *            [--rows N] [--cols N] [--work-us US] [--host-us US]
 *            [--kernels N] [--grid BLOCKS] [--mb MB] [--prefetch N] [--seconds S]
 *            [--loop-ms MS] [--starve-file PATH] [--stall-at-ms MS --stall-ms MS]
 *            [--stop-file PATH]
 *
 * MODE:
 *   loader     DataLoader starvation: N worker processes (pt_data_worker)
 *              gather random rows of a shared in-memory dataset into fresh
 *              batches, --work-us of CPU each, and hand them over through
 *              shared-memory slots; the main thread waits for each batch,
 *              cudaMemcpy's it from pageable memory, launches, synchronizes.
 *              With --starve-file PATH the batches cost no CPU (the GPU is
 *              fed) until PATH exists, then --work-us: the moment the loop
 *              sees it is logged as it comes ({"type":"starve"}), for a
 *              test that watches the recording while it runs.  --loop-ms
 *              ends the loop after that long, whatever --steps says, and
 *              --stop-file PATH as soon as PATH exists (the test is done).
 *   direct     the fix: contiguous slices of a pre-shuffled copy of the same
 *              dataset, copied from a pinned buffer, no workers.
 *   healthy    a pinned batch reused, --host-us of framework overhead before
 *              each of --kernels launches: the GPU is the bottleneck.
 *              --stall-at-ms into the loop, one kernel of --stall-ms and
 *              its synchronize ({"type":"stall"}, logged as it ends); the
 *              loop's start is logged as it comes ({"type":"begin"}).
 *   pagestorm  each step maps --mb MiB of fresh pageable memory, touches it,
 *              cudaMemcpy's it and unmaps it.
 *   gpubound   long kernels (20 ms by default): the host waits in synchronize.
 *   hog        a CPU hog named noisy_hog for --seconds, 0: until killed (a noisy
 *              neighbour); it dies with its parent.
 *
 * A kernel takes --grid x SIMCUDA_BLOCK_NS (1 us by default) on the device.
 *
 * Truth, one JSON object a line (stdout, or FILE):
 *   {"type":"op", ...}     per CUDA function of the main thread, from
 *                          CLOCK_MONOTONIC around each call: count, sum,
 *                          nearest-rank p50/p95/p99, min, max
 *   {"type":"call", ...}   each of those calls, in order: op, t0 and t1; a
 *                          synchronize also done: when the device finished
 *                          the op it waited for (simcuda_sync_done_ns(); 0
 *                          on another runtime)
 *   {"type":"gaps", ...}   the time between one call's return and the next
 *                          call, by the op that ends it and in all: wall,
 *                          the thread's CPU time, and wall - CPU (off-CPU)
 *   {"type":"wait", ...}   loader: the main thread's waits for batches, and of
 *                          each how long it was blocked before a worker posted
 *                          it (blocked_ns) and how long after (wake_ns)
 *   {"type":"posted", ...} loader: each batch a worker posted, its clock read
 *                          before sem_post (post_ns, the slot's) and after it
 *                          (end_ns): a feeding thread the post woke was woken
 *                          between the two
 *   {"type":"storm", ...}  pagestorm: bytes touched, minor faults, time
 *   {"type":"schedstat", ...} the feeding thread's run-queue wait at exit, as
 *                            the scheduler counted it (-1: not kept)
 *   {"type":"rusage", ...} getrusage at exit: the main process (RUSAGE_SELF),
 *                          the main thread (RUSAGE_THREAD), and each worker
 *                          process (its own line, with its pid); and the
 *                          main thread's at start (role "start"), before it
 *                          made a thread or a process
 *   {"type":"active", ...} the first call's start to the last call's return
 *   {"type":"parent", ...} the parent process (a recorder, where one runs the
 *                          workload): its pid, comm and CPU time so far
 *                          (/proc/PPID/stat, in ticks of 1/CLK_TCK s), the
 *                          most the workload can have waited behind it
 *   {"type":"cpustat", ...} the machine's interrupt, softirq and steal time
 *                          during the run (/proc/stat, all CPUs, in ticks of
 *                          1/CLK_TCK s: tick_ns says how coarse)
 *   {"type":"loop", ...}   wall time of the training loop
 *   {"type":"run", ...}    mode, parameters, pid, the feeding thread's tid,
 *                          wall time of the whole run
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the CUDA runtime's C API, without its headers ---------------------- */

typedef struct { unsigned x, y, z; } dim3;
typedef void *cudaStream_t;
int cudaSetDevice(int dev);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMallocHost(void **p, size_t n);
int cudaFreeHost(void *p);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t s);
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
		     cudaStream_t s);
int cudaStreamCreate(cudaStream_t *s);
int cudaStreamDestroy(cudaStream_t s);
int cudaStreamSynchronize(cudaStream_t s);
int cudaDeviceSynchronize(void);
const char *cudaGetErrorString(int e);

#define H2D 1

/* ---- options ------------------------------------------------------------ */

static struct {
	const char *mode;
	long steps, workers, batch, rows, cols, work_us, host_us, kernels, grid, mb, prefetch;
	long loop_ms, stall_at_ms, stall_ms;
	const char *stop_file, *starve_file;
	double seconds;
} opt = {
	.steps = -1, .workers = -1, .batch = -1, .rows = -1, .cols = -1, .work_us = -1,
	.host_us = -1, .kernels = -1, .grid = -1, .mb = -1, .prefetch = -1, .seconds = 60,
	.loop_ms = -1, .stall_at_ms = -1, .stall_ms = -1,
};

static int out_fd = 1;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "simtrain: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* One line, one write(2): the workers' lines never interleave. */
__attribute__((format(printf, 1, 2)))
static void emit(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	s[n - 1] = '\n';	/* fmt ends in a space, the line in a newline */
	if (write(out_fd, s, (size_t)n) != n)
		die("cannot write the log: %s", strerror(errno));
	free(s);
}

/* ---- clocks ------------------------------------------------------------- */

static uint64_t ts(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t mono(void)
{
	return ts(CLOCK_MONOTONIC);
}

static uint64_t thread_cpu(void)
{
	return ts(CLOCK_THREAD_CPUTIME_ID);
}

/* Burns NS of this thread's CPU time on BUF (an "augmentation" pass), so a
   step's host cost is the same on any machine and any load. */
static void burn(float *buf, size_t n, uint64_t ns)
{
	uint64_t c0 = thread_cpu();

	if (!ns)
		return;
	do {
		for (size_t i = 0; i < n; i++)
			buf[i] = buf[i] * 0.999f + 0.001f;
		__asm__ volatile("" : : "r"(buf) : "memory");
	} while (thread_cpu() - c0 < ns);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- the truth about the main thread's CUDA calls ------------------------ */

enum { OP_SETDEV, OP_MALLOC, OP_FREE, OP_MALLOCHOST, OP_FREEHOST, OP_MEMCPY, OP_MEMCPYASYNC,
       OP_LAUNCH, OP_STREAMCREATE, OP_STREAMDESTROY, OP_STREAMSYNC, OP_DEVSYNC, NOPS };

static const char *const op_names[NOPS] = {
	"cudaSetDevice", "cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost",
	"cudaMemcpy", "cudaMemcpyAsync", "cudaLaunchKernel", "cudaStreamCreate",
	"cudaStreamDestroy", "cudaStreamSynchronize", "cudaDeviceSynchronize",
};

struct series {
	uint64_t *v;
	size_t n, cap;
};

struct gapstat {
	uint64_t count, wall, cpu, over_floor, over_floor_cpu;
};

/* a gap of at least this is the report's "longer than the floor" (--tail-floor) */
#define FLOOR_NS 1000000ULL

static struct {
	struct series dur[NOPS];
	struct series seq;		/* every call in order: op, t0, t1, done */
	struct series gapv;		/* every gap in order: its end, wall, CPU */
	struct gapstat gap[NOPS + 1];	/* by the op that ends it; [NOPS]: all */
	uint64_t t0;			/* the call in progress began */
	uint64_t first;			/* the first call began */
	uint64_t last_mono, last_cpu;	/* the previous call returned */
	int have_last;
} calls;

static void series_add(struct series *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	s->v[s->n++] = v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank, as the report: the value at rank ceil(p * n / 100) */
static uint64_t pct(const uint64_t *sorted, size_t n, unsigned p)
{
	size_t r = (p * n + 99) / 100;

	return n ? sorted[r ? r - 1 : 0] : 0;
}

/* simcuda's: when the op the last synchronize waited for finished (0
   where the runtime is another, or nothing ran yet) */
static uint64_t sync_done(void)
{
	static uint64_t (*fn)(void);
	static int looked;

	if (!looked) {
		*(void **)&fn = dlsym(RTLD_DEFAULT, "simcuda_sync_done_ns");
		looked = 1;
	}
	return fn ? fn() : 0;
}

static void call_begin(int op)
{
	uint64_t c = thread_cpu(), t = mono();

	if (calls.have_last) {
		uint64_t w = t - calls.last_mono, cpu = c - calls.last_cpu;

		series_add(&calls.gapv, t);
		series_add(&calls.gapv, w);
		series_add(&calls.gapv, cpu);
		for (int k = 0; k < 2; k++) {
			struct gapstat *g = &calls.gap[k ? NOPS : op];

			g->count++;
			g->wall += w;
			g->cpu += cpu;
			if (w >= FLOOR_NS) {
				g->over_floor++;
				g->over_floor_cpu += cpu;
			}
		}
	}
	calls.t0 = mono();
	if (!calls.first)
		calls.first = calls.t0;
}

static int call_end(int op, int ret)
{
	uint64_t t = mono();

	if (ret)
		die("%s failed: %d (%s)", op_names[op], ret, cudaGetErrorString(ret));
	series_add(&calls.dur[op], t - calls.t0);
	series_add(&calls.seq, (uint64_t)op);
	series_add(&calls.seq, calls.t0);
	series_add(&calls.seq, t);
	series_add(&calls.seq, op == OP_STREAMSYNC || op == OP_DEVSYNC ? sync_done() : 0);
	calls.last_mono = t;
	calls.last_cpu = thread_cpu();
	calls.have_last = 1;
	return ret;
}

/* every CUDA call of the main thread goes through this */
#define CUDA(op, call) (call_begin(op), call_end(op, (call)))

static void emit_calls(void)
{
	for (int op = 0; op < NOPS; op++) {
		struct series *s = &calls.dur[op];
		uint64_t sum = 0;

		if (!s->n)
			continue;
		qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
		for (size_t i = 0; i < s->n; i++)
			sum += s->v[i];
		emit("{\"type\":\"op\",\"op\":\"%s\",\"count\":%zu,\"sum_ns\":%" PRIu64
		     ",\"min_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p95_ns\":%" PRIu64
		     ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "} ", op_names[op], s->n, sum,
		     s->v[0], pct(s->v, s->n, 50), pct(s->v, s->n, 95), pct(s->v, s->n, 99),
		     s->v[s->n - 1]);
	}
	for (int op = 0; op <= NOPS; op++) {
		const struct gapstat *g = &calls.gap[op];

		if (!g->count)
			continue;
		emit("{\"type\":\"gaps\",\"next_op\":\"%s\",\"count\":%" PRIu64 ",\"wall_ns\":%"
		     PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"offcpu_ns\":%" PRIu64 ",\"over_floor\":%"
		     PRIu64 ",\"over_floor_cpu_ns\":%" PRIu64 "} ",
		     op < NOPS ? op_names[op] : "all", g->count, g->wall, g->cpu,
		     g->wall > g->cpu ? g->wall - g->cpu : 0, g->over_floor, g->over_floor_cpu);
	}
	/* what the report calls the active time: first call to last return */
	emit("{\"type\":\"active\",\"active_ns\":%" PRIu64 "} ", calls.last_mono - calls.first);
	for (size_t i = 0; i + 3 < calls.seq.n; i += 4)
		emit("{\"type\":\"call\",\"op\":\"%s\",\"t0\":%" PRIu64 ",\"t1\":%" PRIu64
		     ",\"done\":%" PRIu64 "} ", op_names[calls.seq.v[i]], calls.seq.v[i + 1],
		     calls.seq.v[i + 2], calls.seq.v[i + 3]);
	/* each gap, so a check can take the steady state's alone */
	for (size_t i = 0; i + 2 < calls.gapv.n; i += 3)
		emit("{\"type\":\"gap\",\"t1\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"cpu_ns\":%"
		     PRIu64 "} ", calls.gapv.v[i], calls.gapv.v[i + 1], calls.gapv.v[i + 2]);
}

/* getrusage WHO, with the CLOCK_MONOTONIC times just before and after it:
   a context switch traced before t0_ns is in the counts, one after t1_ns is
   not. */
static void emit_rusage(const char *role, int who, long index, const char *extra)
{
	struct rusage ru;
	char comm[17] = "";
	uint64_t t0, t1;

	t0 = mono();
	getrusage(who, &ru);
	t1 = mono();
	prctl(PR_GET_NAME, comm);
	emit("{\"type\":\"rusage\",\"role\":\"%s\",\"index\":%ld,\"pid\":%d,\"tid\":%d,"
	     "\"comm\":\"%s\",\"nvcsw\":%ld,\"nivcsw\":%ld,\"minflt\":%ld,\"majflt\":%ld,"
	     "\"cpu_ns\":%" PRIu64 ",\"t0_ns\":%" PRIu64 ",\"t1_ns\":%" PRIu64 "%s} ", role,
	     index, (int)getpid(), (int)gettid(), comm, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_minflt,
	     ru.ru_majflt,
	     ts(who == RUSAGE_THREAD ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID), t0,
	     t1, extra ? extra : "");
}

/* The calling thread's time waiting on a run queue so far, from the
   scheduler's own accounting (/proc/thread-self/schedstat, field 2), or -1
   where the kernel keeps none (no CONFIG_SCHED_INFO). */
static int64_t run_delay_ns(void)
{
	unsigned long long on, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &on, &delay);
	fclose(f);
	return n == 2 ? (int64_t)delay : -1;
}

/* The parent process's pid, comm and CPU time so far (user + system, all its
   threads), from /proc/PPID/stat: where a recorder runs the workload, the
   most the workload can have waited behind it.  cpu_ns -1: not readable. */
static void emit_parent(void)
{
	char path[64], buf[1024], comm[32] = "", *open_paren, *close_paren;
	unsigned long long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t cpu = -1;
	pid_t ppid = getppid();
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)ppid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	/* "pid (comm) state ppid ...": utime and stime are fields 14 and 15,
	   the 12th and 13th after the comm's closing parenthesis */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (open_paren && close_paren && close_paren > open_paren) {
		snprintf(comm, sizeof(comm), "%.*s", (int)(close_paren - open_paren - 1),
			 open_paren + 1);
		if (sscanf(close_paren + 1,
			   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
			cpu = (int64_t)((ut + st) * (1000000000ULL / (uint64_t)(hz > 0 ? hz : 100)));
	}
	for (char *q = comm; *q; q++)	/* a name as JSON may hold it */
		if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
			*q = '_';
	emit("{\"type\":\"parent\",\"pid\":%d,\"comm\":\"%s\",\"cpu_ns\":%" PRId64 "} ",
	     (int)ppid, comm, cpu);
}

/* The machine's interrupt, softirq and steal time so far, from /proc/stat
   (all CPUs, ns): time a CPU spent that no thread's CPU clock counts. */
static uint64_t cpustat_irq(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		v[5] = v[6] = v[7] = 0;
	fclose(f);
	/* irq, softirq, steal */
	return (uint64_t)(v[5] + v[6] + v[7]) * (1000000000ULL / (uint64_t)(hz > 0 ? hz : 100));
}

/* ---- the model: the same for every mode --------------------------------- */

static cudaStream_t stream;
static void *dev_in, *dev_out;

/* host stubs: a kernel is named by its host function's address */
static void k_forward(void) {}
static void k_backward(void) {}
static void k_step(void) {}

static void launch(int i, unsigned grid)
{
	static void (*const stubs[3])(void) = { k_forward, k_backward, k_step };
	dim3 g = { grid, 1, 1 }, b = { 256, 1, 1 };
	void *args[2] = { &dev_in, &dev_out };

	CUDA(OP_LAUNCH, cudaLaunchKernel((const void *)(uintptr_t)stubs[i % 3], g, b, args, 0,
					 stream));
}

static void model_init(size_t in_bytes)
{
	CUDA(OP_SETDEV, cudaSetDevice(0));
	CUDA(OP_STREAMCREATE, cudaStreamCreate(&stream));
	CUDA(OP_MALLOC, cudaMalloc(&dev_in, in_bytes));
	CUDA(OP_MALLOC, cudaMalloc(&dev_out, 1 << 20));
}

static void model_fini(void)
{
	CUDA(OP_DEVSYNC, cudaDeviceSynchronize());
	CUDA(OP_FREE, cudaFree(dev_out));
	CUDA(OP_FREE, cudaFree(dev_in));
	CUDA(OP_STREAMDESTROY, cudaStreamDestroy(stream));
}

/* the dataset: rows x cols floats, in memory shared with any child */
static float *dataset_create(size_t rows, size_t cols)
{
	float *d = mmap(NULL, rows * cols * sizeof(float), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		die("cannot map the dataset: %s", strerror(errno));
	for (size_t i = 0; i < rows * cols; i++)
		d[i] = (float)(i % 1000) * 0.001f;
	return d;
}

/* ---- loader --------------------------------------------------------------- */

struct slot {
	sem_t full, empty;
	uint64_t post_ns;	/* when its worker posted it (CLOCK_MONOTONIC) */
	int pid;		/* that worker */
	char pad[64 - sizeof(uint64_t) - sizeof(int)];
};

struct shared {
	_Atomic long next;	/* the next batch a worker takes */
	_Atomic uint64_t starve_at;	/* CLOCK_MONOTONIC from which a batch
					   costs --work-us (0: from the start) */
	_Atomic int stop;	/* --loop-ms is over: take no more batches */
	struct slot slot[];
};

static void worker(long index, struct shared *sh, char *data, const float *ds, size_t nslots,
		   size_t bytes)
{
	size_t rows = (size_t)opt.rows, cols = (size_t)opt.cols, n = (size_t)opt.batch * cols;
	uint64_t build_ns = 0, seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)index;
	struct series posts = { 0 };	/* each post: post_ns, end_ns */
	long done = 0, b;
	char extra[128];

	prctl(PR_SET_NAME, "pt_data_worker");
	while ((b = atomic_fetch_add(&sh->next, 1)) < opt.steps) {
		struct slot *s = &sh->slot[b % (long)nslots];
		uint64_t t0;
		float *buf;

		while (sem_wait(&s->empty) < 0 && errno == EINTR)
			;
		if (atomic_load(&sh->stop))
			break;
		t0 = mono();
		/* collate: a fresh batch of random rows, then its transforms */
		buf = malloc(bytes);
		if (!buf)
			die("out of memory");
		for (size_t i = 0; i < (size_t)opt.batch; i++) {
			size_t r = xorshift(&seed) % rows;

			memcpy(buf + i * cols, ds + r * cols, cols * sizeof(float));
		}
		if (t0 >= atomic_load(&sh->starve_at))
			burn(buf, n, (uint64_t)opt.work_us * 1000);
		/* the hand-off */
		memcpy(data + (size_t)(b % (long)nslots) * bytes, buf, bytes);
		free(buf);
		build_ns += mono() - t0;
		done++;
		s->pid = getpid();
		series_add(&posts, s->post_ns = mono());
		sem_post(&s->full);
		series_add(&posts, mono());
	}
	for (size_t i = 0; i + 1 < posts.n; i += 2)
		emit("{\"type\":\"posted\",\"pid\":%d,\"post_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		     "} ", (int)getpid(), posts.v[i], posts.v[i + 1]);
	free(posts.v);
	snprintf(extra, sizeof(extra), ",\"batches\":%ld,\"build_ns\":%" PRIu64, done, build_ns);
	emit_rusage("worker", RUSAGE_SELF, index, extra);
	_exit(0);
}

/* The workers stop at their next slot, or after their next batch. */
static void loader_stop(struct shared *sh, size_t nslots)
{
	atomic_store(&sh->stop, 1);
	for (size_t i = 0; i < nslots; i++)
		for (long k = 0; k < opt.workers; k++)
			sem_post(&sh->slot[i].empty);
}

static void run_loader(void)
{
	size_t rows = (size_t)opt.rows, cols = (size_t)opt.cols;
	size_t bytes = (size_t)opt.batch * cols * sizeof(float);
	size_t nslots = (size_t)(opt.workers * opt.prefetch);
	size_t hdr = sizeof(struct shared) + nslots * sizeof(struct slot);
	struct series waits = { 0 }, each = { 0 };	/* each: t1, wait, blocked, pid */
	uint64_t blocked = 0, wake = 0, t_loop, loop_ns;
	struct { int pid; uint64_t count, ns; } by[64];
	const float *ds;
	struct shared *sh;
	char *data;
	pid_t pids[64];
	bool starved = false;

	if (opt.workers < 1 || opt.workers > 64)
		die("--workers must be 1..64");
	ds = dataset_create(rows, cols);
	sh = mmap(NULL, hdr + nslots * bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED)
		die("cannot map the slots: %s", strerror(errno));
	data = (char *)sh + hdr;
	for (size_t i = 0; i < nslots; i++) {
		sem_init(&sh->slot[i].full, 1, 0);
		sem_init(&sh->slot[i].empty, 1, 1);
	}
	memset(by, 0, sizeof(by));

	model_init(bytes);
	t_loop = mono();
	if (opt.starve_file)
		atomic_store(&sh->starve_at, UINT64_MAX);
	for (long k = 0; k < opt.workers; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			die("fork: %s", strerror(errno));
		if (!pids[k])
			worker(k, sh, data, ds, nslots, bytes);
		by[k].pid = pids[k];
	}
	for (long b = 0; b < opt.steps; b++) {
		struct slot *s = &sh->slot[b % (long)nslots];
		uint64_t t0 = mono(), t1;

		if ((opt.loop_ms >= 0 && t0 - t_loop >= (uint64_t)opt.loop_ms * 1000000) ||
		    (opt.stop_file && access(opt.stop_file, F_OK) == 0))
			break;
		/* said as it comes: a test awaits it while the recording runs */
		if (opt.starve_file && !starved && access(opt.starve_file, F_OK) == 0) {
			starved = true;
			atomic_store(&sh->starve_at, t0);
			emit("{\"type\":\"starve\",\"t_ns\":%" PRIu64 ",\"step\":%ld} ", t0, b);
		}
		while (sem_wait(&s->full) < 0 && errno == EINTR)
			;
		t1 = mono();
		series_add(&waits, t1 - t0);
		series_add(&each, t1);
		series_add(&each, t1 - t0);
		series_add(&each, s->post_ns > t0 ? s->post_ns - t0 : 0);
		series_add(&each, (uint64_t)s->pid);
		if (s->post_ns > t0) {
			blocked += s->post_ns - t0;
			wake += t1 > s->post_ns ? t1 - s->post_ns : 0;
			for (long k = 0; k < opt.workers; k++)
				if (by[k].pid == s->pid) {
					by[k].count++;
					by[k].ns += s->post_ns - t0;
				}
		}
		CUDA(OP_MEMCPY, cudaMemcpy(dev_in, data + (size_t)(b % (long)nslots) * bytes, bytes,
					   H2D));
		sem_post(&s->empty);
		for (long k = 0; k < opt.kernels; k++)
			launch((int)k, (unsigned)opt.grid);
		CUDA(OP_STREAMSYNC, cudaStreamSynchronize(stream));
	}
	loop_ns = mono() - t_loop;
	loader_stop(sh, nslots);
	/* each wait, so a check can take the steady state's alone */
	for (size_t i = 0; i + 3 < each.n; i += 4)
		emit("{\"type\":\"waited\",\"t1\":%" PRIu64 ",\"wait_ns\":%" PRIu64
		     ",\"blocked_ns\":%" PRIu64 ",\"pid\":%" PRIu64 "} ", each.v[i], each.v[i + 1],
		     each.v[i + 2], each.v[i + 3]);
	free(each.v);
	for (long k = 0; k < opt.workers; k++)
		while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR)
			;
	model_fini();

	{
		uint64_t sum = 0;
		size_t len = 0, cap = 64 + waits.n * 21 + (size_t)opt.workers * 80;
		char *list = malloc(cap), *wk = malloc((size_t)opt.workers * 80 + 8);

		if (!list || !wk)
			die("out of memory");
		for (size_t i = 0; i < waits.n; i++) {
			sum += waits.v[i];
			len += (size_t)snprintf(list + len, cap - len, "%s%" PRIu64, i ? "," : "",
						waits.v[i]);
		}
		len = 0;
		for (long k = 0; k < opt.workers; k++)
			len += (size_t)snprintf(wk + len, (size_t)opt.workers * 80 + 8 - len,
						"%s{\"pid\":%d,\"batches\":%" PRIu64 ",\"blocked_ns\":%"
						PRIu64 "}", k ? "," : "", by[k].pid, by[k].count,
						by[k].ns);
		qsort(waits.v, waits.n, sizeof(*waits.v), cmp_u64);
		emit("{\"type\":\"wait\",\"batches\":%zu,\"wait_ns\":%" PRIu64 ",\"blocked_ns\":%"
		     PRIu64 ",\"wake_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
		     ",\"max_ns\":%" PRIu64 ",\"woken_by\":[%s],\"waits_ns\":[%s]} ", waits.n, sum,
		     blocked, wake, pct(waits.v, waits.n, 50), pct(waits.v, waits.n, 99),
		     waits.v[waits.n - 1], wk, list);
		free(list);
		free(wk);
	}
	emit("{\"type\":\"loop\",\"loop_ns\":%" PRIu64 "} ", loop_ns);
}

/* ---- direct, healthy, gpubound: a pinned batch, no workers ---------------- */

static void run_direct(void)
{
	size_t rows = (size_t)opt.rows, cols = (size_t)opt.cols, batch = (size_t)opt.batch;
	size_t bytes = batch * cols * sizeof(float), per_epoch = rows / batch;
	float *ds = dataset_create(rows, cols), *shuf, *pinned;
	uint64_t seed = 42, t_loop;
	size_t *perm = malloc(rows * sizeof(*perm));

	/* the fix, done once: shuffle the rows into one contiguous copy, so a
	   batch is a slice */
	shuf = malloc(rows * cols * sizeof(float));
	if (!perm || !shuf)
		die("out of memory");
	for (size_t i = 0; i < rows; i++)
		perm[i] = i;
	for (size_t i = rows - 1; i > 0; i--) {
		size_t j = xorshift(&seed) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < rows; i++)
		memcpy(shuf + i * cols, ds + perm[i] * cols, cols * sizeof(float));
	free(perm);

	model_init(bytes);
	CUDA(OP_MALLOCHOST, cudaMallocHost((void **)&pinned, bytes));
	t_loop = mono();
	for (long b = 0; b < opt.steps; b++) {
		memcpy(pinned, shuf + ((size_t)b % per_epoch) * batch * cols, bytes);
		CUDA(OP_MEMCPYASYNC, cudaMemcpyAsync(dev_in, pinned, bytes, H2D, stream));
		for (long k = 0; k < opt.kernels; k++)
			launch((int)k, (unsigned)opt.grid);
		CUDA(OP_STREAMSYNC, cudaStreamSynchronize(stream));
	}
	emit("{\"type\":\"loop\",\"loop_ns\":%" PRIu64 "} ", mono() - t_loop);
	CUDA(OP_FREEHOST, cudaFreeHost(pinned));
	model_fini();
}

/* The batch lives in pinned memory and is reused; the host's own cost is a
   framework's per-op overhead before each launch (--host-us of CPU). */
/* One kernel of --stall-ms on the modelled device, and its synchronize: once. */
static void stall(void)
{
	const char *e = getenv("SIMCUDA_BLOCK_NS");
	uint64_t block = e && atoll(e) > 0 ? (uint64_t)atoll(e) : 1000, t0, t1;

	opt.stall_at_ms = -1;
	launch(0, (unsigned)((uint64_t)opt.stall_ms * 1000000 / block));
	t0 = mono();
	CUDA(OP_STREAMSYNC, cudaStreamSynchronize(stream));
	t1 = mono();
	emit("{\"type\":\"stall\",\"t0\":%" PRIu64 ",\"t1\":%" PRIu64 "} ", t0, t1);
}

static void run_healthy(void)
{
	size_t n = (size_t)opt.batch * (size_t)opt.cols;
	size_t bytes = n * sizeof(float);
	float *pinned, scratch[256];
	uint64_t t_loop;

	memset(scratch, 0, sizeof(scratch));
	model_init(bytes);
	CUDA(OP_MALLOCHOST, cudaMallocHost((void **)&pinned, bytes));
	for (size_t i = 0; i < n; i++)
		pinned[i] = (float)(i % 1000) * 0.001f;
	t_loop = mono();
	/* said as it comes: the recording runs from here (the command starts
	   once every probe is armed) */
	emit("{\"type\":\"begin\",\"t_ns\":%" PRIu64 "} ", t_loop);
	for (long b = 0; b < opt.steps; b++) {
		if (opt.loop_ms >= 0 && mono() - t_loop >= (uint64_t)opt.loop_ms * 1000000)
			break;
		if (opt.stall_at_ms >= 0 && mono() - t_loop >= (uint64_t)opt.stall_at_ms * 1000000)
			stall();
		CUDA(OP_MEMCPYASYNC, cudaMemcpyAsync(dev_in, pinned, bytes, H2D, stream));
		for (long k = 0; k < opt.kernels; k++) {
			burn(scratch, 256, (uint64_t)opt.host_us * 1000);
			launch((int)k, (unsigned)opt.grid);
		}
		CUDA(OP_STREAMSYNC, cudaStreamSynchronize(stream));
	}
	emit("{\"type\":\"loop\",\"loop_ns\":%" PRIu64 "} ", mono() - t_loop);
	CUDA(OP_FREEHOST, cudaFreeHost(pinned));
	model_fini();
}

/* ---- pagestorm ------------------------------------------------------------ */

static void run_pagestorm(void)
{
	size_t bytes = (size_t)opt.mb << 20;
	uint64_t touch_ns = 0, touch_cpu = 0, unmap_ns = 0, flt = 0, t_loop;
	struct series steps = { 0 };	/* each step's touching ended, its faults */
	long page = sysconf(_SC_PAGESIZE);

	model_init(bytes);
	t_loop = mono();
	for (long b = 0; b < opt.steps; b++) {
		struct rusage r0, r1;
		uint64_t t0, c0, t1;
		char *p;

		getrusage(RUSAGE_THREAD, &r0);
		t0 = mono();
		c0 = thread_cpu();
		/* what malloc does above its mmap threshold: fresh pages each time */
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		/* 4 KiB faults whatever the machine's transparent huge page
		   setting, so the storm is the same everywhere */
		madvise(p, bytes, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < bytes; i += (size_t)page)
			p[i] = (char)i;
		touch_cpu += thread_cpu() - c0;
		touch_ns += mono() - t0;
		getrusage(RUSAGE_THREAD, &r1);
		flt += (uint64_t)(r1.ru_minflt - r0.ru_minflt);
		series_add(&steps, mono());
		series_add(&steps, (uint64_t)(r1.ru_minflt - r0.ru_minflt));

		CUDA(OP_MEMCPY, cudaMemcpy(dev_in, p, bytes, H2D));
		launch((int)b, (unsigned)opt.grid);
		CUDA(OP_STREAMSYNC, cudaStreamSynchronize(stream));
		t1 = mono();
		munmap(p, bytes);
		unmap_ns += mono() - t1;
	}
	emit("{\"type\":\"loop\",\"loop_ns\":%" PRIu64 "} ", mono() - t_loop);
	for (size_t i = 0; i + 1 < steps.n; i += 2)
		emit("{\"type\":\"step\",\"t1\":%" PRIu64 ",\"bytes\":%zu,\"minflt\":%" PRIu64
		     "} ", steps.v[i], bytes, steps.v[i + 1]);
	free(steps.v);
	emit("{\"type\":\"storm\",\"steps\":%ld,\"bytes\":%" PRIu64 ",\"minflt\":%" PRIu64
	     ",\"touch_ns\":%" PRIu64 ",\"touch_cpu_ns\":%" PRIu64 ",\"unmap_ns\":%" PRIu64 "} ",
	     opt.steps, (uint64_t)bytes * (uint64_t)opt.steps, flt, touch_ns, touch_cpu,
	     unmap_ns);
	model_fini();
}

/* ---- hog ------------------------------------------------------------------ */

/* Spins for --seconds, or with 0 until killed; never outlives its parent
   (the test or script that started it, however that ends). */
static void run_hog(void)
{
	uint64_t end = mono() + (uint64_t)(opt.seconds * 1e9);
	pid_t parent = getppid();
	volatile uint64_t x = 0;

	prctl(PR_SET_NAME, "noisy_hog");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		exit(1);
	while (!opt.seconds || mono() < end)
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i;
	exit(0);
}

/* ---- main ----------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: simtrain loader|direct|healthy|pagestorm|gpubound|hog "
		"[-o FILE] [--steps N] [--workers N] [--batch ROWS] [--rows N] [--cols N] "
		"[--work-us US] [--host-us US] [--kernels N] [--grid BLOCKS] [--mb MB] "
		"[--prefetch N] [--seconds S] [--loop-ms MS] [--starve-file PATH]\n"
		"       [--stall-at-ms MS --stall-ms MS] [--stop-file PATH]\n");
	exit(2);
}

static long num(const char *s, const char *name)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("%s: not a number >= 0: '%s'", name, s);
	return v;
}

#define DEF(field, v) do { if (opt.field < 0) opt.field = (v); } while (0)

/* Each mode's defaults for what the options left unset; their checks. */
static void defaults(void)
{
	/* the same data and model for loader and direct, so they compare */
	if (!strcmp(opt.mode, "loader") || !strcmp(opt.mode, "direct")) {
		/* --loop-ms alone ends the loop */
		DEF(steps, opt.loop_ms >= 0 ? 100000000 : 150);
		DEF(kernels, 3);
		DEF(grid, 500);
		/*
		 * A batch costs a worker more CPU than a step costs the main
		 * thread wherever it runs: 2-3 ms here, but 10 ms and more on an
		 * emulated CPU (a QEMU guest of make check-kernels), where each
		 * probe's trap costs hundreds of us and the guest shares its
		 * host.  At 8 ms a batch the workers kept up there, and the run
		 * was CPU-bound, not starved.
		 */
		if (!strcmp(opt.mode, "loader"))
			DEF(work_us, 40000);
	} else if (!strcmp(opt.mode, "healthy")) {
		DEF(steps, opt.loop_ms >= 0 ? 100000000 : 200);
		DEF(kernels, 20);
		DEF(grid, 400);
		DEF(host_us, 100);
	} else if (!strcmp(opt.mode, "pagestorm")) {
		DEF(steps, 40);
		DEF(kernels, 1);
		DEF(grid, 1000);
	} else if (!strcmp(opt.mode, "gpubound")) {
		DEF(steps, 80);
		DEF(kernels, 1);
		DEF(grid, 20000);
	} else if (!strcmp(opt.mode, "hog")) {
		run_hog();
	} else {
		usage();
	}
	DEF(rows, 200000);
	DEF(cols, 100);
	DEF(batch, 256);
	DEF(workers, 4);
	DEF(prefetch, 2);
	DEF(work_us, 0);
	DEF(host_us, 0);
	DEF(mb, 32);
	if (opt.rows < 1 || opt.cols < 1 || opt.batch < 1 || opt.batch > opt.rows ||
	    opt.steps < 1 || opt.grid < 1 || opt.prefetch < 1 || opt.mb < 1)
		die("--rows, --cols, --batch (at most --rows), --steps, --grid, --prefetch and "
		    "--mb must be at least 1");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "steps", 1, NULL, 's' }, { "workers", 1, NULL, 'w' }, { "batch", 1, NULL, 'b' },
		{ "rows", 1, NULL, 'r' }, { "cols", 1, NULL, 'c' }, { "work-us", 1, NULL, 'u' },
		{ "host-us", 1, NULL, 'h' }, { "kernels", 1, NULL, 'k' }, { "grid", 1, NULL, 'g' },
		{ "mb", 1, NULL, 'm' }, { "prefetch", 1, NULL, 'p' }, { "seconds", 1, NULL, 'S' },
		{ "loop-ms", 1, NULL, 'L' }, { "starve-file", 1, NULL, 'A' },
		{ "stall-at-ms", 1, NULL, 'T' }, { "stall-ms", 1, NULL, 'D' },
		{ "stop-file", 1, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t t_start = mono(), irq_start = cpustat_irq();
	int c;

	if (argc < 2 || argv[1][0] == '-')
		usage();
	opt.mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			out_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
			if (out_fd < 0)
				die("cannot open '%s': %s", optarg, strerror(errno));
			break;
		case 's': opt.steps = num(optarg, "--steps"); break;
		case 'w': opt.workers = num(optarg, "--workers"); break;
		case 'b': opt.batch = num(optarg, "--batch"); break;
		case 'r': opt.rows = num(optarg, "--rows"); break;
		case 'c': opt.cols = num(optarg, "--cols"); break;
		case 'u': opt.work_us = num(optarg, "--work-us"); break;
		case 'h': opt.host_us = num(optarg, "--host-us"); break;
		case 'k': opt.kernels = num(optarg, "--kernels"); break;
		case 'g': opt.grid = num(optarg, "--grid"); break;
		case 'm': opt.mb = num(optarg, "--mb"); break;
		case 'p': opt.prefetch = num(optarg, "--prefetch"); break;
		case 'S': opt.seconds = (double)num(optarg, "--seconds"); break;
		case 'L': opt.loop_ms = num(optarg, "--loop-ms"); break;
		case 'A': opt.starve_file = optarg; break;
		case 'T': opt.stall_at_ms = num(optarg, "--stall-at-ms"); break;
		case 'D': opt.stall_ms = num(optarg, "--stall-ms"); break;
		case 'F': opt.stop_file = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	/* the count so far: what the kernel counted before the trace began
	   (the recorder's child waits on a pipe), the checks take off */
	emit_rusage("start", RUSAGE_THREAD, -1, NULL);

	defaults();

	if (!strcmp(opt.mode, "loader"))
		run_loader();
	else if (!strcmp(opt.mode, "direct"))
		run_direct();
	else if (!strcmp(opt.mode, "healthy") || !strcmp(opt.mode, "gpubound"))
		run_healthy();
	else
		run_pagestorm();

	emit_calls();
	emit("{\"type\":\"cpustat\",\"irq_ns\":%" PRIu64 ",\"tick_ns\":%ld} ",
	     cpustat_irq() - irq_start, 1000000000L / sysconf(_SC_CLK_TCK));
	emit_parent();
	emit_rusage("main", RUSAGE_SELF, -1, NULL);
	emit_rusage("feeder", RUSAGE_THREAD, -1, NULL);
	/* the run-queue wait the kernel counted: what a report's CPU
	   contention on this thread may not exceed */
	emit("{\"type\":\"schedstat\",\"tid\":%d,\"run_delay_ns\":%" PRId64 "} ", (int)gettid(),
	     run_delay_ns());
	emit("{\"type\":\"run\",\"mode\":\"%s\",\"pid\":%d,\"feeder_tid\":%d,\"steps\":%ld,"
	     "\"workers\":%ld,\"batch\":%ld,\"cols\":%ld,\"work_us\":%ld,\"host_us\":%ld,"
	     "\"kernels\":%ld,\"grid\":%ld,\"mb\":%ld,\"cpus\":%ld,\"wall_ns\":%" PRIu64 "} ",
	     opt.mode, (int)getpid(), (int)gettid(), opt.steps,
	     strcmp(opt.mode, "loader") ? 0 : opt.workers, opt.batch, opt.cols, opt.work_us,
	     opt.host_us, opt.kernels, opt.grid, opt.mb, sysconf(_SC_NPROCESSORS_ONLN),
	     mono() - t_start);
	return 0;
}
