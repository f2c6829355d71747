# -p PID traces a running process and the children it starts from then on;
# Ctrl-C, or --duration, ends the recording and leaves the process running.
# The process's parent, which no event of the trace shows, is in the task
# table as /proc gave it.  -p given twice follows both processes.  What must
# be in the trace comes from the workload's own log: every `tasks` run of a
# loop that ended inside the recording, but the one already running when it
# began, was forked inside it.  The recording lasts until each loop ended
# runs enough, however slowly the machine lets them run.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

cc -O2 -pthread -o tasks "$IFT_SRC/tests/workloads/tasks.c" || fail "cannot build"
# tasks logs each task at its end: pid, parent, CLOCK_MONOTONIC (the trace's)
sh -c 'while :; do ./tasks 1 1 50; done' >loop1.log &
target=$!
sh -c 'while :; do ./tasks 1 1 50; done' >loop2.log &
second=$!
rec=
# whatever ends the test: the loops (and a recorder still running) go with it
trap 'kill $target $second $rec 2>/dev/null' EXIT
# runs (processes named tasks) a loop's log has ended
runs() { awk '$5 == "tasks" && $4 == '"$2"' { n++ } END { print n + 0 }' "$1"; }
# await COMMAND...: until it succeeds, the recorder alive; 120 s at most
await() {
	local i
	for i in $(seq 1200); do
		"$@" && return 0
		kill -0 $rec 2>/dev/null || { wait $rec; fail "record -p ended by itself ($?)"; }
		sleep 0.1
	done
	fail "waited 120 s for: $*"
}
# field 4 of stat, after the name in parentheses (which may hold anything)
stat=$(cat /proc/$target/stat) || fail "cannot read /proc/$target/stat"
parent=$(printf '%s\n' "${stat##*) }" | cut -d' ' -f2)
"$IFT" -q record -p $target -p $second -o p.trace &
rec=$!
inst=/sys/kernel/tracing/instances/ingero_$rec
# tracing on as the recording began: a new instance's tracing_on reads 1
# until the set-up turns it off, and the -p processes' pids go into its
# set_event_pid before tracing starts (a signal in between is a set-up's,
# exit 130: a 6.1 guest's set-up was caught there)
tracing() {
	[ "$(cat $inst/tracing_on 2>/dev/null)" = 1 ] &&
		{ [ ! -e $inst/set_event_pid ] || grep -qw "$target" $inst/set_event_pid; }
}
await tracing
# from tracing on: three runs of each loop more, so two at least ended inside
n1=$(($(runs loop1.log $target) + 3)) n2=$(($(runs loop2.log $second) + 3))
ran() { [ "$(runs loop1.log $target)" -ge $n1 ] && [ "$(runs loop2.log $second)" -ge $n2 ]; }
await ran
kill -INT $rec
wait $rec || fail "record -p stopped by SIGINT exited $?"
rec=
kill -0 $target 2>/dev/null || fail "the traced process should still run"
kill $target; wait $target 2>/dev/null
"$IFT" dump --json -i p.trace --table tasks,switches >ev.json || fail "dump failed"
"$IFT" report -i p.trace --json --per-process >report.json 2>report.err ||
	fail "report failed: $(cat report.err)"
python3 - ev.json $target report.json $parent $second <<'PY' || fail "the traced tree is not in the trace"
import json, sys
target = int(sys.argv[2])
procs = {p["pid"]: p for p in json.load(open(sys.argv[3]))["processes"]}
if procs.get(target, {}).get("ppid") != int(sys.argv[4]):
    sys.exit("ppid of %d is %s, /proc said %s" % (target, procs.get(target, {}).get("ppid"), sys.argv[4]))
# both -p processes are the recording's, not only the last one given
for pid in (target, int(sys.argv[5])):
    if pid not in procs:
        sys.exit("-p %d is not among the report's processes %s" % (pid, sorted(procs)))
ev = [json.loads(l) for l in open(sys.argv[1])]
trace = json.load(open(sys.argv[3]))["trace"]
start, stop = trace["start_ts"], trace["start_ts"] + trace["duration_ns"]
# the recording's end is stamped once tracing_on is 0, which a recorder
# preempted there (a loaded guest) stamps late: only what ended before the
# last row, while both loops kept writing, was surely traced
last = max(e["ts"] for e in ev)
# and it read all the kernel kept: nothing dropped, nothing left unread
if trace["lost_events"]:
    sys.exit("the trace lost %d events (dropped, or left in the buffers)" % trace["lost_events"])
for pid, log in ((target, "loop1.log"), (int(sys.argv[5]), "loop2.log")):
    # the loop's runs that ended while it recorded: "thread TID PID PPID tasks ... T0 T1"
    ended = sorted((int(f[10]), int(f[2])) for f in (l.split() for l in open(log))
                   if f[4] == "tasks" and int(f[3]) == pid and start < int(f[10]) < min(stop, last))
    forked = {e["child_pid"] for e in ev
              if e["event"] == "sched_process_fork" and e["pid"] == pid}
    # the first may have begun before the recording did
    missing = [(i, k) for i, (_, k) in enumerate(ended) if i and k not in forked]
    if missing:
        # which runs, when (ms from the start: it began about when the one
        # before ended) and what the trace holds of them
        sys.exit("%d of the %d runs of %d that ended while recording have no fork row: %s; "
                 "%d events, %d lost" % (
                     len(missing), len(ended), pid,
                     ", ".join("run %d pid %d %.1f-%.1f ms, %d rows of it" % (
                         i, k, (ended[i - 1][0] - start) / 1e6, (ended[i][0] - start) / 1e6,
                         sum(e.get("pid") == k for e in ev)) for i, k in missing[:5]),
                     trace["events"], trace["lost_events"]) +
                 "; the recording %.1f ms, each CPU's last row at %s ms" % (
                     (stop - start) / 1e6, ", ".join(
                         "%.1f" % ((max(e["ts"] for e in ev if e["cpu"] == c) - start) / 1e6)
                         for c in sorted({e["cpu"] for e in ev}))))
    if len(ended) < 2:
        sys.exit("the loop of %d ended %d runs in the %.2f s recorded: too few to judge"
                 % (pid, len(ended), (stop - start) / 1e9))
kids = {e["child_pid"] for e in ev if e["event"] == "sched_process_fork" and e["pid"] == target}
grandkids = [e for e in ev if e["event"] == "sched_process_fork" and e["pid"] in kids]
if not grandkids:
    sys.exit("the children's own forks are missing")
names = {e["comm"] for e in ev if e["pid"] in {g["child_pid"] for g in grandkids}}
if "proc-0" not in names:
    sys.exit("renamed child missing: %s" % names)
PY

# --duration ends it alone, the process still running
"$IFT" -q record -p $second --duration 0.5 -o d.trace || fail "record -p --duration failed"
kill -0 $second 2>/dev/null || fail "the process traced for --duration should still run"
"$IFT" report -i d.trace --json >d.json || fail "report of d.trace failed"
python3 - d.json <<'PY' || fail "--duration 0.5 did not record 0.5 s"
import json, sys
d = json.load(open(sys.argv[1]))["trace"]["duration_ns"]
sys.exit(0 if d >= 500000000 else "recorded %d ns" % d)
PY
kill $second; wait $second 2>/dev/null
assert_no_leftovers
exit 0
