#!/usr/bin/env bash
# Recorder cost: CPU time and peak RSS of the recording process per million
# events, ingero-ftrace against trace-cmd, attached (-p / -P) to the same kind
# of workload for the same time, alternating so machine drift cancels out.
# Both record the same tracepoints; trace-cmd's uprobes are the 5 functions the
# workload calls (ours cover all 39 of libcudart, but only those 5 fire).
# Prints a markdown section.  Needs root and tracefs.
#
#   cost.sh [REPS] [SECONDS]
set -euo pipefail
reps=${1:-5}
secs=${2:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}
. "$top/contrib/bench/lib.sh"
bench_setup cost.sh

work=$(mktemp -d /tmp/ift-cost.XXXXXX)
group=iftcost_$$
cleanup() {
	bench_remove_group "$group"
	pkill -f "$work/workload" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_shim "$work"
cc -O2 -o "$work/workload" "$top/contrib/bench/mixed-workload.c" "$lib" -Wl,-rpath,"$(dirname "$lib")"
for f in cudaMalloc cudaFree cudaMemcpy cudaMemcpyAsync cudaStreamSynchronize; do
	off=$(bench_fileoff "$lib" $f)
	echo "p:$group/$f $lib:$off a=%di:u64 b=%si:u64" >>$T/uprobe_events
	echo "r:$group/${f}_ret $lib:$off ret=\$retval:s32" >>$T/uprobe_events
done
events=(-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking
	-e sched:sched_wakeup_new -e sched:sched_process_fork -e task:task_newtask
	-e sched:sched_process_exec -e sched:sched_process_exit -e kmem:mm_page_alloc -e "$group")

# one run: TOOL -> "cpu_seconds maxrss_kb events"
run() {
	local tool=$1 wl out
	# the workers start after the recorder attached, so it follows them
	(cd "$work" && exec ./workload $((secs + 3)) 50 4 1000 >/dev/null) &
	wl=$!
	sleep 0.5
	if [ "$tool" != tracecmd ]; then
		# ours-mmap: the rings mapped and parsed in place
		/usr/bin/time -f "%U %S %M" -o "$work/time" \
			"$top/ingero-ftrace" record -p $wl --duration "$secs" -o "$work/o.trace" \
			$([ "$tool" = ours-mmap ] && echo --reader=mmap) >/dev/null 2>"$work/o.log"
		ev=$(sed -n 's/^recorded .*: \([0-9,]*\) kernel events.*/\1/p' "$work/o.log" | tr -d ,)
		bench_await_helpers
	else
		(cd "$work" && LD_PRELOAD="$work/shim.so" /usr/bin/time -f "%U %S %M" -o "$work/time" \
			timeout -s INT "$((secs + 1))" trace-cmd record -d -c -P $wl -o tc.dat "${events[@]}" \
			>tc.log 2>&1) || true
		ev=$(trace-cmd report -i "$work/tc.dat" 2>/dev/null | grep -cE '^\s*.+-[0-9]+\s+\[[0-9]+\]')
	fi
	kill $wl 2>/dev/null || true
	wait $wl 2>/dev/null || true
	# time's first line may say the command was stopped by a signal
	read -r u s m < <(tail -n 1 "$work/time")
	echo "$(echo "$u + $s" | bc) $m $ev"
}

declare -a oc om oe tc tm te sc sm se
# the rings mapped too, where the kernel maps them
bench_maps && mapped=1 || mapped=
for i in $(seq "$reps"); do
	run ours >"$work/r"
	read -r c m e <"$work/r"; oc+=("$c") om+=("$m") oe+=("$e")
	run tracecmd >"$work/r"
	read -r c m e <"$work/r"; tc+=("$c") tm+=("$m") te+=("$e")
	if [ -n "$mapped" ]; then
		run ours-mmap >"$work/r"
		read -r c m e <"$work/r"; sc+=("$c") sm+=("$m") se+=("$e")
	fi
	echo "run $i: ours ${oc[-1]} s, ${om[-1]} KB, ${oe[-1]} events; trace-cmd ${tc[-1]} s, ${tm[-1]} KB, ${te[-1]} events${mapped:+; ours mapped ${sc[-1]} s, ${sm[-1]} KB, ${se[-1]} events}" >&2
done
python3 - "${oc[*]}" "${om[*]}" "${oe[*]}" "${tc[*]}" "${tm[*]}" "${te[*]}" "$secs" \
	"$top/contrib/bench" "${sc[*]}" "${sm[*]}" "${se[*]}" <<'PY'
import sys
oc, om, oe, tc, tm, te = ([float(x) for x in a.split()] for a in sys.argv[1:7])
secs = sys.argv[7]
sys.path.insert(0, sys.argv[8])
sc, sm, se = ([float(x) for x in a.split()] for a in sys.argv[9:12])
mapped = bool(sc)
if not mapped:
    sc, sm, se = [1.0] * len(oc), [1.0] * len(oc), [1.0] * len(oc)
from benchstat import row, verdict
# a run where either tool measured no CPU or no event (trace-cmd killed
# before it started, on a loaded machine) says nothing of the cost: left out,
# and said so
keep = [i for i in range(len(oc)) if oc[i] > 0 and oe[i] > 0 and tc[i] > 0 and te[i] > 0 and
        sc[i] > 0 and se[i] > 0]
dropped = len(oc) - len(keep)
oc, om, oe, tc, tm, te, sc, sm, se = ([xs[i] for i in keep] for xs in (oc, om, oe, tc, tm, te, sc, sm, se))
n = len(oc)
if not n:
    print("## Recorder cost: CPU and memory of the recording process\n\nNo run measured both tools.")
    sys.exit(0)
ocpm = [oc[i] / oe[i] * 1e6 for i in range(n)]
tcpm = [tc[i] / te[i] * 1e6 for i in range(n)]
print("## Recorder cost: CPU and memory of the recording process\n")
print("Each tool attaches (`record -p PID --duration %s` / `trace-cmd record -d -c -P PID`, stopped by SIGINT"
      " after %s s) to a fresh `mixed-workload` (page-touching workers, a libcudart loop), alternately,"
      " with the same tracepoints and uprobes%s. CPU is user+system of the recorder and its helpers"
      " (/usr/bin/time); events are what each recorded.%s\n" % (secs, secs,
      "; ours also with its rings mapped (`--reader=mmap`)" if mapped else "",
      " %d of %d repetitions left out: a tool measured no CPU or no event there." % (dropped, dropped + n)
      if dropped else ""))
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace events per run", oe, "%.0f"))
print(row("trace-cmd events per run", te, "%.0f"))
print(row("ingero-ftrace CPU s per million events", ocpm))
print(row("trace-cmd CPU s per million events", tcpm))
print(row("ratio ours / trace-cmd, CPU per event", [ocpm[i] / tcpm[i] for i in range(n)]))
print(row("ingero-ftrace peak RSS (MiB)", [x / 1024 for x in om], "%.1f"))
print(row("trace-cmd peak RSS (MiB)", [x / 1024 for x in tm], "%.1f"))
rss = [om[i] / tm[i] for i in range(n)]
print(row("ratio ours / trace-cmd, peak RSS", rss))
if mapped:
    scpm = [sc[i] / se[i] * 1e6 for i in range(n)]
    print(row("ingero-ftrace --reader=mmap CPU s per million events", scpm))
    print(row("ingero-ftrace --reader=mmap peak RSS (MiB)", [x / 1024 for x in sm], "%.1f"))
    print(row("ratio --reader=mmap / ours (spliced), CPU per event", [scpm[i] / ocpm[i] for i in range(n)]))
    print(row("ratio --reader=mmap / ours (spliced), peak RSS", [sm[i] / om[i] for i in range(n)]))
cpu = [ocpm[i] / tcpm[i] for i in range(n)]
print("\nTargets, each repetition's pair (ours and the trace-cmd run after it): peak RSS at most"
      " trace-cmd's, %s; CPU per event at most trace-cmd's, %s." %
      (verdict(rss, lambda x: x <= 1.0), verdict(cpu, lambda x: x <= 1.0)))
PY
