/* SPDX-License-Identifier: MIT */
#ifndef IFT_DISCOVER_H
#define IFT_DISCOVER_H

/*
 * discover: which CUDA libraries a command could load, and where in each file
 * the functions we trace start.  Reads ELF files and /proc; changes nothing.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-trace.h"

/* ---- the catalog of traced functions -------------------------------- */

/*
 * One argument kept of a traced call, by its parameter: PARAM (0-based) of
 * the function's signature, eightbyte PART of it (a dim3 by value: 0 is x
 * and y, 1 is z), or with DEREF >= 0 the u64 at that offset of the pointer
 * it is.  Where that lies at the function's entry is the architecture's
 * calling convention (ift_func_arg_fetch).  All fetched as u64.
 */
struct ift_arg_spec {
	const char *name;	/* as stored in the trace: "bytes", "kind", "stream" */
	uint8_t param, part;
	int16_t deref;
};

struct ift_func_spec {
	const char *name;	/* base symbol name, e.g. "cudaMemcpyAsync" */
	enum ift_api api;
	/* its parameters' classes, in order (IFT_PARAM_* of ift-arch.h) */
	const char *sig;
	unsigned nargs;
	struct ift_arg_spec args[IFT_CALL_MAX_ARGS];
	/* also probe NAME_ptsz and NAME_ptds where the library has them */
	bool per_thread_variants;
};

/* The catalog: runtime and driver functions traced when a library has them. */
extern const struct ift_func_spec ift_cuda_funcs[];
extern const size_t ift_cuda_nfuncs;

/*
 * ift_func_find - the catalog's function NAME is, or a per-thread variant
 * of (NAME_ptsz, NAME_ptds: probed and reported under that name); NULL if
 * the catalog has none.
 */
const struct ift_func_spec *ift_func_find(const char *name);

struct ift_arch;
/*
 * ift_func_arg_fetch - argument I of F as a uprobe fetch-arg on architecture
 * A ("%si", "%x1", "+8(%sp)", "+32(%di)"), written into BUF (LEN bytes).
 * 0, or -EINVAL (no such argument) or -E2BIG.
 */
int ift_func_arg_fetch(const struct ift_func_spec *f, unsigned i, const struct ift_arch *a,
		       char *buf, size_t len);

/* ---- libraries ------------------------------------------------------- */

/* One function found in a library: where to put the probe. */
struct ift_sym {
	char *name;		/* symbol name without @version, e.g. "cudaMemcpyAsync_ptsz" */
	uint64_t offset;	/* FILE offset of the first instruction, as uprobe_events wants */
	const struct ift_func_spec *spec;	/* its catalog entry (args) */
};

/* One library file (distinct device and inode). */
struct ift_lib {
	char *path;		/* real path, links resolved */
	dev_t dev;
	ino_t ino;
	enum ift_api api;	/* libcudart* -> RUNTIME, libcuda.so* -> DRIVER */
	uint8_t build_id[64];
	size_t build_id_len;
	const char *found_by;	/* "cuda-lib", "DT_NEEDED", "cuda-dir", "python", "conda", "proc-maps", ... */
	struct ift_sym *syms;	/* catalog functions present in the file */
	size_t nsyms;
};

struct ift_libset {
	struct ift_lib *v;
	size_t n, cap;
};

void ift_libset_init(struct ift_libset *set);
/* Frees every library and its symbols. */
void ift_libset_release(struct ift_libset *set);

/*
 * ift_libset_add - add the library at PATH (following links), once per device
 * and inode, with its catalog symbols resolved from the ELF symbol tables
 * (.dynsym and .symtab, versioned names such as "cudaMalloc@@libcudart.so.13"
 * stripped).  FOUND_BY is a static string.  Returns 1 when added, 0 when the
 * file was already in SET or is not a CUDA library, or a negative error
 * (-ENOENT, -IFT_E_NOT_ELF, ...).
 */
int ift_libset_add(struct ift_libset *set, const char *path, const char *found_by);

/*
 * Who a process started on the user's behalf runs as (under sudo, the user
 * who ran it): exactly these ids and supplementary groups, set with
 * setgroups(), setresgid() and setresuid() before its exec.
 */
struct ift_creds {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
};

/*
 * ift_creds_become - this process becomes AS: its groups, gid and uid, in
 * that order, by system calls alone (async-signal-safe, no name service:
 * for a child forked from threads, before its exec).  0, or -errno of the
 * first that failed.
 */
int ift_creds_become(const struct ift_creds *as);

struct ift_discover_opts {
	/* the command about to be run (argv[0] is resolved on PATH), or NULL */
	char *const *argv;
	/* the environment the command will get (LD_LIBRARY_PATH, PATH, CONDA_PREFIX) */
	char *const *envp;
	/* running processes to look at (/proc/PID/maps, their executables) */
	const pid_t *pids;
	size_t npids;
	/* look at every process's maps too (for -a, and libraries already loaded) */
	bool all_procs;
	/*
	 * the Python interpreter asked for its sys.path runs as this user, as
	 * the command will (NULL: as we are); nothing of the user's runs as root
	 */
	const struct ift_creds *run_as;
	/* set (by a signal handler) to give up: discovery returns -EINTR soon */
	const volatile sig_atomic_t *stop;
};

/*
 * ift_discover - find every CUDA library the command or processes could load:
 * the executable's DT_NEEDED closure resolved as ld.so would (RPATH/RUNPATH,
 * LD_LIBRARY_PATH, ld.so.cache, default paths); the usual CUDA directories
 * (/usr/local/cuda*\/lib{,64}, /usr/local/cuda*\/compat,
 * /usr/lib/x86_64-linux-gnu); for a Python command that interpreter's
 * site-packages (nvidia/\*\/lib, torch/lib, hashed libcudart-<hash>.so.*);
 * conda environments; libraries mapped by the given (or all) processes.
 * Adds them to SET.  Returns the number added or a negative error.
 */
int ift_discover(const struct ift_discover_opts *opts, struct ift_libset *set);

/*
 * ift_discover_maps - add the CUDA libraries mapped by process PID
 * (/proc/PID/maps), for libraries dlopen()ed while recording.  Returns the
 * number added, 0, or a negative error (-ENOENT when the process is gone).
 */
int ift_discover_maps(pid_t pid, struct ift_libset *set);

#endif
