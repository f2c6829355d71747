// SPDX-License-Identifier: MIT
/*
 * Python call sites (record --py-stack), the read half: a trace built row
 * by row whose call sites end with Python frames (a ctypes call and a
 * torch call from the same line, lines in site-packages, dist-packages,
 * the standard library and the user's own files, a line without a number,
 * a site whose unwind stopped short of the interpreter), calls whose
 * frames were read in flight or late, calls without Python frames, and a
 * second process.  Every figure is computed here from the rows written,
 * and checked against the model (ift_analysis_py_sites(),
 * ift_py_sites_run(), the chains), report --json and the text, the SQLite
 * export and MCP's get_stacks; a trace without Python frames keeps every
 * output as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "ift-chains.h"
#include "ift-export.h"
#include "ift-mcp.h"
#include "ift-render.h"
#include "ift-words.h"
#include "tracebuild.h"

#define PROC	100		/* the Python process: 101 its CUDA thread, */
#define MAIN	101
#define LOADER	102		/* 102 another of its threads */
#define OTHER	200		/* a second process */
#define WORKER	300		/* preempts PROC in the chains' trace */

/* ---- the shortening and the frames -------------------------------- */

static void test_file_short(void **state)
{
	static const char *const cases[][2] = {
		{ "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py",
		  "torch/utils/data/dataloader.py" },
		{ "/home/u/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py",
		  "torch/cuda/__init__.py" },
		{ "/opt/conda/lib/python3.10/site-packages/a/site-packages/b/c.py", "b/c.py" },
		{ "/usr/lib/python3.11/threading.py", "python3.11/threading.py" },
		{ "/usr/local/lib64/python3.12/concurrent/futures/thread.py",
		  "python3.12/concurrent/futures/thread.py" },
		{ "/home/u/.pyenv/versions/3.13.0/lib/python3.13t/queue.py",
		  "python3.13t/queue.py" },
		{ "site-packages/x.py", "x.py" },
		/* not the standard library: no lib directory above, no version */
		{ "/home/u/python3.11/train.py", "/home/u/python3.11/train.py" },
		{ "/usr/lib/python3/x.py", "/usr/lib/python3/x.py" },
		{ "/usr/lib/python3.x/y.py", "/usr/lib/python3.x/y.py" },
		/* a directory named so, with nothing below it */
		{ "/srv/site-packages/", "/srv/site-packages/" },
		{ "/srv/mysite-packages/m.py", "/srv/mysite-packages/m.py" },
		{ "/home/u/train.py", "/home/u/train.py" },
		{ "train.py", "train.py" },
		{ "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>" },
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(ift_py_file_short(cases[i][0]), cases[i][1]);
}

static void test_frame_format(void **state)
{
	struct ift_frame f = { .module = "/usr/lib/python3/dist-packages/torch/utils/data/"
				"dataloader.py", .offset = 631,
			       .symbol = "_BaseDataLoaderIter.__next__",
			       .flags = IFT_FRAME_F_PYSRC };
	char buf[256];

	(void)state;
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "torch/utils/data/dataloader.py:631 in "
			    "_BaseDataLoaderIter.__next__");
	f.offset = 0;
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "torch/utils/data/dataloader.py in _BaseDataLoaderIter.__next__");
	f = (struct ift_frame){ .module = "/home/u/train.py", .offset = 57, .symbol = "",
				.flags = IFT_FRAME_F_PYSRC };
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "/home/u/train.py:57");
	f.module = "";
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "?:57");
	/* native frames as they were */
	f = (struct ift_frame){ .module = "/usr/bin/python3.11", .offset = 0x10,
				.symbol = "_PyEval_EvalFrameDefault", .symoff = 0x2a,
				.flags = IFT_FRAME_F_PYTHON };
	ift_frame_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "[python] _PyEval_EvalFrameDefault+0x2a (python3.11)");
}

/* ---- the trace ---------------------------------------------------- */

#define PYF(file, func, line) \
	{ .module = (file), .symbol = (func), .offset = (line), .flags = IFT_FRAME_F_PYSRC }
#define TRAIN	"/home/u/train.py"

/* cudaStreamSynchronize through ctypes: the interpreter from frame 3 */
static const struct ift_frame nat_ctypes[] = {
	{ .module = "/usr/lib/x86_64-linux-gnu/libcudart.so.12", .symbol = "cudaStreamSynchronize" },
	{ .module = "/usr/lib/x86_64-linux-gnu/libffi.so.8.1.2", .offset = 0x7e2e,
	  .symbol = "ffi_call_unix64", .symoff = 0x4e },
	{ .module = "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so",
	  .offset = 0x1234, .symbol = "_ctypes_callproc", .symoff = 0x2f0 },
	{ .module = "/usr/bin/python3.11", .offset = 0x1a2b3c, .symbol = "_PyObject_MakeTpCall",
	  .symoff = 0x8c, .flags = IFT_FRAME_F_PYTHON },
	{ .module = "/usr/bin/python3.11", .offset = 0x1b0000,
	  .symbol = "_PyEval_EvalFrameDefault", .symoff = 0x2a1d, .flags = IFT_FRAME_F_PYTHON },
	{ .module = "/usr/bin/python3.11", .offset = 0x100, .symbol = "main", .symoff = 0x21,
	  .flags = IFT_FRAME_F_PYTHON },
};

/* through torch: the interpreter from frame 4 */
static const struct ift_frame nat_torch[] = {
	{ .module = "/usr/lib/x86_64-linux-gnu/libcudart.so.12", .symbol = "cudaStreamSynchronize" },
	{ .module = "/usr/lib/libc10_cuda.so", .offset = 0x4000,
	  .symbol = "c10::cuda::stream_synchronize(CUstream_st*)", .symoff = 0x1a },
	{ .module = "/usr/lib/libtorch_cpu.so", .offset = 0x8000,
	  .symbol = "at::native::item(at::Tensor const&)", .symoff = 0x33 },
	{ .module = "/usr/lib/python3/dist-packages/torch/lib/libtorch_python.so",
	  .offset = 0x9000, .symbol = "THPVariable_item", .symoff = 0x40 },
	{ .module = "/usr/bin/python3.11", .offset = 0x1b0000,
	  .symbol = "_PyEval_EvalFrameDefault", .symoff = 0x2a1d, .flags = IFT_FRAME_F_PYTHON },
	{ .module = "/usr/bin/python3.11", .offset = 0x100, .symbol = "main", .symoff = 0x21,
	  .flags = IFT_FRAME_F_PYTHON },
};

