// SPDX-License-Identifier: MIT
/*
 * pystack against the interpreter itself: this test embeds the Python it is
 * built against (Debian 12: 3.11) and walks its own frames through the
 * reader the recorder uses (process_vm_readv() on itself), with the layout
 * of that version.  The truth is the interpreter's C API on the same frames
 * (PyFrame_GetCode, PyFrame_GetLineNumber, PyFrame_GetBack) and the lines of
 * the source below; the location tables are checked against
 * PyCode_Addr2Line() for every instruction of every code object of a module.
 *
 * test_line_table: every code unit of every code object of SOURCE (and
 * one before the first, and past the last) gets PyCode_Addr2Line's line.
 *
 * test_own_frames: probe(), called from nested functions, decorators, a
 * comprehension and a method, walks the calling thread: each frame's file,
 * qualified name and line are the C API's, innermost first, and the lines
 * are those the source marks.
 *
 * test_threads: each of several Python threads finds its own thread state
 * from _PyRuntime by its native id (gettid()), and walks its own frames; a
 * tid that is none of them is not found.
 *
 * test_other_process: Debian's python3 in a child, blocked in a read: its
 * interpreter found from its maps (the executable, Py_Version), its frames
 * those its source marks; the same for every pyenv python from 3.8 on that
 * the machine has (found and its version told; walked where a layout is
 * known: 3.11, 3.12, 3.13); this process's libpython found where ld.so put
 * it; none in a process without Python.
 *
 * test_line_tables_of_versions: every instruction of json.decoder as each
 * of those pythons compiled it gets the line that version gives
 * (co_lines(), dis.findlinestarts()) from ift_py_line() with its format.
 *
 * test_moved: a frame whose code object is not one (freed, reused) stops
 * the walk with -IFT_E_PY_MOVED, and a pointer into nothing with the
 * reader's error; never a frame made up.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ift-error.h"
#include "ift-pystack.h"

/* libpython keeps what it allocated at exit: not ours to report */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static pid_t self;
/* this process's memory read directly, or through the counting reader */
static struct ift_py_mem selfmem = { ift_py_read_pid, NULL, &self };
static const struct ift_py_layout *layout;

/* Lines the frames must be on: the source marks them with "# L<name>". */
static const char SOURCE[] =
	"import threading, ift_t\n"				/* 1 */
	"def deco(f):\n"					/* 2 */
	"    def wrapper(*a):\n"				/* 3 */
	"        return f(*a)  # Lwrapper\n"			/* 4 */
	"    return wrapper\n"					/* 5 */
	"class Loader:\n"					/* 6 */
	"    def __next__(self):\n"				/* 7 */
	"        x = [ift_t.probe()  # Lcomp\n"			/* 8 */
	"             for _ in range(1)]\n"			/* 9 */
	"        return x[0]\n"					/* 10 */
	"@deco\n"						/* 11 */
	"def step(n):\n"					/* 12 */
	"    if n:\n"						/* 13 */
	"        return step(n - 1)  # Lrecurse\n"		/* 14 */
	"    return next(\n"					/* 15 */
	"        Loader())  # Lnext\n"				/* 16 */
	"result = step(2)  # Lmodule\n"				/* 17 */
	"def worker(i, out):\n"					/* 18 */
	"    out[i] = ift_t.thread_probe()  # Lthread\n"	/* 19 */
	"outs = [None] * 4\n"					/* 20 */
	"ts = [threading.Thread(target=worker, args=(i, outs)) for i in range(4)]\n"
	"for t in ts: t.start()\n"
	"for t in ts: t.join()\n";

#define MAXF	32

/* What probe() saw: our walk and the C API's, for the test to compare. */
struct seen {
	struct ift_py_frame ours[MAXF], api[MAXF];
	int nours, napi;
	/* through a code cache: cold, warm, warm with frame 0's code object
	   changed under it (its name now its file's str), and the reads each
	   took; the cache's hits and misses after the warm walk */
	struct ift_py_frame cold[MAXF], warm[MAXF], changed[MAXF];
	int ncold, nwarm, nchanged;
	unsigned rcold, rwarm, rchanged;
	uint64_t hits, misses;
};
static struct seen probe_seen;

/* The line of SRC that MARK is on. */
static int marked_line(const char *src, const char *mark)
{
	const char *p = strstr(src, mark);
	int line = 1;

	assert_non_null(p);
	for (const char *q = src; q < p; q++)
		line += *q == '\n';
	return line;
}

