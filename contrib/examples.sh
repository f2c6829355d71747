#!/usr/bin/env bash
# Re-records the example traces of fixtures/examples (`make examples`): the
# scenario workloads on simcuda, the stand-in CUDA runtime, and the real
# libcudart test program, each with the exact command given in
# fixtures/examples/README.md.  Needs root and tracefs; run after
# `make all workloads`.  Each trace must stay under 1 MB; what report should
# conclude on each is in fixtures/examples/expect.tsv (checked by t800).
# Every output of the read half on them is pinned by t030: regenerate its
# goldens (tests/golden/update.sh) and commit them with the new traces.
#
#   contrib/examples.sh [BUILD_DIR] [OUT_DIR]
#
# EXAMPLES_TRUTH=DIR keeps each simulated workload's own log (NAME.jsonl:
# its calls, waits and the run-queue wait the kernel counted) there, and
# cuda-seq's calls with their clock reads (NAME.calls.tsv).
# EXAMPLES="NAME ..." records those alone (fixtures/arm64: two of them, in an
# arm64 guest, with CUDART the arm64 simcuda).
set -euo pipefail
build=${1:-build}
out=${2:-fixtures/examples}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
ift=$build/ingero-ftrace
sim=$build/tests/workloads/simtrain
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}

[ "$(id -u)" = 0 ] || { echo "examples: recording needs root" >&2; exit 1; }
[ -x "$sim" ] || { echo "examples: no $sim: run 'make all workloads' first" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d /tmp/ift-examples.XXXXXX)
hogs=
cleanup() {
	for p in $hogs; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the workloads were calibrated on 2 CPUs
pin=
[ "$(nproc)" -gt 2 ] && pin="taskset -c 0,1"

rec() {	# NAME CMD...: record CMD into OUT/NAME.trace
	local name=$1
	shift
	[ -z "${EXAMPLES:-}" ] || [[ " $EXAMPLES " == *" $name "* ]] || return 0
	echo "examples: $name: record -- $*" >&2
	$pin "$ift" record -q -o "$work/$name.trace" -- "$@" >"$work/$name.out" 2>"$work/$name.err" ||
		{ echo "examples: $name: record failed: $(tail -3 "$work/$name.err")" >&2; exit 1; }
	size=$(stat -c %s "$work/$name.trace")
	[ "$size" -lt 1000000 ] ||
		{ echo "examples: $name.trace is $size bytes, over 1 MB" >&2; exit 1; }
	mv "$work/$name.trace" "$out/$name.trace"
	chmod 644 "$out/$name.trace"
	# the workload's own account of the run, for a test to hold the report to
	if [ -n "${EXAMPLES_TRUTH:-}" ] && [ -f "$work/$name.jsonl" ]; then
		cp "$work/$name.jsonl" "$EXAMPLES_TRUTH/"
	fi
	# and cuda-seq's: each call with its clock reads, on its stdout
	if [ -n "${EXAMPLES_TRUTH:-}" ] && [ ! -f "$work/$name.jsonl" ] && [ -s "$work/$name.out" ]; then
		cp "$work/$name.out" "$EXAMPLES_TRUTH/$name.calls.tsv"
		# and the kernel's count of its wait for a CPU
		[ ! -s "$work/$name.schedstat" ] || cp "$work/$name.schedstat" "$EXAMPLES_TRUTH/"
	fi
}

rec dataloader-starvation "$sim" loader --workers 4 --steps 150 -o "$work/dataloader-starvation.jsonl"
rec direct-indexing "$sim" direct --steps 150 -o "$work/direct-indexing.jsonl"
for _ in 1 2 3 4 5 6; do
	$pin "$sim" hog --seconds 0 &	# until killed below
	hogs="$hogs $!"
done
sleep 0.3
rec noisy-neighbour "$sim" healthy --steps 150 --host-us 150 -o "$work/noisy-neighbour.jsonl"
for p in $hogs; do kill "$p" 2>/dev/null || true; done
hogs=
rec page-alloc-storm "$sim" pagestorm --steps 30 --mb 32 -o "$work/page-alloc-storm.jsonl"
SIMCUDA_BLOCK_NS=1000 rec gpu-bound "$sim" gpubound --steps 60 --grid 20000 -o "$work/gpu-bound.jsonl"
cc -O2 -o "$work/cuda-seq" tests/workloads/cuda-seq.c "$lib" -Wl,-rpath,"$(dirname "$lib")"
CUDA_SEQ_SCHEDSTAT=$work/cudart-sequence.schedstat rec cudart-sequence "$work/cuda-seq" 20
ls -l "$out"/*.trace >&2