/* an unwind that stopped short of the interpreter */
static const struct ift_frame nat_short[] = {
	{ .module = "/usr/lib/x86_64-linux-gnu/libcudart.so.12", .symbol = "cudaMemcpy" },
	{ .module = "/usr/lib/libfoo.so", .offset = 0x10, .symbol = "", .flags = IFT_FRAME_F_FP },
};

static const struct ift_frame py_main[] = {	/* the line under every loop */
	PYF(TRAIN, "main", 80), PYF(TRAIN, "<module>", 99),
};

/* The sites, and the Python line each one's calls count for (NULL: none). */
struct tsite {
	uint64_t id;
	const struct ift_frame *key;	/* the test's own copy of the frame */
	struct ift_frame key_frame;
	unsigned ninner, nnative, npy;	/* the chain's parts, as written */
};

enum {
	S_CT_57, S_TO_57, S_DL, S_VENV, S_THREAD, S_NOLINE, S_H0, S_H1, S_H2, S_SHORT,
	S_NAT_CT, S_NAT_TO, S_NAT_SHORT, S_NR,
};

static struct tsite sites[S_NR];

/* A site: NAT, then PY (innermost first), then py_main when MAINS. */
static void site(struct tb *b, int which, const struct ift_frame *nat, unsigned nnat,
		 const struct ift_frame *py, unsigned npy, bool mains)
{
	struct ift_frame f[32];
	unsigned n = 0, inner = nnat;
	int64_t id;

	for (unsigned i = 0; i < nnat; i++)
		f[n++] = nat[i];
	for (unsigned i = 0; i < npy; i++)
		f[n++] = py[i];
	for (unsigned i = 0; mains && i < 2; i++)
		f[n++] = py_main[i];
	for (unsigned i = 1; n > nnat && i < nnat; i++)
		if (nat[i].flags & IFT_FRAME_F_PYTHON) {
			inner = i;
			break;
		}
	id = ift_writer_stack(b->w, f, n);
	assert_true(id > 0);
	sites[which] = (struct tsite){ .id = (uint64_t)id, .ninner = inner, .nnative = nnat,
				       .npy = n - nnat };
	if (npy) {
		sites[which].key_frame = py[0];
		sites[which].key = &sites[which].key_frame;
	}
}

static void make_sites(struct tb *b)
{
	static const struct ift_frame l57[] = { PYF(TRAIN, "train_epoch", 57) };
	static const struct ift_frame dl[] = {
		PYF("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py",
		    "_BaseDataLoaderIter.__next__", 631),
		PYF(TRAIN, "train_epoch", 52),
	};
	static const struct ift_frame venv[] = {
		PYF("/home/u/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py",
		    "synchronize", 801),
		PYF(TRAIN, "train_epoch", 60),
	};
	static const struct ift_frame thr[] = {
		PYF("/usr/lib/python3.11/threading.py", "Thread.run", 982),
		PYF("/usr/lib/python3.11/threading.py", "Thread._bootstrap_inner", 1045),
		PYF("/usr/lib/python3.11/threading.py", "Thread._bootstrap", 1002),
	};
	static const struct ift_frame noline[] = { PYF(TRAIN, "<module>", 0) };
	static const struct ift_frame h[3][1] = {
		{ PYF(TRAIN, "helper", 200) }, { PYF(TRAIN, "helper", 201) },
		{ PYF(TRAIN, "helper", 202) },
	};
	static const struct ift_frame l70[] = { PYF(TRAIN, "train_epoch", 70) };
	const unsigned nct = sizeof(nat_ctypes) / sizeof(nat_ctypes[0]);
	const unsigned nto = sizeof(nat_torch) / sizeof(nat_torch[0]);

	site(b, S_CT_57, nat_ctypes, nct, l57, 1, true);
	site(b, S_TO_57, nat_torch, nto, l57, 1, true);
	site(b, S_DL, nat_torch, nto, dl, 2, true);
	site(b, S_VENV, nat_torch, nto, venv, 2, true);
	site(b, S_THREAD, nat_ctypes, nct, thr, 3, false);
	site(b, S_NOLINE, nat_ctypes, nct, noline, 1, false);
	for (int i = 0; i < 3; i++)
		site(b, S_H0 + i, nat_ctypes, nct, h[i], 1, true);
	site(b, S_SHORT, nat_short, 2, l70, 1, true);
	site(b, S_NAT_CT, nat_ctypes, nct, NULL, 0, false);
	site(b, S_NAT_TO, nat_torch, nto, NULL, 0, false);
	site(b, S_NAT_SHORT, nat_short, 2, NULL, 0, false);
}

/* Every call written, as the test knows it. */
struct row {
	uint64_t ts, dur, stack, flags;
	uint32_t pid, tid;
	int op;
};

static struct row rows[2048];
static size_t nrows;

static void pycall(struct tb *b, uint64_t t, uint32_t tid, uint32_t pid, int op, uint64_t dur,
		   int which, uint64_t flags)
{
	uint64_t r[IFT_CALL_NR] = {
		T0 + t, 0, pid, tid, (uint64_t)b->op[op], dur, 0, flags, 0,
	};

	r[IFT_CALL_STACK] = which < 0 ? 0 : sites[which].id;
	add(b, IFT_T_CALLS, r);
	assert_true(nrows < sizeof(rows) / sizeof(rows[0]));
	rows[nrows++] = (struct row){ T0 + t, dur, r[IFT_CALL_STACK], flags, pid, tid, op };
}

/*
 * 600 calls 100 us apart: each call's op, site and flags from its index,
 * durations spread so that no two sites tie.  cudaStreamSynchronize from
 * nine lines of Python (more than a report shows), in flight, late (their
 * sites native only), without Python frames or without a site;
 * cudaMemcpy from one line through an unwind that stopped short, and from
 * a line without a number;
 * cudaMalloc only late; cudaLaunchKernel never with Python frames; a
 * second process calls from the busiest line too.
 */
