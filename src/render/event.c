// SPDX-License-Identifier: MIT
/* Events as text lines and as JSON objects, for `dump'. */
#include <errno.h>
#include <inttypes.h>
#include <json.h>
#include <string.h>

#include "ift-render.h"
#include "ift-words.h"

static const char *const task_events[] = {
	[IFT_TASK_FORK] = "sched_process_fork",
	[IFT_TASK_CLONE] = "sched_process_fork",
	[IFT_TASK_EXEC] = "sched_process_exec",
	[IFT_TASK_COMM] = "task_rename",
	[IFT_TASK_EXIT] = "sched_process_exit",
};

static const char *const wake_events[] = {
	[IFT_WAKE_WAKING] = "sched_waking",
	[IFT_WAKE_WAKEUP] = "sched_wakeup",
	[IFT_WAKE_WAKEUP_NEW] = "sched_wakeup_new",
};

const char *ift_event_name(const struct ift_trace *t, const struct ift_event *ev)
{
	const uint64_t *r = ev->row;
	const struct ift_op *op;

	switch (ev->table) {
	case IFT_T_CALLS:
		op = ift_trace_op(t, r[IFT_CALL_OP]);
		return op ? op->name : "unknown_op";
	case IFT_T_SWITCHES:
		return "sched_switch";
	case IFT_T_WAKEUPS:
		if (r[IFT_WK_KIND] >= IFT_WAKE_WAKING &&
		    r[IFT_WK_KIND] <= IFT_WAKE_WAKEUP_NEW)
			return wake_events[r[IFT_WK_KIND]];
		return "sched_wakeup_unknown";
	case IFT_T_PAGE_ALLOCS:
		return "mm_page_alloc";
	case IFT_T_TASKS:
		if (r[IFT_TK_KIND] >= IFT_TASK_FORK && r[IFT_TK_KIND] <= IFT_TASK_EXIT)
			return task_events[r[IFT_TK_KIND]];
		return "task_unknown";
	case IFT_T_SAMPLES:
		return "sample";
	case IFT_T_PROFILE:
		return "profile";
	case IFT_T_GPU:
		return "gpu_sample";
	}
	return "unknown";
}

static const char *str_of(const struct ift_trace *t, uint64_t id)
{
	const char *s = ift_trace_string(t, id);

	return s ? s : "?";
}

/*
 * A string from the traced program as one field of a text line
 * (IFT_TEXT_FIELD: what a terminal acts on and spaces as \xNN).  Uses one
 * of two rotating buffers, so two calls can feed one printf.
 */
static const char *printable(const char *s)
{
	static char bufs[2][1024];
	static int which;

	return ift_text(bufs[which ^= 1], sizeof(bufs[0]), s, IFT_TEXT_FIELD);
}

