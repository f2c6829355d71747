// SPDX-License-Identifier: MIT
/* The trace reader's cursor (reader.h): every row of some tables in time order. */
#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#include "reader.h"

/*
 * A cursor over many chunks decodes them one ahead in a second thread (the
 * prefetcher): decompressing and decoding a chunk is about half of reading
 * a trace, and it overlaps the caller's work on the chunk before.  Each
 * table has one slot ahead; the prefetcher takes the wanted slot whose
 * chunk starts first, as that table will run out first.
 */
enum { PF_IDLE, PF_WANTED, PF_LOADING, PF_READY };

#define PF_MIN_CHUNKS	4	/* fewer ahead: not worth a thread */

struct curtab {
	unsigned table;
	size_t chunk, nchunks;
	uint32_t row;
	struct ift_chunk c;
	bool loaded, done;
	bool stale;		/* its current row moved: fill before use */
	uint64_t ts;		/* ts of its current row; UINT64_MAX when done */
	/* the prefetcher's slot, under the cursor's lock */
	struct ift_chunk pf;
	size_t pf_chunk;
	int pf_state, pf_ret;
};

struct ift_cursor {
	struct ift_trace *t;
	struct curtab tab[IFT_T_NR];
	unsigned ntab;
	uint64_t row[IFT_MAX_COLS];
	uint64_t from;

	bool threaded;
	bool stop;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a slot changed state, or stop */
	struct loadctx lc;	/* the prefetcher's buffers */
};

static struct curtab *pf_wanted(struct ift_cursor *cur)
{
	struct curtab *best = NULL;
	uint64_t best_ts = UINT64_MAX;

	for (unsigned i = 0; i < cur->ntab; i++) {
		struct curtab *ct = &cur->tab[i];
		const struct ift_chunk_info *ci;

		if (ct->pf_state != PF_WANTED)
			continue;
		ci = ift_trace_chunk_info(cur->t, ct->table, ct->pf_chunk);
		if (!best || (ci && ci->ts_min < best_ts)) {
			best = ct;
			best_ts = ci ? ci->ts_min : UINT64_MAX;
		}
	}
	return best;
}

static void *prefetcher(void *arg)
{
	struct ift_cursor *cur = arg;

	pthread_mutex_lock(&cur->lock);
	for (;;) {
		struct curtab *ct = NULL;
		size_t k;
		int ret;

		while (!cur->stop && !(ct = pf_wanted(cur)))
			pthread_cond_wait(&cur->cond, &cur->lock);
		if (cur->stop)
			break;
		ct->pf_state = PF_LOADING;
		k = ct->pf_chunk;
		pthread_mutex_unlock(&cur->lock);
		ret = ift_chunk_load(cur->t, &cur->lc, ct->table, k, &ct->pf);
		pthread_mutex_lock(&cur->lock);
		ct->pf_ret = ret;
		ct->pf_state = PF_READY;
		pthread_cond_broadcast(&cur->cond);
	}
	pthread_mutex_unlock(&cur->lock);
	return NULL;
}

/* Loads chunk ct->chunk into ct->c, from the prefetcher's slot when it has
   it, and asks for the one after. */
static int curtab_load(struct ift_cursor *cur, struct curtab *ct)
{
	bool mine = true;
	int ret = 0;

	if (!cur->threaded)
		return ift_trace_chunk_load(cur->t, ct->table, ct->chunk, &ct->c);
	pthread_mutex_lock(&cur->lock);
	if (ct->pf_state != PF_IDLE && ct->pf_chunk == ct->chunk) {
		if (ct->pf_state == PF_WANTED) {
			/* not started: quicker to load it here */
			ct->pf_state = PF_IDLE;
		} else {
			struct ift_chunk tmp;

			while (ct->pf_state != PF_READY)
				pthread_cond_wait(&cur->cond, &cur->lock);
			tmp = ct->c;
			ct->c = ct->pf;
			ct->pf = tmp;
			ret = ct->pf_ret;
			ct->pf_state = PF_IDLE;
			mine = false;
		}
	}
	/* the slot is idle here: nothing else is ever asked of it */
	pthread_mutex_unlock(&cur->lock);
	if (mine)
		ret = ift_trace_chunk_load(cur->t, ct->table, ct->chunk, &ct->c);
	if (ret >= 0 && ct->chunk + 1 < ct->nchunks) {
		pthread_mutex_lock(&cur->lock);
		ct->pf_chunk = ct->chunk + 1;
		ct->pf_state = PF_WANTED;
		pthread_cond_broadcast(&cur->cond);
		pthread_mutex_unlock(&cur->lock);
	}
	return ret;
}

