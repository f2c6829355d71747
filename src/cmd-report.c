// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace report: what the CUDA calls cost and what the scheduler did
 * to every process and thread, from the trace file alone (never tracefs, so
 * any user who can read the file can run it).  docs/report.md documents
 * every figure and JSON key.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-render.h"
#include "ift-words.h"
#include "util/outfile.h"

static const char usage[] =
	"report [-i FILE] [--json] [--per-process] [--threads] [--pid PID]...\n"
	"       [--op NAME]... [--from T] [--to T] [--tail-ratio X] [--tail-floor DUR]\n"
	"       [--diff BASELINE] [--html OUT.html]";

#define WIDTH		100	/* the text output fits a terminal this wide */
#define MIN_WIDTH	60

/* Where free text wraps: WIDTH, or a narrower terminal's width. */
static int text_width = WIDTH;
#define TOP		10	/* processes or threads per ranking */
#define MAX_FILTERS	256

enum { TOP_CUDA, TOP_OFF_CPU };

/* One trace, analyzed, with its chains. */
struct report {
	const char *path;
	struct ift_trace *t;
	struct ift_analysis *a;
	struct ift_chains *c;
};

/* ---- parsing ------------------------------------------------------ */

/*
 * A duration such as 12s, 20.5s, 300ms, 40us, 1500ns, 2m or 1h; a bare
 * number is seconds.  Integer arithmetic, so 20.5s is exactly 20500000000.
 */
static int parse_time(const char *s, uint64_t *out)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ULL }, { "", 1000000000ULL }, { "m", 60000000000ULL },
		{ "min", 60000000000ULL }, { "h", 3600000000000ULL },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;
	bool digits = false;

	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return -1;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
			/* digits past the nanosecond do not matter */
			if (scale < 1000000000000000000ULL) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (!digits)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t ns;

		if (strcmp(p, units[i].unit))
			continue;
		if (__builtin_mul_overflow(whole, units[i].ns, &ns) ||
		    __builtin_add_overflow(ns, (uint64_t)((unsigned __int128)frac *
							    units[i].ns / scale), &ns))
			return -1;
		*out = ns;
		return 0;
	}
	return -1;
}

/* ---- text helpers ------------------------------------------------- */

static const char *fmt_dur(char *buf, size_t len, uint64_t ns)
{
	return ift_fmt_dur(buf, len, ns, false);
}

/* "12345", "123k", "4.5M": counts in at most 6 columns. */
static const char *fmt_num(char *buf, size_t len, uint64_t n)
{
	if (n < 100000)
		snprintf(buf, len, "%" PRIu64, n);
	else if (n < 1000000)
		snprintf(buf, len, "%" PRIu64 "k", n / 1000);
	else if (n < 1000000000)
		snprintf(buf, len, "%.1fM", (double)(n / 100000) / 10);
	else
		snprintf(buf, len, "%.1fG", (double)(n / 100000000) / 10);
	return buf;
}

/* Columns S takes on a terminal: UTF-8 continuation bytes take none. */
static int cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Prints S in W columns, right-aligned when W < 0 (printf counts bytes). */
static void cell(const char *s, int w)
{
	int pad = abs(w) - cols(s);

	/* a value too wide still stays apart from the one before */
	if (w < 0)
		printf("%*s%s", pad > 0 ? pad : 1, "", s);
	else
		printf("%s%*s", s, pad > 0 ? pad : 0, "");
}

/*
 * A name from the traced program, safe for one aligned cell: control and
 * non-ASCII bytes become '?', and a name too long is cut with '~'.
 */
static const char *safe(char *buf, size_t len, const char *s, int w)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++) {
		unsigned char c = (unsigned char)*s;

		buf[n++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	buf[n] = 0;
	if (w > 1 && n > (size_t)w) {
		buf[w - 1] = '~';
		buf[w] = 0;
	}
	return buf;
}

static const char *short_role(const char *role)
{
	if (!role)
		return "";
	if (!strcmp(role, "cuda thread") || !strcmp(role, "cuda process"))
		return "cuda";
	if (!strcmp(role, "input worker"))
		return "worker";
	if (!strcmp(role, "input thread"))
		return "input";
	if (!strcmp(role, "pin-memory thread"))
		return "pin";
	return role;
}


static uint64_t off_cpu(const struct ift_sched_stats *s)
{
	return s->runqueue_wait_ns + s->blocked_ns;
}

/* ---- text: ops ---------------------------------------------------- */

#define NAME_W	29	/* the op column, indent included */

static void op_header(const char *indent)
{
	printf("%s", indent);
	cell("op", NAME_W - cols(indent));
	cell("calls", -8);
	cell("errors", -7);
	cell("total", -8);
	cell("mean", -8);
	cell("p50", -8);
	cell("p95", -8);
	cell("p99", -8);
	cell("max", -8);
	cell("wall%", -7);
	putchar('\n');
}

static void op_row(const char *indent, const struct ift_op_stats *s)
{
	char b[64], name[64];
	int w = NAME_W - cols(indent);

	printf("%s", indent);
	cell(safe(name, sizeof(name), s->name, w - 1), w);
	cell(fmt_num(b, sizeof(b), s->calls), -8);
	cell(fmt_num(b, sizeof(b), s->errors), -7);
	cell(fmt_dur(b, sizeof(b), s->total_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->mean_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->p50_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->p95_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->p99_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->max_ns), -8);
	if (s->callers_wall_ns) {
		double share = 100.0 * (double)s->total_ns / (double)s->callers_wall_ns;

		/* above 100%: calls of one thread overlapped (a damaged trace) */
		snprintf(b, sizeof(b), share < 1000 ? "%.1f%%" : ">999%%", share);
	} else {
		snprintf(b, sizeof(b), "-");
	}
	cell(b, -7);
	putchar('\n');
}

static const struct ift_op_stats *op_by_id(const struct ift_op_stats *ops,
					   size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].op == id)
			return &ops[i];
	return NULL;
}

