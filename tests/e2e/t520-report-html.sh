#!/usr/bin/env bash
# report --html without a browser: the page of a synthetic trace, of a starved
# feeding thread with markup in its name and command line, of a window, of a
# trace with no call left by --op, of a trace with call sites (and of the H200
# traces in fixtures/h200, or the space-separated list IFT_GPU_TRACES) is one
# self-contained file that holds what report --json says: every chart with its
# data points, a histogram per op holding every call, the chains' summaries
# verbatim, a bar per process, the call sites per op and per chain (none
# without stacks), and the Python call sites per op and per chain of a trace
# recorded with --py-stack (none without Python frames).
# Names are escaped; a bad destination is an error; --json and --diff do not go
# with it.  t521 looks at the same pages in Chromium.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-html.sh"

command -v python3 >/dev/null || skip "needs python3 to parse HTML and JSON"

# page NAME TRACE [--samples] [REPORT OPTIONS...]: NAME.html and NAME.json, checked
page() {
	local name=$1 trace=$2 samples=
	shift 2
	if [ "${1:-}" = --samples ]; then
		samples=--samples
		shift
	fi
	"$IFT" report -i "$trace" "$@" --json >"$name.json" 2>err.txt ||
		fail "report --json $* of $trace failed: $(cat err.txt)"
	"$IFT" report -i "$trace" "$@" --html "$name.html" >out.txt 2>err.txt ||
		fail "report --html $* of $trace failed: $(cat err.txt)"
	[ ! -s out.txt ] || fail "report --html wrote to stdout: $(head -3 out.txt)"
	html_check "$name.html" "$name.json" --name "$name" $samples ||
		fail "the page of $trace is not its report (above)"
	echo "$name: $(wc -c <"$name.html") bytes"
}

"$IFT_TOOLS/gentrace" -o g.trace -n 200000 -s 3 >/dev/null || fail "gentrace failed"
page g g.trace --samples
page window g.trace --samples --from 2s --to 5s
"$IFT" report -i g.trace --op cudaNoSuchOp --html none.html 2>/dev/null ||
	fail "report --html of no call failed"
"$IFT" report -i g.trace --op cudaNoSuchOp --json >none.json 2>/dev/null
html_check none.html none.json --name none || fail "the page of no call is wrong (above)"

# a starved feeding thread whose process and command line carry markup
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" >starve.tsv || fail "starve-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o starve.trace <starve.tsv >/dev/null || fail "tsv2trace failed"
page starve starve.trace
python3 - starve.json starve.html <<'PY' || fail "the starved thread's page (above)"
import json, sys
r, page = json.load(open(sys.argv[1])), open(sys.argv[2], encoding="utf-8").read()
bad = []
if not any(c["cause"] == "data_starvation" and "tr<i>&\"x'" in c["summary"] for c in r["chains"]):
    bad.append("no data_starvation chain naming the thread: %r" % [c["summary"] for c in r["chains"]])
for raw in ("<i>", "<script>", "<b>", "&\"x"):
    if raw in page:
        bad.append("%r is in the page unescaped" % raw)
if "tr&lt;i&gt;&amp;&quot;x&#39;" not in page:
    bad.append("the escaped name is not in the page")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# call sites (record --stack): two sites, per op and under the chain
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" stacks >sites.tsv ||
	fail "starve-tsv.py stacks failed"
"$IFT_TOOLS/tsv2trace" -o sites.trace <sites.tsv >/dev/null || fail "tsv2trace failed"
page sites sites.trace
python3 - sites.json <<'PY' || fail "the page of a trace with stacks checked no call site"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if len(r["stacks"]) == 2 and any(len(c["sites"]) == 2 for c in r["chains"]) else 1)
PY
grep -q 'id="site-table"' starve.html && fail "call sites on the page of a trace without stacks"

# Python call sites (record --py-stack): per op and under the chain, the
# frames where they called the native code; none on the other pages
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" pystacks >py.tsv ||
	fail "starve-tsv.py pystacks failed"
"$IFT_TOOLS/tsv2trace" -o py.trace <py.tsv >/dev/null || fail "tsv2trace failed"
page py py.trace
python3 - py.json <<'PY' || fail "the page of a trace with Python frames checked no Python call site"
import json, sys
r = json.load(open(sys.argv[1]))
o = r["py_sites"][0]
ok = (len(r["py_sites"]) == 1 and (o["in_flight"], o["late"]) == (40, 10) and
      [x["frame"] for x in o["sites"]] == [
          "torch/utils/data/dataloader.py:631 in _BaseDataLoaderIter.__next__",
          "/home/u/train.py:60 in train_epoch"] and
      any(len(c.get("py_sites", [])) == 2 for c in r["chains"]))
sys.exit(0 if ok else 1)
PY
grep -q 'id="py-site-table"' sites.html && fail "Python call sites on the page of a trace without them"

for t in ${IFT_GPU_TRACES:-$IFT_FIXTURES/h200/direct.trace $IFT_FIXTURES/h200/loaderN.trace}; do
	page "gpu-$(basename "$t" .trace)" "$t" --samples
done

# to stdout with -, the same page
"$IFT" report -i starve.trace --html - >stdout.html 2>err.txt || fail "report --html - failed: $(cat err.txt)"
cmp -s stdout.html starve.html || fail "report --html - differs from report --html FILE"

# errors: a destination that cannot be written, a full disk; no --json or --diff with it
expect_one_line_error "$IFT" report -i g.trace --html no/such/dir/x.html >/dev/null
if [ -w /dev/full ]; then
	expect_one_line_error "$IFT" report -i g.trace --html /dev/full >/dev/null
fi
for args in "--json" "--diff starve.trace" "--html"; do
	"$IFT" report -i g.trace --html x.html $args >/dev/null 2>err.txt; rc=$?
	[ $rc = 2 ] || fail "report --html x.html $args exited $rc, want 2"
done
exit 0
