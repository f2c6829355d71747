#!/usr/bin/env bash
# query runs only SQL that reads: every kind of write, on a trace or on an
# exported database, is refused before it runs with one clear line and exit
# 1, and the database is byte for byte what it was; bad SQL is one line with
# SQLite's message, exit 1; reading PRAGMAs and EXPLAIN work.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$IFT_TOOLS/gentrace" -o g.trace -n 20000 >/dev/null || fail "gentrace failed"
"$IFT" export -i g.trace --format sqlite -o g.db 2>err || fail "export failed: $(cat err)"
before=$(md5sum <g.db)
calls=$("$IFT" query -i g.db --csv "SELECT count(*) FROM calls" | tail -1 | tr -d '\r')
[ "$calls" -gt 0 ] || fail "no calls to protect: $calls"

refused() {	# input sql
	local msg rc
	msg=$(expect_one_line_error "$IFT" query -i "$1" "$2") || fail "${msg#FAIL: }"
	[ "$msg" = "ingero-ftrace: error: only read-only SQL (SELECT/WITH/EXPLAIN) is allowed" ] ||
		fail "'$2' on $1: $msg"
	"$IFT" query -i "$1" "$2" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "'$2' on $1 exited $rc, want 1"
}
while IFS= read -r sql; do
	[ -n "$sql" ] || continue
	refused g.db "$sql"
done <<'SQL'
INSERT INTO meta VALUES ('k', 'v')
insert into calls(id) values (999999999)
UPDATE calls SET dur_ns = 0
DELETE FROM switches
DROP TABLE calls
DROP VIEW op_summary
CREATE TABLE evil(x)
CREATE TEMP TABLE evil(x)
CREATE INDEX evil ON calls(ret)
ALTER TABLE calls ADD COLUMN evil
ATTACH DATABASE 'other.db' AS other
ATTACH ':memory:' AS m
DETACH main
PRAGMA user_version = 7
PRAGMA journal_mode = DELETE
PRAGMA writable_schema = ON
REPLACE INTO meta VALUES ('k', 'v')
WITH x AS (SELECT 1) DELETE FROM calls
VACUUM
VACUUM INTO 'copy.db'
REINDEX
ANALYZE
BEGIN
SAVEPOINT s
SQL
# the same through a trace's temporary database
refused g.trace "DELETE FROM calls"
refused g.trace "ATTACH DATABASE 'other.db' AS other"
[ ! -e other.db ] && [ ! -e copy.db ] || fail "a refused statement created a file"
[ "$(md5sum <g.db)" = "$before" ] || fail "the database changed under read-only queries"

# a second statement is refused, not run
msg=$(expect_one_line_error "$IFT" query -i g.db "SELECT 1; DELETE FROM calls") || fail "${msg#FAIL: }"
[[ $msg == *"one SQL statement"* ]] || fail "two statements: $msg"

# bad SQL: SQLite's own message, one line, exit 1
msg=$(expect_one_line_error "$IFT" query -i g.db "SELEKT 1") || fail "${msg#FAIL: }"
[[ $msg == "ingero-ftrace: error: bad SQL: "*"syntax error"* ]] || fail "bad SQL: $msg"
msg=$(expect_one_line_error "$IFT" query -i g.db "SELECT nope FROM calls") || fail "${msg#FAIL: }"
[[ $msg == *"no such column: nope"* ]] || fail "bad column: $msg"
"$IFT" query -i g.db "SELECT nope" >/dev/null 2>&1
[ $? -eq 1 ] || fail "bad SQL does not exit 1"

# what reads still works
"$IFT" query -i g.db "PRAGMA table_info(calls)" | grep -q ' dur_ns ' || fail "PRAGMA table_info does not work"
"$IFT" query -i g.db "EXPLAIN QUERY PLAN SELECT * FROM calls WHERE tid = 5" | grep -q 'calls_tid' ||
	fail "EXPLAIN QUERY PLAN does not work or the tid index is not used"
"$IFT" query -i g.db "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i) FROM n" |
	tail -1 | grep -qx ' *15' || fail "a recursive CTE does not work"
[ "$(md5sum <g.db)" = "$before" ] || fail "the database changed under read-only queries"
exit 0
