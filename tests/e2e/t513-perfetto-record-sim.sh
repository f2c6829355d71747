#!/usr/bin/env bash
# A real recording exported: simtrain's loader mode on simcuda, recorded by
# `record`, then `export --format perfetto`.  The file keeps the format rules
# and has every call, switch and wake-up once (perfetto_check.py); the feeding
# thread the workload names has its calls as slices and its own switches as
# ftrace lines on the same clock, so Perfetto draws its state under its calls.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

sim_record loader loader --workers 2 --steps 100
assert_no_leftovers

"$IFT" export -i loader.trace --format perfetto -o loader.perfetto.json 2>err ||
	fail "export failed: $(cat err)"
python3 "$IFT_SRC/tests/e2e/perfetto_check.py" "$IFT" loader.trace loader.perfetto.json ||
	fail "the export of a recording breaks the format or loses events (above)"

"$IFT" dump --json -i loader.trace --table switches >switches.json || fail "dump of the switches failed"
python3 - loader.jsonl loader.perfetto.json switches.json <<'PY' || fail "the feeding thread is not on the timeline (above)"
import json, re, sys
run = next(r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "run")
pid, tid = run["pid"], run["feeder_tid"]
doc = json.load(open(sys.argv[2]))
xs = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] == tid]
if not xs or any(e["pid"] != pid for e in xs):
    sys.exit("no slices on the feeding thread %d/%d" % (pid, tid))
lines = [l for l in doc["systemTraceEvents"].split("\n") if " prev_pid=%d " % tid in l]
if not lines:
    sys.exit("no sched_switch of the feeding thread %d" % tid)
# one clock: the switches the file puts inside the span of the thread's
# slices are those the trace has there (how many fall before its first
# call depends on the machine: busy workers preempt its start-up)
ts = [int(re.search(r" (\d+)\.(\d{9}): ", l).group(1)) * 10**9 +
      int(re.search(r" (\d+)\.(\d{9}): ", l).group(2)) for l in lines]
lo = min(round(e["ts"] * 1000) for e in xs)
hi = max(round((e["ts"] + e["dur"]) * 1000) for e in xs)
inside = sum(lo <= t <= hi for t in ts)
sw = [json.loads(l) for l in open(sys.argv[3])]
want = sum(1 for e in sw if e["event"] == "sched_switch" and e["tid"] == tid and
           lo <= e["ts"] <= hi)
if not want or inside != want:
    sys.exit("%d of %d switches of the thread inside its calls' span [%d, %d] ns, the trace "
             "has %d there" % (inside, len(ts), lo, hi, want))
print("feeding thread %d: %d slices, %d switches" % (tid, len(xs), len(lines)))
PY
exit 0
