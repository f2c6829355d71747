// SPDX-License-Identifier: MIT
/*
 * The MCP server's dispatcher, without a process: messages in through
 * ift_mcp_handle() and ift_mcp_serve() on memory streams, on a trace whose
 * task names and command line carry quotes, newlines, tabs, control bytes
 * and a JSON-RPC message of their own.  Every answer must stay one line of
 * one JSON object, and the names must come back intact in the structured
 * result and escaped in the text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json.h>
#include <stdlib.h>

#include "ift-mcp.h"
#include "ift-trace.h"
#include "tracebuild.h"

static const char evil[] = "ev\"il\n{\"jsonrpc\":\"2.0\",\"id\":9}\\\t\x01</x>";

static void build(struct tb *b)
{
	/* a call site whose symbol is the evil name (record --stack) */
	const struct ift_frame fr[] = {
		{ .module = "/lib/libcudart.so.12", .symbol = "cudaStreamSynchronize" },
		{ .module = "/app/tr\nain", .offset = 0x1234, .symbol = evil, .symoff = 0x15 },
	};
	int64_t site;

	tb_begin(b, "evil", 100 * MS);
	site = ift_writer_stack(b->w, fr, 2);
	assert_int_equal(site, 1);
	assert_int_equal(ift_writer_meta(b->w, "cmdline", evil), 0);
	task(b, 1 * MS, 100, 100, IFT_TASK_COMM, 0, 0, evil);
	sw(b, 2 * MS, 0, 7, 7, S_RUN, 101, 100);
	wk(b, 5 * MS, 1, 300, 300, IFT_WAKE_WAKING, 1, 101, 100);
	page(b, 11 * MS, 101, 100, 0);
	for (uint64_t i = 0; i < 20; i++) {
		/* the odd calls (i == 7 among them) carry the site */
		uint64_t r[IFT_CALL_NR] = {
			T0 + 10 * MS + i * MS, 0, 100, 101, (uint64_t)b->op[OP_SYNC],
			i == 7 ? 400 * US : 50 * US,
		};

		r[IFT_CALL_STACK] = (uint64_t)site;
		if (i % 2)
			add(b, IFT_T_CALLS, r);
		else
			call(b, 10 * MS + i * MS, 101, 100, OP_SYNC, 50 * US, 0, 0, 0, 0, 0, 0, 0);
		if (i == 7) {
			sw(b, 10 * MS + i * MS + 100 * US, 0, 101, 100, S_PREEMPT, 300, 300);
			sw(b, 10 * MS + i * MS + 300 * US, 0, 300, 300, S_RUN, 101, 100);
		}
	}
	task(b, 3 * MS, 300, 300, IFT_TASK_COMM, 0, 0, evil);
	tb_run(b, NULL);
}

/* One answer: a line without a newline, one JSON object; returned parsed. */
static json_object *ask(struct ift_mcp *m, const char *msg)
{
	json_object *o;
	char *reply = NULL;

	assert_int_equal(ift_mcp_handle(m, msg, strlen(msg), &reply), 0);
	assert_non_null(reply);
	assert_null(strchr(reply, '\n'));
	o = json_tokener_parse(reply);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	free(reply);
	return o;
}

static json_object *path(json_object *o, const char *a, const char *b2)
{
	json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, a, &v));
	if (b2)
		assert_true(json_object_object_get_ex(v, b2, &v));
	return v;
}

static int error_code(json_object *o)
{
	return json_object_get_int(path(o, "error", "code"));
}

static void test_dispatch(void **state)
{
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}";
	static const char response[] = "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}";
	struct ift_mcp *m = ift_mcp_new(&(struct ift_mcp_opts){ .trace = "/nonexistent" });
	json_object *o;
	char *reply = (char *)1;

	(void)state;
	assert_non_null(m);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2099-01-01\"}}");
	assert_string_equal(json_object_get_string(path(o, "result", "protocolVersion")),
			    "2025-11-25");
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2025-03-26\"}}");
	assert_string_equal(json_object_get_string(path(o, "result", "protocolVersion")),
			    "2025-03-26");
	json_object_put(o);

	/* a notification and a response get no answer */
	assert_int_equal(ift_mcp_handle(m, note, strlen(note), &reply), 0);
	assert_null(reply);
	assert_int_equal(ift_mcp_handle(m, response, strlen(response), &reply), 0);
	assert_null(reply);

	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"nope\"}");
	assert_int_equal(error_code(o), -32601);
	assert_string_equal(json_object_get_string(path(o, "id", NULL)), "a");
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"nope\"}}");
	assert_int_equal(error_code(o), -32602);
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":[]}");
	assert_int_equal(error_code(o), -32602);
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":3,");
	assert_int_equal(error_code(o), -32700);
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":3} {}");
	assert_int_equal(error_code(o), -32700);
	json_object_put(o);
	o = ask(m, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]");
	assert_int_equal(error_code(o), -32600);
	json_object_put(o);

	/* a trace that is not there: the tool fails, the server does not */
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"get_trace_stats\"}}");
	assert_true(json_object_get_boolean(path(o, "result", "isError")));
	json_object_put(o);
	/* 2025-03-26 knows no structuredContent */
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}");
	assert_false(json_object_object_get_ex(json_object_array_get_idx(
		path(o, "result", "tools"), 0), "outputSchema", NULL));
	json_object_put(o);
	ift_mcp_free(m);
}

