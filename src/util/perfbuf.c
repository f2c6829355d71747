// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/perfbuf.h"

unsigned ift_perfbuf_ring_kb(unsigned kb, unsigned min_kb, uint64_t total_kb, int ncpus)
{
	while (kb > min_kb && (uint64_t)kb * (uint64_t)ncpus > total_kb)
		kb /= 2;
	return kb;
}

void ift_perfbuf_init(struct ift_perfbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

int ift_perfbuf_map(struct ift_perfbuf *b, int fd, unsigned kb)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 1;

	while (pages * page < (size_t)kb * 1024)
		pages *= 2;
	b->base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (b->base == MAP_FAILED) {
		b->base = NULL;
		return -errno;
	}
	b->size = pages * page;
	b->fd = fd;
	return 0;
}

void ift_perfbuf_release(struct ift_perfbuf *b)
{
	if (b->base)
		munmap(b->base, b->size + (size_t)sysconf(_SC_PAGESIZE));
	free(b->tmp);
	ift_perfbuf_init(b);
}

int ift_perfbuf_read(struct ift_perfbuf *b, ift_perfbuf_fn fn, void *ctx)
{
	struct perf_event_mmap_page *mp = b->base;
	const uint8_t *data;
	uint64_t head, tail;
	int ret = 0, n = 0;

	if (!mp)
		return 0;
	data = (const uint8_t *)b->base + mp->data_offset;
	/* the records below head are complete once head is read (acquire) */
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header hd;
		size_t at = (size_t)(tail % b->size);
		const void *rec;

		if (at + sizeof(hd) <= b->size) {
			memcpy(&hd, data + at, sizeof(hd));
		} else {
			size_t k = b->size - at;

			memcpy(&hd, data + at, k);
			memcpy((uint8_t *)&hd + k, data, sizeof(hd) - k);
		}
		if (hd.size < sizeof(hd) || tail + hd.size > head)
			break;
		if (at + hd.size <= b->size) {
			rec = data + at;
		} else {
			size_t k = b->size - at;

			if (b->tmpcap < hd.size) {
				uint8_t *v = realloc(b->tmp, hd.size);

				if (!v) {
					ret = -ENOMEM;
					break;
				}
				b->tmp = v;
				b->tmpcap = hd.size;
			}
			memcpy(b->tmp, data + at, k);
			memcpy(b->tmp + k, data, hd.size - k);
			rec = b->tmp;
		}
		if ((ret = fn(ctx, rec)) != 0)
			break;
		tail += hd.size;
		n++;
	}
	/* our reads of the records are done before the kernel may reuse them */
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return ret < 0 ? ret : n;
}

void ift_perfbuf_disable(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

int ift_perfbuf_count(const int *fds, size_t n, uint64_t *sum)
{
	*sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		ssize_t got = read(fds[i], &v, sizeof(v));

		if (got != (ssize_t)sizeof(v))
			return got < 0 ? -errno : -EIO;
		*sum += v;
	}
	return 0;
}

size_t ift_perfbuf_pending(const struct ift_perfbuf *b)
{
	const struct perf_event_mmap_page *mp = b->base;

	if (!mp)
		return 0;
	return (size_t)(__atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE) - mp->data_tail);
}
