// SPDX-License-Identifier: MIT
/*
 * Finding the CUDA libraries a command could load, before it runs, so their
 * probes are in place when it calls them:
 *
 *  - the executable's DT_NEEDED closure, resolved as ld.so does (glibc's
 *    elf/dl-load.c, _dl_map_object): for a name without a slash, the DT_RPATH
 *    of the loading object and then of each object up its chain of loaders,
 *    unless the loading object has a DT_RUNPATH; LD_LIBRARY_PATH; the loading
 *    object's DT_RUNPATH; /etc/ld.so.cache; the default directories.  Objects
 *    are loaded breadth first, each name once;
 *  - for a Python command, the wheels in its sys.path (nvidia/\*\/lib, torch/lib),
 *    which are dlopen()ed at import and no DT_NEEDED leads to;
 *  - conda environments, the usual CUDA directories;
 *  - what running processes already have mapped.
 *
 * Nothing here changes the system; the only process started is the Python
 * interpreter asked for its sys.path, as the user the command runs as.
 */
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-error.h"
#include "internal.h"
#include "util/array.h"

#define LD_SO_CACHE		"/etc/ld.so.cache"
#define PYTHON_TIMEOUT_MS	5000
#define MAX_SEEN_NAMES		4096	/* DT_NEEDED names looked up in one closure */
#define MAX_MAPS_LINES		(1u << 20)
#define MAX_ENVIRON		(1u << 20)
#define MAX_PROCS		(1u << 22)

extern char **environ;

/* ld.so's trusted directories after its cache: "%s" the multiarch triplet */
static const char *const default_dirs[] = {
	"/lib/%s", "/usr/lib/%s", "/lib", "/usr/lib",
};

/* "%s" is the multiarch triplet; "%t" each of CUDA's targets/ of the machine */
static const char *const cuda_dir_globs[] = {
	"/usr/local/cuda*/lib",
	"/usr/local/cuda*/lib64",
	"/usr/local/cuda*/targets/%t/lib",
	"/usr/local/cuda*/compat",
	"/usr/lib/%s",
	"/usr/lib64",	/* where RPM-based systems put the driver's libcuda.so */
};

/*
 * PATTERN with "%s" put as this machine's multiarch triplet and "%t" as its
 * Ith CUDA target, into BUF.  False when it has no Ith target (or no room).
 */
static bool arch_path(const char *pattern, size_t i, char *buf, size_t len)
{
	const struct ift_arch *a = ift_arch_native;
	const char *t = strstr(pattern, "%t"), *s = strstr(pattern, "%s");
	const char *at = t ? t : s, *put = t ? a->cuda_targets[i] : a->multiarch;
	int n;

	if (!at)
		put = "";
	if (!put || (!t && i > 0))
		return false;
	n = snprintf(buf, len, "%.*s%s%s", at ? (int)(at - pattern) : (int)strlen(pattern),
		     pattern, put, at ? at + 2 : "");
	return n > 0 && (size_t)n < len;
}

struct disc {
	struct ift_libset *set;
	char *const *envp;
	struct ldcache cache;
	bool cache_tried;
	const struct ift_creds *run_as;
	const volatile sig_atomic_t *stop;
};

/* One object of a DT_NEEDED closure. */
struct obj {
	char *origin;		/* its directory, for $ORIGIN */
	struct dso_dyn dyn;
	int loader;		/* the object whose DT_NEEDED brought it in; -1 for the executable */
	dev_t dev;
	ino_t ino;
};

struct closure {
	struct disc *d;
	struct obj *objs;
	size_t nobjs;
	char **seen;		/* names already looked up, found or not */
	size_t nseen;
	const char *ld_library_path;
	const char *found_by;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/* Errors that end discovery; anything else just means "not this file". */
static bool fatal(int err)
{
	return err == -ENOMEM || err == -E2BIG || err == -EINTR;
}

/* Adds PATH when it is a CUDA library; returns 1, 0, or a fatal error. */
static int add_lib(struct disc *d, const char *path, const char *found_by)
{
	int ret = ift_libset_add(d->set, path, found_by);

	if (ret < 0 && !fatal(ret))
		return 0;
	return ret;
}

/*
 * dirname of PATH made absolute, without resolving links: ld.so's $ORIGIN for
 * a library is the directory of the path it opened.  NULL only without memory.
 */
static char *origin_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char cwd[PATH_MAX], *o;

