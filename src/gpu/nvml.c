// SPDX-License-Identifier: MIT
/*
 * The NVML helper's body (ift-gpu.h): runs in a process of its own, as the
 * user, never in the recorder.  NVML's functions are found with dlsym(), so
 * the build needs no NVIDIA header or library; the types below are nvml.h's,
 * as its ABI has them.
 *
 * Utilization comes from the driver's own samples when it keeps them
 * (nvmlDeviceGetSamples: each the percent of its period a kernel ran,
 * stamped by the driver), read every period with the last timestamp seen,
 * so none is missed while the driver's buffer holds more than a period's
 * worth (seconds of them).  Where a device refuses, its utilization is
 * polled (nvmlDeviceGetUtilizationRates: the driver's last period), and the
 * STATUS says so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ift-gpu.h"
#include "util/timing.h"

/* nvml.h, as its ABI has it */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned long long timeStamp; unsigned long long value; } nvmlSample_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	unsigned pid;
	unsigned long long usedGpuMemory;
	unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;	/* _v2 and _v3 */
enum {
	NVML_SUCCESS = 0, NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_GPU_UTILIZATION_SAMPLES = 1, NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	NVML_CLOCK_SM = 1, NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1,
};

/* at most this many GPUs, and processes on one */
#define MAX_GPUS	64
#define MAX_PROCS	256
/* utilization samples asked for at a time */
#define MAX_SAMPLES	256

struct nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned *,
				nvmlSample_t *);
	nvmlReturn_t (*rates)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
};

struct gpu {
	nvmlDevice_t dev;
	bool rates;			/* no driver samples: polled */
	unsigned long long last_us;	/* the newest sample's stamp */
	uint64_t last_ns;		/* its time, on the monotonic clock */
};

static int put(int fd, const struct ift_gpu_rec *r)
{
	ssize_t n;

	do
		n = write(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*r) ? 0 : -EIO;
}

static int put_text(int fd, enum ift_gpu_kind kind, unsigned gpu, const char *text)
{
	struct ift_gpu_rec r = { .kind = kind, .gpu = gpu };

	snprintf(r.text, sizeof(r.text), "%s", text);
	return put(fd, &r);
}

static int put_row(int fd, unsigned gpu, const char *metric, uint64_t ts, uint64_t span,
		   int64_t value, int64_t pid)
{
	struct ift_gpu_rec r = {
		.kind = IFT_GPU_REC_ROW, .gpu = gpu, .ts_ns = ts, .span_ns = span,
		.value = value, .pid = pid,
	};

	snprintf(r.metric, sizeof(r.metric), "%s", metric);
	return put(fd, &r);
}

#define SYM(field, name) (*(void **)&n->field = dlsym(n->lib, name))