static void build(struct tb *b, const char *name)
{
	static const int sync_sites[] = {
		S_CT_57, S_CT_57, S_TO_57, S_DL, S_VENV, S_CT_57, S_H0, S_H1, S_H2, S_NOLINE,
		S_DL, S_CT_57,
	};
	uint64_t t = 1 * MS;

	nrows = 0;
	tb_begin(b, name, 100 * MS);
	make_sites(b);
	task(b, 1 * US, PROC, PROC, IFT_TASK_COMM, 0, 0, "python3");
	task(b, 2 * US, OTHER, OTHER, IFT_TASK_COMM, 0, 0, "python3");
	for (unsigned i = 0; i < 600; i++, t += 100 * US) {
		uint64_t dur = 10 * US + (i * 7919 % 997) * 40;
		unsigned k = i % 20;

		if (k < 12)
			pycall(b, t, MAIN, PROC, OP_SYNC, dur, sync_sites[k], IFT_CALL_F_PY);
		else if (k == 12)
			pycall(b, t, LOADER, PROC, OP_SYNC, dur, S_THREAD, IFT_CALL_F_PY);
		else if (k == 13)
			pycall(b, t, MAIN, PROC, OP_SYNC, dur, i % 40 < 20 ? S_NAT_CT : S_NAT_TO,
			       IFT_CALL_F_PY_LATE);
		else if (k == 14)
			pycall(b, t, MAIN, PROC, OP_SYNC, dur, i % 3 ? -1 : S_NAT_CT, 0);
		else if (k == 15 && i % 60 < 20)
			pycall(b, t, MAIN, PROC, OP_MEMCPY, dur, S_SHORT, IFT_CALL_F_PY);
		else if (k == 15 && i % 60 < 40)
			pycall(b, t, MAIN, PROC, OP_MEMCPY, dur, S_NAT_SHORT, IFT_CALL_F_PY_LATE);
		else if (k == 15)
			pycall(b, t, MAIN, PROC, OP_MEMCPY, dur, S_NOLINE, IFT_CALL_F_PY);
		else if (k == 16)
			pycall(b, t, MAIN, PROC, OP_MALLOC, dur, S_NAT_CT, IFT_CALL_F_PY_LATE);
		else if (k == 17)
			pycall(b, t, MAIN, PROC, OP_LAUNCH, dur, S_NAT_CT, 0);
		else
			pycall(b, t, OTHER + 1, OTHER, OP_SYNC, dur, S_CT_57, IFT_CALL_F_PY);
	}
}

/* ---- what the rows say --------------------------------------------- */

struct xsite {
	const struct ift_frame *key;
	uint64_t calls, total, tail_calls, tail_ns, stacks, stack, stack_ns;
};

struct xop {
	int op;
	uint64_t calls, stack_calls, in_flight, in_flight_ns, late;
	size_t nsites;
	struct xsite s[S_NR];
};

static const struct tsite *tsite_of(uint64_t id)
{
	for (int i = 0; i < S_NR; i++)
		if (sites[i].id == id)
			return &sites[i];
	fail_msg("no site %" PRIu64, id);
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return (p > q) - (p < q);
}

static int cmp_xsite(const void *x, const void *y)
{
	const struct xsite *p = x, *q = y;

	if (p->total != q->total)
		return p->total > q->total ? -1 : 1;
	if (p->calls != q->calls)
		return p->calls > q->calls ? -1 : 1;
	return ift_py_frame_cmp(p->key, q->key);
}

static int cmp_xop(const void *x, const void *y)
{
	const struct xop *p = x, *q = y;

	if (p->in_flight_ns != q->in_flight_ns)
		return p->in_flight_ns > q->in_flight_ns ? -1 : 1;
	return p->op - q->op;
}

/*
 * The Python call sites of the rows in [FROM, TO) of PID (0: all), per op,
 * as documented: per op, its calls, those with a site, those read in flight
 * (and their time) or late; per line of Python (the innermost Python frame
 * of the sites of the calls read in flight) the calls, their time, those at
 * or above the op's p99 over its calls with a site, the sites and the one
 * with most time.  Ops with a call read, most time in flight first; sites
 * most time first.  Returns the number of ops in X.
 */
static size_t expect(uint64_t from, uint64_t to, uint32_t pid, struct xop *x)
{
	size_t nx = 0;

	for (int op = 1; op < OP_NR; op++) {
		struct xop o = { .op = op };
		uint64_t durs[2048], p99 = 0;
		size_t nd = 0;

		for (size_t i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];

			if (r->op != op || r->ts < from || r->ts >= to ||
			    (pid && r->pid != pid && r->tid != pid))
				continue;
			o.calls++;
			if (r->stack) {
				o.stack_calls++;
				durs[nd++] = r->dur;
			}
			if (r->flags & IFT_CALL_F_PY) {
				o.in_flight++;
				o.in_flight_ns += r->dur;
			} else if (r->flags & IFT_CALL_F_PY_LATE) {
				o.late++;
			}
		}
		if (!o.in_flight && !o.late)
			continue;
		qsort(durs, nd, sizeof(*durs), cmp_u64);
		p99 = durs[(nd * 99 + 99) / 100 - 1];
		for (size_t i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];
			const struct tsite *ts;
			struct xsite *s = NULL;

			if (r->op != op || r->ts < from || r->ts >= to ||
			    (pid && r->pid != pid && r->tid != pid) || !(r->flags & IFT_CALL_F_PY))
				continue;
			ts = tsite_of(r->stack);
			assert_non_null(ts->key);
			for (size_t k = 0; k < o.nsites; k++)
				if (!ift_py_frame_cmp(o.s[k].key, ts->key))
					s = &o.s[k];
			if (!s) {
				s = &o.s[o.nsites++];
				s->key = ts->key;
			}
			s->calls++;
			s->total += r->dur;
			s->tail_calls += r->dur >= p99;
			s->tail_ns += r->dur >= p99 ? r->dur : 0;
		}
		/* each line's sites, and the one with most time */
		for (size_t k = 0; k < o.nsites; k++) {
			struct xsite *s = &o.s[k];

			for (int w = 0; w < S_NR; w++) {
				uint64_t ns = 0, n = 0;

				if (!sites[w].key || ift_py_frame_cmp(sites[w].key, s->key))
					continue;
				for (size_t i = 0; i < nrows; i++)
					if (rows[i].stack == sites[w].id && rows[i].op == op &&
					    rows[i].ts >= from && rows[i].ts < to &&
					    (!pid || rows[i].pid == pid || rows[i].tid == pid) &&
					    rows[i].flags & IFT_CALL_F_PY) {
						ns += rows[i].dur;
						n++;
					}
				if (!n)
					continue;
				s->stacks++;
				if (ns > s->stack_ns || (ns == s->stack_ns && sites[w].id < s->stack)) {
					s->stack_ns = ns;
					s->stack = sites[w].id;
				}
			}
		}
		qsort(o.s, o.nsites, sizeof(*o.s), cmp_xsite);
		x[nx++] = o;
	}
	qsort(x, nx, sizeof(*x), cmp_xop);
	return nx;
}

