# record follows a process tree: forked processes and their threads, renamed,
# each attributed to the right process with every name it had; per-thread
# context switches equal the kernel's own counters (getrusage); every process
# has its parent in the task table, the command too, though its fork came
# before the trace: the recorder, as the command's own getppid() said.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

cc -O2 -pthread -o tasks "$IFT_SRC/tests/workloads/tasks.c" || fail "cannot build the workload"
"$IFT" record ${RECORD_FLAGS:-} -o tasks.trace -- ./tasks 3 2 300 >truth.txt 2>record.err ||
	fail "record failed: $(cat record.err)"
"$IFT" dump --json -i tasks.trace --table switches,tasks >events.json || fail "dump failed"

python3 - truth.txt events.json "$IFT_SRC/tests/e2e" <<'PY' || fail "tasks or switches differ from the kernel's counters"
import json, sys
sys.path.insert(0, sys.argv[3])
from taskscheck import load_truth, trace_switches, counter_errors
truth = load_truth(sys.argv[1])
switches = trace_switches(sys.argv[2])
names, pid_of, forks = {}, {}, {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e["event"] == "sched_switch":
        pid_of.setdefault(e["tid"], e["pid"])
    else:
        names.setdefault(e["tid"], set()).add(e["comm"])
        if e["event"] == "sched_process_fork":
            forks[e["child_tid"]] = (e["pid"], e["child_pid"], e["thread"])
            names.setdefault(e["child_tid"], set()).add(e["child_comm"])
        if e.get("new_comm"):
            names[e["tid"]].add(e["new_comm"])
bad = 0
for tid, t in sorted(truth.items()):
    pid, ppid, name = t["pid"], t["ppid"], t["name"]
    errs = counter_errors(t, switches.get(tid, []))
    if pid_of.get(tid, pid) != pid:
        errs.append("pid %s, really %d" % (pid_of.get(tid), pid))
    if name not in names.get(tid, ()):
        errs.append("name %r not among %s" % (name, sorted(names.get(tid, ()))))
    if tid != pid or name != "tasks":
        f = forks.get(tid)
        if not f:
            errs.append("no fork/clone row")
        elif f[1] != pid or f[2] != (tid != pid):
            errs.append("fork row %s" % (f,))
        elif tid == pid and f[0] != ppid:
            errs.append("parent %d, really %d" % (f[0], ppid))
    if errs:
        bad += 1
        print(tid, name, "; ".join(errs))
print("%d tasks checked, %d wrong" % (len(truth), bad))
sys.exit(1 if bad else 0)
PY

"$IFT" info -i tasks.trace >info.txt || fail "info failed"
"$IFT" report -i tasks.trace --json --per-process >report.json 2>report.err ||
	fail "report failed: $(cat report.err)"
python3 - truth.txt info.txt report.json <<'PY' || fail "a process's parent is wrong in the task table"
import json, sys
truth = {}
for line in open(sys.argv[1]):
    _, tid, pid, ppid, name = line.split()[:5]
    if tid == pid:
        truth[int(pid)] = (int(ppid), name)
recorder = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("recorder.pid ")]
if len(recorder) != 1:
    sys.exit("no recorder.pid in info: %s" % recorder)
recorder = recorder[0]
procs = {p["pid"]: p for p in json.load(open(sys.argv[3]))["processes"]}
bad = 0
for pid, (ppid, name) in sorted(truth.items()):
    got = procs.get(pid, {}).get("ppid")
    # the command was forked by the recorder, before the trace began
    want = recorder if name == "tasks" else ppid
    if name == "tasks" and ppid != recorder:
        print("the command's getppid() %d is not recorder.pid %d" % (ppid, recorder))
        bad += 1
    if got != want:
        print(pid, name, "ppid", got, "really", want)
        bad += 1
print("%d processes' parents checked, %d wrong" % (len(truth), bad))
sys.exit(1 if bad else 0)
PY
assert_no_leftovers
exit 0
