// SPDX-License-Identifier: MIT
/*
 * ELF reading for discover, through libelf: the dynamic section (what ld.so
 * needs to build the closure), the GNU build-id, and the catalog functions'
 * probe offsets.
 *
 * uprobe_events takes a FILE offset: sym_vaddr - p_vaddr + p_offset of the
 * PT_LOAD holding the symbol.  A virtual address is accepted at definition and
 * fails only at enable, and libcudart has offset == vaddr, which hides the
 * mistake; so the offset always goes through the segment table.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-arch.h"
#include "ift-error.h"
#include "internal.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef DF_1_NODEFLIB
#define DF_1_NODEFLIB 0x800
#endif

/* The longest symbol name we can want: a catalog name plus "_ptsz". */
#define WANT_NAME_MAX 64

/*
 * Opens FD as an ELF file of our machine.  Returns the handle or NULL with
 * *ERR set: a file that is not ELF at all is -IFT_E_NOT_ELF, one of another
 * class or machine -ENOEXEC (ld.so skips those and searches on).
 */
static Elf *elf_open_native(int fd, int *err)
{
	GElf_Ehdr eh;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		*err = -ENOSYS;
		return NULL;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		*err = -IFT_E_NOT_ELF;
		return NULL;
	}
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		*err = -IFT_E_NOT_ELF;
		goto fail;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != ift_arch_native->elf_machine || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		*err = -ENOEXEC;
		goto fail;
	}
	return e;
fail:
	elf_end(e);
	return NULL;
}

void ift_dso_dyn_release(struct dso_dyn *dyn)
{
	for (size_t i = 0; i < dyn->nneeded; i++)
		free(dyn->needed[i]);
	free(dyn->needed);
	free(dyn->rpath);
	free(dyn->runpath);
	free(dyn->soname);
	memset(dyn, 0, sizeof(*dyn));
}

static int dyn_str(Elf *e, size_t strndx, uint64_t off, char **out)
{
	const char *s = elf_strptr(e, strndx, off);

	if (!s)
		return 0;	/* a bad string index: treat as absent, as ld.so would not find it either */
	free(*out);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

int ift_dso_dyn_read(const char *path, struct dso_dyn *dyn)
{
	Elf_Scn *scn = NULL;
	struct stat st;
	int fd, ret = 0;
	Elf *e;

	memset(dyn, 0, sizeof(*dyn));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out_fd;
	}
	e = elf_open_native(fd, &ret);
	if (!e)
		goto out_fd;
	while ((scn = elf_nextscn(e, scn)) && !ret) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			break;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !ret; i++) {
			GElf_Dyn dy;

			if (!gelf_getdyn(d, (int)i, &dy) || dy.d_tag == DT_NULL)
				break;
			switch (dy.d_tag) {
			case DT_NEEDED: {
				const char *s = elf_strptr(e, sh.sh_link, dy.d_un.d_val);
				char **v;

				if (!s || dyn->nneeded >= DSO_MAX_NEEDED)
					break;
				v = realloc(dyn->needed, (dyn->nneeded + 1) * sizeof(*v));
				if (!v) {
					ret = -ENOMEM;
					break;
				}
				dyn->needed = v;
				v[dyn->nneeded] = strdup(s);
				if (!v[dyn->nneeded])
					ret = -ENOMEM;
				else
					dyn->nneeded++;
				break;
			}
			case DT_RPATH:
				ret = dyn_str(e, sh.sh_link, dy.d_un.d_val, &dyn->rpath);
				break;
			case DT_RUNPATH:
				ret = dyn_str(e, sh.sh_link, dy.d_un.d_val, &dyn->runpath);
				break;
			case DT_SONAME:
				ret = dyn_str(e, sh.sh_link, dy.d_un.d_val, &dyn->soname);
				break;
			case DT_FLAGS_1:
				if (dy.d_un.d_val & DF_1_NODEFLIB)
					dyn->nodeflib = true;
				break;
			}
		}
		break;	/* one dynamic section */
	}
	/* ld.so ignores DT_RPATH when DT_RUNPATH is present */
	if (dyn->runpath) {
		free(dyn->rpath);
		dyn->rpath = NULL;
	}
	elf_end(e);
out_fd:
	close(fd);
	return ret;
}

/* ---- build-id -------------------------------------------------------- */

static bool note_build_id(Elf_Data *d, struct ift_lib *lib)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < d->d_size &&
	       (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz)
			continue;
		lib->build_id_len = nh.n_descsz < sizeof(lib->build_id) ?
				    nh.n_descsz : sizeof(lib->build_id);
		memcpy(lib->build_id, (const char *)d->d_buf + desc_off, lib->build_id_len);
		return true;
	}
	return false;
}

/* The NT_GNU_BUILD_ID note, from PT_NOTE segments or else SHT_NOTE sections. */
static void find_build_id(Elf *e, size_t nph, struct ift_lib *lib)
{
	Elf_Scn *scn = NULL;

	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d && note_build_id(d, lib))
			return;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && note_build_id(d, lib))
			return;
	}
}

/* ---- symbols --------------------------------------------------------- */

/* One name we look for, and the best definition seen so far. */
struct want {
	char name[WANT_NAME_MAX];
	size_t len;
	const struct ift_func_spec *spec;
	unsigned order;		/* catalog order, for stable output */
	uint64_t value;
	int rank;		/* 0 none yet, 1 a non-default version, 2 default */
};

static int want_cmp(const void *a, const void *b)
{
	return strcmp(((const struct want *)a)->name, ((const struct want *)b)->name);
}

static int want_order_cmp(const void *a, const void *b)
{
	unsigned x = ((const struct want *)a)->order, y = ((const struct want *)b)->order;

	return (x > y) - (x < y);
}

