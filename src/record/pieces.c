// SPDX-License-Identifier: MIT
/*
 * record --rotate, --keep-last and --max-size: a recording in pieces, the
 * last minutes of one kept, and a bound on the bytes it writes.
 *
 * --rotate: -o FILE names no file itself: the pieces are FILE.1.trace,
 * FILE.2.trace, ... (FILE less its .trace), each a whole trace
 * (ift_writer_rotate()) with the run's id and its number in its metadata,
 * cut at the flush (every second) after it reached its size or its time.
 *
 * --keep-last KEEP: the pieces go to a spool beside FILE (.FILE.keep.N.trace),
 * a new one every KEEP/4 (1 s at least), and a piece that ended more than
 * KEEP + 2 KEEP/4 ago is removed: the disk holds about 1.75 KEEP of events,
 * memory no more than a plain recording.  A snapshot, once every event up to
 * its time is in, cuts the piece being written, joins the spool's pieces
 * that meet the window (ift_trace_open_run()) and copies the window into
 * FILE.N.trace (ift_trace_copy()): an ordinary trace of its own.  The spool
 * is removed at the end.
 *
 * --max-size counts every piece's bytes; past it the recording stops
 * (ift_recorder_full()), and the caller says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "util/array.h"
#include "util/outfile.h"

#define NS	1000000000ULL

/* FILE less a ".trace" it ends in, as LEN bytes of it. */
static size_t base_len(const char *o)
{
	size_t len = strlen(o), sfx = strlen(".trace");

	return len > sfx && !strcmp(o + len - sfx, ".trace") ? len - sfx : len;
}

