# A wake-up made from an interrupt (a sleep's timer) names no waker: the
# task the interrupt happened to stop did not wake anyone.  A CPU hog and a
# sleeping loop share CPU 0; the hog is not traced, but its pid is what the
# kernel's sched_waking reports as current for the timer's wake-ups.  A
# wake-up made by a task (a pipe write) keeps its waker.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
command -v python3 >/dev/null || skip "needs python3"

taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
# 40 timer sleeps, then a pipe: the reader is woken by the writer
"$IFT" record -o irq.trace -- taskset -c 0 sh -c \
	'for i in $(seq 40); do sleep 0.005; done; (sleep 0.05; echo x) | read -r _' \
	>/dev/null 2>record.err || fail "record failed: $(cat record.err)"
"$IFT" dump --json -i irq.trace --table wakeups,tasks >events.json || fail "dump failed"

python3 - events.json "$hog" <<'PY' || fail "interrupt wake-ups are blamed on the task they interrupted"
import json, sys
hog = int(sys.argv[2])
ev = [json.loads(l) for l in open(sys.argv[1])]
traced = {e["child_pid"] for e in ev if e["event"] == "sched_process_fork"}
traced |= {e["pid"] for e in ev if e["event"] == "sched_process_exec"}
wk = [e for e in ev if e["event"] == "sched_waking" and e["pid"] in traced]
blamed = [e for e in wk if e["waker_pid"] == hog]
irq = [e for e in wk if e["waker_pid"] == 0]
by_task = [e for e in wk if e["waker_pid"] in traced and e["waker_pid"] != e["pid"]]
print("wake-ups of traced tasks %d, from interrupts %d, by traced tasks %d, blamed on the hog %d"
      % (len(wk), len(irq), len(by_task), len(blamed)))
ok = True
if blamed:
    print("blamed on the hog:", blamed[:2]); ok = False
if len(irq) < 30:
    print("want at least 30 timer wake-ups with no waker"); ok = False
if not by_task:
    print("the pipe reader's wake-up lost its waker"); ok = False
sys.exit(0 if ok else 1)
PY
exit 0
