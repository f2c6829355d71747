#!/usr/bin/env bash
# record --py-stack through a real torch.utils.data.DataLoader (Debian's
# python3-torch, 4 forked workers) whose batches the main thread sends to
# the stand-in runtime (tests/workloads/torch-loader.py --frames-log): the
# Python frames of every op's calls against the frames the workload logged
# at each (simrt.frames_here(), on the call's own line), as t701 checks them.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

"$IFT" record -v --cuda-lib "$FEEDER_SIM" --py-stack -o loader.trace -- "$FEEDER_PY" \
	"$IFT_SRC/tests/workloads/torch-loader.py" --cudart "$FEEDER_SIM" --mode loader \
	--frames-log frames.json >truth.json 2>record.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
"$IFT" export --format sqlite -i loader.trace -o loader.db || fail "export failed"
python3 "$IFT_SRC/tests/e2e/pysitescheck.py" loader.db frames.json >check.out ||
	fail "Python frames differ from the workload's: $(cat check.out)"
echo "torch-loader: $(cat check.out)"
# report: each op's first Python call site is the line of simrt.send that
# made its calls, as the workload logged it
"$IFT" report --json -i loader.trace >report.json || fail "report failed"
python3 - report.json frames.json <<'PY' || fail "report's Python call sites are not the workload's lines"
import collections, json, sys
rep = json.load(open(sys.argv[1]))
log = json.load(open(sys.argv[2]))
line = collections.defaultdict(collections.Counter)
for e in log:
    f = e["frames"][0]
    line[e["op"]][(f[0], f[1], f[2])] += 1
got = {o["op"]: o["sites"][0] for o in rep.get("py_sites", []) if o["sites"]}
for op, c in line.items():
    want = c.most_common(1)[0][0]
    s = got.get(op)
    if op != "cudaLaunchKernel" and (not s or (s["file"], s["function"], s["line"]) != want):
        sys.exit("%s: report's first Python site %s, the workload's line %s" % (op, s, want))
PY
python3 - report.json truth.json <<'PY' || fail "the report's roles are not the workload's"
import json, sys
rep = json.load(open(sys.argv[1]))
truth = json.loads(open(sys.argv[2]).readline())
chains = [c for c in rep["chains"] if c["cause"] == "data_starvation" and c["tid"] == truth["tid"]]
if not chains:
    sys.exit("no data starvation of the feeding thread %d: %s"
             % (truth["tid"], [c["summary"] for c in rep["chains"]]))
woke = [t for c in chains for t in c["evidence"]["tasks"] if t["relation"] == "woke"]
workers = {t["pid"] for t in woke if t["role"] == "input worker"}
if not 1 <= len(workers) <= truth["workers"] or truth["pid"] in workers:
    sys.exit("input workers %s waking thread %d; the loader had %d workers: %s"
             % (sorted(workers), truth["tid"], truth["workers"], woke[:6]))
print("torch %s: %d input workers woke the feeding thread" % (truth["torch"], len(workers)))
PY
exit 0