	if (slash && path[0] == '/')
		return strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, ".");
	if (!slash)
		return strdup(cwd);
	if (asprintf(&o, "%s/%.*s", cwd, (int)(slash - path), path) < 0)
		return NULL;
	return o;
}

static const char *dst_lib(void)
{
	struct stat st;

	static char multi[64];

	/* Debian's multiarch glibc expands $LIB to lib/<triplet>, others to lib64 */
	snprintf(multi, sizeof(multi), "/lib/%s", ift_arch_native->multiarch);
	return !stat(multi, &st) && S_ISDIR(st.st_mode) ? multi + 1 : "lib64";
}

/* aarch64's ld.so takes AT_PLATFORM as it is: no bits to read there */
void ift_ldso_cpu_read(struct ldso_cpu *cpu)
{
#if defined(__x86_64__)
	unsigned max, a, b, c, d, c1, d1, b7 = 0;
	uint64_t xcr0 = 0;
	bool ymm, zmm;

	memset(cpu, 0, sizeof(*cpu));
	if (!__get_cpuid(0, &max, &b, &c, &d))
		return;
	cpu->intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;	/* GenuineIntel */
	if (!__get_cpuid(1, &a, &b, &c1, &d1))
		return;
	if (max >= 7)
		__cpuid_count(7, 0, a, b7, c, d);
	if (c1 & bit_OSXSAVE) {
		unsigned lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((uint64_t)hi << 32) | lo;
	}
	/* the OS saves the YMM (SSE, AVX) and ZMM (opmask, ZMM_Hi256, Hi16_ZMM) state */
	ymm = (c1 & bit_AVX) && (xcr0 & 0x6) == 0x6;
	zmm = ymm && (xcr0 & 0xe0) == 0xe0 && (b7 & bit_AVX512F);
	cpu->avx2 = ymm && (b7 & bit_AVX2);
	cpu->fma = ymm && (c1 & bit_FMA);
	cpu->bmi1 = b7 & bit_BMI;
	cpu->bmi2 = b7 & bit_BMI2;
	cpu->movbe = c1 & bit_MOVBE;
	cpu->popcnt = c1 & bit_POPCNT;
	cpu->avx512cd = zmm && (b7 & bit_AVX512CD);
	cpu->avx512er = zmm && (b7 & bit_AVX512ER);
	cpu->avx512pf = zmm && (b7 & bit_AVX512PF);
	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		cpu->lzcnt = c & bit_LZCNT;
#else
	memset(cpu, 0, sizeof(*cpu));
#endif
}

/*
 * glibc's init_cpu_features (2.26 and later) replaces AT_PLATFORM on Intel
 * CPUs: "xeon_phi" with AVX512ER and AVX512PF, else "haswell" with AVX2,
 * FMA, BMI1, BMI2, LZCNT, MOVBE and POPCNT.  GLIBC_TUNABLES masking these features is not followed.
 */
const char *ift_ldso_platform(const struct ldso_cpu *cpu, const char *at_platform)
{
	const char *p = NULL;

	if (cpu->intel) {
		if (cpu->avx512cd && cpu->avx512er && cpu->avx512pf)
			p = "xeon_phi";
		if (!p && cpu->avx2 && cpu->fma && cpu->bmi1 && cpu->bmi2 &&
		    cpu->lzcnt && cpu->movbe && cpu->popcnt)
			p = "haswell";
	}
	if (p)
		return p;
	return at_platform ? at_platform : ift_arch_native->name;
}

static const char *dst_platform(void)
{
	struct ldso_cpu cpu;

	ift_ldso_cpu_read(&cpu);
	return ift_ldso_platform(&cpu, (const char *)getauxval(AT_PLATFORM));
}

/*
 * Expands the dynamic string tokens of one path-list element IN (LEN bytes):
 * $ORIGIN, $LIB, $PLATFORM, bare or in braces.  Returns false when the result
 * would not fit OUT, or uses $ORIGIN where there is none.
 */
