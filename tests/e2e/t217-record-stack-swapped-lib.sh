#!/usr/bin/env bash
# Under sudo, --stack reads the traced program's libraries with the user's
# permissions: a program (as nobody) loads its own copy of a library, then
# replaces that path with a link to a file only root may read (the same
# code, its function named secretForRoot) and calls the probed
# function.  The recorder must not name a frame from the file the user could
# not read.  The control, run as root, does name it: the swap is real.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
py=/usr/bin/python3
[ -x $py ] || { [ "${CI:-}" = true ] && fail "needs python3"; skip "needs python3"; }
command -v cc >/dev/null || fail "needs a C compiler"
chmod 777 . && mkdir -m 777 u && mkdir -m 700 private
src=$IFT_SRC/contrib/bench/probe-tiny.c
cc -O0 -fPIC -shared -o libcudart-tiny.so "$src" || fail "cc failed"
# a name as long as cudaSetDevice's: the same layout, whatever the linker
# aligns (a longer one moved aarch64's .text by 16 bytes, and the pc named
# another function of the swapped file)
cc -O0 -fPIC -shared -DcudaSetDevice=secretForRoot -o private/libcudart-tiny.so "$src" ||
	fail "cc failed"
a=$(readelf -Ws libcudart-tiny.so | awk '$8 == "cudaSetDevice" { print $2; exit }')
b=$(readelf -Ws private/libcudart-tiny.so | awk '$8 == "secretForRoot" { print $2; exit }')
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the two libraries' layouts differ (0x$a, 0x$b): the test proves nothing"
cat >swap.py <<'PY'
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
os.unlink(sys.argv[1])
os.symlink(sys.argv[2], sys.argv[1])
for _ in range(20):
    lib.cudaSetDevice(0)
PY

# run LABEL [ENV...]: records swap.py; the frames of its cudaSetDevice calls in LABEL.frames
run() {
	local label=$1
	shift
	cp libcudart-tiny.so u/libcudart-tiny.so && chmod 666 u/libcudart-tiny.so
	env -u SUDO_UID -u SUDO_GID -u SUDO_USER "$@" "$IFT" record -q --no-host \
		--stack=cudaSetDevice --cuda-lib "$PWD/u/libcudart-tiny.so" -o $label.trace -- \
		$py "$PWD/swap.py" "$PWD/u/libcudart-tiny.so" "$PWD/private/libcudart-tiny.so" \
		>/dev/null 2>$label.err || fail "$label: record failed: $(tail -3 $label.err)"
	"$IFT" dump --json -i $label.trace --table calls >$label.frames || fail "$label: dump failed"
	[ "$(grep -c '"event": *"cudaSetDevice"' $label.frames)" = 20 ] ||
		fail "$label: expected 20 calls: $(head -3 $label.frames)"
	grep -q '"stack"' $label.frames || fail "$label: no stacks"
	rm -f u/libcudart-tiny.so
}
run root
grep -q secretForRoot root.frames ||
	fail "control: as root the swapped file's name was not read; the test proves nothing"
run sudo SUDO_UID="$(id -u nobody)" SUDO_GID="$(id -g nobody)" SUDO_USER=nobody
grep -q secretForRoot sudo.frames &&
	fail "under sudo the recorder read a file only root may read: $(grep -m1 secretForRoot sudo.frames)"
assert_no_leftovers
exit 0
