#!/usr/bin/env bash
# kernel.sh - the kernels ingero-ftrace is proven on, each ready to boot in QEMU.
#
#   contrib/kernels/kernel.sh list [ARCH]     the kernels' names for ARCH: x86_64
#                                             (the default) or aarch64 (arm64)
#   contrib/kernels/kernel.sh build NAME      build or fetch NAME unless the cache
#                                             has it; prints its cache directory
#   contrib/kernels/kernel.sh path NAME       the cache directory, built or not
#
# A kernel's directory holds `bzImage` (x86_64) or `Image` (aarch64),
# `initrd` (the guest's PID 1, see guest-init.c, and the modules it needs to
# mount its root over 9p), `arch` (uname -m of its guests), `release`
# (uname -r) and `stamp`: a hash of everything the kernel was made from
# (this script, its config fragment, guest-init.c, the package version).
# A kernel is remade only when its stamp changes.
#
# An aarch64 guest cannot use this machine's x86 root: rootfs.sh makes it a
# Debian 12 arm64 root of its own.
#
# The cache is $IFT_KERNEL_CACHE, else ~/.cache/ingero-ftrace/kernels.
#
#   linux-5.10-nobpf  Linux 5.10 from Debian 11's linux-source-5.10, built here
#                     without BPF and BTF (config/linux-5.10-nobpf.config):
#                     the oldest kernel Debian still serves, as eBPF tools
#                     cannot use it.  Debian 11 is added as an apt list of
#                     its own under the cache, for this download only.
#   debian-6.1        Debian 12's own linux-image-amd64, modules as shipped
#   linux-6.12        Debian 12's image of Linux 6.12, the newest LTS
#   linux-5.10-nobpf-arm64  the same Linux 5.10 cross-built for arm64 (QEMU's
#                     virt machine; config/linux-5.10-nobpf-arm64.config)
#   debian-6.1-arm64  Debian 12's own arm64 image (the unsigned package: the
#                     same kernel), modules as shipped
set -euo pipefail
# a build left half-done by an error or ^C is removed with its directory
builds=()
trap 'rm -rf "${builds[@]}"' EXIT

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${IFT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ingero-ftrace/kernels}
KERNELS="linux-5.10-nobpf debian-6.1 linux-6.12"
KERNELS_ARM64="linux-5.10-nobpf-arm64 debian-6.1-arm64"

die() { echo "kernel.sh: $*" >&2; exit 1; }
say() { echo "kernel.sh: $*" >&2; }

# The Debian URI the machine already uses (deb822 or one-line lists).
debian_uri() {
	local u
	u=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	    awk '{print $2}' | grep -v security | head -1)
	[ -n "$u" ] || u=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
			   2>/dev/null | awk '{print $2}' | grep -v security | head -1)
	echo "${u:-http://deb.debian.org/debian}"
}

# apt-get or apt-cache (\$1) with Debian 11 "bullseye" as its only source,
# state kept in the cache: the machine's own apt configuration is not touched.
bullseye_apt() {
	local tool=$1 a=$cache/apt-bullseye
	shift
	mkdir -p "$a/lists/partial" "$a/archives/partial"
	if [ ! -f "$a/sources.list" ]; then
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_uri) bullseye main" \
			>"$a/sources.list"
	fi
	"$tool" -q -o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
		-o Dir::State::Lists="$a/lists" -o Dir::Cache="$a" -o APT::Sandbox::User=root "$@"
}

# The linux-image package a Debian meta package depends on now.
image_of() {
	apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# What NAME is made from, as text: its stamp is a hash of this.
recipe() {
	local name=$1
	cat "$here/kernel.sh" "$here/guest-init.c" "$here/initramfs.py"
	case $name in
	linux-5.10-nobpf|linux-5.10-nobpf-arm64)
		cat "$here/config/$name.config"
		bullseye_apt apt-get -qq update >/dev/null 2>&1 || true
		bullseye_apt apt-cache policy linux-source-5.10 2>/dev/null | awk '/Candidate/ { print $2 }' ;;
	debian-6.1) image_of linux-image-amd64 ;;
	linux-6.12) image_of linux-image-6.12-amd64 ;;
	debian-6.1-arm64) image_of linux-image-arm64:arm64 ;;
	*) die "no kernel '$name' (kernels: $KERNELS $KERNELS_ARM64)" ;;
	esac
}

