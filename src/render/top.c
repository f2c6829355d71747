// SPDX-License-Identifier: MIT
/*
 * `top's frame as text (docs/top.md): one window of a trace, in at most
 * about 30 lines of IFT_TEXT_WIDTH columns.  What it shows, and in which
 * order, is the model's (analyze/top.c); names from the trace go through
 * ift_txt_safe() and the chain's free text through ift_txt_wrap(), so
 * nothing of the traced program reaches the terminal unescaped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ift-chains.h"
#include "ift-render.h"
#include "render/text.h"

static void head(struct text *tx, const struct ift_top_frame *fr,
		 const struct ift_top_view *v)
{
	const struct ift_analysis_summary *s = fr->sum;
	char b1[32], b2[32], b3[32], name[CELL_LEN];

	fprintf(tx->f, "ingero-ftrace top  %s  %s %s", ift_txt_safe(name, sizeof(name), v->name, 48),
		v->state, ift_txt_dur(b1, sizeof(b1), v->length_ns));
	if (v->stale_ns)
		fprintf(tx->f, ", nothing new for %s", ift_txt_dur(b2, sizeof(b2), v->stale_ns));
	fprintf(tx->f, "\nwindow %.3fs - %.3fs (%s)\n", (double)s->from_ns / 1e9,
		(double)s->to_ns / 1e9, ift_txt_dur(b3, sizeof(b3), s->duration_ns));
}

static void load(struct text *tx, const struct ift_top_frame *fr)
{
	const struct ift_top_load *l = &fr->load;
	const struct ift_gpu_use *g = fr->gpu;

	if (l->samples)
		fprintf(tx->f, "cpu    busy %u%% of %u CPUs, run queue %u.%u tasks (at most %u)\n",
			(l->busy_permille + 5) / 10, fr->sum->cpus, l->runnable_milli / 1000,
			(l->runnable_milli % 1000 + 50) / 100 % 10, l->runnable_max);
	else
		fputs("cpu    not sampled in this window\n", tx->f);
	if (!g || !g->measured)
		return;
	for (size_t i = 0; i < g->ngpus; i++) {
		const struct ift_gpu_time *w = &g->gpus[i].window;
		char name[CELL_LEN];

		if (!w->covered_ns)
			continue;
		fprintf(tx->f, "gpu    %u%s%s: busy %" PRIu64 "%%\n", g->gpus[i].gpu,
			g->gpus[i].name[0] ? " " : "",
			ift_txt_safe(name, sizeof(name), g->gpus[i].name, 40),
			(w->busy_ns * 100 + w->covered_ns / 2) / w->covered_ns);
	}
}

static void ops(struct text *tx, const struct ift_top_frame *fr)
{
	static const struct column c[] = {
		{ "OP", 30 }, { "CALLS/S", -10 }, { "P50", -11 }, { "P99", -11 },
		{ "TOTAL", -11 },
	};
	char b[32], name[CELL_LEN];

	if (!fr->nops) {
		fputs("\nno CUDA call in this window\n", tx->f);
		return;
	}
	fputc('\n', tx->f);
	ift_txt_header(tx, c, NCOLS(c));
	for (size_t i = 0; i < fr->nops; i++) {
		const struct ift_top_op *o = &fr->ops[i];

		ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), o->s->name, 29), c[0].w);
		/* in tenths, rounded: 4.082 calls/s is 4.1 */
		snprintf(b, sizeof(b), "%" PRIu64 ".%01" PRIu64, (o->per_s_milli + 50) / 1000,
			 (o->per_s_milli + 50) % 1000 / 100);
		ift_txt_cell(tx, b, c[1].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), o->s->p50_ns), c[2].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), o->s->p99_ns), c[3].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), o->s->total_ns), c[4].w);
		fputc('\n', tx->f);
	}
	if (fr->ops_left)
		fprintf(tx->f, "(%zu more ops)\n", fr->ops_left);
}

