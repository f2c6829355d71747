# A GPU-bound loop on simcuda: 20 ms kernels, the host waits in
# cudaStreamSynchronize.  The report must say GPU-bound (LOW) and find no
# HIGH or MEDIUM cause on the host; its device wait must be the workload's own
# time in synchronize, each wait the modelled kernel time (grid x
# SIMCUDA_BLOCK_NS); calls, percentiles and switches as the workload counted;
# the GPU idle as the device's log says (under a tenth of the steady state
# where the log has it under 5%), the gpu_bound chain carrying the measure.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

SIMCUDA_BLOCK_NS=1000 sim_record gpubound gpubound --steps 80 --grid 20000
assert_no_leftovers

sed -n '/^WHY/,/^CUDA ops/p' gpubound.txt | head -20
sim_check gpubound.jsonl gpubound.json gpubound.dump.json <<'PY' || fail "the report disagrees with the workload (above)"
import sys
from simcheck import *

truth, r, trace = Truth(sys.argv[1]), load_report(sys.argv[2]), Trace(sys.argv[3])
chk = Checks("gpubound")
no_high_or_medium(chk, r, truth)
check_ops(chk, truth, r, probed(), Slack(trace, truth, probed()))
check_main(chk, truth, r, trace)

ops = {o["op"]: o for o in r["ops"]}
sync = truth.ops["cudaStreamSynchronize"]
kernel = truth.run["grid"] * 1000
# each step's wait is its kernel: 20 ms of modelled device time, never
# less, plus the wake-up, which the workload's own timing of each call
# holds (a recorded call lies inside it: its p50 cannot be more)
s = ops.get("cudaStreamSynchronize")
if chk.ok(s is not None, "no cudaStreamSynchronize in the report"):
    chk.ok(kernel - 100 * US <= s["p50_ns"] <= sync["p50_ns"],
           "cudaStreamSynchronize p50 %s, each waits for a %s kernel, the workload timed %s" %
           (fmt(s["p50_ns"]), fmt(kernel), fmt(sync["p50_ns"])))
c = one_chain(chk, r, "gpu_bound", "inside", "cudaStreamSynchronize")
if c:
    ev = c["evidence"]
    # other load on the machine may preempt a launch now and then: LOW
    # chains, each far cheaper than the device
    first_chain_but_neighbours(chk, r, truth, c)
    chk.ok(c["severity"] == "LOW", "gpu_bound chain is %s" % c["severity"])
    chk.ok((c["pid"], c["tid"]) == (truth.pid, truth.tid), "gpu_bound on %d/%d" % (c["pid"], c["tid"]))
    # over the steady state: on a loaded machine a slow first step is the
    # start-up's
    steady = truth.steady(r)
    ssync = steady_op(steady, "cudaStreamSynchronize")
    # 90% of the active time the thread had a CPU for (other load's
    # run-queue wait is not the device's) and spent in its synchronizes by
    # its own clock: the host's work between them is the machine's (in an
    # arm64 TCG guest 214 ms of 2111, its copies' p99 66 ms)
    th = [t for p in r["processes"] for t in p["threads"] if t["tid"] == truth.tid][0]
    had = c["wall_ns"] - min(th["runqueue_wait_ns"], c["wall_ns"])
    host = max(0, steady.active["active_ns"] - ssync["sum_ns"])
    chk.ok(ev["device_wait_ns"] >= 0.9 * (had - host),
           "device wait %s is under 90%% of the active time %s less the thread's run-queue "
           "wait %s and the workload's %s outside its synchronizes" %
           (fmt(ev["device_wait_ns"]), fmt(c["wall_ns"]), fmt(th["runqueue_wait_ns"]), fmt(host)))
    check_device_wait(chk, ev, ssync)
    chk.near("device wait + run-queue wait in it", ev["device_wait_ns"] + ev["runqueue_wait_ns"],
             ssync["sum_ns"], 0.02, ssync["count"] * 30 * US)
    chk.ok(c["cost_ns"] == ev["device_wait_ns"], "cost %d != device wait %d" %
           (c["cost_ns"], ev["device_wait_ns"]))
    check_active(chk, steady, c)
# the GPU, by simcuda's stand-in NVML: busy as the device's log says, and
# the gpu_bound chain carries the same measure.  Idle under a tenth of the
# steady state where the device's log has it under 5% (1.4% here; an arm64
# TCG guest's host, 20x slower, left it idle 24% between the kernels)
g = check_gpu(chk, r, "gpubound.busy.log")
if g and g[2] < 5:
    chk.ok(g[0] < 10, "the GPU idle %.1f%% of the steady state of a GPU-bound run, "
           "%.1f%% by the device's log" % (g[0], g[2]))
if g and c:
    st = r["gpu"]["stages"]["steady"]
    busy = (1000 * st["busy_ns"] + st["covered_ns"] // 2) // max(st["covered_ns"], 1)
    chk.ok(c["evidence"].get("gpu_busy_permille") == busy,
           "the gpu_bound chain's gpu_busy_permille %r, the steady state's %d"
           % (c["evidence"].get("gpu_busy_permille"), busy))
chk.done()
PY
exit 0
