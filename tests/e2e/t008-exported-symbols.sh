#!/usr/bin/env bash
# Every symbol libift.a exports is ift_-prefixed (docs/architecture.md): a
# program or a test linking the core meets no name of ours outside that
# space.  nm lists the archive's defined global symbols (functions and data;
# weak ones too); a static function or an inline one of a header exports
# nothing.  Then an archive with one stray name must fail the same check.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v nm >/dev/null || skip "needs nm (binutils)"
lib=$IFT_BUILD/libift.a
[ -f "$lib" ] || fail "no $lib: make all"

# strays ARCHIVE: its exported names outside ift_, one a line
strays() {
	nm -g --defined-only "$1" | awk 'NF == 3 && $2 ~ /^[TDBRVWCGS]$/ { print $3 }' |
		grep -v '^ift_' | sort -u
}
n=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $3 ~ /^ift_/' | wc -l)
[ "$n" -gt 100 ] || fail "only $n ift_ symbols in $lib: nm read nothing?"
bad=$(strays "$lib")
[ -z "$bad" ] || fail "$(echo "$bad" | wc -l) symbols of $lib without ift_: $(echo $bad | head -c 600)"
echo "$n exported symbols, all ift_"

printf 'int ift_fine(void) { return 0; }\nint stray_name(void) { return 1; }\n' >stray.c
cc -c stray.c -o stray.o || fail "cc failed"
ar rcs stray.a stray.o || fail "ar failed"
[ "$(strays stray.a)" = stray_name ] || fail "the check missed stray_name: '$(strays stray.a)'"
exit 0
