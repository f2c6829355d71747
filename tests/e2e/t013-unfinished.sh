#!/usr/bin/env bash
# A recording that was never finished (the recorder killed) leaves NAME.part:
# info on NAME points at it in one line; info and dump on NAME.part read every
# event that was flushed and warn that the trace is unfinished.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$("$IFT_TOOLS/gentrace" --unfinished -n 4000 --chunk-rows 300) || fail "gentrace failed"
read -r _ events _ bytes <<<"$gen"
[ -f ingero.trace.part ] || fail "gentrace --unfinished left no ingero.trace.part"
[ ! -e ingero.trace ] || fail "gentrace --unfinished left ingero.trace"
[ "$bytes" = "$(stat -c %s ingero.trace.part)" ] || fail "gentrace says $bytes bytes, the .part file has $(stat -c %s ingero.trace.part)"

for cmd in info dump; do
	msg=$(expect_one_line_error "$IFT" $cmd) || fail "${msg#FAIL: }"
	[[ $msg == *"cannot open 'ingero.trace'"* ]] || fail "$cmd: the error does not say it cannot open ingero.trace: $msg"
	[[ $msg == *"'ingero.trace.part'"* ]] || fail "$cmd: the error does not mention ingero.trace.part: $msg"
	msg=$(expect_one_line_error "$IFT" $cmd -i ingero.trace) || fail "${msg#FAIL: }"
	[[ $msg == *"'ingero.trace.part'"* ]] || fail "$cmd -i ingero.trace: the error does not mention the .part file: $msg"
done

"$IFT" info -i ingero.trace.part >info.out 2>info.err; rc=$?
[ $rc -eq 0 ] || fail "info -i ingero.trace.part exited $rc: $(cat info.err)"
[ "$(grep -c . info.err)" = 1 ] || fail "info on the .part file: want one warning, got: $(cat info.err)"
grep -q "^ingero-ftrace: warning: 'ingero.trace.part' is unfinished" info.err || fail "info does not warn that the trace is unfinished: $(cat info.err)"
grep -q '^format: .*UNFINISHED' info.out || fail "info does not say UNFINISHED: $(grep ^format info.out)"
grep -q '^tasks: .*rebuilt' info.out || fail "info does not say the task table was rebuilt: $(grep ^tasks info.out)"
total=$(awk '$1 == "total" { gsub(",", "", $2); print $2 }' info.out)
[ "$total" = "$events" ] || fail "info shows $total events, gentrace flushed $events"

"$IFT" dump -i ingero.trace.part >dump.txt 2>dump.err || fail "dump -i ingero.trace.part failed: $(cat dump.err)"
[ "$(wc -l <dump.txt)" = "$events" ] || fail "dump printed $(wc -l <dump.txt) events, gentrace flushed $events"
grep -q "unfinished" dump.err || fail "dump does not warn that the trace is unfinished: $(cat dump.err)"
"$IFT" dump --json -i ingero.trace.part >dump.json 2>/dev/null || fail "dump --json -i ingero.trace.part failed"
[ "$(wc -l <dump.json)" = "$events" ] || fail "dump --json printed $(wc -l <dump.json) events, gentrace flushed $events"
# the task table rebuilt from events names the threads as a finished trace would
grep -q '^ *pt_data_worker-' dump.txt || fail "dump of the .part file does not name the workers"

# report --json says so inside, not only on stderr: read in full, unfinished
"$IFT" report --json -i ingero.trace.part >report.json 2>/dev/null || fail "report --json of the .part failed"
python3 - report.json "$bytes" <<'PY' || fail "report --json of an unfinished trace has no right damage key"
import json, sys
d = json.load(open(sys.argv[1])).get("damage")
b = int(sys.argv[2])
if d != {"finished": False, "lost": False, "reason": None, "read_bytes": b, "file_bytes": b}:
    sys.exit("damage: %r" % d)
PY

# -q silences the warning, not the events
"$IFT" -q dump -i ingero.trace.part >quiet.txt 2>quiet.err || fail "-q dump failed"
[ ! -s quiet.err ] || fail "-q still warns: $(cat quiet.err)"
cmp -s quiet.txt dump.txt || fail "-q changed the events dumped"
exit 0
