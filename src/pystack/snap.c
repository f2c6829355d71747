// SPDX-License-Identifier: MIT
/*
 * One look at another process's memory, a page at a time (ift-pystack.h).
 *
 * A walk of a thread's Python frames reads a few bytes at a time: the
 * thread state, each frame, each frame's code object.  Each read through
 * process_vm_readv() costs a system call and a page pinned, about as much
 * for 8 bytes as for 4 KiB, and a 30-frame stack made 60 of them.  Here a
 * read fetches the whole pages it touches and keeps them for the rest of
 * the look, and ahead() fetches every page it is told of in one call.
 *
 * Invariants: a kept page was read whole, at one time; pages[0..n) are the
 * kept pages, in the order read; a read longer than SNAP_DIRECT bytes (a
 * long location table) goes to the process directly and is not kept.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ift-pystack.h"

#define SNAP_PAGE	4096ULL
/* pages kept in one look: a deep stack's frames and code objects */
#define SNAP_PAGES	128
/* reads longer than this bypass the pages */
#define SNAP_DIRECT	(2 * SNAP_PAGE)

struct ift_py_snap {
	pid_t pid;
	unsigned n;
	uint64_t page[SNAP_PAGES];	/* the address of each kept page */
	uint64_t calls, pages;		/* process_vm_readv() calls and pages read */
	uint8_t data[SNAP_PAGES][SNAP_PAGE];
};

struct ift_py_snap *ift_py_snap_new(void)
{
	return calloc(1, sizeof(struct ift_py_snap));
}

void ift_py_snap_free(struct ift_py_snap *s)
{
	free(s);
}

void ift_py_snap_stats(const struct ift_py_snap *s, uint64_t *calls, uint64_t *pages)
{
	*calls = s ? s->calls : 0;
	*pages = s ? s->pages : 0;
}

static int find(const struct ift_py_snap *s, uint64_t page)
{
	for (unsigned i = s->n; i--; )
		if (s->page[i] == page)
			return (int)i;
	return -1;
}

/*
 * Reads the N pages at PAGE[] into the next free slots in one call and
 * keeps those read: the kernel stops at the first it cannot read, so the
 * ones before it are kept.  0 when the first was read, else -errno.
 */
static int fetch(struct ift_py_snap *s, const uint64_t *page, unsigned n)
{
	struct iovec local[SNAP_PAGES], remote[SNAP_PAGES];
	ssize_t got;

	if (n > SNAP_PAGES - s->n)
		n = SNAP_PAGES - s->n;
	if (!n)
		return -ENOBUFS;
	for (unsigned i = 0; i < n; i++) {
		local[i] = (struct iovec){ s->data[s->n + i], SNAP_PAGE };
		remote[i] = (struct iovec){ (void *)(uintptr_t)page[i], SNAP_PAGE };
	}
	s->calls++;
	got = process_vm_readv(s->pid, local, n, remote, n, 0);
	if (got < 0)
		return -errno;
	for (unsigned i = 0; i < (size_t)got / SNAP_PAGE; i++)
		s->page[s->n++] = page[i];
	s->pages += (size_t)got / SNAP_PAGE;
	return (size_t)got >= SNAP_PAGE ? 0 : -EFAULT;
}

static int snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct ift_py_snap *s = ctx;
	uint8_t *out = buf;

	if (len > SNAP_DIRECT || addr + len < addr)
		return ift_py_read_pid(&s->pid, addr, buf, len);
	while (len) {
		uint64_t page = addr & ~(SNAP_PAGE - 1), at = addr - page;
		size_t part = len < SNAP_PAGE - at ? len : (size_t)(SNAP_PAGE - at);
		int i = find(s, page), ret;

		if (i < 0) {
			if (s->n == SNAP_PAGES)
				/* a full look: what is left is read as it is asked */
				return ift_py_read_pid(&s->pid, addr, out, len);
			if ((ret = fetch(s, &page, 1)) < 0)
				return ret;
			i = (int)s->n - 1;
		}
		memcpy(out, s->data[i] + at, part);
		out += part;
		addr += part;
		len -= part;
	}
	return 0;
}

static void snap_ahead(void *ctx, const uint64_t *addr, size_t n, size_t len)
{
	struct ift_py_snap *s = ctx;
	uint64_t want[SNAP_PAGES];
	unsigned k = 0;

	for (size_t i = 0; i < n && len; i++) {
		uint64_t first = addr[i] & ~(SNAP_PAGE - 1);
		uint64_t last = (addr[i] + len - 1) & ~(SNAP_PAGE - 1);

		if (last < first)
			continue;
		for (uint64_t p = first; p <= last && k < SNAP_PAGES - s->n; p += SNAP_PAGE) {
			bool dup = find(s, p) >= 0;

			for (unsigned j = 0; j < k && !dup; j++)
				dup = want[j] == p;
			if (!dup)
				want[k++] = p;
		}
	}
	/* one call for all; after a page it cannot read, one for the rest */
	while (k) {
		unsigned before = s->n, done;

		if (fetch(s, want, k) < 0 && s->n == before) {
			/* the first is unreadable: its reader will say so */
			want[0] = want[--k];
			continue;
		}
		done = s->n - before;
		if (done >= k || s->n == SNAP_PAGES)
			break;
		/* the page after the last read failed: skip it */
		memmove(want, want + done + 1, (k - done - 1) * sizeof(*want));
		k -= done + 1;
	}
}

void ift_py_snap_begin(struct ift_py_snap *s, pid_t pid, struct ift_py_mem *m)
{
	s->pid = pid;
	s->n = 0;
	*m = (struct ift_py_mem){ .read = snap_read, .ahead = snap_ahead, .ctx = s };
}