/*
 * The op table: outermost ops by time, each followed by the ops nested in
 * it (their time is already inside the row above), then nested ops whose
 * parent is not shown.
 */
static int print_ops(const struct ift_op_stats *ops, size_t n, const char *indent)
{
	char sub[32];
	bool *done;

	if (!n)
		return 0;
	done = calloc(n, sizeof(*done));
	if (!done)
		return -ENOMEM;
	snprintf(sub, sizeof(sub), "%s  \xe2\x86\xb3 ", indent);
	op_header(indent);
	for (size_t i = 0; i < n; i++) {
		if (done[i] || ops[i].nested_calls == ops[i].calls)
			continue;
		op_row(indent, &ops[i]);
		done[i] = true;
		for (size_t k = 0; k < ops[i].ninner; k++) {
			const struct ift_op_stats *in = op_by_id(ops, n, ops[i].inner[k].op);

			if (in && !done[in - ops]) {
				op_row(sub, in);
				done[in - ops] = true;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!done[i])
			op_row(sub, &ops[i]);
	free(done);
	return 0;
}

static void print_errors(const struct ift_op_stats *ops, size_t n)
{
	bool any = false;
	char name[64];

	for (size_t i = 0; i < n; i++) {
		const struct ift_op_stats *s = &ops[i];
		int used;

		if (!s->nerrs)
			continue;
		if (!any)
			printf("\nerrors by return code\n");
		any = true;
		used = printf("  %-22s", safe(name, sizeof(name), s->name, 22));
		for (size_t k = 0; k < s->nerrs; k++) {
			char item[64];
			int l = snprintf(item, sizeof(item), "%s ret=%" PRId64 " x%" PRIu64,
					 k ? "," : "", s->errs[k].ret, s->errs[k].calls);

			if (used + l > WIDTH) {
				printf("\n%24s", "");
				used = 24;
			}
			used += printf("%s", item);
		}
		putchar('\n');
	}
}

static void print_copies(const struct ift_op_stats *ops, size_t n)
{
	bool any = false;
	char b[64], name[64];

	for (size_t i = 0; i < n; i++) {
		for (int d = 0; d < IFT_COPY_NR; d++) {
			const struct ift_copy_stats *c = &ops[i].dir[d];

			if (!ops[i].copy || !c->calls)
				continue;
			if (!any) {
				printf("\n");
				cell("copies", 24);
				cell("dir", 9);
				cell("calls", -9);
				cell("bytes", -12);
				cell("time", -10);
				cell("bandwidth", -14);
				putchar('\n');
			}
			any = true;
			/* a nested copy's bytes are the enclosing copy's too */
			if (ops[i].nested_calls == ops[i].calls) {
				printf("\xe2\x86\xb3 ");
				cell(safe(name, sizeof(name), ops[i].name, 21), 22);
			} else {
				cell(safe(name, sizeof(name), ops[i].name, 23), 24);
			}
			cell(ift_copy_dir_name(d), 9);
			cell(fmt_num(b, sizeof(b), c->calls), -9);
			cell(ift_fmt_bytes(b, sizeof(b), (double)c->bytes), -12);
			cell(fmt_dur(b, sizeof(b), c->total_ns), -10);
			if (c->total_ns) {
				ift_fmt_bytes(b, sizeof(b), (double)c->bytes * 1e9 /
					  (double)c->total_ns);
				strcat(b, "/s");
			} else {
				snprintf(b, sizeof(b), "-");
			}
			cell(b, -14);
			putchar('\n');
		}
	}
}

/* ---- text: processes and threads ---------------------------------- */

static void task_header(bool threads)
{
	if (threads)
		cell("tid", -8);
	cell("pid", -8);
	printf(" ");
	cell("name", 16);
	cell("role", 6);
	cell("cuda", -8);
	cell("on-cpu", -8);
	cell("rq-wait", -8);
	cell("blocked", -8);
	cell("invol", -7);
	cell("vol", -7);
	cell("worst", -8);
	cell("pages", -7);
	putchar('\n');
}

static void task_row(bool threads, uint32_t tid, uint32_t pid, const char *comm,
		     const char *role, uint64_t cuda, const struct ift_sched_stats *s)
{
	char b[64], name[64];

	/* ids in full: pid_max is at most 4194304 */
	if (threads) {
		snprintf(b, sizeof(b), "%" PRIu32, tid);
		cell(b, -8);
	}
	snprintf(b, sizeof(b), "%" PRIu32, pid);
	cell(b, -8);
	printf(" ");
	cell(safe(name, sizeof(name), comm, 15), 16);
	cell(short_role(role), 6);
	cell(fmt_dur(b, sizeof(b), cuda), -8);
	cell(fmt_dur(b, sizeof(b), s->on_cpu_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->runqueue_wait_ns), -8);
	cell(fmt_dur(b, sizeof(b), s->blocked_ns), -8);
	cell(fmt_num(b, sizeof(b), s->involuntary), -7);
	cell(fmt_num(b, sizeof(b), s->voluntary), -7);
	cell(fmt_dur(b, sizeof(b), s->max_off_cpu_ns), -8);
	cell(fmt_num(b, sizeof(b), s->page_allocs), -7);
	putchar('\n');
}

static int cmp_proc_off(const void *x, const void *y)
{
	const struct ift_process_info *p = *(const struct ift_process_info *const *)x;
	const struct ift_process_info *q = *(const struct ift_process_info *const *)y;

	if (off_cpu(&p->sched) != off_cpu(&q->sched))
		return off_cpu(&p->sched) > off_cpu(&q->sched) ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

static int cmp_thread_rank(const void *x, const void *y, void *arg)
{
	const struct ift_thread_info *p = *(const struct ift_thread_info *const *)x;
	const struct ift_thread_info *q = *(const struct ift_thread_info *const *)y;
	int by = *(const int *)arg;

	if (by == TOP_CUDA && p->cuda_ns != q->cuda_ns)
		return p->cuda_ns > q->cuda_ns ? -1 : 1;
	if (off_cpu(&p->sched) != off_cpu(&q->sched))
		return off_cpu(&p->sched) > off_cpu(&q->sched) ? -1 : 1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

static const char *legend =
	"(cuda: time in CUDA calls; rq-wait: runnable, waiting for a CPU; blocked:\n"
	" sleeping until woken; invol/vol: context switches; worst: longest off-CPU)\n";

static int print_processes(const struct ift_analysis *a)
{
	size_t n = ift_analysis_process_count(a);
	const struct ift_process_info **v;

	if (!n) {
		printf("\nno process in the window\n");
		return 0;
	}
	if (n <= TOP) {
		printf("\nprocesses (%zu)\n", n);
		task_header(false);
		for (size_t i = 0; i < n; i++) {
			const struct ift_process_info *p = ift_analysis_process(a, i);

			task_row(false, 0, p->pid, p->comm, p->role, p->cuda_ns, &p->sched);
		}
		printf("%s", legend);
		return 0;
	}
	printf("\nprocesses by CUDA time (top %d of %zu)\n", TOP, n);
	task_header(false);
	for (size_t i = 0; i < TOP; i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);

		task_row(false, 0, p->pid, p->comm, p->role, p->cuda_ns, &p->sched);
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = ift_analysis_process(a, i);
	qsort(v, n, sizeof(*v), cmp_proc_off);
	printf("\nprocesses by off-CPU time (top %d of %zu)\n", TOP, n);
	task_header(false);
	for (size_t i = 0; i < TOP; i++)
		task_row(false, 0, v[i]->pid, v[i]->comm, v[i]->role, v[i]->cuda_ns,
			 &v[i]->sched);
	printf("%s", legend);
	free(v);
	return 0;
}

static void thread_rows(const struct ift_thread_info *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		task_row(true, v[i]->tid, v[i]->pid, ift_thread_comm(v[i]), v[i]->role,
			 v[i]->cuda_ns, &v[i]->sched);
}

static int print_threads(const struct ift_analysis *a)
{
	size_t n = ift_analysis_thread_count(a);
	const struct ift_thread_info **v;
	int by;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = ift_analysis_thread(a, i);
	for (by = TOP_CUDA; by <= TOP_OFF_CPU; by++) {
		qsort_r(v, n, sizeof(*v), cmp_thread_rank, &by);
		if (n <= TOP)
			printf("\nthreads (%zu)\n", n);
		else
			printf("\nthreads by %s (top %d of %zu)\n",
			       by == TOP_CUDA ? "CUDA time" : "off-CPU time", TOP, n);
		task_header(true);
		thread_rows(v, n < TOP ? n : TOP);
		if (n <= TOP)
			break;
	}
	free(v);
	return 0;
}

static void print_names(const char *what, const char *const *names, size_t n)
{
	int used = printf("  %s", what);
	char name[64];

	for (size_t i = 0; i < n; i++) {
		const char *s = safe(name, sizeof(name), names[i], 0);

		if (used + cols(s) + 2 > WIDTH) {
			printf(",\n   ");
			used = 3;
		} else if (i) {
			used += printf(", ");
		}
		used += printf("%s", s);
	}
	putchar('\n');
}

/* Why a process has its role, in one line (docs/report.md, "Roles"). */
static void print_role_evidence(const struct ift_role_evidence *ev)
{
	char b1[32];

	if (!ev)
		return;
	if (!strcmp(ev->behaviour, "cuda calls")) {
		printf("  role: %" PRIu64 " outermost CUDA calls from thread %" PRIu32 "\n",
		       ev->calls, ev->cuda_tid);
		return;
	}
	printf("  role: %s thread %" PRIu32 ": %" PRIu64 " gap%s it waited in, %s",
	       !strcmp(ev->behaviour, "fed") ? "fed CUDA" : "relayed to CUDA", ev->cuda_tid,
	       ev->wakeups, ev->wakeups == 1 ? "" : "s", fmt_dur(b1, sizeof(b1), ev->ns));
	if (ev->relayed_wakeups)
		printf(", %" PRIu64 " through thread %" PRIu32, ev->relayed_wakeups, ev->via_tid);
	if (ev->from_pid)
		printf(", from process %" PRIu32, ev->from_pid);
	if (ev->forked_from)
		printf("; forked from %" PRIu32, ev->forked_from);
	if (ev->name)
		printf("; named %s", ev->name);
	putchar('\n');
}

static int print_per_process(const struct ift_analysis *a, bool threads)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], name[64];

	for (size_t i = 0; i < ift_analysis_process_count(a); i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);
		const struct ift_sched_stats *s = &p->sched;
		int ret;

		printf("\nprocess %" PRIu32 " %s%s%s%s, parent %" PRIu32 ", %zu thread%s\n",
		       p->pid, safe(name, sizeof(name), p->comm, 0),
		       p->role ? " (" : "", p->role ? p->role : "", p->role ? ")" : "",
		       p->ppid, p->nthreads, p->nthreads == 1 ? "" : "s");
		print_names("names: ", p->names, p->nnames);
		print_role_evidence(p->role_evidence);
		printf("  alive %s .. %s; cuda %s in %" PRIu64 " calls\n",
		       fmt_dur(b1, sizeof(b1), p->start_ns), fmt_dur(b2, sizeof(b2), p->end_ns),
		       fmt_dur(b3, sizeof(b3), p->cuda_ns), p->cuda_calls);
		printf("  on-cpu %s, rq-wait %s, blocked %s, worst stall %s at %s\n",
		       fmt_dur(b1, sizeof(b1), s->on_cpu_ns),
		       fmt_dur(b2, sizeof(b2), s->runqueue_wait_ns),
		       fmt_dur(b3, sizeof(b3), s->blocked_ns),
		       fmt_dur(b4, sizeof(b4), s->max_off_cpu_ns),
		       fmt_dur(b5, sizeof(b5), s->max_off_cpu_at));
		printf("  switches %" PRIu64 " (involuntary %" PRIu64 ", voluntary %" PRIu64
		       "), wake-ups %" PRIu64 "\n", s->involuntary + s->voluntary,
		       s->involuntary, s->voluntary, s->wakeups);
		printf("  page allocations %" PRIu64 " (%s)\n", s->page_allocs,
		       ift_fmt_bytes(b1, sizeof(b1), (double)s->page_alloc_bytes));
		if (p->nops) {
			putchar('\n');
			ret = print_ops(p->ops, p->nops, "  ");
			if (ret < 0)
				return ret;
		}
		if (threads) {
			putchar('\n');
			task_header(true);
			thread_rows(p->threads, p->nthreads);
		}
	}
	return 0;
}

/* ---- text: chains ------------------------------------------------- */

/*
 * Prints TEXT after FIRST (already printed, FIRST_COLS wide), wrapped at
 * word boundaries to WIDTH, continuation lines indented by INDENT columns.
 * Bytes a terminal would act on become '?'.
 */
static void wrap(int col, int indent, const char *text)
{
	bool line_start = true;
	const char *p = text;

	for (;;) {
		const char *w = p;
		int wc = 0;

		while (*w == ' ')
			w++;
		if (!*w)
			break;
		for (p = w; *p && *p != ' '; p++)
			wc += ((unsigned char)*p & 0xc0) != 0x80;
		if (!line_start && col + 1 + wc > text_width) {
			printf("\n%*s", indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			putchar(' ');
			col++;
		}
		for (const char *q = w; q < p; q++) {
			unsigned char c = (unsigned char)*q;

			putchar(c < 0x20 || c == 0x7f ? '?' : c);
		}
		col += wc;
		line_start = false;
	}
	putchar('\n');
}

#define CHAIN_SITES	3	/* text: a chain's sites shown */
#define CHAIN_FRAMES	3	/* text: innermost frames of each */

/*
 * Where the chain's time was lost from (record --stack): one line a site,
 * its innermost frames past the probed function itself, cut to the width.
 */
static void print_chain_sites(const struct ift_chain *ch)
{
	for (size_t i = 0; i < ch->nsites && i < CHAIN_SITES; i++) {
		const struct ift_chain_site *x = &ch->sites[i];
		const struct ift_stack *st = x->frames;
		char line[512], fr[256], cut[WIDTH + 1], b1[32];
		unsigned k0 = st && st->nframes > 1 ? 1 : 0;
		int len, n;

		n = snprintf(line, sizeof(line), "#%" PRIu64 " %u%% (%s %s)", x->stack,
			     (x->share_permille + 5) / 10, ift_fmt_count(b1, sizeof(b1), x->calls),
			     ch->phase == IFT_PHASE_BEFORE ? (x->calls == 1 ? "gap" : "gaps") :
			     (x->calls == 1 ? "call" : "calls"));
		for (unsigned k = k0; st && k < st->nframes && k < k0 + CHAIN_FRAMES &&
		     n > 0 && (size_t)n < sizeof(line); k++) {
			ift_frame_format(&st->frames[k], fr, sizeof(fr));
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s",
				      k == k0 ? "  " : " < ", fr);
		}
		if (!st && n > 0 && (size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n, "  (site not in the file)");
		len = printf("    %s ", i ? "            " : "called from:");
		printf("%s\n", safe(cut, sizeof(cut), line, text_width - len));
	}
}

static void print_chain(size_t n, const struct ift_chain *ch)
{
	char b1[32], b2[32], b3[32], head[64];
	int len;

	len = snprintf(head, sizeof(head), "%2zu. %-6s ", n, ift_severity_name(ch->severity));
	fputs(head, stdout);
	wrap(len, 4, ch->summary);
	{
		char line[256];
		int w;

		w = snprintf(line, sizeof(line), "cost %s, %u%% of the CUDA threads' active time "
			     "(%s)", fmt_dur(b1, sizeof(b1), ch->cost_ns),
			     (unsigned)((ch->cost_ns * 1000 / (ch->wall_ns ? ch->wall_ns : 1) + 5) /
					10), fmt_dur(b2, sizeof(b2), ch->wall_ns));
		if (ch->p50_ns && w > 0 && (size_t)w < sizeof(line))
			snprintf(line + w, sizeof(line) - (size_t)w, "; %s p50 %s p99 %s", ch->op,
				 fmt_dur(b1, sizeof(b1), ch->p50_ns),
				 fmt_dur(b3, sizeof(b3), ch->p99_ns));
		fputs("    ", stdout);
		wrap(4, 4, line);
	}
	if (ch->nsteps) {
		printf("    worst occurrence:\n");
		for (size_t i = 0; i < ch->nsteps; i++) {
			const struct ift_chain_step *st = &ch->steps[i];
			char at[32];

			snprintf(at, sizeof(at), "%.3fs", (double)st->t_ns / 1e9);
			printf("      %10s  %-6s ", at, st->layer);
			wrap(6 + 10 + 2 + 7, 25, st->text);
		}
	}
	for (size_t i = 0; i < ch->ntasks; i++) {
		const struct ift_chain_task *t = &ch->tasks[i];
		char name[40], line[200];

		if (i && !strcmp(t->relation, ch->tasks[i - 1].relation) && i >= 4)
			continue;
		snprintf(line, sizeof(line), "%s (pid %u tid %u%s%s%s) %u%%, %s, %" PRIu64 "x",
			 safe(name, sizeof(name), t->comm[0] ? t->comm : "?", 24), t->pid, t->tid,
			 t->role ? ", " : "", t->role ? short_role(t->role) : "",
			 t->outside ? ", not traced" : "", (t->share_permille + 5) / 10,
			 fmt_dur(b1, sizeof(b1), t->ns), t->count);
		len = printf("    %s ", !i || strcmp(t->relation, ch->tasks[i - 1].relation) ?
			     (!strcmp(t->relation, "woke") ? "woken by:   " : "preempted by:") :
			     "             ");
		wrap(len, 18, line);
	}
	print_chain_sites(ch);
	for (size_t i = 0; i < ch->nrecs; i++) {
		len = printf("    %s ", i ? "   " : "fix");
		wrap(len, 8, ch->recs[i]);
	}
}

static void print_chains(const struct ift_chains *c)
{
	size_t n = ift_chains_count(c);

	if (!n) {
		printf("\nno host cause found: no op has a tail past the thresholds, and the "
		       "CUDA threads\nneither starve between calls nor mostly wait for the "
		       "device\n");
		return;
	}
	printf("\nWHY THE GPU WAITS (%zu chain%s, most costly first)\n", n, n > 1 ? "s" : "");
	for (size_t i = 0; i < n; i++)
		print_chain(i + 1, ift_chains_get(c, i));
}

/* ---- call sites (record --stack) --------------------------------- */

#define SITES_TOP	IFT_SITES_TOP	/* per op */
#define SITE_FRAMES	8	/* text: innermost frames shown */

/* The window's call sites; an empty list when T has no stacks. */
static int sites_of(struct ift_trace *t, const struct ift_analysis *a,
		    struct ift_site **v, size_t *n)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	uint64_t span = s->end_ts - s->start_ts;
	uint64_t from = s->start_ts + s->from_ns;
	uint64_t to = s->to_ns >= span ? UINT64_MAX : s->start_ts + s->to_ns;

	return ift_sites_run(t, from, to, 0, SITES_TOP, v, n);
}

static int print_sites(struct ift_trace *t, const struct ift_analysis *a)
{
	struct ift_site *v;
	size_t n;
	char b1[32], b2[32], line[512];
	int ret = sites_of(t, a, &v, &n);

	if (ret < 0 || !n)
		return ret;
	printf("\nCall sites (record --stack): top %d per op, innermost frame first\n",
	       SITES_TOP);
	for (size_t i = 0; i < n; i++) {
		const struct ift_stack *st = ift_trace_stack(t, v[i].stack);

		if (!i || strcmp(v[i].op, v[i - 1].op))
			printf("%s\n", v[i].op);
		printf("  #%-4" PRIu64 " %s calls (%.1f%%)  %s total (%.1f%%)  tail %.1f%% (%s)\n",
		       v[i].stack, ift_fmt_count(b1, sizeof(b1), v[i].calls),
		       100 * v[i].share_calls, fmt_dur(b2, sizeof(b2), v[i].total_ns),
		       100 * v[i].share_time, 100 * v[i].share_tail,
		       v[i].tail_calls == 1 ? "1 call" :
		       (snprintf(line, sizeof(line), "%" PRIu64 " calls", v[i].tail_calls), line));
		for (unsigned k = 0; st && k < st->nframes && k < SITE_FRAMES; k++) {
			ift_frame_format(&st->frames[k], line, sizeof(line));
			printf("        %.*s\n", WIDTH - 8, line);
		}
		if (st && st->nframes > SITE_FRAMES)
			printf("        ... %u more\n", st->nframes - SITE_FRAMES);
		if (!st)
			printf("        (site not in the file: the recording was cut short)\n");
	}
	free(v);
	return 0;
}

static int print_text(struct ift_trace *t, const struct ift_analysis *a,
		      const struct ift_chains *chains, bool per_process, bool threads)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	char b1[32], b2[32], b3[32], cmd[WIDTH];
	uint64_t span = s->end_ts - s->start_ts;
	size_t nops = ift_analysis_op_count(a);
	int ret;

	printf("command    %s\n", s->command[0] ?
	       safe(cmd, sizeof(cmd), s->command, WIDTH - 11) : "(not recorded)");
	if (s->from_ns || s->to_ns != span)
		printf("window     %s .. %s of a %s trace\n",
		       fmt_dur(b1, sizeof(b1), s->from_ns), fmt_dur(b2, sizeof(b2), s->to_ns),
		       fmt_dur(b3, sizeof(b3), span));
	else
		printf("duration   %s\n", fmt_dur(b1, sizeof(b1), s->duration_ns));
	printf("events     %s (%s CUDA calls, %s host events), %u CPUs\n",
	       ift_fmt_count(b1, sizeof(b1), s->events), ift_fmt_count(b2, sizeof(b2), s->calls),
	       ift_fmt_count(b3, sizeof(b3), s->host_events), s->cpus);
	printf("lost       %s\n", ift_fmt_count(b1, sizeof(b1), s->lost_events));
	if (s->lost_events)
		printf("WARNING: the kernel dropped %s events: counts and times may be short\n",
		       ift_fmt_count(b1, sizeof(b1), s->lost_events));
	print_chains(chains);

	if (nops) {
		const struct ift_op_stats *ops = ift_analysis_op(a, 0);

		printf("\nCUDA ops\n");
		ret = print_ops(ops, nops, "");
		if (ret < 0)
			return ret;
		printf("(\xe2\x86\xb3 nested: made inside the call above, its time already counted"
		       " there; wall%%:\n share of the calling threads' wall time)\n");
		print_errors(ops, nops);
		print_copies(ops, nops);
		if ((ret = print_sites(t, a)) < 0)
			return ret;
	} else {
		printf("\nno CUDA calls in the window\n");
	}

	if (per_process)
		return print_per_process(a, threads);
	ret = print_processes(a);
	if (ret >= 0 && threads)
		ret = print_threads(a);
	return ret;
}

