# A real DataLoader, 4 workers on 2 CPUs, left named python3 as torch 1.13
# leaves them: the steady state must be data starvation of the CUDA thread,
# woken by exactly the 4 worker processes (role input worker, whatever their
# name), costing what the program measured waiting in next(); renamed
# pt_data_worker, the same roles and count; the healthy twin (1 worker, a
# long kernel) has no HIGH or MEDIUM chain.
. "$IFT_SRC/tests/e2e/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_record starved loader
feeder_record healthy loader --healthy
feeder_record named loader --name-workers
ok=0
feeder_check starved starved || ok=1
feeder_check healthy healthy || ok=1
feeder_check starved named || ok=1
feeder_check same-roles starved named || ok=1
[ $ok = 0 ] || fail "the reports do not match the program's truth"
assert_no_leftovers
exit 0