/* NVML's functions; NULL for one this driver lacks.  False: not NVML at all. */
static bool resolve(struct nvml *n)
{
	if (!SYM(init, "nvmlInit_v2") && !SYM(init, "nvmlInit"))
		return false;
	SYM(shutdown, "nvmlShutdown");
	SYM(error, "nvmlErrorString");
	if (!SYM(count, "nvmlDeviceGetCount_v2"))
		SYM(count, "nvmlDeviceGetCount");
	if (!SYM(handle, "nvmlDeviceGetHandleByIndex_v2"))
		SYM(handle, "nvmlDeviceGetHandleByIndex");
	SYM(name, "nvmlDeviceGetName");
	SYM(uuid, "nvmlDeviceGetUUID");
	SYM(samples, "nvmlDeviceGetSamples");
	SYM(rates, "nvmlDeviceGetUtilizationRates");
	SYM(memory, "nvmlDeviceGetMemoryInfo");
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(pcie, "nvmlDeviceGetPcieThroughput");
	if (!SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3"))
		SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v2");
	return n->shutdown && n->count && n->handle;
}

static const char *nvml_error(const struct nvml *n, nvmlReturn_t r)
{
	const char *s = n->error ? n->error(r) : NULL;

	return s ? s : "unknown error";
}

/*
 * The driver's utilization samples of G newer than the last seen, as rows:
 * each over the time since the one before by the driver's own stamps (0 for
 * the first).  A stamp is wall-clock time, mapped to the monotonic clock
 * with each period's offset; a row's time never goes back, whatever that
 * offset does (a wall clock set back).  NOT_FOUND is none new.  False when
 * the device keeps none: it is polled from then on.
 */
static int util_samples(const struct nvml *n, struct gpu *g, unsigned idx, int fd,
			int64_t rt_minus_mono)
{
	nvmlSample_t s[MAX_SAMPLES];
	unsigned cnt = MAX_SAMPLES;
	int type = 0, ret;
	nvmlReturn_t r = n->samples(g->dev, NVML_GPU_UTILIZATION_SAMPLES, g->last_us, &type,
				    &cnt, s);

	if (r == NVML_ERROR_NOT_FOUND)
		return 0;
	if (r != NVML_SUCCESS || type != NVML_VALUE_TYPE_UNSIGNED_INT)
		return 1;
	for (unsigned i = 0; i < cnt && i < MAX_SAMPLES; i++) {
		uint64_t ts, span;

		if (s[i].timeStamp <= g->last_us)
			continue;	/* the driver's last-seen is inclusive on some */
		ts = (uint64_t)((int64_t)(s[i].timeStamp * 1000ULL) - rt_minus_mono);
		span = g->last_ns ? (s[i].timeStamp - g->last_us) * 1000ULL : 0;
		if (g->last_ns && ts < g->last_ns + span)
			ts = g->last_ns + span;
		ret = put_row(fd, idx, "util.gpu_percent", ts, span, (int64_t)(unsigned)s[i].value,
			      -1);
		if (ret < 0)
			return ret;
		g->last_us = s[i].timeStamp;
		g->last_ns = ts;
	}
	return 0;
}

/* The readings of G now (those the driver gives), at NOW. */
static int readings(const struct nvml *n, struct gpu *g, unsigned idx, int fd, uint64_t now,
		    uint64_t period_ns)
{
	nvmlProcessInfo_t p[MAX_PROCS];
	nvmlUtilization_t u;
	nvmlMemory_t m;
	unsigned long long reasons;
	unsigned v, np = MAX_PROCS;
	int ret = 0;

	if (g->rates && n->rates && n->rates(g->dev, &u) == NVML_SUCCESS)
		ret = put_row(fd, idx, "util.gpu_percent", now, period_ns, u.gpu, -1);
	if (!ret && n->memory && n->memory(g->dev, &m) == NVML_SUCCESS)
		ret = put_row(fd, idx, "mem.used_bytes", now, 0, (int64_t)m.used, -1);
	if (!ret && n->clock && n->clock(g->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		ret = put_row(fd, idx, "clock.sm_mhz", now, 0, v, -1);
	if (!ret && n->throttle && n->throttle(g->dev, &reasons) == NVML_SUCCESS)
		ret = put_row(fd, idx, "throttle.reasons", now, 0, (int64_t)reasons, -1);
	if (!ret && n->pcie && n->pcie(g->dev, NVML_PCIE_UTIL_TX_BYTES, &v) == NVML_SUCCESS)
		ret = put_row(fd, idx, "pcie.tx_kbps", now, 0, v, -1);
	if (!ret && n->pcie && n->pcie(g->dev, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS)
		ret = put_row(fd, idx, "pcie.rx_kbps", now, 0, v, -1);
	if (!ret && n->procs && n->procs(g->dev, &np, p) == NVML_SUCCESS)
		for (unsigned i = 0; !ret && i < np && i < MAX_PROCS; i++)
			ret = put_row(fd, idx, "proc.used_bytes", now, 0,
				      (int64_t)p[i].usedGpuMemory, p[i].pid);
	return ret;
}

/* The devices, named to the recorder; their number, or -errno. */
static int devices(const struct nvml *n, struct gpu *gs, int fd)
{
	unsigned cnt = 0;
	nvmlReturn_t r = n->count(&cnt);
	int ret;

	if (r != NVML_SUCCESS) {
		char why[IFT_GPU_TEXT_MAX];

		snprintf(why, sizeof(why), "nvmlDeviceGetCount: %s", nvml_error(n, r));
		return put_text(fd, IFT_GPU_REC_STATUS, 0, why) < 0 ? -EIO : 0;
	}
	if (cnt > MAX_GPUS)
		cnt = MAX_GPUS;
	for (unsigned i = 0; i < cnt; i++) {
		char name[96] = "", uuid[96] = "", text[IFT_GPU_TEXT_MAX];

		memset(&gs[i], 0, sizeof(gs[i]));
		if (n->handle(i, &gs[i].dev) != NVML_SUCCESS)
			gs[i].dev = NULL;
		else if (n->name)
			n->name(gs[i].dev, name, sizeof(name));
		if (gs[i].dev && n->uuid)
			n->uuid(gs[i].dev, uuid, sizeof(uuid));
		gs[i].rates = !n->samples;
		snprintf(text, sizeof(text), "%s\t%s", name, uuid);
		if ((ret = put_text(fd, IFT_GPU_REC_DEVICE, i, text)) < 0)
			return ret;
	}
	return (int)cnt;
}

/* One period: every device's samples and readings. */
static int sample_all(const struct nvml *n, struct gpu *gs, unsigned cnt, int fd,
		      uint64_t period_ns, bool *said_rates)
{
	int64_t off = ift_wall_offset_ns();
	uint64_t now = ift_mono_ns();
	int ret = 0;

	for (unsigned i = 0; !ret && i < cnt; i++) {
		if (!gs[i].dev)
			continue;
		if (!gs[i].rates && (ret = util_samples(n, &gs[i], i, fd, off)) > 0) {
			gs[i].rates = true;
			ret = 0;
		}
		if (gs[i].rates && !*said_rates) {
			*said_rates = true;
			ret = put_text(fd, IFT_GPU_REC_SOURCE, i, "rates");
		}
		if (!ret)
			ret = readings(n, &gs[i], i, fd, now, period_ns);
	}
	return ret;
}

int ift_gpu_helper_main(int out_fd, const char *lib, unsigned period_ms,
			const volatile sig_atomic_t *stop)
{
	static struct gpu gs[MAX_GPUS];
	struct nvml n = { 0 };
	char why[IFT_GPU_TEXT_MAX];
	uint64_t period_ns = (uint64_t)(period_ms ? period_ms : IFT_GPU_PERIOD_MS) * 1000000ULL;
	bool said_rates = false;
	nvmlReturn_t r;
	int cnt, ret;

#ifdef IFT_STATIC
	/* one self-contained file loads no shared library (docs/static.md) */
	(void)lib;
	(void)resolve;
	return put_text(out_fd, IFT_GPU_REC_STATUS, 0,
			"a static build loads no library: NVML is read by the dynamic build");
#endif
	n.lib = dlopen(lib ? lib : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n.lib || !resolve(&n)) {
		snprintf(why, sizeof(why), "%s", n.lib ? "not NVML (no nvmlInit)" : dlerror());
		return put_text(out_fd, IFT_GPU_REC_STATUS, 0, why);
	}
	if ((r = n.init()) != NVML_SUCCESS) {
		snprintf(why, sizeof(why), "nvmlInit: %s", nvml_error(&n, r));
		return put_text(out_fd, IFT_GPU_REC_STATUS, 0, why);
	}
	if ((cnt = devices(&n, gs, out_fd)) <= 0) {
		n.shutdown();
		return cnt < 0 ? cnt : put_text(out_fd, IFT_GPU_REC_STATUS, 0, "no GPU");
	}
	snprintf(why, sizeof(why), "ok %d", cnt);
	ret = put_text(out_fd, IFT_GPU_REC_STATUS, 0, why);
	if (!ret)
		ret = put_text(out_fd, IFT_GPU_REC_SOURCE, 0, "samples");
	while (!ret && !*stop) {
		struct timespec t = { (time_t)(period_ns / 1000000000ULL),
				      (long)(period_ns % 1000000000ULL) };

		ret = sample_all(&n, gs, (unsigned)cnt, out_fd, period_ns, &said_rates);
		if (!ret)
			nanosleep(&t, NULL);
	}
	/* the last samples: the driver's periods that ended meanwhile */
	if (!ret)
		ret = sample_all(&n, gs, (unsigned)cnt, out_fd, period_ns, &said_rates);
	n.shutdown();
	/* a reader gone is the end it asked for */
	return ret == -EPIPE ? 0 : ret;
}