/* GOT (N ops) is what the rows say, at most TOP sites an op. */
static void same(struct tb *b, const struct ift_py_op *got, size_t n, const struct xop *x,
		 size_t nx, unsigned top)
{
	assert_int_equal(n, nx);
	for (size_t i = 0; i < n; i++) {
		const struct ift_py_op *o = &got[i];

		assert_string_equal(o->op, ift_trace_op(b->t, (uint64_t)b->op[x[i].op])->name);
		assert_int_equal(o->calls, x[i].calls);
		assert_int_equal(o->stack_calls, x[i].stack_calls);
		assert_int_equal(o->in_flight, x[i].in_flight);
		assert_int_equal(o->in_flight_ns, x[i].in_flight_ns);
		assert_int_equal(o->late, x[i].late);
		assert_int_equal(o->all_sites, x[i].nsites);
		assert_int_equal(o->nsites, top && x[i].nsites > top ? top : x[i].nsites);
		for (size_t k = 0; k < o->nsites; k++) {
			const struct ift_py_site *s = &o->sites[k];

			assert_int_equal(ift_py_frame_cmp(s->frame, x[i].s[k].key), 0);
			assert_true(s->frame->flags & IFT_FRAME_F_PYSRC);
			assert_int_equal(s->calls, x[i].s[k].calls);
			assert_int_equal(s->total_ns, x[i].s[k].total);
			assert_int_equal(s->tail_calls, x[i].s[k].tail_calls);
			assert_int_equal(s->tail_ns, x[i].s[k].tail_ns);
			assert_int_equal(s->stacks, x[i].s[k].stacks);
			assert_int_equal(s->stack, x[i].s[k].stack);
			assert_true(s->share_time == (double)x[i].s[k].total /
						     (double)x[i].in_flight_ns);
		}
	}
}

/* The trace holds what the test means to check. */
static void sanity(const struct xop *x, size_t nx)
{
	bool late_only = false, short_unwind = false;

	assert_int_equal(nx, 3);
	for (size_t i = 0; i < nx; i++) {
		late_only |= !x[i].in_flight && x[i].late;
		/* and a line without a number, both shown */
		short_unwind |= x[i].op == OP_MEMCPY && x[i].nsites == 2 &&
				(!x[i].s[0].key->offset || !x[i].s[1].key->offset);
	}
	assert_true(late_only && short_unwind);
	assert_int_equal(x[0].op, OP_SYNC);
	assert_true(x[0].nsites > IFT_SITES_TOP);
	/* the busiest line came through two sites */
	assert_int_equal(x[0].s[0].stacks, 2);
}

static void test_py_sites(void **state)
{
	struct ift_analyze_opts o = { 0 };
	const struct ift_py_op *got;
	struct ift_py_op *run;
	struct xop x[OP_NR];
	struct tb b;
	size_t n, nx;

	(void)state;
	build(&b, "py");
	tb_run(&b, NULL);
	assert_true(ift_analysis_py(b.a));
	got = ift_analysis_py_sites(b.a, &n);
	nx = expect(0, UINT64_MAX, 0, x);
	sanity(x, nx);
	same(&b, got, n, x, nx, IFT_SITES_TOP);

	/* a process's calls, every site */
	assert_int_equal(ift_py_sites_run(b.t, 0, UINT64_MAX, PROC, 0, &run, &n), 0);
	nx = expect(0, UINT64_MAX, PROC, x);
	same(&b, run, n, x, nx, 0);
	free(run);
	/* a thread's */
	assert_int_equal(ift_py_sites_run(b.t, 0, UINT64_MAX, LOADER, 0, &run, &n), 0);
	nx = expect(0, UINT64_MAX, LOADER, x);
	assert_int_equal(nx, 1);
	same(&b, run, n, x, nx, 0);
	free(run);

	/* a window that ends before the trace does */
	o.from_ns = 10 * MS;
	o.to_ns = 33 * MS;
	o.has_to = true;
	tb_run(&b, &o);
	got = ift_analysis_py_sites(b.a, &n);
	nx = expect(T0 + 10 * MS, T0 + 33 * MS, 0, x);
	same(&b, got, n, x, nx, IFT_SITES_TOP);
	tb_end(&b);
}

/* The frames of a site read as one call chain, innermost first. */
static void test_stack_parts(void **state)
{
	struct ift_stack_parts p;
	struct tb b;

	(void)state;
	build(&b, "parts");
	tb_run(&b, NULL);
	for (int w = 0; w < S_NR; w++) {
		const struct ift_stack *st = ift_trace_stack(b.t, sites[w].id);
		unsigned k = 0;

		ift_stack_parts(st, &p);
		assert_int_equal(p.nframes, st->nframes);
		assert_int_equal(p.native, sites[w].nnative);
		assert_int_equal(p.inner, sites[w].ninner);
		/* the native frames Python called, the Python frames, the
		   interpreter's: each in the file's order */
		for (; k < p.inner; k++)
			assert_int_equal(ift_stack_chain_index(&p, k), k);
		for (; k < p.inner + sites[w].npy; k++) {
			assert_int_equal(ift_stack_chain_index(&p, k), sites[w].nnative + k - p.inner);
			assert_true(st->frames[ift_stack_chain_index(&p, k)].flags &
				    IFT_FRAME_F_PYSRC);
		}
		for (; k < p.nframes; k++) {
			assert_int_equal(ift_stack_chain_index(&p, k), k - sites[w].npy);
			assert_true(st->frames[ift_stack_chain_index(&p, k)].flags &
				    IFT_FRAME_F_PYTHON);
		}
		if (sites[w].key)
			assert_int_equal(ift_py_frame_cmp(ift_stack_py_top(st), sites[w].key), 0);
		else
			assert_null(ift_stack_py_top(st));
	}
	ift_stack_parts(NULL, &p);
	assert_int_equal(p.nframes, 0);
	tb_end(&b);
}

/* ---- the outputs --------------------------------------------------- */