static int line_of(const char *mark)
{
	return marked_line(SOURCE, mark);
}

/* The calling thread's frames as the C API gives them. */
static int api_frames(struct ift_py_frame *out, int max)
{
	PyFrameObject *f = PyThreadState_GetFrame(PyThreadState_Get());
	int n = 0;

	while (f && n < max) {
		PyCodeObject *co = PyFrame_GetCode(f);
		PyObject *file = PyObject_GetAttrString((PyObject *)co, "co_filename");
		PyObject *name = PyObject_GetAttrString((PyObject *)co, "co_qualname");
		PyFrameObject *back = PyFrame_GetBack(f);

		snprintf(out[n].file, sizeof(out[n].file), "%s", PyUnicode_AsUTF8(file));
		snprintf(out[n].func, sizeof(out[n].func), "%s", PyUnicode_AsUTF8(name));
		out[n].line = PyFrame_GetLineNumber(f);
		n++;
		Py_DECREF(file);
		Py_DECREF(name);
		Py_DECREF(co);
		Py_DECREF(f);
		f = back;
	}
	Py_XDECREF(f);
	return n;
}

/* A reader of this process that counts its reads and shows 8 bytes at AT as VAL. */
static struct { uint64_t at, val; unsigned reads; } patch;

static int patched_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	int ret = ift_py_read_pid(ctx, addr, buf, len);

	patch.reads++;
	if (!ret && patch.at >= addr && patch.at + 8 <= addr + len)
		memcpy((uint8_t *)buf + (patch.at - addr), &patch.val, 8);
	return ret;
}
static struct ift_py_mem patchedmem = { patched_read, NULL, &self };

static PyObject *probe(PyObject *mod, PyObject *args)
{
	struct seen *s = &probe_seen;
	uint64_t ts = (uint64_t)(uintptr_t)PyThreadState_Get();
	struct ift_py_codes *codes = ift_py_codes_new();
	PyFrameObject *f = PyThreadState_GetFrame(PyThreadState_Get());
	PyCodeObject *co = PyFrame_GetCode(f);
	uint64_t code = (uint64_t)(uintptr_t)co;

	(void)mod;
	(void)args;
	s->nours = ift_py_frames(layout, &selfmem, NULL, ts, s->ours, MAXF);
	s->napi = api_frames(s->api, MAXF);

	s->ncold = ift_py_frames(layout, &patchedmem, codes, ts, s->cold, MAXF);
	s->rcold = patch.reads;
	patch.reads = 0;
	s->nwarm = ift_py_frames(layout, &patchedmem, codes, ts, s->warm, MAXF);
	s->rwarm = patch.reads;
	ift_py_codes_stats(codes, &s->hits, &s->misses);
	/* the frame's code object now names its file where its name was */
	patch.at = code + layout->co_qualname;
	memcpy(&patch.val, (const uint8_t *)co + layout->co_filename, 8);
	patch.reads = 0;
	s->nchanged = ift_py_frames(layout, &patchedmem, codes, ts, s->changed, MAXF);
	s->rchanged = patch.reads;
	patch.at = 0;
	ift_py_codes_free(codes);
	Py_DECREF(co);
	Py_DECREF(f);
	return PyLong_FromLong(1);
}

/*
 * In a thread: its thread state found by native id from _PyRuntime, then
 * its frames; returns "ok" or what went wrong, for the test to assert.
 */
