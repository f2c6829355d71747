#!/usr/bin/env bash
# NCCL calls are traced like the runtime's: a job of 4 ranks (one process
# each, tests/workloads/ranks.py) on the stand-in runtime and NCCL, rank 2
# fed by a slow input worker.  Every rank's ncclCommInitRank names its rank
# and the world's size, every ncclAllReduce of every rank is a row with its
# count, datatype and op, inside the interval the rank logged around it and
# with its duration; the ranks that waited for the slow one spent in their
# all-reduces what they measured themselves (within 10%, or, where more,
# the CPU time and run-queue wait each logged around its calls), the slow
# one little.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_debian_python
need_simcuda nccl

"$IFT" record -q --cuda-lib "$sim" --cuda-lib "$nccl" -o ranks.trace -- \
	$py "$IFT_SRC/tests/workloads/ranks.py" --cudart "$sim" --nccl "$nccl" \
	>truth.json 2>record.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
"$IFT" dump --json -i ranks.trace --table calls >calls.json || fail "dump failed"
"$IFT" info -i ranks.trace >info.out || fail "info failed"
grep -q "libnccl.so.2.*nccl" info.out || fail "the trace does not list the NCCL library: $(cat info.out)"
python3 - truth.json calls.json <<'PY' || fail "NCCL calls differ from the ranks' own account"
import json, statistics, sys
truth = json.load(open(sys.argv[1]))
calls = [json.loads(l) for l in open(sys.argv[2])]
err = []
waits = {}
for r in truth["ranks"]:
    mine = [c for c in calls if c["pid"] == r["pid"]]
    init = [c for c in mine if c["event"] == "ncclCommInitRank"]
    if len(init) != 1 or init[0].get("rank") != r["rank"] or init[0].get("nranks") != truth["world"] \
            or init[0]["ret"] != 0:
        err.append("rank %d: ncclCommInitRank rows %s" % (r["rank"], init))
    ar = sorted((c for c in mine if c["event"] == "ncclAllReduce"), key=lambda c: c["ts"])
    if len(ar) != len(r["steps"]):
        err.append("rank %d: %d ncclAllReduce rows, %d steps" % (r["rank"], len(ar), len(r["steps"])))
        continue
    for c, s in zip(ar, r["steps"]):
        if (c.get("count"), c.get("datatype"), c.get("op"), c["ret"]) != \
                (r["count"], r["datatype"], r["op"], 0):
            err.append("rank %d: %s" % (r["rank"], c))
            break
        if not (s["enter"] <= c["ts"] and c["ts"] + c["dur_ns"] <= s["exit"]):
            err.append("rank %d: a call at %d+%d outside its step's [%d, %d]" %
                       (r["rank"], c["ts"], c["dur_ns"], s["enter"], s["exit"]))
            break
    got = sum(c["dur_ns"] for c in ar)
    want = sum(s["exit"] - s["enter"] for s in r["steps"])
    waits[r["rank"]] = (got, want, sum(s["call_cpu_ns"] + max(0, s["call_run_delay_ns"])
                                       for s in r["steps"]))
    # the call lies inside the logged interval, which also holds the ctypes
    # call's way in and out and the probes' traps: a rank that waited for
    # the slow one spent in its calls what it measured, to within 10% (the
    # issue's; under emulation the traps and ctypes took 5.2% of a 5.10
    # guest's all-reduces, 1 ms a call), or within what it logged on CPU
    # and waiting for one over its intervals, where that is more (a 5.10
    # guest beside another: 7 ms a call, the ranks preempted on the way out)
    around = sum(s["call_cpu_ns"] + max(0, s["call_run_delay_ns"]) for s in r["steps"])
    if got > want or (r["rank"] != truth["slow"] and got < want - max(0.10 * want, around)):
        err.append("rank %d: %d ns in ncclAllReduce, it measured %d (%d of it on or waiting "
                   "for a CPU)" % (r["rank"], got, want, around))
slow = truth["slow"]
fast = [g for k, (g, w, _) in waits.items() if k != slow]
if slow in waits and fast and waits[slow][0] >= min(fast):
    err.append("the slow rank %d spent %d ns in its all-reduces, the others %s: it did not "
               "make them wait" % (slow, waits[slow][0], fast))
print("waits (recorded, measured, on or waiting for a CPU) per rank:", waits)
if err:
    sys.exit("; ".join(err[:5]))
PY
assert_no_leftovers
exit 0