static bool dst_expand(const char *in, size_t len, const char *origin, char *out,
		       size_t outsz)
{
	static const char *const tokens[] = { "ORIGIN", "LIB", "PLATFORM" };
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		const char *val = NULL;
		size_t skip = 0;

		if (in[i] == '$') {
			bool brace = i + 1 < len && in[i + 1] == '{';
			const char *t = in + i + 1 + brace;
			size_t tl_max = len - i - 1 - brace;

			for (size_t k = 0; k < 3 && !val; k++) {
				size_t tl = strlen(tokens[k]);

				if (tl > tl_max || memcmp(t, tokens[k], tl))
					continue;
				if (brace) {
					if (tl >= tl_max || t[tl] != '}')
						continue;
				} else if (tl < tl_max &&
					   (isalnum((unsigned char)t[tl]) || t[tl] == '_')) {
					continue;	/* $ORIGINAL is not $ORIGIN */
				}
				skip = 1 + brace + tl + brace;
				val = k == 0 ? origin : k == 1 ? dst_lib() : dst_platform();
				if (!val)
					return false;
			}
		}
		if (val) {
			size_t vl = strlen(val);

			if (o + vl >= outsz)
				return false;
			memcpy(out + o, val, vl);
			o += vl;
			i += skip;
		} else {
			if (o + 1 >= outsz)
				return false;
			out[o++] = in[i++];
		}
	}
	out[o] = 0;
	return true;
}

static void obj_release(struct obj *o)
{
	free(o->origin);
	ift_dso_dyn_release(&o->dyn);
}

static bool closure_has_file(const struct closure *c, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].dev == dev && c->objs[i].ino == ino)
			return true;
	return false;
}

/*
 * Tries PATH as the object for a DT_NEEDED entry: it must be an ELF object of
 * our machine (ld.so skips others and searches on).  Returns 1 with *DYN
 * filled, 0 to search on, or a fatal error.
 */
static int candidate_try(const char *path, struct dso_dyn *dyn)
{
	int ret = ift_dso_dyn_read(path, dyn);

	if (!ret)
		return 1;
	ift_dso_dyn_release(dyn);
	return fatal(ret) ? ret : 0;
}

/*
 * Looks for NAME in each directory of the path list LIST (separators SEPS; an
 * empty element is the current directory), expanding tokens against ORIGIN.
 */
static int search_list(const char *list, const char *seps, const char *origin,
		       const char *name, char *path, struct dso_dyn *dyn)
{
	const char *p = list;

	while (p) {
		size_t len = strcspn(p, seps);
		char dir[PATH_MAX];
		int ret, n;

		if (!len) {
			strcpy(dir, ".");
		} else if (!dst_expand(p, len, origin, dir, sizeof(dir))) {
			goto next;
		}
		n = snprintf(path, PATH_MAX, "%s/%s", dir, name);
		if (n > 0 && n < PATH_MAX) {
			ret = candidate_try(path, dyn);
			if (ret)
				return ret;
		}
next:
		p = p[len] ? p + len + 1 : NULL;
	}
	return 0;
}

/* Where ld.so would find NAME, needed by object LOADER.  1 found, 0 not, or fatal. */
static int search_needed(struct closure *c, size_t loader, const char *name,
			 char *path, struct dso_dyn *dyn)
{
	const struct obj *lo = &c->objs[loader];
	const char *hit;
	int ret;

	if (!lo->dyn.runpath) {
		/* loader indices only go down, so the walk ends at the executable */
		for (int l = (int)loader; l >= 0; l = c->objs[l].loader) {
			const struct obj *o = &c->objs[l];

			if (!o->dyn.rpath)
				continue;
			ret = search_list(o->dyn.rpath, ":", o->origin, name, path, dyn);
			if (ret)
				return ret;
		}
	}
	if (c->ld_library_path) {
		/* $ORIGIN in LD_LIBRARY_PATH is the executable's */
		ret = search_list(c->ld_library_path, ":;", c->objs[0].origin, name, path, dyn);
		if (ret)
			return ret;
	}
	if (lo->dyn.runpath) {
		ret = search_list(lo->dyn.runpath, ":", lo->origin, name, path, dyn);
		if (ret)
			return ret;
	}
	if (lo->dyn.nodeflib)
		return 0;
	if (!c->d->cache_tried) {
		c->d->cache_tried = true;
		if (ift_ldcache_load(&c->d->cache, LD_SO_CACHE) == -ENOMEM)
			return -ENOMEM;
	}
	hit = ift_ldcache_lookup(&c->d->cache, name);
	if (hit && strlen(hit) < PATH_MAX) {
		strcpy(path, hit);
		ret = candidate_try(path, dyn);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++) {
		char dir[PATH_MAX];

		if (!arch_path(default_dirs[i], 0, dir, sizeof(dir)))
			continue;
		ret = search_list(dir, ":", NULL, name, path, dyn);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether NAME was looked up already, or is the soname of an object loaded. */
static bool closure_seen(const struct closure *c, const char *name)
{
	for (size_t i = 0; i < c->nseen; i++)
		if (!strcmp(c->seen[i], name))
			return true;
	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].dyn.soname && !strcmp(c->objs[i].dyn.soname, name))
			return true;
	return false;
}

