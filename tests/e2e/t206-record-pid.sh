# -p PID traces a running process and the children it starts from then on;
# --duration ends the recording and leaves the process running.
. "$IFT_SRC/tests/e2e/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

cc -O2 -pthread -o tasks "$IFT_SRC/tests/workloads/tasks.c" || fail "cannot build"
sh -c 'while :; do ./tasks 1 1 50 >/dev/null; done' &
target=$!
sleep 0.3
"$IFT" -q record -p $target --duration 1.5 -o p.trace || fail "record -p failed"
kill -0 $target 2>/dev/null || fail "the traced process should still run"
kill $target; wait $target 2>/dev/null
"$IFT" dump --json -i p.trace --table tasks,switches >ev.json || fail "dump failed"
python3 - ev.json $target <<'PY' || fail "the traced tree is not in the trace"
import json, sys
target = int(sys.argv[2])
ev = [json.loads(l) for l in open(sys.argv[1])]
forks = [e for e in ev if e["event"] == "sched_process_fork" and e["pid"] == target]
if len(forks) < 2:
    sys.exit("expected several forks of %d, got %d" % (target, len(forks)))
kids = {e["child_pid"] for e in forks}
grandkids = [e for e in ev if e["event"] == "sched_process_fork" and e["pid"] in kids]
if not grandkids:
    sys.exit("the children's own forks are missing")
names = {e["comm"] for e in ev if e["pid"] in {g["child_pid"] for g in grandkids}}
if "proc-0" not in names:
    sys.exit("renamed child missing: %s" % names)
PY
assert_no_leftovers
exit 0
