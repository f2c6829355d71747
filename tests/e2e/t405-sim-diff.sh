# report --diff between t400's starving DataLoader (current) and t401's fix
# (baseline), the same steps of the same model: the wall time must grow by
# the factor the workloads measured themselves, the HIGH chains' cost appear,
# the scheduler's totals grow with the workers, and each op's calls, p50 and
# p99 on each side be what that side's workload timed.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

sim_record loader loader --workers 4
sim_record direct direct
assert_no_leftovers
"$IFT" report -i loader.trace --diff direct.trace --json >diff.json 2>diff.err ||
	fail "report --diff failed: $(cat diff.err)"
"$IFT" report -i loader.trace --diff direct.trace >diff.txt 2>&1 || fail "text --diff failed"
for run in loader direct; do
	"$IFT" dump --json -i $run.trace --table tasks >$run.tasks.json || fail "dump of $run.trace failed"
done

sed -n '1,40p' diff.txt
sim_check loader.jsonl direct.jsonl diff.json loader.json direct.json loader.dump.json \
	direct.dump.json loader.tasks.json direct.tasks.json <<'PY' || fail "the diff disagrees with the workloads (above)"
import sys
from simcheck import *

cur, base = Truth(sys.argv[1]), Truth(sys.argv[2])
d, rc, rb = load_report(sys.argv[3]), load_report(sys.argv[4]), load_report(sys.argv[5])
slack = {"current": Slack(Trace(sys.argv[6]), cur, probed()),
         "baseline": Slack(Trace(sys.argv[7]), base, probed())}
ch = d["changes"]
chk = Checks("diff")

# each side is the report of its own trace
for side, rep in (("current", rc), ("baseline", rb)):
    chk.ok(d[side]["trace"] == rep["trace"] and d[side]["chains"] == rep["chains"],
           "the diff's %s differs from that trace's own report" % side)

# the wall time: each side's trace spans its workload's process, from its
# exec to its exit as the trace has them (the recorder starts before the
# one and stops after the other), which spans the run the workload timed
# itself; the ratio is the two durations'
def life(truth, path):
    ev = [json.loads(l) for l in open(path)]
    ex = [e["ts"] for e in ev if e["event"] == "sched_process_exec" and e["pid"] == truth.pid]
    end = [e["ts"] for e in ev if e["event"] == "sched_process_exit" and e["tid"] == truth.pid]
    return end[-1] - ex[0] if ex and end else None

import json
cw, bw = cur.run["wall_ns"], base.run["wall_ns"]
for side, w, t, path in (("current", cw, cur, sys.argv[8]), ("baseline", bw, base, sys.argv[9])):
    got, lived = ch["duration_ns"][side], life(t, path)
    if chk.ok(lived is not None, "%s: no exec or exit of process %d in its trace" % (side, t.pid)):
        chk.ok(w <= lived <= got, "%s duration %s, its process lived %s, its workload ran %s" %
               (side, fmt(got), fmt(lived), fmt(w)))
ratio = ch["duration_ns"]["ratio"]
chk.ok(ratio > 1, "the starving run is not longer: ratio %.2f" % ratio)
chk.ok(abs(ratio - ch["duration_ns"]["current"] / ch["duration_ns"]["baseline"]) < 0.01,
       "duration ratio %.2f, the durations' %.2f" %
       (ratio, ch["duration_ns"]["current"] / ch["duration_ns"]["baseline"]))
chk.note("duration %s -> %s (x%.2f; workloads x%.2f)" % (fmt(ch["duration_ns"]["baseline"]),
         fmt(ch["duration_ns"]["current"]), ratio, cw / bw))

