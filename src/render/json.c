// SPDX-License-Identifier: MIT
/*
 * The analysis and the chains as json-c objects: `report --json' prints
 * them whole, and the MCP server (src/mcp/) hands out parts of them, so both
 * say the same numbers under the same keys (docs/report.md lists every key).
 */
#include <errno.h>
#include <json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-job.h"
#include "ift-render.h"
#include "ift-words.h"

static const char *const dir_names[IFT_COPY_NR] = {
	"H2H", "H2D", "D2H", "D2D", "default", "other",
};

const char *ift_copy_dir_name(int dir)
{
	return dir >= 0 && dir < IFT_COPY_NR ? dir_names[dir] : "other";
}

const char *ift_thread_comm(const struct ift_thread_info *t)
{
	return t->task && t->task->ncomms ? t->task->comms[t->task->ncomms - 1].comm : "";
}

/* LEN bytes at S under RULE as a JSON string (ift_text_utf8()). */
static json_object *json_text(const char *s, size_t len, enum ift_text_rule rule)
{
	char *copy;
	const char *t = ift_text_utf8(s, len, rule, &copy);
	json_object *o;

	if (!t)
		return NULL;
	o = json_object_new_string_len(t, (int)(copy ? strlen(copy) : len));
	free(copy);
	return o;
}

json_object *ift_json_text(const char *s)
{
	return s ? json_text(s, strlen(s), IFT_TEXT_UTF8) : NULL;
}

json_object *ift_json_text_len(const char *s, size_t len)
{
	return s && len <= INT32_MAX ? json_text(s, len, IFT_TEXT_UTF8_ALL) : NULL;
}

void ift_json_add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void ift_json_add_i64(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void ift_json_add_text(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, ift_json_text(v));
}

/* A key and its count, for add_u64s(). */
struct json_u64 {
	const char *key;
	uint64_t v;
};

static void add_u64_list(json_object *o, const struct json_u64 *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ift_json_add_u64(o, kv[i].key, kv[i].v);
}

/*
 * add_u64s(O, { "key", value }, ...): a struct's counters into O in the
 * order given, the keys beside their fields in one list.
 */
#define add_u64s(o, ...)						\
	add_u64_list(o, (const struct json_u64[]){ __VA_ARGS__ },		\
		     sizeof((const struct json_u64[]){ __VA_ARGS__ }) /	\
		     sizeof(struct json_u64))

/*
 * The calls and latency of op S into O, key for key as `ops' has them;
 * BRIEF leaves out what only the op object itself has (nested_calls,
 * error_codes, min_ns): get_op_latency's row of a process.
 */
static void json_op_latency(json_object *o, const struct ift_op_stats *s, bool brief)
{
	json_object *v;

	ift_json_add_u64(o, "calls", s->calls);
	if (!brief)
		ift_json_add_u64(o, "nested_calls", s->nested_calls);
	ift_json_add_u64(o, "errors", s->errors);
	if (!brief) {
		v = json_object_new_array();
		for (size_t k = 0; k < s->nerrs; k++) {
			json_object *e = json_object_new_object();

			ift_json_add_i64(e, "ret", s->errs[k].ret);
			ift_json_add_u64(e, "calls", s->errs[k].calls);
			json_object_array_add(v, e);
		}
		json_object_object_add(o, "error_codes", v);
	}
	ift_json_add_u64(o, "total_ns", s->total_ns);
	ift_json_add_u64(o, "mean_ns", s->mean_ns);
	if (!brief)
		ift_json_add_u64(o, "min_ns", s->min_ns);
	ift_json_add_u64(o, "p50_ns", s->p50_ns);
	ift_json_add_u64(o, "p95_ns", s->p95_ns);
	ift_json_add_u64(o, "p99_ns", s->p99_ns);
	ift_json_add_u64(o, "max_ns", s->max_ns);
}

void ift_json_op_latency(json_object *o, const struct ift_op_stats *s)
{
	json_op_latency(o, s, true);
}

/* Per direction: the calls, bytes, time and bandwidth of copy op S. */
static json_object *json_copies(const struct ift_op_stats *s)
{
	json_object *v = json_object_new_array();

	for (int d = 0; s->copy && d < IFT_COPY_NR; d++) {
		const struct ift_copy_stats *c = &s->dir[d];
		json_object *e;

		if (!c->calls)
			continue;
		e = json_object_new_object();
		ift_json_add_text(e, "direction", ift_copy_dir_name(d));
		ift_json_add_u64(e, "calls", c->calls);
		ift_json_add_u64(e, "bytes", c->bytes);
		ift_json_add_u64(e, "total_ns", c->total_ns);
		json_object_object_add(e, "bytes_per_s", json_object_new_double(
			c->total_ns ? (double)c->bytes * 1e9 / (double)c->total_ns : 0));
		json_object_array_add(v, e);
	}
	return v;
}

