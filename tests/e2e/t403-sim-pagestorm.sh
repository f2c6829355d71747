# A page-fault storm on simcuda: each step maps 32 MiB of fresh pageable
# memory, touches it, cudaMemcpy's it and unmaps it.  The report must say
# page-allocation pressure before cudaMemcpy (and never data starvation: the
# thread builds nothing, it faults), with the pages and bytes the workload
# touched, the CPU time it spent between calls, and its run-queue wait there.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

sim_record storm pagestorm --steps 40 --mb 32
assert_no_leftovers

sed -n '/^WHY/,/^CUDA ops/p' storm.txt | head -30
sim_check storm.jsonl storm.json storm.dump.json <<'PY' || fail "the report disagrees with the workload (above)"
import sys
from simcheck import *

truth, r, trace = Truth(sys.argv[1]), load_report(sys.argv[2]), Trace(sys.argv[3])
slack = Slack(trace, truth, probed())
chk = Checks("pagestorm")
# the recorder measured what a fresh page costs here (host.page_fault_ns.*);
# the workload's own touching is the same loop: per fault, its thread CPU
# time and its wall time bracket the measurement, within the noise of a
# loaded machine
st = truth.storm
pf = r["trace"].get("page_fault_ns", 0)
chk.ok(st["touch_cpu_ns"] / st["minflt"] / 3 <= pf <= 3 * st["touch_ns"] / st["minflt"],
       "a fresh page measured at %d ns; the workload's faults took %d ns of CPU, %d ns of wall time" %
       (pf, st["touch_cpu_ns"] // st["minflt"], st["touch_ns"] // st["minflt"]))
check_ops(chk, truth, r, probed(), slack)
check_main(chk, truth, r, trace)
c = one_chain(chk, r, "page_alloc_pressure", "before", "cudaMemcpy")
if c:
    # the chain holds the steady state's gaps: the first step's faults, before
    # the loop's first copy, are the start-up's
    steady = truth.steady(r)
    st = steady.storm
    ev = c["evidence"]
    only_contention_before(chk, r, c)
    chk.ok(ev["page_fault_ns"] == pf, "the chain weighed a page at %d ns, the trace says %d" %
           (ev["page_fault_ns"], pf))
    # as severe as the workload's own faulting share of its active time
    # (HIGH on 2 idle CPUs; less where others' load makes it wait for a CPU)
    share = steady.gaps["all"]["over_floor_cpu_ns"] / steady.active["active_ns"]
    chk.ok(c["severity"] in severities(share), "severity %s, the workload faulted %.0f%% of its "
           "active time" % (c["severity"], 100 * share))
    chk.ok((c["pid"], c["tid"]) == (truth.pid, truth.tid),
           "chain on %d/%d, the feeding thread is %d/%d" % (c["pid"], c["tid"], truth.pid, truth.tid))
    # every touched page is one allocation (the workload asks for 4 KiB pages
    # with MADV_NOHUGEPAGE); the rest between calls is page tables and the
    # loop's own: at most 2% + 4 MiB more
    chk.ok(st["bytes"] <= ev["page_alloc_bytes"] <= st["bytes"] * 1.02 + (4 << 20),
           "page_alloc_bytes %d, the workload touched %d bytes" % (ev["page_alloc_bytes"], st["bytes"]))
    chk.ok(st["minflt"] <= ev["page_allocs"] <= st["minflt"] * 1.02 + 1024,
           "%d page allocations, the workload had %d minor faults" % (ev["page_allocs"], st["minflt"]))
    # the storm is all its on-CPU time between calls: the workload's CPU time
    # in the gaps of at least 1 ms (each step's touch and unmap); the trace
    # counts interrupts there and the ends of preempted runs that the
    # thread's CPU clock does not, leaves out waits after a preempting
    # wake-up that it does (simcheck's notes), and must guess runs with no
    # switch-in
    want = steady.gaps["all"]["over_floor_cpu_ns"]
    tol = 0.03 * want + 2 * MS + slack.missing_ns
    chk.between("cost (on CPU faulting between calls)", c["cost_ns"], want, tol + slack.wake_lag_ns,
                tol + truth.irq_ns() + slack.preempt_lag_ns)
    chk.ok(c["cost_ns"] >= st["touch_cpu_ns"], "cost %s is less than the touching alone (%s)" %
           (fmt(c["cost_ns"]), fmt(st["touch_cpu_ns"])))
    check_gap_offcpu(chk, steady, c, slack)
    check_active(chk, steady, c, slack)
chk.ok(not chains(r, "data_starvation"), "data starvation reported for a page-fault storm: %s" %
       [x["summary"] for x in chains(r, "data_starvation")])
chk.done()
PY
exit 0
