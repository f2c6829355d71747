# A ThreadPoolExecutor(4) building batches in the CUDA thread's own process
# (GIL contention): the steady state must be data starvation woken by exactly
# the executor threads (input thread); the healthy twin has no HIGH or MEDIUM
# chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair threads
feeder_done
