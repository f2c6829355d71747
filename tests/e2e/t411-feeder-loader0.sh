# A DataLoader with num_workers=0: the CUDA thread builds every batch itself.
# The steady state must be data starvation as on-CPU time in the gaps, with
# no worker and nobody with a feeder role, and the profile must show the
# CUDA thread's gaps in its per-sample work, sample(), which the fix quotes
# (feedercheck.py own-gaps); the healthy twin (cheap batches, a long
# kernel) has no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair loader0
feeder_check own-gaps starved || FEEDER_BAD=1
feeder_done
