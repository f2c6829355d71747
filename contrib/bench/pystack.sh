#!/usr/bin/env bash
# Cost per Python stack: what record --py-stack adds to each call of a
# Python program over record --stack.  contrib/bench/pyloop.py calls the tiny
# cudaSetDevice of contrib/bench/probe-tiny.c N times through ctypes from 8
# nested Python functions, under no tracer, `record --stack=cudaSetDevice`
# and `record --py-stack=cudaSetDevice`, alternating (and rotating) the
# tools in each repetition.  Every recorded run is --no-host.  The calls are
# far shorter than a read of their frames: this is the cost, not the
# coverage (t701 measures that).  Prints a markdown section.  Needs root.
#
#   pystack.sh BUILD_DIR [REPS]        (N=calls per loop, default 20000)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
n=${N:-20000}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
py=${PYTHON:-/usr/bin/python3}
[ -x "$ift" ] || { echo "pystack.sh: no ingero-ftrace in '$bdir' or '$top'" >&2; exit 1; }
[ -x "$py" ] || { echo "pystack.sh: no $py" >&2; exit 1; }
bench_setup pystack.sh
work=$(mktemp -d /tmp/ift-pystack.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$bdir/bench"
tiny=$bdir/bench/libcudart-probetiny.so
cc -O0 -fcf-protection=none -fPIC -shared -o "$tiny" "$top/contrib/bench/probe-tiny.c"
prog=("$py" "$top/contrib/bench/pyloop.py" "$n" "$tiny")

# one run: TOOL -> "ns_per_call kept sites unwind_us in_flight late read_us" in $work/r
run() {
	local tool=$1 opts=()
	case $tool in
	bare) "${prog[@]}" | sed 's/$/ 0 0 0 0 0 0/' >"$work/r"; return ;;
	stack) opts=(--stack=cudaSetDevice) ;;
	pystack) opts=(--py-stack=cudaSetDevice) ;;
	esac
	rm -f "$work/o.trace"
	"$ift" record --no-host "${opts[@]}" -o "$work/o.trace" --cuda-lib "$tiny" -- \
		"${prog[@]}" >"$work/out" 2>"$work/o.log" ||
		{ echo "pystack.sh: $tool failed: $(tail -n 3 "$work/o.log")" >&2; exit 1; }
	bench_await_helpers
	python3 - "$work/out" "$work/o.log" >"$work/r" <<'PY'
import re, sys
ns = open(sys.argv[1]).read().split()[-1]
log = open(sys.argv[2]).read()
num = lambda s: s.replace(",", "")
m = re.search(r"stacks\s+([0-9,]+) call sites from ([0-9,]+) stacks \(([0-9,]+) lost\), ([0-9.]+) us", log)
p = re.search(r"python\s+([0-9,]+) calls with their Python frames, ([0-9,]+) read too late.*?, ([0-9.]+) us", log)
st = [num(m.group(2)), num(m.group(1)), m.group(4)] if m else ["0", "0", "0"]
ps = [num(p.group(1)), num(p.group(2)), p.group(3)] if p else ["0", "0", "0"]
print(" ".join([ns] + st + ps))
PY
}

t0=$(date +%s)
bench_alternate pystack.sh "$reps" bare stack pystack
echo "total $(($(date +%s) - t0)) s" >&2

python3 - "$work/results" "$n" "$reps" "$ift" "$tiny" "$py" "$top/contrib/bench/pyloop.py" "$top/contrib/bench/benchstat.py" <<'PY'
import os, statistics, sys
path, n, reps, ift, tiny, py, prog = sys.argv[1:8]
sys.path.insert(0, os.path.dirname(sys.argv[8]))
from benchstat import mmm, results
n, reps = int(n), int(reps)
res = results(path)
med = statistics.median
col = lambda t, k: [r[k] for r in res[t]]
def diff(a, b):
    return [x[0] - y[0] for x, y in zip(res[a], res[b])]
print("## Cost per Python stack\n")
print("`pyloop.py %d` calls the tiny `cudaSetDevice` through ctypes %d times from 8 nested Python"
      " functions (Debian's python3); %d repetitions, tools alternated (and rotated) in each. ns per"
      " call is the loop's wall time over the calls, Python's own cost included.\n" % (n, n, reps))
print("| run | ns/call min / median / max | over bare (median) | stacks kept (median) |"
      " unwind µs per stack | Python frames read in flight / late (median) | read µs per stack (median) |")
print("|---|---|---|---|---|---|---|")
label = {"bare": "bare (no tracer)", "stack": "`record --no-host --stack=cudaSetDevice`",
         "pystack": "`record --no-host --py-stack=cudaSetDevice`"}
for t in ("bare", "stack", "pystack"):
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        label[t], mmm(col(t, 0), "%.0f"), "-" if t == "bare" else "%.0f" % med(diff(t, "bare")),
        "-" if t == "bare" else "%.0f" % med(col(t, 1)),
        "-" if t == "bare" else "%.2f" % med(col(t, 3)),
        "-" if t != "pystack" else "%.0f / %.0f" % (med(col(t, 4)), med(col(t, 5))),
        "-" if t != "pystack" else "%.1f" % med(col(t, 6))))
d = diff("pystack", "stack")
lo, hi = min(d), max(d)
print("\nWhat `--py-stack` adds to a call over `--stack`: %s ns (min / median / max of the"
      " repetitions' differences). The frames are read by the recorder's stack thread, woken at"
      " every sample; on a machine with fewer CPUs than busy threads that thread's time is the"
      " program's. A call this short is over before its frames can be read, so most are late:"
      " their stacks stay native (`PY_LATE`); a call of 100 µs or more gets its frames (t701).\n"
      % mmm(d))
print("Command line: `%s record --no-host --py-stack=cudaSetDevice -o x.trace --cuda-lib %s -- %s %s %d %s`."
      % (ift, tiny, py, prog, n, tiny))
PY