# The static PID 1 of every guest, for the guest's machine ($2: CC).
build_init() {
	local out=$1 cc=${2:-${CC:-cc}}
	$cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -static -o "$out" "$here/guest-init.c" ||
		die "cannot build guest-init with $cc (static glibc: libc6-dev, or libc6-dev-arm64-cross)"
}

# Linux 5.10 from source, no BPF, no BTF, no modules: NAME ($2) is
# linux-5.10-nobpf (x86_64, bzImage) or linux-5.10-nobpf-arm64 (Image).
build_5_10() {
	local dir=$1 name=$2 src work jobs line sym kmake image
	# ARCH explicit: `make check-kernels ARCH=aarch64` puts ARCH in the
	# environment, which the kernel's make would read too
	case $name in
	*-arm64)
		kmake=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		image=arch/arm64/boot/Image ;;
	*)
		kmake=(make ARCH=x86_64)
		image=arch/x86/boot/bzImage ;;
	esac
	work=$(mktemp -d "$cache/build.XXXXXX")
	builds+=("$work")
	say "fetching linux-source-5.10 (Debian 11)"
	bullseye_apt apt-get -qq update || die "cannot read Debian 11's package lists"
	(cd "$work" && bullseye_apt apt-get -qq download linux-source-5.10) ||
		die "cannot download linux-source-5.10"
	dpkg-deb -x "$work"/linux-source-5.10_*.deb "$work/pkg"
	src=$(ls "$work"/pkg/usr/src/linux-source-5.10.tar.xz) || die "no source tarball in the package"
	tar -xJf "$src" -C "$work"
	src=$work/linux-source-5.10
	jobs=$(nproc)
	say "configuring (defconfig, kvm_guest.config, config/$name.config)"
	case $name in
	*-arm64)
		# arm64's defconfig is every board's: with modules off each =m
		# would be built in, so drop those, and the SoC platforms, which
		# QEMU's virt machine is none of
		"${kmake[@]}" -s -C "$src" defconfig >/dev/null
		sed -i 's/^\(CONFIG_[A-Za-z0-9_]*\)=m$/# \1 is not set/' "$src/.config"
		sed -n 's/^config \(ARCH_[A-Za-z0-9_]*\)$/\1/p' "$src/arch/arm64/Kconfig.platforms" |
		while read -r sym; do
			"$src/scripts/config" --file "$src/.config" --disable "$sym"
		done
		"${kmake[@]}" -s -C "$src" kvm_guest.config >/dev/null ;;
	*) "${kmake[@]}" -s -C "$src" defconfig kvm_guest.config >/dev/null ;;
	esac
	(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$here/config/$name.config" \
		>/dev/null)
	"${kmake[@]}" -s -C "$src" olddefconfig >/dev/null
	# what the fragment asks must have survived olddefconfig
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$src/.config" ||
				die "config: '$line' did not hold (a dependency is missing)" ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			! grep -q "^$sym=" "$src/.config" || die "config: '$line' did not hold" ;;
		esac
	done <"$here/config/$name.config"
	say "building ${image##*/} with $jobs jobs (about 15 min on 2 CPUs)"
	local t0=$SECONDS
	"${kmake[@]}" -s -C "$src" -j"$jobs" "${image##*/}" >"$work/build.log" 2>&1 ||
		{ tail -20 "$work/build.log" >&2; die "the kernel build failed"; }
	echo "$((SECONDS - t0))" >"$dir/build_seconds"
	cp "$src/$image" "$dir/${image##*/}"
	cp "$src/.config" "$dir/config"
	"${kmake[@]}" -s -C "$src" kernelrelease >"$dir/release"
	python3 "$here/initramfs.py" --init "$dir/guest-init" -o "$dir/initrd"
	rm -rf "$work"
}

