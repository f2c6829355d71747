// SPDX-License-Identifier: MIT
/*
 * The report as text, for a terminal 100 columns wide (docs/report.md
 * documents every figure; --diff is text-diff.c's, the cells
 * text-cells.c's).  Tables keep their columns whatever the width; free
 * text (the chains' summaries) wraps to the width the caller gives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-job.h"
#include "ift-render.h"
#include "ift-words.h"
#include "render/text.h"
#include "util/buf.h"

/* ---- text: ops ---------------------------------------------------- */

#define NAME_W	29	/* the op column, indent included */

static void op_header(struct text *tx, const char *indent)
{
	static const struct column heads[] = {
		{ "calls", -8 }, { "errors", -7 }, { "total", -8 }, { "mean", -8 },
		{ "p50", -8 }, { "p95", -8 }, { "p99", -8 }, { "max", -8 }, { "wall%", -7 },
	};

	fprintf(tx->f, "%s", indent);
	ift_txt_cell(tx, "op", NAME_W - ift_txt_cols(indent));
	ift_txt_header(tx, heads, NCOLS(heads));
}

static void op_row(struct text *tx, const char *indent, const struct ift_op_stats *s)
{
	char b[64], name[CELL_LEN];
	int w = NAME_W - ift_txt_cols(indent);

	fprintf(tx->f, "%s", indent);
	ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), s->name, w - 1), w);
	ift_txt_cell(tx, ift_txt_num(b, sizeof(b), s->calls), -8);
	ift_txt_cell(tx, ift_txt_num(b, sizeof(b), s->errors), -7);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->total_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->mean_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->p50_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->p95_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->p99_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->max_ns), -8);
	if (s->callers_wall_ns) {
		double share = 100.0 * (double)s->total_ns / (double)s->callers_wall_ns;

		/* above 100%: calls of one thread overlapped (a damaged trace) */
		snprintf(b, sizeof(b), share < 1000 ? "%.1f%%" : ">999%%", share);
	} else {
		snprintf(b, sizeof(b), "-");
	}
	ift_txt_cell(tx, b, -7);
	fputc('\n', tx->f);
}

/* The op table, its nested rows marked; ift_op_rows() says in which order. */
static int print_ops(struct text *tx, const struct ift_op_stats *ops, size_t n,
		     const char *indent)
{
	struct ift_op_row *rows;
	char sub[32];

	if (!n)
		return 0;
	rows = ift_op_rows(ops, n);
	if (!rows)
		return -ENOMEM;
	snprintf(sub, sizeof(sub), "%s  \xe2\x86\xb3 ", indent);
	op_header(tx, indent);
	for (size_t i = 0; i < n; i++)
		op_row(tx, rows[i].nested ? sub : indent, rows[i].op);
	free(rows);
	return 0;
}

static void print_errors(struct text *tx, const struct ift_op_stats *ops, size_t n)
{
	bool any = false;
	char name[CELL_LEN];

	for (size_t i = 0; i < n; i++) {
		const struct ift_op_stats *s = &ops[i];
		int used;

		if (!s->nerrs)
			continue;
		if (!any)
			fprintf(tx->f, "\nerrors by return code\n");
		any = true;
		used = fprintf(tx->f, "  %-22s", ift_txt_safe(name, sizeof(name), s->name, 22));
		for (size_t k = 0; k < s->nerrs; k++) {
			char item[64];
			int l = snprintf(item, sizeof(item), "%s ret=%" PRId64 " x%" PRIu64,
					 k ? "," : "", s->errs[k].ret, s->errs[k].calls);

			if (used + l > WIDTH) {
				fprintf(tx->f, "\n%24s", "");
				used = 24;
			}
			used += fprintf(tx->f, "%s", item);
		}
		fputc('\n', tx->f);
	}
}

static void print_copies(struct text *tx, const struct ift_op_stats *ops, size_t n)
{
	static const struct column heads[] = {
		{ "copies", 24 }, { "dir", 9 }, { "calls", -9 }, { "bytes", -12 },
		{ "time", -10 }, { "bandwidth", -14 },
	};
	bool any = false;
	char b[64], name[CELL_LEN];

	for (size_t i = 0; i < n; i++) {
		for (int d = 0; d < IFT_COPY_NR; d++) {
			const struct ift_copy_stats *c = &ops[i].dir[d];

			if (!ops[i].copy || !c->calls)
				continue;
			if (!any) {
				fprintf(tx->f, "\n");
				ift_txt_header(tx, heads, NCOLS(heads));
			}
			any = true;
			/* a nested copy's bytes are the enclosing copy's too */
			if (ops[i].nested_calls == ops[i].calls) {
				fprintf(tx->f, "\xe2\x86\xb3 ");
				ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), ops[i].name, 21), 22);
			} else {
				ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), ops[i].name, 23), 24);
			}
			ift_txt_cell(tx, ift_copy_dir_name(d), 9);
			ift_txt_cell(tx, ift_txt_num(b, sizeof(b), c->calls), -9);
			ift_txt_cell(tx, ift_fmt_bytes(b, sizeof(b), (double)c->bytes), -12);
			ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), c->total_ns), -10);
			if (c->total_ns) {
				ift_fmt_bytes(b, sizeof(b), (double)c->bytes * 1e9 /
					  (double)c->total_ns);
				strcat(b, "/s");
			} else {
				snprintf(b, sizeof(b), "-");
			}
			ift_txt_cell(tx, b, -14);
			fputc('\n', tx->f);
		}
	}
}

/* ---- text: processes and threads ---------------------------------- */

