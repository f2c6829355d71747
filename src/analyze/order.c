// SPDX-License-Identifier: MIT
/*
 * The orders the outputs show things in, part of the report model, so that
 * the text, the HTML page and the MCP tools list the same rows the same way.
 */
#include <errno.h>
#include <stdlib.h>

#include "ift-analyze.h"

static const struct ift_op_stats *op_by_id(const struct ift_op_stats *ops, size_t n,
					   uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].op == id)
			return &ops[i];
	return NULL;
}

struct ift_op_row *ift_op_rows(const struct ift_op_stats *ops, size_t n)
{
	struct ift_op_row *rows = calloc(n + 1, sizeof(*rows));
	bool *done = calloc(n + 1, sizeof(*done));
	size_t k = 0;

	if (!rows || !done) {
		free(rows);
		free(done);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		/* an op only ever called inside others waits for its parent */
		if (done[i] || ops[i].nested_calls == ops[i].calls)
			continue;
		rows[k++] = (struct ift_op_row){ &ops[i], false };
		done[i] = true;
		for (size_t j = 0; j < ops[i].ninner; j++) {
			const struct ift_op_stats *in = op_by_id(ops, n, ops[i].inner[j].op);

			if (in && !done[in - ops]) {
				rows[k++] = (struct ift_op_row){ in, true };
				done[in - ops] = true;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!done[i])
			rows[k++] = (struct ift_op_row){ &ops[i], true };
	free(done);
	return rows;
}

int ift_thread_cmp_off_cpu(const void *x, const void *y)
{
	const struct ift_thread_info *p = *(const struct ift_thread_info *const *)x;
	const struct ift_thread_info *q = *(const struct ift_thread_info *const *)y;

	if (ift_sched_off_cpu(&p->sched) != ift_sched_off_cpu(&q->sched))
		return ift_sched_off_cpu(&p->sched) > ift_sched_off_cpu(&q->sched) ? -1 : 1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

int ift_thread_cmp_cuda(const void *x, const void *y)
{
	const struct ift_thread_info *p = *(const struct ift_thread_info *const *)x;
	const struct ift_thread_info *q = *(const struct ift_thread_info *const *)y;

	if (p->cuda_ns != q->cuda_ns)
		return p->cuda_ns > q->cuda_ns ? -1 : 1;
	return ift_thread_cmp_off_cpu(x, y);
}
