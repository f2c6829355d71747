# A noisy neighbour: a healthy training loop on simcuda (pinned batch, the
# GPU the bottleneck) while six CPU hogs, started before the recording and
# not traced, share its 2 CPUs.  The report must put a HIGH CPU contention
# chain first, say CPU contention between the launches, name the hogs by pid
# and comm as outside the traced processes (most of the wait, together),
# point its fix at the top outside preemptor, and cost what the workload
# measured itself: its wall time minus its CPU time between calls.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"

hogs= watcher=
stop_hogs() {
	[ -n "$watcher" ] && kill "$watcher" 2>/dev/null
	for p in $hogs; do
		kill "$p" 2>/dev/null
	done
	for p in $hogs $watcher; do
		wait "$p" 2>/dev/null
	done
	watcher=
}
trap stop_hogs EXIT
for i in 1 2 3 4 5 6; do
	# until killed: an emulated guest's recorder may take a minute to start
	taskset -c 0,1 "$SIMTRAIN" hog --seconds 0 &
	hogs="$hogs $!"
done
# running, and renamed, before the recording starts
for p in $hogs; do
	for _ in $(seq 100); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = noisy_hog ] && break
		sleep 0.02
	done
	[ "$(cat /proc/$p/comm 2>/dev/null)" = noisy_hog ] || fail "hog $p did not start"
done

# the hogs stop when the workload has logged its last line, not after the
# recorder's teardown (slow with every CPU busy)
# (and say whether every one still ran then: not gone, not a zombie)
alive() {
	local p st
	for p in $hogs; do
		st=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] || return 1
	done
}
(while ! grep -qs '"type":"run"' noisy.jsonl; do sleep 0.05; done
 alive && echo all >hogs.alive; kill $hogs 2>/dev/null) &
watcher=$!
sim_record noisy healthy --steps 200 --host-us 150
# the watcher is done once the workload's last line is there
grep -qs '"type":"run"' noisy.jsonl || fail "the workload logged no run line"
wait $watcher
watcher=
stop_hogs
[ -f hogs.alive ] || fail "a hog had ended before the workload did"
hogs_list=$(echo $hogs | tr ' ' ,)
hogs=
assert_no_leftovers

sed -n '/^WHY/,/^CUDA ops/p' noisy.txt | head -60
sim_check noisy.jsonl noisy.json "$hogs_list" noisy.dump.json <<'PY' || fail "the report disagrees with the workload (above)"
import sys
from simcheck import *

truth, r, trace = Truth(sys.argv[1]), load_report(sys.argv[2]), Trace(sys.argv[4])
hogs = {int(p) for p in sys.argv[3].split(",")}
chk = Checks("noisy neighbour")
slack = Slack(trace, truth, probed())
check_ops(chk, truth, r, probed(), slack)
check_main(chk, truth, r, trace)
chk.ok(not hogs & {p["pid"] for p in r["processes"]}, "the hogs were traced")

# the neighbour's cost: the feeding thread waits for a CPU between its
# launches and, once the device wakes it, inside cudaStreamSynchronize; which
# of the two weighs more depends on the machine's other load, but the first
# chain is CPU contention, HIGH
first = r["chains"][0] if r["chains"] else None
chk.ok(first is not None and first["cause"] == "cpu_contention" and first["severity"] == "HIGH",
       "the first chain is not a HIGH CPU contention: %s" %
       ["%s %s %s %s" % (x["severity"], x["cause"], x["phase"], x["op"]) for x in r["chains"]])