static void task_header(struct text *tx, bool threads)
{
	static const struct column heads[] = {
		{ "tid", -8 }, { "pid", -8 }, { " ", 1 }, { "name", 16 }, { "role", 6 },
		{ "cuda", -8 }, { "on-cpu", -8 }, { "rq-wait", -8 }, { "blocked", -8 },
		{ "invol", -7 }, { "vol", -7 }, { "worst", -8 }, { "pages", -7 },
	};

	/* the tid column only for threads */
	ift_txt_header(tx, heads + !threads, NCOLS(heads) - !threads);
}

static void task_row(struct text *tx, bool threads, uint32_t tid, uint32_t pid, const char *comm,
		     enum ift_role role, uint64_t cuda, const struct ift_sched_stats *s)
{
	char b[64], name[CELL_LEN];

	/* ids in full: pid_max is at most 4194304 */
	if (threads) {
		snprintf(b, sizeof(b), "%" PRIu32, tid);
		ift_txt_cell(tx, b, -8);
	}
	snprintf(b, sizeof(b), "%" PRIu32, pid);
	ift_txt_cell(tx, b, -8);
	fprintf(tx->f, " ");
	ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), comm, 15), 16);
	ift_txt_cell(tx, ift_txt_role(role), 6);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), cuda), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->on_cpu_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->runqueue_wait_ns), -8);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->blocked_ns), -8);
	ift_txt_cell(tx, ift_txt_num(b, sizeof(b), s->involuntary), -7);
	ift_txt_cell(tx, ift_txt_num(b, sizeof(b), s->voluntary), -7);
	ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), s->max_off_cpu_ns), -8);
	ift_txt_cell(tx, ift_txt_num(b, sizeof(b), s->page_allocs), -7);
	fputc('\n', tx->f);
}

static int cmp_proc_off(const void *x, const void *y)
{
	const struct ift_process_info *p = *(const struct ift_process_info *const *)x;
	const struct ift_process_info *q = *(const struct ift_process_info *const *)y;

	if (ift_sched_off_cpu(&p->sched) != ift_sched_off_cpu(&q->sched))
		return ift_sched_off_cpu(&p->sched) > ift_sched_off_cpu(&q->sched) ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

static const char *legend =
	"(cuda: time in CUDA calls; rq-wait: runnable, waiting for a CPU; blocked:\n"
	" sleeping until woken; invol/vol: context switches; worst: longest off-CPU)\n";

static int print_processes(struct text *tx, const struct ift_analysis *a)
{
	size_t n = ift_analysis_process_count(a);
	const struct ift_process_info **v;

	if (!n) {
		fprintf(tx->f, "\nno process in the window\n");
		return 0;
	}
	if (n <= TOP) {
		fprintf(tx->f, "\nprocesses (%zu)\n", n);
		task_header(tx, false);
		for (size_t i = 0; i < n; i++) {
			const struct ift_process_info *p = ift_analysis_process(a, i);

			task_row(tx, false, 0, p->pid, p->comm, p->role, p->cuda_ns, &p->sched);
		}
		fprintf(tx->f, "%s", legend);
		return 0;
	}
	fprintf(tx->f, "\nprocesses by CUDA time (top %d of %zu)\n", TOP, n);
	task_header(tx, false);
	for (size_t i = 0; i < TOP; i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);

		task_row(tx, false, 0, p->pid, p->comm, p->role, p->cuda_ns, &p->sched);
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = ift_analysis_process(a, i);
	qsort(v, n, sizeof(*v), cmp_proc_off);
	fprintf(tx->f, "\nprocesses by off-CPU time (top %d of %zu)\n", TOP, n);
	task_header(tx, false);
	for (size_t i = 0; i < TOP; i++)
		task_row(tx, false, 0, v[i]->pid, v[i]->comm, v[i]->role, v[i]->cuda_ns,
			 &v[i]->sched);
	fprintf(tx->f, "%s", legend);
	free(v);
	return 0;
}

static void thread_rows(struct text *tx, const struct ift_thread_info *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		task_row(tx, true, v[i]->tid, v[i]->pid, ift_thread_comm(v[i]), v[i]->role,
			 v[i]->cuda_ns, &v[i]->sched);
}

static int print_threads(struct text *tx, const struct ift_analysis *a)
{
	size_t n = ift_analysis_thread_count(a);
	const struct ift_thread_info **v;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = ift_analysis_thread(a, i);
	for (int by = 0; by < 2; by++) {
		qsort(v, n, sizeof(*v), by ? ift_thread_cmp_off_cpu : ift_thread_cmp_cuda);
		if (n <= TOP)
			fprintf(tx->f, "\nthreads (%zu)\n", n);
		else
			fprintf(tx->f, "\nthreads by %s (top %d of %zu)\n",
			       by ? "off-CPU time" : "CUDA time", TOP, n);
		task_header(tx, true);
		thread_rows(tx, v, n < TOP ? n : TOP);
		if (n <= TOP)
			break;
	}
	free(v);
	return 0;
}

static void print_names(struct text *tx, const char *what, const char *const *names, size_t n)
{
	int used = fprintf(tx->f, "  %s", what);
	char name[CELL_LEN];

	for (size_t i = 0; i < n; i++) {
		const char *s = ift_txt_safe(name, sizeof(name), names[i], 0);

		if (used + ift_txt_cols(s) + 2 > WIDTH) {
			fprintf(tx->f, ",\n   ");
			used = 3;
		} else if (i) {
			used += fprintf(tx->f, ", ");
		}
		used += fprintf(tx->f, "%s", s);
	}
	fputc('\n', tx->f);
}

/* Why a process has its role, in one line (docs/report.md, "Roles"). */
static void print_role_evidence(struct text *tx, const struct ift_role_evidence *ev)
{
	char b1[32];

	if (!ev)
		return;
	if (!strcmp(ev->behaviour, "cuda calls")) {
		fprintf(tx->f, "  role: %" PRIu64 " outermost CUDA calls from thread %" PRIu32 "\n",
		       ev->calls, ev->cuda_tid);
		return;
	}
	fprintf(tx->f, "  role: %s thread %" PRIu32 ": %" PRIu64 " gap%s it waited in, %s",
	       !strcmp(ev->behaviour, "fed") ? "fed CUDA" : "relayed to CUDA", ev->cuda_tid,
	       ev->wakeups, ev->wakeups == 1 ? "" : "s", ift_txt_dur(b1, sizeof(b1), ev->ns));
	if (ev->relayed_wakeups)
		fprintf(tx->f, ", %" PRIu64 " through thread %" PRIu32, ev->relayed_wakeups, ev->via_tid);
	if (ev->from_pid)
		fprintf(tx->f, ", from process %" PRIu32, ev->from_pid);
	if (ev->forked_from)
		fprintf(tx->f, "; forked from %" PRIu32, ev->forked_from);
	if (ev->name)
		fprintf(tx->f, "; named %s", ev->name);
	fputc('\n', tx->f);
}

static int print_per_process(struct text *tx, const struct ift_analysis *a, bool threads)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], name[CELL_LEN];

	for (size_t i = 0; i < ift_analysis_process_count(a); i++) {
		const struct ift_process_info *p = ift_analysis_process(a, i);
		const struct ift_sched_stats *s = &p->sched;
		int ret;

		fprintf(tx->f, "\nprocess %" PRIu32 " %s%s%s%s, parent %" PRIu32 ", %zu thread%s\n",
		       p->pid, ift_txt_safe(name, sizeof(name), p->comm, 0),
		       p->role ? " (" : "", p->role ? ift_role_name(p->role) : "", p->role ? ")" : "",
		       p->ppid, p->nthreads, p->nthreads == 1 ? "" : "s");
		print_names(tx, "names: ", p->names, p->nnames);
		print_role_evidence(tx, p->role_evidence);
		fprintf(tx->f, "  alive %s .. %s; cuda %s in %" PRIu64 " calls\n",
		       ift_txt_dur(b1, sizeof(b1), p->start_ns), ift_txt_dur(b2, sizeof(b2), p->end_ns),
		       ift_txt_dur(b3, sizeof(b3), p->cuda_ns), p->cuda_calls);
		fprintf(tx->f, "  on-cpu %s, rq-wait %s, blocked %s, worst stall %s at %s\n",
		       ift_txt_dur(b1, sizeof(b1), s->on_cpu_ns),
		       ift_txt_dur(b2, sizeof(b2), s->runqueue_wait_ns),
		       ift_txt_dur(b3, sizeof(b3), s->blocked_ns),
		       ift_txt_dur(b4, sizeof(b4), s->max_off_cpu_ns),
		       ift_txt_dur(b5, sizeof(b5), s->max_off_cpu_at));
		fprintf(tx->f, "  switches %" PRIu64 " (involuntary %" PRIu64 ", voluntary %" PRIu64
		       "), wake-ups %" PRIu64 "\n", s->involuntary + s->voluntary,
		       s->involuntary, s->voluntary, s->wakeups);
		fprintf(tx->f, "  page allocations %" PRIu64 " (%s)\n", s->page_allocs,
		       ift_fmt_bytes(b1, sizeof(b1), (double)s->page_alloc_bytes));
		if (p->nops) {
			fputc('\n', tx->f);
			ret = print_ops(tx, p->ops, p->nops, "  ");
			if (ret < 0)
				return ret;
		}
		if (threads) {
			fputc('\n', tx->f);
			task_header(tx, true);
			thread_rows(tx, p->threads, p->nthreads);
		}
		if (p->profile)
			ift_txt_profile_top(tx, p->profile, "its CPU:");
	}
	return 0;
}

