// SPDX-License-Identifier: MIT
/*
 * nvmlcheck: runs a known device schedule on simcuda and holds what an NVML
 * library says of it, read from another process as the recorder's helper
 * reads it, against the truth simcuda logs (SIMCUDA_BUSY_LOG).
 *
 *   nvmlcheck LIBNVML            e.g. build/simcuda/libnvidia-ml.so.1
 *
 * Two processes share the device: this one (A) and a worker (B), forked
 * before either calls CUDA, each launching CYCLES kernels of KERNEL_MS, one
 * every CYCLE_MS, B KERNEL_MS / 3 after A.  Their kernels overlap, so the
 * device is busy 80% of each cycle (the union), not 120% (the sum).  B
 * allocates device memory and leaves with _exit(), its process entry not
 * cleared: a dead pid NVML must skip.  Then a child of A (C) dlopen()s
 * LIBNVML and checks, against the truth log and the schedule:
 *   - nvmlInit_v2 says NVML_ERROR_DRIVER_NOT_LOADED without a driver;
 *   - GPU utilization samples lie in [0, 100], P apart, increasing; their
 *     mean over the periods inside the schedule is within TOLERANCE points
 *     of the truth's kernel busy share there;
 *   - lastSeenTimeStamp returns only newer samples;
 *   - the running processes are A, with its memory, and not B; the memory
 *     used is A's alone; the idle device says so after the schedule.
 * Exit 0 and one line of numbers when all hold; 1 and a one-line reason
 * when one does not; 2 on a usage error.  The state file and the log go to
 * a directory of its own under $TMPDIR (default /tmp), removed at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the schedule -------------------------------------------------------- */

#define CYCLES		20
#define CYCLE_MS	50
#define KERNEL_MS	30
#define PERIOD_US	100000		/* SIMCUDA_NVML_PERIOD_US: NVML's default here */
#define TOLERANCE	5.0		/* points of utilization */
#define MEM_MB		2048		/* SIMCUDA_MEM_MB */
#define A_MB		64		/* device memory A holds */
#define B_MB		32		/* B's, left behind by its death */
#define SETTLE_MS	20		/* simnvml's: a period is a sample 20 ms after */

typedef struct { unsigned x, y, z; } dim3;
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
		     void *stream);
int cudaDeviceSynchronize(void);

/* ---- NVML, declared as nvml.h does -------------------------------------- */

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	unsigned long long timeStamp;
	union {
		double d;
		unsigned int ui;
		unsigned long long ull;
	} v;
} nvmlSample_t;
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_GPU_UTILIZATION_SAMPLES = 1,
	NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	NVML_CLOCK_SM = 1,
};

static struct {
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*count)(unsigned *);
	int (*handle)(unsigned, nvmlDevice_t *);
	int (*samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned *, nvmlSample_t *);
	int (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
	int (*memory)(nvmlDevice_t, nvmlMemory_t *);
	int (*clock)(nvmlDevice_t, int, unsigned *);
	int (*throttle)(nvmlDevice_t, unsigned long long *);
	int (*processes)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
} nvml;

/* ---- helpers ------------------------------------------------------------ */

static char dir[4096], state_path[4200], log_path[4200];
static pid_t main_pid;			/* A, which alone removes DIR */
static pid_t worker;			/* B */
static uint64_t truth_end;		/* the last kernel's end, CLOCK_MONOTONIC */

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
static int64_t real_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000LL +
	       ((int64_t)r.tv_nsec - (int64_t)m.tv_nsec);
}

