#!/usr/bin/env bash
# rootfs.sh - the root filesystem of the aarch64 guests of run-in-guest.sh,
# which cannot use this machine's x86 root as the x86 guests do.
#
#   contrib/kernels/rootfs.sh aarch64     make it unless the cache has it;
#                                         prints its directory
#
# A Debian 12 arm64 tree made with mmdebstrap ($IFT_KERNEL_CACHE, else
# ~/.cache/ingero-ftrace/kernels, /rootfs-arm64), remade only when this
# script changes (its stamp): what the e2e tests that trace run (a shell,
# coreutils, util-linux, procps, python3, cc for the programs some compile
# at test time, jq, sudo, binutils, PyTorch, chromium), and the libraries
# ingero-ftrace's arm64 build and its tests link.  The guest mounts it
# read-only; run-in-guest.sh adds the mount point of the source tree and
# guest-run.sh to it before each boot.
#
# Installing arm64 packages runs their scripts under qemu-user: binfmt_misc
# is mounted and qemu-aarch64-static registered for that when they are not.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${IFT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ingero-ftrace/kernels}

die() { echo "rootfs.sh: $*" >&2; exit 1; }
say() { echo "rootfs.sh: $*" >&2; }

# the tests' commands, then the libraries of the arm64 build of
# ingero-ftrace (install-deps.sh's build list, as runtime packages)
packages="bash coreutils util-linux procps findutils grep sed gawk mount iproute2 hostname
python3 gcc libc6-dev make binutils jq sqlite3 sudo file kmod
python3-torch python3-torchvision python3-pil chromium
libtracefs1 libtraceevent1 libunwind8 libsqlite3-0 libzstd1 zlib1g libjson-c5 libelf1
libcmocka0 libpython3.11"

case ${1:-} in
aarch64|arm64) ;;
*) echo "usage: rootfs.sh aarch64 (x86_64 guests use this machine's root)" >&2; exit 2 ;;
esac
dir=$cache/rootfs-arm64
stamp=$(sha256sum <"$here/rootfs.sh" | cut -c1-16)
mkdir -p "$cache"
# one maker at a time: run-in-guest.sh calls this before every arm64 boot
exec 9>"$cache/rootfs-arm64.lock"
flock 9
if [ -f "$dir/.ift-stamp" ] && [ "$(cat "$dir/.ift-stamp")" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi

# The Debian URI the machine already uses (kernel.sh's debian_uri).
debian_uri() {
	local u
	u=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	    awk '{print $2}' | grep -v security | head -1)
	[ -n "$u" ] || u=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
			   2>/dev/null | awk '{print $2}' | grep -v security | head -1)
	echo "${u:-http://deb.debian.org/debian}"
}

command -v mmdebstrap >/dev/null || die "no mmdebstrap (contrib/install-deps.sh kernels installs it)"
qemu=$(command -v qemu-aarch64-static) || die "no qemu-aarch64-static (qemu-user-static)"
bf=/proc/sys/fs/binfmt_misc
if [ ! -e "$bf/register" ]; then
	mount -t binfmt_misc binfmt_misc "$bf" || die "cannot mount binfmt_misc at $bf"
fi
if [ ! -e "$bf/qemu-aarch64" ]; then
	# F: the interpreter is opened now, so it runs inside the new root too
	printf '%s' ':qemu-aarch64:M::\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$qemu"':F' \
		>"$bf/register" || die "cannot register qemu-aarch64 with binfmt_misc"
fi

work=$cache/rootfs-arm64.new
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
say "making a Debian 12 arm64 root with mmdebstrap (about 15 min)"
t0=$SECONDS
# shellcheck disable=SC2086
mmdebstrap --arch=arm64 --variant=apt --include="$(echo $packages | tr ' ' ,)" \
	--aptopt='APT::Install-Recommends "false"' \
	--customize-hook='echo guest >"$1/etc/hostname"' \
	--customize-hook='printf "127.0.0.1 localhost\n127.0.1.1 guest\n::1 localhost\n" >"$1/etc/hosts"' \
	bookworm "$work" "$(debian_uri)" >"$cache/rootfs-arm64.log" 2>&1 ||
	{ tail -20 "$cache/rootfs-arm64.log" >&2; die "mmdebstrap failed (log: $cache/rootfs-arm64.log)"; }
echo "$((SECONDS - t0))" >"$work/.ift-build-seconds"
echo "$stamp" >"$work/.ift-stamp"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "$dir"
