// SPDX-License-Identifier: MIT
/*
 * Libraries mapped while recording (dlopen: PyTorch loads the CUDA runtime
 * after start-up): the traced processes' maps are scanned again every
 * RESCAN_EVERY_NS, and each new CUDA library is probed as the first were.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "record/recorder.h"

/* Adds the perf events (entry, return) of the probes the perf ring has not yet. */
int ift_rec_isolate_add(struct ift_recorder *r)
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

	if ((ret = ift_rec_isolate_add(r)) < 0)
		return ret;
	np = ift_decoder_processes(r->dec, &pids);
	for (size_t i = 0; i < np; i++) {
		pid_t *tids;
		size_t n;

		ret = ift_rec_list_tids(pids[i], &tids, &n);
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
	if ((ret = ift_rec_write_library(r->w, &set->v[0])) < 0)
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

int ift_rec_rescan(struct ift_recorder *r)
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
