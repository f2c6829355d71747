#!/usr/bin/env bash
# report on recorded traces of real workloads: per-thread and per-process
# context switches are exactly the trace's, and the trace's are the kernel's
# own counters (getrusage, bracketed in time as t201 does), involuntary +
# voluntary = total, and each thread's time adds up to its life; driver calls
# made inside runtime calls are listed under them and counted once; per-op
# call counts, errors and bytes equal what the CUDA program logged.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v python3 >/dev/null || skip "needs python3 to parse JSON"

cc -O2 -pthread -o tasks "$IFT_SRC/tests/workloads/tasks.c" || fail "cannot build the tasks workload"
"$IFT" record ${RECORD_FLAGS:-} -o tasks.trace -- ./tasks 3 2 300 >truth.txt 2>record.err ||
	fail "record failed: $(cat record.err)"
"$IFT" report -i tasks.trace --json >tasks.json 2>report.err || fail "report failed: $(cat report.err)"
"$IFT" report -i tasks.trace --per-process --threads >tasks.txt 2>report.err ||
	fail "text report failed: $(cat report.err)"
"$IFT" dump --json -i tasks.trace --table switches >switches.json || fail "dump failed"
"$IFT" dump --json -i tasks.trace --table tasks,wakeups >born.json || fail "dump failed"

python3 - truth.txt tasks.json switches.json "$IFT_SRC/tests/e2e" born.json <<'PY' || fail "report differs from the kernel's counters"
import json, sys
sys.path.insert(0, sys.argv[4])
from taskscheck import load_truth, trace_switches, counter_errors
truth = load_truth(sys.argv[1])
switches = trace_switches(sys.argv[3])
# a new task is in none of the three states until its parent first wakes
# it (sched_wakeup_new): microseconds on a machine, milliseconds in an
# emulated guest whose parent lost its vCPU in between
forked, woken = {}, {}
for line in open(sys.argv[5]):
    e = json.loads(line)
    if e["event"] == "sched_process_fork":
        forked[e["child_tid"]] = e["ts"]
    elif e["event"] == "sched_wakeup_new":
        woken.setdefault(e["tid"], e["ts"])
r = json.load(open(sys.argv[2]))
procs = {p["pid"]: p for p in r["processes"]}
threads = {t["tid"]: (p, t) for p in r["processes"] for t in p["threads"]}
bad = []
def err(*a):
    bad.append(" ".join(str(x) for x in a))

# the recording follows the command's tree, and only it
want_pids = {v["pid"] for v in truth.values()}
if set(procs) != want_pids:
    err("processes", sorted(procs), "but the program ran", sorted(want_pids))

for what in list(procs.values()) + [t for _, t in threads.values()]:
    if what["context_switches"] != what["involuntary_switches"] + what["voluntary_switches"]:
        err("id", what.get("tid", what.get("pid")), "switches do not add up")

for tid, tr in sorted(truth.items()):
    pid, ppid, name = tr["pid"], tr["ppid"], tr["name"]
    if tid not in threads:
        err(tid, name, "missing from the report")
        continue
    p, t = threads[tid]
    # every switch of the trace, no more: and the trace's are the kernel's
    sw = switches.get(tid, [])
    if (t["context_switches"], t["involuntary_switches"]) != (len(sw), sum(x for _, x in sw)):
        err(tid, name, "switches %d (%d involuntary), the trace has %d (%d)" % (
            t["context_switches"], t["involuntary_switches"], len(sw), sum(x for _, x in sw)))
    for e in counter_errors(tr, sw):
        err(tid, name, e)
    if p["pid"] != pid:
        err(tid, name, "in process %d, really %d" % (p["pid"], pid))
    if name not in t["names"]:
        err(tid, name, "not among its names", t["names"])
    if tid == pid and p["ppid"] != ppid:
        err(tid, name, "parent %d, really %d" % (p["ppid"], ppid))
    # from its first wake-up to its exit every moment has a state: the
    # three add up to its life but its creation, to the ns (the root began
    # before the recording did)
    if name != "tasks":
        life = t["end_ns"] - t["start_ns"]
        known = t["on_cpu_ns"] + t["runqueue_wait_ns"] + t["blocked_ns"]
        if not t["started"] or not t["exited"]:
            err(tid, name, "started", t["started"], "exited", t["exited"])
        if tid not in forked or tid not in woken:
            err(tid, name, "no fork or no first wake-up in the trace")
        elif life - known != woken[tid] - forked[tid]:
            err(tid, name, "on-CPU + run-queue + blocked = %d ns, life %d ns, %d ns of it "
                "before its first wake-up" % (known, life, woken[tid] - forked[tid]))
        # nine busy tasks share two CPUs for 300 ms: each gets a share that
        # depends on the machine's load, but it must have run
        if t["on_cpu_ns"] < 2000000:
            err(tid, name, "only %d ns on a CPU for 300 ms of work" % t["on_cpu_ns"])

# per process: the sum of its threads' switches
for pid, p in procs.items():
    mine = [tid for tid, v in truth.items() if v["pid"] == pid]
    n = sum(len(switches.get(tid, [])) for tid in mine)
    inv = sum(sum(x for _, x in switches.get(tid, [])) for tid in mine)
    if (p["context_switches"], p["involuntary_switches"]) != (n, inv):
        err("process", pid, "switches %d (%d involuntary), its threads' in the trace %d (%d)" %
            (p["context_switches"], p["involuntary_switches"], n, inv))
    if len(p["threads"]) != len(mine):
        err("process", pid, "%d threads, the program logged %d" % (len(p["threads"]), len(mine)))
