#!/usr/bin/env bash
# mcp under a hostile client: run_sql refuses fts3_tokenizer and functions
# off the allow-list, fails cleanly and in little memory on 900 MB values;
# request ids above int64 come back unchanged; tools and prompts before
# initialize are refused (-32600) (sql_guard.py).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
"$IFT_TOOLS/gentrace" -o g.trace -n 5000 >/dev/null || fail "gentrace failed"
"$IFT" export -i g.trace --format sqlite -o g.db 2>err || fail "export failed: $(cat err)"
for section in functions memory ids init; do
	python3 "$IFT_SRC/tests/e2e/sql_guard.py" mcp-$section "$IFT" g.trace g.db ||
		fail "mcp-$section (above)"
done
exit 0
