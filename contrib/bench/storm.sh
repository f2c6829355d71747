#!/usr/bin/env bash
# Page-allocation storms: how much a recording slows a workload that is
# nearly all mm_page_alloc (contrib/bench/page-storm.c: 4 processes each
# allocating, writing and freeing 50 MiB in a loop, on every CPU), against
# no tracing and against trace-cmd recording the same command with the same
# sched, task and kmem events (-F: the command's tasks; -c: its children),
# and, where the kernel has hist triggers, against `record
# --page-allocs=count` (the allocations counted in the kernel, no row each).
# Alternated in each repetition.  Prints a markdown section.  Needs root.
#
#   storm.sh BUILD_DIR [REPS] [ROUNDS]     (ROUNDS per process, default 40)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
rounds=${3:-40}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
bench_setup storm.sh

work=$(mktemp -d /tmp/ift-storm.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
bench_shim "$work"
storm=$work/page-storm
cc -O2 -o "$storm" "$top/contrib/bench/page-storm.c"
cmd=("$storm" 4 "$rounds" 50)
events=(-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking
	-e sched:sched_wakeup_new -e sched:sched_process_fork -e task:task_newtask
	-e sched:sched_process_exec -e sched:sched_process_exit -e task:task_rename
	-e kmem:mm_page_alloc)

# run TOOL: the storm's seconds into $work/r, the trace's events and bytes into $work/e
run() {
	case $1 in
	bare)
		"${cmd[@]}" >"$work/out" ;;
	ours|count)
		"$ift" record -o "$work/o.trace" $([ "$1" = count ] && echo --page-allocs=count) \
			-- "${cmd[@]}" >"$work/out" 2>"$work/o.log"
		bench_await_helpers
		echo "$(sed -n 's/^recorded .*: \([0-9,]*\) kernel events.*/\1/p' "$work/o.log" | tr -d ,)" \
			"$(stat -c %s "$work/o.trace")" >"$work/e" ;;
	trace-cmd)
		(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -F -c -d -o tc.dat \
			"${events[@]}" -- "${cmd[@]}" >out 2>tc.log) ||
			{ echo "storm.sh: trace-cmd failed: $(tail -n 2 "$work/tc.log")" >&2; exit 1; }
		echo "? $(stat -c %s "$work/tc.dat")" >"$work/e" ;;
	esac
	# trace-cmd writes to the same stdout: the storm's own line
	grep -E '^[0-9.]+$' "$work/out" | tail -n 1 >"$work/r" || true
}

tools=(bare ours trace-cmd)
hist=no
if [ -e "$T/events/kmem/mm_page_alloc/hist" ]; then
	tools+=(count)
	hist=yes
fi
bench_alternate storm.sh "$reps" "${tools[@]}"

python3 - "$work/results" "$reps" "$rounds" "$top/contrib/bench" "$hist" <<'PY'
import sys
path, reps, rounds = sys.argv[1:4]
sys.path.insert(0, sys.argv[4])
hist = sys.argv[5] == "yes"
from benchstat import mmm, verdict
res, ev = {}, {}
for l in open(path):
    f = l.split()
    res.setdefault(f[0], []).append(float(f[1]))
    if len(f) >= 4:
        ev.setdefault(f[0], []).append((f[2], int(f[3])))
print("## Page-allocation storms: the workload's slowdown\n")
print("`page-storm 4 %s 50`: 4 processes each allocate, write and free 50 MiB %s times"
      " (every page faulted in fresh); %s repetitions, alternated. Seconds, and the"
      " slowdown against the bare run of the same repetition:\n" % (rounds, rounds, reps))
print("| run | seconds min / median / max | slowdown min / median / max |")
print("|---|---|---|")
slow = {}
for t, name in (("bare", "no tracing"), ("ours", "**`ingero-ftrace record`**"),
                ("trace-cmd", "`trace-cmd record -F -c` the same events"),
                ("count", "`ingero-ftrace record --page-allocs=count`")):
    if t not in res:
        continue
    if t != "bare":
        slow[t] = [a / b for a, b in zip(res[t], res["bare"])]
    print("| %s | %s | %s |" % (name, mmm(res[t], "%.3f"),
                                 mmm(slow[t], "%.3f") if t in slow else "-"))
r = [a / b for a, b in zip(slow["ours"], slow["trace-cmd"])]
print("\nOurs against trace-cmd, slowdown ratio %s; target at most 1.0: %s." %
      (mmm(r, "%.3f"), verdict(r, lambda x: x <= 1.0)))
if hist:
    c = [a / b for a, b in zip(slow["count"], slow["trace-cmd"])]
    print("`--page-allocs=count` against trace-cmd, slowdown ratio %s; target at most 1.0: %s."
          % (mmm(c, "%.3f"), verdict(c, lambda x: x <= 1.0)))
else:
    print("`--page-allocs=count` not measured: this kernel has no hist triggers"
          " (CONFIG_HIST_TRIGGERS).")
if ev.get("ours"):
    e, b = ev["ours"][-1]
    print("Last run: ours kept %s events in %d bytes, trace-cmd's .dat %d bytes." %
          (e, b, ev["trace-cmd"][-1][1]))
PY
