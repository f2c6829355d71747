#!/usr/bin/env bash
# record --py-stack through a real torch.utils.data.DataLoader (Debian's
# python3-torch, 4 forked workers) whose batches the main thread sends to
# the stand-in runtime (tests/workloads/torch-loader.py --frames-log): the
# Python frames of every op's calls against the frames the workload logged
# at each (simrt.frames_here(), on the call's own line), as t701 checks them.
. "$IFT_SRC/tests/e2e/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

"$IFT" record -v --cuda-lib "$FEEDER_SIM" --py-stack -o loader.trace -- "$FEEDER_PY" \
	"$IFT_SRC/tests/workloads/torch-loader.py" --cudart "$FEEDER_SIM" --mode loader \
	--frames-log frames.json >truth.json 2>record.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
"$IFT" export --format sqlite -i loader.trace -o loader.db || fail "export failed"
python3 "$IFT_SRC/tests/e2e/pysitescheck.py" loader.db frames.json >check.out ||
	fail "Python frames differ from the workload's: $(cat check.out)"
echo "torch-loader: $(cat check.out)"
exit 0