/* One line on stderr and exit 1: the check failed. */
__attribute__((noreturn, format(printf, 1, 2)))
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("nvmlcheck: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- the device's schedule (A and B) ------------------------------------ */

static void kernel_stub(void)
{
}

/* CYCLES kernels of KERNEL_MS, the i-th launched at T0 + i * CYCLE_MS. */
static void run_schedule(uint64_t t0)
{
	dim3 grid = { KERNEL_MS, 1, 1 }, block = { 1, 1, 1 };	/* 1 ms a block */

	for (int i = 0; i < CYCLES; i++) {
		sleep_until(t0 + (uint64_t)i * CYCLE_MS * 1000000ULL);
		if (cudaLaunchKernel((const void *)(uintptr_t)kernel_stub, grid, block, NULL, 0,
				     NULL))
			fail("cudaLaunchKernel failed in process %d", (int)getpid());
	}
	if (cudaDeviceSynchronize())
		fail("cudaDeviceSynchronize failed in process %d", (int)getpid());
}

/* B: its share of the schedule, then a death that clears nothing. */
static void run_worker(uint64_t t0)
{
	void *p;

	if (cudaMalloc(&p, (size_t)B_MB << 20))
		_exit(3);
	run_schedule(t0 + KERNEL_MS / 3 * 1000000ULL);
	_exit(0);
}

/* ---- the truth: simcuda's log ------------------------------------------- */

struct span {
	uint64_t a, b;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* The kernels of the log, merged into their union (sorted, disjoint) in
   *OUT (the caller frees it); their count.  *SUM: their time summed. */
static size_t truth_read(struct span **out, uint64_t *sum)
{
	FILE *f = fopen(log_path, "r");
	struct span *v = NULL;
	size_t n = 0, cap = 0, m = 0;
	unsigned long long a, b;
	char kind[16];

	if (!f)
		fail("cannot open the busy log '%s': %s", log_path, strerror(errno));
	*sum = 0;
	while (fscanf(f, "%llu %llu %15s", &a, &b, kind) == 3) {
		if (strcmp(kind, "kernel"))
			continue;
		if (n == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v))))
			fail("out of memory");
		v[n++] = (struct span){ a, b };
		*sum += b - a;
	}
	fclose(f);
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && v[i].a <= v[m - 1].b)
			v[m - 1].b = v[i].b > v[m - 1].b ? v[i].b : v[m - 1].b;
		else
			v[m++] = v[i];
	}
	*out = v;
	return m;
}

/* Busy time of the union U inside [a, b). */
static uint64_t truth_busy(const struct span *u, size_t n, uint64_t a, uint64_t b)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		if (u[i].b > a && u[i].a < b)
			t += (u[i].b < b ? u[i].b : b) - (u[i].a > a ? u[i].a : a);
	return t;
}

/* ---- the reader (C) ------------------------------------------------------ */

static void *sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f)
		fail("'%s' exports no %s", "the NVML library", name);
	return f;
}

