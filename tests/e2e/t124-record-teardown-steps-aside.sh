#!/usr/bin/env bash
# A helper's teardown steps aside for a set-up.  Each probe it unregisters
# holds the kernel's event mutex for a grace period, and a record's set-up
# needs that mutex for each probe it writes: a second record used to wait
# out the whole teardown (9 s for 104 probes).  A record holds the set-up
# lock (flock on tracefs's instances directory) until its probes are armed;
# a helper closes its probes' perf events one at a time, and before each
# waits while anyone holds that lock.
# Here the test holds the lock as a set-up would, lets a run end, and sees
# its helper keep every descriptor for as long as it holds it; let go, the
# teardown finishes and leaves nothing.  The helper that closed them all at
# once (close_range) had closed them before its first look.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
T=/sys/kernel/tracing

# nobody else's teardown in the way
for d in "$T"/instances/ingero_*; do
	[ -d "$d" ] && await_teardown "$d"
done

mkfifo go
# the runtime named: a machine with no CUDA in the usual places gives a
# run with no probes, whose helper has nothing to step aside between
"$IFT" -q record --cuda-lib "$IFT_CUDART" -o run.trace -- sh -c 'echo >up; read x <go' 2>rec.err &
rp=$!
# the command runs: record's set-up is done and its lock let go
for i in $(seq 1 600); do
	[ -e up ] && break
	kill -0 $rp 2>/dev/null || fail "record ended before its command ran: $(cat rec.err)"
	sleep 0.1
done
[ -e up ] || fail "the command did not start in 60 s"
exec 9<"$T/instances"
flock -x 9 || fail "cannot take the set-up lock"
go=${EPOCHREALTIME/./}
echo >go
wait $rp || fail "record exited $?: $(cat rec.err)"
d=$T/instances/ingero_$rp
helper=$(helper_of "$d")
if [ -z "$helper" ]; then
	flock -u 9
	fail "no helper holds $d after record returned (the teardown is the helper's)"
fi
# the helper's perf events into n (record --isolate, the default: one per
# probe and task), and which into ev: only their closes unregister probes,
# and only they step aside; its rings' descriptors go when they go (a
# 4-CPU guest's helper closed them while the lock was held)
fds() { ev=$(ls -l "/proc/$helper/fd" 2>/dev/null | awk '/perf_event/ { print $9 }'); n=$(echo $ev | wc -w); }
ls -l "/proc/$helper/fd" >fd0.txt 2>&1	# kept with a failure: what it held
fds
n0=$n
ev0=$ev
[ "$n0" -gt 10 ] || { flock -u 9; fail "the helper holds $n0 perf events, not its probes'"; }
# as long as the lock is held, none goes: watched for 2 s from the first
# look, as record returned (one close takes tens of ms, and the old helper
# closed them all in one call), well inside the 10 s a helper steps aside
# in all from then
first=${EPOCHREALTIME/./}
while now=${EPOCHREALTIME/./}; [ $((now - first)) -lt 2000000 ]; do
	fds
	if [ "$n" -lt "$n0" ]; then
		flock -u 9
		fail "the helper closed $((n0 - n)) of its $n0 perf events while a set-up held the lock," \
			"$(((now - go) / 1000)) ms after the command ended, $(((now - first) / 1000)) ms after the first look"
	fi
	sleep 0.1
done

[ -d "$d" ] || { flock -u 9; fail "the instance went while a set-up held the lock"; }
flock -u 9
exec 9<&-
echo "    helper $helper held its $n0 perf events for $(((now - first) / 1000)) ms under the set-up lock," \
	"from $(((first - go) / 1000)) ms after the command ended"
# let go, it finishes
assert_no_leftover_of $rp
assert_no_leftovers
exit 0