for b in bad:
    print(b)
print("%d threads checked, %d problems" % (len(truth), len(bad)))
sys.exit(1 if bad else 0)
PY
grep -q '^process ' tasks.txt || fail "no process block in the text report"

# nested calls, on the stand-in runtime and driver of t209
src="$IFT_SRC/tests/workloads/fakecuda"
mkdir -p lib
cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -o lib/libcuda.so.1 "$src/cuda.c" || fail "build libcuda"
cc -O1 -shared -fPIC -Wl,-soname,libcudart.so.12 -o lib/libcudart.so.12 "$src/cudart.c" \
	-Llib -l:libcuda.so.1 -Wl,-rpath,'$ORIGIN' || fail "build libcudart"
cc -O1 -o app "$src/app.c" -Llib -l:libcudart.so.12 -Wl,-rpath,"$PWD/lib" || fail "build app"
"$IFT" -q record -o n.trace -- ./app 20 || fail "record of the nested calls failed"
"$IFT" report -i n.trace --json >n.json 2>report.err || fail "report failed: $(cat report.err)"
python3 - n.json <<'PY' || fail "nested driver calls are not counted once, under their runtime calls"
import json, sys
r = json.load(open(sys.argv[1]))
ops = {o["op"]: o for o in r["ops"]}
want = {"cudaLaunchKernel": {"cuLaunchKernel": 20}, "cudaMemcpy": {"cuMemcpyHtoD_v2": 20},
        "cudaDeviceSynchronize": {"cuCtxSynchronize": 40}}
bad = []
for name, kids in want.items():
    o = ops.get(name)
    if not o or o["calls"] != 20 or o["nested_calls"]:
        bad.append("%s: %s" % (name, o and (o["calls"], o["nested_calls"])))
        continue
    got = {n["op"]: n["calls"] for n in o["nested"]}
    if got != kids:
        bad.append("%s holds %s, want %s" % (name, got, kids))
    for k, n in kids.items():
        d = ops.get(k)
        if not d or d["calls"] != n or d["nested_calls"] != n or d["api"] != "driver":
            bad.append("%s: %s" % (k, d and (d["calls"], d["nested_calls"], d["api"])))
runtime = sum(o["total_ns"] for o in r["ops"] if o["api"] == "runtime")
threads = [t for p in r["processes"] for t in p["threads"] if t["cuda_calls"]]
if len(threads) != 1 or threads[0]["cuda_calls"] != 60 or threads[0]["cuda_ns"] != runtime:
    bad.append("CUDA time %s, runtime calls took %d ns" %
               ([(t["tid"], t["cuda_calls"], t["cuda_ns"]) for t in threads], runtime))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

if [ ! -f $cudart ]; then
	[ "${CI:-}" = true ] && fail "no $cudart"
	echo "note: no CUDA runtime at $cudart, the CUDA half is skipped"
	exit 0
fi
build_cuda_seq
"$IFT" record -o seq.trace -- ./cuda-seq 25 >truth.tsv 2>record.err ||
	fail "record failed: $(cat record.err)"
"$IFT" report -i seq.trace --json >seq.json 2>report.err || fail "report failed: $(cat report.err)"

python3 - truth.tsv seq.json <<'PY' || fail "report's ops differ from the program's own log"
import json, sys
from collections import Counter, defaultdict
calls, errs, rets, span, worst, nbytes = Counter(), Counter(), defaultdict(Counter), Counter(), {}, Counter()
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    name, ret, t0, t1 = f[0], int(f[1]), int(f[2]), int(f[3])
    args = dict(a.split("=") for a in f[4:])
    calls[name] += 1
    if ret:
        errs[name] += 1
        rets[name][ret] += 1
    span[name] += t1 - t0
    worst[name] = max(worst.get(name, 0), t1 - t0)
    nbytes[name] += int(args.get("bytes", 0))
r = json.load(open(sys.argv[2]))
ops = {o["op"]: o for o in r["ops"]}
bad = []
for name in sorted(calls):
    o = ops.get(name)
    if not o:
        bad.append("%s: not in the report" % name)
        continue
    if o["calls"] - o["nested_calls"] != calls[name]:
        bad.append("%s: %d calls (%d nested), the program made %d" % (name, o["calls"], o["nested_calls"], calls[name]))
    if o["errors"] != errs[name]:
        bad.append("%s: %d errors, the program saw %d" % (name, o["errors"], errs[name]))
    got = {e["ret"]: e["calls"] for e in o["error_codes"]}
    if got != dict(rets[name]):
        bad.append("%s: errors by code %s, the program saw %s" % (name, got, dict(rets[name])))
    if name in ("cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc") and o["bytes"] != nbytes[name]:
        bad.append("%s: %d bytes, the program passed %d" % (name, o["bytes"], nbytes[name]))
    # each call lies inside the interval the program measured around it
    if o["total_ns"] > span[name] or o["max_ns"] > worst[name]:
        bad.append("%s: total %d / max %d ns, measured at most %d / %d" % (name, o["total_ns"], o["max_ns"], span[name], worst[name]))
cuda = [t for p in r["processes"] for t in p["threads"] if t["role"] == "cuda thread"]
if len(cuda) != 1 or cuda[0]["cuda_calls"] != sum(calls.values()):
    bad.append("cuda thread: %s" % [(t["tid"], t["cuda_calls"]) for t in cuda])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
exit 0