static void nvml_load(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		fail("cannot dlopen '%s': %s", path, dlerror());
	*(void **)&nvml.init = sym(lib, "nvmlInit_v2");
	*(void **)&nvml.shutdown = sym(lib, "nvmlShutdown");
	*(void **)&nvml.error_string = sym(lib, "nvmlErrorString");
	*(void **)&nvml.count = sym(lib, "nvmlDeviceGetCount_v2");
	*(void **)&nvml.handle = sym(lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&nvml.samples = sym(lib, "nvmlDeviceGetSamples");
	*(void **)&nvml.utilization = sym(lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&nvml.memory = sym(lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&nvml.clock = sym(lib, "nvmlDeviceGetClockInfo");
	*(void **)&nvml.throttle = sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&nvml.processes = sym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
}

/* Fails unless R is WANT, naming WHAT. */
static void expect(int r, int want, const char *what)
{
	if (r != want)
		fail("%s returned %d (%s), not %d", what, r, nvml.error_string(r), want);
}

/* Before nvmlInit nothing answers; without a driver (SIMCUDA_NVML_NO_DRIVER)
   nvmlInit fails and makes no state file. */
static nvmlDevice_t check_init(void)
{
	char absent[4300];
	nvmlDevice_t dev;
	unsigned n;

	expect(nvml.count(&n), NVML_ERROR_UNINITIALIZED, "nvmlDeviceGetCount_v2 before init");
	snprintf(absent, sizeof(absent), "%s/absent", dir);
	setenv("SIMCUDA_NVML", absent, 1);
	setenv("SIMCUDA_NVML_NO_DRIVER", "1", 1);
	expect(nvml.init(), NVML_ERROR_DRIVER_NOT_LOADED, "nvmlInit_v2 without a driver");
	if (access(absent, F_OK) == 0)
		fail("nvmlInit_v2 without a driver made %s", absent);
	unsetenv("SIMCUDA_NVML_NO_DRIVER");
	setenv("SIMCUDA_NVML", state_path, 1);
	expect(nvml.init(), NVML_SUCCESS, "nvmlInit_v2");
	expect(nvml.count(&n), NVML_SUCCESS, "nvmlDeviceGetCount_v2");
	if (n != 1)
		fail("%u devices, not 1", n);
	expect(nvml.handle(0, &dev), NVML_SUCCESS, "nvmlDeviceGetHandleByIndex_v2(0)");
	return dev;
}

/* All the GPU utilization samples after LAST into *OUT (the caller frees
   it): their count, 0 when NVML says none (NVML_ERROR_NOT_FOUND). */
static unsigned samples_get(nvmlDevice_t dev, unsigned long long last, nvmlSample_t **out)
{
	unsigned n = 0;
	int type = -1, r;

	r = nvml.samples(dev, NVML_GPU_UTILIZATION_SAMPLES, last, &type, &n, NULL);
	if (r == NVML_ERROR_NOT_FOUND)
		return 0;
	expect(r, NVML_SUCCESS, "nvmlDeviceGetSamples(samples NULL)");
	if (!n || !(*out = calloc(n, sizeof(**out))))
		fail("nvmlDeviceGetSamples(samples NULL) says %u samples", n);
	expect(nvml.samples(dev, NVML_GPU_UTILIZATION_SAMPLES, last, &type, &n, *out),
	       NVML_SUCCESS, "nvmlDeviceGetSamples");
	if (type != NVML_VALUE_TYPE_UNSIGNED_INT)
		fail("sample value type %d, not unsigned int", type);
	return n;
}

/* Each sample in [0, 100], after LAST, the timestamps P apart. */
static void check_shape(const nvmlSample_t *s, unsigned n, unsigned long long last)
{
	for (unsigned i = 0; i < n; i++) {
		if (s[i].v.ui > 100)
			fail("sample %u of %u is %u%%", i, n, s[i].v.ui);
		if (s[i].timeStamp <= last)
			fail("sample %u at %llu us is not after lastSeenTimeStamp %llu", i,
			     s[i].timeStamp, last);
		/* one call takes one offset to CLOCK_REALTIME: exactly P apart */
		if (i && (s[i].timeStamp - s[i - 1].timeStamp + 2 < PERIOD_US ||
			  s[i].timeStamp - s[i - 1].timeStamp > PERIOD_US + 2))
			fail("samples %u and %u are %lld us apart, not %d", i - 1, i,
			     (long long)(s[i].timeStamp - s[i - 1].timeStamp), PERIOD_US);
	}
}

/* The samples' mean over the periods inside the schedule against the
   truth's busy share there; TOLERANCE points at most apart. */
static void check_mean(const nvmlSample_t *s, unsigned n, char *summary, size_t size)
{
	const uint64_t p = PERIOD_US * 1000ULL;
	int64_t off = real_offset();
	struct span *u;
	uint64_t sum, busy = 0;
	size_t nu = truth_read(&u, &sum);
	unsigned used = 0, total = 0;
	double mean, truth;

	if (!nu)
		fail("the busy log '%s' has no kernel", log_path);
	truth_end = u[nu - 1].b;
	for (unsigned i = 0; i < n; i++) {
		/* the period this sample ends, on CLOCK_MONOTONIC */
		uint64_t b = (uint64_t)((int64_t)s[i].timeStamp * 1000 - off);
		uint64_t a;

		b = (b + p / 2) / p * p;
		a = b - p;
		if (a < u[0].a || b > u[nu - 1].b)
			continue;
		busy += truth_busy(u, nu, a, b);
		total += s[i].v.ui;
		used++;
	}
	if (used < 5)
		fail("only %u samples inside the schedule, of %u", used, n);
	mean = (double)total / used;
	truth = 100.0 * (double)busy / (double)(used * p);
	if (mean < truth - TOLERANCE || mean > truth + TOLERANCE)
		fail("GPU utilization samples average %.1f%% over %u periods, the truth %.1f%%", mean,
		     used, truth);
	snprintf(summary, size,
		 "%u samples inside the schedule: mean %.1f%%, truth %.1f%% (the kernels' sum "
		 "%.0f%% of their span)", used, mean, truth,
		 100.0 * (double)sum / (double)(u[nu - 1].b - u[0].a));
	free(u);
}

/* A second call with a timestamp returns only what came after it. */
static void check_last_seen(nvmlDevice_t dev, const nvmlSample_t *s, unsigned n)
{
	nvmlSample_t *t = NULL;
	unsigned mid = n / 2, m;

	m = samples_get(dev, s[mid].timeStamp, &t);
	check_shape(t, m, s[mid].timeStamp);
	if (m < n - mid - 1)
		fail("after sample %u of %u, %u samples came back, not %u or more", mid, n, m,
		     n - mid - 1);
	if (m && (t[0].timeStamp + 2 < s[mid + 1].timeStamp ||
		  t[0].timeStamp > s[mid + 1].timeStamp + 2))
		fail("after sample %u the next is at %llu us, not %llu", mid, t[0].timeStamp,
		     s[mid + 1].timeStamp);
	free(t);
	/* a period later there is one more, and only that */
	usleep(PERIOD_US + 10000);
	t = NULL;
	m = samples_get(dev, s[n - 1].timeStamp, &t);
	if (!m)
		fail("no sample after the last one a period later");
	check_shape(t, m, s[n - 1].timeStamp);
	free(t);
}

/* A runs with its memory, B is dead. */
static void check_processes(nvmlDevice_t dev)
{
	nvmlProcessInfo_t p[8];
	unsigned n = 0;
	nvmlMemory_t m;
	int found = 0;

	expect(nvml.processes(dev, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE,
	       "nvmlDeviceGetComputeRunningProcesses_v3(0)");
	n = 8;
	expect(nvml.processes(dev, &n, p), NVML_SUCCESS, "nvmlDeviceGetComputeRunningProcesses_v3");
	for (unsigned i = 0; i < n; i++) {
		if (p[i].pid == (unsigned)worker)
			fail("the dead worker %d is among the running processes", (int)worker);
		if (p[i].pid == (unsigned)getppid() && p[i].usedGpuMemory == (unsigned long long)A_MB << 20)
			found = 1;
	}
	if (!found)
		fail("process %d with %d MiB is not among the %u running", (int)getppid(), A_MB, n);
	expect(nvml.memory(dev, &m), NVML_SUCCESS, "nvmlDeviceGetMemoryInfo");
	if (m.total != (unsigned long long)MEM_MB << 20 || m.used != (unsigned long long)A_MB << 20 ||
	    m.free != m.total - m.used)
		fail("memory total %llu used %llu free %llu, not %d MiB with %d used", m.total,
		     m.used, m.free, MEM_MB, A_MB);
}

/* Once a whole period without a kernel is a sample, the device is idle. */
static void check_idle(nvmlDevice_t dev)
{
	const uint64_t p = PERIOD_US * 1000ULL;
	unsigned long long reasons;
	nvmlUtilization_t u;
	unsigned mhz;

	sleep_until(truth_end + 2 * p + (SETTLE_MS + 10) * 1000000ULL);
	expect(nvml.utilization(dev, &u), NVML_SUCCESS, "nvmlDeviceGetUtilizationRates");
	expect(nvml.throttle(dev, &reasons), NVML_SUCCESS,
	       "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (u.gpu || u.memory || reasons != 1)
		fail("the idle device says gpu %u%%, memory %u%%, throttle reasons %#llx", u.gpu,
		     u.memory, reasons);
	expect(nvml.clock(dev, NVML_CLOCK_SM, &mhz), NVML_SUCCESS, "nvmlDeviceGetClockInfo");
}

/* C: every check, then exit 0 with the numbers. */
static void run_reader(const char *lib)
{
	char summary[256];
	nvmlSample_t *s = NULL;
	nvmlDevice_t dev;
	unsigned n;

	nvml_load(lib);
	dev = check_init();
	n = samples_get(dev, 0, &s);
	if (n < 2)
		fail("%u GPU utilization samples after a schedule of %d ms", n, CYCLES * CYCLE_MS);
	check_shape(s, n, 0);
	check_mean(s, n, summary, sizeof(summary));
	check_processes(dev);
	check_last_seen(dev, s, n);
	check_idle(dev);
	expect(nvml.shutdown(), NVML_SUCCESS, "nvmlShutdown");
	printf("nvmlcheck: ok: %u samples of %d ms; %s\n", n, PERIOD_US / 1000, summary);
	free(s);
	exit(0);
}

/* ---- A ------------------------------------------------------------------ */

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nvmlcheck.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		fail("cannot make a directory in '%s': %s", tmp && *tmp ? tmp : "/tmp",
		     strerror(errno));
	snprintf(state_path, sizeof(state_path), "%s/state", dir);
	snprintf(log_path, sizeof(log_path), "%s/busy.log", dir);
	/* read by simcuda at its first call, and by the NVML library */
	setenv("SIMCUDA_NVML", state_path, 1);
	setenv("SIMCUDA_BUSY_LOG", log_path, 1);
	setenv("SIMCUDA_BLOCK_NS", "1000000", 1);
	setenv("SIMCUDA_MEM_MB", "2048", 1);
	setenv("SIMCUDA_NVML_PERIOD_US", "100000", 1);
}

static void cleanup(void)
{
	/* B and C inherit the handler and exit before A is done */
	if (getpid() != main_pid)
		return;
	unlink(state_path);
	unlink(log_path);
	rmdir(dir);
}

/* Waits for PID; its exit status, 1 when it died of a signal. */
static int wait_for(pid_t pid, const char *who)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid for the %s: %s", who, strerror(errno));
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "nvmlcheck: the %s died of signal %d\n", who, WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	uint64_t t0;
	pid_t reader;
	void *mem;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: nvmlcheck LIBNVML\n");
		return 2;
	}
	main_pid = getpid();
	setup();
	atexit(cleanup);
	/* both start on the next 10 ms, after B had time to start its device */
	t0 = (mono_ns() / 10000000ULL + 5) * 10000000ULL;
	worker = fork();
	if (worker < 0)
		fail("fork: %s", strerror(errno));
	if (!worker)
		run_worker(t0);
	if (cudaMalloc(&mem, (size_t)A_MB << 20))
		fail("cudaMalloc of %d MiB failed", A_MB);
	run_schedule(t0);
	if ((rc = wait_for(worker, "worker")))
		fail("the worker exited %d", rc);
	/* the last period of the schedule becomes a sample */
	usleep(PERIOD_US + SETTLE_MS * 1000 + 20000);
	fflush(NULL);
	reader = fork();
	if (reader < 0)
		fail("fork: %s", strerror(errno));
	if (!reader)
		run_reader(argv[1]);
	rc = wait_for(reader, "reader");
	cudaFree(mem);
	return rc ? 1 : 0;
}
