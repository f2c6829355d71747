// SPDX-License-Identifier: MIT
/*
 * Unwinding a copied user stack and naming its frames, after the fact.
 *
 * libunwind's remote API walks a stack that is not ours: every memory read
 * and register read goes through the accessors below, which answer from the
 * saved registers, the saved stack bytes, and the ELF files the process had
 * mapped (their .eh_frame_hdr and .eh_frame, found through PT_GNU_EH_FRAME).
 * So code built without frame pointers unwinds, and nothing needs the
 * process to be alive.
 */
#define UNW_REMOTE_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-stack.h"
#include "util/array.h"
#include "util/span.h"

#ifdef IFT_STATIC
/* libstdc++'s demangler (cxxabi.h), which a static build links in */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

/* ift_arch_native's unw_to_perf is indexed by this libunwind's numbers */
#if defined(__x86_64__)
_Static_assert(UNW_X86_64_RIP == 16 && UNW_X86_64_RSP == 7, "libunwind's x86-64 numbers");
#elif defined(__aarch64__)
_Static_assert(UNW_AARCH64_PC == 32 && UNW_AARCH64_SP == 31, "libunwind's aarch64 numbers");
#endif

/* Not in libunwind's headers, exported all the same (perf uses it too). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define MAX_LOADS	16

struct sym {
	uint64_t addr, size;
	const char *name;	/* in the ELF data, or demangled (owned) */
};

struct load {
	uint64_t vaddr, off, filesz;
};

struct module {
	char *path;
	const struct ift_unwinder *u;	/* whose permissions open it */
	bool tried, ok;
	const uint8_t *data;	/* the whole file, mapped */
	size_t size;
	struct load loads[MAX_LOADS];
	unsigned nloads;
	uint64_t ehf_vaddr, table_vaddr, fde_count;
	bool have_ehf;
	bool syms_loaded, python;
	struct sym *syms;
	size_t nsyms;
	char **owned;		/* demangled names */
	size_t nowned;
};

struct map {
	uint64_t start, end, pgoff;
	struct module *mod;
};

struct proc {
	pid_t pid;
	struct map *maps;
	size_t n, cap;
	/* the last load segment file_read() found outside the exec maps */
	uint64_t hit_lo, hit_hi, hit_delta;
	struct module *hit_mod;
};

struct ift_unwinder {
	struct module **mods;
	size_t nmods;
	struct proc *procs;
	size_t nprocs;
	unw_addr_space_t as;
	bool as_user;		/* open files with USER:GROUP's permissions */
	uid_t user;
	gid_t group;
	char *(*demangle)(const char *, char *, size_t *, int *);
	void *cxx;
	char fmtbuf[64];
};

/* What the accessors see during one unwind. */
struct uctx {
	struct ift_unwinder *u;
	struct proc *p;
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t sp;
	size_t len;
	/* the module whose unwind table find_proc_info() last searched, and
	   its load bias: the table's reads fall there */
	struct module *mod;
	uint64_t bias;
};

/* ---- modules ---------------------------------------------------------- */

static struct module *module_get(struct ift_unwinder *u, const char *path)
{
	struct module **v, *m;

	for (size_t i = 0; i < u->nmods; i++)
		if (!strcmp(u->mods[i]->path, path))
			return u->mods[i];
	v = realloc(u->mods, (u->nmods + 1) * sizeof(*v));
	if (!v)
		return NULL;
	u->mods = v;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	m->u = u;
	u->mods[u->nmods++] = m;
	return m;
}

void ift_unwinder_open_as(struct ift_unwinder *u, uid_t uid, gid_t gid)
{
	u->as_user = uid != (uid_t)-1 && uid != 0 && geteuid() == 0;
	u->user = uid;
	u->group = gid;
}

/*
 * PATH, read-only, with the permissions of the user the unwinder acts for
 * (the file system ids of this thread, then back): a path perf reported is
 * the traced user's to change after mapping it, so it opens only what that
 * user could read.
 */
