// SPDX-License-Identifier: MIT
/*
 * The decoder on crafted ring-buffer pages (ringfeed.h): how uprobe entries
 * and returns become rows of `calls', until then told only by the root-only
 * e2e tests.  The sched and task events are test-decode.c's.
 *
 * The probes are made as a session makes them (an entry with the catalog's
 * args as u64, a return with ret=$retval:s32) and handed to the decoder as
 * an array (ift_decoder_sync_probe_array()), their formats as the kernel
 * writes them; each test states its truth above it.  The rows are taken as
 * the decoder writes them (on_call), and the file must hold the same.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <event-parse.h>
#include <unistd.h>

#include "ift-decode.h"
#include "ift-trace.h"
#include "ringfeed.h"

/* The next record of F is stamped TS (no earlier than the page's last). */
static void at(struct feed *f, uint64_t ts)
{
	f->ts = ts - 1000;
}

/*
 * Three probes as a session makes them: a runtime call and two driver calls
 * it makes inside (cudaMemcpy -> cuMemcpyDtoH_v2, cuStreamSynchronize),
 * each an entry probe with the catalog's args and a return probe.
 */
enum { P_MEMCPY, P_DTOH, P_SYNC, NPROBES };

#define UPROBE_SYS	"ingero_4242"
#define ID_UPROBE0	1900	/* probe I: entry 1900 + 2I, return 1901 + 2I */

static char memcpy_name[] = "cudaMemcpy", dtoh_name[] = "cuMemcpyDtoH_v2",
	    sync_name[] = "cuStreamSynchronize";

static const struct ift_func_spec specs[NPROBES] = {
	{ "cudaMemcpy", IFT_API_RUNTIME, "iiii", 4, { { "dst", 0, 0, -1 }, { "src", 1, 0, -1 },
						      { "bytes", 2, 0, -1 },
						      { "kind", 3, 0, -1 } } },
	{ "cuMemcpyDtoH_v2", IFT_API_DRIVER, "iii", 3, { { "dst", 0, 0, -1 }, { "src", 1, 0, -1 },
							 { "bytes", 2, 0, -1 } } },
	{ "cuStreamSynchronize", IFT_API_DRIVER, "i", 1, { { "stream", 0, 0, -1 } } },
};

/* Every call row, in the order the decoder writes them (on_call). */
struct call_log {
	uint64_t row[320][IFT_CALL_NR];
	size_t n;
};

struct calls_ut {
	char dir[32], path[64];
	struct tep_handle *tep;
	struct ift_writer *w;
	struct ift_decoder *d;
	struct ift_lib rt, drv;
	struct ift_sym syms[NPROBES];
	struct ift_probe probes[NPROBES];
	struct feed f[2];	/* CPU 0's ring and CPU 1's */
	struct call_log log;
	/* kept from the decoder when calls_close() frees it */
	struct ift_decode_stats stats;
	uint64_t op[NPROBES];
};

static int log_call(void *ctx, uint64_t *row)
{
	struct call_log *log = ctx;

	assert_true(log->n < sizeof(log->row) / sizeof(log->row[0]));
	memcpy(log->row[log->n++], row, sizeof(log->row[0]));
	return 0;
}

/*
 * The format of the uprobe event of P as kernel/trace/trace_uprobe.c writes
 * it: after the common fields the probed address (__probe_ip), or for a
 * return probe the function's and the return address (__probe_func,
 * __probe_ret_ip), then the fetch args as ift_probe_add_lib() defines them:
 * NAME=FETCH:u64 on the entry, ret=$retval:s32 on the return.
 */
static void parse_uprobe(struct tep_handle *tep, const struct ift_probe *p, bool ret)
{
	char fmt[2048], names[256] = "", refs[256] = "";
	size_t n = 0, nn = 0, nr = 0;
	struct tep_event *ev;
	int off;

#define ADD(buf, len, ...) (len += (size_t)snprintf(buf + len, sizeof(buf) - len, __VA_ARGS__))
	ADD(fmt, n, "name: %s\nID: %d\n" COMMON,
	    ret ? p->ret_event : p->entry_event, ret ? p->ret_id : p->entry_id);
	if (ret) {
		ADD(fmt, n, "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n");
		ADD(fmt, n, "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n");
		ADD(fmt, n, "\tfield:s32 ret;\toffset:24;\tsize:4;\tsigned:1;\n");
		ADD(names, nn, " ret=%%d");
		ADD(refs, nr, ", REC->ret");
	} else {
		ADD(fmt, n, "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n");
		off = 16;
		for (unsigned a = 0; a < p->sym->spec->nargs; a++, off += 8) {
			const char *name = p->sym->spec->args[a].name;

			ADD(fmt, n, "\tfield:u64 %s;\toffset:%d;\tsize:8;\tsigned:0;\n", name, off);
			ADD(names, nn, " %s=%%Lu", name);
			ADD(refs, nr, ", REC->%s", name);
		}
	}
	ADD(fmt, n, "\nprint fmt: \"%s%s\", %s%s\n", ret ? "(%lx <- %lx)" : "(%lx)", names,
	    ret ? "REC->__probe_func, REC->__probe_ret_ip" : "REC->__probe_ip", refs);
#undef ADD
	assert_true(n < sizeof(fmt));
	assert_int_equal(tep_parse_format(tep, &ev, fmt, n, UPROBE_SYS), 0);
}

