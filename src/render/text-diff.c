// SPDX-License-Identifier: MIT
/*
 * `report --diff' as text: two reports (or two jobs) side by side, each
 * figure as baseline -> current (docs/report.md).
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

/* ---- --diff ------------------------------------------------------- */

/* "1.2ms -> 3.4ms" plus " (2.8x)" when RATIO. */
static const char *fmt_change_dur(char *buf, size_t len, uint64_t b, uint64_t c, bool ratio)
{
	char x[32], y[32];
	int n = snprintf(buf, len, "%s -> %s", ift_txt_dur(x, sizeof(x), b), ift_txt_dur(y, sizeof(y), c));

	if (ratio && b && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (%.2fx)", (double)c / (double)b);
	return buf;
}

static const char *fmt_change_num(char *buf, size_t len, uint64_t b, uint64_t c)
{
	char x[32], y[32];

	snprintf(buf, len, "%s -> %s", ift_txt_num(x, sizeof(x), b), ift_txt_num(y, sizeof(y), c));
	return buf;
}

static void diff_row(struct text *tx, const char *what, const char *change)
{
	ift_txt_cell(tx, what, 28);
	fprintf(tx->f, "%s\n", change);
}

int ift_out_text_diff(FILE *f, const struct ift_diff_side *cur,
		      const struct ift_diff_side *base, const struct ift_text_opts *o)
{
	static const struct column heads[] = {
		{ "CUDA op", 24 }, { "calls", 17 }, { "p50", 19 }, { "p99", 27 }, { "total", 0 },
	};
	struct text text = { .f = f, .width = ift_txt_width(o) }, *tx = &text;
	struct ift_op_pair *pairs;
	size_t npairs;
	struct ift_report_totals b, c;
	char buf[128], name[CELL_LEN], cmd[LINE_LEN];
	const char *bc = ift_analysis_summary(base->r->a)->command;
	const char *cc = ift_analysis_summary(cur->r->a)->command;

	ift_report_totals(base->r, &b);
	ift_report_totals(cur->r, &c);
	fprintf(tx->f, "baseline   %s\n", ift_txt_safe(cmd, sizeof(cmd), bc[0] ? bc : base->name, WIDTH - 11));
	fprintf(tx->f, "current    %s\n", ift_txt_safe(cmd, sizeof(cmd), cc[0] ? cc : cur->name, WIDTH - 11));
	fprintf(tx->f, "\n");
	diff_row(tx, "", "baseline -> current");
	diff_row(tx, "wall time", fmt_change_dur(buf, sizeof(buf), b.wall_ns, c.wall_ns, true));
	diff_row(tx, "CUDA calls", fmt_change_num(buf, sizeof(buf), b.cuda_calls, c.cuda_calls));
	diff_row(tx, "time in CUDA calls", fmt_change_dur(buf, sizeof(buf), b.cuda_ns, c.cuda_ns, true));
	diff_row(tx, "on-CPU, all tasks", fmt_change_dur(buf, sizeof(buf), b.on_cpu_ns, c.on_cpu_ns,
						     true));
	diff_row(tx, "run-queue wait", fmt_change_dur(buf, sizeof(buf), b.runq_ns, c.runq_ns, true));
	diff_row(tx, "blocked", fmt_change_dur(buf, sizeof(buf), b.blocked_ns, c.blocked_ns, true));
	diff_row(tx, "involuntary switches", fmt_change_num(buf, sizeof(buf), b.invol, c.invol));
	diff_row(tx, "voluntary switches", fmt_change_num(buf, sizeof(buf), b.vol, c.vol));
	diff_row(tx, "page allocations", fmt_change_num(buf, sizeof(buf), b.pages, c.pages));
	diff_row(tx, "cost of HIGH chains", fmt_change_dur(buf, sizeof(buf), b.chain_ns[IFT_SEV_HIGH],
						       c.chain_ns[IFT_SEV_HIGH], false));
	diff_row(tx, "cost of MEDIUM chains", fmt_change_dur(buf, sizeof(buf),
							 b.chain_ns[IFT_SEV_MEDIUM],
							 c.chain_ns[IFT_SEV_MEDIUM], false));

	fprintf(tx->f, "\n");
	ift_txt_header(tx, heads, NCOLS(heads));
	pairs = ift_report_op_pairs(cur->r, base->r, &npairs);
	if (!pairs)
		return -ENOMEM;
	for (size_t i = 0; i < npairs; i++) {
		const struct ift_op_stats *x = pairs[i].cur, *y = pairs[i].base;

		ift_txt_cell(tx, ift_txt_safe(name, sizeof(name), pairs[i].name, 23), 24);
		ift_txt_cell(tx, fmt_change_num(buf, sizeof(buf), y->calls, x->calls), 17);
		ift_txt_cell(tx, fmt_change_dur(buf, sizeof(buf), y->p50_ns, x->p50_ns, false), 19);
		ift_txt_cell(tx, fmt_change_dur(buf, sizeof(buf), y->p99_ns, x->p99_ns, true), 27);
		fprintf(tx->f, "%s\n", fmt_change_dur(buf, sizeof(buf), y->total_ns, x->total_ns, false));
	}
	free(pairs);

	for (int side = 0; side < 2; side++) {
		const struct ift_report *r = side ? cur->r : base->r;
		size_t n = ift_chains_count(r->c);

		fprintf(tx->f, "\nchains, %s: %s\n", side ? "current" : "baseline", n ? "" : "none");
		for (size_t i = 0; i < n; i++) {
			const struct ift_chain *ch = ift_chains_get(r->c, i);
			int len;

			len = fprintf(tx->f, "  %-6s %s %s %s, %s: ", ift_severity_name(ch->severity),
				     ift_cause_name(ch->cause), ift_phase_name(ch->phase),
				     ift_txt_safe(name, sizeof(name), ch->op, 32),
				     ift_txt_dur(buf, sizeof(buf), ch->cost_ns));
			ift_txt_wrap(tx, len, 9, ch->summary);
		}
	}
	return 0;
}

/* ---- --diff of jobs ------------------------------------------------ */

/* "node0.trace", or "node0.trace and 3 more": the traces of a side. */
static const char *side_name(char *buf, size_t len, const struct ift_job_side *s)
{
	char cut[LINE_LEN];

	ift_txt_safe(cut, sizeof(cut), s->n ? s->in[0].path : "", 60);
	if (s->n > 1)
		snprintf(buf, len, "%s and %zu more trace%s", cut, s->n - 1, s->n > 2 ? "s" : "");
	else
		snprintf(buf, len, "%s", cut);
	return buf;
}

/* A side's first straggler in a few words, or "none". */
static const char *straggler_word(char *buf, size_t len, const struct ift_job *j)
{
	char d[32];

	if (!j || !j->nstragglers)
		return "none";
	snprintf(buf, len, "rank %d (%s, %s)", j->ranks[j->stragglers[0].rank].rank,
		 ift_txt_dur(d, sizeof(d), j->stragglers[0].cost_ns),
		 j->stragglers[0].cause ? ift_cause_name(j->stragglers[0].cause->cause) :
		 "no host cause");
	return buf;
}

int ift_out_job_text_diff(FILE *f, const struct ift_job_side *cur,
			  const struct ift_job_side *base, const struct ift_text_opts *o)
{
	static const struct column heads[] = {
		{ "rank", 8 }, { "waited", 28 }, { "late", 28 }, { "cost", 0 },
	};
	static const struct ift_job_rank none;
	struct text text = { .f = f, .width = ift_txt_width(o) }, *tx = &text;
	const struct ift_job *b = base->job, *c = cur->job;
	char buf[LINE_LEN + 64], x[64], y[64];
	int32_t world = b && c ? (b->world > c->world ? b->world : c->world) :
			b ? b->world : c ? c->world : 0;

	fprintf(tx->f, "baseline   %s\n", side_name(buf, sizeof(buf), base));
	fprintf(tx->f, "current    %s\n\n", side_name(buf, sizeof(buf), cur));
	diff_row(tx, "", "baseline -> current");
	diff_row(tx, "ranks", fmt_change_num(buf, sizeof(buf), b ? b->nranks : 0,
					     c ? c->nranks : 0));
	diff_row(tx, "collectives", fmt_change_num(buf, sizeof(buf), b ? b->collectives : 0,
						   c ? c->collectives : 0));
	diff_row(tx, "waiting in collectives",
		 fmt_change_dur(buf, sizeof(buf), b ? b->waited_ns : 0, c ? c->waited_ns : 0, true));
	snprintf(buf, sizeof(buf), "%s -> %s", straggler_word(x, sizeof(x), b),
		 straggler_word(y, sizeof(y), c));
	diff_row(tx, "first straggler", buf);
	if (!world)
		return 0;
	fprintf(tx->f, "\n");
	ift_txt_header(tx, heads, NCOLS(heads));
	for (int32_t r = 0; r < world; r++) {
		const struct ift_job_rank *p = ift_job_rank_of(b, r), *q = ift_job_rank_of(c, r);

		if (!p && !q)
			continue;
		p = p ? p : &none;
		q = q ? q : &none;
		snprintf(buf, sizeof(buf), "%d", r);
		ift_txt_cell(tx, buf, 8);
		ift_txt_cell(tx, fmt_change_dur(buf, sizeof(buf), p->waited_ns, q->waited_ns, false), 28);
		ift_txt_cell(tx, fmt_change_dur(buf, sizeof(buf), p->late_ns, q->late_ns, false), 28);
		fprintf(tx->f, "%s\n", fmt_change_dur(buf, sizeof(buf), p->cost_ns, q->cost_ns, false));
	}
	return 0;
}
