# A real torch.utils.data.DataLoader (Debian's CPU PyTorch, 4 workers)
# feeding the stand-in CUDA runtime through ctypes, against direct indexing
# of the same tensor.  The DataLoader run must be reported as data
# starvation of the feeding thread, woken by the pt_data_worker processes,
# costing what the workload itself measured waiting in next(); the direct
# run must have no HIGH or MEDIUM chain and be GPU-bound; --diff shows the
# wall time and the chains that went away.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch
py=$FEEDER_PY
sim=$FEEDER_SIM

for mode in loader direct; do
	"$IFT" record -q --cuda-lib "$sim" -o $mode.trace -- "$py" \
		"$IFT_SRC/tests/workloads/torch-loader.py" --cudart "$sim" --mode $mode \
		>$mode.truth 2>$mode.err || fail "record $mode failed: $(tail -3 $mode.err)"
	"$IFT" report --json -i $mode.trace >$mode.json || fail "report $mode failed"
done
"$IFT" dump --json --table calls -i loader.trace >loader.calls || fail "dump of loader.trace failed"
"$IFT" report --json -i loader.trace --diff direct.trace >diff.json || fail "report --diff failed"

cpus=$("$IFT" info -i loader.trace | awk '$1 == "cpu.count" { print $2 }')
[ -n "$cpus" ] || fail "loader.trace has no cpu.count"
python3 - "$cpus" "$IFT_SRC/tests/e2e" <<'PY' || fail "the reports do not match the workloads"
import json, sys
sys.path.insert(0, sys.argv[2])
from simcheck import neighbour_chains, runq_cost, severities
cpu_count = sys.argv[1]
bad = []
def load(m):
    return json.load(open(m + ".truth")), json.load(open(m + ".json"))

truth, r = load("loader")
ch = {(c["cause"], c["phase"]): c for c in r["chains"] if c["stage"] == "steady"}
s = ch.get(("data_starvation", "before"))
if not s:
    bad.append("loader: no data_starvation chain: %r" % [c["summary"] for c in r["chains"]])
else:
    e = s["evidence"]
    if s["severity"] not in ("HIGH", "MEDIUM"):
        bad.append("loader: starvation is only %s" % s["severity"])
    if s["tid"] != truth["tid"] or s["op"] != "cudaMemcpy":
        bad.append("loader: chain on tid %d op %s, the feeding thread is %d before cudaMemcpy"
                   % (s["tid"], s["op"], truth["tid"]))
    woke = [t for t in e["tasks"] if t["relation"] == "woke"]
    workers = [t for t in woke if t["role"] == "input worker"]
    if sum(t["share_permille"] for t in workers) < 800:
        bad.append("loader: the workers woke it for less than 80%%: %r" % woke[:4])
    # the gaps (blocked until fed, on CPU, runnable) hold next()'s waits of
    # the steady state: the first batch's wait is the start-up's, and so
    # are those of the loop's first iterations when the report found them
    # far slower than the rest (warm-up: the workers still starting, or a
    # loaded machine)
    loop = [t["loop"] for p in r["processes"] for t in p["threads"]
            if t["tid"] == truth["tid"] and t.get("loop")]
    warm = loop[0]["warmup"] if loop else 0
    want = sum(truth["waits_ns"][1 + warm:])
    gap = e["fed_ns"] + e["on_cpu_ns"] + e["runqueue_wait_ns"] + e.get("steal_ns", 0)
    print("loader: steady wait in next() %.3f s (%d warm-up batches left out), in the gaps "
          "%.3f s (fed %.3f, on CPU %.3f, runnable %.3f)"
          % (want / 1e9, warm, gap / 1e9, e["fed_ns"] / 1e9, e["on_cpu_ns"] / 1e9,
             e["runqueue_wait_ns"] / 1e9))
    if not 0.75 * want <= gap <= 1.25 * want + 50e6:
        bad.append("loader: the gaps hold %.3f s, next() waited %.3f s" % (gap / 1e9, want / 1e9))
    if e["workers"] != truth["workers"]:
        bad.append("loader: %d workers named, the workload had %d" % (e["workers"], truth["workers"]))
    # more workers and the feeding thread than CPUs: as many workers as the
    # CPUs the trace was recorded on leave for them (at least one)
    cpus = int(cpu_count)
    if truth["workers"] + 1 > cpus:
        nw = "num_workers=%d" % max(cpus - 1, 1)
        if not any(nw in x for x in s["recommendations"]):
            bad.append("loader: %d workers on %d CPUs and no %s: %r"
                       % (truth["workers"], cpus, nw, s["recommendations"]))
ops = {o["op"]: o for o in r["ops"]}
for op in ("cudaMemcpy", "cudaLaunchKernel", "cudaStreamSynchronize"):
    if ops.get(op, {}).get("calls") != truth[op]["n"]:
        bad.append("loader: %s calls %r, the workload made %d" % (op, ops.get(op, {}).get("calls"), truth[op]["n"]))
# each synchronize the trace holds lies inside the CLOCK_MONOTONIC interval
# Python measured around its call (the trace's clock is the same one), so
# none is longer than Python saw it, whatever the load or emulation added
# around the call; and the report's p50 is the nearest-rank p50 of those
syncs = sorted((c["ts"], c["dur_ns"]) for c in map(json.loads, open("loader.calls"))
               if c["event"] == "cudaStreamSynchronize")
