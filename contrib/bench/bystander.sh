#!/usr/bin/env bash
# Bystanders: what a process outside the trace pays per call of a probed
# function while another command is recorded.  probe-loop (not traced) calls
# the tiny library's cudaSetDevice and the real libcudart's
# cudaGetDeviceCount N times each, alone and while each of these records a
# command that maps both libraries (probe-loop itself, blocked before its
# loops): `record --no-isolate` (uprobes through tracefs, armed in every
# process that maps the file), `record --isolate` (per-task perf events,
# armed in the traced tasks only), and trace-cmd with the same probes.
# Alternated in each repetition.  Each loop is timed in batches of BATCH
# calls and its figure is the median batch's (probe-loop's BATCH): on a
# machine of two CPUs the recorder's own threads take the loop's CPU now
# and then, which is not what a call costs; a tool's figure is the median
# of ROUNDS such measures.  One bystander process, started before the
# first tool, measures them all (probe-loop ... serve): it stands for a
# long-running process beside the recorded job, and how ld.so placed its
# code, which moves a 2 ns call by a fifth from one process to the next,
# is the same for every tool.  Prints a markdown section.  Needs root.
#
#   bystander.sh BUILD_DIR [REPS]        (N=calls per loop, default 200000;
#                                         BATCH, default 1000; ROUNDS, 9)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
n=${N:-200000}
batch=${BATCH:-1000}
rounds=${ROUNDS:-9}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
[ -f "$lib" ] || { echo "bystander.sh: no CUDA runtime at '$lib' (set CUDART)" >&2; exit 1; }
bench_setup bystander.sh

work=$(mktemp -d /tmp/ift-bystander.XXXXXX)
group=iftby_$$
recpid= bypid=
cleanup() {
	[ -n "$recpid" ] && kill "$recpid" 2>/dev/null
	[ -n "$bypid" ] && kill "$bypid" 2>/dev/null
	bench_remove_group "$group"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_build_loop "$bdir" "$lib"
bench_shim "$work"
toff=$(bench_fileoff "$tiny" cudaSetDevice)
coff=$(bench_fileoff "$lib" cudaGetDeviceCount)
{
	echo "p:$group/tiny $tiny:$toff device=%di:u64"
	echo "r:$group/tiny_ret $tiny:$toff ret=\$retval:s32"
	echo "p:$group/count $lib:$coff"
	echo "r:$group/count_ret $lib:$coff ret=\$retval:s32"
} >>$T/uprobe_events

# The recorded command: maps both libraries (probe-loop loads them), says
# so, and waits on a fifo before its loops; one call each at the end.
mkfifo "$work/go"
traced=(bash -c 'echo >"$0.ready"; read -r _ <"$0"; exec "$1" 1 "$2"' "$work/go" "$loop" "$tiny")

# The bystander: measures once a line on fd 7, answers on fd 8.
mkfifo "$work/cmd" "$work/res"
"$loop" "$n" "$tiny" "$batch" serve <"$work/cmd" >"$work/res" &
bypid=$!
exec 7>"$work/cmd" 8<"$work/res"

# measure: the median of $rounds measures, "tiny_ns cudart_ns", into $work/r
measure() {
	local i r
	: >"$work/rounds"
	for ((i = 0; i < rounds; i++)); do
		# spread over a third of a second: a spell of the machine's
		# (another job, the clock) spans one round, not all of them
		[ "$i" = 0 ] || sleep 0.04
		echo go >&7
		read -r r <&8 || { echo "bystander.sh: the bystander died" >&2; exit 1; }
		echo "$r" >>"$work/rounds"
	done
	python3 -c 'import statistics, sys
v = [list(map(float, l.split())) for l in open(sys.argv[1])]
print(" ".join("%.3f" % statistics.median(c) for c in zip(*v)))' "$work/rounds" >"$work/r"
}

# run TOOL: the bystander's "tiny_ns cudart_ns" into $work/r
run() {
	local tool=$1
	rm -f "$work/go.ready"
	case $tool in
	none) ;;
	no-isolate|isolate)
		"$ift" record -q --$tool -o "$work/o.trace" --cuda-lib "$tiny" --cuda-lib "$lib" -- \
			"${traced[@]}" >/dev/null 2>"$work/rec.log" 7>&- 8<&- &
		recpid=$! ;;
	trace-cmd)
		(cd "$work" && LD_PRELOAD="$work/shim.so" exec trace-cmd record -d -o tc.dat -e $group \
			-- "${traced[@]}" >tc.log 2>&1) 7>&- 8<&- &
		recpid=$! ;;
	esac
	if [ -n "$recpid" ]; then
		# the command runs once its tracer has armed everything
		while [ ! -e "$work/go.ready" ]; do
			kill -0 "$recpid" 2>/dev/null || { echo "bystander.sh: $tool failed" >&2; exit 1; }
			sleep 0.05
		done
	fi
	measure
	if [ -n "$recpid" ]; then
		echo >"$work/go"
		wait "$recpid" || { echo "bystander.sh: $tool failed: $(tail -n 2 "$work/rec.log" "$work/tc.log" 2>/dev/null)" >&2; exit 1; }
		recpid=
		bench_await_helpers
	fi
}

