#!/usr/bin/env bash
# record gives the shell back before its probes are gone: a helper disables
# and deletes them, holding a lock on the run's instance directory until the
# instance is removed.  A locked instance, and the uprobe group of its name,
# are no leftover whatever became of the pid in the name: check does not name
# them, and neither check --cleanup nor a new record touches them.  A helper
# killed half-way drops the lock, and what it leaves is a leftover like a
# killed run's, which check names and --cleanup removes.  A real helper runs
# in a session of its own with /dev/null for stdio, and leaves nothing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
T=/sys/kernel/tracing
CUDART=$IFT_CUDART
locker=

unplant() {
	[ -n "$locker" ] && kill -KILL "$locker" 2>/dev/null && wait "$locker" 2>/dev/null
	remove_planted "$group"
}
trap unplant EXIT

# check counts every teardown in progress: the helpers of the runs before
# this test's (seconds each, more for isolated probes' perf events) first
for d in "$T"/instances/ingero_*; do
	[ -d "$d" ] && await_teardown "$d"
done

# what a finished run leaves to its helper, under the exited recorder's pid
plant_run
has_group() { grep -q "^[pr]:$group/" "$T/uprobe_events"; }

# the helper at work: a process of this test holding the instance's lock
mkfifo go
( exec 8<"$T/instances/$group" && flock -x 8 && read -r _ <go ) &
locker=$!
for i in $(seq 200); do
	flock -n -s "$T/instances/$group" true 2>/dev/null || break
	[ $i = 200 ] && fail "the locker never took the lock"
	sleep 0.05
done

"$IFT" check >busy.out || fail "check exited $? during a teardown: $(cat busy.out)"
grep -q "$group" busy.out && fail "check takes a teardown for a leftover: $(grep "$group" busy.out)"
grep -q "^OK  *teardowns: 1 finished run's probes being removed" busy.out ||
	fail "check does not tell the teardown: $(grep -i teardown busy.out)"
"$IFT" check --cleanup >busy-clean.out || fail "check --cleanup exited $?: $(cat busy-clean.out)"
[ -d "$T/instances/$group" ] || fail "check --cleanup removed an instance being torn down"
[ -r "$CUDART" ] && ! has_group && fail "check --cleanup removed the group of an instance being torn down"
"$IFT" -q record -o next.trace -- true || fail "record failed beside a teardown"
[ -d "$T/instances/$group" ] || fail "record removed an instance being torn down"

# killed half-way: a leftover, named and removed
{ kill -KILL "$locker" && wait "$locker"; } 2>/dev/null
locker=
"$IFT" check >left.out
grep -q "^WARN  leftover instance $group of dead run $dead" left.out ||
	fail "check does not name what a killed helper left: $(grep -i leftover left.out)"
"$IFT" check --cleanup >clean.out || fail "check --cleanup exited $?: $(cat clean.out)"
[ -e "$T/instances/$group" ] && fail "the instance survived --cleanup: $(cat clean.out)"
has_group && fail "the group survived --cleanup: $(cat clean.out)"

# a real one: caught at work (its probes take seconds to disable here),
# then awaited; a machine whose teardown beats us to it five times over
# has nothing to show
caught=
for try in 1 2 3 4 5; do
	"$IFT" -q record -o real.trace -- true &
	rp=$!
	wait $rp || fail "record exited $?"
	d=$T/instances/ingero_$rp
	helper=$(helper_of "$d")
	if [ -n "$helper" ]; then
		caught=$helper
		# record returns once the helper has left its session and stdio
		fd1=$(readlink /proc/$helper/fd/1)
		sid=$(ps -o sid= -p "$helper" | tr -d ' ')
		if [ -d /proc/$helper ]; then
			[ "$fd1" = /dev/null ] || fail "helper $helper kept the recorder's stdout: $fd1"
			[ "$sid" = "$helper" ] || fail "helper $helper is in session $sid, not one of its own"
		fi
		"$IFT" check >real.out
		grep -q "ingero_$rp" real.out && fail "check takes a real teardown for a leftover: $(grep "ingero_$rp" real.out)"
	fi
	assert_no_leftover_of $rp
	[ -n "$caught" ] && break
done
if [ -n "$caught" ]; then
	echo "    helper $caught caught at work"
else
	echo "    no helper caught at work: teardowns here finish at once"
fi
assert_no_leftovers
exit 0