iv = truth["sync_iv"]
if len(syncs) != len(iv):
    bad.append("loader: %d synchronizes in the trace, Python made %d" % (len(syncs), len(iv)))
else:
    out = [(i, s, v) for i, (s, v) in enumerate(zip(syncs, iv))
           if not (v[0] <= s[0] and s[0] + s[1] <= v[1])]
    if out:
        i, s, v = out[0]
        bad.append("loader: %d synchronizes outside Python's interval, the %dth at [%d, +%d] "
                   "outside [%d, %d]" % (len(out), i, s[0], s[1], v[0], v[1]))
    durs = sorted(d for _, d in syncs)
    p50 = durs[max(1, -(-len(durs) * 50 // 100)) - 1] if durs else 0
    print("loader: synchronize p50 %d ns (Python saw %d), each inside Python's interval"
          % (p50, truth["cudaStreamSynchronize"]["p50_ns"]))
    if ops["cudaStreamSynchronize"]["p50_ns"] != p50:
        bad.append("loader: synchronize p50 %d ns in the report, %d in the calls"
                   % (ops["cudaStreamSynchronize"]["p50_ns"], p50))

truth, r = load("direct")
# the direct run has no host cause: contention is other load on the
# machine, which the report is right to show within what the scheduler
# counted for the thread; anything else loud is a false host cause
outside = neighbour_chains(r, truth["tid"], truth["run_delay_ns"])
if outside:
    cost = runq_cost(outside)
    print("direct: neighbours' load: %d chains, %.1f ms; the scheduler counted %.1f ms" %
          (len(outside), cost / 1e6, truth["run_delay_ns"] / 1e6))
    if cost > 1.03 * truth["run_delay_ns"] + 2e6:
        bad.append("direct: CPU contention %d ns, more than the scheduler counted (%d ns)" %
                   (cost, truth["run_delay_ns"]))
# its gather on the CPU is its own input-building: a small share of its
# time on 2 CPUs, a third under emulation, where the device's modelled time
# weighs less; the report must say what the workload's own share calls for
# (gaps under the 1 ms floor are the loop's own overhead, docs/report.md)
share = sum(w for w in truth["waits_ns"][1:] if w >= 1e6) / truth["wall_ns"]
allowed = severities(share)
itself = [c for c in r["chains"] if c["cause"] == "data_starvation" and c["phase"] == "before"
          and c["stage"] == "steady" and c["severity"] in allowed]
print("direct: the gather took %.0f%% of the loop: %s" % (100 * share, sorted(allowed)))
if "LOW" not in allowed and not itself:
    bad.append("direct: the gather took %.0f%% of the loop, and no %s starvation chain: %r"
               % (100 * share, "/".join(sorted(allowed)), [c["summary"] for c in r["chains"]]))
loud = [c["summary"] for c in r["chains"] if c["severity"] != "LOW" and c not in outside
        and c not in itself]
if loud:
    bad.append("direct: HIGH or MEDIUM chains: %r" % loud)
# GPU-bound where the workload waited for the device half its loop or more
dev = truth["cudaStreamSynchronize"]["sum_ns"] / truth["wall_ns"]
if dev >= 0.52 and not any(c["cause"] == "gpu_bound" for c in r["chains"]):
    bad.append("direct: waited for the device %.0f%% of its loop, not reported GPU-bound: %r"
               % (100 * dev, [c["summary"] for c in r["chains"]]))

d = json.load(open("diff.json"))["changes"]
# the durations --diff compares are each report's, and each holds the whole
# script as it timed itself; the traces also hold torch's import (1-2 s, and
# noisy on a loaded machine), so their difference says nothing alone
lt = json.load(open("loader.truth"))
lw, dw = lt["wall_ns"], truth["wall_ns"]
grew = d["duration_ns"]["current"] - d["duration_ns"]["baseline"]
print("diff: duration %+.3f s, the loops' wall time %+.3f s" % (grew / 1e9, (lw - dw) / 1e9))
for side, rep, t in (("current", json.load(open("loader.json")), lt), ("baseline", r, truth)):
    if d["duration_ns"][side] != rep["trace"]["duration_ns"]:
        bad.append("diff: %s duration %d, its report's %d"
                   % (side, d["duration_ns"][side], rep["trace"]["duration_ns"]))
    if rep["trace"]["duration_ns"] < t["script_ns"]:
        bad.append("diff: the %s trace lasts %d ns, less than its script's %d"
                   % (side, rep["trace"]["duration_ns"], t["script_ns"]))
# the direct run's loud chains cost nothing but the neighbours' load and
# its own gather above
neighbours = sum(c["cost_ns"] for c in outside + itself if c["severity"] in ("HIGH", "MEDIUM"))
if not (d["high_chain_cost_ns"]["current"] + d["medium_chain_cost_ns"]["current"] > 0 and
        d["high_chain_cost_ns"]["baseline"] + d["medium_chain_cost_ns"]["baseline"] == neighbours):
    bad.append("diff: chain costs %r %r" % (d["high_chain_cost_ns"], d["medium_chain_cost_ns"]))
for b in bad:
    print(b)
raise SystemExit(1 if bad else 0)
PY
assert_no_leftovers
exit 0
