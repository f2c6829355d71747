# A DataLoader, 4 persistent workers, 2 epochs: the steady state (both
# epochs) must be data starvation woken by the same 4 worker processes, not
# 8; the healthy twin has no HIGH or MEDIUM chain.
. "$IFT_SRC/tests/e2e/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch

feeder_record starved persistent
feeder_record healthy persistent --healthy
ok=0
feeder_check starved starved || ok=1
feeder_check healthy healthy || ok=1
[ $ok = 0 ] || fail "the reports do not match the program's truth"
assert_no_leftovers
exit 0
