/* SPDX-License-Identifier: MIT */
#ifndef IFT_VERSION_H
#define IFT_VERSION_H

/* The tool's version: what --version prints, the trace's tool.version, the
   MCP server's serverInfo.  The trace format has its own number. */
#define IFT_VERSION "0.1.0"

#endif
