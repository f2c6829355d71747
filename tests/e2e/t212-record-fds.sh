# No descriptor of the recorder reaches the traced command: not the ring
# buffers (libtracefs opens trace_pipe_raw without O_CLOEXEC), the trace
# file, pipes or perf events.  The command and a child it forks report their
# pids and wait; the test reads their /proc/PID/fd while the recorder holds
# its rings open.  They get stdin, stdout and stderr, as under sudo.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

mkfifo ready
exec 3<>ready		# read-write: the open does not wait for a writer
"$IFT" -q record -o fds.trace -- sh -c 'sleep 600 & echo "$$ $!" >ready; wait' 3<&- &
rec=$!
kid=
cleanup() {
	[ -n "$kid" ] && kill "$kid" 2>/dev/null
	wait "$rec" 2>/dev/null
	return 0
}
trap cleanup EXIT

read -r -t 120 -u 3 cmd kid || fail "the command never started"
[ -n "$kid" ] || fail "no pid of the command's child"

# the recorder itself has its rings open: otherwise this test proves nothing
ls -l "/proc/$rec/fd" >rec.fds
grep -q trace_pipe_raw rec.fds || fail "the recorder holds no trace_pipe_raw: $(cat rec.fds)"

for p in "$cmd" "$kid"; do
	for fd in /proc/$p/fd/*; do
		n=${fd##*/}
		case $n in 0|1|2) continue ;; esac
		echo "pid $p fd $n -> $(readlink "$fd")"
	done
done >leaked
[ -s leaked ] && fail "descriptors of the recorder reached the command:
$(cat leaked)"

kill "$kid"
kid=
wait "$rec"
rc=$?
[ $rc = 0 ] || fail "record exited $rc"
"$IFT" info -i fds.trace | grep -q finished || fail "trace not finished"
assert_no_leftover_of $rec
exit 0
