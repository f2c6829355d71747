#!/usr/bin/env bash
# The record tests' leftover check can fail: a uprobe group and an instance
# named as a recorder names them (ingero_<pid>) whose recorder is dead make
# assert_no_leftovers fail the test; once they are gone it passes.
. "$IFT_SRC/tests/e2e/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
tfs=/sys/kernel/tracing

# a pid that is dead: a process of ours, reaped
true &
dead=$!
wait $dead
kill -0 $dead 2>/dev/null && skip "pid $dead was reused at once"
inst=$tfs/instances/ingero_$dead
cleanup() {
	[ -d "$inst" ] && rmdir "$inst"
	grep -q "^p:ingero_${dead}/" $tfs/uprobe_events &&
		echo "-:ingero_${dead}/leftover" >>$tfs/uprobe_events
}
trap cleanup EXIT

# the checks run in a subshell, since a failing check exits its shell
(assert_no_leftovers) >/dev/null || fail "no leftover, yet assert_no_leftovers failed"

mkdir "$inst" || fail "cannot create instance $inst"
out=$(assert_no_leftovers) && fail "an instance of dead run $dead was not seen: $out"
[[ $out == *"instance $inst was left behind"* ]] || fail "unexpected message: $out"
rmdir "$inst"

# any file offset is accepted at definition; the probe is never enabled
echo "p:ingero_${dead}/leftover /bin/true:0x0" >>$tfs/uprobe_events ||
	fail "cannot define a uprobe"
out=$(assert_no_leftovers) && fail "uprobes of dead run $dead were not seen: $out"
[[ $out == *"uprobes of dead run $dead"* ]] || fail "unexpected message: $out"
# and a caller that goes on after it still stops there
out=$(assert_no_leftovers; echo "went on") && fail "assert_no_leftovers returned, the test went on: $out"
[[ $out != *"went on"* ]] || fail "the test went on after a failed leftover check"
cleanup
trap - EXIT

(assert_no_leftovers) >/dev/null || fail "assert_no_leftovers fails after the leftovers are gone"
exit 0