static int open_as(const struct ift_unwinder *u, const char *path)
{
	int fd, e, uid = 0, gid = 0;

	if (u->as_user) {
		gid = setfsgid(u->group);
		uid = setfsuid(u->user);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = errno;
	if (u->as_user) {
		setfsuid((uid_t)uid);
		setfsgid((gid_t)gid);
	}
	errno = e;
	return fd;
}

static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

/* Maps the file and reads its loads and unwind table; false when unusable. */
static bool module_load(struct module *m)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t nph;
	Elf *e;
	int fd;

	if (m->tried)
		return m->ok;
	m->tried = true;
	fd = open_as(m->u, m->path);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_size < 64) {
		close(fd);
		return false;
	}
	m->data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->data == MAP_FAILED) {
		m->data = NULL;
		return false;
	}
	m->size = (size_t)st.st_size;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)m->data, m->size);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
	    elf_getphdrnum(e, &nph) < 0) {
		if (e)
			elf_end(e);
		return false;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && m->nloads < MAX_LOADS) {
			m->loads[m->nloads].vaddr = ph.p_vaddr;
			m->loads[m->nloads].off = ph.p_offset;
			m->loads[m->nloads].filesz = ph.p_filesz;
			m->nloads++;
		} else if (ph.p_type == PT_GNU_EH_FRAME && ph.p_offset + 12 <= m->size) {
			const uint8_t *h = m->data + ph.p_offset;
			unsigned ptr = enc_size(h[1]), cnt = enc_size(h[2]);
			uint32_t n;

			if (h[0] != 1 || !ptr || cnt != 4 || h[3] != 0x3b ||
			    ph.p_offset + 4 + ptr + 4 > m->size)
				continue;
			memcpy(&n, h + 4 + ptr, 4);
			m->ehf_vaddr = ph.p_vaddr;
			m->table_vaddr = ph.p_vaddr + 4 + ptr + 4;
			m->fde_count = n;
			m->have_ehf = true;
		}
	}
	elf_end(e);
	m->ok = m->nloads > 0;
	return m->ok;
}

/* File offset of VADDR in M, or -1. */
static int64_t vaddr_off(const struct module *m, uint64_t vaddr)
{
	for (unsigned i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz)
			return (int64_t)(vaddr - l->vaddr + l->off);
	}
	return -1;
}

/* The ELF vaddr of file offset OFF in M, or -1. */
static int64_t off_vaddr(const struct module *m, uint64_t off)
{
	for (unsigned i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (off >= l->off && off < l->off + l->filesz)
			return (int64_t)(off - l->off + l->vaddr);
	}
	return -1;
}

/* The load segment holding file offset OFF in M, or NULL. */
static const struct load *load_of(const struct module *m, uint64_t off)
{
	for (unsigned i = 0; i < m->nloads; i++)
		if (off >= m->loads[i].off && off < m->loads[i].off + m->loads[i].filesz)
			return &m->loads[i];
	return NULL;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sized symbol before an unsized alias */
	return (x->size < y->size) - (x->size > y->size);
}

static void syms_add(struct module *m, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
		     size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (ift_array_grow((void **)&m->syms, cap, m->nsyms + 1, sizeof(*m->syms)) < 0)
			return;
		m->syms[m->nsyms].addr = sym.st_value;
		m->syms[m->nsyms].size = sym.st_size;
		m->syms[m->nsyms].name = name;
		m->nsyms++;
	}
}

/* The function symbols of .symtab, or of .dynsym in a stripped file. */
static void module_syms(struct module *m)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh, dsh, tsh;
	size_t cap = 0;
	const char *base;
	Elf *e;

	if (m->syms_loaded)
		return;
	m->syms_loaded = true;
	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	m->python = !strncmp(base, "libpython", 9) || !strncmp(base, "python3", 7);
	if (!module_load(m))
		return;
	e = elf_memory((char *)m->data, m->size);
	if (!e)
		return;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			tab = scn;
			tsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dsh = sh;
		}
	}
	if (tab)
		syms_add(m, e, tab, &tsh, &cap);
	if (dyn)
		syms_add(m, e, dyn, &dsh, &cap);
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), sym_cmp);
	/*
	 * The names point into the mapped file and stay valid; elf_end() only
	 * frees libelf's descriptors of it.
	 */
	elf_end(e);
}

/* The symbol holding VADDR, or NULL. */
static struct sym *sym_find(struct module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms;
	struct sym *s;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &m->syms[lo - 1];
	/* the first symbol at that address is the sized one */
	while (s > m->syms && s[-1].addr == s->addr)
		s--;
	if (s->size && vaddr >= s->addr + s->size)
		return NULL;
	return s;
}