/* Adds the object at PATH to the closure (once per file).  0, or fatal. */
static int closure_push(struct closure *c, const char *path, struct dso_dyn *dyn,
			int loader)
{
	struct obj *o;
	struct stat st;
	int ret;

	if (stat(path, &st) || closure_has_file(c, st.st_dev, st.st_ino) ||
	    c->nobjs >= DISCOVER_MAX_OBJS) {
		ift_dso_dyn_release(dyn);
		return 0;
	}
	o = &c->objs[c->nobjs];
	memset(o, 0, sizeof(*o));
	o->origin = origin_of(path);
	if (!o->origin) {
		ift_dso_dyn_release(dyn);
		return -ENOMEM;
	}
	o->dyn = *dyn;
	memset(dyn, 0, sizeof(*dyn));
	o->loader = loader;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	c->nobjs++;
	ret = add_lib(c->d, path, c->found_by);
	return ret < 0 ? ret : 0;
}

/*
 * The DT_NEEDED closure of the executable EXE, breadth first as ld.so loads
 * it.  ORIGIN is $ORIGIN for the executable (the directory of its real path).
 */
static int closure_walk(struct disc *d, const char *exe, const char *ld_library_path,
			const char *found_by)
{
	struct closure c = { .d = d, .ld_library_path = ld_library_path,
			     .found_by = found_by };
	struct dso_dyn dyn;
	char *real;
	int ret;

	ret = ift_dso_dyn_read(exe, &dyn);
	if (ret) {
		ift_dso_dyn_release(&dyn);
		return fatal(ret) ? ret : 0;	/* not an ELF program: nothing to follow */
	}
	c.objs = calloc(DISCOVER_MAX_OBJS, sizeof(*c.objs));
	c.seen = calloc(MAX_SEEN_NAMES, sizeof(*c.seen));
	real = realpath(exe, NULL);
	if (!c.objs || !c.seen || !real) {
		ret = (!c.objs || !c.seen || errno == ENOMEM) ? -ENOMEM : 0;
		ift_dso_dyn_release(&dyn);
		goto out;
	}
	/* the executable's $ORIGIN comes from /proc/self/exe: links resolved */
	ret = closure_push(&c, real, &dyn, -1);
	for (size_t i = 0; i < c.nobjs && !ret; i++) {
		for (size_t k = 0; k < c.objs[i].dyn.nneeded && !ret; k++) {
			const char *name = c.objs[i].dyn.needed[k];
			char path[PATH_MAX];
			int found;

			if (closure_seen(&c, name))
				continue;
			if (c.nseen < MAX_SEEN_NAMES) {
				c.seen[c.nseen] = strdup(name);
				if (!c.seen[c.nseen]) {
					ret = -ENOMEM;
					break;
				}
				c.nseen++;
			}
			if (strchr(name, '/')) {
				if (strlen(name) >= PATH_MAX)
					continue;
				strcpy(path, name);
				found = candidate_try(path, &dyn);
			} else {
				found = search_needed(&c, i, name, path, &dyn);
			}
			if (found < 0)
				ret = found;
			else if (found)
				ret = closure_push(&c, path, &dyn, (int)i);
		}
	}
out:
	free(real);
	for (size_t i = 0; i < c.nobjs; i++)
		obj_release(&c.objs[i]);
	for (size_t i = 0; i < c.nseen; i++)
		free(c.seen[i]);
	free(c.objs);
	free(c.seen);
	return ret;
}

/* ---- the command --------------------------------------------------------- */