static char *out_text(struct tb *b, const struct ift_report *r, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(json ? ift_out_json(f, b->t, r) : ift_out_text(f, b->t, r, NULL), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key '%s'", key);
	return v;
}

static uint64_t get_u64(json_object *o, const char *key)
{
	return json_object_get_uint64(get(o, key));
}

/* The Python frames of site ID that called its innermost, as text. */
static void callers(struct tb *b, uint64_t id, char (*out)[256], unsigned *n)
{
	const struct ift_stack *st = ift_trace_stack(b->t, id);
	struct ift_stack_parts p;

	ift_stack_parts(st, &p);
	*n = 0;
	for (unsigned k = p.native + 1; k < p.nframes; k++)
		ift_frame_format(&st->frames[k], out[(*n)++], 256);
}

/* report --json's py_sites, key for key, against the rows. */
static void check_json(struct tb *b, json_object *root, const struct xop *x, size_t nx)
{
	json_object *v = get(root, "py_sites");

	assert_int_equal(json_object_array_length(v), nx);
	for (size_t i = 0; i < nx; i++) {
		json_object *o = json_object_array_get_idx(v, i), *ss = get(o, "sites");

		assert_string_equal(json_object_get_string(get(o, "op")),
				    ift_trace_op(b->t, (uint64_t)b->op[x[i].op])->name);
		assert_int_equal(get_u64(o, "calls"), x[i].calls);
		assert_int_equal(get_u64(o, "calls_with_stack"), x[i].stack_calls);
		assert_int_equal(get_u64(o, "in_flight"), x[i].in_flight);
		assert_int_equal(get_u64(o, "in_flight_ns"), x[i].in_flight_ns);
		assert_int_equal(get_u64(o, "late"), x[i].late);
		assert_int_equal(get_u64(o, "sites_total"), x[i].nsites);
		assert_int_equal(json_object_array_length(ss),
				 x[i].nsites > IFT_SITES_TOP ? IFT_SITES_TOP : x[i].nsites);
		for (size_t k = 0; k < json_object_array_length(ss); k++) {
			json_object *s = json_object_array_get_idx(ss, k), *c = get(s, "callers");
			const struct xsite *e = &x[i].s[k];
			char frame[256], cs[8][256];
			unsigned nc;

			ift_frame_format(e->key, frame, sizeof(frame));
			assert_string_equal(json_object_get_string(get(s, "file")), e->key->module);
			assert_string_equal(json_object_get_string(get(s, "function")),
					    e->key->symbol);
			if (e->key->offset)
				assert_int_equal(get_u64(s, "line"), e->key->offset);
			else
				assert_null(get(s, "line"));
			assert_string_equal(json_object_get_string(get(s, "frame")), frame);
			assert_int_equal(get_u64(s, "calls"), e->calls);
			assert_int_equal(get_u64(s, "total_ns"), e->total);
			assert_int_equal(get_u64(s, "tail_calls"), e->tail_calls);
			assert_int_equal(get_u64(s, "tail_ns"), e->tail_ns);
			assert_int_equal(get_u64(s, "stack_id"), e->stack);
			assert_int_equal(get_u64(s, "stacks"), e->stacks);
			assert_true(json_object_get_double(get(s, "share_time")) ==
				    (double)e->total / (double)x[i].in_flight_ns);
			callers(b, e->stack, cs, &nc);
			assert_int_equal(json_object_array_length(c), nc);
			for (unsigned j = 0; j < nc; j++)
				assert_string_equal(json_object_get_string(
					json_object_array_get_idx(c, j)), cs[j]);
		}
	}
}

/* A `stacks' entry of a site with Python frames lists them where they
   called the native code: after the probed function, ffi and _ctypes. */
static void check_json_frames(json_object *root)
{
	json_object *v = get(root, "stacks");
	bool seen = false;

	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *s = json_object_array_get_idx(v, i), *f = get(s, "frames");

		if (get_u64(s, "stack_id") != sites[S_CT_57].id)
			continue;
		seen = true;
		assert_int_equal(json_object_array_length(f), 6 + 3);
		assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 2)),
				    "_ctypes_callproc+0x2f0 (_ctypes.cpython-311-x86_64-linux-gnu.so)");
		assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 3)),
				    TRAIN ":57 in train_epoch");
		assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 5)),
				    TRAIN ":99 in <module>");
		assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 6)),
				    "[python] _PyObject_MakeTpCall+0x8c (python3.11)");
	}
	assert_true(seen);
}

/* The text report's section: one line an op, then its sites with the
   numbers of the rows. */
static void check_text(struct tb *b, const char *text, const struct xop *x, size_t nx)
{
	const char *sec = strstr(text, "\nPython call sites (record --py-stack)");
	char want[512], frame[256], d[32], c1[32], c2[32], c3[32];

	assert_non_null(sec);
	for (size_t i = 0; i < nx; i++) {
		snprintf(want, sizeof(want), "\n%s: %s call%s, %s with a stack; Python frames: "
			 "%s in flight, ",
			 ift_trace_op(b->t, (uint64_t)b->op[x[i].op])->name,
			 ift_fmt_count(c1, sizeof(c1), x[i].calls), x[i].calls == 1 ? "" : "s",
			 ift_fmt_count(c2, sizeof(c2), x[i].stack_calls),
			 ift_fmt_count(c3, sizeof(c3), x[i].in_flight));
		assert_non_null(strstr(sec, want));
		for (size_t k = 0; k < x[i].nsites && k < IFT_SITES_TOP; k++) {
			const struct xsite *e = &x[i].s[k];

			ift_frame_format(e->key, frame, sizeof(frame));
			snprintf(want, sizeof(want), "\n  %s: %s in %s call%s (%.1f%%)", frame,
				 ift_fmt_dur(d, sizeof(d), e->total, false),
				 ift_fmt_count(c1, sizeof(c1), e->calls), e->calls == 1 ? "" : "s",
				 100.0 * (double)e->total / (double)x[i].in_flight_ns);
			if (!strstr(sec, want))
				fail_msg("no '%s' in the text", want + 1);
		}
	}
	/* the shortened files, and the callers of the busiest line */
	assert_non_null(strstr(sec, "torch/utils/data/dataloader.py:631 in "
			       "_BaseDataLoaderIter.__next__: "));
	assert_non_null(strstr(sec, "      called from " TRAIN ":80 in main < " TRAIN
			       ":99 in <module>\n"));
	/* a site with Python frames: its native frames, then the Python ones,
	   then how many of the interpreter's */
	snprintf(want, sizeof(want), "\n  #%-4" PRIu64 " ", sites[S_CT_57].id);
	assert_non_null(sec = strstr(text, want));
	sec = strchr(sec + 1, '\n');
	assert_non_null(strstr(sec, "\n        cudaStreamSynchronize+0x0 (libcudart.so.12)\n"
			       "        ffi_call_unix64+0x4e (libffi.so.8.1.2)\n"
			       "        _ctypes_callproc+0x2f0 (_ctypes.cpython-311-x86_64-linux-gnu.so)\n"
			       "        " TRAIN ":57 in train_epoch\n"
			       "        " TRAIN ":80 in main\n"
			       "        " TRAIN ":99 in <module>\n"
			       "        ... 3 frames of the interpreter\n"));
}

