#!/usr/bin/env bash
# info and dump on input that is not a good trace: never a crash; a one-line
# error and a non-zero exit, or, for a trace cut short, what could be read and
# a warning saying how much.  Usage errors exit 2.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to find a chunk in the trace"

gen=$("$IFT_TOOLS/gentrace" -n 6000 --chunk-rows 500) || fail "gentrace failed"
read -r _ events _ <<<"$gen"
size=$(stat -c %s ingero.trace)

# run CMD...: sets rc, and out/err files; a signal (a crash) fails the test
run() {
	"$@" >out 2>err
	rc=$?
	[ $rc -lt 128 ] || fail "crashed (exit $rc): $*: $(head -c 2000 err)"
}

# a trace is refused with one line on stderr naming it, nothing on stdout
refused() {	# path
	local cmd msg
	for cmd in info dump "top --once"; do
		# shellcheck disable=SC2086
		run "$IFT" $cmd -i "$1"
		[ $rc -ne 0 ] || fail "$cmd -i '$1' succeeded"
		[ ! -s out ] || fail "$cmd -i '$1' printed to stdout: $(head -3 out)"
		# shellcheck disable=SC2086
		msg=$(expect_one_line_error "$IFT" $cmd -i "$1") || fail "${msg#FAIL: }"
		[[ $msg == "ingero-ftrace: error: "*"'$1'"* ]] ||
			fail "$cmd -i '$1': the error does not name the file: $msg"
	done
}

refused missing.trace
: >empty.trace
refused empty.trace
printf 'this is not a trace\n' >text.trace
refused text.trace
refused /bin/true
mkdir dir.trace
refused dir.trace
head -c 40 ingero.trace >header-cut.trace	# cut inside the file header
refused header-cut.trace
# the specific reasons, as the user sees them
[[ $(expect_one_line_error "$IFT" info -i missing.trace) == *"No such file"* ]] || fail "missing file: no ENOENT message"
[[ $(expect_one_line_error "$IFT" info -i empty.trace) == *empty* ]] || fail "empty file: message does not say empty"
[[ $(expect_one_line_error "$IFT" info -i text.trace) == *"not an ingero-ftrace trace"* ]] || fail "text file: message does not say it is not a trace"
# top: neither the trace nor a recording of it; a window it cannot show
[[ $(expect_one_line_error "$IFT" top -i missing.trace) == *"nor is a recording writing 'missing.trace.part'"* ]] ||
	fail "top -i missing.trace: the error does not say no recording writes it"
# top on FILE.N.trace that are no pieces of one recording, or no trace
mkdir pieces && cp ingero.trace pieces/x.1.trace && cp ingero.trace pieces/x.2.trace
[[ $(expect_one_line_error "$IFT" top --once -i pieces/x.trace) == *"not the pieces of one recording"* ]] ||
	fail "top on two copies of one trace as pieces: no error saying they are not pieces"
echo junk >pieces/x.1.trace
[[ $(expect_one_line_error "$IFT" top --once -i pieces/x.trace) == *"'pieces/x.1.trace': not an ingero-ftrace trace"* ]] ||
	fail "top on a junk piece: the error does not name it"
# record's pieces and flight recorder: a usage error each, before anything runs
for bad in "--rotate 5" "--rotate 10x" "--rotate 1K" "--max-size 1K" "--trigger x>1s" \
	   "--keep-last 5s --rotate 1s" "--keep-last 0.5s" "--keep-last 5s --trigger cudaMalloc" \
	   "--keep-last 5s --trigger cudaMallocc>1s"; do
	# shellcheck disable=SC2086
	run "$IFT" record $bad -o never.trace -- true
	last=$(printf '%s\n' $bad | grep -- '^--' | tail -1)
	[ $rc = 2 ] && [ ! -e never.trace ] && head -1 err | grep -q -- "$last" ||
		fail "record $bad: exit $rc, not a usage error naming $last: $(cat err)"
done
# snapshot signals nothing that is no recorder keeping the last events
[[ $(expect_one_line_error "$IFT" snapshot $$) == *"is no \`ingero-ftrace record --keep-last'"* ]] ||
	fail "snapshot of this shell: the error does not say it is no recorder"
run "$IFT" snapshot 0
[ $rc = 2 ] || fail "snapshot 0: exit $rc, not a usage error"
for bad in "--window 0" "--window 5x" "--interval 1ms" "--at -1s"; do
	# shellcheck disable=SC2086
	run "$IFT" top --once $bad -i ingero.trace
	[ $rc = 2 ] || fail "top $bad: exit $rc, not a usage error: $(cat err)"
done

