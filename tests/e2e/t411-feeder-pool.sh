# multiprocessing.Pool(4).imap feeding the CUDA thread through Pool's
# result-handler thread: the steady state must be data starvation woken by the
# 4 pool worker processes (input worker), relayed by the handler (relay); the
# healthy twin (1 worker, a long kernel) has no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair pool
feeder_done