static PyObject *thread_probe(PyObject *mod, PyObject *args)
{
	struct ift_py_frame ours[MAXF], api[MAXF];
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	uint64_t ts = 0;
	int n, na, ret;

	(void)mod;
	(void)args;
	if (!runtime)
		return PyUnicode_FromString("no _PyRuntime symbol");
	ret = ift_py_thread(layout, &selfmem, (uint64_t)(uintptr_t)runtime,
			    gettid(), &ts);
	if (ret < 0 || ts != (uint64_t)(uintptr_t)PyThreadState_Get())
		return PyUnicode_FromFormat("thread %d: ret %d, state %p, not %p", gettid(), ret,
					    (void *)(uintptr_t)ts, (void *)PyThreadState_Get());
	n = ift_py_frames(layout, &selfmem, NULL, ts, ours, MAXF);
	na = api_frames(api, MAXF);
	if (n != na || n < 1)
		return PyUnicode_FromFormat("thread %d: %d frames, the API has %d", gettid(), n, na);
	for (int i = 0; i < n; i++)
		if (strcmp(ours[i].func, api[i].func) || strcmp(ours[i].file, api[i].file) ||
		    ours[i].line != api[i].line)
			return PyUnicode_FromFormat("frame %d: %s %s:%d, the API says %s %s:%d", i,
						    ours[i].func, ours[i].file, ours[i].line,
						    api[i].func, api[i].file, api[i].line);
	if (strcmp(ours[0].func, "worker") || ours[0].line != line_of("# Lthread"))
		return PyUnicode_FromFormat("innermost %s:%d", ours[0].func, ours[0].line);
	return PyUnicode_FromString("ok");
}