json_object *ift_json_ops(const struct ift_op_stats *ops, size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		const struct ift_op_stats *s = &ops[i];
		json_object *o = json_object_new_object(), *v;

		ift_json_add_text(o, "op", s->name);
		ift_json_add_text(o, "api", ift_api_name(s->api));
		json_op_latency(o, s, false);
		ift_json_add_u64(o, "bytes", s->bytes);
		json_object_object_add(o, "wall_share", json_object_new_double(
			s->callers_wall_ns ? (double)s->total_ns / (double)s->callers_wall_ns : 0));
		json_object_object_add(o, "copies", json_copies(s));
		v = json_object_new_array();
		for (size_t k = 0; k < s->ninner; k++) {
			json_object *e = json_object_new_object();

			ift_json_add_text(e, "op", s->inner[k].name);
			ift_json_add_u64(e, "calls", s->inner[k].calls);
			ift_json_add_u64(e, "total_ns", s->inner[k].total_ns);
			json_object_array_add(v, e);
		}
		json_object_object_add(o, "nested", v);
		json_object_array_add(arr, o);
	}
	return arr;
}

void ift_json_sched(json_object *o, const struct ift_sched_stats *s)
{
	add_u64s(o, { "on_cpu_ns", s->on_cpu_ns },
		 { "context_switches", s->involuntary + s->voluntary },
		 { "involuntary_switches", s->involuntary },
		 { "voluntary_switches", s->voluntary },
		 { "runqueue_wait_ns", s->runqueue_wait_ns }, { "blocked_ns", s->blocked_ns },
		 { "blocked_io_ns", s->blocked_io_ns }, { "max_off_cpu_ns", s->max_off_cpu_ns },
		 { "max_off_cpu_at_ns", s->max_off_cpu_at }, { "wakeups", s->wakeups },
		 { "page_allocs", s->page_allocs }, { "page_alloc_bytes", s->page_alloc_bytes });
}

/* Why a task has its role (docs/report.md, "Roles"); null without one. */
json_object *ift_json_role_evidence(const struct ift_role_evidence *ev)
{
	json_object *o;

	if (!ev)
		return NULL;
	o = json_object_new_object();
	ift_json_add_text(o, "behaviour", ev->behaviour);
	add_u64s(o, { "cuda_tid", ev->cuda_tid }, { "cuda_pid", ev->cuda_pid },
		 { "wakeups", ev->wakeups }, { "ns", ev->ns },
		 { "relayed_wakeups", ev->relayed_wakeups }, { "via_tid", ev->via_tid },
		 { "from_pid", ev->from_pid }, { "calls", ev->calls },
		 { "forked_from", ev->forked_from });
	ift_json_add_text(o, "name", ev->name);
	return o;
}

static json_object *json_loop(const struct ift_loop_info *l)
{
	json_object *o;

	if (!l->calls)
		return NULL;
	o = json_object_new_object();
	add_u64s(o, { "calls", l->calls }, { "period", l->period },
		 { "iterations", l->iterations }, { "warmup", l->warmup },
		 { "from_ns", l->from_ns }, { "to_ns", l->to_ns });
	return o;
}

static json_object *json_names(const struct ift_task *task)
{
	json_object *arr = json_object_new_array();

	for (unsigned i = 0; task && i < task->ncomms; i++)
		json_object_array_add(arr, ift_json_text(task->comms[i].comm));
	return arr;
}

/* What a thread and a process both end with: the scheduler's, then CUDA's. */
static void json_task_figures(json_object *o, const struct ift_sched_stats *s,
			      uint64_t cuda_calls, uint64_t cuda_ns,
			      const struct ift_op_stats *ops, size_t nops)
{
	ift_json_sched(o, s);
	ift_json_add_u64(o, "cuda_calls", cuda_calls);
	ift_json_add_u64(o, "cuda_ns", cuda_ns);
	json_object_object_add(o, "ops", ift_json_ops(ops, nops));
}

json_object *ift_json_thread(const struct ift_thread_info *t)
{
	json_object *o = json_object_new_object();

	ift_json_add_u64(o, "tid", t->tid);
	ift_json_add_text(o, "comm", ift_thread_comm(t));
	json_object_object_add(o, "names", json_names(t->task));
	ift_json_add_text(o, "role", ift_role_name(t->role));
	json_object_object_add(o, "role_evidence", ift_json_role_evidence(t->role_evidence));
	json_object_object_add(o, "loop", json_loop(&t->loop));
	ift_json_add_u64(o, "start_ns", t->start_ns);
	ift_json_add_u64(o, "end_ns", t->end_ns);
	json_object_object_add(o, "started", json_object_new_boolean(t->started));
	json_object_object_add(o, "exited", json_object_new_boolean(t->exited));
	ift_json_add_u64(o, "first_seen_ns", t->first_ns);
	ift_json_add_u64(o, "last_seen_ns", t->last_ns);
	json_task_figures(o, &t->sched, t->cuda_calls, t->cuda_ns, t->ops, t->nops);
	return o;
}

