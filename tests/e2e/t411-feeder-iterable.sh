# An IterableDataset sharded by worker (get_worker_info), DataLoader with 4
# workers on 2 CPUs: the steady state must be data starvation woken by
# exactly the 4 worker processes (input worker), as for a map-style
# dataset, with no rule of its own; the healthy twin has no HIGH or MEDIUM
# chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair iterable
feeder_done
