# A real DataLoader, 4 workers on 2 CPUs, left named python3 as torch 1.13
# leaves them: the steady state must be data starvation of the CUDA thread,
# woken by exactly the 4 worker processes (role input worker, whatever their
# name), costing what the program measured waiting in next(); renamed
# pt_data_worker, the same roles and count; the healthy twin (1 worker, a
# long kernel) has no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_pair loader
feeder_record named loader --name-workers
feeder_check starved named || FEEDER_BAD=1
feeder_check same-roles starved named || FEEDER_BAD=1
feeder_done