# every CPU contention chain: on the feeding thread; any hog it names named
# right (by pid and comm, outside the traced processes); the fix names the
# top outside preemptor
for c in chains(r, "cpu_contention"):
    what = "%s %s chain" % (c["phase"], c["op"])
    chk.ok((c["pid"], c["tid"]) == (truth.pid, truth.tid),
           "%s on %d/%d, the feeding thread is %d/%d" % (what, c["pid"], c["tid"], truth.pid, truth.tid))
    pre = tasks(c, "preempted")
    for t in pre:
        if t["pid"] in hogs:
            chk.ok(t["comm"] == "noisy_hog" and t["outside"] and t["tid"] == t["pid"] and
                   t["role"] is None, "%s: hog %d: %s" % (what, t["pid"], t))
    top = [t for t in pre if t["outside"]][:1]
    rec = " ".join(c["recommendations"])
    chk.ok(not top or "pid %d (%s)" % (top[0]["pid"], top[0]["comm"]) in rec,
           "%s: the fix does not name the top outside preemptor %s: %s" % (what, top, c["recommendations"]))
    chk.note("%s %s, preempted by: %s" % (c["severity"], what,
             ", ".join("%s/%d %s" % (t["comm"], t["pid"], fmt(t["ns"])) for t in pre)))

# between the launches: the loop never sleeps there, so its time off CPU
# there is run-queue wait, the chain's cost (with any steal), which the
# workload measured itself as wall minus CPU time
c = one_chain(chk, r, "cpu_contention", "before", "cudaLaunchKernel")
if c:
    ev = c["evidence"]
    chk.ok(c["severity"] in ("HIGH", "MEDIUM"), "between the launches: %s" % c["severity"])
    # it never sleeps there of its own: any wait in a sleep is the kernel's,
    # uninterruptible (D: a page read in from a guest's 9p root, seen on
    # 6.12 under emulation)
    chk.ok(ev["blocked_ns"] - ev["blocked_io_ns"] <= 1 * MS,
           "blocked %s between calls (%s of it uninterruptible) in a loop that never sleeps there" %
           (fmt(ev["blocked_ns"]), fmt(ev["blocked_io_ns"])))
    # the cost is that wait, and the hypervisor's steal of its running
    # time there (a VM's, seen in CI: 2 ms of 1.23 s)
    chk.ok(c["cost_ns"] == ev["runqueue_wait_ns"] + ev["steal_ns"],
           "cost %d != run-queue wait %d + steal %d" %
           (c["cost_ns"], ev["runqueue_wait_ns"], ev["steal_ns"]))
    # the chain holds the steady state's gaps (where the first steps are
    # slower, as in an emulated guest, they are the start-up's)
    steady = truth.steady(r)
    check_gap_offcpu(chk, steady, c, slack)
    check_active(chk, steady, c, slack)
    # who took the CPU there: the hogs together most of it (not one by one:
    # someone else's busy process on the machine may take more than any
    # single hog).  How many hogs that is depends on how the load balancer
    # parted them between the CPUs: 3 and 3, or 4 and 2 with the loop
    # beside the 2, seen in CI; so at least one, and the share below.
    # The kernel's own threads (children of kthreadd, as this machine's
    # /proc has them) are not among the user load the hogs must outweigh:
    # under emulation a 6.1 guest's rcu_preempt took 4.8 s of the 8.7 s.
    def kthread(pid):
        try:
            stat = open("/proc/%d/stat" % pid).read()
        except OSError:
            return False
        return pid == 2 or stat[stat.rindex(")") + 2:].split()[1] == "2"
    pre = tasks(c, "preempted")
    mine = [t for t in pre if t["pid"] in hogs]
    users = [t for t in pre if not kthread(t["pid"])]
    chk.ok(len(mine) >= 1, "preempted by no hog: %s, started %s" %
           (["%s/%d" % (t["comm"], t["pid"]) for t in pre], sorted(hogs)))
    chk.ok(sum(t["ns"] for t in mine) * 2 >= sum(t["ns"] for t in users),
           "the hogs took %s of the %s wait between launches that user tasks took (%s in all)" %
           (fmt(sum(t["ns"] for t in mine)), fmt(sum(t["ns"] for t in users)),
            fmt(sum(t["ns"] for t in pre))))
# the GPU, by simcuda's stand-in NVML: idle in the steady state as the
# device's log says, the chains explaining no more than that
check_gpu(chk, r, "noisy.busy.log")
chk.done()
PY
exit 0