static void calls_open(struct calls_ut *u)
{
	struct ift_decode_opts opts = { 0 };
	char *names[NPROBES] = { memcpy_name, dtoh_name, sync_name };

	memset(u, 0, sizeof(*u));
	snprintf(u->dir, sizeof(u->dir), "/tmp/ift-test-decode.XXXXXX");
	assert_non_null(mkdtemp(u->dir));
	snprintf(u->path, sizeof(u->path), "%s/t.trace", u->dir);
	u->w = ift_writer_create(u->path, NULL);
	assert_non_null(u->w);
	u->tep = make_tep();
	u->rt.api = IFT_API_RUNTIME;
	u->drv.api = IFT_API_DRIVER;
	for (int i = 0; i < NPROBES; i++) {
		struct ift_probe *p = &u->probes[i];

		u->syms[i].name = names[i];
		u->syms[i].offset = 0x10000 + 0x100 * (uint64_t)i;
		u->syms[i].spec = &specs[i];
		p->lib = i == P_MEMCPY ? &u->rt : &u->drv;
		p->sym = &u->syms[i];
		snprintf(p->entry_event, sizeof(p->entry_event), "%s_0", names[i]);
		snprintf(p->ret_event, sizeof(p->ret_event), "%s_0_ret", names[i]);
		p->entry_id = ID_UPROBE0 + 2 * i;
		p->ret_id = ID_UPROBE0 + 2 * i + 1;
		parse_uprobe(u->tep, p, false);
		parse_uprobe(u->tep, p, true);
	}
	opts.tep = u->tep;
	opts.w = u->w;
	opts.on_call = log_call;
	opts.on_call_ctx = &u->log;
	assert_int_equal(ift_decoder_new(&opts, &u->d), 0);
	assert_int_equal(ift_decoder_sync_probe_array(u->d, u->probes, NPROBES), 0);
	for (int c = 0; c < 2; c++) {
		u->f[c].d = u->d;
		u->f[c].cpu = c;
		u->f[c].ts = 1000000000;
	}
}

/*
 * Ends the trace at STOP_TS; the calls table of the file must hold exactly
 * the rows on_call saw, in that order.  Frees the decoder, keeping its
 * stats and op ids in U.
 */
static void calls_close(struct calls_ut *u, uint64_t stop_ts)
{
	struct ift_trace *t;
	struct ift_cursor *cur;
	struct ift_event ev;
	size_t n = 0;
	int ret;

	flush_page(&u->f[0]);
	flush_page(&u->f[1]);
	assert_int_equal(ift_decoder_finish(u->d, stop_ts), 0);
	assert_int_equal(ift_decoder_stats(u->d)->rows[IFT_T_CALLS], u->log.n);
	assert_int_equal(ift_decoder_stats(u->d)->late, 0);
	assert_int_equal(ift_writer_finish(u->w), 0);
	ift_writer_free(u->w);

	assert_int_equal(ift_trace_open(u->path, 0, &t), 0);
	cur = ift_cursor_new(t, 1U << IFT_T_CALLS, 0);
	assert_non_null(cur);
	while ((ret = ift_cursor_next(cur, &ev)) > 0) {
		assert_true(n < u->log.n);
		for (int c = 0; c < IFT_CALL_STACK; c++)
			assert_int_equal(ev.row[c], u->log.row[n][c]);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, u->log.n);
	ift_cursor_free(cur);
	ift_trace_close(t);

	u->stats = *ift_decoder_stats(u->d);
	for (int i = 0; i < NPROBES; i++)
		u->op[i] = ift_decoder_probe_op(u->d, (size_t)i);
	ift_decoder_free(u->d);
	u->d = NULL;
	tep_free(u->tep);
	unlink(u->path);
	rmdir(u->dir);
}

/* The record of an entry of probe P by TID with ARGS into REC; its length. */
static size_t entry_rec(uint8_t *rec, int p, int32_t tid, const uint64_t *args)
{
	uint64_t ip = 0x7f0000010000ULL + 0x100 * (uint64_t)p;

	common(rec, (uint16_t)(ID_UPROBE0 + 2 * p), tid);
	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, args, 8 * specs[p].nargs);
	return 16 + 8 * specs[p].nargs;
}