int ift_out_event_text(FILE *f, const struct ift_trace *t,
		       const struct ift_event *ev)
{
	const uint64_t *r = ev->row;
	uint64_t ts = r[IFT_C_TS];
	char st[32];

	fprintf(f, "%16s-%-7" PRIu64 " %7" PRIu64 " [%03" PRIu64 "] %" PRIu64 ".%09" PRIu64 ": %s:",
		printable(ift_trace_comm(t, (uint32_t)r[IFT_C_TID], ts)), r[IFT_C_TID], r[IFT_C_PID],
		r[IFT_C_CPU], ts / 1000000000, ts % 1000000000,
		printable(ift_event_name(t, ev)));
	switch (ev->table) {
	case IFT_T_CALLS: {
		const struct ift_op *op = ift_trace_op(t, r[IFT_CALL_OP]);

		fprintf(f, " dur=%" PRIu64 " ret=%" PRId64, r[IFT_CALL_DUR],
			(int64_t)r[IFT_CALL_RET]);
		/* sizes, kinds and counts read best in decimal, addresses in hex */
		for (unsigned a = 0; op && a < op->nargs; a++)
			fprintf(f, r[IFT_CALL_A0 + a] >> 32 ? " %s=0x%" PRIx64 : " %s=%" PRIu64,
				printable(op->args[a]), r[IFT_CALL_A0 + a]);
		if (r[IFT_CALL_DEPTH])
			fprintf(f, " depth=%" PRIu64, r[IFT_CALL_DEPTH]);
		if (r[IFT_CALL_FLAGS] & IFT_CALL_F_NO_RETURN)
			fputs(" no_return", f);
		if (r[IFT_CALL_STACK])
			fprintf(f, " stack=%" PRIu64, r[IFT_CALL_STACK]);
		break;
	case IFT_T_PROFILE:
		fprintf(f, " stack=%" PRIu64 "%s", r[IFT_PF_STACK],
			r[IFT_PF_FLAGS] & IFT_PF_F_KERNEL ? " kernel" : "");
		break;
	}
	case IFT_T_SWITCHES:
		fprintf(f, " prev_state=%s prev_prio=%" PRIu64 " ==> next=%s:%" PRIu64 " next_prio=%" PRIu64,
			ift_task_state_str(r[IFT_SW_PREV_STATE], st, sizeof(st)),
			r[IFT_SW_PREV_PRIO], printable(ift_trace_comm(t, (uint32_t)r[IFT_SW_NEXT_TID], ts)),
			r[IFT_SW_NEXT_TID], r[IFT_SW_NEXT_PRIO]);
		break;
	case IFT_T_WAKEUPS:
		fprintf(f, " prio=%" PRIu64 " target_cpu=%03" PRIu64 " waker=%s:%" PRIu64,
			r[IFT_WK_PRIO], r[IFT_WK_TARGET_CPU],
			printable(ift_trace_comm(t, (uint32_t)r[IFT_WK_WAKER_TID], ts)), r[IFT_WK_WAKER_TID]);
		break;
	case IFT_T_PAGE_ALLOCS:
		fprintf(f, " order=%" PRIu64 " gfp_flags=0x%" PRIx64 " migratetype=%" PRIu64,
			r[IFT_PG_ORDER], r[IFT_PG_GFP], r[IFT_PG_MIGRATETYPE]);
		break;
	case IFT_T_TASKS:
		if (r[IFT_TK_CHILD_TID])
			fprintf(f, " child=%s:%" PRIu64 " child_pid=%" PRIu64,
				printable(str_of(t, r[IFT_TK_COMM])), r[IFT_TK_CHILD_TID],
				r[IFT_TK_CHILD_PID]);
		else if (r[IFT_TK_COMM])
			fprintf(f, " comm=%s", printable(str_of(t, r[IFT_TK_COMM])));
		if (r[IFT_TK_FILE])
			fprintf(f, " file=%s", printable(str_of(t, r[IFT_TK_FILE])));
		if (r[IFT_TK_PPID])
			fprintf(f, " ppid=%" PRIu64, r[IFT_TK_PPID]);
		break;
	case IFT_T_SAMPLES:
		fprintf(f, " %s[%s%" PRIu64 "]=%" PRId64, printable(str_of(t, r[IFT_SM_METRIC])),
			r[IFT_SM_SCOPE] ? "cpu" : "all", r[IFT_SM_SCOPE] ? r[IFT_SM_SCOPE] - 1 : 0,
			(int64_t)r[IFT_SM_VALUE]);
		break;
	case IFT_T_GPU:
		fprintf(f, " gpu%" PRIu64 " %s=%" PRId64, r[IFT_GS_GPU],
			printable(str_of(t, r[IFT_GS_METRIC])), (int64_t)r[IFT_GS_VALUE]);
		if (r[IFT_GS_SPAN])
			fprintf(f, " span=%" PRIu64, r[IFT_GS_SPAN]);
		break;
	}
	fputc('\n', f);
	return ferror(f) ? ift_write_error() : 0;
}

/* "stack_id" and "stack" of O: site ID's frames in the order of its call
   chain; a site missing from a cut-short file is only its id. */
static void add_stack(json_object *o, const struct ift_trace *t, uint64_t id)
{
	const struct ift_stack *sk = ift_trace_stack(t, id);
	struct json_object *a = json_object_new_array();
	struct ift_stack_parts parts;
	char buf[512];

	ift_stack_parts(sk, &parts);
	for (unsigned k = 0; a && k < parts.nframes; k++) {
		ift_frame_format(&sk->frames[ift_stack_chain_index(&parts, k)], buf, sizeof(buf));
		json_object_array_add(a, ift_json_text(buf));
	}
	ift_json_add_u64(o, "stack_id", id);
	if (a)
		json_object_object_add(o, "stack", a);
}

