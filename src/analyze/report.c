// SPDX-License-Identifier: MIT
/* A trace's report: the analysis and the chains riding on its one pass. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ift-chains.h"

int ift_report_run(struct ift_trace *t, const struct ift_analyze_opts *aopts,
		   const struct ift_chain_opts *copts, struct ift_report *r)
{
	struct ift_analyze_opts opts = { 0 };
	int ret;

	memset(r, 0, sizeof(*r));
	if (aopts)
		opts = *aopts;
	if (!(r->c = ift_chains_new(copts)))
		return errno ? -errno : -ENOMEM;
	ift_chains_hooks(r->c, &opts.hooks);
	ret = ift_analysis_run(t, &opts, &r->a);
	if (ret >= 0)
		ret = ift_chains_build(r->c, r->a, t);
	if (ret < 0)
		ift_report_release(r);
	return ret < 0 ? ret : 0;
}

void ift_report_release(struct ift_report *r)
{
	ift_chains_free(r->c);
	ift_analysis_free(r->a);
	memset(r, 0, sizeof(*r));
}

const struct ift_site *ift_report_sites(const struct ift_report *r, size_t *n)
{
	return ift_analysis_sites(r->a, n);
}

const struct ift_py_op *ift_report_py_sites(const struct ift_report *r, size_t *n)
{
	return ift_analysis_py_sites(r->a, n);
}

bool ift_report_py(const struct ift_report *r)
{
	return ift_analysis_py(r->a);
}

void ift_report_totals(const struct ift_report *r, struct ift_report_totals *x)
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

struct ift_op_pair *ift_report_op_pairs(const struct ift_report *cur,
					const struct ift_report *base, size_t *n)
{
	static const struct ift_op_stats none;
	size_t nc = ift_analysis_op_count(cur->a), nb = ift_analysis_op_count(base->a);
	struct ift_op_pair *v = calloc(nc + nb + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < nc; i++) {
		const struct ift_op_stats *x = ift_analysis_op(cur->a, i);
		const struct ift_op_stats *y = ift_analysis_op_find(base->a, x->name);

		v[(*n)++] = (struct ift_op_pair){ x->name, x, y ? y : &none };
	}
	for (size_t i = 0; i < nb; i++) {
		const struct ift_op_stats *y = ift_analysis_op(base->a, i);

		if (!ift_analysis_op_find(cur->a, y->name))
			v[(*n)++] = (struct ift_op_pair){ y->name, &none, y };
	}
	return v;
}