/* The record of a return of probe P in TID with value RET into REC (28 bytes). */
static size_t ret_rec(uint8_t *rec, int p, int32_t tid, int32_t ret)
{
	uint64_t func = 0x7f0000010000ULL + 0x100 * (uint64_t)p, ret_ip = 0x401234;

	common(rec, (uint16_t)(ID_UPROBE0 + 2 * p + 1), tid);
	memcpy(rec + 8, &func, 8);
	memcpy(rec + 16, &ret_ip, 8);
	memcpy(rec + 24, &ret, 4);
	return 28;
}

/* An entry of probe P by TID with the values of its args. */
static void uentry(struct feed *f, int p, int32_t tid, const uint64_t *args)
{
	uint8_t rec[16 + 8 * IFT_CALL_MAX_ARGS] = { 0 };

	put(f, rec, entry_rec(rec, p, tid, args));
}

/* A return of probe P in TID with value RET. */
static void uret(struct feed *f, int p, int32_t tid, int32_t ret)
{
	uint8_t rec[28] = { 0 };

	put(f, rec, ret_rec(rec, p, tid, ret));
}

static void process_exit(struct feed *f, int32_t tid, const char *comm)
{
	uint8_t rec[32] = { 0 };
	int32_t prio = 120;

	common(rec, ID_EXIT, tid);
	strncpy((char *)rec + 8, comm, 16);
	memcpy(rec + 24, &tid, 4);
	memcpy(rec + 28, &prio, 4);
	put(f, rec, sizeof(rec));
}

/* What one call row must say; the args a probe does not have are 0. */
struct want {
	uint64_t ts;
	int cpu;
	int32_t tid;
	int probe;
	uint64_t dur;
	int32_t ret;
	uint64_t flags, depth;
	uint64_t args[IFT_CALL_MAX_ARGS];
};

static void expect_call(const struct calls_ut *u, size_t i, const struct want *w)
{
	const uint64_t *row = u->log.row[i];

	assert_true(i < u->log.n);
	assert_int_equal(row[IFT_C_TS], w->ts);
	assert_int_equal(row[IFT_C_CPU], (uint64_t)w->cpu);
	/* no /proc entry for these tids: each is its own process */
	assert_int_equal(row[IFT_C_PID], (uint64_t)w->tid);
	assert_int_equal(row[IFT_C_TID], (uint64_t)w->tid);
	assert_int_equal(row[IFT_CALL_OP], u->op[w->probe]);
	assert_int_equal(row[IFT_CALL_DUR], w->dur);
	assert_int_equal(row[IFT_CALL_RET], (uint64_t)(int64_t)w->ret);
	assert_int_equal(row[IFT_CALL_FLAGS], w->flags);
	assert_int_equal(row[IFT_CALL_DEPTH], w->depth);
	for (int a = 0; a < IFT_CALL_MAX_ARGS; a++)
		assert_int_equal(row[IFT_CALL_A0 + a], w->args[a]);
}

/*
 * test_call_paired: an entry then its return on one thread make one row at
 * the entry's time, lasting to the return, with the return value and the
 * entry's args; each probe is its own op.
 */
static void test_call_paired(void **state)
{
	/* full-width values: the decoder's queue packs them (varints) */
	const uint64_t args[] = { 0x7f5a1234a000, 0xffffffff55501000, 4096, 2 };
	struct calls_ut u;
	uint64_t e, r;

	(void)state;
	calls_open(&u);
	/* three distinct ops, known from the array */
	assert_true(ift_decoder_probe_op(u.d, P_MEMCPY) > 0);
	assert_true(ift_decoder_probe_op(u.d, P_DTOH) != ift_decoder_probe_op(u.d, P_MEMCPY));
	assert_true(ift_decoder_probe_op(u.d, P_SYNC) != ift_decoder_probe_op(u.d, P_DTOH));
	assert_int_equal(ift_decoder_probe_op(u.d, NPROBES), 0);

	uentry(&u.f[0], P_MEMCPY, TID0, args);
	e = u.f[0].ts;
	at(&u.f[0], e + 5300);
	uret(&u.f[0], P_MEMCPY, TID0, 2);	/* cudaErrorMemoryAllocation */
	r = u.f[0].ts;
	calls_close(&u, r + 1000);

	assert_int_equal(u.log.n, 1);
	expect_call(&u, 0, &(struct want){ .ts = e, .tid = TID0, .probe = P_MEMCPY,
					   .dur = r - e, .ret = 2,
					   .args = { 0x7f5a1234a000, 0xffffffff55501000, 4096, 2 } });
}

