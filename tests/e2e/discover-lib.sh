# Sourced by the tests/e2e/t10x-discover-*.sh tests (after lib.sh): fake CUDA
# libraries and programs built with cc, and helpers to read the output of
# `ingero-ftrace discover': one line per library, tab-separated
#   PATH  API  FOUND_BY  NFUNCS  BUILD_ID
# then, with -v, TAB NAME TAB 0xOFFSET per function.

command -v cc >/dev/null 2>&1 || skip "needs cc to build fake CUDA libraries"
command -v readelf >/dev/null 2>&1 || skip "needs readelf (binutils)"

# fake_src FILE: C source of a libcudart with a few catalog functions
fake_src() {
	cat >"$1" <<'SRC'
#include <stddef.h>
int cudaMalloc(void **p, size_t n) { *p = (void *)n; return 0; }
int cudaMemcpyAsync(void *d, const void *s, size_t n, int k, void *st)
{ return d == s ? (int)n : k + (st != 0); }
int cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, int k, void *st)
{ return d == s ? (int)n + 1 : k + (st != 0); }
int cudaStreamSynchronize(void *s) { return s != 0; }
int cudaLaunchKernel(const void *f) { return f != 0; }
int ift_fake_id(void) { return FAKE_ID; }
SRC
}

# fake_cudart DIR [ID [CC FLAGS...]]: DIR/libcudart.so.12 with that soname.
# ID makes copies differ (their own build-id and inode).
fake_cudart() {
	local dir=$1 id=${2:-1}
	shift 2 2>/dev/null || shift $#
	mkdir -p "$dir"
	[ -f fake-cudart.c ] || fake_src fake-cudart.c
	cc -shared -fPIC -O1 -DFAKE_ID="$id" "$@" -Wl,-soname,libcudart.so.12 \
		-o "$dir/libcudart.so.12" fake-cudart.c || fail "cannot build $dir/libcudart.so.12"
}

# app_src FILE: a program that calls cudaMalloc from the library it is linked to
app_src() {
	cat >"$1" <<'SRC'
int cudaMalloc(void **p, unsigned long n);
int main(void) { void *p; return cudaMalloc(&p, 1); }
SRC
}

# discover ARGS...: run the discover command, output in discover.out
discover() {
	"$IFT" discover "$@" >discover.out 2>discover.err ||
		fail "discover $* failed: $(cat discover.err)"
}

# lib_line PATH: the line of discover.out for PATH (links resolved), or nothing
lib_line() {
	local real
	real=$(realpath "$1") || return 0
	awk -F'\t' -v p="$real" '$1 == p' discover.out
}

# expect_lib PATH FOUND_BY [NFUNCS]
expect_lib() {
	local line
	line=$(lib_line "$1")
	[ -n "$line" ] || fail "$1 not discovered; got:$(printf '\n%s' "$(grep -v '^	' discover.out)")"
	[ "$(printf '%s\n' "$line" | cut -f3)" = "$2" ] ||
		fail "$1 found by '$(printf '%s\n' "$line" | cut -f3)', expected '$2'"
	[ "$(printf '%s\n' "$line" | cut -f2)" = runtime ] || fail "$1 is not a runtime library: $line"
	if [ $# -ge 3 ]; then
		[ "$(printf '%s\n' "$line" | cut -f4)" = "$3" ] ||
			fail "$1 has $(printf '%s\n' "$line" | cut -f4) functions, expected $3"
	fi
}

# expect_no_lib PATH
expect_no_lib() {
	[ -z "$(lib_line "$1")" ] || fail "$1 discovered, but must not be: $(lib_line "$1")"
}

# ldso_path PROGRAM NAME: the file the real ld.so loads for NAME when PROGRAM
# runs (LD_DEBUG=libs; ldd would get $ORIGIN wrong for a program reached
# through a symlink), or "not found"
ldso_path() {
	local out
	out=$(LD_DEBUG=libs "$1" 2>&1 >/dev/null |
		awk -v n="/$2" '/calling init: / { p = $NF; if (substr(p, length(p) - length(n) + 1) == n) { print p; exit } }')
	[ -n "$out" ] && realpath "$out" || echo "not found"
}

# expect_as_ldso PROGRAM DIR: discover found DIR/libcudart.so.12 for PROGRAM
# by DT_NEEDED, and the real ld.so resolves libcudart.so.12 to that same file
expect_as_ldso() {
	local want
	want=$(realpath "$2/libcudart.so.12")
	[ "$(ldso_path "$1" libcudart.so.12)" = "$want" ] ||
		fail "test setup: ld.so resolves libcudart.so.12 of $1 to $(ldso_path "$1" libcudart.so.12), not $want"
	expect_lib "$want" DT_NEEDED 5
}