/* Makes sure CT has a current row; 0, or a negative error. */
static int curtab_fill(struct ift_cursor *cur, struct curtab *ct)
{
	int ret;

	while (!ct->done) {
		if (ct->loaded && ct->row < ct->c.nrows) {
			if (ct->c.col[IFT_C_TS][ct->row] >= cur->from)
				return 0;
			ct->row++;
			continue;
		}
		if (ct->loaded)
			ct->chunk++;
		if (ct->chunk >= ct->nchunks) {
			ct->done = true;
			break;
		}
		ret = curtab_load(cur, ct);
		if (ret < 0) {
			ct->done = true;
			return ret;
		}
		ct->loaded = true;
		ct->row = 0;
	}
	return 0;
}

static void cursor_start_prefetch(struct ift_cursor *cur)
{
	size_t ahead = 0;

	for (unsigned i = 0; i < cur->ntab; i++)
		ahead += cur->tab[i].nchunks - cur->tab[i].chunk;
	if (ahead < PF_MIN_CHUNKS)
		return;
	cur->lc.dz = ZSTD_createDCtx();
	if (!cur->lc.dz)
		return;
	if (pthread_mutex_init(&cur->lock, NULL))
		goto no_mutex;
	if (pthread_cond_init(&cur->cond, NULL))
		goto no_cond;
	if (pthread_create(&cur->thread, NULL, prefetcher, cur))
		goto no_thread;
	cur->threaded = true;
	return;
no_thread:
	pthread_cond_destroy(&cur->cond);
no_cond:
	pthread_mutex_destroy(&cur->lock);
no_mutex:
	/* reading goes on in the caller's thread alone */
	ZSTD_freeDCtx(cur->lc.dz);
	cur->lc.dz = NULL;
}

struct ift_cursor *ift_cursor_new(struct ift_trace *t, unsigned mask,
				  uint64_t ts_from)
{
	struct ift_cursor *cur = calloc(1, sizeof(*cur));

	if (!cur)
		return NULL;
	cur->t = t;
	cur->from = ts_from;
	for (unsigned tb = 1; tb < IFT_T_NR; tb++) {
		struct curtab *ct;

		if (!(mask & (1U << tb)) || !t->t[tb].nchunks)
			continue;
		ct = &cur->tab[cur->ntab++];
		ct->table = tb;
		__atomic_fetch_add(&t->reads[tb], 1, __ATOMIC_RELAXED);
		ct->nchunks = t->t[tb].nchunks;
		ct->chunk = ift_trace_chunk_seek(t, tb, ts_from);
		ct->stale = true;
	}
	cursor_start_prefetch(cur);
	return cur;
}

uint64_t ift_trace_reads(const struct ift_trace *t, unsigned table)
{
	return table < IFT_T_NR ? __atomic_load_n(&t->reads[table], __ATOMIC_RELAXED) : 0;
}

int ift_cursor_next(struct ift_cursor *cur, struct ift_event *ev)
{
	struct curtab *best = NULL;
	int ret;

	/*
	 * Only the table that gave the last row has moved: the others keep
	 * their current row and its time, so each call fills one table.
	 */
	for (unsigned i = 0; i < cur->ntab; i++) {
		struct curtab *ct = &cur->tab[i];

		if (ct->stale) {
			ret = curtab_fill(cur, ct);
			if (ret < 0)
				return ret;
			ct->stale = false;
			ct->ts = ct->done ? UINT64_MAX : ct->c.col[IFT_C_TS][ct->row];
		}
		if (!ct->done && (!best || ct->ts < best->ts))
			best = ct;
	}
	if (!best)
		return 0;
	for (unsigned c = 0; c < best->c.ncols; c++)
		cur->row[c] = best->c.col[c][best->row];
	best->row++;
	best->stale = true;
	ev->table = best->table;
	ev->row = cur->row;
	return 1;
}

void ift_cursor_free(struct ift_cursor *cur)
{
	if (!cur)
		return;
	if (cur->threaded) {
		pthread_mutex_lock(&cur->lock);
		cur->stop = true;
		pthread_cond_broadcast(&cur->cond);
		pthread_mutex_unlock(&cur->lock);
		pthread_join(cur->thread, NULL);
		pthread_cond_destroy(&cur->cond);
		pthread_mutex_destroy(&cur->lock);
		ZSTD_freeDCtx(cur->lc.dz);
		ift_buf_release(&cur->lc.io);
		ift_buf_release(&cur->lc.raw);
	}
	for (unsigned i = 0; i < cur->ntab; i++) {
		ift_chunk_release(&cur->tab[i].c);
		ift_chunk_release(&cur->tab[i].pf);
	}
	free(cur);
}
