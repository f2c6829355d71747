// SPDX-License-Identifier: MIT
/*
 * Where a process's CPython is: the mapped file (the executable, as Debian's
 * python3.11 is, or libpython3.X.so) whose symbols define _PyRuntime, the
 * address that symbol has in the process, and the interpreter's version
 * (Py_Version in its memory, 3.11 and later; before, the file's name).
 * The file is only read (its ELF symbols), never run, and opened as
 * /proc/PID/map_files/START-END: the file the process has mapped, not
 * whatever its path (the user's to change) leads to now.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-error.h"
#include "ift-pystack.h"

struct pysyms {
	uint64_t runtime, version;	/* their values; 0: not defined */
	uint64_t first_vaddr;		/* of the PT_LOAD at file offset 0 */
	bool exec;			/* ET_EXEC: the values are addresses */
};

static void scan(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct pysyms *s)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		if (!strcmp(name, "_PyRuntime"))
			s->runtime = sym.st_value;
		else if (!strcmp(name, "Py_Version"))
			s->version = sym.st_value;
	}
}

static int read_syms(const char *path, struct pysyms *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -IFT_E_NOT_ELF;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	Elf *e;

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return ret;
	}
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		goto out;
	s->exec = eh.e_type == ET_EXEC;
	if (elf_getphdrnum(e, &nph))
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			s->first_vaddr = ph.p_vaddr;
			break;
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan(e, scn, &sh, s);
	}
	ret = s->runtime ? 0 : -ENOENT;
out:
	elf_end(e);
	close(fd);
	return ret;
}

/* "python3.11", "libpython3.11.so.1.0": the version in a file's name. */
static bool version_in_name(const char *base, unsigned *major, unsigned *minor)
{
	const char *p = strstr(base, "python");

	return p && sscanf(p + 6, "%u.%u", major, minor) == 2;
}

bool ift_py_interpreter_file(const char *base)
{
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10);
}

int ift_py_locate(pid_t pid, struct ift_py_target *t)
{
	char maps[64], line[PATH_MAX + 128];
	int ret = -ENOENT;
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		char path[PATH_MAX], mapped[96];
		const char *base;
		struct pysyms s;
		uint64_t bias, v;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095[^\n]", &start, &end, &off,
			   path) != 4 || off != 0 || path[0] != '/')
			continue;
		base = strrchr(path, '/') + 1;
		if (!ift_py_interpreter_file(base))
			continue;
		/* the very file mapped there, whatever its path names now */
		snprintf(mapped, sizeof(mapped), "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
		ret = read_syms(mapped, &s);
		/* map_files wants CAP_SYS_ADMIN: unprivileged, the user's own path */
		if ((ret == -EPERM || ret == -EACCES) && geteuid())
			ret = read_syms(path, &s);
		if (ret < 0)
			continue;
		bias = s.exec ? 0 : start - (s.first_vaddr & ~0xfffULL);
		t->runtime = bias + s.runtime;
		snprintf(t->path, sizeof(t->path), "%s", path);
		if (s.version &&
		    !ift_py_read_pid(&pid, bias + s.version, &v, sizeof(v))) {
			t->major = (unsigned)(v >> 24 & 0xff);
			t->minor = (unsigned)(v >> 16 & 0xff);
		} else if (!version_in_name(base, &t->major, &t->minor)) {
			ret = -ENOENT;
			continue;
		}
		t->layout = ift_py_layout(t->major, t->minor);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
