#!/usr/bin/env bash
# export --format sqlite on bad input and to bad places: a one-line error and
# exit 1, never a crash, and no database (nor .part) left behind; a trace cut
# short exports what info recovers of it, with the reader's warning; usage
# errors exit 2.  Parquet follows no link planted at a partition's level.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to damage a trace and read the database"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

"$IFT_TOOLS/gentrace" -o g.trace -n 40000 --chunk-rows 500 >/dev/null || fail "gentrace failed"
size=$(stat -c %s g.trace)

run() {
	"$@" >out 2>err
	rc=$?
	[ $rc -lt 128 ] || fail "crashed (exit $rc): $*: $(head -c 2000 err)"
}

# refused INPUT: exit 1, one line naming the input, nothing written
refused() {	# trace
	local msg
	rm -f x.db x.db.part
	msg=$(expect_one_line_error "$IFT" export -i "$1" --format sqlite -o x.db) || fail "${msg#FAIL: }"
	[[ $msg == "ingero-ftrace: error: "*"'$1'"* ]] || fail "export of '$1': the error does not name it: $msg"
	run "$IFT" export -i "$1" --format sqlite -o x.db
	[ $rc -eq 1 ] || fail "export of '$1' exited $rc, want 1"
	[ ! -e x.db ] && [ ! -e x.db.part ] || fail "export of '$1' left a database behind"
}
refused missing.trace
: >empty.trace
refused empty.trace
printf 'not a trace\n' >text.trace
refused text.trace

# a flipped byte in a chunk: the checksum fails when export reads it
python3 - g.trace flip.trace <<'PY' || fail "cannot flip a byte"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, best = 64, None
while off + 24 <= len(b) and b[off:off + 4] == b"ISEC":
    typ, _, length = struct.unpack_from("<HHQ", b, off + 4)
    if typ == 4 and (best is None or length > best[1]):
        best = (off, length)
    off += 24 + length
b[best[0] + 24 + best[1] // 2] ^= 0x55
open(sys.argv[2], "wb").write(b)
PY
refused flip.trace
msg=$(expect_one_line_error "$IFT" export -i flip.trace --format sqlite -o x.db)
[[ $msg == *checksum* ]] || fail "export of a corrupt chunk does not say checksum: $msg"

# cut in half: a warning, and every event the reader recovers
head -c $((size / 2)) g.trace >cut.trace
run "$IFT" export -i cut.trace --format sqlite -o cut.db
[ $rc -eq 0 ] || fail "export of a trace cut short exited $rc: $(cat err)"
[ "$(grep -c . err)" = 1 ] && grep -q "warning: 'cut.trace' .*recovered" err ||
	fail "export of a trace cut short: want the reader's one warning, got: $(cat err)"
recovered=$("$IFT" info -i cut.trace 2>/dev/null | awk '$1 == "total" { gsub(",", "", $2); print $2 }')
rows=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM events").fetchone()[0])' cut.db)
[ "$rows" = "$recovered" ] || fail "export of a trace cut short has $rows events, info recovers $recovered"
damaged=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT damaged FROM trace").fetchone()[0])' cut.db)
[ "$damaged" = 1 ] || fail "the trace row of a cut trace does not say damaged"

# outputs that cannot be written
msg=$(expect_one_line_error "$IFT" export -i g.trace --format sqlite -o no/such/dir/x.db) || fail "${msg#FAIL: }"
[[ $msg == *"no/such/dir/x.db"*"No such file or directory"* ]] || fail "unwritable output: unclear error: $msg"
# a read-only directory: root writes anywhere, so root tries as nobody
mkdir ro
chmod 0555 ro
as=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 755 . && chmod 644 g.trace
fi
if [ "$(id -u)" = 0 ] && [ ${#as[@]} = 0 ]; then
	skip_part "read-only directory: root, and no setpriv to run as nobody"
elif "${as[@]}" touch ro/probe 2>/dev/null; then
	rm -f ro/probe
	skip_part "read-only directory: $("${as[@]}" id -un) can write into a 0555 directory"
else
	msg=$(expect_one_line_error "${as[@]}" "$IFT" export -i "$PWD/g.trace" --format sqlite -o ro/x.db) ||
		fail "${msg#FAIL: }"
	[[ $msg == *"ro/x.db"*"Permission denied"* ]] || fail "read-only directory: unclear error: $msg"
	[ -z "$(ls -A ro)" ] || fail "export into a read-only directory left: $(ls -A ro)"
fi
# a disk that fills up: SQLite's own error, and nothing left
if ! [ -w /dev/full ]; then
	skip_part "disk full: no writable /dev/full"
else
	ln -s /dev/full full.db.part 2>/dev/null
	run "$IFT" export -i g.trace --format sqlite -o full.db
	[ $rc -eq 1 ] || fail "export onto a full disk exited $rc"
	[ "$(grep -c . err)" = 1 ] || fail "export onto a full disk: want one line, got: $(cat err)"
	[ ! -e full.db ] || fail "export onto a full disk left full.db"
fi

# what is not a regular file at -o is refused, and stays what it was: the
# database is renamed over its path, and a FIFO, a device (the review
# replaced /dev/full) or a directory must not be replaced
mkfifo fifo.db && mkdir dir.db
outs="fifo.db dir.db"
if [ "$(id -u)" = 0 ] && mknod full2.db c 1 7 2>/dev/null; then
	outs="$outs full2.db"
else
	skip_part "a device at -o: mknod needs root"
fi
for n in $outs; do
	was=$(stat -c %F $n)
	run timeout 20 "$IFT" export -i g.trace --format sqlite -o $n
	[ $rc -eq 1 ] || fail "export onto $n exited $rc: $(cat err)"
	[ "$(grep -c . err)" = 1 ] && grep -qE "cannot write '$n': (not a regular file|Is a directory)" err ||
		fail "export onto $n: want one line saying so, got: $(cat err)"
	[ "$(stat -c %F $n)" = "$was" ] || fail "export replaced the $was $n with a $(stat -c %F $n)"
	[ ! -e $n.part ] || fail "export onto $n left $n.part"
done

# usage errors exit 2
for args in "--format sqlite" "--format nope -o x.db" "-o x.db" "--format sqlite -o x.db extra"; do
	run "$IFT" export -i g.trace $args
	[ $rc -eq 2 ] || fail "'export $args' exited $rc, want 2: $(cat err)"
done

# parquet: a link planted at DIR/host=NAME (or its rank=R) is not followed:
# one line naming it, and nothing written where it points
host=$("$IFT" info -i g.trace | awk '$1 == "host.name" { print $2 }')
mkdir -p victim pq/host=x
ln -s "$PWD/victim" "pq/host=$host"
ln -s "$PWD/victim" "pq/host=x/rank=-1"
run "$IFT" export -i g.trace --format parquet -o pq
[ $rc -eq 1 ] && [ "$(grep -c . err)" = 1 ] && grep -q "'pq/host=$host': .*link there is not followed" err ||
	fail "parquet into a planted link at host=: exit $rc: $(cat err)"
[ -z "$(ls victim)" ] || fail "parquet followed the link at host=: $(ls victim | head -3)"
rm "pq/host=$host" && mv pq/host=x "pq/host=$host"
run "$IFT" export -i g.trace --format parquet -o pq
[ $rc -eq 1 ] && grep -q "'pq/host=$host/rank=-1': .*link there is not followed" err ||
	fail "parquet into a planted link at rank=: exit $rc: $(cat err)"
[ -z "$(ls victim)" ] || fail "parquet followed the link at rank=: $(ls victim | head -3)"
exit 0
