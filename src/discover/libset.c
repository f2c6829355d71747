// SPDX-License-Identifier: MIT
/*
 * The set of CUDA library files to probe.  Uprobes are per inode, so a file
 * is the pair (device, inode): libcudart.so, libcudart.so.13 and a path
 * through /usr/local/cuda -> cuda-13.0 are one library.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-error.h"
#include "internal.h"
#include "util/array.h"

enum ift_api ift_cuda_lib_api(const char *name)
{
	/* hashed names too: pip wheels vendor libcudart-d0da41ae.so.11.0 */
	if (!fnmatch("libcudart*.so*", name, FNM_PERIOD))
		return IFT_API_RUNTIME;
	if (!strcmp(name, "libcuda.so") || !fnmatch("libcuda.so.*", name, FNM_PERIOD))
		return IFT_API_DRIVER;
	/* NCCL's collectives: a rank late into one makes every other rank wait */
	if (!fnmatch("libnccl*.so*", name, FNM_PERIOD))
		return IFT_API_NCCL;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void ift_libset_init(struct ift_libset *set)
{
	memset(set, 0, sizeof(*set));
}

static void lib_release(struct ift_lib *lib)
{
	for (size_t i = 0; i < lib->nsyms; i++)
		free(lib->syms[i].name);
	free(lib->syms);
	free(lib->path);
	memset(lib, 0, sizeof(*lib));
}

void ift_libset_release(struct ift_libset *set)
{
	for (size_t i = 0; i < set->n; i++)
		lib_release(&set->v[i]);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

int ift_libset_add(struct ift_libset *set, const char *path, const char *found_by)
{
	struct ift_lib lib = { 0 };
	enum ift_api api;
	struct stat st;
	int fd = -1, ret;
	char *real;

	if (!path || !*path)
		return -EINVAL;
	if (strnlen(path, PATH_MAX) >= PATH_MAX)
		return -ENAMETOOLONG;
	api = ift_cuda_lib_api(base_name(path));
	real = realpath(path, NULL);
	if (!real)
		return -errno;
	/* a link may carry the name (libcudart.so.12 -> a content-addressed blob) */
	if (!api)
		api = ift_cuda_lib_api(base_name(real));
	if (!api) {
		free(real);
		return 0;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto fail;
	}
	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].dev == st.st_dev && set->v[i].ino == st.st_ino) {
			ret = 0;
			goto fail;
		}
	}
	if (set->n >= DISCOVER_MAX_LIBS) {
		ret = -E2BIG;
		goto fail;
	}
	if (ift_array_grow((void **)&set->v, &set->cap, set->n + 1, sizeof(*set->v)) < 0) {
		ret = -ENOMEM;
		goto fail;
	}
	lib.path = real;
	lib.dev = st.st_dev;
	lib.ino = st.st_ino;
	lib.api = api;
	lib.found_by = found_by;
	ret = ift_dso_lib_read(fd, &lib);
	close(fd);
	if (ret < 0) {
		lib_release(&lib);
		return ret;
	}
	set->v[set->n++] = lib;
	return 1;
fail:
	if (fd >= 0)
		close(fd);
	free(real);
	return ret;
}