/* The SQLite export: each frame's python and line, the chain's order,
   and the view py_call_sites against the rows. */
static void check_sqlite(struct tb *b, const struct xop *x, size_t nx)
{
	char path[512], errbuf[256];
	struct ift_export_opts xo = { .errbuf = errbuf, .errlen = sizeof(errbuf),
				      .source = b->path };
	size_t nview = 0, nwant = 0;
	sqlite3_stmt *st;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/py.db", tmpdir);
	if (ift_export_sqlite(b->t, path, &xo) < 0)
		fail_msg("export: %s", errbuf);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* every frame of every site, in the chain's order */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT stack_id, depth, module, symbol, offset, "
					    "flags, python, line, frame FROM stacks ORDER BY "
					    "stack_id, depth", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const struct ift_stack *sk = ift_trace_stack(b->t,
							     (uint64_t)sqlite3_column_int64(st, 0));
		unsigned depth = (unsigned)sqlite3_column_int(st, 1);
		struct ift_stack_parts p;
		const struct ift_frame *f;
		char frame[256];

		ift_stack_parts(sk, &p);
		f = &sk->frames[ift_stack_chain_index(&p, depth)];
		ift_frame_format(f, frame, sizeof(frame));
		assert_string_equal((const char *)sqlite3_column_text(st, 2), f->module);
		assert_int_equal(sqlite3_column_int64(st, 5), f->flags);
		assert_string_equal((const char *)sqlite3_column_text(st, 8), frame);
		if (f->flags & IFT_FRAME_F_PYSRC) {
			assert_int_equal(sqlite3_column_int(st, 6), 1);
			if (f->offset)
				assert_int_equal(sqlite3_column_int64(st, 7), f->offset);
			else
				assert_int_equal(sqlite3_column_type(st, 7), SQLITE_NULL);
		} else {
			assert_int_equal(sqlite3_column_int(st, 6), 0);
			assert_int_equal(sqlite3_column_type(st, 7), SQLITE_NULL);
		}
	}
	sqlite3_finalize(st);
	/* the view: one row per op and line, every line (no top) */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT op, file, function, line, frame, calls, "
					    "total_ns, sites FROM py_call_sites", -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *op = (const char *)sqlite3_column_text(st, 0);
		bool found = false;

		nview++;
		for (size_t i = 0; i < nx; i++) {
			if (strcmp(op, ift_trace_op(b->t, (uint64_t)b->op[x[i].op])->name))
				continue;
			for (size_t k = 0; k < x[i].nsites; k++) {
				const struct xsite *e = &x[i].s[k];
				char frame[256];

				if (strcmp((const char *)sqlite3_column_text(st, 1), e->key->module) ||
				    strcmp((const char *)sqlite3_column_text(st, 2), e->key->symbol) ||
				    (uint64_t)sqlite3_column_int64(st, 3) != e->key->offset)
					continue;
				found = true;
				ift_frame_format(e->key, frame, sizeof(frame));
				assert_string_equal((const char *)sqlite3_column_text(st, 4), frame);
				assert_int_equal(sqlite3_column_int64(st, 5), e->calls);
				assert_int_equal(sqlite3_column_int64(st, 6), e->total);
				assert_int_equal(sqlite3_column_int64(st, 7), e->stacks);
			}
		}
		assert_true(found);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < nx; i++)
		nwant += x[i].nsites;
	assert_int_equal(nview, nwant);
	sqlite3_close(db);
	unlink(path);
}

/* dump --json: a call's stack in the order of its call chain, as report's. */
static void check_dump(struct tb *b)
{
	struct ift_cursor *cur = ift_cursor_new(b->t, 1U << IFT_T_CALLS, 0);
	struct ift_event ev;
	bool seen = false;

	assert_non_null(cur);
	while (!seen && ift_cursor_next(cur, &ev) > 0) {
		const struct ift_stack *st;
		struct ift_stack_parts p;
		json_object *o, *f;

		if (ev.row[IFT_CALL_STACK] != sites[S_TO_57].id)
			continue;
		seen = true;
		st = ift_trace_stack(b->t, ev.row[IFT_CALL_STACK]);
		ift_stack_parts(st, &p);
		o = ift_event_json(b->t, &ev);
		f = get(o, "stack");
		assert_int_equal(json_object_array_length(f), st->nframes);
		for (unsigned k = 0; k < st->nframes; k++) {
			char frame[256];

			ift_frame_format(&st->frames[ift_stack_chain_index(&p, k)], frame,
					 sizeof(frame));
			assert_string_equal(json_object_get_string(json_object_array_get_idx(f, k)),
					    frame);
		}
		/* torch's frames, then line 57 */
		assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 4)),
				    TRAIN ":57 in train_epoch");
		json_object_put(o);
	}
	ift_cursor_free(cur);
	assert_true(seen);
}

static void test_outputs(void **state)
{
	struct ift_report r;
	struct xop x[OP_NR];
	json_object *root;
	char *text;
	struct tb b;
	size_t nx;

	(void)state;
	build(&b, "out");
	tb_run(&b, NULL);
	nx = expect(0, UINT64_MAX, 0, x);
	assert_int_equal(ift_report_run(b.t, NULL, NULL, &r), 0);
	assert_true(ift_report_py(&r));

	text = out_text(&b, &r, true);
	root = json_tokener_parse(text);
	assert_non_null(root);
	check_json(&b, root, x, nx);
	check_json_frames(root);
	json_object_put(root);
	free(text);

	text = out_text(&b, &r, false);
	check_text(&b, text, x, nx);
	free(text);

	check_sqlite(&b, x, nx);
	check_dump(&b);
	ift_report_release(&r);
	tb_end(&b);
}

