# DataLoader starvation on simcuda: 4 worker processes (pt_data_worker) build
# batches on 2 CPUs for a feeding thread that waits for each.  The report must
# say data starvation before cudaMemcpy on the feeding thread, name the
# workers that woke it with the batches and the wait each ended, and agree
# with the workload's own clocks: the time it was blocked until a worker
# posted a batch, its time off CPU between calls, every op's calls and
# percentiles, every process's context switches; and the GPU idle as the
# device's log says, the chain's part of it what the thread's own waits
# for a batch left idle (simcheck.check_gpu, idle_in_waits).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

sim_record loader loader --workers 4
assert_no_leftovers

sed -n '/^WHY/,/^CUDA ops/p' loader.txt | head -40
sim_check loader.jsonl loader.json loader.dump.json <<'PY' || fail "the report disagrees with the workload (above)"
import sys
from simcheck import *

truth, r, trace = Truth(sys.argv[1]), load_report(sys.argv[2]), Trace(sys.argv[3])
slack = Slack(trace, truth, probed())
chk = Checks("loader")
workers = {w["pid"]: w for w in truth.of_role("worker")}
chk.ok(len(workers) == 4, "the workload logged %d workers, not 4" % len(workers))

# the chain: data starvation before the copy that each batch ends with
c = one_chain(chk, r, "data_starvation", "before", "cudaMemcpy")
if c:
    # the chain holds the steady state's gaps: the wait for the first batch
    # is the start-up's, a LOW chain of its own
    steady = truth.steady(r)
    ev = c["evidence"]
    only_contention_before(chk, r, c)
    # the severity the workload's own starvation share calls for (HIGH at
    # 20% of the active time, MEDIUM at 5%); on 2 CPUs it is HIGH, under
    # emulation the device's modelled time weighs more.  The report's cost
    # is the share's: what the cost check below allows it (the probes'
    # traps in its gaps, hundreds of us a call under emulation: a 6.1 guest
    # counted 324 ms on CPU in gaps where the workload measured 96) moves
    # the share within that bracket
    own = steady.wait["blocked_ns"] + steady.gaps["all"]["over_floor_cpu_ns"]
    act = steady.active["active_ns"]
    hi = own + 0.03 * own + 5 * MS + slack.over_all()
    chk.ok(c["severity"] in severities_between(own / act, hi / act),
           "severity %s, the workload starved %.0f%% of its active time (%.0f%% with the "
           "probes' cost)" % (c["severity"], 100 * own / act, 100 * hi / act))
    chk.ok((c["pid"], c["tid"]) == (truth.pid, truth.tid),
           "chain on pid %d tid %d, the feeding thread is %d/%d" %
           (c["pid"], c["tid"], truth.pid, truth.tid))
    w = steady.wait
    # blocked until a worker posted: the worker reads its clock, then posts,
    # and reads it again; the feeding thread reads its clock, then waits.
    # The report's wait starts when the thread blocked, after its read (the
    # 3%), and ends when the post woke it, between the worker's two reads:
    # each post's time between them (its system call, the worker preempted
    # in it: 0.3 ms a post in an emulated arm64 guest) may lengthen it
    posting = sum(x["posting_ns"] for x in w["woken_by"])
    unposted = sum(x["unposted"] for x in w["woken_by"])
    chk.ok(not unposted, "%d waits ended by a post the workers did not log" % unposted)
    tol = 0.03 * w["blocked_ns"] + 3 * MS
    chk.between("blocked until a worker posted (fed_ns)", ev["fed_ns"], w["blocked_ns"],
                tol, tol + posting)
    chk.ok(ev["fed_ns"] <= ev["blocked_ns"], "fed %d > blocked %d" % (ev["fed_ns"], ev["blocked_ns"]))
    # on CPU in gaps over the floor: the workload's CPU time in the gaps of at
    # least 1 ms; the report takes off its estimate of page faults (1 us a
    # page), counts interrupts and the ends of preempted runs that the
    # thread's CPU clock does not (slack.preempt_lag_ns), leaves out the
    # waits for a CPU after a wake-up that preempted, which the clock counts
    # (slack.wake_lag_ns), and must guess runs with no switch-in; 25% + 2 ms
    # for gaps near the floor
    want = steady.gaps["all"]["over_floor_cpu_ns"]
    tol = 0.25 * want + 2 * MS + slack.missing_ns
    # and the probes' traps at the gaps' edges are on CPU in the report's
    # gaps, outside the workload's (slack.over_all(): a few us a call here,
    # hundreds under emulation)
    chk.between("on CPU in long gaps", ev["on_cpu_ns"], want,
                tol + ev["page_allocs"] * US + slack.wake_lag_ns,
                tol + truth.irq_ns() + slack.preempt_lag_ns + slack.over_all())
    # the cost is the two: what each may hold beyond the workload's clocks
    # (the posts, the interrupts, preempted runs' ends, the probes) the sum
    # may
    want = w["blocked_ns"] + steady.gaps["all"]["over_floor_cpu_ns"]
    chk.between("cost", c["cost_ns"], want, 0.03 * want + 5 * MS + slack.wake_lag_ns,
                0.03 * want + 5 * MS + posting + truth.irq_ns() + slack.preempt_lag_ns +
                slack.over_all())
    check_gap_offcpu(chk, steady, c, slack)
    check_active(chk, steady, c, slack)
    chk.ok(ev["workers"] == 4, "evidence: %d workers" % ev["workers"])
    # who woke it: the workers, each with the batches it handed over while the
    # feeding thread was blocked (a post that lands between the feeding
    # thread's clock read and its futex wait is no wake-up: +-2); anyone else
    # only now and then (the recorder itself, reading /proc/PID/maps, holds
    # the process's mmap lock a moment: a fork waits for it)
    woke = {t["pid"]: t for t in tasks(c, "woke")}
    want = {x["pid"]: x for x in w["woken_by"] if x["batches"]}
    chk.ok(set(want) <= set(woke), "woken by %s, the workload says %s" % (sorted(woke), sorted(want)))
    others = [t for pid, t in woke.items() if pid not in want]
    chk.ok(sum(t["share_permille"] for t in others) <= 50,
           "woken by others than the workers: %s" % others)
    # each wake-up ends later in the report than the worker's clock read
    # before its post, inside the post: at most the worker's posts' own time
    for pid in sorted(set(woke) & set(want)):
        t, x = woke[pid], want[pid]
        chk.ok(t["role"] == "input worker" and not t["outside"],
               "waker %d: role %r outside %r" % (pid, t["role"], t["outside"]))
        chk.ok(t["comm"] == "pt_data_worker", "waker %d named %r, not pt_data_worker" % (pid, t["comm"]))
        chk.ok(abs(t["count"] - x["batches"]) <= 2,
               "worker %d woke it %d times, handed over %d batches it waited for" %
               (pid, t["count"], x["batches"]))
        # the report's wait starts when the thread blocks, the workload's at
        # its clock read: the thread's time on a CPU or queued for one in
        # between is the workload's alone (a few us here; under an emulated
        # arm64 guest, preempted there, 7 ms of 126)
        tol = 0.03 * x["blocked_ns"] + 2 * MS
        chk.between("worker %d: wait it ended" % pid, t["ns"], x["blocked_ns"],
                    tol + trace.awake_in(truth.tid, x["spans"]), tol + x["posting_ns"])
    # any worker named as having taken the CPU from the feeding thread is
    # named as a worker (who else did depends on the machine's other load)
    for cc in chains(r, "cpu_contention"):
        for t in tasks(cc, "preempted"):
            if t["pid"] in workers:
                chk.ok(t["role"] == "input worker" and not t["outside"],
                       "preempted by worker %d: %s" % (t["pid"], t))