# the HIGH and MEDIUM chains: none for the fix but the machine's other load
# (CPU contention within the run-queue wait the kernel counted for its
# thread, which a loaded machine makes HIGH); for the loader, what its
# report says
nb = neighbour_contention(chk, rb, base)
high_nb = sum(c["cost_ns"] for c in nb if c["severity"] == "HIGH")
# the fix builds each batch itself (direct indexing), on CPU between its
# calls: where that is a fifth of its active time (an emulated CPU makes the
# indexing 10-50x slower: a 5.10 guest's took 29%), the report rightly calls
# it data starvation by the thread itself, HIGH where the workload's own CPU
# time in its gaps, with the probes' cost the report's gaps also hold (t400's
# bracket), says so
bs = base.steady(rb)
own, act = bs.gaps["all"]["over_floor_cpu_ns"], bs.active["active_ns"]
hi = own + 0.03 * own + 5 * MS + slack["baseline"].over_all()
self_fed = sum(c["cost_ns"] for c in chains(rb, "data_starvation", "before")
               if c["severity"] == "HIGH" and "HIGH" in severities_between(own / act, hi / act))
chk.ok(ch["high_chain_cost_ns"]["baseline"] == high_nb + self_fed,
       "HIGH chains in the baseline beyond the neighbours' load and its own indexing (%.0f%% "
       "of its active time on CPU in gaps, %.0f%% with the probes'): %s" %
       (100 * own / act, 100 * hi / act,
        [c["summary"] for c in rb["chains"] if c["severity"] == "HIGH"]))
for sev in ("HIGH", "MEDIUM"):
    key = sev.lower() + "_chain_cost_ns"
    cost = sum(c["cost_ns"] for c in rc["chains"] if c["severity"] == sev)
    chk.ok(ch[key]["current"] == cost, "%s chain cost %d, the current report's %s chains cost %d"
           % (sev, ch[key]["current"], sev, cost))
# a host cause for the loader: starvation on 2 CPUs; where the machine is
# slower its workers' preemptions of the thread may cost more (t400)
chk.ok(any(c["severity"] in ("HIGH", "MEDIUM") for c in rc["chains"]),
       "no HIGH or MEDIUM chain in the current report")
chk.ok(high_nb + self_fed or "ratio" not in ch["high_chain_cost_ns"],
       "a ratio against a baseline of 0")
# four busy workers: far more CPU and run-queue wait in all, more blocked
# (the feeding thread waits for batches)
for key in ("on_cpu_ns", "runqueue_wait_ns", "blocked_ns"):
    chk.ok(ch[key]["ratio"] > 1, "%s ratio %.2f: no more than the fix" % (key, ch[key]["ratio"]))

# each op, each side: the calls, p50 and p99 its workload timed (the
# tolerances of check_ops); so the tail change the diff shows is the real one
ops = {o["op"]: o for o in ch["ops"]}
funcs = probed()
for side, t in (("current", cur), ("baseline", base)):
    for name in sorted(set(t.ops) & funcs):
        o = ops.get(name)
        if not chk.ok(o is not None, "%s missing from the diff" % name):
            continue
        w = t.ops[name]
        chk.ok(o["calls"][side] == w["count"], "%s %s: %d calls, workload %d" %
               (side, name, o["calls"][side], w["count"]))
        pct_ok(chk, name, o["p50_ns"][side], o["p99_ns"][side], w,
               slack[side].op_edge_max.get(name, 0), slack[side], side)
s = ops["cudaStreamSynchronize"]
chk.note("cudaStreamSynchronize p99 %s -> %s (workloads %s -> %s)" %
         (fmt(s["p99_ns"]["baseline"]), fmt(s["p99_ns"]["current"]),
          fmt(base.ops["cudaStreamSynchronize"]["p99_ns"]), fmt(cur.ops["cudaStreamSynchronize"]["p99_ns"])))
# the copy moved from pageable (cudaMemcpy) to pinned (cudaMemcpyAsync)
chk.ok(ops["cudaMemcpy"]["calls"]["baseline"] == 0 and ops["cudaMemcpyAsync"]["calls"]["current"] == 0 and
       "ratio" not in ops["cudaMemcpy"]["calls"], "copies: %s %s" % (ops["cudaMemcpy"], ops["cudaMemcpyAsync"]))
chk.done()
PY
exit 0