# A Debian image package: its vmlinuz, and the modules that mount 9p.  With
# a third argument, arm64: the package of that architecture, its vmlinuz an
# uncompressed arm64 Image, and the module of the virtio consoles that carry
# the command's stdout and stderr (the virt machine has one UART).
fetch_image() {
	local dir=$1 pkg=$2 arm=${3:-} work rel image=bzImage mods=(virtio_pci 9pnet_virtio 9p)
	work=$(mktemp -d "$cache/build.XXXXXX")
	builds+=("$work")
	say "fetching $pkg"
	if [ -n "$arm" ]; then
		image=Image
		mods+=(virtio_console)
		(cd "$work" && apt-get -qq -o APT::Sandbox::User=root download "$pkg:arm64") ||
			die "cannot download $pkg:arm64"
	else
		(cd "$work" && apt-get -qq -o APT::Sandbox::User=root download "$pkg") || die "cannot download $pkg"
	fi
	dpkg-deb -x "$work"/"$pkg"_*.deb "$work/pkg"
	rel=$(ls "$work/pkg/lib/modules") || die "$pkg has no modules"
	cp "$work/pkg/boot/vmlinuz-$rel" "$dir/$image"
	cp "$work/pkg/boot/config-$rel" "$dir/config"
	echo "$rel" >"$dir/release"
	python3 "$here/initramfs.py" --init "$dir/guest-init" --modules "$work/pkg/lib/modules/$rel" \
		-o "$dir/initrd" "${mods[@]}"
	rm -rf "$work"
}

cmd_build() {
	local name=$1 dir stamp arch=x86_64 image=bzImage cc=
	dir=$cache/$name
	case $name in
	*-arm64) arch=aarch64 image=Image cc=aarch64-linux-gnu-gcc ;;
	esac
	stamp=$(recipe "$name" | sha256sum | cut -c1-16)
	if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] &&
	   [ -f "$dir/$image" ] && [ -f "$dir/initrd" ]; then
		echo "$dir"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	builds+=("$dir")
	build_init "$dir/guest-init" $cc
	case $name in
	linux-5.10-nobpf|linux-5.10-nobpf-arm64) build_5_10 "$dir" "$name" ;;
	debian-6.1) fetch_image "$dir" "$(image_of linux-image-amd64)" ;;
	linux-6.12) fetch_image "$dir" "$(image_of linux-image-6.12-amd64)" ;;
	debian-6.1-arm64) fetch_image "$dir" \
		"$(image_of linux-image-arm64:arm64 | sed 's/:arm64$/-unsigned/')" arm64 ;;
	esac
	# what run-in-guest.sh boots it with: the machine, the root
	echo "$arch" >"$dir/arch"
	echo "$stamp" >"$dir/stamp"
	builds=()
	echo "$dir"
}

case ${1:-} in
list)
	case ${2:-x86_64} in
	x86_64|amd64) echo "$KERNELS" ;;
	aarch64|arm64) echo "$KERNELS_ARM64" ;;
	*) die "no kernels for '$2' (x86_64 or aarch64)" ;;
	esac ;;
path) [ -n "${2:-}" ] || die "usage: kernel.sh path NAME"; echo "$cache/$2" ;;
build)
	[ -n "${2:-}" ] || die "usage: kernel.sh build NAME"
	case " $KERNELS $KERNELS_ARM64 " in
	*" $2 "*) ;;
	*) die "no kernel '$2' (kernels: $KERNELS $KERNELS_ARM64)" ;;
	esac
	mkdir -p "$cache"
	cmd_build "$2" ;;
*) echo "usage: kernel.sh list [ARCH] | build NAME | path NAME" >&2; exit 2 ;;
esac