/*
 * test_nested_calls: a runtime call that makes two driver calls inside.
 * The inner ones are flagged NESTED at depth 1, the outer is complete at
 * depth 0.  Calls are rows at their entry but complete at their return:
 * the inner ones, complete first, are held while the outer is open, and
 * the rows come out in entry order: outer, first inner, second inner.
 */
static void test_nested_calls(void **state)
{
	const uint64_t margs[] = { 0x7f00a000, 0x7f10b000, 1 << 20, 2 };
	const uint64_t dargs[] = { 0x7f00a000, 0x7f10b000, 1 << 20 };
	const uint64_t sargs[] = { 0 };
	struct calls_ut u;
	struct feed *f;
	uint64_t e0, e1, r1, e2, r2, r0;

	(void)state;
	calls_open(&u);
	f = &u.f[0];
	uentry(f, P_MEMCPY, TID0, margs);
	e0 = f->ts;
	uentry(f, P_DTOH, TID0, dargs);
	e1 = f->ts;
	at(f, e1 + 40000);
	uret(f, P_DTOH, TID0, 0);
	r1 = f->ts;
	uentry(f, P_SYNC, TID0, sargs);
	e2 = f->ts;
	at(f, e2 + 7000);
	uret(f, P_SYNC, TID0, 0);
	r2 = f->ts;
	flush_page(f);
	/* all of it merged (one CPU, complete to R2): nothing can be written */
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(u.log.n, 0);

	at(f, r2 + 2000);
	uret(f, P_MEMCPY, TID0, 0);
	r0 = f->ts;
	flush_page(f);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(u.log.n, 3);
	calls_close(&u, r0 + 1000);

	assert_int_equal(u.log.n, 3);
	expect_call(&u, 0, &(struct want){ .ts = e0, .tid = TID0, .probe = P_MEMCPY,
					   .dur = r0 - e0,
					   .args = { 0x7f00a000, 0x7f10b000, 1 << 20, 2 } });
	expect_call(&u, 1, &(struct want){ .ts = e1, .tid = TID0, .probe = P_DTOH,
					   .dur = r1 - e1, .flags = IFT_CALL_F_NESTED,
					   .depth = 1,
					   .args = { 0x7f00a000, 0x7f10b000, 1 << 20 } });
	expect_call(&u, 2, &(struct want){ .ts = e2, .tid = TID0, .probe = P_SYNC,
					   .dur = r2 - e2, .flags = IFT_CALL_F_NESTED,
					   .depth = 1 });
}

/*
 * test_return_without_entry: a return whose entry came before the trace
 * began is counted in unpaired_returns and makes no row; so is one of
 * another function than the call open on the thread, which stays open and
 * pairs with its own return after.
 */
static void test_return_without_entry(void **state)
{
	const uint64_t sargs[] = { 0x5000 };
	struct calls_ut u;
	struct feed *f;
	uint64_t e, r;

	(void)state;
	calls_open(&u);
	f = &u.f[0];
	uret(f, P_MEMCPY, TID0, 0);		/* began before the trace */
	uentry(f, P_SYNC, TID0, sargs);
	e = f->ts;
	uret(f, P_DTOH, TID0, 0);		/* no cuMemcpyDtoH_v2 open */
	uret(f, P_SYNC, TID0, 0);
	r = f->ts;
	calls_close(&u, r + 1000);

	assert_int_equal(u.stats.unpaired_returns, 2);
	assert_int_equal(u.log.n, 1);
	expect_call(&u, 0, &(struct want){ .ts = e, .tid = TID0, .probe = P_SYNC,
					   .dur = r - e, .args = { 0x5000 } });
}

/*
 * test_entry_without_return: calls whose return never comes.  A thread
 * exits inside a runtime call and a driver call within it: both become rows
 * flagged NO_RETURN at the exit, lasting up to it, the inner one NESTED at
 * depth 1.  A call still open when the trace ends becomes a NO_RETURN row
 * lasting up to the stop time.  The rows come out in entry order.
 */
