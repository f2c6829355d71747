// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void ift_buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void ift_buf_release(struct buf *b)
{
	free(b->data);
	ift_buf_init(b);
}

void ift_buf_clear(struct buf *b)
{
	b->len = 0;
	b->oom = false;
}

bool ift_buf_reserve(struct buf *b, size_t extra)
{
	size_t want, cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + extra <= b->cap)
		return true;
	want = b->len + extra;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void ift_buf_put(struct buf *b, const void *p, size_t n)
{
	if (!n || !ift_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void ift_buf_u8(struct buf *b, uint8_t v)
{
	if (b->len < b->cap && !b->oom) {
		b->data[b->len++] = v;
		return;
	}
	ift_buf_put(b, &v, 1);
}

void ift_buf_le16(struct buf *b, uint16_t v)
{
	uint8_t x[2];

	ift_put_le16(x, v);
	ift_buf_put(b, x, sizeof(x));
}

void ift_buf_le32(struct buf *b, uint32_t v)
{
	uint8_t x[4];

	ift_put_le32(x, v);
	ift_buf_put(b, x, sizeof(x));
}

void ift_buf_le64(struct buf *b, uint64_t v)
{
	uint8_t x[8];

	ift_put_le64(x, v);
	ift_buf_put(b, x, sizeof(x));
}

void ift_buf_varint(struct buf *b, uint64_t v)
{
	uint8_t *p;

	if (!ift_buf_reserve(b, 10))
		return;
	p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
}

void ift_buf_svarint(struct buf *b, int64_t v)
{
	ift_buf_varint(b, zigzag(v));
}

void ift_buf_bytes(struct buf *b, const void *p, size_t n)
{
	ift_buf_varint(b, n);
	ift_buf_put(b, p, n);
}

void ift_buf_str(struct buf *b, const char *s)
{
	ift_buf_bytes(b, s, s ? strlen(s) : 0);
}


bool ift_rd_u8(struct rd *r, uint8_t *v)
{
	if (r->p >= r->end)
		return false;
	*v = *r->p++;
	return true;
}

bool ift_rd_varint_slow(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	const uint8_t *p = r->p;

	while (p < r->end) {
		uint8_t c = *p++;

		/* the 10th byte may only carry the top bit of a u64 */
		if (shift == 63 && c > 1)
			return false;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			r->p = p;
			*v = x;
			return true;
		}
		shift += 7;
		if (shift > 63)
			return false;
	}
	return false;
}

bool ift_rd_varint_max(struct rd *r, uint64_t limit, uint64_t *v)
{
	return ift_rd_varint(r, v) && *v <= limit;
}

bool ift_rd_skip(struct rd *r, size_t n)
{
	if (ift_rd_left(r) < n)
		return false;
	r->p += n;
	return true;
}

bool ift_rd_str(struct rd *r, const uint8_t **s, size_t *len)
{
	uint64_t n;

	if (!ift_rd_varint(r, &n) || n > ift_rd_left(r))
		return false;
	*s = r->p;
	*len = (size_t)n;
	r->p += n;
	return true;
}

uint16_t ift_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t ift_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t ift_le64(const uint8_t *p)
{
	return (uint64_t)ift_le32(p) | (uint64_t)ift_le32(p + 4) << 32;
}

void ift_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void ift_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void ift_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

size_t ift_appendf(char *buf, size_t len, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (at >= len - 1) {
		buf[len - 1] = 0;
		return len - 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
	if (n < 0)
		return at;
	return (size_t)n >= len - at ? len - 1 : at + (size_t)n;
}