json_object *ift_json_process(const struct ift_process_info *p)
{
	json_object *o = json_object_new_object(), *v;

	ift_json_add_u64(o, "pid", p->pid);
	ift_json_add_u64(o, "ppid", p->ppid);
	ift_json_add_text(o, "comm", p->comm);
	v = json_object_new_array();
	for (size_t i = 0; i < p->nnames; i++)
		json_object_array_add(v, ift_json_text(p->names[i]));
	json_object_object_add(o, "names", v);
	ift_json_add_text(o, "role", ift_role_name(p->role));
	json_object_object_add(o, "role_evidence", ift_json_role_evidence(p->role_evidence));
	ift_json_add_u64(o, "start_ns", p->start_ns);
	ift_json_add_u64(o, "end_ns", p->end_ns);
	v = json_object_new_array();
	for (size_t i = 0; i < p->nthreads; i++)
		json_object_array_add(v, ift_json_thread(p->threads[i]));
	json_object_object_add(o, "threads", v);
	json_task_figures(o, &p->sched, p->cuda_calls, p->cuda_ns, p->ops, p->nops);
	/* only a process the profile sampled has the key */
	if (p->profile)
		json_object_object_add(o, "profile", ift_json_prof_group(p->profile, SIZE_MAX));
	return o;
}

/* A stack's frames as text, innermost first, Python frames where they
   called the native ones (ift_stack_parts()); none for a site the file
   lacks (a recording cut short). */
static json_object *json_frames(const struct ift_stack *st)
{
	json_object *f = json_object_new_array();
	struct ift_stack_parts p;
	char line[512];

	ift_stack_parts(st, &p);
	for (unsigned k = 0; k < p.nframes; k++) {
		ift_frame_format(&st->frames[ift_stack_chain_index(&p, k)], line, sizeof(line));
		json_object_array_add(f, ift_json_text(line));
	}
	return f;
}

/* A Python frame's keys: file (as recorded), function, line (null: none),
   and the frame as text. */
static void add_py_frame(json_object *o, const struct ift_frame *f)
{
	char line[512];

	ift_frame_format(f, line, sizeof(line));
	ift_json_add_text(o, "file", f->module);
	ift_json_add_text(o, "function", f->symbol);
	json_object_object_add(o, "line", f->offset ? json_object_new_uint64(f->offset) : NULL);
	ift_json_add_text(o, "frame", line);
}

static json_object *json_gpu_time(const struct ift_gpu_time *t)
{
	json_object *o = json_object_new_object();

	ift_json_add_u64(o, "covered_ns", t->covered_ns);
	ift_json_add_u64(o, "busy_ns", t->busy_ns);
	return o;
}