static void test_evil_names(void **state)
{
	static const char *const calls[] = {
		"get_trace_stats\",\"arguments\":{}",
		"get_causal_chains\",\"arguments\":{\"limit\":20}",
		"get_per_process_breakdown\",\"arguments\":{}",
		"get_per_process_breakdown\",\"arguments\":{\"pid\":100}",
		"get_op_latency\",\"arguments\":{\"op\":\"cudaStreamSynchronize\"}",
		"get_slow_calls\",\"arguments\":{\"op\":\"cudaStreamSynchronize\"}",
		"get_timeline\",\"arguments\":{\"from_ns\":0,\"limit\":1000}",
		"get_stacks\",\"arguments\":{}",
	};
	struct tb b;
	struct ift_mcp *m;
	json_object *o, *v;
	char msg[512];

	(void)state;
	build(&b);
	m = ift_mcp_new(&(struct ift_mcp_opts){ .trace = b.path });
	json_object_put(ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
			    "\"params\":{\"protocolVersion\":\"2025-11-25\"}}"));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const char *text;

		snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
			 "\"tools/call\",\"params\":{\"name\":\"%s}}", i, calls[i]);
		o = ask(m, msg);
		assert_false(json_object_get_boolean(path(o, "result", "isError")));
		text = json_object_get_string(json_object_object_get(
			json_object_array_get_idx(path(o, "result", "content"), 0), "text"));
		/* no name starts a line of its own */
		assert_null(strstr(text, "\n{\"jsonrpc\""));
		/* the name is in the text, escaped: no raw newline or tab inside it */
		if (strstr(text, "ev\"il"))
			assert_non_null(strstr(text, "ev\"il\\n{\"jsonrpc\":\"2.0\",\"id\":9}"
					       "\\\\\\t\\x01</x>"));
		json_object_put(o);
	}
	/* the structured result holds the name as it is */
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"get_per_process_breakdown\",\"arguments\":{\"pid\":100}}}");
	v = path(path(o, "result", "structuredContent"), "process", "comm");
	assert_string_equal(json_object_get_string(v), evil);
	json_object_put(o);
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"get_slow_calls\",\"arguments\":{\"op\":\"cudaStreamSynchronize\","
		"\"limit\":1}}}");
	v = json_object_array_get_idx(path(path(o, "result", "structuredContent"),
					   "slowest", NULL), 0);
	assert_int_equal(json_object_get_int64(json_object_object_get(v, "dur_ns")), 400 * US);
	v = json_object_array_get_idx(json_object_object_get(v, "preempted_by"), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(v, "tid")), 300);
	assert_string_equal(json_object_get_string(json_object_object_get(v, "comm")), evil);
	json_object_put(o);
	/* and a frame named by the traced program, intact */
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"get_stacks\",\"arguments\":{\"op\":\"cudaStreamSynchronize\"}}}");
	v = json_object_array_get_idx(path(path(o, "result", "structuredContent"),
					   "sites", NULL), 0);
	assert_int_equal(json_object_get_int64(json_object_object_get(v, "calls")), 10);
	assert_int_equal(json_object_get_int64(json_object_object_get(v, "tail_ns")), 400 * US);
	snprintf(msg, sizeof(msg), "%s+0x15 (tr\nain)", evil);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
		json_object_object_get(v, "frames"), 1)), msg);
	json_object_put(o);
	/* bad arguments: the tool's error, with a message */
	o = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"get_slow_calls\",\"arguments\":{\"op\":\"x\",\"limit\":0}}}");
	assert_true(json_object_get_boolean(path(o, "result", "isError")));
	json_object_put(o);
	ift_mcp_free(m);
	tb_end(&b);
}

static void test_serve(void **state)
{
	char in[512], *out = NULL;
	size_t outlen = 0;
	FILE *fi, *fo;
	struct ift_mcp *m = ift_mcp_new(&(struct ift_mcp_opts){ .max_line = 64 });
	int n;

	(void)state;
	n = snprintf(in, sizeof(in), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
		     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":"
		     "\"%080d\"}}\n\n"
		     "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 0);
	fi = fmemopen(in, (size_t)n, "r");
	fo = open_memstream(&out, &outlen);
	assert_int_equal(ift_mcp_serve(m, fi, fo), 0);
	fclose(fi);
	fclose(fo);
	/* ping 1, the long line refused, ping 3 without its newline */
	assert_string_equal(out,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
		"\"message longer than 64 bytes: not read\"}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n");
	free(out);
	ift_mcp_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_evil_names),
		cmocka_unit_test(test_serve),
	};

	return cmocka_run_group_tests_name("mcp", tests, tb_setup, tb_teardown);
}