/* The chain's tasks of one relation, "comm pid N 33%, ..." on one wrapped line. */
static void chain_tasks(struct text *tx, const struct ift_chain *ch, const char *relation,
			const char *label)
{
	char line[LINE_LEN], name[CELL_LEN];
	size_t len = 0;

	for (size_t i = 0; i < ch->ntasks && len < sizeof(line) - CELL_LEN - 40; i++) {
		const struct ift_chain_task *t = &ch->tasks[i];

		if (strcmp(t->relation, relation))
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s pid %u %u%%",
					len ? ", " : "",
					ift_txt_safe(name, sizeof(name), t->comm[0] ? t->comm : "?",
						     20),
					t->pid, (t->share_permille + 5) / 10);
	}
	if (!len)
		return;
	fprintf(tx->f, "    %-13s ", label);
	ift_txt_wrap(tx, 18, 18, line);
}

static void chain(struct text *tx, const struct ift_top_frame *fr)
{
	const struct ift_chain *ch = fr->chain;
	char b[32], h[64];
	int n;

	if (!ch) {
		fputs("\nno host cause in this window\n", tx->f);
		return;
	}
	n = snprintf(h, sizeof(h), "\nWHY THE GPU WAITS  %-6s ", ift_severity_name(ch->severity));
	fputs(h, tx->f);
	ift_txt_wrap(tx, n - 1, 4, ch->summary);
	fprintf(tx->f, "    cost %s, %u%% of the CUDA threads' active time\n",
		ift_txt_dur(b, sizeof(b), ch->cost_ns),
		(unsigned)((ch->cost_ns * 1000 / (ch->wall_ns ? ch->wall_ns : 1) + 5) / 10));
	chain_tasks(tx, ch, "woke", "woken by");
	chain_tasks(tx, ch, "preempted", "preempted by");
	if (ch->nrecs) {
		fputs("    fix           ", tx->f);
		ift_txt_wrap(tx, 18, 18, ch->recs[0]);
	}
}

static void feeders(struct text *tx, const struct ift_top_frame *fr)
{
	static const struct column c[] = {
		{ "FEEDER", 22 }, { "ROLE", 8 }, { "PID", -8 }, { "TID", -8 },
		{ "ON-CPU", -8 }, { "RUN-QUEUE", -10 }, { "BLOCKED", -9 }, { "FED", -11 },
	};
	char b[32], name[CELL_LEN];

	if (!fr->nfeeders)
		return;
	fputc('\n', tx->f);
	ift_txt_header(tx, c, NCOLS(c));
	for (size_t i = 0; i < fr->nfeeders; i++) {
		const struct ift_top_feeder *fd = &fr->feeders[i];
		const char *comm = fd->th->task ?
			ift_task_comm_at(fd->th->task, fr->sum->start_ts + fr->sum->to_ns) : "?";

		ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), comm, 21), c[0].w);
		ift_txt_cell(tx, ift_txt_role(fd->th->role), c[1].w);
		snprintf(b, sizeof(b), "%u", fd->th->pid);
		ift_txt_cell(tx, b, c[2].w);
		snprintf(b, sizeof(b), "%u", fd->th->tid);
		ift_txt_cell(tx, b, c[3].w);
		snprintf(b, sizeof(b), "%u%%", (fd->on_cpu_permille + 5) / 10);
		ift_txt_cell(tx, b, c[4].w);
		snprintf(b, sizeof(b), "%u%%", (fd->runq_permille + 5) / 10);
		ift_txt_cell(tx, b, c[5].w);
		snprintf(b, sizeof(b), "%u%%", (fd->blocked_permille + 5) / 10);
		ift_txt_cell(tx, b, c[6].w);
		ift_txt_cell(tx, ift_txt_dur(b, sizeof(b), fd->fed_ns), c[7].w);
		fputc('\n', tx->f);
	}
	if (fr->feeders_left)
		fprintf(tx->f, "(%zu more feeders)\n", fr->feeders_left);
}

void ift_out_top(FILE *f, const struct ift_top_frame *fr, const struct ift_top_view *v)
{
	struct text tx = { f, v->width >= IFT_TEXT_MIN_WIDTH && v->width < IFT_TEXT_WIDTH ?
			      v->width : IFT_TEXT_WIDTH };

	head(&tx, fr, v);
	load(&tx, fr);
	ops(&tx, fr);
	chain(&tx, fr);
	feeders(&tx, fr);
}