json_object *ift_json_chain(const struct ift_chain *ch)
{
	json_object *o = json_object_new_object(), *v, *e, *x;

	ift_json_add_text(o, "severity", ift_severity_name(ch->severity));
	ift_json_add_text(o, "cause", ift_cause_name(ch->cause));
	ift_json_add_text(o, "phase", ift_phase_name(ch->phase));
	ift_json_add_text(o, "stage", ift_stage_name(ch->stage));
	ift_json_add_text(o, "op", ch->op);
	ift_json_add_u64(o, "pid", ch->pid);
	ift_json_add_u64(o, "tid", ch->tid);
	ift_json_add_u64(o, "p50_ns", ch->p50_ns);
	ift_json_add_u64(o, "p99_ns", ch->p99_ns);
	json_object_object_add(o, "tail_ratio", json_object_new_double(ch->tail_ratio));
	ift_json_add_u64(o, "cost_ns", ch->cost_ns);
	ift_json_add_u64(o, "wall_ns", ch->wall_ns);
	ift_json_add_text(o, "summary", ch->summary);
	v = json_object_new_array();
	for (size_t i = 0; i < ch->nsteps; i++) {
		x = json_object_new_object();
		ift_json_add_u64(x, "t_ns", ch->steps[i].t_ns);
		ift_json_add_text(x, "layer", ch->steps[i].layer);
		ift_json_add_text(x, "text", ch->steps[i].text);
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "timeline", v);
	e = json_object_new_object();
	for (size_t i = 0; i < ch->nnums; i++)
		ift_json_add_u64(e, ch->nums[i].key, ch->nums[i].value);
	v = json_object_new_array();
	for (size_t i = 0; i < ch->ntasks; i++) {
		const struct ift_chain_task *t = &ch->tasks[i];

		x = json_object_new_object();
		ift_json_add_text(x, "relation", t->relation);
		ift_json_add_u64(x, "pid", t->pid);
		ift_json_add_u64(x, "tid", t->tid);
		ift_json_add_text(x, "comm", t->comm);
		if (t->role)
			ift_json_add_text(x, "role", ift_role_name(t->role));
		else
			json_object_object_add(x, "role", NULL);
		json_object_object_add(x, "role_evidence",
				       ift_json_role_evidence(t->role_evidence));
		json_object_object_add(x, "outside", json_object_new_boolean(t->outside));
		ift_json_add_u64(x, "count", t->count);
		ift_json_add_u64(x, "ns", t->ns);
		ift_json_add_u64(x, "share_permille", t->share_permille);
		json_object_array_add(v, x);
	}
	json_object_object_add(e, "tasks", v);
	json_object_object_add(o, "evidence", e);
	v = json_object_new_array();
	for (size_t i = 0; i < ch->nrecs; i++)
		json_object_array_add(v, ift_json_text(ch->recs[i]));
	json_object_object_add(o, "recommendations", v);
	v = json_object_new_array();
	for (size_t i = 0; i < ch->nsites; i++) {
		const struct ift_chain_site *cs = &ch->sites[i];

		x = json_object_new_object();
		ift_json_add_u64(x, "stack_id", cs->stack);
		ift_json_add_u64(x, "calls", cs->calls);
		ift_json_add_u64(x, "cost_ns", cs->cost_ns);
		ift_json_add_u64(x, "share_permille", cs->share_permille);
		json_object_object_add(x, "frames", json_frames(cs->frames));
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "sites", v);
	/* only a chain of a trace with NVML's samples has the key */
	if (ch->gpu.measured) {
		x = json_object_new_object();
		ift_json_add_u64(x, "idle_ns", ch->gpu.idle_ns);
		ift_json_add_u64(x, "idle_permille", ch->gpu.idle_permille);
		json_object_object_add(x, "meanwhile", json_gpu_time(&ch->gpu.meanwhile));
		json_object_object_add(x, "not_waiting", json_object_new_boolean(ch->gpu.not_waiting));
		json_object_object_add(o, "gpu", x);
	}
	/* only a chain whose fix spoke of a profiled group has the key */
	if (ch->profile)
		json_object_object_add(o, "profile", ift_json_prof_group(ch->profile, SIZE_MAX));
	if (!ch->py)
		return o;
	ift_json_add_u64(o, "site_calls", ch->site_calls);
	ift_json_add_u64(o, "py_calls", ch->py_calls);
	v = json_object_new_array();
	for (size_t i = 0; i < ch->npy_sites; i++) {
		const struct ift_chain_py_site *ps = &ch->py_sites[i];

		x = json_object_new_object();
		add_py_frame(x, ps->frame);
		ift_json_add_u64(x, "stack_id", ps->stack);
		ift_json_add_u64(x, "calls", ps->calls);
		ift_json_add_u64(x, "cost_ns", ps->cost_ns);
		ift_json_add_u64(x, "share_permille", ps->share_permille);
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "py_sites", v);
	return o;
}

json_object *ift_json_chains(const struct ift_chains *c)
{
	json_object *v = json_object_new_array();

	for (size_t i = 0; i < ift_chains_count(c); i++)
		json_object_array_add(v, ift_json_chain(ift_chains_get(c, i)));
	return v;
}

json_object *ift_json_site(const struct ift_trace *t, const struct ift_site *s)
{
	json_object *o = json_object_new_object();

	ift_json_add_text(o, "op", s->op);
	ift_json_add_u64(o, "stack_id", s->stack);
	ift_json_add_u64(o, "calls", s->calls);
	ift_json_add_u64(o, "total_ns", s->total_ns);
	ift_json_add_u64(o, "tail_calls", s->tail_calls);
	ift_json_add_u64(o, "tail_ns", s->tail_ns);
	json_object_object_add(o, "share_calls", json_object_new_double(s->share_calls));
	json_object_object_add(o, "share_time", json_object_new_double(s->share_time));
	json_object_object_add(o, "share_tail", json_object_new_double(s->share_tail));
	json_object_object_add(o, "frames", json_frames(ift_trace_stack(t, s->stack)));
	return o;
}

json_object *ift_json_sites(const struct ift_trace *t, const struct ift_site *v, size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, ift_json_site(t, &v[i]));
	return arr;
}

json_object *ift_json_py_site(const struct ift_trace *t, const struct ift_py_site *s)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array();
	const struct ift_stack *st = ift_trace_stack(t, s->stack);
	struct ift_stack_parts p;
	char line[512];

	add_py_frame(o, s->frame);
	add_u64s(o, { "calls", s->calls }, { "total_ns", s->total_ns },
		 { "tail_calls", s->tail_calls }, { "tail_ns", s->tail_ns });
	json_object_object_add(o, "share_time", json_object_new_double(s->share_time));
	ift_json_add_u64(o, "stack_id", s->stack);
	ift_json_add_u64(o, "stacks", s->stacks);
	/* the Python frames that called it, in its largest site */
	ift_stack_parts(st, &p);
	for (unsigned k = p.native + 1; k < p.nframes; k++) {
		ift_frame_format(&st->frames[k], line, sizeof(line));
		json_object_array_add(v, ift_json_text(line));
	}
	json_object_object_add(o, "callers", v);
	return o;
}

