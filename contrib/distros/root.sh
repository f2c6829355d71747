#!/usr/bin/env bash
# root.sh - a Debian root of another release for check-distros.sh: the
# userland (glibc, Python, PyTorch, the libraries' -dev packages) the
# release binary and a build from source meet there.
#
#   contrib/distros/root.sh bullseye|trixie    make it unless the cache has
#                                              it; prints its directory
#
#   bullseye  Debian 11: glibc 2.31, Python 3.9, python3-torch 1.7.1,
#             libtracefs-dev 1.0.2, libtraceevent-dev 1.1.2, gcc 10
#   trixie    Debian 13: glibc 2.41, Python 3.13, python3-torch 2.6.0,
#             libtracefs-dev 1.8.1, libtraceevent-dev 1.8.4, gcc 14
#
# An amd64 tree made with mmdebstrap from the Debian archive this machine
# uses, in $IFT_DISTRO_CACHE (else ~/.cache/ingero-ftrace/distros)/SUITE,
# remade only when this script changes (its stamp).  It holds a shell,
# make, gcc, python3 with PyTorch and the build's libraries; a build there
# installs what else it needs itself (contrib/install-deps.sh), as on a
# fresh machine.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${IFT_DISTRO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ingero-ftrace/distros}

die() { echo "root.sh: $*" >&2; exit 1; }
say() { echo "root.sh: $*" >&2; }

packages="bash coreutils util-linux procps findutils grep sed gawk mount
python3 python3-torch gcc libc6-dev make binutils pkg-config file git ca-certificates jq
libtracefs-dev libtraceevent-dev libunwind-dev libsqlite3-dev libzstd-dev zlib1g-dev
libjson-c-dev libelf-dev"

suite=${1:-}
case $suite in
bullseye|trixie) ;;
*) echo "usage: root.sh bullseye|trixie" >&2; exit 2 ;;
esac
dir=$cache/$suite
stamp=$(sha256sum <"$here/root.sh" | cut -c1-16)
mkdir -p "$cache"
exec 9>"$cache/$suite.lock"
flock 9
if [ -f "$dir/.ift-stamp" ] && [ "$(cat "$dir/.ift-stamp")" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi

command -v mmdebstrap >/dev/null || die "no mmdebstrap (contrib/install-deps.sh kernels installs it)"
uri=$("$here/../debian-uri.sh")
work=$cache/$suite.new
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
say "making a Debian $suite root with mmdebstrap (10-20 min, most of it PyTorch)"
t0=$SECONDS
# shellcheck disable=SC2086
mmdebstrap --arch=amd64 --variant=apt --include="$(echo $packages | tr ' ' ,)" \
	--aptopt='APT::Install-Recommends "false"' \
	--customize-hook='echo distro >"$1/etc/hostname"' \
	"$suite" "$work" "$uri" >"$cache/$suite.log" 2>&1 ||
	{ tail -20 "$cache/$suite.log" >&2; die "mmdebstrap failed (log: $cache/$suite.log)"; }
echo "$((SECONDS - t0))" >"$work/.ift-build-seconds"
echo "$stamp" >"$work/.ift-stamp"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "$dir"