/* ---- text: chains ------------------------------------------------- */

#define CHAIN_SITES	3	/* text: a chain's sites shown */
#define CHAIN_FRAMES	3	/* text: innermost frames of each */

/*
 * Where the chain's time was lost from (record --stack): one line a site,
 * its innermost frames past the probed function itself, cut to the width.
 */
static void print_chain_sites(struct text *tx, const struct ift_chain *ch)
{
	for (size_t i = 0; i < ch->nsites && i < CHAIN_SITES; i++) {
		const struct ift_chain_site *x = &ch->sites[i];
		const struct ift_stack *st = x->frames;
		char line[512], fr[256], cut[LINE_LEN], b1[32];
		unsigned k0 = st && st->nframes > 1 ? 1 : 0;
		struct ift_stack_parts parts;
		size_t n;
		int len;

		ift_stack_parts(st, &parts);
		n = ift_appendf(line, sizeof(line), 0, "#%" PRIu64 " %u%% (%s %s)", x->stack,
			     (x->share_permille + 5) / 10, ift_fmt_count(b1, sizeof(b1), x->calls),
			     ch->phase == IFT_PHASE_BEFORE ? (x->calls == 1 ? "gap" : "gaps") :
			     (x->calls == 1 ? "call" : "calls"));
		for (unsigned k = k0; st && k < st->nframes && k < k0 + CHAIN_FRAMES; k++) {
			ift_frame_format(&st->frames[ift_stack_chain_index(&parts, k)], fr,
					 sizeof(fr));
			n = ift_appendf(line, sizeof(line), n, "%s%s", k == k0 ? "  " : " < ", fr);
		}
		if (!st)
			ift_appendf(line, sizeof(line), n, "  (site not in the file)");
		len = fprintf(tx->f, "    %s ", i ? "            " : "called from:");
		fprintf(tx->f, "%s\n", ift_txt_safe(cut, sizeof(cut), line, tx->width - len));
	}
}

/*
 * The lines of Python the chain's time was lost from (record --py-stack),
 * one a line with its share of the cost, and how many of the calls (or
 * gaps) with a site had Python frames.  Nothing for a trace without them,
 * or a chain without sites.
 */
