#!/bin/sh
# The main job on the bundled workload.
#
# Until `record` lands (issue 3), the bundled workload is a synthetic
# recording of the DataLoader-starvation scenario written through the trace
# writer API (tests/tools/gentrace); the demo shows what the trace file holds.
set -eu
gentrace=${1:-build/tests/tools/gentrace}
out=${IFT_DEMO_TRACE:-demo.trace}

"$gentrace" -o "$out" -n 200000 >/dev/null
./ingero-ftrace info -i "$out"
echo
echo "first events (ingero-ftrace dump -i $out | head):"
./ingero-ftrace dump -i "$out" | head -n 12
echo
echo "as JSON (ingero-ftrace dump --json -i $out --table calls | head -n 3):"
./ingero-ftrace dump --json -i "$out" --table calls | head -n 3
