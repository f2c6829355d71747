/* SPDX-License-Identifier: MIT */
#ifndef IFT_MCP_INTERNAL_H
#define IFT_MCP_INTERNAL_H

/* Shared by the MCP server's files: the protocol (server.c), the tools
   (tools.c) and their arguments (args.c), and the text they show a model
   (text.c). */
#include <json.h>
#include <stdbool.h>
#include <stdint.h>

#include "ift-chains.h"
#include "ift-mcp.h"

struct ift_trace;
struct ift_query;

/* The trace, opened and analyzed at the first tool call that needs it. */
struct mcp_trace {
	struct ift_trace *t;
	struct ift_report rep;	/* the analysis and chains, as report makes them */
	struct ift_query *q;	/* run_sql's database, built at its first call */
};

struct ift_mcp {
	struct ift_mcp_opts opts;
	const char *version;	/* negotiated; NULL before initialize */
	struct mcp_trace tr;
};

/* True when the negotiated version knows structuredContent and outputSchema. */
bool ift_mcp_structured(const struct ift_mcp *m);

/* tools/list's result (a new object). */
json_object *ift_mcp_tools_list(struct ift_mcp *m);

/*
 * ift_mcp_tool_call - run tool NAME with ARGS (an object or NULL).  Returns 0
 * with *OUT a CallToolResult (isError true when the tool failed, or its
 * arguments were bad), or -1 when there is no such tool.
 */
int ift_mcp_tool_call(struct ift_mcp *m, const char *name, json_object *args,
		  json_object **out);

void ift_mcp_trace_release(struct mcp_trace *tr);

/* ---- a tool's arguments (args.c) ---------------------------------- */

enum arg_type { A_INT, A_STR, A_BOOL };

struct arg_spec {
	const char *name;
	enum arg_type type;
	bool required;
	int64_t min, max;	/* A_INT: the range; A_STR: max is bytes */
	int64_t def;		/* A_INT: the default when absent */
	const char *desc;
};

#define MAX_ARGS 8

struct args {
	const struct arg_spec *spec;
	bool has[MAX_ARGS];
	int64_t i[MAX_ARGS];
	const char *s[MAX_ARGS];
	bool b[MAX_ARGS];
};

/* Checks ARGS (NULL: none) against SPEC (ends at a NULL name) into A; 0,
   or -1 with a message a model can act on in ERR. */
int ift_mcp_args_parse(const struct arg_spec *spec, json_object *args, struct args *a,
		       char *err, size_t errlen);
/* SPEC as a tool's inputSchema (a new object). */
json_object *ift_mcp_input_schema(const struct arg_spec *spec);
/* Whether the call gave argument NAME; its value, or its default. */
bool ift_mcp_has(const struct args *a, const char *name);
int64_t ift_mcp_arg_int(const struct args *a, const char *name);
const char *ift_mcp_arg_str(const struct args *a, const char *name);
bool ift_mcp_arg_bool(const struct args *a, const char *name);

/*
 * ift_mcp_text - O as compact text for a model: "key: value" lines, arrays of
 * like objects as tab-separated tables.  Strings from the trace have their
 * control bytes escaped.  Returns a string to free(), or NULL (ENOMEM).
 */
char *ift_mcp_text(json_object *o);

#endif