static void print_chain_py_sites(struct text *tx, const struct ift_chain *ch)
{
	const char *what = ch->phase == IFT_PHASE_BEFORE ? "gaps" : "calls";
	char line[512], fr[256], cut[LINE_LEN], b1[32], b2[32];
	int len;

	if (!ch->py || !ch->site_calls)
		return;
	for (size_t i = 0; i < ch->npy_sites && i < CHAIN_SITES; i++) {
		const struct ift_chain_py_site *x = &ch->py_sites[i];

		ift_frame_format(x->frame, fr, sizeof(fr));
		snprintf(line, sizeof(line), "%s %u%% (%s %s)", fr, (x->share_permille + 5) / 10,
			 ift_fmt_count(b1, sizeof(b1), x->calls),
			 x->calls == 1 ? (ch->phase == IFT_PHASE_BEFORE ? "gap" : "call") : what);
		len = fprintf(tx->f, "    %s ", i ? "            " : "in Python:  ");
		fprintf(tx->f, "%s\n", ift_txt_safe(cut, sizeof(cut), line, tx->width - len));
	}
	snprintf(line, sizeof(line), "(Python frames read in flight for %s of the %s %s with "
		 "a stack)", ift_fmt_count(b1, sizeof(b1), ch->py_calls),
		 ift_fmt_count(b2, sizeof(b2), ch->site_calls), what);
	len = fprintf(tx->f, "    %s ", ch->npy_sites ? "            " : "in Python:  ");
	ift_txt_wrap(tx, len, len, line);
}

/* "N%" of PART in WHOLE, or "-" with nothing to divide: rounded from
   thousandths, as the chains' summaries round their shares. */
static const char *pct(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	if (!whole)
		return "-";
	snprintf(buf, len, "%u%%", (unsigned)(((part * 1000 + whole / 2) / whole + 5) / 10));
	return buf;
}

/* The GPU in the chain's windows (NVML): the idle time it explains, or
   that it did not wait. */
static void print_chain_gpu(struct text *tx, const struct ift_chain *ch)
{
	const struct ift_gpu_time *m = &ch->gpu.meanwhile;
	char b1[32], b2[32], line[LINE_LEN];

	if (!ch->gpu.measured || !m->covered_ns)
		return;
	if (ch->gpu.not_waiting)
		snprintf(line, sizeof(line), "busy %s meanwhile: the host was slow, but the GPU "
			 "did not wait", pct(b1, sizeof(b1), m->busy_ns, m->covered_ns));
	else if (ch->cause == IFT_CAUSE_GPU_BOUND)
		snprintf(line, sizeof(line), "busy %s meanwhile",
			 pct(b1, sizeof(b1), m->busy_ns, m->covered_ns));
	else
		snprintf(line, sizeof(line), "idle %s meanwhile, %u%% of the %s's idle time; "
			 "busy %s", ift_txt_dur(b1, sizeof(b1), ch->gpu.idle_ns),
			 (ch->gpu.idle_permille + 5) / 10,
			 ch->stage == IFT_STAGE_STEADY ? "steady state" :
			 ch->stage == IFT_STAGE_STARTUP ? "start-up" : "tail",
			 pct(b2, sizeof(b2), m->busy_ns, m->covered_ns));
	fputs("    gpu:       ", tx->f);
	ift_txt_wrap(tx, 15, 15, line);
}

static void print_chain(struct text *tx, size_t n, const struct ift_chain *ch)
{
	char b1[32], b2[32], b3[32], head[64];
	int len;

	len = snprintf(head, sizeof(head), "%2zu. %-6s ", n, ift_severity_name(ch->severity));
	fputs(head, tx->f);
	ift_txt_wrap(tx, len, 4, ch->summary);
	{
		char line[256];
		int w;

		w = snprintf(line, sizeof(line), "cost %s, %u%% of the CUDA threads' active time "
			     "(%s)", ift_txt_dur(b1, sizeof(b1), ch->cost_ns),
			     (unsigned)((ch->cost_ns * 1000 / (ch->wall_ns ? ch->wall_ns : 1) + 5) /
					10), ift_txt_dur(b2, sizeof(b2), ch->wall_ns));
		if (ch->p50_ns && w > 0 && (size_t)w < sizeof(line))
			snprintf(line + w, sizeof(line) - (size_t)w, "; %s p50 %s p99 %s", ch->op,
				 ift_txt_dur(b1, sizeof(b1), ch->p50_ns),
				 ift_txt_dur(b3, sizeof(b3), ch->p99_ns));
		fputs("    ", tx->f);
		ift_txt_wrap(tx, 4, 4, line);
	}
	if (ch->nsteps) {
		fprintf(tx->f, "    worst occurrence:\n");
		for (size_t i = 0; i < ch->nsteps; i++) {
			const struct ift_chain_step *st = &ch->steps[i];
			char at[32];

			snprintf(at, sizeof(at), "%.3fs", (double)st->t_ns / 1e9);
			fprintf(tx->f, "      %10s  %-6s ", at, st->layer);
			ift_txt_wrap(tx, 6 + 10 + 2 + 7, 25, st->text);
		}
	}
	for (size_t i = 0; i < ch->ntasks; i++) {
		const struct ift_chain_task *t = &ch->tasks[i];
		char name[CELL_LEN], line[200];

		if (i && !strcmp(t->relation, ch->tasks[i - 1].relation) && i >= 4)
			continue;
		snprintf(line, sizeof(line), "%s (pid %u tid %u%s%s%s) %u%%, %s, %" PRIu64 "x",
			 ift_txt_safe(name, sizeof(name), t->comm[0] ? t->comm : "?", 24), t->pid, t->tid,
			 t->role ? ", " : "", t->role ? ift_txt_role(t->role) : "",
			 t->outside ? ", not traced" : "", (t->share_permille + 5) / 10,
			 ift_txt_dur(b1, sizeof(b1), t->ns), t->count);
		len = fprintf(tx->f, "    %s ", !i || strcmp(t->relation, ch->tasks[i - 1].relation) ?
			     (!strcmp(t->relation, "woke") ? "woken by:   " : "preempted by:") :
			     "             ");
		ift_txt_wrap(tx, len, 18, line);
	}
	print_chain_gpu(tx, ch);
	print_chain_sites(tx, ch);
	print_chain_py_sites(tx, ch);
	if (ch->profile)
		ift_txt_profile_top(tx, ch->profile, "their CPU:");
	for (size_t i = 0; i < ch->nrecs; i++) {
		len = fprintf(tx->f, "    %s ", i ? "   " : "fix");
		ift_txt_wrap(tx, len, 8, ch->recs[i]);
	}
}

