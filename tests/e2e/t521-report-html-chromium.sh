#!/usr/bin/env bash
# report --html in a browser: headless Chromium (fresh profile, no network)
# renders the page of a synthetic trace with a chain, of a starved feeding
# thread and of one with call sites (and of the H200 traces in fixtures/h200,
# or those in IFT_GPU_TRACES); the DOM it builds
# holds what report --json says (the checks of t520, on Chromium's DOM), the
# page logs nothing to the console (no error, no blocked load), and a
# 1280x4000 screenshot of each is saved here (and in IFT_TEST_OUT when set).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-html.sh"

command -v python3 >/dev/null || skip "needs python3 to parse HTML and JSON"
need_chromium

# render NAME TRACE [--samples]
render() {
	local name=$1 trace=$2
	shift 2
	"$IFT" report -i "$trace" --json >"$name.json" 2>err.txt ||
		fail "report --json of $trace failed: $(cat err.txt)"
	"$IFT" report -i "$trace" --html "$name.html" 2>err.txt ||
		fail "report --html of $trace failed: $(cat err.txt)"
	html_check "$name.html" "$name.json" --name "$name" "$@" ||
		fail "the page of $trace is not its report (above)"
	html_browse "$name" "$name.html" "$name.json" "$@"
}

"$IFT_TOOLS/gentrace" -o g.trace -n 200000 -s 3 >/dev/null || fail "gentrace failed"
render g g.trace --samples
# a starved thread with markup in its name: a data starvation chain
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" >starve.tsv &&
	"$IFT_TOOLS/tsv2trace" -o starve.trace <starve.tsv >/dev/null || fail "cannot build starve.trace"
render starve starve.trace
# call sites (record --stack): per op and under the chain
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" stacks >sites.tsv &&
	"$IFT_TOOLS/tsv2trace" -o sites.trace <sites.tsv >/dev/null || fail "cannot build sites.trace"
render sites sites.trace
for t in ${IFT_GPU_TRACES:-$IFT_FIXTURES/h200/direct.trace $IFT_FIXTURES/h200/loaderN.trace}; do
	render "gpu-$(basename "$t" .trace)" "$t" --samples
done
exit 0
