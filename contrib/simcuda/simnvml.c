// SPDX-License-Identifier: MIT
/*
 * simnvml: a stand-in NVML, built as libnvidia-ml.so.1, for the device that
 * simcuda models.  It reads the state file simcuda's processes write
 * (simnvml.h), so it works from any process of the same user, as NVML works
 * from any process on a machine with a GPU.  One device, index 0.
 *
 * The driver's utilization samples are computed from the busy intervals
 * when asked: sample k covers [k P, (k + 1) P) of CLOCK_MONOTONIC, P being
 * SIMCUDA_NVML_PERIOD_US, and says the share of it during which at least
 * one kernel ran (the union of every process's intervals, not their sum).
 * A period is a sample once it ended SIMNVML_LAG_NS ago (the device thread
 * publishes an interval when it takes the op, a wake-up after it was
 * submitted), and the last SAMPLES_KEPT of them are kept, as the driver's
 * buffer keeps.  See README.md, "NVML".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "simnvml.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the API, declared as nvml.h does, without it ----------------------- */

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlSamplingType_enum {
	NVML_TOTAL_POWER_SAMPLES = 0,
	NVML_GPU_UTILIZATION_SAMPLES = 1,
	NVML_MEMORY_UTILIZATION_SAMPLES = 2,
} nvmlSamplingType_t;

typedef enum nvmlValueType_enum {
	NVML_VALUE_TYPE_DOUBLE = 0,
	NVML_VALUE_TYPE_UNSIGNED_INT = 1,
} nvmlValueType_t;

typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlSample_st {
	unsigned long long timeStamp;	/* CLOCK_REALTIME, µs */
	nvmlValue_t sampleValue;
} nvmlSample_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE	32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE	16

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

#define nvmlClocksThrottleReasonGpuIdle	0x0000000000000001ULL

typedef enum nvmlPcieUtilCounter_enum {
	NVML_PCIE_UTIL_TX_BYTES = 0,
	NVML_PCIE_UTIL_RX_BYTES = 1,
} nvmlPcieUtilCounter_t;

/* nvmlProcessInfo_v2_t, which is also nvmlProcessInfo_t (v3) */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

#define API __attribute__((visibility("default")))

API nvmlReturn_t nvmlInit_v2(void);
API nvmlReturn_t nvmlInit(void);
API nvmlReturn_t nvmlShutdown(void);
API const char *nvmlErrorString(nvmlReturn_t result);
API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
API nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
				      unsigned long long lastSeenTimeStamp,
				      nvmlValueType_t *sampleValType, unsigned int *sampleCount,
				      nvmlSample_t *samples);
API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
					       nvmlUtilization_t *utilization);
API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
					unsigned int *clock);
API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
							   unsigned long long *clocksThrottleReasons);
API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
					     unsigned int *value);
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
							 unsigned int *infoCount,
							 nvmlProcessInfo_t *infos);
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
							 unsigned int *infoCount,
							 nvmlProcessInfo_t *infos);

/* ---- the device and its model ------------------------------------------- */

#define SAMPLES_KEPT	120		/* the driver's buffer */
#define PERIOD_US_DEF	100000
#define SM_MHZ		1980		/* an H100 SXM's boost clock */
#define MEM_MHZ		2619
#define MEM_MB_DEF	16384		/* simcuda's SIMCUDA_MEM_MB default */

#define DEVICE_NAME	"simcuda modelled GPU"
#define DEVICE_UUID	"GPU-51dc0da0-0000-4000-8000-000000000000"

struct nvmlDevice_st {
	int index;
};

static struct nvmlDevice_st dev0;

