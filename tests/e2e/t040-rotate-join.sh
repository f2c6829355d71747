# The pieces of one recording read as one trace: gentrace writes the same
# 200,000 events once as one file and once rotated every 30,000 into
# pieces (as record --rotate does).  report on the pieces, given in any
# order or as their directory, must say what report on the one file says:
# the same text, and the same JSON but for trace.pieces.  Pieces that are
# not one recording, each once and none missing, are refused with one line.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || skip "needs python3 to compare JSON"

"$IFT_TOOLS/gentrace" -n 200000 -o one.trace >/dev/null || fail "gentrace failed"
mkdir run
"$IFT_TOOLS/gentrace" -n 200000 --rotate 30000 -o run/r.trace >/dev/null ||
	fail "gentrace --rotate failed"
n=$(ls run | wc -l)
[ "$n" = 7 ] || fail "gentrace --rotate wrote $n pieces, not 7: $(ls run)"
for i in $(seq 1 7); do
	"$IFT" info -i run/r.$i.trace >info.$i 2>&1 || fail "piece $i does not open alone: $(cat info.$i)"
	grep -q "^record.piece *$i\$" info.$i || fail "piece $i does not say so: $(grep piece info.$i)"
done

"$IFT" report --json -i one.trace >one.json || fail "report on the one file failed"
"$IFT" report -i one.trace >one.txt || fail "report on the one file failed"
"$IFT" report --json -i run/r.5.trace -i run/r.1.trace -i run/r.7.trace -i run/r.2.trace \
	-i run/r.6.trace -i run/r.3.trace -i run/r.4.trace >shuffled.json ||
	fail "report on the pieces failed"
"$IFT" report --json -i run >dir.json || fail "report -i DIR on the pieces failed"
"$IFT" report -i run >dir.txt || fail "report -i DIR on the pieces failed"
cmp -s one.txt dir.txt || fail "the pieces' text report differs from the one file's: $(diff one.txt dir.txt | head)"
python3 - one.json shuffled.json dir.json <<'PY' || fail "the pieces' JSON differs from the one file's (above)"
import json, sys
one, *runs = (json.load(open(p)) for p in sys.argv[1:])
assert one["trace"]["pieces"] == 1, one["trace"]["pieces"]
for p, r in zip(sys.argv[2:], runs):
    if r["trace"]["pieces"] != 7:
        sys.exit("%s: trace.pieces %s, not 7" % (p, r["trace"]["pieces"]))
    r["trace"]["pieces"] = 1
    if r != one:
        keys = [k for k in one if one[k] != r.get(k)]
        sys.exit("%s differs from the one file's in %s" % (p, keys))
PY

# not one recording: a piece missing, one twice, and one of another run
refused() {
	local msg
	msg=$(expect_one_line_error "$IFT" report "$@") || fail "${msg#FAIL: }"
	[[ $msg == *"not the pieces of one recording"* ]] || fail "report $*: $msg"
}
refused -i run/r.1.trace -i run/r.3.trace
refused -i run/r.1.trace -i run/r.2.trace -i run/r.2.trace
"$IFT_TOOLS/gentrace" -s 2 -n 40000 --rotate 30000 -o other.trace >/dev/null ||
	fail "gentrace --rotate failed"
# the same run id (gentrace's), but another recording's strings
refused -i run/r.1.trace -i other.2.trace
