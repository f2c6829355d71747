// SPDX-License-Identifier: MIT
/* A trace's report: the analysis and the chains riding on its one pass. */
#include <errno.h>
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
