#!/usr/bin/env bash
# get_stacks on a trace with call sites (record --stack), built row by row
# (sites-tsv.py, which also computes what the sites must be): by default
# report --json's stacks; limit, op, pid and tid as computed from the rows;
# frames innermost first; text alone before 2025-06-18; bad arguments as
# isError; a trace without stacks lists the tool and says to record with
# --stack.  Needs no root, no GPU.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 for the scripted client"
python3 "$IFT_SRC/tests/e2e/sites-tsv.py" sites.tsv expect.json || fail "sites-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o sites.trace <sites.tsv >/dev/null || fail "tsv2trace failed"
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train ./train >plain.tsv || fail "starve-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o plain.trace <plain.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i sites.trace --json >report.json 2>err.txt ||
	fail "report --json failed: $(cat err.txt)"
python3 "$IFT_SRC/tests/e2e/mcp_check.py" stacks "$IFT" sites.trace report.json expect.json \
	plain.trace || fail "get_stacks (above)"
exit 0
