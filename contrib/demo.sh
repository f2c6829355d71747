#!/bin/sh
# The main job on the bundled workload: record a DataLoader-like program
# (page-touching worker processes renamed pt_data_worker, and a thread calling
# the real CUDA runtime) with `ingero-ftrace record`, then show the trace.
# Without root (recording needs it), a synthetic trace of the same shape is
# written through the trace writer API instead.
set -eu
build=${1:-build}
out=${IFT_DEMO_TRACE:-demo.trace}
cudart=${CUDART:-}
if [ -z "$cudart" ]; then
	for f in /usr/local/cuda*/lib*/libcudart.so.* /usr/lib/x86_64-linux-gnu/libcudart.so.*; do
		[ -f "$f" ] && { cudart=$f; break; }
	done
fi

if [ "$(id -u)" = 0 ] && [ -n "$cudart" ]; then
	cc -O2 -o "$build/demo-workload" contrib/bench/mixed-workload.c "$cudart" \
		-Wl,-rpath,"$(dirname "$cudart")"
	echo "\$ ingero-ftrace record -o $out -- $build/demo-workload 3 50 4"
	./ingero-ftrace record -o "$out" -- "$build/demo-workload" 3 50 4
else
	if [ "$(id -u)" != 0 ]; then
		echo "recording needs root (try: sudo make demo); showing a synthetic trace instead"
	else
		echo "no CUDA runtime found (set CUDART=/path/to/libcudart.so); showing a synthetic trace instead"
	fi
	"$build/tests/tools/gentrace" -o "$out" -n 200000 >/dev/null
fi
echo
echo "\$ ingero-ftrace info -i $out"
./ingero-ftrace info -i "$out"
echo
echo "\$ ingero-ftrace report -i $out"
./ingero-ftrace report -i "$out"
echo
echo "\$ ingero-ftrace dump -i $out --table calls | head -n 8"
./ingero-ftrace dump -i "$out" --table calls | head -n 8
echo
echo "\$ ingero-ftrace dump --json -i $out --table switches | head -n 3"
./ingero-ftrace dump --json -i "$out" --table switches | head -n 3