static void test_entry_without_return(void **state)
{
	const uint64_t margs[] = { 1, 2, 3, 4 }, dargs[] = { 5, 6, 7 }, sargs[] = { 8 };
	struct calls_ut u;
	struct feed *f;
	uint64_t a0, a1, ax, b0, stop;

	(void)state;
	calls_open(&u);
	f = &u.f[0];
	uentry(f, P_MEMCPY, TID0, margs);
	a0 = f->ts;
	uentry(f, P_DTOH, TID0, dargs);
	a1 = f->ts;
	uentry(f, P_SYNC, TID0 + 1, sargs);
	b0 = f->ts;
	at(f, b0 + 12000);
	process_exit(f, TID0, "worker");
	ax = f->ts;
	flush_page(f);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	/* written at the exit: the call still open began after them */
	assert_int_equal(u.log.n, 2);
	stop = ax + 30000;
	calls_close(&u, stop);

	assert_int_equal(u.stats.unpaired_returns, 0);
	assert_int_equal(u.log.n, 3);
	expect_call(&u, 0, &(struct want){ .ts = a0, .tid = TID0, .probe = P_MEMCPY,
					   .dur = ax - a0, .flags = IFT_CALL_F_NO_RETURN,
					   .args = { 1, 2, 3, 4 } });
	expect_call(&u, 1, &(struct want){ .ts = a1, .tid = TID0, .probe = P_DTOH,
					   .dur = ax - a1,
					   .flags = IFT_CALL_F_NO_RETURN | IFT_CALL_F_NESTED,
					   .depth = 1, .args = { 5, 6, 7 } });
	expect_call(&u, 2, &(struct want){ .ts = b0, .tid = TID0 + 1, .probe = P_SYNC,
					   .dur = stop - b0, .flags = IFT_CALL_F_NO_RETURN,
					   .args = { 8 } });
}

/*
 * test_lost_return_unwinds: the return of an outer call while a call inside
 * it is still open (its return was lost: a full ring, a longjmp) closes the
 * inner one NO_RETURN at that time and pairs the outer with its return.
 */
static void test_lost_return_unwinds(void **state)
{
	const uint64_t margs[] = { 1, 2, 3, 4 }, dargs[] = { 5, 6, 7 };
	struct calls_ut u;
	struct feed *f;
	uint64_t e0, e1, r0;

	(void)state;
	calls_open(&u);
	f = &u.f[0];
	uentry(f, P_MEMCPY, TID0, margs);
	e0 = f->ts;
	uentry(f, P_DTOH, TID0, dargs);
	e1 = f->ts;
	at(f, e1 + 9000);
	uret(f, P_MEMCPY, TID0, 0);
	r0 = f->ts;
	calls_close(&u, r0 + 1000);

	assert_int_equal(u.stats.unpaired_returns, 0);
	assert_int_equal(u.log.n, 2);
	expect_call(&u, 0, &(struct want){ .ts = e0, .tid = TID0, .probe = P_MEMCPY,
					   .dur = r0 - e0, .args = { 1, 2, 3, 4 } });
	expect_call(&u, 1, &(struct want){ .ts = e1, .tid = TID0, .probe = P_DTOH,
					   .dur = r0 - e1,
					   .flags = IFT_CALL_F_NO_RETURN | IFT_CALL_F_NESTED,
					   .depth = 1, .args = { 5, 6, 7 } });
}

/*
 * test_threads_across_cpus: two threads in the same function at once, one
 * per CPU, their events interleaved in time: each return pairs with its own
 * thread's entry, not the latest entry of the function.  A's second call
 * returns on the other CPU (the thread migrated): it pairs all the same.
 *
 *   CPU 0:  A enters 1 us  A returns 2 us   A enters 3 us
 *   CPU 1:    B enters 1.5 us  B returns 4.5 us   A returns 5.5 us
 */
static void test_threads_across_cpus(void **state)
{
	const uint64_t aargs[] = { 0xa, 0xa0, 100, 1 }, bargs[] = { 0xb, 0xb0, 200, 2 },
		       a2args[] = { 0xa2, 0xa20, 300, 3 };
	const int32_t A = TID0, B = TID0 + 1;
	struct calls_ut u;
	uint64_t t;

	(void)state;
	calls_open(&u);
	t = u.f[0].ts;
	at(&u.f[0], t + 1000);
	uentry(&u.f[0], P_MEMCPY, A, aargs);
	at(&u.f[1], t + 1500);
	uentry(&u.f[1], P_MEMCPY, B, bargs);
	at(&u.f[0], t + 2000);
	uret(&u.f[0], P_MEMCPY, A, 0);
	at(&u.f[0], t + 3000);
	uentry(&u.f[0], P_MEMCPY, A, a2args);
	at(&u.f[1], t + 4500);
	uret(&u.f[1], P_MEMCPY, B, 1);
	at(&u.f[1], t + 5500);
	uret(&u.f[1], P_MEMCPY, A, 3);
	calls_close(&u, t + 10000);

	assert_int_equal(u.stats.unpaired_returns, 0);
	assert_int_equal(u.log.n, 3);
	expect_call(&u, 0, &(struct want){ .ts = t + 1000, .cpu = 0, .tid = A,
					   .probe = P_MEMCPY, .dur = 1000, .ret = 0,
					   .args = { 0xa, 0xa0, 100, 1 } });
	expect_call(&u, 1, &(struct want){ .ts = t + 1500, .cpu = 1, .tid = B,
					   .probe = P_MEMCPY, .dur = 3000, .ret = 1,
					   .args = { 0xb, 0xb0, 200, 2 } });
	/* the row is on the CPU it began on */
	expect_call(&u, 2, &(struct want){ .ts = t + 3000, .cpu = 0, .tid = A,
					   .probe = P_MEMCPY, .dur = 2500, .ret = 3,
					   .args = { 0xa2, 0xa20, 300, 3 } });
}