json_object *ift_json_py_op(const struct ift_trace *t, const struct ift_py_op *op,
			    size_t limit)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array();

	ift_json_add_text(o, "op", op->op);
	add_u64s(o, { "calls", op->calls }, { "calls_with_stack", op->stack_calls },
		 { "in_flight", op->in_flight }, { "in_flight_ns", op->in_flight_ns },
		 { "late", op->late }, { "sites_total", op->all_sites });
	for (size_t i = 0; i < op->nsites && i < limit; i++)
		json_object_array_add(v, ift_json_py_site(t, &op->sites[i]));
	json_object_object_add(o, "sites", v);
	return o;
}

json_object *ift_json_py_ops(const struct ift_trace *t, const struct ift_py_op *v, size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, ift_json_py_op(t, &v[i], SIZE_MAX));
	return arr;
}

json_object *ift_json_gpu(const struct ift_analysis *a, const struct ift_chains *c)
{
	const struct ift_gpu_use *g = ift_analysis_gpu(a);
	json_object *o = json_object_new_object(), *v = json_object_new_array(), *st, *x;

	json_object_object_add(o, "measured", json_object_new_boolean(g->measured));
	ift_json_add_text(o, "reason", g->reason);
	ift_json_add_text(o, "util_source", g->source);
	ift_json_add_u64(o, "steady_from_ns", g->steady_from_ns);
	ift_json_add_u64(o, "steady_to_ns", g->steady_to_ns);
	ift_json_add_u64(o, "iterations", g->iterations);
	/* the counted GPUs' time by stage, and the chains' share of its idle */
	st = json_object_new_object();
	for (int k = IFT_STAGE_STARTUP; k <= IFT_STAGE_TAIL; k++) {
		struct ift_gpu_idle idle;

		ift_chains_gpu_idle(c, (enum ift_stage)k, &idle);
		x = json_gpu_time(&g->counted[k]);
		ift_json_add_u64(x, "idle_ns", idle.idle_ns);
		ift_json_add_u64(x, "explained_ns", idle.explained_ns);
		ift_json_add_u64(x, "unexplained_ns", idle.unexplained_ns);
		json_object_object_add(st, ift_stage_name((enum ift_stage)k), x);
	}
	json_object_object_add(o, "stages", st);
	for (size_t i = 0; i < g->ngpus; i++) {
		const struct ift_gpu_info *y = &g->gpus[i];
		json_object *e = json_object_new_object();

		ift_json_add_u64(e, "gpu", y->gpu);
		ift_json_add_text(e, "name", y->name);
		json_object_object_add(e, "used", json_object_new_boolean(y->used));
		json_object_object_add(e, "counted", json_object_new_boolean(y->counted));
		json_object_object_add(e, "window", json_gpu_time(&y->window));
		st = json_object_new_object();
		for (int k = IFT_STAGE_STARTUP; k <= IFT_STAGE_TAIL; k++)
			json_object_object_add(st, ift_stage_name((enum ift_stage)k),
					       json_gpu_time(&y->stage[k]));
		json_object_object_add(e, "stages", st);
		json_object_array_add(v, e);
	}
	json_object_object_add(o, "gpus", v);
	return o;
}

json_object *ift_json_report(const struct ift_analysis *a,
			     const struct ift_chains *chains)
{
	const struct ift_analysis_summary *s = ift_analysis_summary(a);
	json_object *root = json_object_new_object(), *o, *v;

	o = json_object_new_object();
	ift_json_add_text(o, "command", s->command);
	ift_json_add_u64(o, "pieces", s->pieces);
	ift_json_add_u64(o, "start_ts", s->start_ts);
	ift_json_add_u64(o, "duration_ns", s->duration_ns);
	ift_json_add_u64(o, "from_ns", s->from_ns);
	ift_json_add_u64(o, "to_ns", s->to_ns);
	ift_json_add_u64(o, "events", s->events);
	ift_json_add_u64(o, "calls", s->calls);
	ift_json_add_u64(o, "host_events", s->host_events);
	ift_json_add_u64(o, "lost_events", s->lost_events);
	ift_json_add_u64(o, "cpus", s->cpus);
	json_object_object_add(o, "page_fault_ns", s->page_fault_ns ?
			       json_object_new_uint64(s->page_fault_ns) : NULL);
	json_object_object_add(o, "probe_ns", s->probe_ns ?
			       json_object_new_uint64(s->probe_ns) : NULL);
	ift_json_add_text(o, "page_allocs", s->page_allocs_counted ? "count" : "rows");
	ift_json_add_u64(o, "page_count_dropped", s->page_count_dropped);
	json_object_object_add(root, "trace", o);
	json_object_object_add(root, "gpu", ift_json_gpu(a, chains));
	json_object_object_add(root, "ops", ift_json_ops(ift_analysis_op(a, 0),
						     ift_analysis_op_count(a)));
	v = json_object_new_array();
	for (size_t i = 0; i < ift_analysis_process_count(a); i++)
		json_object_array_add(v, ift_json_process(ift_analysis_process(a, i)));
	json_object_object_add(root, "processes", v);
	json_object_object_add(root, "chains", ift_json_chains(chains));
	return root;
}