/* ---- processes -------------------------------------------------------- */

/* P's mappings changed: what was cached from them is stale. */
static void proc_changed(struct proc *p)
{
	p->hit_mod = NULL;
}

static struct proc *proc_get(struct ift_unwinder *u, pid_t pid, bool create)
{
	struct proc *v;

	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (!create)
		return NULL;
	v = realloc(u->procs, (u->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	u->procs = v;
	memset(&v[u->nprocs], 0, sizeof(*v));
	v[u->nprocs].pid = pid;
	return &v[u->nprocs++];
}

static int proc_add(struct proc *p, const struct map *m)
{
	if (ift_array_grow((void **)&p->maps, &p->cap, p->n + 1, sizeof(*p->maps)) < 0)
		return -ENOMEM;
	p->maps[p->n++] = *m;
	return 0;
}

/* The newest mapping of P holding ADDR, or NULL. */
static const struct map *map_find(const struct proc *p, uint64_t addr)
{
	if (!p)
		return NULL;
	for (size_t i = p->n; i--; )
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

int ift_unwinder_map(struct ift_unwinder *u, pid_t pid, uint64_t start,
		     uint64_t end, uint64_t pgoff, const char *path)
{
	struct proc *p;
	struct map m;

	if (!path || path[0] != '/' || end <= start)
		return 0;	/* anonymous, [vdso], ...: nothing to read */
	if (!(p = proc_get(u, pid, true)))
		return -ENOMEM;
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	if (!(m.mod = module_get(u, path)))
		return -ENOMEM;
	proc_changed(p);
	return proc_add(p, &m);
}

int ift_unwinder_read_maps(struct ift_unwinder *u, pid_t pid)
{
	char path[64], line[4400], file[4097];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4096[^\n]", &start, &end,
			   perms, &off, file) < 4 || perms[2] != 'x')
			continue;
		ret = ift_unwinder_map(u, pid, start, end, off, file);
	}
	fclose(f);
	return ret;
}

void ift_unwinder_fork(struct ift_unwinder *u, pid_t pid, pid_t ppid)
{
	struct proc *pp = proc_get(u, ppid, false), *p;
	size_t n;

	if (!pp || pid == ppid || !(p = proc_get(u, pid, true)))
		return;
	pp = proc_get(u, ppid, false);	/* proc_get may have moved it */
	/* the parent's maps go first: the child's own, newer ones win */
	n = pp->n;
	for (size_t i = 0; i < n; i++) {
		struct map m = pp->maps[i];

		if (proc_add(p, &m) < 0)
			return;
	}
	if (p->n > n) {
		struct map *tmp = malloc(p->n * sizeof(*tmp));
		size_t own = p->n - n;

		if (!tmp)
			return;
		memcpy(tmp, p->maps + own, n * sizeof(*tmp));
		memcpy(tmp + n, p->maps, own * sizeof(*tmp));
		memcpy(p->maps, tmp, p->n * sizeof(*tmp));
		free(tmp);
	}
	proc_changed(p);
}

void ift_unwinder_exec(struct ift_unwinder *u, pid_t pid)
{
	struct proc *p = proc_get(u, pid, false);

	if (p) {
		p->n = 0;
		proc_changed(p);
	}
}

/* ---- libunwind accessors ---------------------------------------------- */

