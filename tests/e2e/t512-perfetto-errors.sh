#!/usr/bin/env bash
# export --format perfetto when things go wrong: no trace, a file that is
# not a trace, an output that cannot be created or written (one line on
# stderr, exit 1); a trace cut short (a killed recorder's .part file) exports
# what it holds, by the same rules.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"

msg=$(expect_one_line_error "$IFT" export --format perfetto -i missing.trace) || fail "${msg#FAIL: }"
[[ $msg == *"missing.trace"* ]] || fail "the error does not name the trace: $msg"
echo "not a trace" >junk.trace
msg=$(expect_one_line_error "$IFT" export --format perfetto -i junk.trace -o junk.json) || fail "${msg#FAIL: }"

"$IFT_TOOLS/gentrace" -n 5000 >/dev/null || fail "gentrace failed"
msg=$(expect_one_line_error "$IFT" export --format perfetto -o no/such/dir/out.json) || fail "${msg#FAIL: }"
[[ $msg == *"no/such/dir/out.json"* ]] || fail "the error does not name the output: $msg"
"$IFT" export --format perfetto --format2 x >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "a bad option exited $rc, not 2"

if [ -c /dev/full ] && [ -w /dev/full ]; then
	msg=$(expect_one_line_error "$IFT" export --format perfetto -o /dev/full) || fail "${msg#FAIL: }"
	[[ $msg == *"No space left on device"* ]] || fail "export -o /dev/full: $msg"
	"$IFT" export --format perfetto >/dev/full 2>err; rc=$?
	[ $rc -eq 1 ] || fail "export > /dev/full exited $rc"
	[ "$(grep -c . err)" = 1 ] || fail "export > /dev/full: not one line on stderr: $(cat err)"
	grep -q "^ingero-ftrace: error: cannot write output: No space left on device" err ||
		fail "export > /dev/full: $(cat err)"
fi

"$IFT_TOOLS/gentrace" --unfinished -n 8000 --chunk-rows 500 -o cut.trace >/dev/null || fail "gentrace failed"
[ -f cut.trace.part ] || fail "gentrace --unfinished left no cut.trace.part"
"$IFT" export -i cut.trace.part --format perfetto -o cut.json 2>err; rc=$?
[ $rc -eq 0 ] || fail "export of an unfinished trace exited $rc: $(cat err)"
python3 "$IFT_SRC/tests/e2e/perfetto_check.py" "$IFT" cut.trace.part cut.json ||
	fail "the export of an unfinished trace breaks the rules (above)"
exit 0