/*
 * test_watermark: a CPU's events are merged only up to the time every CPU
 * is known complete to (what its pages held, or an idle mark: the reader
 * found it empty then).  Times in us after T:
 *
 *   CPU 0:  idle to 5 | A enters 10 | idle to 20 | idle to 26 | A returns 30
 *   CPU 1:  switch 12, B enters 15, B returns 25, switch 27 | idle to 30
 *
 * The switch rows show how far the merge went at each step; the calls come
 * out once no call open began before them: A, then B, in time order.
 */
static void test_watermark(void **state)
{
	const uint64_t aargs[] = { 1, 2, 3, 4 }, bargs[] = { 5, 6, 7, 8 };
	const int32_t A = TID0, B = TID0 + 1, X = TID0 + 2;
	const uint64_t *sw;
	struct calls_ut u;
	uint64_t t;

	(void)state;
	calls_open(&u);
	t = u.f[0].ts;
	sw = &ift_decoder_stats(u.d)->rows[IFT_T_SWITCHES];
	ift_decoder_cpu_idle(u.d, 0, 0, t + 5000);
	at(&u.f[1], t + 12000);
	sched_switch(&u.f[1], X, "x", X, "x");
	at(&u.f[1], t + 15000);
	uentry(&u.f[1], P_MEMCPY, B, bargs);
	at(&u.f[1], t + 25000);
	uret(&u.f[1], P_MEMCPY, B, 0);
	at(&u.f[1], t + 27000);
	sched_switch(&u.f[1], X, "x", X, "x");
	flush_page(&u.f[1]);
	/* CPU 0 is complete to 5 only: none of CPU 1's events can go */
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 0);
	assert_int_equal(u.log.n, 0);

	/* to 10: A's entry only */
	at(&u.f[0], t + 10000);
	uentry(&u.f[0], P_MEMCPY, A, aargs);
	flush_page(&u.f[0]);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 0);

	/* to 20: the switch at 12 and B's entry */
	ift_decoder_cpu_idle(u.d, 0, 0, t + 20000);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 1);

	/* to 26: B's call is complete, but A's, open since before it, is not */
	ift_decoder_cpu_idle(u.d, 0, 0, t + 26000);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 1);
	assert_int_equal(u.log.n, 0);

	/* CPU 0 to 30 but CPU 1 to 27: the switch at 27, not A's return */
	at(&u.f[0], t + 30000);
	uret(&u.f[0], P_MEMCPY, A, 0);
	flush_page(&u.f[0]);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 2);
	assert_int_equal(u.log.n, 0);

	/* CPU 1 idle to 30: A's return, and both calls, A's first */
	ift_decoder_cpu_idle(u.d, 0, 1, t + 30000);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(u.log.n, 2);
	calls_close(&u, t + 40000);

	assert_int_equal(u.log.n, 2);
	expect_call(&u, 0, &(struct want){ .ts = t + 10000, .cpu = 0, .tid = A,
					   .probe = P_MEMCPY, .dur = 20000,
					   .args = { 1, 2, 3, 4 } });
	expect_call(&u, 1, &(struct want){ .ts = t + 15000, .cpu = 1, .tid = B,
					   .probe = P_MEMCPY, .dur = 10000,
					   .args = { 5, 6, 7, 8 } });
}

/*
 * test_perf_records_merge: with --isolate the uprobe records come from a
 * CPU's perf ring, one by one (ift_decoder_record), beside the same CPU's
 * tracefs pages.  Each is a queue of its own: a perf ring not yet read up
 * to a time holds back every event after it, and the call a perf entry and
 * return make is a row like any other, merged in time order with the
 * switches of the pages.  The perf source's idle note is its own.
 */
