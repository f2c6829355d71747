// SPDX-License-Identifier: MIT
/*
 * The GPUs as NVML measures them, during a recording (ift-gpu.h): the helper
 * started with tracing, its rows written to the gpu_samples table as the
 * watermark passes them, and what it said kept in the metadata.  A machine
 * without NVML records all the same; its trace says why it has no GPU rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ift-error.h"
#include "record/recorder.h"

/* A utilization sample reaches us a driver period after its stamp, or two */
#define GPU_HOLD_NS	1000000000ULL

struct gpu_ctx {
	struct ift_recorder *r;
};

static int on_gpu_row(void *ctx, const struct ift_gpu_rec *g)
{
	struct ift_recorder *r = ctx;
	uint64_t row[IFT_GS_NR] = { g->ts_ns };
	int64_t id;

	/* the driver's buffer holds the minutes before the recording, and
	   the helper's last readings come after its end */
	if (g->ts_ns < r->start_ns || g->ts_ns > r->gpu_until)
		return 0;
	if ((id = ift_writer_string(r->w, g->metric)) < 0)
		return (int)id;
	row[IFT_C_PID] = g->pid > 0 ? (uint64_t)g->pid : 0;
	row[IFT_GS_GPU] = g->gpu;
	row[IFT_GS_METRIC] = (uint64_t)id;
	row[IFT_GS_VALUE] = (uint64_t)g->value;
	row[IFT_GS_SPAN] = g->span_ns;
	return ift_writer_append(r->w, IFT_T_GPU, row);
}

/*
 * The devices the helper named so far (gpu.N.name, gpu.N.uuid), from
 * device R->gpu_named on: written as soon as they are known, so that a
 * reader of the recording in progress (top) or an early piece has them.
 */
static void devices_meta(struct ift_recorder *r, const struct ift_gpu_status *st)
{
	char key[32];

	for (unsigned i = r->gpu_named; i < st->ndevices; i++) {
		const char *d = st->devices[i], *tab = d ? strchr(d, '\t') : NULL;

		if (!d)
			continue;
		snprintf(key, sizeof(key), "gpu.%u.name", i);
		ift_writer_metaf(r->w, key, "%.*s", tab ? (int)(tab - d) : (int)strlen(d), d);
		snprintf(key, sizeof(key), "gpu.%u.uuid", i);
		ift_writer_meta(r->w, key, tab ? tab + 1 : "");
	}
	r->gpu_named = st->ndevices;
}

void ift_rec_gpu_open_self(struct ift_recorder *r)
{
	/* opened before the helper's fork drops our ids: the user may not
	   reach this file by its path */
	r->self_fd = r->opts.no_nvml ? -1 : open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	r->gpu_err = r->opts.no_nvml ? 0 : r->self_fd < 0 ? -errno : 0;
}

void ift_rec_gpu_start(struct ift_recorder *r)
{
	if (r->self_fd < 0)
		return;
	r->gpu_err = ift_gpu_start(r->self_fd, r->opts.nvml_lib, r->opts.run_as, &r->gpu);
	r->next_gpu = r->start_ns + GPU_HOLD_NS;
	r->gpu_until = UINT64_MAX;
}

int ift_rec_gpu_poll(struct ift_recorder *r, uint64_t now)
{
	struct ift_gpu_status st;
	int ret;

	if (!r->gpu || now < r->next_gpu)
		return 0;
	r->next_gpu = now + IFT_GPU_PERIOD_MS * 1000000ULL;
	ret = ift_gpu_read(r->gpu, now - GPU_HOLD_NS, on_gpu_row, r);
	ift_gpu_status(r->gpu, &st);
	if (st.ndevices > r->gpu_named)
		devices_meta(r, &st);
	return ret;
}

void ift_rec_gpu_status(const struct ift_recorder *r, const char **status, unsigned *devices)
{
	struct ift_gpu_status st;

	ift_gpu_status(r->gpu, &st);
	*status = r->gpu ? st.status : NULL;
	*devices = st.ndevices;
	if (!r->gpu && !r->opts.no_nvml)
		*status = r->gpu_err ? ift_strerror(r->gpu_err) : NULL;
}

/* What the helper said, or why there is none, into the metadata. */
static void gpu_meta(struct ift_recorder *r)
{
	struct ift_gpu_status st;

	if (r->opts.no_nvml) {
		ift_writer_meta(r->w, "gpu.nvml", "off (--no-nvml)");
		return;
	}
	if (!r->gpu) {
		ift_writer_metaf(r->w, "gpu.nvml", "no helper: %s", ift_strerror(r->gpu_err));
		return;
	}
	ift_gpu_status(r->gpu, &st);
	ift_writer_meta(r->w, "gpu.nvml", st.status ? st.status : "the helper said nothing");
	if (st.source)
		ift_writer_meta(r->w, "gpu.util_source", st.source);
	devices_meta(r, &st);
	ift_writer_metaf(r->w, "gpu.rows", "%" PRIu64, ift_writer_rows(r->w, IFT_T_GPU));
	ift_writer_metaf(r->w, "gpu.late", "%" PRIu64, st.late);
}

int ift_rec_gpu_finish(struct ift_recorder *r, uint64_t stop)
{
	int ret = 0;

	r->gpu_until = stop;
	if (r->gpu) {
		ret = ift_gpu_end(r->gpu);
		if (ret >= 0)
			ret = ift_gpu_read(r->gpu, UINT64_MAX, on_gpu_row, r);
	}
	gpu_meta(r);
	return ret;
}

void ift_rec_gpu_free(struct ift_recorder *r)
{
	ift_gpu_free(r->gpu);
	r->gpu = NULL;
	if (r->self_fd >= 0)
		close(r->self_fd);
	r->self_fd = -1;
}
