#!/usr/bin/env bash
# A trace reads alike on either machine: the arm64 build, under qemu-user,
# makes of every fixture trace (x86-64's, and those recorded in arm64
# guests) the same info and report outputs, byte for byte (text, --json,
# --per-process --threads, --html, --diff), as the goldens of t030, which
# the x86-64 build makes.  (The exports and MCP are the same code over the
# same model; gen.py makes them too slowly under emulation for every run.)
# On an arm64 machine t030 itself is this test.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(uname -m)" = x86_64 ] || skip "the arm64 build is emulated on x86-64 only; natively t030 is this test"
command -v python3 >/dev/null || skip "needs python3 for tests/golden/gen.py"
a64=$IFT_SRC/build-aarch64/ingero-ftrace
emu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static)
if [ ! -x "$a64" ] || [ -z "$emu" ]; then
	[ "${CI:-}" = true ] && fail "no $a64 or qemu-aarch64 (make check builds and installs both)"
	skip "needs build-aarch64/ingero-ftrace (make ARCH=aarch64) and qemu-user"
fi
want=$IFT_FIXTURES/golden
printf '#!/bin/sh\nQEMU_LD_PREFIX=/ exec %s %s "$@"\n' "$emu" "$a64" >ift-aarch64
chmod +x ift-aarch64
python3 "$IFT_SRC/tests/golden/gen.py" --reports ./ift-aarch64 "$IFT_FIXTURES" got >gen.log 2>&1 ||
	fail "gen.py with the arm64 build failed: $(tail -5 gen.log)"
./ift-aarch64 --version >/dev/null || fail "the arm64 build does not run under $emu"
file -L "$a64" 2>/dev/null | grep -q 'ARM aarch64' || [ "$(od -An -tx1 -j18 -N2 "$a64" | tr -d ' ')" = b700 ] ||
	fail "$a64 is not an aarch64 executable"

# every output the arm64 build made is the golden's: a file, or its sum
n=0 bad=0
while IFS= read -r name; do
	n=$((n + 1))
	if ! cmp -s "got/$name" "$want/$name"; then
		bad=$((bad + 1))
		echo "--- $name differs from the golden (x86-64):"
		diff -u --label "golden/$name" --label "aarch64/$name" "$want/$name" "got/$name" | head -20
	fi
done < <(cd got && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort)
if [ -f got/SHA256SUMS ]; then
	while read -r sum name; do
		n=$((n + 1))
		grep -qx "$sum  $name" "$want/SHA256SUMS" ||
			{ bad=$((bad + 1)); echo "--- $name (large) differs from the golden's sum"; }
	done <got/SHA256SUMS
fi
[ $n -gt 40 ] || fail "only $n outputs made"
echo "$n outputs of the arm64 build compared, $bad differ"
[ $bad = 0 ] || fail "$bad of $n outputs of the arm64 build differ from x86-64's"
# the arm64 traces among them, when the fixtures have some
for t in "$IFT_FIXTURES"/arm64/*.trace; do
	[ -f "$t" ] || continue
	"$IFT" info -i "$t" | grep -q '^host.arch *aarch64' || fail "$t: not recorded on aarch64 (info)"
done
exit 0