static void test_perf_records_merge(void **state)
{
	const uint64_t args[] = { 9, 8, 7, 6 };
	const int32_t A = TID0, X = TID0 + 2;
	uint8_t rec[16 + 8 * IFT_CALL_MAX_ARGS] = { 0 };
	const uint64_t *sw;
	struct calls_ut u;
	uint64_t t;

	(void)state;
	calls_open(&u);
	t = u.f[0].ts;
	sw = &ift_decoder_stats(u.d)->rows[IFT_T_SWITCHES];
	/* the pages: switches at 12 and 25 on CPU 0, CPU 1 idle to 40 */
	at(&u.f[0], t + 12000);
	sched_switch(&u.f[0], X, "x", X, "x");
	at(&u.f[0], t + 25000);
	sched_switch(&u.f[0], X, "x", X, "x");
	flush_page(&u.f[0]);
	ift_decoder_cpu_idle(u.d, 0, 1, t + 40000);
	/* CPU 0's perf ring: A's entry at 10, read so far */
	assert_int_equal(ift_decoder_record(u.d, 0, t + 10000, rec,
					    (uint32_t)entry_rec(rec, P_MEMCPY, A, args)), 0);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	/* the ring is read to 10 only: the switch at 12 waits */
	assert_int_equal(*sw, 0);

	/* the ring empty at 20: the switch at 12 goes, not the one at 25 */
	ift_decoder_cpu_idle(u.d, 1, 0, t + 20000);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 1);
	assert_int_equal(u.log.n, 0);

	/* A's return at 30 from the ring: the pages are read to 25 only */
	memset(rec, 0, sizeof(rec));
	assert_int_equal(ift_decoder_record(u.d, 0, t + 30000, rec,
					    (uint32_t)ret_rec(rec, P_MEMCPY, A, 3)), 0);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(*sw, 2);
	assert_int_equal(u.log.n, 0);

	/* CPU 0's tracefs ring empty at 35: the return, and the call */
	ift_decoder_cpu_idle(u.d, 0, 0, t + 35000);
	assert_int_equal(ift_decoder_advance(u.d), 0);
	assert_int_equal(u.log.n, 1);
	calls_close(&u, t + 50000);

	expect_call(&u, 0, &(struct want){ .ts = t + 10000, .cpu = 0, .tid = A,
					   .probe = P_MEMCPY, .dur = 20000, .ret = 3,
					   .args = { 9, 8, 7, 6 } });
	assert_int_equal(u.stats.rows[IFT_T_SWITCHES], 2);
}

/*
 * test_reused_tid_closes_calls: a task's exit went unseen (its event lost
 * or filtered) and the kernel gave its tid to a new task.  The call the old
 * task left open is a NO_RETURN row lasting up to the new task's birth, as
 * at an exit or the end of the trace: before, it was freed and lost.  The
 * new task's own call pairs as usual.
 */
static void test_reused_tid_closes_calls(void **state)
{
	const uint64_t sargs[] = { 9 }, sargs2[] = { 10 };
	const int32_t T = TID0 + 5;
	struct calls_ut u;
	struct feed *f;
	uint64_t e0, born, e1, r1;

	(void)state;
	calls_open(&u);
	f = &u.f[0];
	uentry(f, P_SYNC, T, sargs);
	e0 = f->ts;
	at(f, e0 + 50000);
	task_newtask(f, TID0, T, "reborn", 0);
	born = f->ts;
	uentry(f, P_SYNC, T, sargs2);
	e1 = f->ts;
	uret(f, P_SYNC, T, 0);
	r1 = f->ts;
	calls_close(&u, r1 + 1000);

	assert_int_equal(u.stats.unpaired_returns, 0);
	assert_int_equal(u.log.n, 2);
	expect_call(&u, 0, &(struct want){ .ts = e0, .tid = T, .probe = P_SYNC,
					   .dur = born - e0, .flags = IFT_CALL_F_NO_RETURN,
					   .args = { 9 } });
	expect_call(&u, 1, &(struct want){ .ts = e1, .tid = T, .probe = P_SYNC,
					   .dur = r1 - e1, .args = { 10 } });
}

/*
 * test_runaway_nesting: 300 entries on one thread and no return but the
 * last one's (returns lost).  At 256 open calls the oldest half, 128, is
 * closed NO_RETURN at the 257th entry's time and counted in nest_closed;
 * every entry is kept, so the return pairs with the latest, at depth 171;
 * the 171 still open are NO_RETURN rows at the end.  Before, the 44 entries
 * past 256 were dropped without a trace and the return paired with the
 * 256th.
 */
