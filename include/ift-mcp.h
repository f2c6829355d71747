/* SPDX-License-Identifier: MIT */
#ifndef IFT_MCP_H
#define IFT_MCP_H

/*
 * An MCP (Model Context Protocol) server over one trace: newline-delimited
 * JSON-RPC 2.0 read from one stream and answered on another, so a model can
 * ask for the report's figures, the slow calls, a timeline or read-only SQL.
 * docs/mcp.md is the protocol as this server speaks it.
 *
 * The server reads the trace only (never tracefs), writes nothing but
 * JSON-RPC lines to its output stream and never exits: the caller owns both
 * streams.  Notes for a person go to the log stream of the options, if any.
 */
#include <stddef.h>
#include <stdio.h>

#define IFT_MCP_MAX_LINE	(1024 * 1024)	/* default limit of one message */

struct ift_mcp_opts {
	const char *trace;	/* the trace the tools read (opened at first use) */
	size_t max_line;	/* bytes of one message; 0: IFT_MCP_MAX_LINE */
	FILE *log;		/* notes for a person (stderr), or NULL */
	int verbose;		/* > 0: a note per request on LOG */
};

struct ift_mcp;

/*
 * ift_mcp_new - a server with OPTS (copied; the strings must outlive it).
 * Opens nothing yet.  Returns NULL with errno set; release with
 * ift_mcp_free().
 */
struct ift_mcp *ift_mcp_new(const struct ift_mcp_opts *opts);

/*
 * ift_mcp_handle - answer one message MSG of LEN bytes (one line, without
 * its newline).  *REPLY is set to the answer, one line without a newline
 * that the caller free()s, or to NULL when there is none (a notification, a
 * response).  Returns 0, or -ENOMEM when no answer could be built.
 */
int ift_mcp_handle(struct ift_mcp *m, const char *msg, size_t len, char **reply);

/*
 * ift_mcp_serve - answer every line of IN on OUT, each answer one line,
 * flushed, until IN ends.  A line longer than the limit is answered with an
 * error (-32600) and skipped.  Returns 0 at the end of IN, or a negative
 * error: -errno when OUT fails (the peer went away), -ENOMEM.
 */
int ift_mcp_serve(struct ift_mcp *m, FILE *in, FILE *out);

void ift_mcp_free(struct ift_mcp *m);

#endif