/* Reads 8 bytes at ADDR of a mapped file. */
static bool file_read(struct proc *p, uint64_t addr, unw_word_t *val)
{
	const struct map *m;
	uint64_t off;

	/* the unwind tables' binary search reads one segment many times */
	if (p && p->hit_mod && p->hit_hi >= p->hit_lo &&
	    ift_span_holds(p->hit_lo, p->hit_hi - p->hit_lo, addr, 8)) {
		memcpy(val, p->hit_mod->data + (addr - p->hit_delta), 8);
		return true;
	}
	m = map_find(p, addr);
	if (m) {
		off = addr - m->start + m->pgoff;
		if (!module_load(m->mod) || off + 8 > m->mod->size)
			return false;
		memcpy(val, m->mod->data + off, 8);
		return true;
	}
	/*
	 * Only executable mappings are reported: the unwind tables may lie in
	 * a read-only segment next to them.  Find the module by its load bias.
	 */
	for (size_t i = p ? p->n : 0; i--; ) {
		const struct map *x = &p->maps[i];
		struct module *mod = x->mod;
		int64_t va, o;

		if (!module_load(mod))
			continue;
		va = off_vaddr(mod, x->pgoff);
		if (va < 0)
			continue;
		/* bias = start - vaddr of the mapping's first byte */
		o = vaddr_off(mod, addr - (x->start - (uint64_t)va));
		if (o >= 0 && (uint64_t)o + 8 <= mod->size) {
			const struct load *l = load_of(mod, (uint64_t)o);

			memcpy(val, mod->data + o, 8);
			if (l && l->off + l->filesz <= mod->size) {
				p->hit_mod = mod;
				p->hit_delta = addr - (uint64_t)o;
				p->hit_lo = l->off + p->hit_delta;
				p->hit_hi = p->hit_lo + l->filesz;
			}
			return true;
		}
	}
	return false;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	const struct map *m = map_find(c->p, ip);
	unw_dyn_info_t di;
	int64_t va;
	uint64_t bias;

	if (!m || !module_load(m->mod) || !m->mod->have_ehf)
		return -UNW_ENOINFO;
	va = off_vaddr(m->mod, ip - m->start + m->pgoff);
	if (va < 0)
		return -UNW_ENOINFO;
	bias = ip - (uint64_t)va;
	c->mod = m->mod;
	c->bias = bias;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = bias + m->mod->ehf_vaddr;
	di.u.rti.table_data = bias + m->mod->table_vaddr;
	di.u.rti.table_len = m->mod->fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi,
						  need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)arg;
	/* dwarf_search_unwind_table allocates nothing we must release here
	   for a table format; keep what libunwind keeps */
	(void)pi;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
	(void)as;
	(void)dil;
	(void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		      int write, void *arg)
{
	struct uctx *c = arg;

	(void)as;
	if (write)
		return -UNW_EINVAL;
	if (ift_span_holds(c->sp, c->len, addr, 8)) {
		memcpy(val, c->stack + (addr - c->sp), 8);
		return 0;
	}
	if (c->mod) {
		int64_t o = vaddr_off(c->mod, addr - c->bias);

		if (o >= 0 && (uint64_t)o + 8 <= c->mod->size) {
			memcpy(val, c->mod->data + o, 8);
			return 0;
		}
	}
	if (file_read(c->p, addr, val))
		return 0;
	*val = 0;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
		      int write, void *arg)
{
	const struct ift_arch *a = ift_arch_native;
	struct uctx *c = arg;

	(void)as;
	if (write || reg < 0 || (unsigned)reg >= a->nunw || a->unw_to_perf[reg] < 0)
		return -UNW_EBADREG;
	*val = c->regs[a->unw_to_perf[reg]];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
			int write, void *arg)
{
	(void)as; (void)reg; (void)val; (void)write; (void)arg;
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	(void)as; (void)cu; (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	(void)as; (void)addr; (void)buf; (void)len; (void)offp; (void)arg;
	return -UNW_EINVAL;
}

/*
 * libunwind 1.7 and later strip aarch64's pointer authentication codes
 * from return addresses with the mask this gives.  Without it an arm64
 * program built with branch protection (Debian 13's packages, Ubuntu's)
 * stops the walk at its first signed return address.  Its user addresses
 * are below 2^pac_va_bits unless a mapping of the process lies above.
 * Debian 12's libunwind 1.6 has no such callback.
 */
#if UNW_VERSION_MAJOR > 1 || (UNW_VERSION_MAJOR == 1 && UNW_VERSION_MINOR >= 7)
#define UNW_HAS_PTRAUTH 1
static unw_word_t ptrauth_insn_mask(unw_addr_space_t as, void *arg)
{
	const struct uctx *c = arg;
	unsigned bits = ift_arch_native->pac_va_bits;

	(void)as;
	if (!bits)
		return 0;
	for (size_t i = 0; c->p && i < c->p->n && bits < 52; i++)
		if (c->p->maps[i].end > 1ULL << bits)
			bits = 52;
	return ~((1ULL << bits) - 1);
}
#endif

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
#ifdef UNW_HAS_PTRAUTH
	.ptrauth_insn_mask = ptrauth_insn_mask,
#endif
};

