# A disk that fills up mid-recording: the writer reports ENOSPC, and what it
# wrote before stays readable up to the last complete chunk.  An output that
# fills it (report --html, export --format perfetto) says so in one line, "No
# space left on device", not "Input/output error", and leaves no file.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
mkdir -p full
mount -t tmpfs -o size=256k tmpfs full || skip "cannot mount tmpfs"
trap 'umount "$PWD/full"' EXIT

out=$("$IFT_TOOLS/gentrace" -o full/t.trace -n 2000000 --chunk-rows 1000 2>&1) &&
	fail "gentrace should fail on a full disk: $out"
case $out in *"No space left"*) ;; *) fail "expected ENOSPC, got: $out" ;; esac
[ -e full/t.trace ] && fail "an unfinished file must not take the final name"
[ -s full/t.trace.part ] || fail "no partial file"

"$IFT" info -i full/t.trace.part >info.out 2>info.err || fail "info on the partial file failed: $(cat info.err)"
grep -q "recovered" info.err || fail "no recovery warning: $(cat info.err)"
total=$(awk '$1 == "total" { gsub(",", "", $2); print $2 }' info.out)
[ "${total:-0}" -gt 10000 ] || fail "too little recovered: ${total:-none} events"

# every recovered event is readable, and exactly as many as info counts
n=$("$IFT" dump -i full/t.trace.part 2>/dev/null | wc -l)
[ "$n" = "$total" ] || fail "dump gave $n events, info counted $total"

# the recovered events are the first ones written: same as a full run's prefix
# (names aside: the task rows were still in memory when the disk filled up)
"$IFT_TOOLS/gentrace" -o ref.trace -n 2000000 --chunk-rows 1000 >/dev/null
"$IFT" dump -i ref.trace --table page_allocs | head -n 2000 | awk '{ $1 = ""; print }' >ref.txt
"$IFT" dump -i full/t.trace.part --table page_allocs 2>/dev/null | head -n 2000 |
	awk '{ $1 = ""; print }' >got.txt
[ "$(wc -l <got.txt)" = 2000 ] || fail "fewer than 2000 page allocations recovered"
cmp -s ref.txt got.txt || fail "recovered page allocations differ from the reference"

# outputs onto the full disk: a page and a timeline far over 256 KiB
rm -f full/t.trace.part
"$IFT_TOOLS/gentrace" -o big.trace -n 200000 >/dev/null || fail "gentrace failed"
for out in "report --html full/r.html -i big.trace" \
	   "export --format perfetto -i big.trace -o full/p.json"; do
	# shellcheck disable=SC2086
	err=$(expect_one_line_error "$IFT" $out) || exit 1
	case $err in *"No space left on device"*) ;;
	*) fail "$out: $err" ;; esac
	[ -z "$(ls full)" ] || fail "$out left $(ls full)"
done
exit 0
