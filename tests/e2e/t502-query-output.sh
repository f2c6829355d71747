#!/usr/bin/env bash
# query prints what SQLite returns, three ways that agree with each other and
# with python3's own sqlite3 on the exported database: an aligned table (one
# width per column, numbers to the right, a rule under the header), --csv
# (RFC 4180: quotes, commas, newlines) and --json (an array of objects with
# typed values).  A trace and its exported database answer alike; a query
# on a trace leaves nothing in TMPDIR; usage errors exit 2.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse CSV and JSON"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

"$IFT_TOOLS/gentrace" -o g.trace -n 50000 -s 3 >/dev/null || fail "gentrace failed"
"$IFT" export -i g.trace --format sqlite -o g.db 2>err || fail "export failed: $(cat err)"
mkdir tmp
export TMPDIR=$PWD/tmp

SQL="SELECT op, count(*) AS n, sum(dur_ns) AS total, avg(dur_ns) AS mean, NULL AS nil FROM calls GROUP BY op ORDER BY n DESC, op"
"$IFT" query -i g.trace "$SQL" >table.txt 2>err || fail "query on the trace failed: $(cat err)"
[ ! -s err ] || fail "query wrote to stderr: $(cat err)"
[ -z "$(ls -A tmp)" ] || fail "query left files in TMPDIR: $(ls -A tmp)"
"$IFT" query -i g.db "$SQL" >table-db.txt 2>err || fail "query on the database failed: $(cat err)"
cmp -s table.txt table-db.txt || fail "the trace and its database answer differently: $(diff table.txt table-db.txt)"
"$IFT" query -i g.db --csv "$SQL" >out.csv || fail "query --csv failed"
"$IFT" query -i g.db "$SQL" --json >out.json || fail "query --json (after the SQL) failed"

python3 - g.db "$SQL" table.txt out.csv out.json <<'PY' || fail "query's output does not match the database"
import csv, json, sqlite3, sys
db, sql, table, csvf, jsonf = sys.argv[1:]
cur = sqlite3.connect(db).execute(sql)
names = [d[0] for d in cur.description]
rows = cur.fetchall()
bad = []
if len(rows) < 2:
    bad.append("the query should give several rows")

# JSON: the same values, typed
j = json.load(open(jsonf))
want = [dict(zip(names, r)) for r in rows]
if j != want:
    bad.append("json %r != %r" % (j[:2], want[:2]))

# CSV: header, then the values as text; CRLF line ends; NULL empty
raw = open(csvf, newline="").read()
if not raw.endswith("\r\n"):
    bad.append("csv lines do not end in CRLF")
c = list(csv.reader(open(csvf, newline="")))
fmt = lambda v: "" if v is None else repr(v) if isinstance(v, float) else str(v)
if c[0] != names:
    bad.append("csv header %r" % c[0])
for got, r in zip(c[1:], rows):
    for g, v in zip(got, r):
        if isinstance(v, float):
            if abs(float(g) - v) > 1e-6 * abs(v):
                bad.append("csv float %r != %r" % (g, v))
        elif g != fmt(v):
            bad.append("csv %r != %r" % (g, v))
if len(c) != len(rows) + 1:
    bad.append("csv has %d lines for %d rows" % (len(c), len(rows)))

# table: header, a rule of dashes per column, then one line a row
lines = open(table).read().split("\n")[:-1]
if len(lines) != len(rows) + 2:
    bad.append("table has %d lines for %d rows" % (len(lines), len(rows)))
rule = lines[1].split("  ")
widths = [len(x) for x in rule]
if any(set(x) != {"-"} for x in rule) or len(rule) != len(names):
    bad.append("table rule %r" % lines[1])
def cells(line):
    out, pos = [], 0
    for w in widths:
        out.append(line[pos:pos + w])
        pos += w + 2
    return out
if [h.strip() for h in cells(lines[0])] != names:
    bad.append("table header %r" % lines[0])
for line, r in zip(lines[2:], rows):
    cs = cells(line)
    for k, (cell, v) in enumerate(zip(cs, r)):
        if isinstance(v, (int, float)):
            if cell != cell.rstrip() or cell.strip() == "" or cell.rstrip() != cell:
                bad.append("number not right-aligned: %r" % line)
            if not cell.startswith(" ") and len(cell.strip()) < widths[k]:
                bad.append("number not right-aligned: %r" % line)
            if isinstance(v, int) and int(cell) != v:
                bad.append("table %r != %r" % (cell, v))
        elif v is not None and cell.rstrip() != v:
            bad.append("table text %r != %r" % (cell, v))
        elif v is not None and k + 1 < len(cs) and not cell.startswith(v):
            bad.append("text not left-aligned: %r" % line)
for line in lines:
    if line != line.rstrip():
        bad.append("trailing blanks: %r" % line)
widest = max(len(fmt(r[0])) for r in rows)
if widths[0] != max(widest, len(names[0])):
    bad.append("first column %d wide, widest value %d" % (widths[0], widest))
for b in bad[:15]:
    print(b)
sys.exit(1 if bad else 0)
PY

# CSV quoting of what needs it, and JSON escapes
"$IFT" query -i g.db --csv "SELECT 'a,b' AS x, 'say \"hi\"' AS y, 'two' || char(10) || 'lines' AS z, 7 AS n" >q.csv
printf 'x,y,z,n\r\n"a,b","say ""hi""","two\nlines",7\r\n' >want.csv
cmp -s q.csv want.csv || fail "csv quoting: got $(od -c q.csv | head -5)"
"$IFT" query -i g.db --json "SELECT 'a\"b' AS s, 1.5 AS f, NULL AS z, -3 AS i" >q.json
python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); sys.exit(v != [{"s": "a\"b", "f": 1.5, "z": None, "i": -3}])' q.json ||
	fail "json values: $(cat q.json)"
# a column named in bytes that are no UTF-8: still a key a strict parser reads
"$IFT" query -i g.db --json "$(printf 'SELECT 1 AS "k\377\376", 2 AS "\303\251"')" >keys.json ||
	fail "query --json with a column name of bad UTF-8 failed"
python3 -c 'import json, sys; v = json.loads(open(sys.argv[1], "rb").read().decode()); sys.exit(v != [{"k\ufffd\ufffd": 1, "\u00e9": 2}])' keys.json ||
	fail "json keys of bad UTF-8: $(od -c keys.json | head -3)"
"$IFT" query -i g.db --json "SELECT 1 WHERE 0" >empty.json
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != [])' empty.json || fail "json of no rows: $(cat empty.json)"
# a control character in the table does not break the line
[ "$("$IFT" query -i g.db "SELECT 'a' || char(10) || 'b' AS s" | wc -l)" = 3 ] || fail "a newline in a value broke the table"

# usage errors exit 2, runtime errors 1
usage() {
	"$IFT" query "$@" >out 2>err
	rc=$?
	[ $rc -eq 2 ] || fail "'query $*' exited $rc, want 2: $(cat err)"
	[ ! -s out ] || fail "'query $*' printed to stdout"
}
usage -i g.db
usage -i g.db --json --csv "SELECT 1"
usage -i g.db "SELECT 1" "SELECT 2"
usage -i g.db --nope "SELECT 1"
msg=$(expect_one_line_error "$IFT" query -i missing.trace "SELECT 1") || fail "${msg#FAIL: }"
[[ $msg == *"'missing.trace'"* ]] || fail "missing input: the error does not name it: $msg"
exit 0