/* The job J of the traces IN as `report --json''s "job" object. */
json_object *ift_json_job(const struct ift_job *j, const struct ift_job_input *in)
{
	json_object *o = json_object_new_object(), *v, *x;

	json_object_object_add(o, "world", json_object_new_int(j->world));
	add_u64s(o, { "ranks", j->nranks }, { "traces", j->ntraces },
		 { "collectives", j->collectives }, { "unmatched", j->unmatched },
		 { "waited_ns", j->waited_ns });
	v = json_object_new_array();
	for (size_t i = 0; i < j->ntraces; i++) {
		const struct ift_job_clock *c = &j->clocks[i];

		x = json_object_new_object();
		ift_json_add_text(x, "path", in[i].path);
		ift_json_add_text(x, "host", c->host);
		ift_json_add_i64(x, "wall_offset_ns", c->wall_offset_ns);
		ift_json_add_i64(x, "shift_ns", c->shift_ns);
		json_object_object_add(x, "refined", json_object_new_boolean(c->refined));
		if (c->refined) {
			ift_json_add_i64(x, "lo_ns", c->lo_ns);
			ift_json_add_i64(x, "hi_ns", c->hi_ns);
			add_u64s(x, { "residual_ns", c->residual_ns },
				 { "collectives", c->collectives }, { "wake_ns", c->wake_ns });
		}
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "clocks", v);
	v = json_object_new_array();
	for (size_t i = 0; i < j->nranks; i++) {
		const struct ift_job_rank *r = &j->ranks[i];

		x = json_object_new_object();
		json_object_object_add(x, "rank", json_object_new_int(r->rank));
		ift_json_add_text(x, "host", r->host);
		add_u64s(x, { "trace", r->trace }, { "pid", r->pid }, { "tid", r->tid },
			 { "collectives", r->collectives }, { "in_ns", r->in_ns },
			 { "waited_ns", r->waited_ns }, { "last", r->last },
			 { "late_ns", r->late_ns }, { "cost_ns", r->cost_ns });
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "ranks", v);
	v = json_object_new_array();
	for (size_t i = 0; i < j->nstragglers; i++) {
		const struct ift_job_straggler *s = &j->stragglers[i];
		const struct ift_job_rank *r = &j->ranks[s->rank];

		x = json_object_new_object();
		json_object_object_add(x, "rank", json_object_new_int(r->rank));
		ift_json_add_text(x, "host", r->host);
		ift_json_add_u64(x, "pid", r->pid);
		ift_json_add_text(x, "op", s->op);
		add_u64s(x, { "last", s->last }, { "late_ns", s->late_ns },
			 { "late_p50_ns", s->late_p50_ns }, { "cost_ns", s->cost_ns },
			 { "share_permille", s->share_permille });
		json_object_object_add(x, "cause", s->cause ? ift_json_chain(s->cause) : NULL);
		json_object_array_add(v, x);
	}
	json_object_object_add(o, "stragglers", v);
	return o;
}

/*
 * A trace that is not whole: unfinished (the recorder died; every flushed
 * event is there) or damaged (bytes past the last good section are lost).
 */
static json_object *json_damage(const struct ift_recovery *rec)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "finished", json_object_new_boolean(rec->finished));
	json_object_object_add(o, "lost", json_object_new_boolean(rec->damaged &&
				rec->reason != -IFT_E_TRUNCATED));
	json_object_object_add(o, "reason", rec->damaged ?
			       json_object_new_string(ift_strerror(rec->reason)) : NULL);
	ift_json_add_i64(o, "read_bytes", (int64_t)rec->good_bytes);
	ift_json_add_i64(o, "file_bytes", (int64_t)rec->file_size);
	return o;
}

/* A profile's frame: a Python line's keys, or a native function's. */
static json_object *json_prof_frame(const struct ift_prof_frame *x)
{
	json_object *o = json_object_new_object();
	char fn[512];

	if (x->frame && (x->frame->flags & IFT_FRAME_F_PYSRC)) {
		add_py_frame(o, x->frame);
	} else {
		ift_func_format(x->frame, fn, sizeof(fn));
		ift_json_add_text(o, "module", x->frame ? x->frame->module : "");
		ift_json_add_text(o, "function", !x->frame ? "[kernel]" :
				  x->frame->flags & IFT_FRAME_F_PYTHON ? "[python]" : x->frame->symbol);
		ift_json_add_text(o, "frame", fn);
	}
	ift_json_add_u64(o, "self_samples", x->self);
	ift_json_add_u64(o, "total_samples", x->total);
	if (x->caller) {
		json_object *c = json_object_new_object();

		add_py_frame(c, x->caller);
		ift_json_add_u64(c, "samples", x->caller_samples);
		json_object_object_add(o, "caller", c);
	}
	return o;
}

