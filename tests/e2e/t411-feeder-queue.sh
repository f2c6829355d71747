# One prefetch thread reading each batch's rows from a file and building
# the batch into a queue.Queue(maxsize=2), in the CUDA thread's own process:
# the steady state must be data starvation woken by exactly that thread
# (input thread), with no rule of its own; the healthy twin has no HIGH or
# MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair queue
feeder_done
