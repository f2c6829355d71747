# Errors a user meets: no permission, a missing --cuda-lib, bad options.
# Each gives one clear line and a non-zero exit, and leaves nothing behind.
. "$IFT_SRC/tests/e2e/lib.sh"
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

"$IFT" record 2>/dev/null; [ $? = 2 ] || fail "record without a command is a usage error"
"$IFT" record -p notapid -- true 2>/dev/null; [ $? = 2 ] || fail "a bad pid is a usage error"
"$IFT" record -p 999999999 2>/dev/null; [ $? = 1 ] || fail "a dead pid is an error"
assert_no_leftovers
exit 0
