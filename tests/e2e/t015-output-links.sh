#!/usr/bin/env bash
# Outputs are created without following links, as root too (docs/security.md):
# export (sqlite, perfetto) and report --html write OUT.part, made with
# O_EXCL|O_NOFOLLOW, and rename it over OUT.  A link planted at OUT.part is
# refused and its target left alone; a link at OUT is replaced, not followed; a
# stale regular OUT.part of ours (a killed run's) is replaced.  Perfetto over
# an existing OUT: a damaged trace leaves OUT as it was and exits non-zero,
# whether the damage stops the output or was found at open (what was read
# is then made into OUT only where nothing is there, marked damaged).
# The links are planted by another user (nobody), as an attacker would: root's
# own links are followed, as protected_symlinks has it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root, to write as root where another user planted links"
plant() { ln -s "$1" "$2" && chown -h 65534:65534 "$2"; }

"$IFT_TOOLS/gentrace" -n 3000 >/dev/null || fail "gentrace failed"

# each output: how to write it to $1
out_sqlite()   { "$IFT" export --format sqlite -o "$1"; }
out_perfetto() { "$IFT" export --format perfetto -o "$1"; }
out_html()     { "$IFT" report --html "$1"; }

for kind in sqlite perfetto html; do
	out=$kind.out
	echo "secret of $kind" >target
	chmod 600 target
	want=$(stat -c '%i %s %Y %u:%g %a' target)

	# a link at OUT.part: refused, named, the target untouched
	plant target "$out.part"
	"out_$kind" "$out" >/dev/null 2>err && fail "$kind: a link at $out.part was not refused"
	grep -q "$out.part" err || fail "$kind: the error does not name $out.part: $(cat err)"
	[ "$(cat target)" = "secret of $kind" ] || fail "$kind: wrote through the link at $out.part"
	[ "$(stat -c '%i %s %Y %u:%g %a' target)" = "$want" ] || fail "$kind: the link's target changed"
	[ -L "$out.part" ] || fail "$kind: the link at $out.part was removed"
	[ ! -e "$out" ] || fail "$kind: $out was written though $out.part was refused"
	rm "$out.part"

	# a link at OUT: replaced by the output, not followed
	plant target "$out"
	"out_$kind" "$out" >/dev/null 2>err || fail "$kind: writing over a link at $out failed: $(cat err)"
	[ "$(cat target)" = "secret of $kind" ] || fail "$kind: wrote through the link at $out"
	[ "$(stat -c '%i %s %Y %u:%g %a' target)" = "$want" ] || fail "$kind: the link's target changed"
	[ -f "$out" ] && [ ! -L "$out" ] || fail "$kind: $out is not a regular file"
	[ ! -e "$out.part" ] || fail "$kind: $out.part left behind"

	# a stale regular OUT.part of ours is replaced
	cp "$out" good
	echo stale >"$out.part"
	rm "$out"
	"out_$kind" "$out" >/dev/null 2>err || fail "$kind: a stale $out.part stopped the output: $(cat err)"
	[ ! -e "$out.part" ] || fail "$kind: $out.part left behind"
	[ -s "$out" ] || fail "$kind: $out is empty"
	rm -f "$out" good
done

# perfetto over an existing file from a damaged trace: the old file is kept
echo '{"old": true}' >old.json
"$IFT_TOOLS/gentrace" -n 20000 --chunk-rows 500 -o bad.trace >/dev/null || fail "gentrace failed"
size=$(stat -c %s bad.trace)
# flip bytes in the middle: a chunk fails its checksum
printf 'XXXXXXXXXXXXXXXX' | dd of=bad.trace bs=1 seek=$((size / 2)) conv=notrunc status=none
"$IFT" export -i bad.trace --format perfetto -o old.json >/dev/null 2>err; rc=$?
[ $rc -ne 0 ] || fail "perfetto export of a damaged trace exited 0: $(cat err)"
[ "$(cat old.json)" = '{"old": true}' ] || fail "perfetto export of a damaged trace changed old.json ($(stat -c %s old.json) bytes)"
[ ! -e old.json.part ] || fail "old.json.part left behind"

# a trace that lost data at open (a corrupt chunk, the index cut off: read
# up to the damage, exit 1): its outputs replace nothing that is there, and
# where nothing is, they are made and say the trace was damaged
python3 - bad.trace lost.trace <<'PY' || fail "cannot cut the index off"
import struct, sys
b = open(sys.argv[1], "rb").read()
off, index = 64, None
while off + 24 <= len(b) and b[off:off + 4] == b"ISEC":
    typ, _, length = struct.unpack_from("<HHQ", b, off + 4)
    index = off if typ == 9 else index
    off += 24 + length
open(sys.argv[2], "wb").write(b[:index])
PY
for out in l.db l.json l.html; do
	case $out in
	*.db) cmd=(export --format sqlite -o $out) ;;
	*.json) cmd=(export --format perfetto -o $out) ;;
	*.html) cmd=(report --html $out) ;;
	esac
	echo old >$out
	"$IFT" "${cmd[@]}" -i lost.trace >/dev/null 2>err && fail "${cmd[*]} of a damaged trace exited 0"
	[ "$(cat $out)" = old ] || fail "${cmd[*]} of a damaged trace replaced $out: $(cat err)"
	grep -q "an output of a damaged trace replaces none" err || fail "${cmd[*]}: $(cat err)"
	[ ! -e $out.part ] || fail "$out.part left behind"
	rm $out
	"$IFT" "${cmd[@]}" -i lost.trace >/dev/null 2>err && fail "${cmd[*]} of a damaged trace exited 0"
	[ -s $out ] || fail "${cmd[*]} of a damaged trace made nothing where nothing was: $(cat err)"
done
python3 - <<'PY' || fail "an output of a damaged trace does not say so"
import json, sqlite3, sys
errs = []
if sqlite3.connect("l.db").execute("SELECT damaged FROM trace").fetchone() != (1,):
    errs.append("l.db: trace.damaged is not 1")
if json.load(open("l.json"))["otherData"].get("trace.damaged") != "1":
    errs.append("l.json: otherData has no trace.damaged 1")
if 'id="damaged"' not in open("l.html", encoding="utf-8").read():
    errs.append("l.html: no damage warning")
if errs:
    sys.exit("; ".join(errs))
PY
exit 0
