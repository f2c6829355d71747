/* SPDX-License-Identifier: MIT */
#ifndef IFT_GPU_H
#define IFT_GPU_H

/*
 * gpu: the GPUs as NVML measures them, sampled during a recording.
 *
 * NVML (libnvidia-ml.so.1) is the driver's library, and it is the user's
 * to choose: it is never loaded into the recorder.  A helper process, the
 * recorder's own executable run as `ingero-ftrace __nvml-helper` with the
 * user's ids and groups (under sudo; else ours), loads it, samples every
 * GPU and writes fixed-size records into a pipe.  The recorder reads them
 * (ift_gpu_read()) as rows of the gpu_samples table, on the trace clock:
 * NVML's timestamps are CLOCK_REALTIME microseconds, turned into
 * CLOCK_MONOTONIC nanoseconds by the helper as it reads them.
 *
 * What is kept (metric names, as the table's METRIC column has them):
 *   util.gpu_percent   the percent of SPAN during which a kernel ran, one
 *                      row per sample of the driver's (nvmlDeviceGetSamples,
 *                      NVML_GPU_UTILIZATION_SAMPLES, its own timestamps), or
 *                      where that fails, nvmlDeviceGetUtilizationRates polled
 *                      (the source is said in the trace: gpu.util_source)
 *   mem.used_bytes, clock.sm_mhz, throttle.reasons (NVML's bit mask),
 *   pcie.tx_kbps, pcie.rx_kbps   read at the helper's period
 *   proc.used_bytes    a process on the GPU (its pid in the PID column) and
 *                      the device memory it holds: which GPUs the traced
 *                      processes used
 */
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct ift_creds;

/* Helper period: the driver's samples are read, and the rest sampled, this often. */
#define IFT_GPU_PERIOD_MS	100

/* One record of the pipe, PIPE_BUF-atomic. */
enum ift_gpu_kind {
	IFT_GPU_REC_ROW = 1,	/* a row: gpu, metric, pid, ts_ns, span_ns, value */
	IFT_GPU_REC_DEVICE,	/* gpu, text: "NAME\tUUID" */
	IFT_GPU_REC_STATUS,	/* text: "ok N" (devices), or why there is no NVML */
	IFT_GPU_REC_SOURCE,	/* text: how utilization is read: "samples" or "rates" */
};

#define IFT_GPU_METRIC_MAX	24
#define IFT_GPU_TEXT_MAX	160

struct ift_gpu_rec {
	uint32_t kind;
	uint32_t gpu;		/* NVML's device index */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC: the end of SPAN */
	uint64_t span_ns;	/* the time the value is over (0: at TS) */
	int64_t value;
	int64_t pid;
	char metric[IFT_GPU_METRIC_MAX];
	char text[IFT_GPU_TEXT_MAX];
};

/*
 * ift_gpu_helper_main - the helper's body: loads LIB (NULL:
 * "libnvidia-ml.so.1", as the loader finds it), writes a STATUS record, then
 * every PERIOD_MS the GPUs' records into OUT_FD until *STOP or the pipe is
 * closed.  0 when stopped; -errno of a failed write.  A machine without
 * NVML is a STATUS record that says why, and 0.  Prints nothing.
 */
int ift_gpu_helper_main(int out_fd, const char *lib, unsigned period_ms,
			const volatile sig_atomic_t *stop);

struct ift_gpu;

/*
 * ift_gpu_start - runs the helper: SELF (the recorder's executable, opened
 * before any privilege is dropped: a descriptor, execveat()-ed) with LIB,
 * as AS when not NULL.  *OUT the handle; 0 or -errno.
 */
int ift_gpu_start(int self_fd, const char *lib, const struct ift_creds *as,
		  struct ift_gpu **out);

/* The pipe's read end, to poll; -1 once it is closed. */
int ift_gpu_fd(const struct ift_gpu *g);

/* A row, with its string METRIC; what it returns < 0 stops the read. */
typedef int (*ift_gpu_row_fn)(void *ctx, const struct ift_gpu_rec *row);

/*
 * ift_gpu_read - takes what the helper wrote and hands the rows older than
 * BELOW_NS (a watermark: utilization samples come late) to EMIT in time
 * order; UINT64_MAX hands them all.  A row older than one already handed
 * is dropped and counted (late).  0 or a negative error.
 */
int ift_gpu_read(struct ift_gpu *g, uint64_t below_ns, ift_gpu_row_fn emit, void *ctx);

struct ift_gpu_status {
	const char *status;	/* "ok N", why there is none, or NULL: not yet said */
	const char *source;	/* "samples", "rates" or NULL */
	unsigned ndevices;
	const char *const *devices;	/* "NAME\tUUID", by index */
	uint64_t late;			/* rows dropped: older than one handed on */
};
void ift_gpu_status(const struct ift_gpu *g, struct ift_gpu_status *st);

/*
 * ift_gpu_end - stops the helper (SIGTERM) and takes its last records, for
 * 2 s at most (then SIGKILL); reaped.  Its rows wait for ift_gpu_read().
 */
int ift_gpu_end(struct ift_gpu *g);

/* Frees G, killing a helper not ended. */
void ift_gpu_free(struct ift_gpu *g);

#endif