json_object *ift_json_prof_group(const struct ift_prof_group *g, size_t limit)
{
	json_object *x = json_object_new_object(), *a, *w;
	struct ift_prof_finding f;

	ift_json_add_text(x, "role", ift_role_name(g->role) ? ift_role_name(g->role) : "none");
	ift_json_add_u64(x, "thread_count", g->threads);
	ift_json_add_u64(x, "process_count", g->procs);
	ift_json_add_u64(x, "samples", g->samples);
	ift_json_add_u64(x, "cpu_ns", g->cpu_ns);
	ift_json_add_u64(x, "kernel_samples", g->kernel);
	ift_json_add_u64(x, "interrupt_samples", g->interrupt);
	ift_json_add_u64(x, "python_samples", g->python);
	/* each sample's kind of work, and the kind a fix speaks of */
	a = json_object_new_array();
	for (unsigned k = IFT_WORK_UNKNOWN + 1; k <= IFT_WORK_PYTHON; k++) {
		w = json_object_new_object();
		ift_json_add_text(w, "work", ift_prof_work_name((enum ift_prof_work)k));
		ift_json_add_u64(w, "samples", g->work[k]);
		json_object_array_add(a, w);
	}
	json_object_object_add(x, "works", a);
	ift_profile_finding(g, &f);
	if (f.work != IFT_WORK_UNKNOWN) {
		w = json_object_new_object();
		ift_json_add_text(w, "work", ift_prof_work_name(f.work));
		ift_json_add_u64(w, "samples", f.samples);
		json_object_object_add(w, "top", json_prof_frame(f.top));
		json_object_object_add(x, "finding", w);
	} else {
		json_object_object_add(x, "finding", NULL);
	}
	a = json_object_new_array();
	for (size_t k = 0; k < g->nlines && k < limit; k++)
		json_object_array_add(a, json_prof_frame(&g->lines[k]));
	json_object_object_add(x, "python", a);
	a = json_object_new_array();
	for (size_t k = 0; k < g->nnative && k < limit; k++)
		json_object_array_add(a, json_prof_frame(&g->native[k]));
	json_object_object_add(x, "native", a);
	return x;
}

json_object *ift_json_profile(const struct ift_profile *p)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array();

	ift_json_add_u64(o, "period_ns", p->period_ns);
	ift_json_add_u64(o, "samples", p->samples);
	for (size_t i = 0; i < p->ngroups; i++)
		json_object_array_add(v, ift_json_prof_group(&p->groups[i], SIZE_MAX));
	json_object_object_add(o, "groups", v);
	return o;
}

static json_object *json_full(struct ift_trace *t, const struct ift_report *r)
{
	json_object *root = ift_json_report(r->a, r->c);
	size_t n;
	const struct ift_site *v = ift_report_sites(r, &n);

	if (!root)
		return NULL;
	json_object_object_add(root, "stacks", t ? ift_json_sites(t, v, n) :
						   json_object_new_array());
	/* only a trace with Python frames has the key: others read as before */
	if (t && ift_report_py(r)) {
		const struct ift_py_op *py = ift_report_py_sites(r, &n);

		json_object_object_add(root, "py_sites", ift_json_py_ops(t, py, n));
	}
	/* only a trace with a profile has the key */
	if (ift_analysis_profile(r->a)->period_ns)
		json_object_object_add(root, "profile", ift_json_profile(ift_analysis_profile(r->a)));
	/* only a trace with a job has the key */
	if (r->job) {
		const struct ift_job_input in = { .path = "", .t = t, .r = r };

		json_object_object_add(root, "job", ift_json_job(r->job, &in));
	}
	/* only a trace not whole has the key: what the figures were made of */
	if (t && (!ift_trace_recovery(t)->finished || ift_trace_recovery(t)->damaged))
		json_object_object_add(root, "damage", json_damage(ift_trace_recovery(t)));
	return root;
}

int ift_json_print_pretty(FILE *f, json_object *root)
{
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!text)
		return -ENOMEM;
	/*
	 * json-c before 0.17 prints an empty array or object pretty as "[",
	 * a newline, the indent and "]"; later ones as "[]".  A string holds
	 * no raw newline, so a newline after an opening bracket is layout:
	 * the same bytes whichever json-c the binary was built with.
	 */
	for (const char *p = text; *p; p++) {
		fputc(*p, f);
		if (*p == '[' || *p == '{') {
			const char *q = p + 1;

			if (*q == '\n')
				for (q++; *q == ' '; q++)
					;
			if (q > p + 1 && *q == (*p == '[' ? ']' : '}'))
				p = q - 1;	/* the closer comes next */
		}
	}
	fputc('\n', f);
	return 0;
}

/* Prints ROOT pretty on F and releases it. */
static int json_print(FILE *f, json_object *root)
{
	int ret = ift_json_print_pretty(f, root);

	json_object_put(root);
	return ret;
}