struct ift_unwinder *ift_unwinder_new(void)
{
	struct ift_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * No cache.  One address space serves every process, and libunwind's
	 * cache is keyed by the pc alone.  And where libunwind is built
	 * without __thread (Debian's), a cache means a lock that sets the
	 * signal mask twice a step: measured, a third slower than looking the
	 * rules up again each time, with file_read()'s segment hint.
	 */
	unw_set_caching_policy(u->as, UNW_CACHE_NONE);
#ifdef IFT_STATIC
	/* C++ names: a static build links libstdc++.a's demangler in */
	u->demangle = __cxa_demangle;
#else
	/* C++ names, when libstdc++ is around; the recorder does not link it */
	u->cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (u->cxx)
		*(void **)&u->demangle = dlsym(u->cxx, "__cxa_demangle");
#endif
	return u;
}

void ift_unwinder_free(struct ift_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nmods; i++) {
		struct module *m = u->mods[i];

		if (m->data)
			munmap((void *)m->data, m->size);
		for (size_t k = 0; k < m->nowned; k++)
			free(m->owned[k]);
		free(m->owned);
		free(m->syms);
		free(m->path);
		free(m);
	}
	free(u->mods);
	for (size_t i = 0; i < u->nprocs; i++)
		free(u->procs[i].maps);
	free(u->procs);
	unw_destroy_addr_space(u->as);
	if (u->cxx)
		dlclose(u->cxx);
	free(u);
}

/* Whether PC of C's process is in a CPython interpreter's file. */
static bool in_python(const struct uctx *c, uint64_t pc)
{
	const struct map *m = map_find(c->p, pc);

	return m && m->mod->python;
}

int ift_unwind_to(struct ift_unwinder *u, pid_t pid, const uint64_t *regs,
		  const void *stack, size_t len, uint64_t *ips, int max, bool to_python)
{
	struct uctx c = {
		.u = u, .p = proc_get(u, pid, false), .regs = regs,
		.stack = stack, .sp = regs[ift_arch_native->perf_sp], .len = len,
	};
	unw_cursor_t cur;
	int n = 0;

	if (max <= 0)
		return 0;
	ips[n++] = regs[ift_arch_native->perf_ip];
	if ((to_python && in_python(&c, ips[0])) || unw_init_remote(&cur, u->as, &c) < 0)
		return n;
	while (n < max && unw_step(&cur) > 0) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		ips[n++] = ip;
		if (to_python && in_python(&c, ip))
			break;
	}
	return n;
}

int ift_unwind(struct ift_unwinder *u, pid_t pid, const uint64_t *regs,
	       const void *stack, size_t len, uint64_t *ips, int max)
{
	return ift_unwind_to(u, pid, regs, stack, len, ips, max, false);
}

static const char *demangled(struct ift_unwinder *u, struct module *m,
			     struct sym *s)
{
	char *d, **v;
	int st = -1;

	if (!u->demangle || strncmp(s->name, "_Z", 2))
		return s->name;
	d = u->demangle(s->name, NULL, NULL, &st);
	if (!d || st != 0) {
		free(d);
		return s->name;
	}
	v = realloc(m->owned, (m->nowned + 1) * sizeof(*v));
	if (!v) {
		free(d);
		return s->name;
	}
	m->owned = v;
	m->owned[m->nowned++] = d;
	s->name = d;	/* demangled once */
	return d;
}

void ift_unwinder_frame(struct ift_unwinder *u, pid_t pid, uint64_t ip,
			bool ret_addr, struct ift_frame *f)
{
	const struct map *m = map_find(proc_get(u, pid, false), ip);
	struct sym *s;
	int64_t va;
	uint64_t off;

	memset(f, 0, sizeof(*f));
	f->module = "";
	f->symbol = "";
	f->offset = ip;
	if (!m)
		return;
	off = ip - m->start + m->pgoff;
	f->module = m->mod->path;
	f->offset = off;
	module_syms(m->mod);
	if (m->mod->python)
		f->flags |= IFT_FRAME_F_PYTHON;
	va = off_vaddr(m->mod, ret_addr && off ? off - 1 : off);
	if (va < 0 || !(s = sym_find(m->mod, (uint64_t)va)))
		return;
	f->symbol = demangled(u, m->mod, s);
	f->symoff = (uint64_t)va + (ret_addr && off ? 1 : 0) - s->addr;
	if (!strncmp(f->symbol, "_PyEval_EvalFrame", 17))
		f->flags |= IFT_FRAME_F_PYTHON;
}
