#!/usr/bin/env bash
# The read half, byte for byte: every output tests/golden/gen.py makes from
# the fixture traces (info, report in each form, --diff, dump --json, the
# SQLite export's rows, the Perfetto export, every MCP tool's answers) is the
# one in fixtures/golden, so that a change in what a reader of a trace sees
# is never a side effect.  A small output that differs is shown as a diff
# (40 lines at most), a large one (kept as its sha256) is named.  When the
# change is meant: tests/golden/update.sh, and commit the goldens with it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 for tests/golden/gen.py"
gen=$IFT_SRC/tests/golden/gen.py
want=$IFT_FIXTURES/golden
[ -d "$want" ] || fail "no $want (tests/golden/update.sh makes it)"

python3 "$gen" "$IFT" "$IFT_FIXTURES" got >gen.log 2>&1 || fail "gen.py failed: $(tail -5 gen.log)"

# every output by name, on either side; the README is not an output
(cd "$want" && find . -type f ! -name README.md ! -name SHA256SUMS | sed 's|^\./||' | sort) >want.list
(cd got && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort) >got.list
changed=()

# diff_one NAME: a unified diff of the golden NAME and this run's, 40 lines
diff_one() {
	local name=$1
	echo "--- $name differs from the golden:"
	case $name in
	*/mcp/*.jsonl)
		# MCP transcripts: one JSON-RPC message a line; diff them readable,
		# and raw where only the bytes differ (a number's or string's spelling)
		python3 "$gen" --pretty "$want/$name" >want.pretty
		python3 "$gen" --pretty "got/$name" >got.pretty
		if ! cmp -s want.pretty got.pretty; then
			diff -u --label "golden/$name" --label "now/$name" want.pretty got.pretty | head -40
			return
		fi ;;
	esac
	diff -u --label "golden/$name" --label "now/$name" "$want/$name" "got/$name" | head -40
}

while read -r name; do
	echo "--- $name: in the golden, not made now"
	changed+=("$name")
done < <(comm -23 want.list got.list)
while read -r name; do
	echo "--- $name: made now, not in the golden"
	changed+=("$name")
done < <(comm -13 want.list got.list)
while read -r name; do
	cmp -s "$want/$name" "got/$name" && continue
	diff_one "$name"
	changed+=("$name")
done < <(comm -12 want.list got.list)

# the large outputs: "SHA256  NAME" lines
cat "$want/SHA256SUMS" >want.sums 2>/dev/null || : >want.sums
cat got/SHA256SUMS >got.sums 2>/dev/null || : >got.sums
while read -r how name; do
	case $how in
	missing) echo "--- $name (large, kept as its sha256): in the golden, not made now" ;;
	new) echo "--- $name (large, kept as its sha256): made now, not in the golden" ;;
	*) echo "--- $name (large, kept as its sha256) differs from the golden; to read it,"
	   echo "    tests/golden/gen.py --full ./ingero-ftrace fixtures DIR (with the goldens' binary too, to diff)" ;;
	esac
	changed+=("$name")
done < <(awk 'NR == FNR { w[$2] = $1; next } { g[$2] = $1 }
	END {
		for (n in w) print (!(n in g) ? "missing" : w[n] != g[n] ? "changed" : "same"), n
		for (n in g) if (!(n in w)) print "new", n
	}' want.sums got.sums | grep -v '^same ' | sort -k2)

if [ ${#changed[@]} -gt 0 ]; then
	list="${changed[*]:0:8}"
	[ ${#changed[@]} -le 8 ] || list="$list and $((${#changed[@]} - 8)) more"
	fail "${#changed[@]} outputs differ from fixtures/golden: $list; if the change is meant, run tests/golden/update.sh and commit the goldens with it"
fi
n=$(($(wc -l <got.list) + $(wc -l <got.sums)))
echo "$n outputs as in fixtures/golden"
exit 0
