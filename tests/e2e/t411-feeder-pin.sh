# A DataLoader, 4 workers, pin_memory=True, with the real pin-memory thread
# pinning into cudaHostAlloc memory of the stand-in: the steady state must be
# data starvation woken by the 4 workers and relayed by the pin thread (role
# pin-memory thread, its cudaHostAlloc calls its own); the healthy twin has
# no HIGH or MEDIUM chain.
. "$IFT_SRC/tests/e2e/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_record starved pin
feeder_record healthy pin --healthy
ok=0
feeder_check starved starved || ok=1
feeder_check healthy healthy || ok=1
[ $ok = 0 ] || fail "the reports do not match the program's truth"
assert_no_leftovers
exit 0
