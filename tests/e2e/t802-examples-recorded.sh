#!/usr/bin/env bash
# The example workloads of fixtures/examples recorded here and now, with
# contrib/examples.sh (the commands fixtures/examples/README.md gives): each
# new recording reaches the conclusion expect.tsv documents for the
# committed trace, so the examples hold on this machine and kernel (make
# check-kernels runs it in each guest), not only where they were recorded;
# CPU contention from other load on the machine, within what the kernel
# counted for the workload's thread, is left out.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
. "$IFT_SRC/tests/e2e/lib-examples.sh"
need_root
need_sim
command -v python3 >/dev/null || skip "needs python3 to parse JSON"

mkdir ex
cp "$IFT_FIXTURES/examples/README.md" "$IFT_FIXTURES/examples/expect.tsv" ex/ ||
	fail "cannot copy the examples' README and expect.tsv"
# cuda-seq calls this machine's runtime (lib.sh: NVIDIA's, or simcuda where
# NVIDIA's is x86-64 only)
CUDART=$IFT_CUDART EXAMPLES_TRUTH=$PWD/ex "$IFT_SRC/contrib/examples.sh" "$IFT_BUILD" "$PWD/ex" \
	2>examples.err ||
	fail "contrib/examples.sh failed: $(tail -3 examples.err)"
check_examples "$PWD/ex" recorded-here
[ "$n" -ge 6 ] || fail "expect.tsv lists $n examples"
assert_no_leftovers
exit 0