static void test_runaway_nesting(void **state)
{
	enum { N = 300, MAX = 256, HALF = 128 };
	const uint64_t sargs[] = { 0 };
	uint64_t e[N], r, stop;
	struct calls_ut *u = malloc(sizeof(*u));

	(void)state;
	assert_non_null(u);
	calls_open(u);
	for (int i = 0; i < N; i++) {
		uentry(&u->f[0], P_SYNC, TID0, sargs);
		e[i] = u->f[0].ts;
	}
	uret(&u->f[0], P_SYNC, TID0, 0);
	r = u->f[0].ts;
	stop = r + 1000;
	calls_close(u, stop);

	assert_int_equal(u->stats.nest_closed, HALF);
	assert_int_equal(u->stats.unpaired_returns, 0);
	assert_int_equal(u->log.n, N);
	/* the oldest half, closed when the 257th came */
	expect_call(u, 0, &(struct want){ .ts = e[0], .tid = TID0, .probe = P_SYNC,
					  .dur = e[MAX] - e[0],
					  .flags = IFT_CALL_F_NO_RETURN });
	expect_call(u, HALF - 1, &(struct want){ .ts = e[HALF - 1], .tid = TID0,
						 .probe = P_SYNC,
						 .dur = e[MAX] - e[HALF - 1],
						 .flags = IFT_CALL_F_NO_RETURN |
							  IFT_CALL_F_NESTED,
						 .depth = HALF - 1 });
	/* the rest moved down: the next is outermost now, open to the end */
	expect_call(u, HALF, &(struct want){ .ts = e[HALF], .tid = TID0, .probe = P_SYNC,
					     .dur = stop - e[HALF],
					     .flags = IFT_CALL_F_NO_RETURN });
	/* the entry past the limit is kept */
	expect_call(u, MAX, &(struct want){ .ts = e[MAX], .tid = TID0, .probe = P_SYNC,
					    .dur = stop - e[MAX],
					    .flags = IFT_CALL_F_NO_RETURN | IFT_CALL_F_NESTED,
					    .depth = MAX - HALF });
	/* and the return pairs with the latest entry */
	expect_call(u, N - 1, &(struct want){ .ts = e[N - 1], .tid = TID0,
					      .probe = P_SYNC, .dur = r - e[N - 1],
					      .flags = IFT_CALL_F_NESTED,
					      .depth = N - 1 - HALF });
	free(u);
}

/*
 * test_probes_synced_after_failure: a sync that fails at a probe (its
 * op refused: no name) leaves the decoder knowing the probes before it
 * only, so that the next sync takes in the rest.  Before, the count was
 * set first: it claimed probes never set up, their op ids unset, and the
 * next sync had nothing left to do, so their calls were never decoded.
 */
static void test_probes_synced_after_failure(void **state)
{
	const uint64_t sargs[] = { 0x77 };
	struct ift_decode_opts opts = { 0 };
	char noname[] = "", *name;
	struct calls_ut u;
	uint64_t e, r;

	(void)state;
	calls_open(&u);
	/* a decoder of its own, the probes not synced yet */
	ift_decoder_free(u.d);
	opts.tep = u.tep;
	opts.w = u.w;
	opts.on_call = log_call;
	opts.on_call_ctx = &u.log;
	assert_int_equal(ift_decoder_new(&opts, &u.d), 0);
	u.f[0].d = u.f[1].d = u.d;
	name = u.syms[P_DTOH].name;
	u.syms[P_DTOH].name = noname;
	assert_int_equal(ift_decoder_sync_probe_array(u.d, u.probes, NPROBES), -EINVAL);
	assert_true(ift_decoder_probe_op(u.d, P_MEMCPY) > 0);
	assert_int_equal(ift_decoder_probe_op(u.d, P_DTOH), 0);
	assert_int_equal(ift_decoder_probe_op(u.d, P_SYNC), 0);
	u.syms[P_DTOH].name = name;
	assert_int_equal(ift_decoder_sync_probe_array(u.d, u.probes, NPROBES), 0);

	uentry(&u.f[0], P_SYNC, TID0, sargs);
	e = u.f[0].ts;
	uret(&u.f[0], P_SYNC, TID0, 0);
	r = u.f[0].ts;
	calls_close(&u, r + 1000);

	assert_int_equal(u.stats.unknown, 0);
	assert_int_equal(u.log.n, 1);
	expect_call(&u, 0, &(struct want){ .ts = e, .tid = TID0, .probe = P_SYNC,
					   .dur = r - e, .args = { 0x77 } });
	assert_true(u.op[P_DTOH] > 0 && u.op[P_DTOH] != u.op[P_SYNC]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_paired),
		cmocka_unit_test(test_nested_calls),
		cmocka_unit_test(test_return_without_entry),
		cmocka_unit_test(test_entry_without_return),
		cmocka_unit_test(test_lost_return_unwinds),
		cmocka_unit_test(test_threads_across_cpus),
		cmocka_unit_test(test_watermark),
		cmocka_unit_test(test_perf_records_merge),
		cmocka_unit_test(test_reused_tid_closes_calls),
		cmocka_unit_test(test_runaway_nesting),
		cmocka_unit_test(test_probes_synced_after_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
