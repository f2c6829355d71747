/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_BUF_H
#define IFT_UTIL_BUF_H

/*
 * Growable byte buffers for writing, and bounds-checked cursors for reading,
 * with the varint/zig-zag encodings of docs/trace-format.md.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data;
	size_t len, cap;
	bool oom;	/* an allocation failed; len stops growing */
};

void ift_buf_init(struct buf *b);
void ift_buf_release(struct buf *b);
void ift_buf_clear(struct buf *b);
bool ift_buf_reserve(struct buf *b, size_t extra);
void ift_buf_put(struct buf *b, const void *p, size_t n);
void ift_buf_u8(struct buf *b, uint8_t v);
void ift_buf_le16(struct buf *b, uint16_t v);
void ift_buf_le32(struct buf *b, uint32_t v);
void ift_buf_le64(struct buf *b, uint64_t v);
void ift_buf_varint(struct buf *b, uint64_t v);
void ift_buf_svarint(struct buf *b, int64_t v);
void ift_buf_str(struct buf *b, const char *s);
void ift_buf_bytes(struct buf *b, const void *p, size_t n);	/* varint length + bytes */

/*
 * ift_appendf - printf at AT into the fixed BUF of LEN bytes (LEN > 0), cut
 * to fit, always NUL-ended: the new end, LEN - 1 once full (so a caller
 * appends in a loop while the end is below LEN - 1, and never past it).
 */
size_t ift_appendf(char *buf, size_t len, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes V as a varint at P (room for 10 bytes); returns the end. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Bytes of V as a varint: one per started group of 7 significant bits. */
static inline size_t varint_size(uint64_t v)
{
	return v ? (size_t)(70 - __builtin_clzll(v)) / 7 : 1;
}

/* A read cursor: every getter fails (returns false) past the end. */
struct rd {
	const uint8_t *p, *end;
};

static inline void ift_rd_init(struct rd *r, const void *p, size_t n)
{
	r->p = p;
	/* p may be NULL for an empty buffer, and NULL + 0 is undefined in C */
	r->end = n ? r->p + n : r->p;
}

static inline size_t ift_rd_left(const struct rd *r)
{
	return (size_t)(r->end - r->p);
}

bool ift_rd_u8(struct rd *r, uint8_t *v);
bool ift_rd_varint_slow(struct rd *r, uint64_t *v);

/* Inline, with a one-byte fast path: decoding a column reads one a value. */
static inline bool ift_rd_varint(struct rd *r, uint64_t *v)
{
	if (r->p < r->end && *r->p < 0x80) {
		*v = *r->p++;
		return true;
	}
	return ift_rd_varint_slow(r, v);
}

static inline bool ift_rd_svarint(struct rd *r, int64_t *v)
{
	uint64_t u;

	if (!ift_rd_varint(r, &u))
		return false;
	*v = unzigzag(u);
	return true;
}
bool ift_rd_skip(struct rd *r, size_t n);
/* A `str': points into the buffer, not NUL-terminated. */
bool ift_rd_str(struct rd *r, const uint8_t **s, size_t *len);
/* A varint that must fit in LIMIT (inclusive). */
bool ift_rd_varint_max(struct rd *r, uint64_t limit, uint64_t *v);

uint16_t ift_le16(const uint8_t *p);
uint32_t ift_le32(const uint8_t *p);
uint64_t ift_le64(const uint8_t *p);
void ift_put_le16(uint8_t *p, uint16_t v);
void ift_put_le32(uint8_t *p, uint32_t v);
void ift_put_le64(uint8_t *p, uint64_t v);

#endif