/* CMD on the search path PATHS, as execvp() finds it.  0 with OUT filled, or -ENOENT. */
static int command_resolve(const char *cmd, const char *paths, char *out)
{
	struct stat st;

	if (strchr(cmd, '/')) {
		if (strlen(cmd) >= PATH_MAX)
			return -ENAMETOOLONG;
		if (stat(cmd, &st))
			return -errno;
		strcpy(out, cmd);
		return 0;
	}
	if (!paths)
		paths = "/bin:/usr/bin";	/* execvp's default */
	for (const char *p = paths; p;) {
		size_t len = strcspn(p, ":");
		int n;

		if (len)
			n = snprintf(out, PATH_MAX, "%.*s/%s", (int)len, p, cmd);
		else
			n = snprintf(out, PATH_MAX, "%s", cmd);
		if (n > 0 && n < PATH_MAX && !stat(out, &st) && S_ISREG(st.st_mode) &&
		    !access(out, X_OK))
			return 0;
		p = p[len] ? p + len + 1 : NULL;
	}
	return -ENOENT;
}

/*
 * The interpreter of a "#!" script at PATH, as the kernel reads it (one
 * optional argument), into INTERP and ARG.  1 for a script, else 0.
 */
static int shebang_read(const char *path, char *interp, char *arg, size_t sz)
{
	char line[256];
	ssize_t n;
	char *p, *end;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = 0;
	end = strchr(line, '\n');
	if (!end)
		return 0;
	*end = 0;
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	n = (ssize_t)strcspn(p, " \t");
	if (!n || (size_t)n >= sz)
		return 0;
	memcpy(interp, p, (size_t)n);
	interp[n] = 0;
	for (p += n; *p == ' ' || *p == '\t'; p++)
		;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = 0;
	if (strlen(p) >= sz)
		return 0;
	strcpy(arg, p);
	return 1;
}

static bool is_python(const char *name)
{
	return !strncmp(name, "python", 6);
}

/*
 * Follows "#!" interpreters from PATH (in place) to the ELF program that
 * runs, through `/usr/bin/env NAME' too.  Sets PYTHON to the first Python
 * met on the way (it must be empty on entry unless already known).
 */
