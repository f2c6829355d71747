# Errors a user meets: no permission, a missing --cuda-lib, bad options.
# Each gives one clear line and a non-zero exit, and leaves nothing behind.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

# not root: setpriv drops to nobody
err=$(cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "$IFT" record -o /tmp/x.trace -- true 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "an unprivileged record should fail cleanly (rc $rc)"
[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] || fail "expected one line: $err"
case $err in *root*|*ermission*) ;; *) fail "the message should say permission/root: $err" ;; esac

err=$("$IFT" record --cuda-lib /no/such/libcudart.so -o y.trace -- true 2>&1)
rc=$?
[ $rc = 1 ] || fail "a missing --cuda-lib should exit 1, got $rc"
[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] || fail "expected one line: $err"
case $err in *"/no/such/libcudart.so"*) ;; *) fail "the message should name the library: $err" ;; esac

# -o naming what is not a regular file: refused before anything runs, and
# left as it was (the trace is renamed over its path)
mkfifo fifo.trace
mknod dev.trace c 1 7 || fail "cannot make a device node"
for out in fifo.trace dev.trace; do
	was=$(stat -c %F $out)
	err=$(timeout 60 "$IFT" -q record -o $out -- touch ran 2>&1)
	rc=$?
	[ $rc = 1 ] || fail "record -o $out should exit 1, got $rc: $err"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] && [[ $err == *"cannot write '$out': not a regular file"* ]] ||
		fail "record -o $out: expected one line saying so: $err"
	[ "$(stat -c %F $out)" = "$was" ] && [ ! -e $out.part ] && [ ! -e ran ] ||
		fail "record -o $out: the $was became a $(stat -c %F $out), or it ran, or left a .part"
done

"$IFT" record 2>/dev/null; [ $? = 2 ] || fail "record without a command is a usage error"
# pids: digits only, 1 to INT32_MAX, the same in every command (4294967297
# once became pid 1 in record, and " 5" or "+5" passed as 5)
for p in notapid 0 -3 +5 " 5" 5x 2147483648 4294967297 ""; do
	for cmd in "record -p" "report -i none.trace --pid" "discover -p"; do
		out=$("$IFT" $cmd "$p" -- true 2>&1)
		rc=$?
		[ $rc = 2 ] && [[ $out == *"bad pid '$p'"* ]] ||
			fail "'$cmd \"$p\"': not a usage error naming it (exit $rc): $out"
	done
done
"$IFT" record -p 999999999 2>/dev/null; [ $? = 1 ] || fail "a dead pid is an error"
assert_no_leftovers
exit 0
