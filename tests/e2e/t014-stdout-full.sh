#!/usr/bin/env bash
# Output that cannot be written is an error, not silence: `dump > /dev/full`
# (a full disk under `dump > file') exits non-zero and says so.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -c /dev/full ] && [ -w /dev/full ] || skip "needs a writable /dev/full"

"$IFT_TOOLS/gentrace" -n 20000 >/dev/null || fail "gentrace failed"

check_full() {	# args...
	local rc
	"$IFT" "$@" >/dev/full 2>err
	rc=$?
	[ $rc -lt 128 ] || fail "'$*' > /dev/full crashed (exit $rc): $(head -c 2000 err)"
	[ $rc -ne 0 ] || fail "'$*' > /dev/full exited 0"
	grep -q '^ingero-ftrace: error: .*No space left on device' err ||
		fail "'$*' > /dev/full: no error naming the failed write: $(cat err)"
	# the last word is about the output, whatever came before
	tail -n 1 err | grep -q '^ingero-ftrace: error: cannot write output' ||
		fail "'$*' > /dev/full: the last message is not about the output: $(cat err)"
}

check_full dump
check_full dump --json
check_full dump --table switches
check_full info
# output small enough to stay in the stdio buffer until exit
"$IFT_TOOLS/gentrace" -n 20 -o small.trace >/dev/null || fail "gentrace failed"
check_full dump -i small.trace
check_full --help
check_full --version
exit 0
