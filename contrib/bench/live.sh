#!/usr/bin/env bash
# What a long job's recording modes cost (issue 40): simtrain's healthy loop
# (a pinned batch, 20 kernels a step on the stand-in runtime: about 4,000
# calls and 20,000 events a second here) recorded plainly, with
# --keep-last 5s (the flight recorder: a spool of pieces, cut every 1.25 s),
# and plainly with `top` following the recording (a frame every second),
# alternating (and rotating) the three in each repetition.  The cost is the
# workload's own wall time of its loop against the plain recording's; the
# recorder's CPU and peak RSS, and top's CPU a frame; then the flight
# recorder's RSS over a 60 s run.  Prints a markdown section.  Needs root.
#
#   live.sh BUILD_DIR [REPS]        (STEPS=the loop's steps, default 1500)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
steps=${STEPS:-1500}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
sim=$bdir/tests/workloads/simtrain
[ -x "$ift" ] || { echo "live.sh: no ingero-ftrace in '$bdir' or '$top'" >&2; exit 1; }
[ -x "$sim" ] || { echo "live.sh: no $sim (make workloads)" >&2; exit 1; }
bench_setup live.sh
work=$(mktemp -d /tmp/ift-live.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# ticks of utime + stime of PID (field 14 and 15 of /proc/PID/stat)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# one run: MODE -> "loop_ns recorder_cpu_ms recorder_peak_kb top_cpu_ms top_frames" in $work/r
run() {
	local mode=$1 opts=() rp tp=0 peak=0 tcpu=0 rss t
	[ "$mode" = keep ] && opts=(--keep-last 5s)
	rm -f "$work"/o*.trace "$work"/.o.keep.* "$work/truth"
	"$ift" record "${opts[@]}" -o "$work/o.trace" -- "$sim" healthy --steps "$steps" \
		-o "$work/truth" >"$work/o.out" 2>"$work/o.log" &
	rp=$!
	if [ "$mode" = top ]; then
		until [ -e "$work/o.trace.part" ] || ! kill -0 $rp 2>/dev/null; do sleep 0.05; done
		"$ift" top -i "$work/o.trace" >"$work/top.out" 2>&1 &
		tp=$!
	fi
	while kill -0 $rp 2>/dev/null; do
		rss=$(awk '/^VmHWM/ { print $2 }' /proc/$rp/status 2>/dev/null || echo 0)
		[ "${rss:-0}" -gt "$peak" ] && peak=$rss
		[ $tp != 0 ] && t=$(ticks $tp) && [ "$t" -gt "$tcpu" ] && tcpu=$t
		sleep 0.2
	done
	wait $rp || { echo "live.sh: $mode failed: $(tail -n 3 "$work/o.log")" >&2; exit 1; }
	[ $tp != 0 ] && { wait $tp || true; }
	bench_await_helpers
	python3 - "$work/truth" "$work/o.log" "$peak" "$tcpu" "$work/top.out" "$mode" \
		"$(getconf CLK_TCK)" >"$work/r" <<'PY'
import json, re, sys
loop = [json.loads(l) for l in open(sys.argv[1]) if '"type":"loop"' in l][0]
log = open(sys.argv[2]).read()
cpu = re.search(r"recorder\s+([0-9]+) ms of CPU", log)
frames = open(sys.argv[5]).read().count("ingero-ftrace top ") if sys.argv[6] == "top" else 0
print(loop["loop_ns"], cpu.group(1) if cpu else 0, sys.argv[3],
      int(sys.argv[4]) * 1000 // int(sys.argv[7]), frames)
PY
	rm -f "$work/top.out"
}

t0=$(date +%s)
bench_alternate live.sh "$reps" plain keep top
echo "total $(($(date +%s) - t0)) s" >&2

# the flight recorder's memory over a minute: VmRSS each second
"$ift" record --keep-last 5s -o "$work/m.trace" -- "$sim" healthy --loop-ms 60000 \
	-o "$work/m.truth" >"$work/m.out" 2>"$work/m.log" &
rp=$!
while kill -0 $rp 2>/dev/null; do
	awk '/^VmRSS/ { print $2 }' /proc/$rp/status 2>/dev/null
	sleep 1
done >"$work/rss"
wait $rp || { echo "live.sh: the 60 s run failed: $(tail -n 3 "$work/m.log")" >&2; exit 1; }
bench_await_helpers

python3 - "$work/results" "$reps" "$steps" "$top/contrib/bench/benchstat.py" <<'PY'
import os, statistics, sys
path, reps, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, os.path.dirname(sys.argv[4]))
from benchstat import mmm, results
res = results(path)
med = statistics.median
col = lambda t, k: [r[k] for r in res[t]]
print("## Cost of following a long job: `--keep-last` and `top`\n")
print("`simtrain healthy --steps %d` (20 kernels a step on the stand-in runtime) recorded"
      " plainly, with `--keep-last 5s`, and plainly with `top -i` following the recording"
      " (a frame a second); %d repetitions, the three alternated (and rotated) in each. The"
      " time is the workload's own wall time of its loop.\n" % (steps, reps))
print("| run | loop wall time min / median / max | ratio to plain (min / median / max) |"
      " recorder CPU | recorder peak RSS | top CPU a frame |")
print("|---|---|---|---|---|---|")
for t, label in (("plain", "`record`"), ("keep", "`record --keep-last 5s`"),
                 ("top", "`record`, `top` following")):
    ratio = [a[0] / b[0] for a, b in zip(res[t], res["plain"])]
    frames = med(col(t, 4))
    print("| %s | %s ms | %s | %.0f ms | %.1f MiB | %s |" % (
        label, mmm([x / 1e6 for x in col(t, 0)], "%.0f"), mmm(ratio, "%.3f"),
        med(col(t, 1)), med(col(t, 2)) / 1024,
        "%.1f ms (%.0f frames)" % (med(col(t, 3)) / frames, frames) if frames else "-"))
print("\n(CPU and RSS: medians; RSS is the recorder's VmHWM at its last sample.)\n")
PY
python3 - "$work/rss" <<'PY'
import sys
v = [int(l) for l in open(sys.argv[1]) if l.strip()]
print("`record --keep-last 5s` over a 60 s run of the same loop: the recorder's RSS at most"
      " %.1f MiB in its first 10 s and %.1f MiB in its last 10 s (%.1f MiB at most in all;"
      " t442 holds the growth within 8 MiB).\n" % (max(v[:10]) / 1024, max(v[-10:]) / 1024,
                                                  max(v) / 1024))
PY