# a first measure, not kept: the process's first loops ran 1.3x slower
# (8.1 ns against 10.9, the caches and the clock still warming)
measure
bench_alternate bystander.sh "$reps" none no-isolate isolate trace-cmd

python3 - "$work/results" "$n" "$reps" "$batch" "$top/contrib/bench" "$rounds" <<'PY'
import sys
path, n, reps, batch = sys.argv[1:5]
rounds = sys.argv[6]
sys.path.insert(0, sys.argv[5])
from benchstat import mmm, row, verdicts
res = {}
for l in open(path):
    t, a, b = l.split()
    res.setdefault(t, ([], []))
    res[t][0].append(float(a)); res[t][1].append(float(b))
label = {"none": "nothing recorded",
         "no-isolate": "`ingero-ftrace record --no-isolate` (tracefs uprobes)",
         "isolate": "**`ingero-ftrace record --isolate`** (per-task perf events)",
         "trace-cmd": "`trace-cmd record -e` the same four probes"}
print("## Bystanders: an untraced process's calls while another command is recorded\n")
print("`probe-loop %s`, not traced, calls a tiny library's `cudaSetDevice` and libcudart's"
      " `cudaGetDeviceCount` %s times each while the recorded command (which maps both libraries)"
      " waits; %s repetitions, alternated. ns per call, the median of %s measures, each the median"
      " of the loop's batches of %s calls (a batch in which another task took the CPU is not what a"
      " call costs), all by one bystander process started before the first tool (how ld.so placed"
      " its code moves a 2 ns call by a fifth from one process to the next):\n"
      % (n, n, reps, rounds, batch))
print("| while | tiny `cudaSetDevice` min / median / max | libcudart `cudaGetDeviceCount` min / median / max |")
print("|---|---|---|")
for t in ("none", "no-isolate", "isolate", "trace-cmd"):
    print("| %s | %s | %s |" % (label[t], mmm(res[t][0], "%.2f"), mmm(res[t][1], "%.2f")))
ratio = [[res["isolate"][f][i] / res["none"][f][i] for i in range(len(res["none"][f]))] for f in (0, 1)]
print("\n| ratio to nothing recorded, each repetition's pair | min | median | max |\n|---|---|---|---|")
for f, name in ((0, "tiny `cudaSetDevice`, `--isolate`"), (1, "libcudart `cudaGetDeviceCount`, `--isolate`")):
    print(row(name, ratio[f], "%.3f"))
print("\nTarget: with `--isolate` a bystander's call costs at most 1.05x its cost with nothing"
      " recorded: %s." % verdicts(ratio, lambda x: x <= 1.05, "%.3f"))
PY
