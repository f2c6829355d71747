# A DataLoader, 4 workers, pin_memory=True, with the real pin-memory thread
# pinning into cudaHostAlloc memory of the stand-in: the steady state must be
# data starvation woken by the 4 workers and relayed by the pin thread (role
# pin-memory thread, its cudaHostAlloc calls its own); the healthy twin has
# no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair pin
feeder_done
