#!/usr/bin/env bash
# check-distros.sh [SUITE...]: the release binary and a build from source on
# other Debian releases, each in a root of its own (contrib/distros/root.sh:
# bullseye = Debian 11, trixie = Debian 13; both by default), entered with
# chroot in a mount namespace of this script's (proc, sys with tracefs, dev,
# resolv.conf for apt, and NVIDIA's runtime at its path for the tests that
# probe it).  In each root, on a fresh clone of this tree's HEAD:
#
#  1. the release binary (IFT_DIST_BIN, make dist's x86-64 file) with the
#     root's Python and PyTorch, and the stand-in runtime and its programs
#     built by the root's gcc (make workloads): the empty root (t060), check
#     (t120), a DataLoader run (t410), --stack on the root's libraries
#     (t700), the Python frames of calls on real Python (t701) and of a
#     DataLoader run with its roles (t702);
#  2. the build from source with the root's own packages: `make` then
#     `make check` (CI=true).  Where the root's libraries are too old the
#     build must refuse them in one line, and that is what is checked.
#
# Each suite's output goes to $IFT_DISTRO_LOGS (default build/distros)/SUITE.log;
# one summary line each here.  Exits 1 if any step failed.  Needs root.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/contrib/distros
[ "$(id -u)" = 0 ] || { echo "check-distros.sh: needs root (chroot, mounts, tracefs)" >&2; exit 2; }
bin=${IFT_DIST_BIN:-}
[ -x "$bin" ] || { echo "check-distros.sh: no release binary IFT_DIST_BIN='$bin' (make dist)" >&2; exit 2; }
[ $# -gt 0 ] || set -- bullseye trixie
logs=${IFT_DISTRO_LOGS:-$top/build/distros}
mkdir -p "$logs"
cudart_dir=/usr/local/cuda-13.0
failed=()

# inroot ROOT CMD...: CMD (a shell command line) in ROOT, from the clone
inroot() {
	local r=$1
	shift
	unshare -m --propagation private sh -c '
		r=$1; c=$2; cuda=$3
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
			mount --rbind /dev "$r/dev" || exit 125
		touch "$r/etc/resolv.conf" && mount --bind /etc/resolv.conf "$r/etc/resolv.conf" || exit 125
		if [ -d "$cuda" ]; then
			mkdir -p "$r$cuda" && mount --bind "$cuda" "$r$cuda" || exit 125
		fi
		exec chroot "$r" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
			HOME=/root LANG=C.UTF-8 CI=true ${NODE_EXTRA_CA_CERTS:+NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt} \
			/bin/bash -c "cd /work/ingero-ftrace && $c"
	' sh "$r" "$*" "$cudart_dir"
}

step() {	# suite, label, then the command; logs, prints one line
	local suite=$1 label=$2 t0=$SECONDS rc
	shift 2
	echo "== $label" >>"$log"
	"$@" >>"$log" 2>&1
	rc=$?
	printf '  %-9s %-44s %s (%ds)\n' "$suite" "$label" "$([ $rc = 0 ] && echo ok || echo "FAIL ($rc)")" \
		$((SECONDS - t0))
	[ $rc = 0 ] || failed+=("$suite: $label")
	return $rc
}

# the build refuses the root's libraries in one line, naming them
refuses_old() {
	local r=$1 out
	out=$(inroot "$r" 'make 2>&1 >/dev/null; echo "rc=$?"')
	echo "$out"
	[ "$(printf '%s\n' "$out" | grep -c '\*\*\*')" = 1 ] &&
		printf '%s\n' "$out" | grep -q 'too old: the build needs libtracefs 1.6' &&
		! printf '%s\n' "$out" | grep -qx 'rc=0'
}

for suite in "$@"; do
	log=$logs/$suite.log
	: >"$log"
	echo "== $suite: root (contrib/distros/root.sh $suite)"
	root=$("$here/root.sh" "$suite" 2>>"$log") || { failed+=("$suite: root"); continue; }
	rm -rf "$root/work"
	mkdir -p "$root/work"
	git clone -q "$top" "$root/work/ingero-ftrace" || { failed+=("$suite: clone"); continue; }
	install -m 0755 "$bin" "$root/usr/local/bin/ingero-ftrace"
	# the machine's own certificate authorities (a proxy's), for apt and npm
	# in the root as on the machine
	if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
		cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" &&
			chroot "$root" update-ca-certificates >>"$log" 2>&1
	fi
	inroot "$root" 'ldd --version | head -1; python3 --version;
		python3 -c "import torch; print(\"torch\", torch.__version__)";
		echo "libtracefs $(pkg-config --modversion libtracefs)," \
			"libtraceevent $(pkg-config --modversion libtraceevent), $(gcc --version | head -1)"' |
		tee -a "$log" | sed "s/^/  $suite: /"
	step "$suite" "release binary: make workloads" inroot "$root" 'make workloads'
	step "$suite" "release binary: t060 t120 t410 t700 t701 t702" inroot "$root" \
		"IFT_BIN=/usr/local/bin/ingero-ftrace IFT_STATIC=/usr/local/bin/ingero-ftrace \
			tests/run-tests.sh --build build --needs-kernel --filter 't060|t120|t410|t700|t701|t702' |
			tee /tmp/e2e.out; tail -1 /tmp/e2e.out |
			grep -q ' 0 failed, 0 skipped'"
	if [ "$(inroot "$root" 'pkg-config --atleast-version=1.6 libtracefs && echo new')" = new ]; then
		step "$suite" "from source: make" inroot "$root" 'make -j"$(nproc)"'
		step "$suite" "from source: make check" inroot "$root" \
			'make check 2>&1 | tee /tmp/check.out; tail -1 /tmp/check.out | grep -q " 0 failed"'
	else
		step "$suite" "from source: refuses its old libraries" refuses_old "$root"
	fi
done

echo
if [ ${#failed[@]} -gt 0 ]; then
	printf 'failed:\n'
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "check-distros: $* all passed (logs: $logs)"