/* MCP's get_stacks: py_sites of a process, LIMIT sites an op. */
static void test_mcp(void **state)
{
	struct ift_mcp *m;
	struct xop x[OP_NR];
	json_object *o, *v;
	char *reply = NULL, msg[512];
	struct tb b;
	size_t nx;

	(void)state;
	build(&b, "mcp");
	tb_run(&b, NULL);
	nx = expect(0, UINT64_MAX, PROC, x);
	m = ift_mcp_new(&(struct ift_mcp_opts){ .trace = b.path });
	assert_non_null(m);
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		 "\"params\":{\"protocolVersion\":\"2025-11-25\"}}");
	assert_int_equal(ift_mcp_handle(m, msg, strlen(msg), &reply), 0);
	free(reply);
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"get_stacks\",\"arguments\":{\"pid\":%d,\"limit\":2}}}",
		 PROC);
	assert_int_equal(ift_mcp_handle(m, msg, strlen(msg), &reply), 0);
	o = json_tokener_parse(reply);
	free(reply);
	assert_non_null(o);
	v = get(get(get(o, "result"), "structuredContent"), "py_sites");
	assert_int_equal(json_object_array_length(v), nx);
	for (size_t i = 0; i < nx; i++) {
		json_object *e = json_object_array_get_idx(v, i), *ss = get(e, "sites");

		assert_int_equal(get_u64(e, "in_flight"), x[i].in_flight);
		assert_int_equal(get_u64(e, "late"), x[i].late);
		assert_int_equal(get_u64(e, "calls"), x[i].calls);
		assert_int_equal(json_object_array_length(ss), x[i].nsites > 2 ? 2 : x[i].nsites);
		for (size_t k = 0; k < json_object_array_length(ss); k++) {
			assert_int_equal(get_u64(json_object_array_get_idx(ss, k), "total_ns"),
					 x[i].s[k].total);
			assert_int_equal(get_u64(json_object_array_get_idx(ss, k), "calls"),
					 x[i].s[k].calls);
		}
	}
	json_object_put(o);
	ift_mcp_free(m);
	tb_end(&b);
}

/* ---- chains -------------------------------------------------------- */

/*
 * 100 synchronizes of 100 us, 6 of them preempted by the worker for 4 to
 * 19 ms: 1 from line 57 through torch, 1 from it through ctypes, 3 from
 * the dataloader's line, 1 without Python frames (late).  The fast ones
 * come from another line.
 */
static void test_chain_py_sites(void **state)
{
	static const int slow_sites[] = { S_TO_57, S_DL, S_CT_57, S_NAT_CT, S_DL, S_DL };
	struct ift_analyze_opts opts = { 0 };
	const struct ift_chain *ch = NULL;
	struct ift_chains *c;
	uint64_t t = 1 * MS, cost57 = 0, costdl = 0, n57 = 0, ndl = 0, nslow = 0, npy = 0;
	struct tb b;
	int k = 0;

	(void)state;
	nrows = 0;
	tb_begin(&b, "chain", 2000 * MS);
	make_sites(&b);
	task(&b, 1 * US, PROC, PROC, IFT_TASK_COMM, 0, 0, "python3");
	task(&b, 3 * US, WORKER, WORKER, IFT_TASK_COMM, 0, 0, "hog");
	wk(&b, 400 * US, 0, PROC, PROC, IFT_WAKE_WAKEUP, 0, 0, 0);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, PROC, PROC);
	page(&b, 600 * US, WORKER, WORKER, 0);
	for (int i = 0; i < 100; i++) {
		bool slow = i % 16 == 7;
		/* the slow ones wait 4, 7, 10, ... ms for their CPU */
		uint64_t wait = slow ? (4 + 3 * (uint64_t)k) * MS : 0;
		uint64_t d = slow ? wait + 50 * US : 100 * US;
		int w = slow ? slow_sites[k++] : S_H0;

		pycall(&b, t, PROC, PROC, OP_SYNC, d, w,
		       w == S_NAT_CT ? IFT_CALL_F_PY_LATE : IFT_CALL_F_PY);
		if (slow) {
			sw(&b, t + 10 * US, 0, PROC, PROC, S_PREEMPT, WORKER, WORKER);
			sw(&b, t + 10 * US + wait, 0, WORKER, WORKER, S_RUN, PROC, PROC);
		}
		t += d + 50 * US;
	}
	c = ift_chains_new(NULL);
	assert_non_null(c);
	ift_chains_hooks(c, &opts.hooks);
	tb_run(&b, &opts);
	assert_int_equal(ift_chains_build(c, b.a, b.t), 0);
	for (size_t i = 0; i < ift_chains_count(c); i++)
		if (ift_chains_get(c, i)->cause == IFT_CAUSE_CPU_CONTENTION)
			ch = ift_chains_get(c, i);
	assert_non_null(ch);
	assert_true(ch->py);
	/* the slow calls, from the rows: each one's cost is its wait */
	for (size_t i = 0; i < nrows; i++) {
		const struct tsite *ts;
		uint64_t cost = rows[i].dur - 50 * US;

		if (rows[i].dur < 1 * MS)
			continue;
		nslow++;
		ts = tsite_of(rows[i].stack);
		if (!ts->key)
			continue;
		npy++;
		if (ts->key->offset == 57) {
			n57++;
			cost57 += cost;
		} else {
			ndl++;
			costdl += cost;
		}
	}
	assert_int_equal(ch->site_calls, nslow);
	assert_int_equal(ch->py_calls, npy);
	assert_int_equal(ch->npy_sites, 2);
	/* most cost first: the dataloader's line (42 ms), then line 57 (14) */
	assert_true(costdl > cost57);
	assert_int_equal(ch->py_sites[0].frame->offset, 631);
	assert_int_equal(ch->py_sites[0].calls, ndl);
	assert_int_equal(ch->py_sites[0].cost_ns, costdl);
	assert_int_equal(ch->py_sites[0].stack, sites[S_DL].id);
	assert_int_equal(ch->py_sites[1].frame->offset, 57);
	assert_string_equal(ch->py_sites[1].frame->symbol, "train_epoch");
	assert_int_equal(ch->py_sites[1].calls, n57);
	assert_int_equal(ch->py_sites[1].cost_ns, cost57);
	/* shares of the cost with Python frames, in permille, rounded */
	assert_int_equal(ch->py_sites[0].share_permille,
			 (costdl * 1000 + (cost57 + costdl) / 2) / (cost57 + costdl));
	assert_int_equal(ch->py_sites[1].share_permille,
			 (cost57 * 1000 + (cost57 + costdl) / 2) / (cost57 + costdl));
	/* of line 57's two sites, the one with more cost (10 ms through
	   ctypes against 4 through torch), though its id is the lower */
	assert_true(sites[S_CT_57].id < sites[S_TO_57].id);
	assert_int_equal(ch->py_sites[1].stack, sites[S_CT_57].id);
	ift_chains_free(c);
	tb_end(&b);
}

