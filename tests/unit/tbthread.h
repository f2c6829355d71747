/* SPDX-License-Identifier: MIT */
#ifndef IFT_TESTS_TBTHREAD_H
#define IFT_TESTS_TBTHREAD_H
/*
 * thread(): the analysis' thread of TID in a trace of tracebuild.h, the
 * test failing where there is none; for test-analyze.c and test-roles.c.
 * Include after tracebuild.h.
 */
#include <stdint.h>

#include "ift-analyze.h"

static const struct ift_thread_info *thread(const struct tb *b, uint32_t tid)
{
	const struct ift_thread_info *t = ift_analysis_thread_find(b->a, tid);

	assert_non_null(t);
	return t;
}

#endif
