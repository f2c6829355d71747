# record exits with the command's status (128 + signal when it died of one),
# finishes the trace every time, and says clearly when the command is missing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

"$IFT" -q record -o a.trace -- sh -c 'exit 7'
[ $? = 7 ] || fail "exit status 7 not passed through"
"$IFT" info -i a.trace | grep -q 'record.exit_status 7' || fail "exit status not stored"

"$IFT" -q record -o b.trace -- sh -c 'kill -TERM $$'
[ $? = 143 ] || fail "death by SIGTERM should give 143"
"$IFT" info -i b.trace | grep -q finished || fail "trace not finished"

"$IFT" -q record -o c.trace -- true || fail "true should give 0"

err=$("$IFT" record -o d.trace -- /no/such/command 2>&1)
rc=$?
[ $rc = 127 ] || fail "a missing command should give 127, got $rc"
[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] || fail "expected one line: $err"
case $err in *"/no/such/command"*) ;; *) fail "the message should name the command: $err" ;; esac
[ -e d.trace ] || [ -e d.trace.part ] && fail "no trace should be written for a missing command"

# a command that exists but cannot be executed
printf 'not a program' >noexec; chmod 644 noexec
err=$("$IFT" record -o e.trace -- ./noexec 2>&1)
[ $? = 127 ] || fail "a non-executable command should give 127"
assert_no_leftovers
exit 0