static PyMethodDef methods[] = {
	{ "probe", probe, METH_NOARGS, NULL },
	{ "thread_probe", thread_probe, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "ift_t", NULL, -1, methods,
				     NULL, NULL, NULL, NULL };

static PyObject *init_module(void)
{
	return PyModule_Create(&module);
}

static PyObject *globals;

static int setup(void **state)
{
	PyObject *code;

	(void)state;
	self = getpid();
	layout = ift_py_layout(PY_MAJOR_VERSION, PY_MINOR_VERSION);
	if (!layout) {
		fprintf(stderr, "no layout for Python %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
		return -1;
	}
	PyImport_AppendInittab("ift_t", init_module);
	Py_Initialize();
	globals = PyDict_New();
	PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
	code = Py_CompileString(SOURCE, "/srv/app/train.py", Py_file_input);
	if (!code || !PyEval_EvalCode(code, globals, globals)) {
		PyErr_Print();
		return -1;
	}
	Py_DECREF(code);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	Py_XDECREF(globals);
	Py_FinalizeEx();
	return 0;
}

static void check_lines(PyObject *code, int *checked)
{
	PyObject *table = PyObject_GetAttrString(code, "co_linetable");
	PyObject *bytecode = PyObject_GetAttrString(code, "co_code");
	PyObject *consts = PyObject_GetAttrString(code, "co_consts");
	long units = PyBytes_Size(bytecode) / 2;
	int first = ((PyCodeObject *)code)->co_firstlineno;

	for (long i = -1; i <= units + 1; i++) {
		int want = PyCode_Addr2Line((PyCodeObject *)code, (int)(i * 2));

		assert_int_equal(ift_py_line(IFT_PY_LOCATIONS, (const uint8_t *)PyBytes_AsString(table),
					     (size_t)PyBytes_Size(table), first, i * 2), want);
		(*checked)++;
	}
	for (Py_ssize_t k = 0; k < PyTuple_Size(consts); k++)
		if (PyCode_Check(PyTuple_GetItem(consts, k)))
			check_lines(PyTuple_GetItem(consts, k), checked);
	Py_DECREF(table);
	Py_DECREF(bytecode);
	Py_DECREF(consts);
}

static void test_line_table(void **state)
{
	/* ours, then a module of the standard library's with every construct */
	PyObject *mod = PyImport_ImportModule("json.decoder");
	PyObject *file = mod ? PyObject_GetAttrString(mod, "__file__") : NULL;
	PyObject *ours = Py_CompileString(SOURCE, "train.py", Py_file_input);
	PyObject *code;
	FILE *fp;
	char buf[1 << 16];
	size_t len;
	int checked = 0;

	(void)state;
	assert_non_null(ours);
	check_lines(ours, &checked);
	assert_non_null(file);
	fp = fopen(PyUnicode_AsUTF8(file), "r");
	assert_non_null(fp);
	len = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[len] = 0;
	code = Py_CompileString(buf, "decoder.py", Py_file_input);
	assert_non_null(code);
	check_lines(code, &checked);
	assert_true(checked > 1000);
	Py_DECREF(code);
	Py_DECREF(ours);
	Py_DECREF(file);
	Py_DECREF(mod);
}

/*
 * The reader is process_vm_readv(); where the system has none (QEMU 7.2's
 * user mode, which runs the arm64 build in make check: ENOSYS) the tests
 * that read through it skip, saying so.  The arm64 guests run them.
 */
static void need_vm_readv(void)
{
	uint64_t x = 0x5eed, y = 0;
	pid_t me = getpid();

	if (ift_py_read_pid(&me, (uint64_t)(uintptr_t)&x, &y, sizeof(y)) != -ENOSYS)
		return;
	fprintf(stderr, "skip: process_vm_readv: ENOSYS here\n");
	skip();
}

static void test_own_frames(void **state)
{
	const struct seen *s = &probe_seen;
	static const struct { const char *func, *mark; } want[] = {
		{ "Loader.__next__.<locals>.<listcomp>", "# Lcomp" },
		{ "Loader.__next__", "# Lcomp" },
		{ "step", "# Lnext" },
		{ "deco.<locals>.wrapper", "# Lwrapper" },
		{ "step", "# Lrecurse" },
		{ "deco.<locals>.wrapper", "# Lwrapper" },
		{ "step", "# Lrecurse" },
		{ "deco.<locals>.wrapper", "# Lwrapper" },
		{ "<module>", "# Lmodule" },
	};

	/* from 3.12 a comprehension runs in its function's frame (PEP 709) */
	const int c = PY_VERSION_HEX >= 0x030c0000;

	(void)state;
	need_vm_readv();
	assert_int_equal(s->nours, s->napi);
	assert_int_equal(s->nours, sizeof(want) / sizeof(want[0]) - c);
	for (int i = 0; i < s->nours; i++) {
		assert_string_equal(s->ours[i].file, s->api[i].file);
		assert_string_equal(s->ours[i].file, "/srv/app/train.py");
		assert_string_equal(s->ours[i].func, s->api[i].func);
		assert_string_equal(s->ours[i].func, want[i + c].func);
		assert_int_equal(s->ours[i].line, s->api[i].line);
	}
	/* the source's own marks, besides the API: the comprehension's call
	   is on its first line, the loader's next() on the call's last */
	assert_int_equal(s->ours[0].line, line_of("# Lcomp"));
	assert_int_equal(s->ours[2 - c].line, line_of("# Lnext") - 1);
	assert_int_equal(s->ours[4 - c].line, line_of("# Lrecurse"));
	assert_int_equal(s->ours[8 - c].line, line_of("# Lmodule"));
}

/*
 * The code cache: the same frames cold and warm, the warm walk in two reads
 * a frame (the frame, its code object's head) and one or two for the
 * thread's current frame; a code object that names other objects than the
 * cached ones is read again.
 */
static void test_code_cache(void **state)
{
	const struct seen *s = &probe_seen;

	(void)state;
	need_vm_readv();
	assert_int_equal(s->ncold, s->napi);
	assert_int_equal(s->nwarm, s->napi);
	for (int i = 0; i < s->napi; i++) {
		assert_string_equal(s->cold[i].file, s->api[i].file);
		assert_string_equal(s->cold[i].func, s->api[i].func);
		assert_int_equal(s->cold[i].line, s->api[i].line);
		assert_string_equal(s->warm[i].file, s->api[i].file);
		assert_string_equal(s->warm[i].func, s->api[i].func);
		assert_int_equal(s->warm[i].line, s->api[i].line);
	}
	/* the frames hold fewer code objects than frames (recursion) */
	assert_true(s->misses < (uint64_t)s->napi);
	assert_int_equal(s->hits, (uint64_t)(2 * s->napi) - s->misses);
	/* from 3.12 the interpreter also pushes a frame of its own where C
	   called in (owned by the C stack): read, and skipped */
	if (s->rwarm > (unsigned)(2 * s->napi + 2 + (PY_VERSION_HEX >= 0x030c0000)))
		fail_msg("a warm walk of %d frames took %u reads, %u cold (%" PRIu64 " misses)",
			 s->napi, s->rwarm, s->rcold, s->misses);
	assert_true(s->rcold > s->rwarm + 3 * s->misses);
	/* frame 0's code changed: read again, its name is now the file's str */
	assert_int_equal(s->nchanged, s->napi);
	assert_string_equal(s->changed[0].func, s->api[0].file);
	assert_string_equal(s->changed[1].func, s->api[1].func);
	assert_true(s->rchanged > s->rwarm);
}

static void test_threads(void **state)
{
	PyObject *outs = PyDict_GetItemString(globals, "outs");
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	uint64_t ts = 0;

	(void)state;
	need_vm_readv();
	/* a thread that is not the interpreter's */
	assert_non_null(runtime);
	assert_int_equal(ift_py_thread(layout, &selfmem, (uint64_t)(uintptr_t)runtime,
				       0x3fffffff, &ts), -ESRCH);
	/* a state found before, checked by its native id */
	ts = (uint64_t)(uintptr_t)PyThreadState_Get();
	assert_int_equal(ift_py_thread_is(layout, &selfmem, ts, gettid()), 1);
	assert_int_equal(ift_py_thread_is(layout, &selfmem, ts, 0x3fffffff), 0);
	assert_non_null(outs);
	assert_int_equal(PyList_Size(outs), 4);
	for (Py_ssize_t i = 0; i < 4; i++) {
		PyObject *o = PyList_GetItem(outs, i);

		assert_true(o && PyUnicode_Check(o));
		assert_string_equal(PyUnicode_AsUTF8(o), "ok");
	}
}

/*
 * One look's pages: a read that spans two of them, and a page it cannot
 * read among those it is told of ahead (the ones around it still kept).
 * Pieces of 4 KiB, whatever the page size.
 */
static void test_snap_pages(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct ift_py_snap *snap = ift_py_snap_new();
	uint64_t addr[3], calls, pages;
	struct ift_py_mem m;
	uint8_t buf[8];

	(void)state;
	need_vm_readv();
	assert_true(a != MAP_FAILED);
	assert_non_null(snap);
	for (size_t k = 0; k < 4 * pg; k++)
		a[k] = (uint8_t)(k * 7 + k / 4096);
	assert_int_equal(munmap(a + pg, pg), 0);
	addr[0] = (uint64_t)(uintptr_t)a;
	addr[1] = (uint64_t)(uintptr_t)(a + pg);
	addr[2] = (uint64_t)(uintptr_t)(a + 2 * pg);
	ift_py_snap_begin(snap, getpid(), &m);
	m.ahead(m.ctx, addr, 3, 8);
	ift_py_snap_stats(snap, &calls, &pages);
	assert_int_equal(calls, 2);	/* all three, then what came after the hole */
	assert_int_equal(pages, 2);
	/* the pages kept answer, with no call */
	assert_int_equal(m.read(m.ctx, addr[0] + 5, buf, 8), 0);
	assert_memory_equal(buf, a + 5, 8);
	assert_int_equal(m.read(m.ctx, addr[2], buf, 8), 0);
	assert_memory_equal(buf, a + 2 * pg, 8);
	ift_py_snap_stats(snap, &calls, &pages);
	assert_int_equal(calls, 2);
	/* the hole is the reader's error, then a read across a piece's end */
	assert_int_equal(m.read(m.ctx, addr[1], buf, 8), -EFAULT);
	assert_int_equal(m.read(m.ctx, addr[2] + 4096 - 4, buf, 8), 0);
	assert_memory_equal(buf, a + 2 * pg + 4096 - 4, 8);
	ift_py_snap_stats(snap, &calls, &pages);
	assert_int_equal(calls, 4);
	assert_int_equal(pages, 3);
	/* a new look keeps nothing of the last */
	ift_py_snap_begin(snap, getpid(), &m);
	assert_int_equal(m.read(m.ctx, addr[0], buf, 8), 0);
	ift_py_snap_stats(snap, &calls, &pages);
	assert_int_equal(calls, 5);
	ift_py_snap_free(snap);
	munmap(a, pg);
	munmap(a + 2 * pg, 2 * pg);
}

/* A reader of a fake memory: a frame whose code object holds no strings. */
struct fake {
	uint8_t tstate[512], frame[256], code[512];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	const uint8_t *areas[] = { f->tstate, f->frame, f->code };
	const size_t sizes[] = { sizeof(f->tstate), sizeof(f->frame), sizeof(f->code) };

	for (int i = 0; i < 3; i++)
		if (addr >= (uint64_t)(uintptr_t)areas[i] &&
		    addr + len <= (uint64_t)(uintptr_t)areas[i] + sizes[i]) {
			memcpy(buf, (const void *)(uintptr_t)addr, len);
			return 0;
		}
	return -EFAULT;
}

static void test_moved(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct ift_py_frame out[4];
	uint64_t cframe = (uint64_t)(uintptr_t)(f->tstate + 256), frame = (uint64_t)(uintptr_t)f->frame;
	uint64_t code = (uint64_t)(uintptr_t)f->code, wild = 0x10;

	struct ift_py_mem fm = { fake_read, NULL, f };

	(void)state;
	assert_non_null(f);
	/* tstate -> cframe -> frame -> a code object of zeros */
	memcpy(f->tstate + layout->ts_frame, &cframe, 8);
	if (layout->ts_cframe_current >= 0)
		memcpy(f->tstate + 256 + layout->ts_cframe_current, &frame, 8);
	else
		memcpy(f->tstate + layout->ts_frame, &frame, 8);
	memcpy(f->frame + layout->fr_code, &code, 8);
	assert_int_equal(ift_py_frames(layout, &fm, NULL, (uint64_t)(uintptr_t)f->tstate, out, 4),
			 -IFT_E_PY_MOVED);
	/* a code pointer into nothing: the reader's error */
	memcpy(f->frame + layout->fr_code, &wild, 8);
	assert_int_equal(ift_py_frames(layout, &fm, NULL, (uint64_t)(uintptr_t)f->tstate, out, 4),
			 -EFAULT);
	/* no frame: no Python running on the thread, no frames */
	memset(f->frame, 0, sizeof(f->frame));
	if (layout->ts_cframe_current >= 0)
		memset(f->tstate + 256 + layout->ts_cframe_current, 0, 8);
	else
		memset(f->tstate + layout->ts_frame, 0, 8);
	assert_int_equal(ift_py_frames(layout, &fm, NULL, (uint64_t)(uintptr_t)f->tstate, out, 4), 0);
	free(f);
}

/*
 * Another process: Debian's python3 (the version this test embeds) runs
 * CHILD_SOURCE, says "ready" and blocks in a read from a pipe; its
 * interpreter is found from its maps (ift_py_locate), its main thread's
 * state by its pid, and its frames must be those the source marks.
 */
static const char CHILD_SOURCE[] =
	"import sys\n"						/* 1 */
	"def wait_for_parent():\n"				/* 2 */
	"    print('ready', flush=True)\n"			/* 3 */
	"    return sys.stdin.read(1)  # Cread\n"		/* 4 */
	"class Epoch:\n"					/* 5 */
	"    def run(self):\n"					/* 6 */
	"        return wait_for_parent()  # Crun\n"		/* 7 */
	"Epoch().run()  # Cmodule\n";				/* 8 */

static int child_line(const char *mark)
{
	return marked_line(CHILD_SOURCE, mark);
}

/*
 * Until PID sleeps in read(0, ...) (/proc/PID/syscall): after "ready" it
 * still finishes the print; no signal says it went on to the read.
 */
static bool blocked_in_read(pid_t pid)
{
	char path[64], buf[128], want[32];

	/* "NR fd ...": read(0, ...), by the machine's number for read */
	snprintf(want, sizeof(want), "%d 0x0 ", (int)SYS_read);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		bool in_read = false;

		if (f) {
			in_read = fgets(buf, sizeof(buf), f) && !strncmp(buf, want, strlen(want));
			fclose(f);
		}
		if (in_read)
			return true;
		usleep(1000);
	}
	return false;
}

/* A child running ARGV, its stdin and stdout pipes to us (*IN, *OUT), once it execs. */
static pid_t spawn(char *const argv[], int *in, int *out)
{
	int i[2], o[2], ex[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(i, O_CLOEXEC), 0);
	assert_int_equal(pipe2(o, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ex, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(i[0], 0);
		dup2(o[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(i[0]);
	close(o[1]);
	close(ex[1]);
	/* EX's write end closes at the exec: its maps are its own from then */
	assert_int_equal(read(ex[0], &c, 1), 0);
	close(ex[0]);
	*in = i[1];
	*out = o[0];
	return pid;
}

static void reap(pid_t pid, int in, int out)
{
	close(in);
	close(out);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/*
 * PYTHON (a python3 executable) in a child, blocked in its read: found,
 * its version VERSION ("3.12"), its frames those the source marks when a
 * layout is known; whether they were walked.
 */
static bool walk_child(const char *python, const char *version)
{
	static const struct { const char *func, *mark; } want[] = {
		{ "wait_for_parent", "# Cread" },
		{ "Epoch.run", "# Crun" },
		{ "<module>", "# Cmodule" },
	};
	char *const argv[] = { (char *)python, "-S", "-c", (char *)CHILD_SOURCE, NULL };
	struct ift_py_frame out[MAXF];
	struct ift_py_target t;
	unsigned major, minor;
	char ready[8] = { 0 };
	uint64_t ts = 0;
	int in, outp, n;
	pid_t pid;

	assert_int_equal(sscanf(version, "%u.%u", &major, &minor), 2);
	pid = spawn(argv, &in, &outp);
	/* a pipe may hand the line over in pieces */
	for (size_t got = 0; got < 6;) {
		ssize_t r = read(outp, ready + got, 6 - got);

		assert_true(r > 0);
		got += (size_t)r;
	}
	assert_memory_equal(ready, "ready\n", 6);
	assert_true(blocked_in_read(pid));

	assert_int_equal(ift_py_locate(pid, &t), 0);
	assert_int_equal(t.major, major);
	assert_int_equal(t.minor, minor);
	if (t.layout) {
		/* each read counted (patch.at 0 changes nothing) */
		struct ift_py_mem direct = { patched_read, NULL, &pid }, m;
		struct ift_py_snap *snap = ift_py_snap_new();
		struct ift_py_frame viasnap[MAXF];
		uint64_t calls, pages;
		unsigned reads;

		assert_non_null(snap);
		assert_int_equal(ift_py_thread(t.layout, &direct, t.runtime, pid, &ts), 0);
		patch.reads = 0;
		n = ift_py_frames(t.layout, &direct, NULL, ts, out, MAXF);
		reads = patch.reads;
		assert_int_equal(n, sizeof(want) / sizeof(want[0]));
		/* the same frames through one look at its pages, in fewer calls */
		ift_py_snap_begin(snap, pid, &m);
		assert_int_equal(ift_py_frames(t.layout, &m, NULL, ts, viasnap, MAXF), n);
		ift_py_snap_stats(snap, &calls, &pages);
		ift_py_snap_free(snap);
		if (calls >= reads || pages < 2)
			fail_msg("the look took %" PRIu64 " calls for %" PRIu64 " pages, against "
				 "%u reads", calls, pages, reads);
		for (int i = 0; i < n; i++) {
			assert_string_equal(viasnap[i].file, out[i].file);
			assert_string_equal(viasnap[i].func, out[i].func);
			assert_int_equal(viasnap[i].line, out[i].line);
		}
		for (int i = 0; i < n; i++) {
			const char *dot = strrchr(want[i].func, '.');

			assert_string_equal(out[i].file, "<string>");
			/* before 3.11 no qualified name: co_name */
			assert_string_equal(out[i].func, minor >= 11 || !dot ? want[i].func : dot + 1);
			assert_int_equal(out[i].line, child_line(want[i].mark));
		}
	}
	assert_int_equal(write(in, "x", 1), 1);
	reap(pid, in, outp);
	return t.layout != NULL;
}

/*
 * Each code object of json.decoder as PYTHON compiled it: a line
 * "FIRSTLINENO TABLE-IN-HEX N" then the N lines of its instructions
 * (every 2 bytes) as that version says (co_lines() from 3.10 on, None as
 * -1; dis.findlinestarts() before).
 */
static const char LINES_SOURCE[] =
	"import json.decoder, dis, sys, types\n"
	"def codes(co):\n"
	"    yield co\n"
	"    for c in co.co_consts:\n"
	"        if isinstance(c, types.CodeType):\n"
	"            yield from codes(c)\n"
	"src = open(json.decoder.__file__).read()\n"
	"for co in codes(compile(src, 'decoder.py', 'exec')):\n"
	"    n = len(co.co_code) // 2\n"
	"    table = co.co_linetable if sys.version_info >= (3, 10) else co.co_lnotab\n"
	"    want = [None] * n\n"
	"    if sys.version_info >= (3, 10):\n"
	"        for start, end, line in co.co_lines():\n"
	"            for a in range(start, end, 2):\n"
	"                want[a // 2] = line\n"
	"    else:\n"
	"        starts = dict(dis.findlinestarts(co))\n"
	"        line = co.co_firstlineno\n"
	"        for i in range(n):\n"
	"            line = starts.get(2 * i, line)\n"
	"            want[i] = line\n"
	"    print(co.co_firstlineno, table.hex() or '-', n)\n"
	"    print(' '.join(str(-1 if w is None else w) for w in want))\n";

/* PYTHON's own lines for json.decoder's instructions against ours; the instructions checked. */
static long lines_of(const char *python, const struct ift_py_layout *l)
{
	char *const argv[] = { (char *)python, "-c", (char *)LINES_SOURCE, NULL };
	static uint8_t table[1 << 16];
	static char head[1 << 17];
	char *line = NULL;
	size_t cap = 0;
	long checked = 0;
	int in, out;
	FILE *f;
	pid_t pid;

	pid = spawn(argv, &in, &out);
	f = fdopen(out, "r");
	assert_non_null(f);
	while (fgets(head, sizeof(head), f)) {
		int first, n, len = 0;
		char hex[sizeof(head)];
		char *p;

		assert_int_equal(sscanf(head, "%d %s %d", &first, hex, &n), 3);
		for (char *h = hex; h[0] != '-' && h[0] && h[1]; h += 2, len++)
			assert_int_equal(sscanf(h, "%2hhx", &table[len]), 1);
		assert_true(getline(&line, &cap, f) > 0);
		p = line;
		for (int i = 0; i < n; i++) {
			long want = strtol(p, &p, 10);

			assert_int_equal(ift_py_line(l->lines, table, (size_t)len, first, 2L * i), want);
			checked++;
		}
	}
	free(line);
	fclose(f);
	close(in);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return checked;
}

#define PYENV	"/root/.pyenv/versions/"

/*
 * Calls FN with each pyenv python of this machine from 3.8 on (_PyRuntime
 * came with 3.7; 3.8 is the oldest asked for): its path, its version
 * ("3.12.1") and minor.  How many there were.
 */
static size_t each_pyenv_python(void (*fn)(const char *path, const char *version, unsigned minor))
{
	size_t n = 0;
	glob_t g;

	if (glob(PYENV "3.*/bin/python3", 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *v = g.gl_pathv[i] + strlen(PYENV);
		unsigned minor = 0;

		if (sscanf(v, "3.%u", &minor) != 1 || minor < 8)
			continue;
		fn(g.gl_pathv[i], v, minor);
		n++;
	}
	globfree(&g);
	return n;
}

static void check_lines_of(const char *path, const char *version, unsigned minor)
{
	const struct ift_py_layout *l = ift_py_layout(3, minor);

	(void)version;
	if (l)
		print_message("%s: %ld instructions\n", path, lines_of(path, l));
}

/*
 * The line tables of every version the machine has, as that version reads
 * them: pyenv's pythons from 3.8 on (3.8 and 3.9's co_lnotab, 3.10's
 * co_linetable, 3.11+'s locations).
 */
static void test_line_tables_of_versions(void **state)
{
	(void)state;
	if (!each_pyenv_python(check_lines_of))
		print_message("no pyenv pythons: only the embedded version's tables checked\n");
}

static void walk_pyenv_child(const char *path, const char *version, unsigned minor)
{
	(void)minor;
	print_message("%s: %s\n", path,
		      walk_child(path, version) ? "frames walked" : "found, no layout for its version");
}

static void test_other_process(void **state)
{
	char *const cat[] = { "/bin/cat", NULL };
	char version[16];
	struct ift_py_target t;
	int in, outp;
	pid_t pid;

	(void)state;
	need_vm_readv();
	/* Debian's, the version this test embeds */
	snprintf(version, sizeof(version), "%d.%d", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	assert_true(walk_child("/usr/bin/python3", version));
	/* others of this machine (pyenv's: 3.8 to 3.13 have layouts) */
	each_pyenv_python(walk_pyenv_child);

	/* this process: the libpython it embeds, a shared object loaded
	   wherever ld.so put it */
	assert_int_equal(ift_py_locate(self, &t), 0);
	assert_non_null(strstr(t.path, "libpython3"));
	assert_true(t.runtime == (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime"));
	assert_ptr_equal(t.layout, layout);

	/* a process without Python, alive (reading its stdin): none */
	pid = spawn(cat, &in, &outp);
	assert_true(blocked_in_read(pid));
	assert_int_equal(ift_py_locate(pid, &t), -ENOENT);
	reap(pid, in, outp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_table),
		cmocka_unit_test(test_own_frames),
		cmocka_unit_test(test_code_cache),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_snap_pages),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_line_tables_of_versions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
