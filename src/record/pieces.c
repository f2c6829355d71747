// SPDX-License-Identifier: MIT
/*
 * record --rotate and --max-size: a recording in pieces, and a bound on the
 * bytes it writes.  With --rotate, -o FILE names no file itself: the pieces
 * are FILE.1.trace, FILE.2.trace, ... (FILE less its .trace), each a whole
 * trace (ift_writer_rotate()) with the run's id and its number in its
 * metadata, cut at the flush (every second) after it reached its size or
 * its time.  --max-size counts every piece's bytes; past it the recording
 * stops (ift_recorder_full()), and the caller says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

/* PIECE's path: FILE.N.trace, FILE less a ".trace" it ends in. */
static void piece_path(const struct ift_recorder *r, unsigned piece, char *out, size_t n)
{
	const char *o = r->opts.output;
	size_t len = strlen(o), sfx = strlen(".trace");

	if (len > sfx && !strcmp(o + len - sfx, ".trace"))
		len -= sfx;
	snprintf(out, n, "%.*s.%u.trace", (int)len, o, piece);
}

/* 128 random bits as hex: the run's pieces carry it, no other run's. */
static void run_id(char *out, size_t n)
{
	uint8_t b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	bool got = fd >= 0 && read(fd, b, sizeof(b)) == (ssize_t)sizeof(b);

	if (fd >= 0)
		close(fd);
	if (!got) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		memcpy(b, &x, 8);
		x ^= (uint64_t)getpid() << 32;
		memcpy(b + 8, &x, 8);
	}
	for (size_t i = 0; i < sizeof(b) && 2 * i + 2 < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

const char *ift_rec_first_path(struct ift_recorder *r)
{
	if (!r->opts.rotate_bytes && !r->opts.rotate_ns)
		return r->opts.output;
	r->piece = 1;
	piece_path(r, 1, r->piece_path, sizeof(r->piece_path));
	return r->piece_path;
}

int ift_rec_pieces_meta(struct ift_recorder *r)
{
	char id[40];
	int ret;

	if (!r->piece)
		return 0;
	run_id(id, sizeof(id));
	if ((ret = ift_writer_meta(r->w, "record.run_id", id)) < 0 ||
	    (ret = ift_writer_meta(r->w, "record.piece", "1")) < 0)
		return ret;
	return ift_writer_metaf(r->w, "record.rotate", "%" PRIu64 "%s",
				r->opts.rotate_bytes ? r->opts.rotate_bytes : r->opts.rotate_ns,
				r->opts.rotate_bytes ? " bytes" : " ns");
}

int ift_rec_pieces_poll(struct ift_recorder *r, uint64_t now)
{
	uint64_t bytes = ift_writer_bytes(r->w), at;
	int ret;

	if (r->opts.max_bytes && r->pieces_bytes + bytes >= r->opts.max_bytes)
		r->full = true;
	if (!r->piece || r->full)
		return 0;
	if (!(r->opts.rotate_bytes && bytes >= r->opts.rotate_bytes) &&
	    !(r->opts.rotate_ns && now - r->piece_start_ns >= r->opts.rotate_ns))
		return 0;
	/* where the piece ends and the next begins: what the last flush
	   holds, every table complete below it */
	at = ift_decoder_complete(r->dec);
	if (at == UINT64_MAX || at < r->start_ns)
		at = now;
	if ((ret = ift_writer_metaf(r->w, "record.stop_ns", "%" PRIu64, at)) < 0)
		return ret;
	piece_path(r, r->piece + 1, r->piece_path, sizeof(r->piece_path));
	if ((ret = ift_writer_rotate(r->w, r->piece_path)) < 0)
		return ret;
	r->pieces_bytes += bytes;
	r->piece++;
	r->piece_start_ns = now;
	if ((ret = ift_writer_metaf(r->w, "record.piece", "%u", r->piece)) < 0 ||
	    (ret = ift_writer_metaf(r->w, "record.start_ns", "%" PRIu64, at)) < 0)
		return ret;
	/* said again when the piece ends */
	return ift_writer_meta(r->w, "record.stop_ns", "");
}

bool ift_recorder_full(const struct ift_recorder *r)
{
	return r->full;
}

const char *ift_recorder_path(const struct ift_recorder *r, unsigned *pieces)
{
	*pieces = r->piece;
	return r->piece ? r->piece_path : r->opts.output;
}