struct name_key {
	const char *s;
	size_t len;
};

static int key_cmp(const void *k, const void *w)
{
	const struct name_key *key = k;
	const struct want *want = w;
	int c = strncmp(key->s, want->name, key->len);

	if (c)
		return c;
	return want->name[key->len] ? -1 : 0;
}

static size_t wants_build(enum ift_api api, struct want *w, size_t cap)
{
	static const char *const suffix[] = { "", "_ptsz", "_ptds" };
	size_t n = 0;

	for (size_t i = 0; i < ift_cuda_nfuncs; i++) {
		const struct ift_func_spec *spec = &ift_cuda_funcs[i];
		unsigned nv = spec->per_thread_variants ? 3 : 1;

		if (spec->api != api)
			continue;
		for (unsigned v = 0; v < nv && n < cap; v++) {
			int len = snprintf(w[n].name, sizeof(w[n].name), "%s%s",
					   spec->name, suffix[v]);

			if (len < 0 || (size_t)len >= sizeof(w[n].name))
				continue;
			w[n].len = (size_t)len;
			w[n].spec = spec;
			w[n].order = (unsigned)n;
			w[n].value = 0;
			w[n].rank = 0;
			n++;
		}
	}
	qsort(w, n, sizeof(*w), want_cmp);
	return n;
}

/*
 * Looks at every defined function of one symbol table.  A name may carry a
 * version ("cudaMalloc@@libcudart.so.13" in .symtab, or a .gnu.version entry
 * for .dynsym); the default version is the one new links bind to, so it wins
 * over a hidden one ("name@VER", or the versym hidden bit).
 */
static void scan_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, Elf_Data *versym,
			struct want *w, size_t nw)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		struct name_key key;
		struct want *hit;
		const char *name, *at;
		GElf_Sym sym;
		int rank = 2, bind;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		bind = GELF_ST_BIND(sym.st_info);
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx == SHN_ABS || !sym.st_value ||
		    (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE))
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		at = strchr(name, '@');
		key.s = name;
		key.len = at ? (size_t)(at - name) : strlen(name);
		if (key.len >= WANT_NAME_MAX)
			continue;
		if (at && at[1] != '@')
			rank = 1;
		if (versym) {
			GElf_Versym vs;

			if (gelf_getversym(versym, (int)i, &vs) && (vs & 0x8000))
				rank = 1;
		}
		hit = bsearch(&key, w, nw, sizeof(*w), key_cmp);
		if (hit && rank > hit->rank) {
			hit->rank = rank;
			hit->value = sym.st_value;
		}
	}
}

/* The file offset of virtual address VADDR, through the executable PT_LOAD holding it. */
static bool vaddr_to_offset(const GElf_Phdr *load, size_t nload, uint64_t vaddr,
			    uint64_t *off)
{
	for (size_t i = 0; i < nload; i++) {
		const GElf_Phdr *p = &load[i];

		if (!(p->p_flags & PF_X) || vaddr < p->p_vaddr ||
		    vaddr - p->p_vaddr >= p->p_filesz)
			continue;
		*off = vaddr - p->p_vaddr + p->p_offset;
		return true;
	}
	return false;
}

int ift_dso_lib_read(int fd, struct ift_lib *lib)
{
	GElf_Phdr load[DSO_MAX_LOADS];
	struct want *w;
	size_t nph = 0, nload = 0, nw, nsyms = 0;
	Elf_Scn *scn;
	int ret = 0;
	Elf *e;

	e = elf_open_native(fd, &ret);
	if (!e)
		return ret;
	if (elf_getphdrnum(e, &nph))
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && nload < DSO_MAX_LOADS)
			load[nload++] = ph;
	}
	find_build_id(e, nph, lib);

	w = calloc(3 * ift_cuda_nfuncs, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto out_elf;
	}
	nw = wants_build(lib->api, w, 3 * ift_cuda_nfuncs);
	/* .dynsym first: what ld.so resolves against; .symtab fills in the rest */
	for (int pass = 0; pass < 2; pass++) {
		Elf32_Word type = pass ? SHT_SYMTAB : SHT_DYNSYM;

		scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			Elf_Data *versym = NULL;
			Elf_Scn *vs = NULL;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
				continue;
			while (type == SHT_DYNSYM && (vs = elf_nextscn(e, vs))) {
				GElf_Shdr vsh;

				if (gelf_getshdr(vs, &vsh) && vsh.sh_type == SHT_GNU_versym &&
				    vsh.sh_link == elf_ndxscn(scn)) {
					versym = elf_getdata(vs, NULL);
					break;
				}
			}
			scan_symtab(e, scn, &sh, versym, w, nw);
		}
	}

	qsort(w, nw, sizeof(*w), want_order_cmp);
	for (size_t i = 0; i < nw; i++)
		nsyms += w[i].rank > 0;
	lib->syms = nsyms ? calloc(nsyms, sizeof(*lib->syms)) : NULL;
	if (nsyms && !lib->syms) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nw; i++) {
		struct ift_sym *s;
		uint8_t head[4];
		uint64_t off;

		if (!w[i].rank || !vaddr_to_offset(load, nload, w[i].value, &off))
			continue;
		/* past a landing pad: x86-64's endbr64, aarch64's bti c */
		if (pread(fd, head, sizeof(head), (off_t)off) == (ssize_t)sizeof(head))
			off += ift_arch_entry_skip(ift_arch_native, head, sizeof(head));
		s = &lib->syms[lib->nsyms];
		s->name = strdup(w[i].name);
		if (!s->name) {
			ret = -ENOMEM;
			goto out;
		}
		s->offset = off;
		s->spec = w[i].spec;
		lib->nsyms++;
	}
out:
	free(w);
out_elf:
	elf_end(e);
	return ret;
}
