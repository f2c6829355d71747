#!/usr/bin/env bash
# A uprobe event cannot be deleted while anyone has one of its files open
# (EBUSY): a tool that reads the events' formats holds one for a moment.  The
# helper that tears a finished run down deletes the rest of the group and
# tries the held one again until it is let go (5 s), rather than leaving it
# behind for the next record to clean up.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
T=$IFT_TRACEFS
[ -r "$IFT_CUDART" ] || skip "no CUDA runtime to probe: $IFT_CUDART"
rp=
plant=

finish() {
	exec 9<&- 2>/dev/null
	[ -n "$plant" ] && echo "-:$plant/a" >>"$T/uprobe_events" 2>/dev/null
	[ -p go ] && [ -n "$rp" ] && kill -0 "$rp" 2>/dev/null && echo >go
}
trap finish EXIT

# does this kernel refuse to delete an event whose file is open?  (Linux 6.7
# and later delete it and fail the open file's reads instead.)
plant=ift_t125_$$
echo "p:$plant/a $(readlink -f /bin/true):0x0" >>"$T/uprobe_events" || fail "cannot plant a probe"
exec 9<"$T/events/$plant/a/format"
blocks=0
echo "-:$plant/a" >>"$T/uprobe_events" 2>/dev/null || blocks=1
exec 9<&-
[ $blocks = 0 ] || echo "-:$plant/a" >>"$T/uprobe_events" || fail "cannot delete the planted probe $plant/a"

mkfifo go
"$IFT" -q record --no-isolate --cuda-lib "$IFT_CUDART" -o run.trace -- \
	sh -c 'read -r _ <go' >rec.out 2>rec.err &
rp=$!
group=ingero_$rp
# the probes are in place once the instance is on
until [ "$(cat "$T/instances/$group/tracing_on" 2>/dev/null)" = 1 ] &&
	grep -q "^[pr]:$group/" "$T/uprobe_events"; do
	kill -0 $rp 2>/dev/null || fail "record ended before tracing: $(cat rec.err)"
	sleep 0.02
done
n=$(grep -c "^[pr]:$group/" "$T/uprobe_events")
[ "$n" -ge 2 ] || fail "only $n probe(s) of $IFT_CUDART: nothing else to delete beside the held one"
held=$(sed -n "s/^[pr]:$group\/\([^ ]*\) .*/\1/p" "$T/uprobe_events" | head -1)
exec 9<"$T/events/$group/$held/format" || fail "cannot open the format of $group/$held"
echo >go
wait $rp || fail "record exited $?: $(cat rec.err)"
rp=

inst=$T/instances/$group
if [ $blocks = 1 ]; then
	# the helper at the held one: every other probe of the group gone,
	# the instance still locked
	while left=$(grep -c "^[pr]:$group/" "$T/uprobe_events"); [ "$left" -gt 1 ]; do
		flock -n -s "$inst" true 2>/dev/null && break	# teardown over
		sleep 0.01
	done
	[ "$left" = 1 ] || fail "$left probes of $group left once the teardown ended, the held one was 1"
	grep -q "^[pr]:$group/$held " "$T/uprobe_events" ||
		fail "the held probe $held was deleted while its format was open"
else
	skip_part "$(uname -r) deletes an event whose format is open: no teardown waits for it"
fi
exec 9<&-
await_teardown "$inst"
grep -q "^[pr]:$group/" "$T/uprobe_events" &&
	fail "probe $held, held open for a moment, was left behind: $(grep "^[pr]:$group/" "$T/uprobe_events")"
assert_no_leftovers
exit 0
