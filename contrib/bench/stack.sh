#!/usr/bin/env bash
# Cost per stack: what record --stack adds to each stacked call of the traced
# program, over plain record.  contrib/bench/probe-loop.c calls N times (a)
# cudaSetDevice of contrib/bench/probe-tiny.c, the stacked op, and (b)
# libcudart's cudaGetDeviceCount, probed but not stacked (the control), under
# no tracer, `record`, `record --stack=cudaSetDevice` and the same with
# `--stack-period 10`, alternating (and rotating) the tools in each
# repetition so drift cancels.  Every recorded run is --no-host: the host
# events' cost is overhead.sh's, not this one's.  Prints a markdown section.
# Needs root and tracefs.
#
#   stack.sh BUILD_DIR [REPS]        (N=calls per loop, default 100000)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
n=${N:-100000}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}
# without a CUDA install, simcuda's stand-in (make workloads) does as well
[ -f "$lib" ] || lib=$bdir/simcuda/libcudart.so.12

[ -f "$lib" ] || { echo "stack.sh: no CUDA runtime at '$lib' (set CUDART or make workloads)" >&2; exit 1; }
[ -x "$ift" ] || { echo "stack.sh: no ingero-ftrace in '$bdir' or '$top'" >&2; exit 1; }
bench_setup stack.sh

work=$(mktemp -d /tmp/ift-stack.XXXXXX)
cp $T/uprobe_events "$work/uprobe_events.before"
cleanup() {
	# the recorder removes its own probes; say so when some were left (a
	# recorder running beside this one may remove its own meanwhile)
	if comm -13 <(sort "$work/uprobe_events.before") <(sort $T/uprobe_events) | grep -q .; then
		echo "stack.sh: warning: uprobe_events has probes it did not have before the run:" >&2
		comm -13 <(sort "$work/uprobe_events.before") <(sort $T/uprobe_events) >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_build_loop "$bdir" "$lib"

# one run: TOOL -> "tool tiny_ns cudart_ns bytes samples lost sites unwind_us" in $work/r
run() {
	local tool=$1 opts=()
	case $tool in
	bare)
		"$loop" "$n" "$tiny" >"$work/out" 2>/dev/null
		grep -E '^[0-9.]+ [0-9.]+$' "$work/out" | tail -n 1 | sed 's/$/ 0 0 0 0 0/' >"$work/r" || true
		return ;;
	record) ;;
	stack) opts=(--stack=cudaSetDevice) ;;
	stack10) opts=(--stack=cudaSetDevice --stack-period 10) ;;
	esac
	rm -f "$work/o.trace"
	"$ift" record --no-host "${opts[@]}" -o "$work/o.trace" --cuda-lib "$tiny" --cuda-lib "$lib" -- \
		"$loop" "$n" "$tiny" >"$work/out" 2>"$work/o.log" ||
		{ echo "stack.sh: $tool failed: $(tail -n 3 "$work/o.log")" >&2; exit 1; }
	bench_await_helpers
	# "  stacks       3 call sites from 100,001 stacks (0 lost), 1.2 us each to unwind"
	python3 - "$work/out" "$work/o.log" "$work/o.trace" >"$work/r" <<'PY'
import os, re, sys
out = [l.split() for l in open(sys.argv[1]) if re.match(r"^[0-9.]+ [0-9.]+$", l.strip())]
m = re.search(r"stacks\s+([0-9,]+) call sites from ([0-9,]+) stacks \(([0-9,]+) lost\), ([0-9.]+) us",
              open(sys.argv[2]).read())
num = lambda s: s.replace(",", "")
st = [num(m.group(2)), num(m.group(3)), num(m.group(1)), m.group(4)] if m else ["0", "0", "0", "0"]
if out:
    print(" ".join(out[-1] + [str(os.path.getsize(sys.argv[3]))] + st))
PY
}

t0=$(date +%s)
bench_alternate stack.sh "$reps" bare record stack stack10
echo "total $(($(date +%s) - t0)) s" >&2

