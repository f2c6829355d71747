#!/usr/bin/env bash
# mcp over pipes, driven by a scripted client (mcp_check.py): the handshake
# for every protocol version and unknown ones, notifications, ping, the tool
# and prompt lists, the prompt investigate, JSON-RPC errors (-32700, -32600,
# -32601, -32602), bad tool arguments as isError, a line over 1 MiB refused
# with the server still up, a missing trace, and exit 0 when stdin closes.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 for the scripted client"
python3 "$IFT_SRC/tests/e2e/mcp_check.py" protocol "$IFT" "$IFT_FIXTURES/h200/direct.trace" ||
	fail "the MCP protocol (above)"
exit 0
