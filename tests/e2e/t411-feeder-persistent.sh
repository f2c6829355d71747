# A DataLoader, 4 persistent workers, 2 epochs: the steady state (both
# epochs) must be data starvation woken by the same 4 worker processes, not
# 8; the healthy twin has no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair persistent
feeder_done