static void script_follow(char *path, const char *paths, char *python)
{
	for (int depth = 0; depth < DISCOVER_MAX_SCRIPTS; depth++) {
		char interp[PATH_MAX], arg[PATH_MAX], next[PATH_MAX];

		if (shebang_read(path, interp, arg, sizeof(interp)) != 1)
			return;
		if (!strcmp(base_name(interp), "env")) {
			char *w = arg, *e;

			/* the first word that is not an option: "env -S python3 -u" */
			while (*w == '-') {
				w += strcspn(w, " \t");
				w += strspn(w, " \t");
			}
			e = w + strcspn(w, " \t");
			*e = 0;
			if (!*w || command_resolve(w, paths, next))
				return;
		} else {
			strcpy(next, interp);
		}
		if (!*python && is_python(base_name(next)))
			strcpy(python, next);
		strcpy(path, next);
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the CUDA libraries of directory DIR, in name order. */
static int dir_scan(struct disc *d, const char *dir, const char *found_by)
{
	char **names = NULL;
	size_t n = 0, cap = 0, seen = 0;
	struct dirent *de;
	int ret = 0, added = 0;
	DIR *dh;

	dh = opendir(dir);
	if (!dh)
		return 0;
	while ((de = readdir(dh)) && seen++ < DISCOVER_MAX_DIRENTS) {
		if (!ift_cuda_lib_api(de->d_name))
			continue;
		if (ift_array_grow((void **)&names, &cap, n + 1, sizeof(*names)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			ret = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n && ret >= 0; i++) {
		char path[PATH_MAX];
		int len = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);

		if (len <= 0 || len >= (int)sizeof(path))
			continue;
		ret = add_lib(d, path, found_by);
		added += ret > 0;
	}
out:
	closedir(dh);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret < 0 ? ret : added;
}

/* Every directory matching the glob PATTERN, scanned. */
static int glob_scan(struct disc *d, const char *pattern, const char *found_by)
{
	glob_t g;
	int ret = 0, added = 0;

	if (glob(pattern, GLOB_ONLYDIR, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc && ret >= 0; i++) {
		ret = dir_scan(d, g.gl_pathv[i], found_by);
		added += ret > 0 ? ret : 0;
	}
	globfree(&g);
	return ret < 0 ? ret : added;
}

/* DIR joined with a relative SUB, then scanned; nothing when it would not fit. */
static int subdir_scan(struct disc *d, const char *dir, const char *sub, const char *found_by)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, sub);

	if (n <= 0 || n >= (int)sizeof(path))
		return 0;
	return dir_scan(d, path, found_by);
}

/* A conda environment keeps its CUDA runtime in lib and targets/<target>/lib. */
static int conda_scan(struct disc *d, const char *prefix)
{
	char sub[PATH_MAX];
	int ret = subdir_scan(d, prefix, "lib", "conda");

	for (size_t k = 0; ret >= 0 && arch_path("targets/%t/lib", k, sub, sizeof(sub)); k++)
		ret = subdir_scan(d, prefix, sub, "conda");
	return ret;
}

static bool is_conda_prefix(const char *prefix)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/conda-meta", prefix);

	return n > 0 && n < (int)sizeof(path) && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* One sys.path entry: its nvidia/\*\/lib and torch/lib. */
static int site_scan(struct disc *d, const char *site)
{
	char nv[PATH_MAX];
	struct dirent *de;
	size_t seen = 0;
	int ret, n;
	DIR *dh;

	ret = subdir_scan(d, site, "torch/lib", "python");
	if (ret < 0)
		return ret;
	n = snprintf(nv, sizeof(nv), "%s/nvidia", site);
	if (n <= 0 || n >= (int)sizeof(nv))
		return 0;
	dh = opendir(nv);
	if (!dh)
		return 0;
	while ((de = readdir(dh)) && seen++ < DISCOVER_MAX_DIRENTS && ret >= 0) {
		char sub[NAME_MAX + 8];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/lib", de->d_name);
		ret = subdir_scan(d, nv, sub, "python");
	}
	closedir(dh);
	return ret < 0 ? ret : 0;
}

/*
 * Asks the interpreter PYTHON (started as ARGV0) for sys.prefix and sys.path,
 * and scans them.  An interpreter that fails or hangs only costs its time.
 */
static int python_scan(struct disc *d, const char *python, const char *argv0)
{
	char *out, *line, *save = NULL, *real, *prefix = NULL;
	int ret = 0;

	real = realpath(python, NULL);
	if (real) {
		/* PREFIX/bin/python: a conda environment when PREFIX has conda-meta */
		char *s = strrchr(real, '/');

		if (s) {
			*s = 0;
			s = strrchr(real, '/');
			if (s && s != real) {
				*s = 0;
				if (is_conda_prefix(real))
					ret = conda_scan(d, real);
			}
		}
		free(real);
		if (ret < 0)
			return ret;
	}
	ret = ift_python_sys_path(python, argv0, d->envp, d->run_as, d->stop,
			      PYTHON_TIMEOUT_MS, &out);
	if (ret)
		return fatal(ret) ? ret : 0;
	for (line = strtok_r(out, "\n", &save); line && ret >= 0;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != '/')
			continue;	/* "" is the script's directory, unknown here */
		if (!prefix) {
			prefix = line;	/* the first line is sys.prefix */
			if (is_conda_prefix(prefix))
				ret = conda_scan(d, prefix);
			continue;
		}
		ret = site_scan(d, line);
	}
	free(out);
	return ret < 0 ? ret : 0;
}

static int command_scan(struct disc *d, char *const *argv)
{
	const char *paths = env_get(d->envp, "PATH");
	char exe[PATH_MAX], python[PATH_MAX] = "";
	int ret;

	if (!paths && d->envp == environ)
		paths = getenv("PATH");
	ret = command_resolve(argv[0], paths, exe);
	if (ret)
		return ret;
	if (is_python(base_name(argv[0])) || is_python(base_name(exe)))
		strcpy(python, exe);
	script_follow(exe, paths, python);
	ret = closure_walk(d, exe, env_get(d->envp, "LD_LIBRARY_PATH"), "DT_NEEDED");
	if (ret < 0 || !*python)
		return ret;
	return python_scan(d, python, base_name(python));
}

/* ---- processes ------------------------------------------------------------ */

int ift_discover_maps(pid_t pid, struct ift_libset *set)
{
	struct disc d = { .set = set };
	char path[64], *line = NULL, *prev = NULL;
	size_t cap = 0, nlines = 0;
	int ret = 0, added = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0 && nlines++ < MAX_MAPS_LINES && ret >= 0) {
		char *file, *nl, alt[PATH_MAX];
		int skip = 0;

		/* address perms offset dev inode [path] */
		/* read once a second while recording: skip most lines cheaply */
		if (!strstr(line, "libcud"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %*s %n", &skip) < 0 || !skip)
			continue;
		file = line + skip;
		nl = strchr(file, '\n');
		if (nl)
			*nl = 0;
		if (file[0] != '/' || !ift_cuda_lib_api(base_name(file)))
			continue;
		if (strlen(file) > 10 && !strcmp(file + strlen(file) - 10, " (deleted)"))
			continue;	/* replaced on disk: a new probe would not reach it */
		if (prev && !strcmp(prev, file))
			continue;	/* one mapping per segment; one look is enough */
		free(prev);
		prev = strdup(file);
		if (!prev) {
			ret = -ENOMEM;
			break;
		}
		ret = ift_libset_add(set, file, "proc-maps");
		if (ret == -ENOENT) {
			/* another mount namespace: reach it through the process's root */
			int n = snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)pid, file);

			if (n > 0 && n < (int)sizeof(alt))
				ret = ift_libset_add(set, alt, "proc-maps");
		}
		if (ret < 0 && !fatal(ret))
			ret = 0;
		added += ret > 0;
	}
	(void)d;
	free(prev);
	free(line);
	fclose(f);
	return ret < 0 ? ret : added;
}