/* ---- JSON --------------------------------------------------------- */

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static json_object *json_sites(struct ift_trace *t, const struct ift_analysis *a)
{
	json_object *arr;
	struct ift_site *v;
	size_t n;

	if (!t || sites_of(t, a, &v, &n) < 0)
		return json_object_new_array();
	arr = ift_json_sites(t, v, n);
	free(v);
	return arr;
}

/* The report object of src/out/json.c, with the call sites (they need T). */
static json_object *json_full(struct ift_trace *t, const struct ift_analysis *a,
			      const struct ift_chains *chains)
{
	json_object *root = ift_json_report(a, chains);

	if (root)
		json_object_object_add(root, "stacks", json_sites(t, a));
	return root;
}
static int json_print(json_object *root)
{
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	int ret = text ? 0 : -ENOMEM;

	if (text)
		puts(text);
	json_object_put(root);
	return ret;
}

static int print_json(struct ift_trace *t, const struct ift_analysis *a,
		      const struct ift_chains *chains)
{
	return json_print(json_full(t, a, chains));
}

/* ---- --diff ------------------------------------------------------- */

/* What both sides are compared on, beyond the op tables. */
struct totals {
	uint64_t wall_ns;		/* the window */
	uint64_t cuda_ns, cuda_calls;	/* outermost calls, all threads */
	uint64_t on_cpu_ns, runq_ns, blocked_ns, invol, vol, pages;
	uint64_t chain_ns[IFT_SEV_HIGH + 1];	/* chain cost by severity */
};

