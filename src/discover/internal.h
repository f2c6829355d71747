/* SPDX-License-Identifier: MIT */
#ifndef IFT_DISCOVER_INTERNAL_H
#define IFT_DISCOVER_INTERNAL_H

/*
 * The parts of the discover stage that ift_discover() stands on, shared by
 * its files and the unit tests.  Nothing here prints or changes the system.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ift-discover.h"

/* Bounds on what a hostile or broken system can make us read or walk. */
#define DSO_MAX_NEEDED		256	/* DT_NEEDED entries kept per object */
#define DSO_MAX_LOADS		64	/* PT_LOAD segments considered */
#define DISCOVER_MAX_OBJS	512	/* objects in one DT_NEEDED closure */
#define DISCOVER_MAX_LIBS	1024	/* libraries in one set */
#define DISCOVER_MAX_DIRENTS	65536	/* directory entries read per directory */
#define DISCOVER_MAX_SCRIPTS	4	/* #! interpreters followed */

/* ---- elf.c ------------------------------------------------------------ */

/* What ld.so reads from an object's dynamic section. */
struct dso_dyn {
	char **needed;		/* DT_NEEDED names, in order */
	size_t nneeded;
	char *rpath;		/* DT_RPATH; NULL when absent or when DT_RUNPATH is present */
	char *runpath;		/* DT_RUNPATH */
	char *soname;		/* DT_SONAME */
	bool nodeflib;		/* DF_1_NODEFLIB: no ld.so.cache, no default dirs */
};

/*
 * ift_dso_dyn_read - read PATH's dynamic section.  PATH must be a 64-bit native
 * ELF executable or shared object; one without a dynamic section (static)
 * gives an empty DYN.  Returns 0, -errno, -IFT_E_NOT_ELF, or -ENOEXEC for an
 * ELF file of another class or machine (ld.so skips those and searches on).
 * The caller frees DYN with ift_dso_dyn_release(), also after a failure.
 */
int ift_dso_dyn_read(const char *path, struct dso_dyn *dyn);
void ift_dso_dyn_release(struct dso_dyn *dyn);

/*
 * ift_dso_lib_read - fill LIB's build-id and catalog symbols (those of LIB->api)
 * from the ELF file open on FD.  Returns 0, -ENOMEM, -IFT_E_NOT_ELF or
 * -ENOEXEC.  LIB->syms is allocated here; ift_libset_release() frees it.
 */
int ift_dso_lib_read(int fd, struct ift_lib *lib);

/* ---- discover.c: $PLATFORM ------------------------------------------ */

/* The CPUID bits glibc's ld.so (sysdeps/x86/cpu-features.c) reads to choose
 * $PLATFORM on x86-64; "usable" ones also need the OS to save their state. */
struct ldso_cpu {
	bool intel;			/* vendor GenuineIntel */
	bool avx2, fma;			/* usable: CPUID and XCR0's YMM state */
	bool bmi1, bmi2, lzcnt, movbe, popcnt;
	bool avx512cd, avx512er, avx512pf;	/* usable: and XCR0's ZMM state */
};

/* ift_ldso_cpu_read - CPU's bits as ld.so sees them (CPUID, XGETBV). */
void ift_ldso_cpu_read(struct ldso_cpu *cpu);

/*
 * ift_ldso_platform - what ld.so expands $PLATFORM to on CPU, where the kernel's
 * AT_PLATFORM is AT_PLATFORM (NULL: the machine's name, "x86_64").  A static string.
 */
const char *ift_ldso_platform(const struct ldso_cpu *cpu, const char *at_platform);

/* ---- ldcache.c -------------------------------------------------------- */

/* /etc/ld.so.cache in the "glibc-ld.so.cache1.1" format, read whole. */
struct ldcache {
	uint8_t *data;
	size_t len;
	uint32_t nlibs;
	/* the machine's flags an entry must have (ift_arch's ldcache_flags) */
	uint32_t machine;
};

/*
 * ift_ldcache_load - read the cache at PATH.  Returns 0, -errno, or -EINVAL when
 * the file is not a cache of the new format or is inconsistent.  Release
 * with ift_ldcache_release(), also after a failure.
 */
int ift_ldcache_load(struct ldcache *c, const char *path);
void ift_ldcache_release(struct ldcache *c);

/*
 * ift_ldcache_lookup - the path ld.so's cache gives for the x86-64 library NAME
 * (preferring an entry for no particular hardware capability), or NULL.
 * Points into C.
 */
const char *ift_ldcache_lookup(const struct ldcache *c, const char *name);

/* ---- libset.c --------------------------------------------------------- */

/*
 * ift_cuda_lib_api - which API a library file of this base name implements:
 * libcudart*.so* (also hashed names such as libcudart-d0da41ae.so.11.0) is the
 * runtime, libcuda.so and libcuda.so.* the driver, libnccl*.so* NCCL (torch's
 * nvidia/nccl/lib/libnccl.so.2, a system's libnccl.so.2).  0 for anything else.
 */
enum ift_api ift_cuda_lib_api(const char *name);

/* ---- python.c --------------------------------------------------------- */

/*
 * ift_python_sys_path - run the interpreter at PATH (argv[0] ARGV0) with ENVP, no
 * stdin, as AS (NULL: as we are; it is not run at all when that cannot be
 * done), for at most TIMEOUT_MS, and collect sys.prefix then sys.path, one
 * entry a line, into *OUT (NUL-terminated, malloc'ed, the caller frees).
 * When *STOP is set (STOP may be NULL) the interpreter is stopped at once.
 * Returns 0, -ETIMEDOUT, -ECHILD when the interpreter failed, -EINTR when
 * stopped, or -errno.
 */
int ift_python_sys_path(const char *path, const char *argv0, char *const *envp,
		    const struct ift_creds *as, const volatile sig_atomic_t *stop,
		    int timeout_ms, char **out);

#endif
