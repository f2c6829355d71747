// SPDX-License-Identifier: MIT
/*
 * A reader of /etc/ld.so.cache in glibc's "new" format, the only one glibc
 * 2.32 and later write (Debian 12 has 2.36):
 *
 *   header (48 bytes): "glibc-ld.so.cache" "1.1", u32 nlibs, u32 len_strings,
 *     u8 flags (byte order: 0 unknown, 2 little, 3 big), 3 pad,
 *     u32 extension_offset, 3 x u32 unused
 *   nlibs entries (24 bytes): i32 flags, u32 key, u32 value, u32 osversion,
 *     u64 hwcap
 *   strings; key and value are offsets from the start of the file.
 *
 * Entry flags: the low byte is the kind (3: ELF for libc6), the next one the
 * architecture (0x0300: x86-64, 0x0a00: aarch64; ift-arch.h).  The 32-bit libraries of /lib32 share the
 * names of the 64-bit ones, so the flags matter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ift-arch.h"
#include "internal.h"
#include "util/buf.h"

#define CACHE_MAGIC		"glibc-ld.so.cache1.1"
#define CACHE_MAGIC_LEN		20
#define CACHE_HDR_LEN		48
#define CACHE_ENTRY_LEN		24
#define CACHE_MAX_LEN		(64u << 20)

#define FLAG_TYPE_MASK		0x00ff
#define FLAG_ELF_LIBC6		0x0003
#define FLAG_REQUIRED_MASK	0xff00

#define ENDIAN_UNSET		0
#define ENDIAN_LITTLE		2

void ift_ldcache_release(struct ldcache *c)
{
	free(c->data);
	memset(c, 0, sizeof(*c));
}

int ift_ldcache_load(struct ldcache *c, const char *path)
{
	struct stat st;
	size_t got = 0;
	uint32_t nlibs;
	int fd, ret = 0;

	memset(c, 0, sizeof(*c));
	c->machine = ift_arch_native->ldcache_flags;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < CACHE_HDR_LEN ||
	    (uint64_t)st.st_size > CACHE_MAX_LEN) {
		ret = -EINVAL;
		goto out;
	}
	c->len = (size_t)st.st_size;
	c->data = malloc(c->len);
	if (!c->data) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < c->len) {
		ssize_t n = read(fd, c->data + got, c->len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	/* ldconfig replaces the file by rename, but be safe against a short one */
	c->len = got;
	if (c->len < CACHE_HDR_LEN || memcmp(c->data, CACHE_MAGIC, CACHE_MAGIC_LEN) ||
	    (c->data[28] != ENDIAN_UNSET && c->data[28] != ENDIAN_LITTLE)) {
		ret = -EINVAL;
		goto out;
	}
	nlibs = ift_le32(c->data + 20);
	if (nlibs > (c->len - CACHE_HDR_LEN) / CACHE_ENTRY_LEN) {
		ret = -EINVAL;
		goto out;
	}
	c->nlibs = nlibs;
out:
	close(fd);
	if (ret)
		ift_ldcache_release(c);
	return ret;
}

/* The NUL-terminated string at OFF, or NULL when it does not lie in the file. */
static const char *cache_str(const struct ldcache *c, uint32_t off)
{
	if (off >= c->len || !memchr(c->data + off, 0, c->len - off))
		return NULL;
	return (const char *)c->data + off;
}

const char *ift_ldcache_lookup(const struct ldcache *c, const char *name)
{
	const char *any = NULL;

	for (uint32_t i = 0; i < c->nlibs; i++) {
		const uint8_t *e = c->data + CACHE_HDR_LEN + (size_t)i * CACHE_ENTRY_LEN;
		uint32_t flags = ift_le32(e);
		const char *key, *value;

		if ((flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6 ||
		    (flags & FLAG_REQUIRED_MASK) != c->machine)
			continue;
		key = cache_str(c, ift_le32(e + 4));
		if (!key || strcmp(key, name))
			continue;
		value = cache_str(c, ift_le32(e + 8));
		if (!value)
			continue;
		/*
		 * An entry with hwcap bits is for a glibc-hwcaps subdirectory
		 * that ld.so picks only on CPUs that have them; the plain
		 * entry is the one that loads everywhere.
		 */
		if (!ift_le64(e + 16))
			return value;
		if (!any)
			any = value;
	}
	return any;
}