static void print_chains(struct text *tx, const struct ift_chains *c)
{
	size_t n = ift_chains_count(c);

	if (!n) {
		fprintf(tx->f, "\nno host cause found: no op has a tail past the thresholds, and the "
		       "CUDA threads\nneither starve between calls nor mostly wait for the "
		       "device\n");
		return;
	}
	fprintf(tx->f, "\nWHY THE GPU WAITS (%zu chain%s, most costly first)\n", n, n > 1 ? "s" : "");
	for (size_t i = 0; i < n; i++)
		print_chain(tx, i + 1, ift_chains_get(c, i));
}

/* ---- the job (NCCL ranks) ------------------------------------------ */

#define JOB_RANKS_SHOWN	16	/* ranks listed without --per-process */

/* "+1.2ms", "-37.0ms", "0ns": a signed duration. */
static const char *fmt_sdur(char *buf, size_t len, int64_t ns)
{
	char b[32];

	snprintf(buf, len, "%s%s", ns < 0 ? "-" : ns > 0 ? "+" : "",
		 ift_txt_dur(b, sizeof(b), ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns));
	return buf;
}

static void print_job_clocks(struct text *tx, const struct ift_job *j,
			     const struct ift_job_input *in)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], line[512];

	if (j->ntraces < 2)
		return;
	fprintf(tx->f, "clocks     on %s's (host %s)\n", in[0].path, j->clocks[0].host);
	for (size_t i = 1; i < j->ntraces; i++) {
		const struct ift_job_clock *c = &j->clocks[i];
		int64_t wall = c->wall_offset_ns - j->clocks[0].wall_offset_ns;

		if (c->refined)
			snprintf(line, sizeof(line), "%s (host %s): wall clock %s, then %s by %s "
				 "collectives (residual %s; no collective contradicts %s..%s)",
				 in[i].path, c->host, fmt_sdur(b1, sizeof(b1), wall),
				 fmt_sdur(b2, sizeof(b2), c->shift_ns),
				 ift_fmt_count(b3, sizeof(b3), c->collectives),
				 ift_txt_dur(b4, sizeof(b4), c->residual_ns),
				 c->lo_ns <= c->hi_ns ? fmt_sdur(b5, sizeof(b5), c->lo_ns) : "none",
				 c->lo_ns <= c->hi_ns ? fmt_sdur(b6, sizeof(b6), c->hi_ns) : "");
		else
			snprintf(line, sizeof(line), "%s (host %s): wall clock %s alone (no "
				 "collective shared with the first trace)", in[i].path, c->host,
				 fmt_sdur(b1, sizeof(b1), wall));
		fputs("           ", tx->f);
		ift_txt_wrap(tx, 11, 13, line);
	}
}

static void print_stragglers(struct text *tx, const struct ift_job *j)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], line[512];

	if (!j->nstragglers) {
		fprintf(tx->f, "no straggler: no rank made the others wait for %u%% of their "
			"waiting in collectives\n", 1);
		return;
	}
	fprintf(tx->f, "STRAGGLERS (%zu, most costly first)\n", j->nstragglers);
	for (size_t i = 0; i < j->nstragglers; i++) {
		const struct ift_job_straggler *s = &j->stragglers[i];
		const struct ift_job_rank *r = &j->ranks[s->rank];
		const struct ift_chain *ch = s->cause;
		int len;

		len = fprintf(tx->f, "%2zu. ", i + 1);
		snprintf(line, sizeof(line), "rank %d (pid %u on %s) entered %s of %s %s last, "
			 "%s late (median; %s in all) -> the other ranks waited %s for it (%u%% of "
			 "the job's waiting) -> its own host: %s", r->rank, r->pid,
			 r->host[0] ? r->host : "?", ift_fmt_count(b1, sizeof(b1), s->last),
			 ift_fmt_count(b2, sizeof(b2), r->collectives), s->op,
			 ift_txt_dur(b3, sizeof(b3), s->late_p50_ns), ift_txt_dur(b4, sizeof(b4), s->late_ns),
			 ift_txt_dur(b5, sizeof(b5), s->cost_ns), (s->share_permille + 5) / 10,
			 ch ? ch->summary : "nothing its trace explains (a slower device, or the "
			 "program's own work)");
		ift_txt_wrap(tx, len, 4, line);
		if (ch && ch->nrecs) {
			fputs("    fix ", tx->f);
			ift_txt_wrap(tx, 8, 8, ch->recs[0]);
		}
	}
}