static void totals_of(const struct report *r, struct totals *x)
{
	memset(x, 0, sizeof(*x));
	x->wall_ns = ift_analysis_summary(r->a)->duration_ns;
	for (size_t i = 0; i < ift_analysis_process_count(r->a); i++) {
		const struct ift_process_info *p = ift_analysis_process(r->a, i);

		x->cuda_ns += p->cuda_ns;
		x->cuda_calls += p->cuda_calls;
		x->on_cpu_ns += p->sched.on_cpu_ns;
		x->runq_ns += p->sched.runqueue_wait_ns;
		x->blocked_ns += p->sched.blocked_ns;
		x->invol += p->sched.involuntary;
		x->vol += p->sched.voluntary;
		x->pages += p->sched.page_allocs;
	}
	for (size_t i = 0; i < ift_chains_count(r->c); i++) {
		const struct ift_chain *ch = ift_chains_get(r->c, i);

		x->chain_ns[ch->severity] += ch->cost_ns;
	}
}

/* "1.2ms -> 3.4ms" plus " (2.8x)" when RATIO. */
static const char *fmt_change_dur(char *buf, size_t len, uint64_t b, uint64_t c, bool ratio)
{
	char x[32], y[32];
	int n = snprintf(buf, len, "%s -> %s", fmt_dur(x, sizeof(x), b), fmt_dur(y, sizeof(y), c));

	if (ratio && b && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (%.2fx)", (double)c / (double)b);
	return buf;
}

static const char *fmt_change_num(char *buf, size_t len, uint64_t b, uint64_t c)
{
	char x[32], y[32];

	snprintf(buf, len, "%s -> %s", fmt_num(x, sizeof(x), b), fmt_num(y, sizeof(y), c));
	return buf;
}

static const struct ift_op_stats *op_named(const struct ift_analysis *a, const char *name)
{
	for (size_t i = 0; i < ift_analysis_op_count(a); i++)
		if (!strcmp(ift_analysis_op(a, i)->name, name))
			return ift_analysis_op(a, i);
	return NULL;
}

/* One op on both sides; a side without it has zeros. */
struct op_pair {
	const char *name;
	const struct ift_op_stats *cur, *base;
};

/*
 * Every op of either side, the current trace's first (most time first), then
 * those only the baseline has.  Returns an array of *N pairs to free(), or
 * NULL (ENOMEM; or no op at all, with *N 0).
 */
static struct op_pair *op_pairs(const struct report *cur, const struct report *base,
				size_t *n)
{
	static const struct ift_op_stats none;
	size_t nc = ift_analysis_op_count(cur->a), nb = ift_analysis_op_count(base->a);
	struct op_pair *v = calloc(nc + nb + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < nc; i++) {
		const struct ift_op_stats *x = ift_analysis_op(cur->a, i);
		const struct ift_op_stats *y = op_named(base->a, x->name);

		v[(*n)++] = (struct op_pair){ x->name, x, y ? y : &none };
	}
	for (size_t i = 0; i < nb; i++) {
		const struct ift_op_stats *y = ift_analysis_op(base->a, i);

		if (!op_named(cur->a, y->name))
			v[(*n)++] = (struct op_pair){ y->name, &none, y };
	}
	return v;
}

static void diff_row(const char *what, const char *change)
{
	cell(what, 28);
	printf("%s\n", change);
}

static int print_text_diff(const struct report *cur, const struct report *base)
{
	struct op_pair *pairs;
	size_t npairs;
	struct totals b, c;
	char buf[128], name[40], cmd[WIDTH];
	const char *bc = ift_analysis_summary(base->a)->command;
	const char *cc = ift_analysis_summary(cur->a)->command;

	totals_of(base, &b);
	totals_of(cur, &c);
	printf("baseline   %s\n", safe(cmd, sizeof(cmd), bc[0] ? bc : base->path, WIDTH - 11));
	printf("current    %s\n", safe(cmd, sizeof(cmd), cc[0] ? cc : cur->path, WIDTH - 11));
	printf("\n");
	diff_row("", "baseline -> current");
	diff_row("wall time", fmt_change_dur(buf, sizeof(buf), b.wall_ns, c.wall_ns, true));
	diff_row("CUDA calls", fmt_change_num(buf, sizeof(buf), b.cuda_calls, c.cuda_calls));
	diff_row("time in CUDA calls", fmt_change_dur(buf, sizeof(buf), b.cuda_ns, c.cuda_ns, true));
	diff_row("on-CPU, all tasks", fmt_change_dur(buf, sizeof(buf), b.on_cpu_ns, c.on_cpu_ns,
						     true));
	diff_row("run-queue wait", fmt_change_dur(buf, sizeof(buf), b.runq_ns, c.runq_ns, true));
	diff_row("blocked", fmt_change_dur(buf, sizeof(buf), b.blocked_ns, c.blocked_ns, true));
	diff_row("involuntary switches", fmt_change_num(buf, sizeof(buf), b.invol, c.invol));
	diff_row("voluntary switches", fmt_change_num(buf, sizeof(buf), b.vol, c.vol));
	diff_row("page allocations", fmt_change_num(buf, sizeof(buf), b.pages, c.pages));
	diff_row("cost of HIGH chains", fmt_change_dur(buf, sizeof(buf), b.chain_ns[IFT_SEV_HIGH],
						       c.chain_ns[IFT_SEV_HIGH], false));
	diff_row("cost of MEDIUM chains", fmt_change_dur(buf, sizeof(buf),
							 b.chain_ns[IFT_SEV_MEDIUM],
							 c.chain_ns[IFT_SEV_MEDIUM], false));

	printf("\n");
	cell("CUDA op", 24);
	cell("calls", 17);
	cell("p50", 19);
	cell("p99", 27);
	printf("total\n");
	pairs = op_pairs(cur, base, &npairs);
	if (!pairs && (ift_analysis_op_count(cur->a) || ift_analysis_op_count(base->a)))
		return -ENOMEM;
	for (size_t i = 0; i < npairs; i++) {
		const struct ift_op_stats *x = pairs[i].cur, *y = pairs[i].base;

		cell(safe(name, sizeof(name), pairs[i].name, 23), 24);
		cell(fmt_change_num(buf, sizeof(buf), y->calls, x->calls), 17);
		cell(fmt_change_dur(buf, sizeof(buf), y->p50_ns, x->p50_ns, false), 19);
		cell(fmt_change_dur(buf, sizeof(buf), y->p99_ns, x->p99_ns, true), 27);
		printf("%s\n", fmt_change_dur(buf, sizeof(buf), y->total_ns, x->total_ns, false));
	}
	free(pairs);

	for (int side = 0; side < 2; side++) {
		const struct report *r = side ? cur : base;
		size_t n = ift_chains_count(r->c);

		printf("\nchains, %s: %s\n", side ? "current" : "baseline", n ? "" : "none");
		for (size_t i = 0; i < n; i++) {
			const struct ift_chain *ch = ift_chains_get(r->c, i);
			int len;

			len = printf("  %-6s %s %s %s, %s: ", ift_severity_name(ch->severity),
				     ift_cause_name(ch->cause), ift_phase_name(ch->phase),
				     safe(name, sizeof(name), ch->op, 32),
				     fmt_dur(buf, sizeof(buf), ch->cost_ns));
			wrap(len, 9, ch->summary);
		}
	}
	return 0;
}

static json_object *json_pair(uint64_t b, uint64_t c)
{
	json_object *o = json_object_new_object();

	add_u64(o, "baseline", b);
	add_u64(o, "current", c);
	if (b)
		json_object_object_add(o, "ratio", json_object_new_double((double)c / (double)b));
	return o;
}

static int print_json_diff(const struct report *cur, const struct report *base)
{
	struct op_pair *pairs;
	size_t npairs;
	json_object *root = json_object_new_object(), *ch = json_object_new_object(), *v;
	struct totals b, c;

	totals_of(base, &b);
	totals_of(cur, &c);
	json_object_object_add(ch, "duration_ns", json_pair(b.wall_ns, c.wall_ns));
	json_object_object_add(ch, "cuda_calls", json_pair(b.cuda_calls, c.cuda_calls));
	json_object_object_add(ch, "cuda_ns", json_pair(b.cuda_ns, c.cuda_ns));
	json_object_object_add(ch, "on_cpu_ns", json_pair(b.on_cpu_ns, c.on_cpu_ns));
	json_object_object_add(ch, "runqueue_wait_ns", json_pair(b.runq_ns, c.runq_ns));
	json_object_object_add(ch, "blocked_ns", json_pair(b.blocked_ns, c.blocked_ns));
	json_object_object_add(ch, "involuntary_switches", json_pair(b.invol, c.invol));
	json_object_object_add(ch, "voluntary_switches", json_pair(b.vol, c.vol));
	json_object_object_add(ch, "page_allocs", json_pair(b.pages, c.pages));
	json_object_object_add(ch, "high_chain_cost_ns",
			       json_pair(b.chain_ns[IFT_SEV_HIGH], c.chain_ns[IFT_SEV_HIGH]));
	json_object_object_add(ch, "medium_chain_cost_ns",
			       json_pair(b.chain_ns[IFT_SEV_MEDIUM], c.chain_ns[IFT_SEV_MEDIUM]));
	v = json_object_new_array();
	pairs = op_pairs(cur, base, &npairs);
	for (size_t i = 0; i < npairs; i++) {
		const struct ift_op_stats *x = pairs[i].cur, *y = pairs[i].base;
		json_object *e = json_object_new_object();

		add_str(e, "op", pairs[i].name);
		json_object_object_add(e, "calls", json_pair(y->calls, x->calls));
		json_object_object_add(e, "total_ns", json_pair(y->total_ns, x->total_ns));
		json_object_object_add(e, "p50_ns", json_pair(y->p50_ns, x->p50_ns));
		json_object_object_add(e, "p99_ns", json_pair(y->p99_ns, x->p99_ns));
		json_object_object_add(e, "max_ns", json_pair(y->max_ns, x->max_ns));
		json_object_array_add(v, e);
	}
	free(pairs);
	json_object_object_add(ch, "ops", v);
	json_object_object_add(root, "baseline", json_full(base->t, base->a, base->c));
	json_object_object_add(root, "current", json_full(cur->t, cur->a, cur->c));
	json_object_object_add(root, "changes", ch);
	return json_print(root);
}

/* ---- the command -------------------------------------------------- */

static void report_release(struct report *r)
{
	ift_chains_free(r->c);
	ift_analysis_free(r->a);
	if (r->t)
		ift_trace_close(r->t);
	memset(r, 0, sizeof(*r));
}

/* Opens and analyzes PATH; prints a one-line error and returns -1 on failure. */
static int report_load(struct report *r, const char *path,
		       const struct ift_analyze_opts *aopts,
		       const struct ift_chain_opts *copts)
{
	struct ift_analyze_opts opts = *aopts;
	struct ift_report m;
	int ret;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->t = cli_open_trace(path, 0);
	if (!r->t)
		return -1;
	for (size_t i = 0; i < opts.nops; i++) {
		bool found = false;

		for (size_t id = 1; id <= ift_trace_op_count(r->t) && !found; id++)
			found = ift_trace_op(r->t, id) &&
				!strcmp(ift_trace_op(r->t, id)->name, opts.ops[i]);
		if (!found)
			warning("'%s' has no op '%s'", path, opts.ops[i]);
	}
	ret = ift_report_run(r->t, &opts, copts, &m);
	if (ret < 0) {
		error("cannot analyze '%s': %s", path, ift_strerror(ret));
		report_release(r);
		return -1;
	}
	r->a = m.a;
	r->c = m.c;
	return 0;
}

/* The page of R into PATH ("-": stdout).  Returns 0 or a negative error. */
static int write_html(const struct report *r, const char *path)
{
	struct ift_html_opts o = { .title = r->path };
	bool std = !strcmp(path, "-");
	struct ift_outfile of;
	FILE *f = std ? stdout : cli_output_open(&of, path);
	int ret;

	if (!f)
		return -errno;
	ret = ift_out_html(f, r->t, r->a, r->c, &o);
	if (!std)
		ret = cli_output_close(&of, f, ret);
	return ret;
}

/* A ratio such as 3 or 2.5, at least 1. */
static int parse_ratio(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 1.0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "per-process", no_argument, NULL, 'P' },
		{ "threads", no_argument, NULL, 'T' },
		{ "pid", required_argument, NULL, 'p' },
		{ "op", required_argument, NULL, 'o' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "tail-ratio", required_argument, NULL, 'r' },
		{ "tail-floor", required_argument, NULL, 'F' },
		{ "diff", required_argument, NULL, 'd' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static uint32_t pids[MAX_FILTERS];
	static const char *ops[MAX_FILTERS];
	struct ift_analyze_opts opts = { .pids = pids, .ops = ops };
	struct ift_chain_opts copts = {
		.tail_ratio = IFT_TAIL_RATIO_DEFAULT, .tail_floor_ns = IFT_TAIL_FLOOR_DEFAULT,
	};
	const char *path = IFT_DEFAULT_TRACE, *base_path = NULL, *html = NULL;
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:h", .longopts = longopts, .input = &path,
	};
	bool json = false, per_process = false, threads = false;
	struct report cur, base = { 0 };
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0) {
		char *end;
		unsigned long v;

		switch (c) {
		case 'j':
			json = true;
			break;
		case 'P':
			per_process = true;
			break;
		case 'T':
			threads = true;
			break;
		case 'p':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || v == 0 || v > UINT32_MAX ||
			    optarg[0] == '-')
				return usage_error(usage, "bad pid '%s'", optarg);
			if (opts.npids == MAX_FILTERS)
				return usage_error(usage, "more than %d --pid", MAX_FILTERS);
			pids[opts.npids++] = (uint32_t)v;
			break;
		case 'o':
			if (opts.nops == MAX_FILTERS)
				return usage_error(usage, "more than %d --op", MAX_FILTERS);
			ops[opts.nops++] = optarg;
			break;
		case 'f':
			if (parse_time(optarg, &opts.from_ns) < 0)
				return usage_error(usage, "bad time '%s' (like 12s, 20.5s, 300ms)",
						   optarg);
			break;
		case 't':
			if (parse_time(optarg, &opts.to_ns) < 0)
				return usage_error(usage, "bad time '%s' (like 12s, 20.5s, 300ms)",
						   optarg);
			opts.has_to = true;
			break;
		case 'r':
			if (parse_ratio(optarg, &copts.tail_ratio) < 0)
				return usage_error(usage, "bad ratio '%s' (a number, at least 1)",
						   optarg);
			break;
		case 'F':
			if (parse_time(optarg, &copts.tail_floor_ns) < 0)
				return usage_error(usage, "bad duration '%s' (like 1ms, 500us)",
						   optarg);
			break;
		case 'd':
			base_path = optarg;
			break;
		case 'H':
			html = optarg;
			break;
		}
	}
	if (c < 0)
		return co.status;
	if (opts.has_to && opts.to_ns <= opts.from_ns)
		return usage_error(usage, "--to must be after --from");
	if (html && (json || base_path))
		return usage_error(usage, "--html does not go with %s", json ? "--json" : "--diff");

	{
		struct winsize ws;

		/* tables keep their columns; free text follows a narrow terminal */
		if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
		    ws.ws_col >= MIN_WIDTH && ws.ws_col < WIDTH)
			text_width = ws.ws_col;
	}
	/* the HTML draws the calls one by one */
	opts.keep_calls = html != NULL;
	if (report_load(&cur, path, &opts, &copts) < 0)
		return EXIT_RUNTIME;
	if (base_path && report_load(&base, base_path, &opts, &copts) < 0) {
		report_release(&cur);
		return EXIT_RUNTIME;
	}
	if (html)
		ret = write_html(&cur, html);
	else if (base_path)
		ret = json ? print_json_diff(&cur, &base) : print_text_diff(&cur, &base);
	else
		ret = json ? print_json(cur.t, cur.a, cur.c) :
		      print_text(cur.t, cur.a, cur.c, per_process, threads);
	if (ret < 0)
		error("cannot write the report%s%s%s%s: %s", html ? " '" : "", html ? html : "",
		      html && ret == -EEXIST ? IFT_PART_SUFFIX : "", html ? "'" : "",
		      ift_strerror(ret));
	report_release(&base);
	report_release(&cur);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}