# what is not a regular file is refused at once, never waited on: a FIFO
# would block an open for a writer, and reading /dev/zero never ends
mkfifo fifo.trace
mkdir fifodir && mkfifo fifodir/x.trace
for args in "info -i fifo.trace" "dump -i fifo.trace" "report -i fifo.trace" \
	    "top --once -i fifo.trace" "top -i fifo.trace" \
	    "report -i fifodir" "query -i fifo.trace SELECT" "info -i /dev/zero"; do
	# shellcheck disable=SC2086
	msg=$(timeout 20 "$IFT" $args 2>&1 >/dev/null)
	rc=$?
	[ $rc != 124 ] || fail "$args: still waiting after 20 s"
	[ $rc != 0 ] && [ "$(printf '%s\n' "$msg" | grep -c .)" = 1 ] &&
		[[ $msg == *"not a regular file"* ]] || fail "$args: exit $rc, $msg"
done
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t012","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_trace_stats","arguments":{}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"ping"}' | timeout 20 "$IFT" mcp -i fifo.trace >mcp.out 2>mcp.err
rc=$?
[ $rc != 124 ] || fail "mcp -i FIFO: still waiting after 20 s"
grep -q '"id":2,.*not a regular file' mcp.out && grep -q '"id":3,"result"' mcp.out ||
	fail "mcp -i FIFO: the tool call did not say so, or ping went unanswered: $(cat mcp.out mcp.err)"

# cut in the middle: what comes before the cut is read, with a warning
head -c $((size / 2)) ingero.trace >cut.trace
for cmd in info dump; do
	run "$IFT" $cmd -i cut.trace
	[ $rc -eq 0 ] || fail "$cmd on a trace cut short exited $rc: $(cat err)"
	[ "$(grep -c . err)" = 1 ] || fail "$cmd on a trace cut short: want one warning, got: $(cat err)"
	grep -q "^ingero-ftrace: warning: 'cut.trace' .*recovered [0-9]* of $((size / 2)) bytes" err ||
		fail "$cmd on a trace cut short: the warning does not say how much was recovered: $(cat err)"
done
# report --json says so inside, with what it read; a whole trace has no key
"$IFT" report --json -i cut.trace >cut.json 2>/dev/null || fail "report --json of a cut trace failed"
"$IFT" report --json -i ingero.trace >whole.json || fail "report --json failed"
python3 - cut.json whole.json $((size / 2)) <<'PY' || fail "report --json: the damage key is wrong"
import json, sys
d = json.load(open(sys.argv[1])).get("damage")
if not d or d["finished"] or d["lost"] or d["reason"] != "trace file is cut short" or \
        d["file_bytes"] != int(sys.argv[3]) or not 0 < d["read_bytes"] < d["file_bytes"]:
    sys.exit("cut: damage %r" % d)
if "damage" in json.load(open(sys.argv[2])):
    sys.exit("a whole trace has a damage key")
PY
run "$IFT" info -i cut.trace
grep -q '^format: .*DAMAGED' out || fail "info on a trace cut short does not say DAMAGED: $(grep ^format out)"
grep -q '^recovered: *[0-9]* of '$((size / 2))' bytes' out || fail "info on a trace cut short does not say what it recovered"
recovered=$(awk '$1 == "total" { gsub(",", "", $2); print $2 }' out)
[ "$recovered" -gt 0 ] && [ "$recovered" -lt "$events" ] ||
	fail "info on a trace cut in half shows $recovered of $events events"
run "$IFT" dump -i cut.trace
[ "$(wc -l <out)" = "$recovered" ] || fail "dump of a trace cut short printed $(wc -l <out) events, info says $recovered"

# one byte flipped in the middle of the largest chunk's payload
python3 - ingero.trace flip.trace <<'PY' || fail "cannot make a trace with a flipped byte"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, best = 64, None
while off + 24 <= len(b) and b[off:off + 4] == b"ISEC":
    typ, _, length = struct.unpack_from("<HHQ", b, off + 4)
    if typ == 4 and (best is None or length > best[1]):
        best = (off, length)
    off += 24 + length
if best is None:
    sys.exit("no chunk")