json_object *ift_event_json(const struct ift_trace *t, const struct ift_event *ev)
{
	const uint64_t *r = ev->row;
	uint64_t ts = r[IFT_C_TS];
	json_object *o = json_object_new_object();
	char st[32];

	if (!o)
		return NULL;
	ift_json_add_u64(o, "ts", ts);
	ift_json_add_u64(o, "cpu", r[IFT_C_CPU]);
	ift_json_add_u64(o, "pid", r[IFT_C_PID]);
	ift_json_add_u64(o, "tid", r[IFT_C_TID]);
	ift_json_add_text(o, "comm", ift_trace_comm(t, (uint32_t)r[IFT_C_TID], ts));
	ift_json_add_text(o, "event", ift_event_name(t, ev));
	switch (ev->table) {
	case IFT_T_CALLS: {
		const struct ift_op *op = ift_trace_op(t, r[IFT_CALL_OP]);

		ift_json_add_text(o, "api", ift_api_name(op ? op->api : IFT_API_RUNTIME));
		ift_json_add_u64(o, "dur_ns", r[IFT_CALL_DUR]);
		ift_json_add_i64(o, "ret", (int64_t)r[IFT_CALL_RET]);
		ift_json_add_u64(o, "depth", r[IFT_CALL_DEPTH]);
		if (r[IFT_CALL_FLAGS] & IFT_CALL_F_NESTED)
			json_object_object_add(o, "nested", json_object_new_boolean(1));
		if (r[IFT_CALL_FLAGS] & IFT_CALL_F_NO_RETURN)
			json_object_object_add(o, "no_return", json_object_new_boolean(1));
		for (unsigned a = 0; op && a < op->nargs; a++) {
			char key[80];

			/* names come from the file: never overwrite a field */
			if (json_object_object_get_ex(o, op->args[a], NULL) ||
			    !op->args[a][0]) {
				snprintf(key, sizeof(key), "arg_%s", op->args[a]);
				ift_json_add_u64(o, key, r[IFT_CALL_A0 + a]);
			} else {
				ift_json_add_u64(o, op->args[a], r[IFT_CALL_A0 + a]);
			}
		}
		if (r[IFT_CALL_STACK])
			add_stack(o, t, r[IFT_CALL_STACK]);
		break;
	}
	case IFT_T_PROFILE:
		json_object_object_add(o, "kernel", json_object_new_boolean(
				       !!(r[IFT_PF_FLAGS] & IFT_PF_F_KERNEL)));
		if (r[IFT_PF_STACK])
			add_stack(o, t, r[IFT_PF_STACK]);
		break;
	case IFT_T_SWITCHES:
		ift_json_add_text(o, "prev_state", ift_task_state_str(r[IFT_SW_PREV_STATE], st, sizeof(st)));
		ift_json_add_u64(o, "prev_prio", r[IFT_SW_PREV_PRIO]);
		ift_json_add_u64(o, "next_pid", r[IFT_SW_NEXT_PID]);
		ift_json_add_u64(o, "next_tid", r[IFT_SW_NEXT_TID]);
		ift_json_add_text(o, "next_comm", ift_trace_comm(t, (uint32_t)r[IFT_SW_NEXT_TID], ts));
		ift_json_add_u64(o, "next_prio", r[IFT_SW_NEXT_PRIO]);
		break;
	case IFT_T_WAKEUPS:
		ift_json_add_u64(o, "prio", r[IFT_WK_PRIO]);
		ift_json_add_u64(o, "target_cpu", r[IFT_WK_TARGET_CPU]);
		ift_json_add_u64(o, "waker_pid", r[IFT_WK_WAKER_PID]);
		ift_json_add_u64(o, "waker_tid", r[IFT_WK_WAKER_TID]);
		break;
	case IFT_T_PAGE_ALLOCS:
		ift_json_add_u64(o, "order", r[IFT_PG_ORDER]);
		ift_json_add_u64(o, "bytes", ift_trace_alloc_bytes(t, r[IFT_PG_ORDER]));
		ift_json_add_u64(o, "gfp_flags", r[IFT_PG_GFP]);
		ift_json_add_u64(o, "migratetype", r[IFT_PG_MIGRATETYPE]);
		break;
	case IFT_T_TASKS:
		if (r[IFT_TK_KIND] == IFT_TASK_FORK || r[IFT_TK_KIND] == IFT_TASK_CLONE) {
			ift_json_add_u64(o, "child_pid", r[IFT_TK_CHILD_PID]);
			ift_json_add_u64(o, "child_tid", r[IFT_TK_CHILD_TID]);
			json_object_object_add(o, "thread", json_object_new_boolean(
					       r[IFT_TK_KIND] == IFT_TASK_CLONE));
			ift_json_add_text(o, "child_comm", str_of(t, r[IFT_TK_COMM]));
		} else if (r[IFT_TK_COMM]) {
			ift_json_add_text(o, "new_comm", str_of(t, r[IFT_TK_COMM]));
		}
		if (r[IFT_TK_FILE])
			ift_json_add_text(o, "filename", str_of(t, r[IFT_TK_FILE]));
		if (r[IFT_TK_PPID])
			ift_json_add_u64(o, "ppid", r[IFT_TK_PPID]);
		break;
	case IFT_T_SAMPLES:
		ift_json_add_text(o, "metric", str_of(t, r[IFT_SM_METRIC]));
		if (r[IFT_SM_SCOPE])
			ift_json_add_u64(o, "scope_cpu", r[IFT_SM_SCOPE] - 1);
		else
			ift_json_add_text(o, "scope", "system");
		ift_json_add_i64(o, "value", (int64_t)r[IFT_SM_VALUE]);
		break;
	case IFT_T_GPU:
		ift_json_add_u64(o, "gpu", r[IFT_GS_GPU]);
		ift_json_add_text(o, "metric", str_of(t, r[IFT_GS_METRIC]));
		ift_json_add_i64(o, "value", (int64_t)r[IFT_GS_VALUE]);
		ift_json_add_u64(o, "span_ns", r[IFT_GS_SPAN]);
		break;
	}
	return o;
}

int ift_out_event_json(FILE *f, const struct ift_trace *t,
		       const struct ift_event *ev)
{
	json_object *o = ift_event_json(t, ev);
	int ret = 0;

	if (!o)
		return -ENOMEM;
	if (fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE), f) < 0 ||
	    fputc('\n', f) == EOF)
		ret = -EIO;
	json_object_put(o);
	return ret;
}