python3 - "$work/results" "$n" "$reps" "$ift" "$tiny" "$lib" "$loop" "$top/contrib/bench/benchstat.py" <<'PY'
import os, statistics, sys
path, n, reps, ift, tiny, lib, loop = sys.argv[1:8]
sys.path.insert(0, os.path.dirname(sys.argv[8]))
from benchstat import mmm, results
n, reps = int(n), int(reps)
res = results(path)
col = lambda t, k: [r[k] for r in res[t]]
med = statistics.median
# per repetition, so that drift cancels
def diff(a, b, k=0):
    return [x[k] - y[k] for x, y in zip(res[a], res[b])]
label = {"bare": "bare (no tracer)", "record": "`record --no-host`",
         "stack": "`record --no-host --stack=cudaSetDevice`",
         "stack10": "`... --stack=cudaSetDevice --stack-period 10`"}
print("## Cost per stack\n")
print("`probe-loop %d` calls the stacked op (tiny `cudaSetDevice`) %d times, then the probed but unstacked"
      " `cudaGetDeviceCount` of libcudart %d times (the control); %d repetitions, tools alternated (and"
      " rotated) in each. The stack copied per call is the default, 16 KiB of user stack plus the"
      " registers, unwound by the recorder with .eh_frame while the program runs.\n" % (n, n, n, reps))
print("| run | stacked op ns/call min / median / max | over bare (median) | control ns/call min / median / max"
      " | stacks kept / lost (last run) | unwind µs per stack (median) | trace bytes |")
print("|---|---|---|---|---|---|---|")
for t in ("bare", "record", "stack", "stack10"):
    kept, lost = res[t][-1][3], res[t][-1][4]
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        label[t], mmm(col(t, 0), "%.1f" if t == "bare" else "%.0f"),
        "-" if t == "bare" else "%.0f" % med(diff(t, "bare")),
        mmm(col(t, 1), "%.1f" if t == "bare" else "%.0f"),
        "-" if t in ("bare", "record") else "%d / %d" % (kept, lost),
        "-" if t in ("bare", "record") else "%.2f" % med(col(t, 6)),
        "-" if t == "bare" else "%.0f" % med(col(t, 2))))
rec = diff("record", "bare")
print()
print("| what `--stack` adds, over `record` | `--stack` min / median / max | `--stack-period 10` min / median / max |")
print("|---|---|---|")
rows = {}
for t in ("stack", "stack10"):
    d = diff(t, "record")
    samples = [r[3] + r[4] for r in res[t]]	# kept + lost: the calls the kernel sampled
    rows[t] = (d, [x * n / s if s else 0 for x, s in zip(d, samples)],
               [x / r for x, r in zip(d, rec)],
               [(x[2] - y[2]) / r[3] if r[3] else 0 for x, y, r in zip(res[t], res["record"], res[t])])
for k, what, f in ((0, "ns per call of the op", "%.0f"), (1, "ns per stacked call", "%.0f"),
                   (2, "per call, as a ratio to plain record's overhead", "%.2f"),
                   (3, "trace bytes per stack kept", "%.1f")):
    print("| %s | %s | %s |" % (what, mmm(rows["stack"][k], f), mmm(rows["stack10"][k], f)))
print("\nPlain record's overhead is %.0f ns per call here (median). Each call of the op fires its"
      " perf event whatever the period (the kernel counts, and copies the stack of one call in"
      " PERIOD): that is why a stacked call costs more with a period than without. The control"
      " (`cudaGetDeviceCount`, not stacked) moves by %.0f ns per call (median) between `record` and"
      " `record --stack`. Stacks kept / lost and the recorder's unwind time are those `record`"
      " prints; trace bytes per stack kept are the trace's size over plain record's, divided by the"
      " stacks kept (call sites are stored once, a call carries a site id).\n"
      % (med(rec), med(diff("stack", "record", 1))))
print("Command lines (LIB = `%s`, TINY = `%s`): `%s record --no-host [--stack=cudaSetDevice"
      " [--stack-period 10]] -o x.trace --cuda-lib TINY --cuda-lib LIB -- %s %d TINY`." % (lib, tiny, ift, loop, n))
PY
