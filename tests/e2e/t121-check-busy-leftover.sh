# A killed run's instance that a live process still holds open (an orphaned
# command reading its trace_pipe_raw) cannot be removed yet (EBUSY).  It
# must not stop a new record (names are unique per run); check names the
# process that holds it, and once that process is gone check --cleanup
# removes it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
T=/sys/kernel/tracing
holder=

unplant() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	remove_planted "$group"
}
trap unplant EXIT

# what a run killed with SIGKILL leaves
plant_run

# the holder: a process of this test with the instance's trace_pipe_raw open
sleep 600 9<"$T/instances/$group/per_cpu/cpu0/trace_pipe_raw" &
holder=$!
for i in $(seq 200); do
	case $(readlink "/proc/$holder/fd/9" 2>/dev/null) in
	*/instances/$group/per_cpu/cpu0/trace_pipe_raw) break ;;
	esac
	[ $i = 200 ] && fail "the holder never opened trace_pipe_raw"
	sleep 0.05
done
rmdir "$T/instances/$group" 2>/dev/null && fail "the instance is not busy: this test proves nothing"

# a new record goes on, and says what it could not remove
"$IFT" record -o next.trace -- true >rec.out 2>rec.err || fail "record exited $? with a busy leftover: $(cat rec.err)"
grep -q "$group" rec.err || fail "record does not say it left $group: $(cat rec.err)"
[ -d "$T/instances/$group" ] || fail "the busy instance was removed: this test proves nothing"
grep -q "^[pr]:$group/" "$T/uprobe_events" && fail "the group of the busy instance was kept"

# check names the holder, and does not fail for it
"$IFT" check >check.out || fail "check exited $? for a busy leftover: $(cat check.out)"
grep -q "^WARN  leftover instance $group of dead run $dead.*held open by pid $holder (sleep)" check.out ||
	fail "check does not name the holder $holder: $(grep leftover check.out)"
"$IFT" check --json >check.json || fail "check --json exited $?"
jq -e --arg w "held open by pid $holder (sleep)" '[.checks[] | select(.id == "leftover") | .what | contains($w)] | any' \
	check.json >/dev/null || fail "the JSON does not name the holder: $(cat check.json)"
"$IFT" check --cleanup >busy.out || fail "check --cleanup exited $? for a busy leftover: $(cat busy.out)"
[ -d "$T/instances/$group" ] || fail "--cleanup removed a busy instance?"
grep -q "held open by pid $holder" busy.out || fail "--cleanup does not say what holds it: $(cat busy.out)"

# the holder gone, it goes
kill "$holder"
wait "$holder" 2>/dev/null
holder=
"$IFT" check --cleanup >clean.out || fail "check --cleanup exited $?: $(cat clean.out)"
[ -e "$T/instances/$group" ] && fail "the instance survived --cleanup once free: $(cat clean.out)"
grep -q "^OK  *leftovers: none" clean.out || fail "leftovers after --cleanup: $(cat clean.out)"
exit 0