check_ops(chk, truth, r, probed(), slack)
check_main(chk, truth, r, trace)

# the workers: each one process, named, with the parent and the switches it counted
procs = {p["pid"]: p for p in r["processes"]}
loaders = {p["pid"] for p in r["processes"] if p["role"] == "input worker"}
chk.ok(loaders == set(workers), "dataloader workers %s, the workload forked %s" %
       (sorted(loaders), sorted(workers)))
for pid, ru in sorted(workers.items()):
    p = procs.get(pid)
    if not chk.ok(p is not None, "worker %d is not in the report" % pid):
        continue
    chk.ok(p["ppid"] == truth.pid, "worker %d: parent %d" % (pid, p["ppid"]))
    chk.ok("pt_data_worker" in p["names"], "worker %d: names %s" % (pid, p["names"]))
    check_switches(chk, "worker %d" % pid, trace, {pid}, p["involuntary_switches"],
                   p["voluntary_switches"], ru)
# the GPU, by simcuda's stand-in NVML: idle in the steady state as the
# device's log says, and the data-starvation chain explains the part of it
# the feeding thread's own waits for a batch left (10 points): 80% at
# least where those waits were most of it (a quiet machine; a loaded 6.12
# guest's were 25.5%, the chain's 30.2%, CPU contention the rest)
g = check_gpu(chk, r, "loader.busy.log")
if g and c:
    share = g[1].get(r["chains"].index(c), 0)
    want = idle_in_waits(truth, r, "loader.busy.log")
    chk.note("the data-starvation chain explains %.1f%% of the GPU's idle time; the feeding "
             "thread's waits for a batch, by its log, %.1f%%" % (share, want))
    chk.ok(abs(share - want) <= 10 and share >= min(80, want - 10),
           "the data-starvation chain explains %.1f%% of the GPU's idle time; the feeding "
           "thread's waits for a batch %.1f%% by its log (10 points, 80%% at least where "
           "they were 90%%)" % (share, want))
    chk.ok(not c["gpu"]["not_waiting"], "the GPU did not wait for the starved thread: %r"
           % c["gpu"])
chk.done()
PY
exit 0
