#!/usr/bin/env bash
# Every MCP tool on the H200 recordings (fixtures/h200, or IFT_GPU_TRACES),
# and on a starved thread whose GPU NVML measured (starve-tsv.py pystacks),
# says what report --json says: the same trace summary, GPU figures, op table, chains,
# processes and threads; histograms that sum to the op's calls; slow calls,
# a timeline and run_sql equal to the SQL export; limits and the SQL time
# limit hold.  Prints the size and time of every answer.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 for the scripted client"
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train" pystacks >nvml.tsv &&
	"$IFT_TOOLS/tsv2trace" -o nvml.trace <nvml.tsv >/dev/null || fail "no NVML trace"
for t in ${IFT_GPU_TRACES:-$IFT_FIXTURES/h200/direct.trace $IFT_FIXTURES/h200/loaderN.trace} \
	"$PWD/nvml.trace"; do
	"$IFT" report -i "$t" --json >report.json 2>err.txt ||
		fail "report --json of $t failed: $(cat err.txt)"
	echo "== $(basename "$t")"
	python3 "$IFT_SRC/tests/e2e/mcp_check.py" tools "$IFT" "$t" report.json ||
		fail "the MCP tools on $t (above)"
done
exit 0