static struct {
	pthread_mutex_t lock;
	unsigned refs;				/* nvmlInit not yet shut down */
	const struct simnvml_state *st;		/* mapped while refs > 0 */
	uint64_t period_ns;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Busy time on the device: [a, b), CLOCK_MONOTONIC ns. */
struct span {
	uint64_t a, b;
};

/* A busy interval as read from the ring. */
struct interval {
	struct span t;
	uint64_t bytes;
	uint32_t kind;
};

/*
 * What one call sees: the periods k0 to k1 (none when k1 < k0), those of
 * the samples the driver holds now that it asks for, and the intervals
 * that reach into them.
 */
struct reading {
	uint64_t p;				/* the period, ns */
	int64_t k0, k1;
	int64_t real_off;			/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	struct interval *v;			/* owned; reading_free() */
	size_t n;
};

#define KERNELS		(1u << SIMNVML_KERNEL)
#define COPIES		(1u << SIMNVML_D2D | 1u << SIMNVML_H2D | 1u << SIMNVML_D2H)

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

/* The state, or NULL before nvmlInit; *P its period.  Mapped until the
   last nvmlShutdown, which a caller does not make while it asks. */
static const struct simnvml_state *state(uint64_t *p)
{
	const struct simnvml_state *st;

	pthread_mutex_lock(&g.lock);
	st = g.st;
	if (p)
		*p = g.period_ns;
	pthread_mutex_unlock(&g.lock);
	return st;
}

/* NVML_SUCCESS when initialised and DEVICE is ours; then *ST (and *P when
   not NULL) as state() says them. */
static nvmlReturn_t check(nvmlDevice_t device, const struct simnvml_state **st, uint64_t *p)
{
	*st = state(p);
	if (!*st)
		return NVML_ERROR_UNINITIALIZED;
	return device == &dev0 ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static uint64_t period_from_env(void)
{
	const char *s = getenv("SIMCUDA_NVML_PERIOD_US");
	char *end;
	unsigned long long us;

	if (!s || !*s)
		return PERIOD_US_DEF * 1000ULL;
	errno = 0;
	us = strtoull(s, &end, 10);
	if (errno || end == s || *end || us < 1000 || us > 10000000) {
		fprintf(stderr, "simnvml: ignoring SIMCUDA_NVML_PERIOD_US='%s': not in [1000, 10^7]\n",
			s);
		return PERIOD_US_DEF * 1000ULL;
	}
	return us * 1000ULL;
}

/*
 * Copies the ring's whole intervals that end after FROM into V (room for
 * SIMNVML_SLOTS), the latest claimed first; their count.  It reads back
 * from the latest claim, and stops at an interval that started before
 * FROM - max_op_ns - SIMNVML_LAG_NS: every slot claimed before it was
 * claimed before its start + SIMNVML_LAG_NS, so ended before FROM.
 * *KNOWN_FROM: where the ring's memory begins when it read back to its
 * oldest slot and older ones were overwritten, the earliest start it still
 * holds (exact when one process writes: its device runs one op at a time;
 * close with several); else 0.
 */
static size_t ring_read(const struct simnvml_state *st, uint64_t from, struct interval *v,
			uint64_t *known_from)
{
	uint64_t head = atomic_load_explicit(&st->h.head, memory_order_acquire);
	uint64_t first = head > SIMNVML_SLOTS ? head - SIMNVML_SLOTS : 0;
	uint64_t back = atomic_load(&st->h.max_op_ns) + SIMNVML_LAG_NS;
	uint64_t stop = from > back ? from - back : 0;
	size_t n = 0;

	*known_from = first ? UINT64_MAX : 0;
	for (uint64_t i = head; i-- > first;) {
		const struct simnvml_slot *s = &st->slots[i % SIMNVML_SLOTS];
		uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		struct interval x = {
			{ atomic_load_explicit(&s->start_ns, memory_order_relaxed),
			  atomic_load_explicit(&s->end_ns, memory_order_relaxed) },
			atomic_load_explicit(&s->bytes, memory_order_relaxed),
			atomic_load_explicit(&s->kind, memory_order_relaxed),
		};

		/* the writer's seq again: unchanged, so the fields are its */
		atomic_thread_fence(memory_order_acquire);
		if (seq != i + 1 || atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
			continue;
		if (x.t.a < stop) {
			*known_from = 0;
			break;
		}
		if (first && x.t.a < *known_from)
			*known_from = x.t.a;
		if (x.t.b > from && x.t.b > x.t.a && x.kind < 32)
			v[n++] = x;
	}
	return n;
}

/* The first period K0 of R that ends, on CLOCK_REALTIME, after AFTER ns. */
static int64_t period_after(const struct reading *r, int64_t after)
{
	return after > r->real_off ? (after - r->real_off) / (int64_t)r->p : INT64_MIN;
}

/*
 * Reads what the driver holds now into R: the periods that ended
 * SIMNVML_LAG_NS ago, not before the state was created nor before the
 * ring's memory begins, the last SAMPLES_KEPT of them; of those, the last
 * one alone when LAST, else those ending after AFTER (ns of CLOCK_REALTIME;
 * 0: all).  And the intervals that reach into them.  -1 when out of memory.
 */
static int reading_get(struct reading *r, const struct simnvml_state *st, uint64_t p,
		       int64_t after, bool last)
{
	struct timespec mono, real;
	uint64_t now, known_from;
	int64_t first = (int64_t)((st->h.created_ns + p - 1) / p);

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	now = ts_ns(&mono);
	r->p = p;
	r->real_off = (int64_t)(ts_ns(&real) - now);
	r->k1 = now < SIMNVML_LAG_NS + p ? -1 : (int64_t)((now - SIMNVML_LAG_NS) / p) - 1;
	r->k0 = last ? r->k1 : r->k1 - SAMPLES_KEPT + 1;
	if (r->k0 < first)
		r->k0 = first;
	if (r->k0 < period_after(r, after))
		r->k0 = period_after(r, after);
	r->v = malloc(SIMNVML_SLOTS * sizeof(*r->v));
	if (!r->v)
		return -1;
	r->n = ring_read(st, r->k0 > 0 ? (uint64_t)r->k0 * p : 0, r->v, &known_from);
	if (r->k0 < (int64_t)((known_from + p - 1) / p))
		r->k0 = (int64_t)((known_from + p - 1) / p);
	return 0;
}

static void reading_free(struct reading *r)
{
	free(r->v);
	r->v = NULL;
}

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* Sorts V (unless it is: one process's are) and merges it into its
   union, in place: its new count. */
static size_t span_union(struct span *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 1; i < n; i++)
		if (v[i].a < v[i - 1].a) {
			qsort(v, n, sizeof(*v), span_cmp);
			break;
		}
	for (size_t i = 0; i < n; i++) {
		if (m && v[i].a <= v[m - 1].b) {
			if (v[i].b > v[m - 1].b)
				v[m - 1].b = v[i].b;
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

/* Time of the union U (sorted, disjoint) inside [a, b). */
static uint64_t span_overlap(const struct span *u, size_t n, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = n;
	uint64_t t = 0;

	/* the first span ending after a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && u[i].a < b; i++)
		t += (u[i].b < b ? u[i].b : b) - (u[i].a > a ? u[i].a : a);
	return t;
}

/* The busy time of kinds MASK in each period of R: BUSY[k - k0].  Several
   processes' intervals overlap: it is their union.  -1 when out of memory. */
static int reading_busy(const struct reading *r, unsigned mask, uint64_t busy[SAMPLES_KEPT])
{
	struct span *u = malloc((r->n ? r->n : 1) * sizeof(*u));
	size_t n = 0;

	if (!u)
		return -1;
	/* in the order they were claimed, close to that of their starts */
	for (size_t i = r->n; i-- > 0;)
		if (mask & (1u << r->v[i].kind))
			u[n++] = r->v[i].t;
	n = span_union(u, n);
	for (int64_t k = r->k0; k <= r->k1; k++)
		busy[k - r->k0] = span_overlap(u, n, (uint64_t)k * r->p, (uint64_t)(k + 1) * r->p);
	free(u);
	return 0;
}

/* The busy time of kinds MASK in R's last period; 0 when it has none. */
static int reading_last(const struct reading *r, unsigned mask, uint64_t *busy)
{
	uint64_t all[SAMPLES_KEPT];

	*busy = 0;
	if (r->k1 < r->k0)
		return 0;
	if (reading_busy(r, mask, all) < 0)
		return -1;
	*busy = all[r->k1 - r->k0];
	return 0;
}

/* Bytes of copies of KIND moved in R's last period, each copy's bytes
   spread evenly over its time. */
static uint64_t reading_bytes(const struct reading *r, enum simnvml_kind kind)
{
	uint64_t a, b, sum = 0;

	if (r->k1 < r->k0)
		return 0;
	a = (uint64_t)r->k1 * r->p;
	b = a + r->p;
	for (size_t i = 0; i < r->n; i++) {
		const struct interval *x = &r->v[i];

		if (x->kind != kind || x->t.a >= b || x->t.b <= a)
			continue;
		sum += (uint64_t)((double)x->bytes *
				  (double)((x->t.b < b ? x->t.b : b) - (x->t.a > a ? x->t.a : a)) /
				  (double)(x->t.b - x->t.a));
	}
	return sum;
}

static unsigned percent(uint64_t busy, uint64_t p)
{
	return (unsigned)((busy * 100 + p / 2) / p);
}

/*
 * SIMCUDA_NVML_WHO=FILE: who loaded the library, a line "uid gid groups..."
 * appended at each nvmlInit, so a test can tell which user a tool reads
 * NVML as (ingero-ftrace's helper: never root under sudo).
 */
static void say_who(void)
{
	const char *path = getenv("SIMCUDA_NVML_WHO");
	gid_t groups[256];
	char line[4096];
	int n, len, fd;

	if (!path || (n = getgroups(256, groups)) < 0)
		return;
	len = snprintf(line, sizeof(line), "%u %u", (unsigned)getuid(), (unsigned)getgid());
	for (int i = 0; i < n && len < (int)sizeof(line) - 16; i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %u", (unsigned)groups[i]);
	line[len++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0) {
		if (write(fd, line, (size_t)len) < 0)
			(void)0;	/* the test sees no line */
		close(fd);
	}
}

/* ---- the API ------------------------------------------------------------ */

nvmlReturn_t nvmlInit_v2(void)
{
	const struct simnvml_state *st;
	char path[4096];
	nvmlReturn_t r = NVML_SUCCESS;

	say_who();
	pthread_mutex_lock(&g.lock);
	if (g.refs) {
		g.refs++;
		goto out;
	}
	/* no state file: no driver, as on a machine without NVIDIA's module */
	if (simnvml_state_path(path, sizeof(path)) < 0) {
		r = NVML_ERROR_DRIVER_NOT_LOADED;
		goto out;
	}
	/* the driver is there before any process uses the device: a reader
	   that starts first (a tracer) finds the device idle, not missing */
	if (!getenv("SIMCUDA_NVML_NO_DRIVER"))
		simnvml_state_ensure(path);
	st = simnvml_state_map(path);
	if (!st) {
		r = errno == EPROTO ? NVML_ERROR_LIB_RM_VERSION_MISMATCH
				    : NVML_ERROR_DRIVER_NOT_LOADED;
		goto out;
	}
	g.st = st;
	g.period_ns = period_from_env();
	g.refs = 1;
out:
	pthread_mutex_unlock(&g.lock);
	return r;
}

nvmlReturn_t nvmlInit(void)
{
	return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void)
{
	pthread_mutex_lock(&g.lock);
	/* one shutdown for each init; more are no error, as NVML says */
	if (g.refs && !--g.refs) {
		simnvml_state_unmap(g.st);
		g.st = NULL;
	}
	pthread_mutex_unlock(&g.lock);
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_NO_DATA: return "No data";
	case NVML_ERROR_UNKNOWN: return "Unknown Error";
	}
	return "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	if (!state(NULL))
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!state(NULL))
		return NVML_ERROR_UNINITIALIZED;
	if (index != 0 || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &dev0;
	return NVML_SUCCESS;
}

/* S into BUF of LENGTH bytes, as NVML's string getters do. */
static nvmlReturn_t copy_string(char *buf, unsigned int length, const char *s)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);

	return r ? r : copy_string(name, length, DEVICE_NAME);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);

	return r ? r : copy_string(uuid, length, DEVICE_UUID);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);

	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* bus 1, device 0: where a machine's first GPU often sits */
	*pci = (nvmlPciInfo_t){ .domain = 0, .bus = 1, .device = 0, .pciDeviceId = 0x10de };
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", 0, 1, 0);
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", 0, 1, 0);
	return NVML_SUCCESS;
}

/*
 * The samples of TYPE newer than LAST_SEEN (µs, CLOCK_REALTIME) into OUT:
 * their count, or -1 when out of memory.  Newer by more than a millisecond
 * (half a period when shorter): the offset to CLOCK_REALTIME, taken once a
 * call, moves a period's timestamp by a µs or so from one call to the next,
 * and a period returned once must not come back.
 */
static int samples_read(const struct simnvml_state *st, uint64_t p, nvmlSamplingType_t type,
			unsigned long long last_seen, nvmlSample_t out[SAMPLES_KEPT])
{
	uint64_t busy[SAMPLES_KEPT];
	int64_t after = last_seen ? (int64_t)(last_seen * 1000) +
					    (int64_t)(p / 2 < 1000000 ? p / 2 : 1000000) : 0;
	struct reading r;
	int n = 0;

	if (reading_get(&r, st, p, after, false) < 0 ||
	    reading_busy(&r, type == NVML_GPU_UTILIZATION_SAMPLES ? KERNELS : COPIES, busy) < 0) {
		reading_free(&r);
		return -1;
	}
	for (int64_t k = r.k0; k <= r.k1; k++) {
		out[n].timeStamp = (unsigned long long)(((k + 1) * (int64_t)p + r.real_off) / 1000);
		out[n].sampleValue.uiVal = percent(busy[k - r.k0], p);
		n++;
	}
	reading_free(&r);
	return n;
}

nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
				  unsigned long long lastSeenTimeStamp,
				  nvmlValueType_t *sampleValType, unsigned int *sampleCount,
				  nvmlSample_t *samples)
{
	nvmlSample_t got[SAMPLES_KEPT];
	const struct simnvml_state *st;
	uint64_t p;
	nvmlReturn_t r = check(device, &st, &p);
	int n;

	if (r)
		return r;
	if (!sampleCount || !sampleValType || (samples && !*sampleCount))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type != NVML_GPU_UTILIZATION_SAMPLES && type != NVML_MEMORY_UTILIZATION_SAMPLES)
		return NVML_ERROR_NOT_SUPPORTED;
	n = samples_read(st, p, type, lastSeenTimeStamp, got);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	if (!n)
		return NVML_ERROR_NOT_FOUND;
	*sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
	/* the oldest that fit: the caller asks again after the last it got */
	if (samples) {
		if ((unsigned)n > *sampleCount)
			n = (int)*sampleCount;
		memcpy(samples, got, (size_t)n * sizeof(*samples));
	}
	*sampleCount = (unsigned)n;
	return NVML_SUCCESS;
}

/* Reads what the driver holds into R, for DEVICE and a non-NULL OUT.  The
   caller frees R when this succeeds. */
static nvmlReturn_t read_device(nvmlDevice_t device, const void *out, struct reading *r)
{
	const struct simnvml_state *st;
	uint64_t p;
	nvmlReturn_t e = check(device, &st, &p);

	if (e)
		return e;
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	return reading_get(r, st, p, 0, true) < 0 ? NVML_ERROR_MEMORY : NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	uint64_t kernels, copies;
	struct reading r;
	nvmlReturn_t e = read_device(device, utilization, &r);

	if (e)
		return e;
	if (reading_last(&r, KERNELS, &kernels) < 0 || reading_last(&r, COPIES, &copies) < 0)
		e = NVML_ERROR_MEMORY;
	else
		*utilization = (nvmlUtilization_t){ percent(kernels, r.p), percent(copies, r.p) };
	reading_free(&r);
	return e;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);
	const char *env = getenv("SIMCUDA_MEM_MB");
	uint64_t total, used = 0;

