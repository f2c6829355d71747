// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the MCP server: `make fuzz-mcp`, see
 * tests/fuzz/README.md.
 *
 * Each input is a session: its bytes are the client's stdin, served by
 * ift_mcp_serve() on a fresh server (so no state carries from one input to
 * the next) over a small trace, with a 4 KiB line limit so that the
 * oversized-line path is reached.  Every tool, run_sql included, runs on
 * that trace.  What the protocol promises is checked with abort(): every
 * answer is one line of strict JSON, a JSON-RPC 2.0 response object with
 * an id and exactly one of result and error; there is at most one answer
 * per line read; an answer to a request whose id was an integer or a
 * string carries the same id (by value).
 *
 * The trace is IFT_FUZZ_MCP_TRACE, else build-fuzz/mcp.trace (make
 * fuzz-mcp writes it with gentrace); without one the tools fail, and the
 * protocol is still fuzzed.
 */
#include <json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-mcp.h"

#define MAX_LINE	4096

static const char *trace = "build-fuzz/mcp.trace";

#define check(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-mcp: %s:%d: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("IFT_FUZZ_MCP_TRACE");

	(void)argc;
	(void)argv;
	if (t && *t)
		trace = t;
	return 0;
}

static json_object *parse_strict(const char *s, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	check(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)len);
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  json_tokener_get_parse_end(tok) != len)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* The id of request line LINE, when it is one JSON object with an id that
   is a string or an integer; NULL otherwise. */
static json_object *request_id(const char *line, size_t len)
{
	json_object *req, *id = NULL, *m;

	if (len > MAX_LINE)
		return NULL;	/* refused unread, with id null */
	/* as the server strips (strchr would take a NUL for a blank) */
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len || memchr(line, 0, len))
		return NULL;
	req = parse_strict(line, len);
	if (req && json_object_is_type(req, json_type_object) &&
	    json_object_object_get_ex(req, "method", &m) &&
	    json_object_is_type(m, json_type_string) &&
	    json_object_object_get_ex(req, "id", &id) &&
	    (json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
		id = json_object_get(id);
	else
		id = NULL;
	json_object_put(req);
	return id;
}

static bool same_id(json_object *want, json_object *got)
{
	if (json_object_is_type(want, json_type_string))
		return json_object_is_type(got, json_type_string) &&
		       !strcmp(json_object_get_string(want), json_object_get_string(got));
	/* an integer json-c read exactly (within int64) must come back so */
	if (json_object_get_int64(want) == INT64_MAX || json_object_get_int64(want) == INT64_MIN)
		return true;	/* clamped by json-c: the text decides, not this */
	return json_object_is_type(got, json_type_int) &&
	       json_object_get_int64(want) == json_object_get_int64(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ift_mcp_opts opts = { .trace = trace, .max_line = MAX_LINE };
	struct ift_mcp *m = ift_mcp_new(&opts);
	char *out = NULL;
	size_t outlen = 0, lines = 0;
	FILE *in, *fo;

	check(m);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines++;
	in = fmemopen((void *)data, size ? size : 1, "r");
	check(in);
	if (!size)
		fgetc(in);	/* fmemopen wants a size: read the one byte away */
	fo = open_memstream(&out, &outlen);
	check(fo);
	check(ift_mcp_serve(m, in, fo) == 0);
	fclose(in);
	fclose(fo);
	ift_mcp_free(m);

	/* every answer: one line, one JSON-RPC response */
	{
		size_t answers = 0;
		const char *p = out, *end = out + outlen, *req = (const char *)data;
		const char *rend = (const char *)data + size;

		check(!outlen || out[outlen - 1] == '\n');
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			json_object *o, *v, *id;
			bool has_result, has_error;

			check(nl);
			o = parse_strict(p, (size_t)(nl - p));
			check(o && json_object_is_type(o, json_type_object));
			check(json_object_object_get_ex(o, "jsonrpc", &v) &&
			      !strcmp(json_object_get_string(v), "2.0"));
			check(json_object_object_get_ex(o, "id", &v));
			has_result = json_object_object_get_ex(o, "result", NULL);
			has_error = json_object_object_get_ex(o, "error", NULL);
			check(has_result != has_error);
			if (has_error) {
				json_object *e, *c;

				json_object_object_get_ex(o, "error", &e);
				check(json_object_object_get_ex(e, "code", &c) &&
				      json_object_is_type(c, json_type_int));
				check(json_object_object_get_ex(e, "message", &c) &&
				      json_object_is_type(c, json_type_string));
			}
			/* the first answer, when the first line is a request
			   with a good id, is that request's */
			if (answers == 0 && req < rend) {
				const char *rnl = memchr(req, '\n', (size_t)(rend - req));
				size_t rlen = (size_t)((rnl ? rnl : rend) - req);

				id = request_id(req, rlen);
				if (id)
					check(v && same_id(id, v));
				json_object_put(id);
			}
			json_object_put(o);
			answers++;
			p = nl + 1;
		}
		check(answers <= lines);
	}
	free(out);
	return 0;
}
