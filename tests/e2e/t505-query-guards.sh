#!/usr/bin/env bash
# query under hostile SQL: fts3_tokenizer (an address leak and a pointer
# write), load_extension and any function off the allow-list are refused by
# name, while aggregates, string, math, date, json and window functions
# answer as Python's sqlite3 does; values of 900 MB fail in little memory,
# and a table past its cap stops while --csv streams; a TMPDIR holding %,
# ? or # works (sql_guard.py).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
"$IFT_TOOLS/gentrace" -o g.trace -n 5000 >/dev/null || fail "gentrace failed"
"$IFT" export -i g.trace --format sqlite -o g.db 2>err || fail "export failed: $(cat err)"
for section in functions memory tmpdir; do
	python3 "$IFT_SRC/tests/e2e/sql_guard.py" query-$section "$IFT" g.trace g.db ||
		fail "query-$section (above)"
done
exit 0
