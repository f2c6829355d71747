#!/usr/bin/env bash
# record --reader: the rings spliced (each page copied once) and, where the
# kernel maps them (mmap of trace_pipe_raw, Linux 6.10 and later), mapped
# and parsed in place.  Either way every call the program made is in the
# trace, with its arguments and return code, inside the interval the
# program measured around it, and nothing is lost or left unread.  The
# uprobes go through the tracefs rings (--no-isolate), so the calls are
# what the reader read: thousands of them, many pages, mapped the page
# the kernel is still filling read more than once.  Spliced by default; auto
# maps where the kernel can; mmap refuses, in one line, where it cannot.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_cuda_seq
# this kernel's release: 6.10 brought the mapping
rel=$(uname -r)
maps=$(echo "$rel" | awk -F. '{ print ($1 > 6 || ($1 == 6 && $2 + 0 >= 10)) ? 1 : 0 }')

for rd in default splice mmap auto; do
	if [ $rd = mmap ] && [ $maps = 0 ]; then
		"$IFT" -q record --no-isolate --reader=mmap -o $rd.trace -- ./cuda-seq 10 \
			>/dev/null 2>$rd.err && fail "--reader=mmap recorded on $rel, which maps no ring"
		[ "$(wc -l <$rd.err)" = 1 ] && grep -q 'reader=mmap.*6\.10' $rd.err ||
			fail "--reader=mmap on $rel: not one line naming 6.10: $(cat $rd.err)"
		[ -e $rd.trace ] && fail "--reader=mmap left a trace behind its refusal"
		continue
	fi
	# 6 calls a round, ~70 bytes of ring each: some 300 pages
	"$IFT" -q record --no-isolate $([ $rd = default ] || echo --reader=$rd) -o $rd.trace \
		-- ./cuda-seq 3000 >$rd.tsv 2>$rd.err || fail "record --reader=$rd failed: $(cat $rd.err)"
	"$IFT" info -i $rd.trace >$rd.info || fail "info of $rd.trace failed"
	want=$rd
	[ $rd = default ] && want=splice
	[ $rd = auto ] && want=$([ $maps = 1 ] && echo mmap || echo splice)
	got=$(awk '$1 == "ring.reader" { print $2 }' $rd.info)
	[ "$got" = "$want" ] || fail "--reader=$rd on $rel read the rings by '$got', not $want"
	lost=$(awk '/^lost events:/ { print $3 }' $rd.info)
	[ "$lost" = 0 ] || fail "--reader=$rd lost $lost events (dropped, or left unread)"
	"$IFT" dump --json -i $rd.trace --table calls >$rd.json || fail "dump of $rd.trace failed"
	python3 "$IFT_SRC/tests/e2e/callsmatch.py" $rd.tsv $rd.json ||
		fail "--reader=$rd: the recorded calls differ from the program's own log"
done
assert_no_leftovers
exit 0
