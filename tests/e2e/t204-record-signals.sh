# Ctrl-C and SIGTERM stop a recording cleanly: the command is stopped, the
# trace is finished and nothing is left in tracefs.  A recorder killed with
# SIGKILL leaves a readable .part file, and the next record cleans up after it.
# Signals are sent once the command runs (it says so), and only the pids the
# test started are looked at or killed.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

# await FILE: until the command wrote its pid into FILE (a minute at most)
await_pid() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$1" ] && return 0
		kill -0 $rec 2>/dev/null || fail "the recorder exited before its command started"
		sleep 0.1
	done
	fail "the command did not start within a minute"
}

cmd_pids=()
trap 'for p in "${cmd_pids[@]}"; do kill -KILL $p 2>/dev/null; done' EXIT

for sig in INT TERM; do
	rm -f started
	"$IFT" -q record -o $sig.trace -- sh -c 'echo $$ >started; exec sleep 30' &
	rec=$!
	await_pid started
	cmd=$(cat started)
	cmd_pids+=($cmd)
	kill -$sig $rec
	wait $rec
	rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc = $want ] || fail "SIG$sig: exit $rc, expected $want (the command's death)"
	"$IFT" info -i $sig.trace | grep -q finished || fail "SIG$sig: trace not finished"
	kill -0 $cmd 2>/dev/null && fail "SIG$sig: the command (pid $cmd) survived"
	assert_no_leftover_of $rec
done

# SIGKILL: nothing can clean up, but what was flushed is readable
rm -f started
"$IFT" -q record -o k.trace -- sh -c 'echo $$ >started; while :; do sleep 0.01; done' &
rec=$!
await_pid started
cmd=$(cat started)
cmd_pids+=($cmd)
# until the recorder has flushed switches of the command into the .part file
for ((i = 0; i < 600; i++)); do
	"$IFT" info -i k.trace.part 2>/dev/null | awk '$1 == "switches" { gsub(",", "", $2); exit !($2 > 0) }' && break
	kill -0 $rec 2>/dev/null || fail "the recorder exited by itself"
	sleep 0.1
done
kill -KILL $rec
wait $rec 2>/dev/null
kill $cmd 2>/dev/null	# the orphaned command, by its pid; its sleeps end by themselves
[ -s k.trace.part ] || fail "no partial trace after SIGKILL"
"$IFT" info -i k.trace.part >info.out 2>info.err || fail "partial trace unreadable: $(cat info.err)"
awk '$1 == "switches" { gsub(",", "", $2); f = $2 > 0 } END { exit !f }' info.out ||
	fail "no events in the partial trace: $(cat info.out)"
grep -q "ingero_${rec}/" /sys/kernel/tracing/uprobe_events ||
	[ -d /sys/kernel/tracing/instances/ingero_$rec ] ||
	fail "expected the killed run's instance to remain until the next run"
"$IFT" -q record -o next.trace -- true || fail "the next run failed"
assert_no_leftover_of $rec
exit 0