static void print_job_ranks(struct text *tx, const struct ift_job *j, bool all)
{
	static const struct column c[] = {
		{ "rank", -5 }, { " host", 17 }, { "pid", -8 }, { "collectives", -12 },
		{ "inside", -9 }, { "waited", -9 }, { "last", -6 }, { "late", -9 },
		{ "cost", -9 },
	};
	char b[32], host[CELL_LEN];
	size_t shown = all || j->nranks <= JOB_RANKS_SHOWN ? j->nranks : JOB_RANKS_SHOWN;

	ift_txt_header(tx, c, sizeof(c) / sizeof(c[0]));
	for (size_t i = 0; i < shown; i++) {
		const struct ift_job_rank *r = &j->ranks[i];

		snprintf(b, sizeof(b), "%d", r->rank);
		ift_txt_cell(tx, b, c[0].w);
		fputc(' ', tx->f);
		ift_txt_cell(tx, ift_txt_safe(host, sizeof(host), r->host, 16), c[1].w);
		snprintf(b, sizeof(b), "%u", r->pid);
		ift_txt_cell(tx, b, c[2].w);
		ift_txt_cell(tx, ift_txt_num(b, sizeof(b), r->collectives), c[3].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), r->in_ns), c[4].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), r->waited_ns), c[5].w);
		ift_txt_cell(tx, ift_txt_num(b, sizeof(b), r->last), c[6].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), r->late_ns), c[7].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), r->cost_ns), c[8].w);
		fputc('\n', tx->f);
	}
	if (shown < j->nranks)
		fprintf(tx->f, "(%zu more ranks: --per-process lists them all)\n",
			j->nranks - shown);
	fprintf(tx->f, "(inside: time in the collectives; waited: of it, in those it did not "
		"enter last; last:\n collectives it entered last; late: after the rank before it; "
		"cost: the others'\n waiting for it, from their entry to its own)\n");
}

/* The job section: ranks, clocks, stragglers (docs/report.md "Jobs"). */
static void print_job(struct text *tx, const struct ift_job *j, const struct ift_job_input *in,
		      bool all)
{
	char b1[32], b2[32];

	fprintf(tx->f, "\nJOB (NCCL): %zu of %d ranks in %zu trace%s, %s collectives matched",
		j->nranks, j->world, j->ntraces, j->ntraces > 1 ? "s" : "",
		ift_fmt_count(b1, sizeof(b1), j->collectives));
	if (j->unmatched)
		fprintf(tx->f, " (%s past the first that differed between ranks)",
			ift_fmt_count(b2, sizeof(b2), j->unmatched));
	fprintf(tx->f, ", %s waited in all\n", ift_txt_dur(b1, sizeof(b1), j->waited_ns));
	print_job_clocks(tx, j, in);
	print_stragglers(tx, j);
	print_job_ranks(tx, j, all);
}

/* ---- call sites (record --stack) --------------------------------- */

#define SITE_FRAMES	8	/* innermost frames shown */
#define SITE_PY_NATIVE	3	/* of a site with Python frames: the native frames
				   below the interpreter shown before them */

/* Frames [FROM, TO) of the chain of ST (PARTS), at most MAX, then how many
   more there were, as WHAT. */
static void site_frames(struct text *tx, const struct ift_stack *st,
			const struct ift_stack_parts *parts, unsigned from, unsigned to,
			unsigned max, const char *what)
{
	char line[512], cut[LINE_LEN];

	for (unsigned k = from; k < to && k < from + max; k++) {
		const struct ift_frame *f = &st->frames[ift_stack_chain_index(parts, k)];

		/* a module's path and a symbol are the program's to choose too */
		ift_frame_format(f, line, sizeof(line));
		fprintf(tx->f, "        %s\n", ift_txt_safe(cut, sizeof(cut), line, WIDTH - 8));
	}
	if (to - from > max)
		fprintf(tx->f, "        ... %u more%s\n", to - from - max, what);
}

/*
 * A site's frames, innermost first.  One with Python frames reads as one
 * call chain (ift_stack_parts()): its innermost native frames, the Python
 * frames that called them, and how many frames of the interpreter ran
 * those.
 */
static void print_site_frames(struct text *tx, const struct ift_stack *st)
{
	struct ift_stack_parts p;
	unsigned npy;

	if (!st) {
		fprintf(tx->f, "        (site not in the file: the recording was cut short)\n");
		return;
	}
	ift_stack_parts(st, &p);
	npy = p.nframes - p.native;
	if (!npy) {
		site_frames(tx, st, &p, 0, p.nframes, SITE_FRAMES, "");
		return;
	}
	site_frames(tx, st, &p, 0, p.inner, SITE_PY_NATIVE, " native");
	site_frames(tx, st, &p, p.inner, p.inner + npy, SITE_FRAMES, " Python");
	if (p.native > p.inner)
		fprintf(tx->f, "        ... %u frame%s of the interpreter\n", p.native - p.inner,
			p.native - p.inner == 1 ? "" : "s");
}

static int print_sites(struct text *tx, struct ift_trace *t, const struct ift_report *r)
{
	size_t n;
	const struct ift_site *v = ift_report_sites(r, &n);
	char b1[32], b2[32], line[512];

	if (!n)
		return 0;
	fprintf(tx->f, "\nCall sites (record --stack): top %d per op, innermost frame first\n",
	       IFT_SITES_TOP);
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(v[i].op, v[i - 1].op))
			fprintf(tx->f, "%s\n", v[i].op);
		fprintf(tx->f, "  #%-4" PRIu64 " %s calls (%.1f%%)  %s total (%.1f%%)  tail %.1f%% (%s)\n",
		       v[i].stack, ift_fmt_count(b1, sizeof(b1), v[i].calls),
		       100 * v[i].share_calls, ift_txt_dur(b2, sizeof(b2), v[i].total_ns),
		       100 * v[i].share_time, 100 * v[i].share_tail,
		       v[i].tail_calls == 1 ? "1 call" :
		       (snprintf(line, sizeof(line), "%" PRIu64 " calls", v[i].tail_calls), line));
		print_site_frames(tx, ift_trace_stack(t, v[i].stack));
	}
	return 0;
}

