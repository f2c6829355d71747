# discover puts a probe after endbr64 (single-stepping it costs ~14x) and
# gives FILE offsets (sym - p_vaddr + p_offset of the PT_LOAD), checked here
# against readelf on a library whose addresses differ from its offsets.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH

app_src app.c
# -Ttext-segment: addresses start at 0x40000, file offsets at 0
fake_cudart "$PWD/cet" 1 -fcf-protection=full -Wl,-Ttext-segment=0x40000
fake_cudart "$PWD/plain" 2 -fcf-protection=none -Wl,-Ttext-segment=0x40000

# check DIR PLUS: every function's offset is readelf's file offset + PLUS
check() {
	local dir=$1 plus=$2 lib delta n=0
	lib=$(realpath "$dir/libcudart.so.12")
	cc -o "app-$dir" app.c -L"$PWD/$dir" -l:libcudart.so.12 \
		-Wl,--enable-new-dtags,-rpath,"$PWD/$dir" || fail "cannot link app-$dir"
	discover -v -- "./app-$dir"
	expect_lib "$lib" DT_NEEDED 5
	# p_vaddr - p_offset of the executable PT_LOAD
	delta=$(readelf -lW "$lib" | awk '$1 == "LOAD" && / R E / { print $3, $2 }' |
		{ read -r va off && echo $(( va - off )); })
	[ -n "$delta" ] && [ "$delta" -gt 0 ] || fail "test setup: $lib text addresses equal its offsets"
	while IFS=$'\t' read -r name off; do	# IFS whitespace: the leading tab goes
		local sym want bytes
		sym=$(readelf -sW --dyn-syms "$lib" |
			awk -v n="$name" '$4 == "FUNC" && $7 != "UND" && ($8 == n || index($8, n "@@") == 1) { print $2; exit }')
		[ -n "$sym" ] || fail "readelf has no $name in $lib"
		want=$(( 0x$sym - delta + plus ))
		[ $((off)) = "$want" ] || fail "$dir: $name at $off, expected $(printf 0x%x "$want")"
		# the four bytes before the probe are endbr64 on CET, never elsewhere
		bytes=$(od -An -tx1 -j $(( 0x$sym - delta )) -N4 "$lib" | tr -d ' \n')
		if [ "$plus" = 4 ]; then
			[ "$bytes" = f30f1efa ] || fail "$name does not start with endbr64: $bytes"
		else
			[ "$bytes" != f30f1efa ] || fail "$name starts with endbr64 in a non-CET build"
		fi
		n=$((n + 1))
	done < <(awk -F'\t' -v p="$lib" '$1 != "" { cur = ($1 == p) } $1 == "" && cur' discover.out)
	[ "$n" = 5 ] || fail "$dir: $n functions checked, expected 5"
}

check cet 4
check plain 0
exit 0