int ift_out_json(FILE *f, struct ift_trace *t, const struct ift_report *r)
{
	return json_print(f, json_full(t, r));
}

static json_object *json_job_report(const struct ift_job *j, const struct ift_job_input *in,
				     size_t n)
{
	json_object *root = json_object_new_object(), *v = json_object_new_array();

	json_object_object_add(root, "job", j ? ift_json_job(j, in) : NULL);
	for (size_t i = 0; i < n; i++) {
		json_object *x = json_object_new_object();
		const char *h = ift_trace_meta(in[i].t, "host.name");

		ift_json_add_text(x, "path", in[i].path);
		ift_json_add_text(x, "host", h ? h : "");
		json_object_object_add(x, "report", json_full(in[i].t, in[i].r));
		json_object_array_add(v, x);
	}
	json_object_object_add(root, "traces", v);
	return root;
}

int ift_out_job_json(FILE *f, const struct ift_job *j, const struct ift_job_input *in,
		     size_t n)
{
	return json_print(f, json_job_report(j, in, n));
}

/* ---- --diff ------------------------------------------------------- */

static json_object *json_pair(uint64_t b, uint64_t c)
{
	json_object *o = json_object_new_object();

	ift_json_add_u64(o, "baseline", b);
	ift_json_add_u64(o, "current", c);
	if (b)
		json_object_object_add(o, "ratio", json_object_new_double((double)c / (double)b));
	return o;
}

int ift_out_job_json_diff(FILE *f, const struct ift_job_side *cur,
			  const struct ift_job_side *base)
{
	static const struct ift_job_rank none;
	const struct ift_job *b = base->job, *c = cur->job;
	json_object *root = json_object_new_object(), *ch = json_object_new_object(), *v;
	int32_t world = b && c ? (b->world > c->world ? b->world : c->world) :
			b ? b->world : c ? c->world : 0;

	json_object_object_add(root, "baseline", json_job_report(b, base->in, base->n));
	json_object_object_add(root, "current", json_job_report(c, cur->in, cur->n));
	json_object_object_add(ch, "ranks", json_pair(b ? b->nranks : 0, c ? c->nranks : 0));
	json_object_object_add(ch, "collectives", json_pair(b ? b->collectives : 0,
							    c ? c->collectives : 0));
	json_object_object_add(ch, "waited_ns", json_pair(b ? b->waited_ns : 0,
							  c ? c->waited_ns : 0));
	v = json_object_new_array();
	for (int32_t r = 0; r < world; r++) {
		const struct ift_job_rank *x = ift_job_rank_of(b, r), *y = ift_job_rank_of(c, r);
		json_object *o;

		if (!x && !y)
			continue;
		x = x ? x : &none;
		y = y ? y : &none;
		o = json_object_new_object();
		json_object_object_add(o, "rank", json_object_new_int(r));
		json_object_object_add(o, "waited_ns", json_pair(x->waited_ns, y->waited_ns));
		json_object_object_add(o, "late_ns", json_pair(x->late_ns, y->late_ns));
		json_object_object_add(o, "cost_ns", json_pair(x->cost_ns, y->cost_ns));
		json_object_array_add(v, o);
	}
	json_object_object_add(ch, "rank_changes", v);
	json_object_object_add(root, "changes", ch);
	return json_print(f, root);
}

int ift_out_json_diff(FILE *f, const struct ift_diff_side *cur,
		      const struct ift_diff_side *base)
{
	struct ift_op_pair *pairs;
	size_t npairs;
	json_object *root, *ch, *v;
	struct ift_report_totals b, c;

	pairs = ift_report_op_pairs(cur->r, base->r, &npairs);
	if (!pairs)
		return -ENOMEM;
	ift_report_totals(base->r, &b);
	ift_report_totals(cur->r, &c);
	root = json_object_new_object();
	ch = json_object_new_object();
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
	for (size_t i = 0; i < npairs; i++) {
		const struct ift_op_stats *x = pairs[i].cur, *y = pairs[i].base;
		json_object *e = json_object_new_object();

		ift_json_add_text(e, "op", pairs[i].name);
		json_object_object_add(e, "calls", json_pair(y->calls, x->calls));
		json_object_object_add(e, "total_ns", json_pair(y->total_ns, x->total_ns));
		json_object_object_add(e, "p50_ns", json_pair(y->p50_ns, x->p50_ns));
		json_object_object_add(e, "p99_ns", json_pair(y->p99_ns, x->p99_ns));
		json_object_object_add(e, "max_ns", json_pair(y->max_ns, x->max_ns));
		json_object_array_add(v, e);
	}
	free(pairs);
	json_object_object_add(ch, "ops", v);
	json_object_object_add(root, "baseline", json_full(base->t, base->r));
	json_object_object_add(root, "current", json_full(cur->t, cur->r));
	json_object_object_add(root, "changes", ch);
	return json_print(f, root);
}