/* "N call(s)" into BUF. */
static const char *fmt_calls(char *buf, size_t len, uint64_t n)
{
	char b[32];

	snprintf(buf, len, "%s call%s", ift_fmt_count(b, sizeof(b), n), n == 1 ? "" : "s");
	return buf;
}

#define PY_CALLERS	4	/* Python frames shown above a Python call site */

/*
 * The lines of Python that made each op's calls (record --py-stack): for
 * each op, its calls, those with a stack, and how many of those had their
 * Python frames read in flight or too late; then its top sites, one a line
 * (the line, the time of its calls, their number, their share of the time
 * read in flight, those in the tail), each with the Python frames that
 * called it.  Only for a trace that holds Python frames; lines wrap, so a
 * long path never cuts a number off.
 */
static void print_py_sites(struct text *tx, struct ift_trace *t, const struct ift_report *r)
{
	size_t n;
	const struct ift_py_op *v = ift_report_py_sites(r, &n);
	char b1[32], b2[32], b3[32], b4[32], line[1024], fr[256];

	if (!ift_report_py(r))
		return;
	fprintf(tx->f, "\nPython call sites (record --py-stack): the line that made the calls, "
		"top %d per op\n", IFT_SITES_TOP);
	if (!n)
		fprintf(tx->f, "no call in the window had its Python frames read\n");
	for (size_t i = 0; i < n; i++) {
		const struct ift_py_op *o = &v[i];

		snprintf(line, sizeof(line), "%s: %s, %s with a stack; Python frames: %s in "
			 "flight, %s late (dropped)", o->op,
			 fmt_calls(b1, sizeof(b1), o->calls),
			 ift_fmt_count(b2, sizeof(b2), o->stack_calls),
			 ift_fmt_count(b3, sizeof(b3), o->in_flight),
			 ift_fmt_count(b4, sizeof(b4), o->late));
		ift_txt_wrap(tx, 0, 2, line);
		for (size_t j = 0; j < o->nsites; j++) {
			const struct ift_py_site *x = &o->sites[j];
			const struct ift_stack *st = ift_trace_stack(t, x->stack);
			struct ift_stack_parts p;
			unsigned k, last;
			int w;

			ift_frame_format(x->frame, fr, sizeof(fr));
			w = snprintf(line, sizeof(line), "%s: %s in %s (%.1f%%)", fr,
				     ift_txt_dur(b1, sizeof(b1), x->total_ns),
				     fmt_calls(b2, sizeof(b2), x->calls), 100 * x->share_time);
			if (x->tail_calls && w > 0 && (size_t)w < sizeof(line))
				snprintf(line + w, sizeof(line) - (size_t)w, ", %s in the tail",
					 ift_fmt_count(b3, sizeof(b3), x->tail_calls));
			fputs("  ", tx->f);
			ift_txt_wrap(tx, 2, 6, line);
			/* the Python frames that called it, in its largest site */
			ift_stack_parts(st, &p);
			if (p.nframes - p.native < 2)
				continue;
			last = p.native + 1 + PY_CALLERS < p.nframes ? p.native + 1 + PY_CALLERS :
								       p.nframes;
			w = snprintf(line, sizeof(line), "called from");
			for (k = p.native + 1; k < last && w > 0 && (size_t)w < sizeof(line); k++) {
				ift_frame_format(&st->frames[k], fr, sizeof(fr));
				w += snprintf(line + w, sizeof(line) - (size_t)w, "%s%s",
					      k == p.native + 1 ? " " : " < ", fr);
			}
			if (last < p.nframes && w > 0 && (size_t)w < sizeof(line))
				snprintf(line + w, sizeof(line) - (size_t)w, " < ... %u more",
					 p.nframes - last);
			fputs("      ", tx->f);
			ift_txt_wrap(tx, 6, 8, line);
		}
	}
}

/* The GPUs' busy share (NVML), a line each, and the steady state's idle
   time with the chains' shares of it; or why they were not measured. */
static void print_gpu(struct text *tx, const struct ift_analysis *a, const struct ift_chains *c)
{
	const struct ift_gpu_use *g = ift_analysis_gpu(a);
	const struct ift_gpu_time *st = &g->counted[IFT_STAGE_STEADY];
	char b1[32], b2[32], b3[32], line[LINE_LEN];
	struct ift_gpu_idle idle;
	int n;

	if (!g->measured) {
		snprintf(line, sizeof(line), "not measured: %s", g->reason);
		fputs("gpu        ", tx->f);
		ift_txt_wrap(tx, 11, 13, line);
		return;
	}
	for (size_t i = 0; i < g->ngpus; i++) {
		const struct ift_gpu_info *v = &g->gpus[i];
		const struct ift_gpu_time *s = &v->stage[IFT_STAGE_STEADY];

		/* the GPUs of the traced processes, all where none is known */
		if (!v->counted)
			continue;
		n = snprintf(line, sizeof(line), "%u %s: busy ", v->gpu, v->name);
		if (s->covered_ns)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      "%s of the steady state (%s of %s), ",
				      pct(b1, sizeof(b1), s->busy_ns, s->covered_ns),
				      ift_txt_dur(b2, sizeof(b2), s->busy_ns),
				      ift_txt_dur(b3, sizeof(b3), s->covered_ns));
		/* the start-up and the tail, where the samples cover them */
		for (int k = IFT_STAGE_STARTUP; s->covered_ns && k <= IFT_STAGE_TAIL; k += 2)
			if (v->stage[k].covered_ns && n < (int)sizeof(line))
				n += snprintf(line + n, sizeof(line) - (size_t)n, "%s of the %s, ",
					      pct(b1, sizeof(b1), v->stage[k].busy_ns,
						  v->stage[k].covered_ns),
					      k == IFT_STAGE_STARTUP ? "start-up" : "tail");
		snprintf(line + n, sizeof(line) - (size_t)n, "%s of the window (NVML)",
			 pct(b1, sizeof(b1), v->window.busy_ns, v->window.covered_ns));
		fputs("gpu        ", tx->f);
		ift_txt_wrap(tx, 11, 13, line);
	}
	if (!st->covered_ns)
		return;
	/* the steady state's idle time, and what the chains explain of it */
	ift_chains_gpu_idle(c, IFT_STAGE_STEADY, &idle);
	n = snprintf(line, sizeof(line), "idle %s of the steady state", ift_txt_dur(b1, sizeof(b1),
										idle.idle_ns));
	if (g->iterations)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %s an iteration",
			      ift_txt_dur(b1, sizeof(b1), idle.idle_ns / g->iterations));
	for (size_t i = 0, k = 0; i < ift_chains_count(c) && n < (int)sizeof(line); i++) {
		const struct ift_chain *ch = ift_chains_get(c, i);

		if (ch->stage != IFT_STAGE_STEADY || !ch->gpu.idle_ns)
			continue;
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s chain %zu %s", k++ ? "," :
			      ": explained by", i + 1,
			      pct(b1, sizeof(b1), ch->gpu.idle_ns, idle.idle_ns));
	}
	if (n < (int)sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, "; unexplained %s",
			 pct(b1, sizeof(b1), idle.unexplained_ns, idle.idle_ns));
	fputs("gpu        ", tx->f);
	ift_txt_wrap(tx, 11, 13, line);
}

