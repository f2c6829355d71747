#!/usr/bin/env bash
# One name for one figure in every output (docs/report.md, Names): report
# --json (a trace, a job of ranks, a job of two traces, --diff of each), an
# MCP session calling every tool, the SQLite export (Parquet's tables are
# its tables) and Perfetto's args, of built traces and of every example
# fixture (x86-64 and arm64).  figure_names.py fails on a figure named outside the table, a 0.1
# name without its new name beside it, a name listed twice, or a listed name
# no output has.  Then the table is made wrong twice, and must fail.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"

"$IFT_TOOLS/gentrace" -o g.trace -n 60000 -s 7 -w 12 >/dev/null || fail "gentrace failed"
for kind in pystacks ranks gpubound; do
	python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" $kind >$kind.tsv ||
		fail "starve-tsv.py $kind failed"
	"$IFT_TOOLS/tsv2trace" -o $kind.trace <$kind.tsv >/dev/null || fail "tsv2trace $kind failed"
done
outs=()
# report ARGS...: its --json as one more output
report() {
	local n=json-r${#outs[@]}
	"$IFT" report --json "$@" >$n.json 2>err || fail "report --json $*: $(cat err)"
	outs+=("$n=$n.json")
}
report -i g.trace
report -i ranks.trace
report -i pystacks.trace
report -i gpubound.trace
report -i ranks.trace -i g.trace
report -i ranks.trace --diff pystacks.trace
report -i ranks.trace -i g.trace --diff ranks.trace
{
	head -n 3 "$IFT_SRC/tests/fuzz/mcp-seeds/tools-list"
	for s in "$IFT_SRC"/tests/fuzz/mcp-seeds/*; do
		grep -h '"tools/call"' "$s"
	done
} >session
n=0
for t in pystacks.trace ranks.trace "$IFT_SRC"/fixtures/examples/*.trace \
	 "$IFT_SRC"/fixtures/arm64/*.trace; do
	n=$((n + 1))
	[ $n -gt 2 ] && report -i "$t"
	"$IFT" export --format sqlite -i "$t" -o $n.db 2>err || fail "export sqlite $t: $(cat err)"
	"$IFT" export --format perfetto -i "$t" -o $n.pf.json 2>err || fail "export perfetto $t: $(cat err)"
	"$IFT" mcp -i "$t" <session >$n.mcp 2>err || fail "mcp -i $t: $(cat err)"
	outs+=("sqlite-$n=$n.db" "perfetto-$n=$n.pf.json" "json-mcp$n=$n.mcp")
done
[ $n -ge 5 ] || fail "only $((n - 2)) example fixtures"

python3 "$IFT_SRC/tests/e2e/figure_names.py" "$IFT_SRC/docs/report.md" "${outs[@]}" >names.out ||
	fail "figure names: $(grep -v '^figure_names:' names.out | head -12)"
tail -n 1 names.out

# the check fails on a name the table lacks, and on a listed one no output has
grep -v '^| `runqueue_wait_ns` ' "$IFT_SRC/docs/report.md" >lacks.md
python3 "$IFT_SRC/tests/e2e/figure_names.py" lacks.md "${outs[@]}" >lacks.out &&
	fail "a table without runqueue_wait_ns passed"
grep -q "'runqueue_wait_ns' is no name of the Names table" lacks.out ||
	fail "no line for the missing name: $(head -3 lacks.out)"
sed 's/^| `ops_total` |/| `ops_total`, `op_count` |/' "$IFT_SRC/docs/report.md" >extra.md
python3 "$IFT_SRC/tests/e2e/figure_names.py" extra.md "${outs[@]}" >extra.out &&
	fail "a table with a name no output has passed"
grep -q "'op_count' of the Names table is in no output" extra.out ||
	fail "no line for the unused name: $(head -3 extra.out)"
exit 0
