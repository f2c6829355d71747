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
# Recording needs root: a user runs the two records through sudo (the
# workloads then run as that user, record drops to the sudo caller's
# credentials); root runs them itself, with or without a sudo installed.
# Where neither is possible a synthetic trace written through the trace
# writer API is reported instead.
#
# The traces are written here; the workloads' own logs (their truth, which
# the tests compare with) in $DEMO_TRUTH, else BUILD.
set -eu
build=${1:-build}
ift=./ingero-ftrace
[ -x "$ift" ] || ift=$build/ingero-ftrace
sim=$build/tests/workloads/simtrain
truth=${DEMO_TRUTH:-$build}
# the modelled device's NVML, as simtrain's CUDA is the modelled one: the
# report measures the GPU's busy share
nvml=$build/simcuda/libnvidia-ml.so.1

run() {
	echo "\$ $*"
	"$@"
	echo
}

# record ARGS...: as root, with the modelled NVML where it was built
record() {
	if [ -f "$nvml" ]; then
		run $as_root "$ift" record --nvml-lib "$nvml" "$@"
	else
		run $as_root "$ift" record "$@"
	fi
}

as_root=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		as_root=sudo
	else
		echo "recording needs root, and there is no sudo: reporting a synthetic trace instead"
		echo
		"$build/tests/tools/gentrace" -o demo.trace -n 200000 >/dev/null
		run "$ift" report -i demo.trace
		exit 0
	fi
fi

echo "# 1. DataLoader starvation: 4 worker processes (pt_data_worker) build the"
echo "#    batches on 2 CPUs while the training thread waits for them"
record -o loader.trace -- "$sim" loader -o "$truth/demo-loader.truth"
run "$ift" report -i loader.trace

echo "# 2. The fix: direct indexing of the in-memory dataset, no workers"
record -o direct.trace -- "$sim" direct -o "$truth/demo-direct.truth"
run "$ift" report -i direct.trace

echo "# 3. Side by side: the starved run against the fix as its baseline"
run "$ift" report -i loader.trace --diff direct.trace