/*
 * GPU-bound with a tail: 40 synchronizes blocked until the device is done,
 * every tenth one 100 ms (from the dataloader's line), the others 20 ms
 * (from line 57).  The op's one gpu_bound chain takes the place of its
 * tail's, with the tail's call sites, native and Python alike.
 */
static void test_gpu_bound_py_sites(void **state)
{
	struct ift_analyze_opts opts = { 0 };
	const struct ift_chain *ch = NULL;
	struct ift_chains *c;
	uint64_t t = 1 * MS, tail = 0, native = 0;
	struct tb b;

	(void)state;
	nrows = 0;
	tb_begin(&b, "gpubound", 4000 * MS);
	make_sites(&b);
	task(&b, 1 * US, PROC, PROC, IFT_TASK_COMM, 0, 0, "python3");
	sw(&b, 500 * US, 0, 0, 0, S_RUN, PROC, PROC);
	for (int i = 0; i < 40; i++) {
		uint64_t d = i % 10 == 9 ? 100 * MS : 20 * MS;

		pycall(&b, t, PROC, PROC, OP_SYNC, d, d > 20 * MS ? S_DL : S_CT_57, IFT_CALL_F_PY);
		sw(&b, t + 5 * US, 0, PROC, PROC, S_SLEEP, 0, 0);
		wk(&b, t + d - 10 * US, 0, PROC, PROC, IFT_WAKE_WAKING, 0, 0, 0);
		sw(&b, t + d - 5 * US, 0, 0, 0, S_RUN, PROC, PROC);
		tail += d > 20 * MS;
		t += d + 10 * US;
	}
	c = ift_chains_new(NULL);
	assert_non_null(c);
	ift_chains_hooks(c, &opts.hooks);
	tb_run(&b, &opts);
	assert_int_equal(ift_chains_build(c, b.a, b.t), 0);
	for (size_t i = 0; i < ift_chains_count(c); i++) {
		assert_int_not_equal(ift_chains_get(c, i)->cause, IFT_CAUSE_CPU_CONTENTION);
		if (ift_chains_get(c, i)->cause == IFT_CAUSE_GPU_BOUND) {
			assert_null(ch);
			ch = ift_chains_get(c, i);
		}
	}
	assert_non_null(ch);
	assert_true(ch->nsites > 0);
	for (size_t i = 0; i < ch->nsites; i++)
		native += ch->sites[i].calls;
	/* the tail's calls, all from the dataloader's line */
	assert_int_equal(native, tail);
	assert_int_equal(ch->site_calls, tail);
	assert_int_equal(ch->py_calls, tail);
	assert_int_equal(ch->npy_sites, 1);
	assert_int_equal(ch->py_sites[0].frame->offset, 631);
	assert_int_equal(ch->py_sites[0].calls, tail);
	assert_int_equal(ch->py_sites[0].stack, sites[S_DL].id);
	assert_int_equal(ch->py_sites[0].share_permille, 1000);
	ift_chains_free(c);
	tb_end(&b);
}

/* ---- a trace without Python frames reads as before ------------------ */

static void test_no_python(void **state)
{
	static const struct ift_frame fr[] = {
		{ .module = "/lib/libcudart.so.12", .symbol = "cudaStreamSynchronize" },
		{ .module = "/app/train", .offset = 0x1234, .symbol = "step", .symoff = 0x15 },
	};
	struct ift_report r;
	json_object *root, *chains;
	char *text;
	struct tb b;
	size_t n;

	(void)state;
	tb_begin(&b, "native", 100 * MS);
	b.stack = (uint64_t)ift_writer_stack(b.w, fr, 2);
	sw(&b, 500 * US, 0, 0, 0, S_RUN, PROC, PROC);
	for (int i = 0; i < 100; i++) {
		bool slow = i % 20 == 7;

		call(&b, 1 * MS + (uint64_t)i * 700 * US, PROC, PROC, OP_SYNC,
		     slow ? 500 * US : 100 * US, 0, 0, 0, 0, 0, 0, 0);
		if (slow) {
			sw(&b, 1 * MS + (uint64_t)i * 700 * US + 10 * US, 0, PROC, PROC, S_PREEMPT,
			   WORKER, WORKER);
			sw(&b, 1 * MS + (uint64_t)i * 700 * US + 410 * US, 0, WORKER, WORKER, S_RUN,
			   PROC, PROC);
		}
	}
	tb_run(&b, NULL);
	assert_false(ift_analysis_py(b.a));
	assert_null(ift_analysis_py_sites(b.a, &n));
	assert_int_equal(n, 0);
	assert_int_equal(ift_report_run(b.t, NULL, NULL, &r), 0);
	text = out_text(&b, &r, true);
	root = json_tokener_parse(text);
	assert_false(json_object_object_get_ex(root, "py_sites", NULL));
	chains = get(root, "chains");
	assert_true(json_object_array_length(chains) > 0);
	for (size_t i = 0; i < json_object_array_length(chains); i++) {
		json_object *ch = json_object_array_get_idx(chains, i);

		assert_false(json_object_object_get_ex(ch, "py_sites", NULL));
		assert_false(json_object_object_get_ex(ch, "py_calls", NULL));
	}
	json_object_put(root);
	free(text);
	text = out_text(&b, &r, false);
	assert_null(strstr(text, "Python"));
	assert_null(strstr(text, "in Python"));
	free(text);
	ift_report_release(&r);
	tb_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_short),
		cmocka_unit_test(test_frame_format),
		cmocka_unit_test(test_stack_parts),
		cmocka_unit_test(test_py_sites),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_mcp),
		cmocka_unit_test(test_chain_py_sites),
		cmocka_unit_test(test_gpu_bound_py_sites),
		cmocka_unit_test(test_no_python),
	};

	return cmocka_run_group_tests_name("pysites", tests, tb_setup, tb_teardown);
}
