#!/usr/bin/env bash
# The README's demo (make demo: contrib/demo.sh) run as it is: the loader run
# gets the data-starvation chain before cudaMemcpy on its training thread,
# naming its worker processes (pt_data_worker) that fed it as such, at
# the severity the workload's own share of waiting calls for (HIGH on 2 CPUs,
# and in the 5.10 guest of make check-kernels; none only where that share
# calls for LOW at most); the direct run gets none; the diff of the two runs
# shows the report's chain.  Each guest of make check-kernels runs it too.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

DEMO_TRUTH=$PWD $PIN "$IFT_SRC/contrib/demo.sh" "$SIM_BUILD" >demo.out 2>&1 ||
	fail "the demo failed: $(tail -5 demo.out)"
assert_no_leftovers
for run in loader direct; do
	[ -s $run.trace ] && [ -s demo-$run.truth ] || fail "the demo left no $run.trace or demo-$run.truth"
	"$IFT" report --json -i $run.trace >$run.json 2>report.err || fail "report of $run.trace: $(cat report.err)"
done
sim_check demo-loader.truth loader.json <<'PY' || fail "the demo's report disagrees with its workload (above)"
import sys
from simcheck import *

truth, r = Truth(sys.argv[1]), load_report(sys.argv[2])
chk = Checks("demo")
steady = truth.steady(r)
share = (steady.wait["blocked_ns"] + steady.gaps["all"]["over_floor_cpu_ns"]) / \
    steady.active["active_ns"]
# none only where the workload's own share calls for no more than LOW (an
# emulated guest's workers may keep ahead of its training thread)
c = chains(r, "data_starvation", "before", "cudaMemcpy")
c = c[0] if len(c) == 1 else None
if not c and "LOW" in severities(share):
    chk.note("no starvation chain; the workload starved %.0f%% of its active time" % (100 * share))
elif not c:
    one_chain(chk, r, "data_starvation", "before", "cudaMemcpy")
    chk.note("the workload starved %.0f%% of its active time" % (100 * share))
if c:
    chk.note("first chain: %s %s %s %s; the workload starved %.0f%% of its active time" %
             (r["chains"][0]["severity"], r["chains"][0]["cause"], r["chains"][0]["phase"],
              r["chains"][0]["op"], 100 * share))
    chk.ok(c["severity"] in severities(share),
           "severity %s, the workload starved %.0f%% of its active time" % (c["severity"], 100 * share))
    chk.ok((c["pid"], c["tid"]) == (truth.pid, truth.tid),
           "chain on %d/%d, the training thread is %d/%d" % (c["pid"], c["tid"], truth.pid, truth.tid))
    only_contention_before(chk, r, c)
    workers = {w["pid"] for w in truth.of_role("worker")}
    fed = {t["pid"] for t in c["evidence"]["tasks"]
           if t["relation"] == "woke" and t.get("role") == "input worker"}
    # named: every worker whose batches the thread was blocked for, beyond
    # the 2 a post racing its futex wait may not wake (t400); a worker whose
    # batches were always ready woke nobody (a 5.10 guest's run at 15%
    # starvation named three of four)
    blocked = {x["pid"]: x["batches"] for x in steady.wait["woken_by"]}
    want = {pid for pid, n in blocked.items() if n > 2}
    chk.ok(want <= fed <= workers,
           "the chain names workers %s, the demo's are %s, their batches waited for %s" %
           (sorted(fed), sorted(workers), blocked))
    names = {t["comm"] for t in c["evidence"]["tasks"] if t["pid"] in workers}
    chk.ok(names == {"pt_data_worker"}, "the workers are named %s" % sorted(names))
chk.done()
PY
# the diff: the starved run against the fix as its baseline (as the README's
# example), the report's starvation among the current run's chains
grep -q '^\$ .* report -i loader.trace --diff direct.trace' demo.out || fail "the demo made no diff: $(tail -5 demo.out)"
if python3 -c 'import json, sys; sys.exit(not any(c["cause"] == "data_starvation" and c["phase"] == "before" and c["op"] == "cudaMemcpy" for c in json.load(open("loader.json"))["chains"]))'; then
	sed -n '/^chains, current/,$p' demo.out | grep -q 'data_starvation before cudaMemcpy' ||
		fail "the diff's current run has not the report's data starvation: $(sed -n '/--diff/,$p' demo.out | tail -20)"
fi
"$IFT" dump --json -i direct.trace --table switches,wakeups,calls >direct.dump.json ||
	fail "dump of direct.trace failed"
sim_check demo-direct.truth direct.json direct.dump.json <<'PY' || fail "the demo's fixed run disagrees with its workload (above)"
import sys
from simcheck import *

truth, r = Truth(sys.argv[1]), load_report(sys.argv[2])
chk = Checks("demo direct")
slack = Slack(Trace(sys.argv[3]), truth, probed())
chk.ok(not slack.errors, "the trace's calls are not the workload's: %s" % slack.errors[:3])
no_high_or_medium(chk, r, truth, slack)
chk.done()
PY
exit 0
