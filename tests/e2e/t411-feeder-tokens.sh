# A DataLoader with 4 workers on 2 CPUs whose samples are text tokenized in
# pure Python (no torch op until the ids are wrapped): the steady state must
# be data starvation woken by exactly the 4 worker processes (input worker),
# whatever work they do, with no rule of its own; the healthy twin has no
# HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair tokens
feeder_done