	if (r)
		return r;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* the last simcuda's SIMCUDA_MEM_MB, else ours, else simcuda's default */
	total = atomic_load(&st->h.total_bytes);
	if (!total)
		total = (uint64_t)(env && atoll(env) > 0 ? atoll(env) : MEM_MB_DEF) << 20;
	for (int i = 0; i < SIMNVML_PROCS; i++)
		if (simnvml_pid_alive(atomic_load(&st->procs[i].pid)))
			used += atomic_load(&st->procs[i].mem_bytes);
	memory->total = total;
	memory->used = used < total ? used : total;
	memory->free = total - memory->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);

	if (r)
		return r;
	if (!clock || (unsigned)type > NVML_CLOCK_VIDEO)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* never throttled: constant clocks */
	*clock = type == NVML_CLOCK_MEM ? MEM_MHZ : type == NVML_CLOCK_VIDEO ? 1755 : SM_MHZ;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
						       unsigned long long *clocksThrottleReasons)
{
	uint64_t kernels;
	struct reading r;
	nvmlReturn_t e = read_device(device, clocksThrottleReasons, &r);

	if (e)
		return e;
	/* the one reason the model has: no kernel in the last period */
	if (reading_last(&r, KERNELS, &kernels) < 0)
		e = NVML_ERROR_MEMORY;
	else
		*clocksThrottleReasons = kernels ? 0 : nvmlClocksThrottleReasonGpuIdle;
	reading_free(&r);
	return e;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
					 unsigned int *value)
{
	struct reading r;
	/* an unknown counter is an invalid argument, as a NULL output is */
	nvmlReturn_t e = read_device(device, (unsigned)counter <= NVML_PCIE_UTIL_RX_BYTES ? value : NULL,
				     &r);

	if (e)
		return e;
	/* TX leaves the device, RX reaches it; KB of 1024 bytes a second */
	*value = (unsigned)((double)reading_bytes(&r, counter == NVML_PCIE_UTIL_TX_BYTES ?
							      SIMNVML_D2H : SIMNVML_H2D) *
			    1e9 / (double)r.p / 1024);
	reading_free(&r);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	const struct simnvml_state *st;
	nvmlReturn_t r = check(device, &st, NULL);
	nvmlProcessInfo_t live[SIMNVML_PROCS];
	unsigned n = 0;

	if (r)
		return r;
	if (!infoCount || (*infoCount && !infos))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < SIMNVML_PROCS; i++) {
		uint32_t pid = atomic_load(&st->procs[i].pid);

		/* a process killed before it could clear its entry is gone */
		if (!simnvml_pid_alive(pid))
			continue;
		live[n++] = (nvmlProcessInfo_t){ .pid = pid,
						 .usedGpuMemory = atomic_load(&st->procs[i].mem_bytes),
						 .gpuInstanceId = 0xffffffffu,
						 .computeInstanceId = 0xffffffffu };
	}
	if (*infoCount < n) {
		*infoCount = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n)
		memcpy(infos, live, n * sizeof(*infos));
	*infoCount = n;
	return NVML_SUCCESS;
}

/* the same structure in NVML's headers: nvmlProcessInfo_v2_t */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	return nvmlDeviceGetComputeRunningProcesses_v3(device, infoCount, infos);
}
