#!/usr/bin/env bash
# info on a synthetic trace: the event total gentrace wrote, per-table counts
# that add up to it, "finished", and ./ingero.trace as the default input.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$("$IFT_TOOLS/gentrace" -n 5000 -s 3) || fail "gentrace failed"
read -r _ events _ bytes <<<"$gen"
[ "$events" -ge 5000 ] || fail "gentrace wrote $events events: $gen"
[ -f ingero.trace ] && [ ! -e ingero.trace.part ] || fail "gentrace left no finished ingero.trace"

"$IFT" info -i ingero.trace >info.out 2>info.err; rc=$?
[ $rc -eq 0 ] || fail "info exited $rc: $(cat info.err)"
[ ! -s info.err ] || fail "info on a good trace wrote to stderr: $(cat info.err)"

grep -q '^format: .*version 2, finished$' info.out || fail "info does not say finished: $(grep '^format' info.out)"
grep -q "^file: *ingero.trace " info.out || fail "info does not name the file"
grep -q '^cpu.count *2$' info.out || fail "info does not show the META entry cpu.count"

# the table block: "table events chunks bytes bytes/ev", one line a table, then "total"
awk '
	$1 == "table" && $2 == "events" { on = 1; next }
	on && $1 == "total" { gsub(",", "", $2); gsub(",", "", $3); print "total", $2, $3; exit }
	on && NF == 5 { gsub(",", "", $2); print $1, $2 }
' info.out >tables
[ "$(grep -c . tables)" = 9 ] || fail "expected 8 tables and a total in info, got: $(cat tables)"
# gentrace samples no stacks and no GPU: those tables are a recorder's
[ "$(awk '$1 == "profile" { print $2 }' tables)" = 0 ] || fail "info: profile rows in gentrace's trace"
[ "$(awk '$1 == "gpu_samples" { print $2 }' tables)" = 0 ] || fail "info: GPU rows in gentrace's trace"
for tb in calls switches wakeups page_allocs tasks samples; do
	n=$(awk -v t=$tb '$1 == t { print $2 }' tables)
	[ -n "$n" ] || fail "info has no line for table $tb"
	# the synthetic workload writes every table
	[ "$n" -gt 0 ] || fail "table $tb is empty"
done
sum=$(awk '$1 != "total" { s += $2 } END { print s }' tables)
read -r _ total total_bytes < <(grep '^total' tables)
[ "$sum" = "$events" ] || fail "tables add up to $sum events, gentrace wrote $events"
[ "$total" = "$events" ] || fail "info total is $total events, gentrace wrote $events"
size=$(stat -c %s ingero.trace)
[ "$total_bytes" = "$size" ] || fail "info total bytes $total_bytes, file has $size"
[ "$bytes" = "$size" ] || fail "gentrace says $bytes bytes, file has $size"

# no -i: ./ingero.trace, the same report
"$IFT" info >info-default.out 2>&1 || fail "info without -i failed: $(cat info-default.out)"
cmp -s info.out info-default.out || fail "info and info -i ingero.trace differ: $(diff info.out info-default.out)"

# elsewhere, info without -i looks for ./ingero.trace and says so
mkdir elsewhere
err=$(cd elsewhere && expect_one_line_error "$IFT" info) || fail "${err#FAIL: }"
[[ $err == *"'ingero.trace'"* ]] || fail "error does not name ingero.trace: $err"
exit 0
