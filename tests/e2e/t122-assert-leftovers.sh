#!/usr/bin/env bash
# The record tests' leftover check can fail: a uprobe group and an instance
# named as a recorder names them (ingero_<pid>) whose recorder is dead make
# assert_no_leftovers fail the test; runs already there when the test began,
# and live ones, are not this test's leftovers.  The check reads a tracefs
# tree of the test's own: a real leftover would fail other runs' checks on a
# shared machine, and a starting recorder removes dead runs' leftovers.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir -p tfs/instances/ingero_1234567 tfs/instances/other_1
: >tfs/uprobe_events
# the pid of a dead process: one of ours, reaped
true &
before=$!
wait $before
echo "p:ingero_${before}/old /bin/true:0x0" >tfs/uprobe_events
export IFT_TRACEFS=$PWD/tfs
. "$IFT_SRC/tests/e2e/lib-record.sh"

# what was there at the start is not this test's: no failure
(assert_no_leftovers) >/dev/null || fail "runs from before the test count as leftovers"

true &
dead=$!
wait $dead
[ $dead != $before ] || skip "pid $dead was reused at once"
sleep 300 &
live=$!
trap 'kill $live 2>/dev/null' EXIT

# a live run's instance and probes are no leftovers
mkdir tfs/instances/ingero_$live
echo "p:ingero_${live}/x /bin/true:0x0" >>tfs/uprobe_events
(assert_no_leftovers) >/dev/null || fail "a live run counts as a leftover"

mkdir tfs/instances/ingero_$dead
out=$(assert_no_leftovers) && fail "an instance of dead run $dead was not seen: $out"
[[ $out == *"instance $PWD/tfs/instances/ingero_$dead was left behind"* ]] || fail "unexpected message: $out"
rmdir tfs/instances/ingero_$dead

echo "r:ingero_${dead}/leftover /bin/true:0x0" >>tfs/uprobe_events
out=$(assert_no_leftovers) && fail "uprobes of dead run $dead were not seen: $out"
[[ $out == *"uprobes of dead run $dead"* ]] || fail "unexpected message: $out"
# and a caller that goes on after it stops there, as the record tests do
out=$(assert_no_leftovers; echo "went on")
[[ $out != *"went on"* ]] || fail "the test went on after a failed leftover check: $out"
sed -i "/ingero_${dead}\//d" tfs/uprobe_events

(assert_no_leftovers) >/dev/null || fail "assert_no_leftovers fails after the leftovers are gone"
exit 0