/* The process's environment, as an envp array over one buffer (*BUF). */
static char **environ_read(pid_t pid, char **buf)
{
	char path[64], **env;
	size_t len = 0, n = 0, k = 0;
	ssize_t r;
	int fd;

	*buf = NULL;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	*buf = malloc(MAX_ENVIRON + 1);
	if (!*buf) {
		close(fd);
		return NULL;
	}
	while (len < MAX_ENVIRON && (r = read(fd, *buf + len, MAX_ENVIRON - len)) > 0)
		len += (size_t)r;
	close(fd);
	(*buf)[len] = 0;
	for (size_t i = 0; i < len; i++)
		n += !(*buf)[i];
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < len; i += strlen(*buf + i) + 1)
		if ((*buf)[i] && k <= n)
			env[k++] = *buf + i;
	return env;
}

/* PID's maps, and its executable's closure under its own LD_LIBRARY_PATH. */
static int pid_scan(struct disc *d, pid_t pid)
{
	char link[64], exe[PATH_MAX], *buf, **env;
	ssize_t n;
	int ret;

	ret = ift_discover_maps(pid, d->set);
	if (ret < 0)
		return ret;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;	/* a kernel thread, or not ours to read */
	exe[n] = 0;
	env = environ_read(pid, &buf);
	ret = closure_walk(d, exe, env_get(env, "LD_LIBRARY_PATH"), "DT_NEEDED");
	free(env);
	free(buf);
	return ret < 0 ? ret : 0;
}

static int all_procs_scan(struct disc *d)
{
	struct dirent *de;
	size_t seen = 0;
	int ret = 0;
	DIR *dh;

	dh = opendir("/proc");
	if (!dh)
		return -errno;
	while ((de = readdir(dh)) && seen++ < MAX_PROCS && ret >= 0) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		ret = ift_discover_maps((pid_t)pid, d->set);
		if (ret < 0 && !fatal(ret))
			ret = 0;	/* gone meanwhile, or not ours to read */
	}
	closedir(dh);
	return ret < 0 ? ret : 0;
}

/* ---- all together --------------------------------------------------------- */

int ift_discover(const struct ift_discover_opts *opts, struct ift_libset *set)
{
	struct disc d = { .set = set, .envp = opts->envp ? opts->envp : environ,
			  .run_as = opts->run_as, .stop = opts->stop };
	size_t before = set->n;
	const char *conda;
	int ret = 0;

	if (opts->argv && opts->argv[0])
		ret = command_scan(&d, opts->argv);
	if (ret >= 0 && d.stop && *d.stop)
		ret = -EINTR;
	for (size_t i = 0; i < opts->npids && ret >= 0; i++)
		ret = pid_scan(&d, opts->pids[i]);
	conda = env_get(d.envp, "CONDA_PREFIX");
	if (ret >= 0 && conda && conda[0] == '/')
		ret = conda_scan(&d, conda);
	for (size_t i = 0; i < sizeof(cuda_dir_globs) / sizeof(cuda_dir_globs[0]) && ret >= 0; i++) {
		char pat[PATH_MAX];

		for (size_t k = 0; ret >= 0 && arch_path(cuda_dir_globs[i], k, pat, sizeof(pat)); k++)
			ret = glob_scan(&d, pat, "cuda-dir");
	}
	if (ret >= 0 && opts->all_procs)
		ret = all_procs_scan(&d);
	ift_ldcache_release(&d.cache);
	if (ret < 0)
		return ret;
	return (int)(set->n - before);
}
