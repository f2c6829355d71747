# A ThreadPoolExecutor(4) building batches in the CUDA thread's own process
# (GIL contention): the steady state must be data starvation woken by exactly
# the executor threads (input thread); the healthy twin has no HIGH or MEDIUM
# chain.
. "$IFT_SRC/tests/e2e/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_record starved threads
feeder_record healthy threads --healthy
ok=0
feeder_check starved starved || ok=1
feeder_check healthy healthy || ok=1
[ $ok = 0 ] || fail "the reports do not match the program's truth"
assert_no_leftovers
exit 0
