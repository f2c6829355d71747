#!/usr/bin/env bash
# query under hostile SQL: fts3_tokenizer (an address leak and a pointer
# write), load_extension and any function off the allow-list are refused by
# name, while aggregates, string, math, date, json and window functions
# answer as Python's sqlite3 does; values of 900 MB fail in little memory,
# and a table past its cap stops while --csv streams; a TMPDIR holding %,
# ? or # works (sql_guard.py).  A query that never ends (a recursive CTE
# without a bound) stops at --timeout, 10 s by default as MCP's run_sql, in
# one line; --timeout 0 lets a long one finish.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
"$IFT_TOOLS/gentrace" -o g.trace -n 5000 >/dev/null || fail "gentrace failed"
"$IFT" export -i g.trace --format sqlite -o g.db 2>err || fail "export failed: $(cat err)"
for section in functions memory tmpdir; do
	python3 "$IFT_SRC/tests/e2e/sql_guard.py" query-$section "$IFT" g.trace g.db ||
		fail "query-$section (above)"
done

forever="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
for limit in 10 0.5; do
	args=()
	[ $limit = 10 ] || args=(--timeout $limit)
	# the outer timeout only ends a query that does not stop by itself
	timeout 120 "$IFT" query -i g.db "${args[@]}" "$forever" >out 2>err
	rc=$?
	[ $rc = 124 ] && fail "query ${args[*]}: ran for 120 s, no time limit"
	[ $rc = 1 ] || fail "query ${args[*]}: exit $rc, not 1: $(cat err)"
	[ "$(wc -l <err)" = 1 ] && grep -q "ran past $limit s" err ||
		fail "query ${args[*]}: $(cat err)"
done
long="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000) SELECT count(*) FROM c"
"$IFT" query -i g.db --timeout 0 --csv "$long" >out 2>err || fail "--timeout 0: $(cat err)"
[ "$(tail -1 out | tr -d '\r')" = 200000 ] || fail "--timeout 0: $(cat out)"
"$IFT" query -i g.db --timeout -1 "SELECT 1" >out 2>err
[ $? = 2 ] && grep -q "^ingero-ftrace: --timeout takes seconds" err || fail "--timeout -1: $(cat err)"
exit 0