b[best[0] + 24 + best[1] // 2] ^= 0x55
open(sys.argv[2], "wb").write(b)
PY
run "$IFT" dump -i flip.trace
[ $rc -ne 0 ] || fail "dump of a trace with a corrupt chunk succeeded"
msg=$(expect_one_line_error "$IFT" dump -i flip.trace) || fail "${msg#FAIL: }"
[[ $msg == *"'flip.trace'"*checksum* ]] || fail "dump of a corrupt chunk: the error does not say checksum: $msg"
# info reads no chunk without --verify: it must not crash, and anything it
# prints on stderr is one line
run "$IFT" info -i flip.trace
[ "$(grep -c . err)" -le 1 ] || fail "info on a corrupt chunk: more than one line on stderr: $(cat err)"
# --verify reads every section and stops at the bad one: what it read is
# shown, and the damage is an error (exit 1, one line), not a warning
run "$IFT" info --verify -i flip.trace
[ $rc -eq 1 ] || fail "info --verify on a corrupt chunk exited $rc, want 1: $(cat err)"
[ "$(grep -c . err)" = 1 ] || fail "info --verify on a corrupt chunk: want one line on stderr, got: $(cat err)"
grep -q "^ingero-ftrace: error: 'flip.trace' .*checksum.*recovered [0-9]* of $size bytes" err ||
	fail "info --verify does not report the corrupt chunk as an error: $(cat err)"
grep -q '^format: .*DAMAGED' out || fail "info --verify on a corrupt chunk does not say DAMAGED"
# the good file verifies
run "$IFT" info --verify -i ingero.trace
[ $rc -eq 0 ] && [ ! -s err ] || fail "info --verify on a good trace exited $rc: $(cat err)"

# a chunk whose checksums hold but whose first column is in an encoding no
# build knows (0xee): --verify decodes every chunk and says which
"$IFT_TOOLS/gentrace" -o plain.trace -n 3000 --chunk-rows 500 --level -1 >/dev/null ||
	fail "gentrace --level -1 failed"
python3 - plain.trace enc.trace <<'PY' || fail "cannot make a trace with an unknown column encoding"
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
def varint(at):
    v = shift = 0
    while True:
        x = b[at]; at += 1
        v |= (x & 0x7f) << shift; shift += 7
        if not x & 0x80:
            return v, at
off = 64
while b[off:off + 4] == b"ISEC":
    typ, _, length = struct.unpack_from("<HHQ", b, off + 4)
    if typ == 4:
        break
    off += 24 + length
else:
    sys.exit("no chunk")
at = off + 24
for _ in range(4):                  # table, rows, ts_min, ts_span
    _, at = varint(at)
if b[at] != 0:
    sys.exit("the chunk is compressed (codec %d)" % b[at])
_, at = varint(at + 1)              # body size
_, at = varint(at)                  # the first column's id
b[at] = 0xee                        # its encoding
struct.pack_into("<I", b, off + 16, zlib.crc32(b[off + 24:off + 24 + length]))
struct.pack_into("<I", b, off + 20, zlib.crc32(b[off:off + 20]))
open(sys.argv[2], "wb").write(b)
PY
run "$IFT" info -i enc.trace
[ $rc -eq 0 ] || fail "info without --verify read a chunk: $(cat err)"
run "$IFT" info --verify -i enc.trace
[ $rc -eq 1 ] && [ "$(grep -c . err)" = 1 ] && grep -q "'enc.trace': chunk 0 of table .*corrupt" err ||
	fail "info --verify on an unknown column encoding exited $rc: $(cat err)"
[ -s out ] || fail "info --verify printed nothing of what it could read"

# report on a file whose first chunk is corrupt and whose index is gone (the
# reader scans and stops there, discarding the rest): the report of what
# could be read is printed, and the lost data makes it exit 1
python3 - ingero.trace lost.trace <<'PY' || fail "cannot make a trace with a corrupt first chunk"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, first, index = 64, None, None
while off + 24 <= len(b) and b[off:off + 4] == b"ISEC":
    typ, _, length = struct.unpack_from("<HHQ", b, off + 4)
    if typ == 4 and first is None:
        first = (off, length)
    if typ == 9:
        index = off
    off += 24 + length
if first is None or index is None:
    sys.exit("no chunk or no index")
b[first[0] + 24 + first[1] // 2] ^= 0x55
open(sys.argv[2], "wb").write(b[:index])
PY
for cmd in report "info --verify" dump; do
	run "$IFT" $cmd -i lost.trace
	[ $rc -eq 1 ] || fail "$cmd on a trace that lost its data after a corrupt chunk exited $rc, want 1: $(cat err)"
	[ "$(grep -c . err)" = 1 ] || fail "$cmd on a damaged trace: want one line on stderr, got: $(cat err)"
	grep -q "^ingero-ftrace: error: 'lost.trace' .*checksum.*recovered [0-9]* of $(stat -c %s lost.trace) bytes" err ||
		fail "$cmd on a damaged trace: the error does not say what was lost: $(cat err)"
done
run "$IFT" report -i lost.trace
[ -s out ] || fail "report on a damaged trace printed nothing of what it could read"

# usage errors exit 2
usage() {	# args...
	run "$IFT" "$@"
	[ $rc -eq 2 ] || fail "'ingero-ftrace $*' exited $rc, want 2: $(cat err)"
	[ -s err ] || fail "'ingero-ftrace $*': no message on stderr"
	[ ! -s out ] || fail "'ingero-ftrace $*' printed to stdout"
}
usage no-such-command
usage
usage --no-such-option info
usage info --no-such-option
usage dump --no-such-option
usage dump -x
usage info unexpected-argument
usage dump --table no_such_table
usage dump --table calls,,nope
usage info -i
exit 0
