#!/usr/bin/env bash
# Finishing: how long after the traced command's end the shell gets the
# status back, ingero-ftrace against trace-cmd recording the same probes (an
# entry and a return uprobe on every function ours probes for `/bin/true`,
# and the same sched and kmem tracepoints), alternating.  Each enabled uprobe
# waits out an RCU grace period as it is disabled: ours leaves that to a
# helper, whose time in the background is given too.  Then back to back:
# the set-up (launch to the command's start) of a record with no helper at
# work, and of the next one started at once, while the first's helper tears
# down; trace-cmd the same.  Prints markdown sections.  Needs root and
# tracefs.
#
#   finish.sh BUILD_DIR [REPS]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
bench_setup finish.sh

work=$(mktemp -d /tmp/ift-finish.XXXXXX)
group=iftfin_$$
cleanup() {
	bench_remove_group "$group"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# trace-cmd as the other benchmarks run it (bench_shim)
bench_shim "$work"

# the functions ours probes, as discover lists them: a library, then its
# functions and offsets, indented
"$ift" discover -v -- /bin/true >"$work/probes"
nprobes=0
while IFS= read -r line; do
	# (a tab in IFS would be trimmed: the indent is the line's kind)
	if [[ $line != $'\t'* ]]; then
		lib=${line%%$'\t'*}
		continue
	fi
	off=${line##*$'\t'}
	nprobes=$((nprobes + 1))
	echo "p:$group/f$nprobes $lib:$off" >>$T/uprobe_events
	echo "r:$group/f${nprobes}_ret $lib:$off" >>$T/uprobe_events
done <"$work/probes"
[ "$nprobes" -gt 0 ] || { echo "finish.sh: no CUDA library to probe" >&2; exit 1; }
events=(-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking
	-e sched:sched_wakeup_new -e sched:sched_process_fork -e task:task_newtask
	-e sched:sched_process_exec -e sched:sched_process_exit -e kmem:mm_page_alloc -e "$group")

# the command stamps its own end (a shell builtin, no fork after it)
cmd=(bash -c 'echo $EPOCHREALTIME >"$0"' "$work/end")

: >"$work/ours"
: >"$work/tc"
for ((i = 0; i < reps; i++)); do
	bench_await_helpers
	"$ift" record -q -o "$work/o.trace" -- "${cmd[@]}"
	back=$EPOCHREALTIME
	bench_await_helpers
	done_at=$EPOCHREALTIME
	echo "$(cat "$work/end") $back $done_at" >>"$work/ours"

	(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -d -o tc.dat "${events[@]}" \
		-- "${cmd[@]}" >tc.log 2>&1) || { echo "finish.sh: trace-cmd failed: $(tail -n 2 "$work/tc.log")" >&2; exit 1; }
	back=$EPOCHREALTIME
	echo "$(cat "$work/end") $back $back" >>"$work/tc"
done

# back to back: each pair's first with nobody's teardown at work, its
# second started as soon as the first returned; "launch start" per run
start=(bash -c 'echo $EPOCHREALTIME >"$0"' "$work/start")
: >"$work/b2b"
for ((i = 0; i < reps; i++)); do
	bench_await_helpers
	for k in 1 2; do
		t0=$EPOCHREALTIME
		"$ift" record -q -o "$work/b$k.trace" -- "${start[@]}"
		echo "ours$k $t0 $(cat "$work/start")" >>"$work/b2b"
	done
	bench_await_helpers
	for k in 1 2; do
		t0=$EPOCHREALTIME
		(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -d -o tc$k.dat "${events[@]}" \
			-- "${start[@]}" >tc.log 2>&1) ||
			{ echo "finish.sh: trace-cmd failed: $(tail -n 2 "$work/tc.log")" >&2; exit 1; }
		echo "tc$k $t0 $(cat "$work/start")" >>"$work/b2b"
	done
done
bench_await_helpers

python3 - "$work/ours" "$work/tc" "$reps" "$nprobes" "$top/contrib/bench" "$work/b2b" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv[5])
from benchstat import row, verdict
def rows(path):
    return [[float(x) for x in l.split()] for l in open(path) if l.strip()]
ours, tc = rows(sys.argv[1]), rows(sys.argv[2])
reps, n = int(sys.argv[3]), int(sys.argv[4])
back = sorted(b - e for e, b, _ in ours)
behind = sorted(d - b for _, b, d in ours)
tcback = sorted(b - e for e, b, _ in tc)
print("## Finishing: the command's end to the shell's prompt\n")
print("%d repetitions, alternating; %d functions probed (entry and return), the"
      " sched and kmem tracepoints, `-- bash -c` stamping its own end. Seconds:\n" % (reps, n))
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace: the command's end to record's exit", back))
print(row("ingero-ftrace: its helper's teardown after that", behind))
print(row("trace-cmd record: the command's end to its exit", tcback))
print("\nTarget: the status within 0.3 s of the command's end: %s (trace-cmd: median %.3f s)." %
      (verdict(back, lambda x: x <= 0.3), statistics.median(tcback)))

setup = {}
for line in open(sys.argv[6]):
    tool, t0, start = line.split()
    setup.setdefault(tool, []).append(float(start) - float(t0))
print("\n## Back to back: a record while the last one's helper tears down\n")
print("%d pairs: a run with no teardown at work, then the next at once; seconds from"
      " the launch to the command's start (the set-up):\n" % reps)
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace: first (no helper at work)", setup["ours1"]))
print(row("ingero-ftrace: second (the first's helper at work)", setup["ours2"]))
print(row("trace-cmd record: first", setup["tc1"]))
print(row("trace-cmd record: second", setup["tc2"]))
r = [b / a for a, b in zip(setup["ours1"], setup["ours2"])]
print(row("ingero-ftrace: second / first", r, "%.2f"))
# the first's own spread is the noise: the second may not come out above it
hi = max(setup["ours1"])
print("\nTarget: the second's set-up no longer than the first's (up to its slowest, %.3f s):"
      " %s." % (hi, verdict(setup["ours2"], lambda x: x <= hi)))
PY
