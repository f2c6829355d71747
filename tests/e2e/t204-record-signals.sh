# Ctrl-C and SIGTERM stop a recording cleanly: the command is stopped, the
# trace is finished and nothing is left in tracefs.  A recorder killed with
# SIGKILL leaves a readable .part file, and the next record cleans up after it.
. "$IFT_SRC/tests/e2e/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

for sig in INT TERM; do
	"$IFT" -q record -o $sig.trace -- sleep 30 &
	rec=$!
	sleep 1.5
	kill -$sig $rec
	wait $rec
	rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc = $want ] || fail "SIG$sig: exit $rc, expected $want (the command's death)"
	"$IFT" info -i $sig.trace | grep -q finished || fail "SIG$sig: trace not finished"
	pgrep -f "sleep 30" >/dev/null && pkill -f "sleep 30" && fail "SIG$sig: the command survived"
	assert_no_leftover_of $rec
done

# SIGKILL: nothing can clean up, but what was flushed is readable
"$IFT" -q record -o k.trace -- sh -c 'while :; do sleep 0.01; done' &
rec=$!
sleep 2.5
kill -KILL $rec
wait $rec 2>/dev/null
pkill -f 'while :; do sleep 0.01' || true
[ -s k.trace.part ] || fail "no partial trace after SIGKILL"
"$IFT" info -i k.trace.part >info.out 2>info.err || fail "partial trace unreadable: $(cat info.err)"
grep -q switches info.out || fail "no events in the partial trace"
grep -q "ingero_${rec}/" /sys/kernel/tracing/uprobe_events ||
	[ -d /sys/kernel/tracing/instances/ingero_$rec ] ||
	fail "expected the killed run's instance to remain until the next run"
"$IFT" -q record -o next.trace -- true || fail "the next run failed"
assert_no_leftover_of $rec
exit 0
