#!/bin/sh
# The main job on the bundled workload: a training loop starved by its
# DataLoader, then the same loop fed by direct indexing, both on simcuda (a
# stand-in CUDA runtime with a modelled device, contrib/simcuda), each
# recorded with `ingero-ftrace record` and explained by `report`, then the
# two side by side with `report --diff`.
#
# On a real GPU machine the same two commands are:
#   sudo ingero-ftrace record -- python3 benchmark.py
#   ingero-ftrace report
#
# Without root (recording needs it), a synthetic trace written through the
# trace writer API is reported instead.
#
# The traces are written here; the workloads' own logs (their truth, which
# the tests compare with) in $DEMO_TRUTH, else BUILD.
set -eu
build=${1:-build}
ift=./ingero-ftrace
[ -x "$ift" ] || ift=$build/ingero-ftrace
sim=$build/tests/workloads/simtrain
truth=${DEMO_TRUTH:-$build}

run() {
	echo "\$ $*"
	"$@"
	echo
}

if [ "$(id -u)" != 0 ]; then
	echo "recording needs root (try: sudo make demo); reporting a synthetic trace instead"
	echo
	"$build/tests/tools/gentrace" -o demo.trace -n 200000 >/dev/null
	run "$ift" report -i demo.trace
	exit 0
fi

echo "# 1. DataLoader starvation: 4 worker processes (pt_data_worker) build the"
echo "#    batches on 2 CPUs while the training thread waits for them"
run "$ift" record -o loader.trace -- "$sim" loader -o "$truth/demo-loader.truth"
run "$ift" report -i loader.trace

echo "# 2. The fix: direct indexing of the in-memory dataset, no workers"
run "$ift" record -o direct.trace -- "$sim" direct -o "$truth/demo-direct.truth"
run "$ift" report -i direct.trace

echo "# 3. Side by side: the starved run against the fix as its baseline"
run "$ift" report -i loader.trace --diff direct.trace