int ift_out_text(FILE *f, struct ift_trace *t, const struct ift_report *r,
		 const struct ift_text_opts *o)
{
	struct text text = { .f = f, .width = ift_txt_width(o) }, *tx = &text;
	const struct ift_analysis *a = r->a;
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	char b1[32], b2[32], b3[32], cmd[LINE_LEN];
	uint64_t span = s->end_ts - s->start_ts;
	size_t nops = ift_analysis_op_count(a);
	int ret;

	fprintf(tx->f, "command    %s\n", s->command[0] ?
	       ift_txt_safe(cmd, sizeof(cmd), s->command, WIDTH - 11) : "(not recorded)");
	if (s->from_ns || s->to_ns != span)
		fprintf(tx->f, "window     %s .. %s of a %s trace\n",
		       ift_txt_dur(b1, sizeof(b1), s->from_ns), ift_txt_dur(b2, sizeof(b2), s->to_ns),
		       ift_txt_dur(b3, sizeof(b3), span));
	else
		fprintf(tx->f, "duration   %s\n", ift_txt_dur(b1, sizeof(b1), s->duration_ns));
	fprintf(tx->f, "events     %s (%s CUDA calls, %s host events), %u CPUs\n",
	       ift_fmt_count(b1, sizeof(b1), s->events), ift_fmt_count(b2, sizeof(b2), s->calls),
	       ift_fmt_count(b3, sizeof(b3), s->host_events), s->cpus);
	fprintf(tx->f, "lost       %s\n", ift_fmt_count(b1, sizeof(b1), s->lost_events));
	print_gpu(tx, a, r->c);
	if (s->lost_events)
		fprintf(tx->f, "WARNING: the kernel dropped %s events: counts and times may be short\n",
		       ift_fmt_count(b1, sizeof(b1), s->lost_events));
	/* record --page-allocs=count: totals without times */
	if (s->page_allocs_counted)
		fprintf(tx->f, "pages      %s%s\n", s->page_counts_in ?
			"per-thread totals counted by the kernel, none in a call or chain" :
			"counted by the kernel for the whole recording: not in a window",
			s->page_count_dropped ? " (some uncounted: its table was full)" : "");
	print_chains(tx, r->c);
	if (r->job) {
		const struct ift_job_input in = { .path = "", .t = t, .r = r };

		print_job(tx, r->job, &in, o && o->per_process);
	}

	if (nops) {
		const struct ift_op_stats *ops = ift_analysis_op(a, 0);

		fprintf(tx->f, "\nCUDA ops\n");
		ret = print_ops(tx, ops, nops, "");
		if (ret < 0)
			return ret;
		fprintf(tx->f, "(\xe2\x86\xb3 nested: made inside the call above, its time already counted"
		       " there; wall%%:\n share of the calling threads' wall time)\n");
		print_errors(tx, ops, nops);
		print_copies(tx, ops, nops);
		print_py_sites(tx, t, r);
		if ((ret = print_sites(tx, t, r)) < 0)
			return ret;
	} else {
		fprintf(tx->f, "\nno CUDA calls in the window\n");
	}
	ift_txt_profile(tx, ift_analysis_profile(a));

	if (o && o->per_process)
		return print_per_process(tx, a, o->threads);
	ret = print_processes(tx, a);
	if (ret >= 0 && o && o->threads)
		ret = print_threads(tx, a);
	return ret;
}

int ift_out_job_text(FILE *f, const struct ift_job *j, const struct ift_job_input *in,
		     size_t n, const struct ift_text_opts *o)
{
	struct text text = { .f = f, .width = ift_txt_width(o) }, *tx = &text;
	int ret = 0;

	if (j)
		print_job(tx, j, in, o && o->per_process);
	else
		fprintf(tx->f, "\nno job: fewer than two NCCL ranks (ncclCommInitRank) of one "
			"size in the %zu traces\n", n);
	for (size_t i = 0; i < n && ret >= 0; i++) {
		const char *h = ift_trace_meta(in[i].t, "host.name");
		char cut[LINE_LEN];

		fprintf(tx->f, "\n==== %s", ift_txt_safe(cut, sizeof(cut), in[i].path, WIDTH - 30));
		fprintf(tx->f, " (host %s) ====\n", ift_txt_safe(cut, sizeof(cut), h ? h : "?", 24));
		ret = ift_out_text(f, in[i].t, in[i].r, o);
	}
	return ret;
}
