#!/usr/bin/env bash
# Cost of the CPU profile (record --profile, on by default): a DataLoader
# workload (tests/workloads/feeders.py --feeder loader: 4 worker processes
# building batches for the stand-in runtime's thread, torch 1.13) recorded
# with --profile=off and with the default 99 Hz, alternating (and rotating)
# the two in each repetition.  The slowdown is the workload's own wall time
# of its steady loop (its truth's wall_ns), with the profile over without;
# the goal is 2% at most.  Then the profile's bytes in the trace: its table,
# and the file's growth, per sample.  Prints a markdown section.  Needs
# root and python3-torch.
#
#   profile.sh BUILD_DIR [REPS]        (BATCHES=batches per epoch, default 200)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
batches=${BATCHES:-200}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
py=${PYTHON:-/usr/bin/python3}
sim=$bdir/simcuda/libcudart.so.12
[ -x "$ift" ] || { echo "profile.sh: no ingero-ftrace in '$bdir' or '$top'" >&2; exit 1; }
[ -f "$sim" ] || { echo "profile.sh: no $sim (make workloads)" >&2; exit 1; }
"$py" -c 'import torch' 2>/dev/null || { echo "profile.sh: $py has no torch" >&2; exit 1; }
bench_setup profile.sh
work=$(mktemp -d /tmp/ift-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
prog=("$py" "$top/tests/workloads/feeders.py" --cudart "$sim" --feeder loader
      --batches "$batches")

# one run: TOOL -> "wall_ns file_bytes profile_rows profile_bytes recorder_cpu_ms
# command_cpu_ms" in $work/r
run() {
	local tool=$1 opts=()
	[ "$tool" = off ] && opts=(--profile=off)
	rm -f "$work/o.trace"
	"$ift" record "${opts[@]}" --cuda-lib "$sim" -o "$work/o.trace" -- "${prog[@]}" \
		>"$work/truth" 2>"$work/o.log" ||
		{ echo "profile.sh: $tool failed: $(tail -n 3 "$work/o.log")" >&2; exit 1; }
	bench_await_helpers
	"$ift" info -i "$work/o.trace" >"$work/info"
	python3 - "$work/truth" "$work/info" "$work/o.trace" "$work/o.log" >"$work/r" <<'PY'
import json, os, re, sys
truth = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rows = byts = 0
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 4 and f[0] == "profile" and f[1].replace(",", "").isdigit():
        rows, byts = int(f[1].replace(",", "")), int(f[3].replace(",", ""))
# "  recorder     573 ms of CPU (user 230, system 342), ..." (all its threads),
# "  command      5508 ms of CPU ..." (the workload and the workers it reaped)
log = open(sys.argv[4]).read()
cpu = [re.search(r"%s\s+([0-9]+) ms of CPU" % w, log) for w in ("recorder", "command")]
print(truth["wall_ns"], os.path.getsize(sys.argv[3]), rows, byts,
      *[c.group(1) if c else 0 for c in cpu])
PY
}

t0=$(date +%s)
bench_alternate profile.sh "$reps" off on
echo "total $(($(date +%s) - t0)) s" >&2

torch=$("$py" -c 'import torch; print(torch.__version__)')
python3 - "$work/results" "$reps" "$batches" "$top/contrib/bench/benchstat.py" "$torch" <<'PY'
import os, statistics, sys
path, reps, batches, torch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[5]
sys.path.insert(0, os.path.dirname(sys.argv[4]))
from benchstat import mmm, results
res = results(path)
med = statistics.median
col = lambda t, k: [r[k] for r in res[t]]
ratio = [a[0] / b[0] for a, b in zip(res["on"], res["off"])]
print("## Cost of the CPU profile\n")
print("`feeders.py --feeder loader --batches %d` (a DataLoader with 4 workers on this machine's"
      " CPUs, torch %s) recorded without (`--profile=off`) and with the profile (the default,"
      " 99 Hz of each thread's CPU); %d repetitions, the two alternated (and rotated) in each."
      " The time is the workload's own wall time of its loop.\n" % (batches, torch, reps))
print("| run | loop wall time min / median / max | recorder CPU | command CPU | trace bytes | profile samples |")
print("|---|---|---|---|---|---|")
for t, label in (("off", "`record --profile=off`"), ("on", "`record` (profile 99 Hz)")):
    print("| %s | %s ms | %.0f ms | %.0f ms | %.0f | %s |" % (
        label, mmm([x / 1e6 for x in col(t, 0)], "%.0f"), med(col(t, 4)), med(col(t, 5)),
        med(col(t, 1)), "-" if t == "off" else "%.0f" % med(col(t, 2))))
print("\n(CPU, bytes and samples: medians.)")
rows = med(col("on", 2)) or 1
print("\nSlowdown with the profile: %s (min / median / max of the repetitions' ratios of the"
      " loop's wall time, on / off; the goal is 1.02 at most). The profile's table takes %.1f"
      " bytes a sample, and the file grows by %.1f bytes a sample (the table, and the stacks it"
      " names, each once).\n" % (mmm(ratio, "%.3f"), med(col("on", 3)) / rows,
                                 (med(col("on", 1)) - med(col("off", 1))) / rows))
print("The recorder's own CPU (all its threads, from `record`'s summary) grows by %.0f us a"
      " sample, and the command's (its workers' included) by %.0f us (that figure's spread"
      " without the profile: %s ms). Medians, on less"
      " off, over the samples. On a machine whose CPUs the workload keeps busy the"
      " recorder's time is the workload's.\n" % (
          (med(col("on", 4)) - med(col("off", 4))) * 1e3 / rows,
          (med(col("on", 5)) - med(col("off", 5))) * 1e3 / rows,
          mmm(col("off", 5), "%.0f")))
PY