/* PIECE's path: FILE.N.trace, or with --keep-last .FILE.keep.N.trace beside it. */
static void piece_path(const struct ift_recorder *r, unsigned piece, char *out, size_t n)
{
	const char *o = r->opts.output, *slash = strrchr(o, '/');
	size_t len = base_len(o), dir = slash ? (size_t)(slash - o) + 1 : 0;

	if (r->opts.keep_ns)
		snprintf(out, n, "%.*s.%.*s.keep.%u.trace", (int)dir, o, (int)(len - dir), o + dir,
			 piece);
	else
		ift_trace_piece_path(o, piece, out, n);
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
		x = (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
		memcpy(b, &x, 8);
		x ^= (uint64_t)getpid() << 32;
		memcpy(b + 8, &x, 8);
	}
	for (size_t i = 0; i < sizeof(b) && 2 * i + 2 < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

const char *ift_rec_first_path(struct ift_recorder *r)
{
	struct ift_record_opts *o = &r->opts;

	if (o->keep_ns)
		o->rotate_ns = o->keep_ns / 4 > NS ? o->keep_ns / 4 : NS;
	if (!o->rotate_bytes && !o->rotate_ns)
		return o->output;
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
	if (r->opts.keep_ns)
		return ift_writer_metaf(r->w, "record.keep_last_ns", "%" PRIu64, r->opts.keep_ns);
	return ift_writer_metaf(r->w, "record.rotate", "%" PRIu64 "%s",
				r->opts.rotate_bytes ? r->opts.rotate_bytes : r->opts.rotate_ns,
				r->opts.rotate_bytes ? " bytes" : " ns");
}

/* A spool piece removed as its file was made: as the user it is given to. */
static void unlink_spooled(const struct ift_recorder *r, const char *path)
{
	ift_unlink_for(path, r->wopts.give, r->wopts.uid, r->wopts.gid);
}

/* The spool's pieces that ended before BEFORE, removed. */
static void spool_prune(struct ift_recorder *r, uint64_t before)
{
	char path[4200];
	size_t k = 0;

	while (k < r->nspool && r->spool[k].stop < before) {
		piece_path(r, r->spool[k].piece, path, sizeof(path));
		unlink_spooled(r, path);
		k++;
	}
	memmove(r->spool, r->spool + k, (r->nspool - k) * sizeof(*r->spool));
	r->nspool -= k;
}

/* The piece ends at AT (every row before it is in) and the next begins. */
static int cut(struct ift_recorder *r, uint64_t now, uint64_t at)
{
	uint64_t bytes = ift_writer_bytes(r->w);
	int ret;

	/* record.next_piece: a reader following this piece (top) goes on
	   into the next, where the last piece has none */
	if ((ret = ift_writer_metaf(r->w, "record.stop_ns", "%" PRIu64, at)) < 0 ||
	    (ret = ift_writer_metaf(r->w, "record.next_piece", "%u", r->piece + 1)) < 0)
		return ret;
	piece_path(r, r->piece + 1, r->piece_path, sizeof(r->piece_path));
	if ((ret = ift_writer_rotate(r->w, r->piece_path)) < 0)
		return ret;
	if (r->opts.keep_ns) {
		if (ift_array_grow((void **)&r->spool, &r->capspool, r->nspool + 1,
				   sizeof(*r->spool)) < 0)
			return -ENOMEM;
		r->spool[r->nspool++] = (struct spooled){ r->piece, r->piece_from, at };
		/* a window ending now meets no piece older than this one's
		   predecessor (see write_snapshot()) */
		spool_prune(r, at > r->opts.keep_ns + 2 * r->opts.rotate_ns ?
			       at - r->opts.keep_ns - 2 * r->opts.rotate_ns : 0);
	}
	r->pieces_bytes += bytes;
	r->piece++;
	r->piece_start_ns = now;
	r->piece_from = at;
	if ((ret = ift_writer_metaf(r->w, "record.piece", "%u", r->piece)) < 0 ||
	    (ret = ift_writer_metaf(r->w, "record.start_ns", "%" PRIu64, at)) < 0)
		return ret;
	/* said again when the piece ends */
	if ((ret = ift_writer_meta(r->w, "record.next_piece", "")) < 0)
		return ret;
	return ift_writer_meta(r->w, "record.stop_ns", "");
}

/* Where a piece may end now: every table complete below it. */
static uint64_t cut_point(const struct ift_recorder *r, uint64_t now)
{
	uint64_t at = ift_decoder_complete(r->dec);

	return at == UINT64_MAX || at < r->start_ns ? now : at;
}

/*
 * The snapshot due at DUE: the spool's pieces that meet [DUE - keep, DUE]
 * joined, the window copied into FILE.N.trace, made as the trace is.  A
 * piece holds rows a little past its cut (the events merged past a call
 * still open then) and the profile's rows held before it, so the one
 * before the first that meets the window is joined too; the copy takes
 * the window's rows alone.
 */
static int write_snapshot(struct ift_recorder *r, uint64_t due)
{
	uint64_t from = due > r->opts.keep_ns ? due - r->opts.keep_ns : 0;
	char (*names)[4200] = calloc(r->nspool ? r->nspool : 1, sizeof(*names));
	const char **paths = calloc(r->nspool ? r->nspool : 1, sizeof(*paths));
	struct ift_trace *t = NULL;
	struct ift_writer *w;
	size_t n = 0, bad;
	int ret;

	for (size_t i = 0; names && paths && i < r->nspool; i++) {
		if ((i + 1 < r->nspool && r->spool[i + 1].stop < from) || r->spool[i].start > due)
			continue;
		piece_path(r, r->spool[i].piece, names[n], sizeof(names[n]));
		paths[n] = names[n];
		n++;
	}
	ret = !names || !paths ? -ENOMEM : !n ? -ENOENT : 0;
	if (ret >= 0)
		ret = ift_trace_open_run(paths, n, &t, &bad);
	free(names);
	free(paths);
	if (ret < 0)
		return ret;
	ift_trace_piece_path(r->opts.output, r->snaps + 1, r->snap_path, sizeof(r->snap_path));
	if (!(w = ift_writer_create(r->snap_path, &r->wopts))) {
		ift_trace_close(t);
		return -errno;
	}
	ret = ift_trace_copy(t, w, from, due);
	ift_trace_close(t);
	/* a window of the run, no piece of it */
	if (ret >= 0 && (ret = ift_writer_meta(w, "record.run_id", "")) >= 0 &&
	    (ret = ift_writer_meta(w, "record.piece", "")) >= 0 &&
	    (ret = ift_writer_meta(w, "record.next_piece", "")) >= 0 &&
	    (ret = ift_writer_metaf(w, "record.start_ns", "%" PRIu64, from)) >= 0 &&
	    (ret = ift_writer_metaf(w, "record.stop_ns", "%" PRIu64, due)) >= 0 &&
	    (ret = ift_writer_metaf(w, "record.snapshot", "%u", r->snaps + 1)) >= 0 &&
	    (ret = ift_writer_meta(w, "record.snapshot_why", r->snap_why)) >= 0)
		ret = ift_writer_finish(w);
	ift_writer_free(w);
	if (ret >= 0)
		r->snaps++;
	return ret;
}

/* A snapshot due once every event up to it is in: cut, then write it. */
static int snapshot_poll(struct ift_recorder *r, uint64_t now)
{
	uint64_t at, due = r->snap_due;
	int ret;

	if (!due || (at = cut_point(r, now)) < due)
		return 0;
	r->snap_due = 0;
	if ((ret = cut(r, now, at)) < 0)
		return ret;
	/* a snapshot that cannot be written leaves the recording be */
	r->snap_err = write_snapshot(r, due);
	return 0;
}

int ift_rec_pieces_poll(struct ift_recorder *r, uint64_t now)
{
	uint64_t bytes = ift_writer_bytes(r->w);
	int ret;

	if (r->opts.max_bytes && r->pieces_bytes + bytes >= r->opts.max_bytes)
		r->full = true;
	if (!r->piece || r->full)
		return 0;
	if ((ret = snapshot_poll(r, now)) < 0)
		return ret;
	if (!(r->opts.rotate_bytes && bytes >= r->opts.rotate_bytes) &&
	    !(r->opts.rotate_ns && now - r->piece_start_ns >= r->opts.rotate_ns))
		return 0;
	return cut(r, now, cut_point(r, now));
}

void ift_recorder_snapshot(struct ift_recorder *r, uint64_t asked_ns)
{
	uint64_t now = ift_now_ns();

	if (!r->opts.keep_ns || r->snap_due || !r->started)
		return;
	/* the asking, on the trace's clock; where that is not
	   CLOCK_MONOTONIC, the merge's latest event */
	r->snap_due = !r->mono ? cut_point(r, now) : asked_ns < now ? asked_ns : now;
	if (r->snap_due < r->start_ns)
		r->snap_due = r->start_ns;
	r->snap_why = "asked (SIGUSR1)";
}

void ift_rec_pieces_call(struct ift_recorder *r, const uint64_t *row)
{
	const char *name = NULL;
	size_t n = ift_probe_count(r->probes);

	if (!r->opts.trigger_op || r->snap_due || row[IFT_CALL_DUR] <= r->opts.trigger_ns)
		return;
	for (size_t i = 0; i < n && !name; i++)
		if (ift_decoder_probe_op(r->dec, i) == row[IFT_CALL_OP])
			name = ift_probe_at(r->probes, i)->sym->name;
	if (!name || strcmp(name, r->opts.trigger_op))
		return;
	r->snap_due = row[IFT_C_TS] + row[IFT_CALL_DUR] + r->opts.after_ns;
	snprintf(r->snap_why_buf, sizeof(r->snap_why_buf),
		 "%s of %" PRIu64 " ns by tid %" PRIu64 " at %" PRIu64, name,
		 row[IFT_CALL_DUR], row[IFT_C_TID], row[IFT_C_TS]);
	r->snap_why = r->snap_why_buf;
}

int ift_rec_pieces_finish(struct ift_recorder *r, uint64_t stop)
{
	char path[4200];
	int ret = 0;

	if (!r->opts.keep_ns)
		return 0;
	/* the piece the writer finished last is the spool's newest */
	if (ift_array_grow((void **)&r->spool, &r->capspool, r->nspool + 1,
			   sizeof(*r->spool)) < 0)
		return -ENOMEM;
	r->spool[r->nspool++] = (struct spooled){ r->piece, r->piece_from, stop };
	/* one asked for, or due after the end: its window ends with it */
	if (r->snap_due)
		r->snap_err = write_snapshot(r, r->snap_due < stop ? r->snap_due : stop);
	r->snap_due = 0;
	for (size_t i = 0; i < r->nspool; i++) {
		piece_path(r, r->spool[i].piece, path, sizeof(path));
		unlink_spooled(r, path);
	}
	r->nspool = 0;
	return ret;
}

void ift_rec_pieces_free(struct ift_recorder *r)
{
	char path[4300];

	/* a recording that failed: the spool goes, the snapshots stay */
	for (size_t i = 0; i < r->nspool; i++) {
		piece_path(r, r->spool[i].piece, path, sizeof(path));
		unlink_spooled(r, path);
	}
	if (r->opts.keep_ns && r->piece) {
		piece_path(r, r->piece, path, sizeof(path));
		strcat(path, IFT_PART_SUFFIX);
		unlink_spooled(r, path);
	}
	free(r->spool);
	r->spool = NULL;
	r->nspool = 0;
}

unsigned ift_recorder_snapshots(const struct ift_recorder *r, const char **path, int *err)
{
	*path = r->snap_path;
	*err = r->snap_err;
	return r->snaps;
}

bool ift_recorder_full(const struct ift_recorder *r)
{
	return r->full;
}

const char *ift_recorder_path(const struct ift_recorder *r, unsigned *pieces)
{
	*pieces = r->opts.keep_ns ? 0 : r->piece;
	return r->piece && !r->opts.keep_ns ? r->piece_path : r->opts.output;
}
