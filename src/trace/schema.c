// SPDX-License-Identifier: MIT
#include <string.h>

#include "format.h"

#define COMMON { "ts", IFT_TS }, { "cpu", IFT_U64 }, { "pid", IFT_U64 }, \
	{ "tid", IFT_U64 }

static const struct ift_column_def calls_cols[IFT_CALL_NR] = {
	COMMON, { "op", IFT_U64 }, { "dur", IFT_U64 }, { "ret", IFT_I64 },
	{ "flags", IFT_U64 }, { "depth", IFT_U64 },
	{ "a0", IFT_U64 }, { "a1", IFT_U64 }, { "a2", IFT_U64 },
	{ "a3", IFT_U64 }, { "a4", IFT_U64 }, { "a5", IFT_U64 },
	{ "stack", IFT_U64 },
};

static const struct ift_column_def switch_cols[IFT_SW_NR] = {
	COMMON, { "prev_state", IFT_U64 }, { "prev_prio", IFT_U64 },
	{ "next_pid", IFT_U64 }, { "next_tid", IFT_U64 },
	{ "next_prio", IFT_U64 },
};

static const struct ift_column_def wakeup_cols[IFT_WK_NR] = {
	COMMON, { "kind", IFT_U64 }, { "prio", IFT_U64 },
	{ "target_cpu", IFT_U64 }, { "waker_pid", IFT_U64 },
	{ "waker_tid", IFT_U64 },
};

static const struct ift_column_def page_cols[IFT_PG_NR] = {
	COMMON, { "order", IFT_U64 }, { "gfp_flags", IFT_U64 },
	{ "migratetype", IFT_U64 },
};

static const struct ift_column_def task_cols[IFT_TK_NR] = {
	COMMON, { "kind", IFT_U64 }, { "child_pid", IFT_U64 },
	{ "child_tid", IFT_U64 }, { "comm", IFT_STR }, { "file", IFT_STR },
	{ "ppid", IFT_U64 },
};

static const struct ift_column_def sample_cols[IFT_SM_NR] = {
	COMMON, { "metric", IFT_STR }, { "scope", IFT_U64 },
	{ "value", IFT_I64 },
};

static const struct ift_column_def profile_cols[IFT_PF_NR] = {
	COMMON, { "stack", IFT_U64 }, { "flags", IFT_U64 },
};

static const struct ift_column_def gpu_cols[IFT_GS_NR] = {
	COMMON, { "gpu", IFT_U64 }, { "metric", IFT_STR }, { "value", IFT_I64 },
	{ "span", IFT_U64 },
};

#define DEF(n, c) { n, sizeof(c) / sizeof(c[0]), c }
static const struct ift_table_def tables[IFT_T_NR] = {
	[IFT_T_CALLS] = DEF("calls", calls_cols),
	[IFT_T_SWITCHES] = DEF("switches", switch_cols),
	[IFT_T_WAKEUPS] = DEF("wakeups", wakeup_cols),
	[IFT_T_PAGE_ALLOCS] = DEF("page_allocs", page_cols),
	[IFT_T_TASKS] = DEF("tasks", task_cols),
	[IFT_T_SAMPLES] = DEF("samples", sample_cols),
	[IFT_T_PROFILE] = DEF("profile", profile_cols),
	[IFT_T_GPU] = DEF("gpu_samples", gpu_cols),
};

const struct ift_table_def *ift_table_def(unsigned table)
{
	if (table == 0 || table >= IFT_T_NR)
		return NULL;
	return &tables[table];
}

int ift_table_by_name(const char *name)
{
	for (unsigned t = 1; t < IFT_T_NR; t++)
		if (!strcmp(tables[t].name, name))
			return (int)t;
	return -IFT_E_NO_TABLE;
}

bool ift_arg_name_ok(const char *s, size_t len)
{
	if (!len || len > IFT_ARG_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}
