#!/usr/bin/env bash
# kernel.sh - the kernels ingero-ftrace is proven on, each ready to boot in QEMU.
#
#   contrib/kernels/kernel.sh list            the kernels' names
#   contrib/kernels/kernel.sh build NAME      build or fetch NAME unless the cache
#                                             has it; prints its cache directory
#   contrib/kernels/kernel.sh path NAME       the cache directory, built or not
#
# A kernel's directory holds `bzImage`, `initrd` (the guest's PID 1, see
# guest-init.c, and the modules it needs to mount the host's root over 9p),
# `release` (uname -r) and `stamp`: a hash of everything the kernel was made
# from (this script, its config fragment, guest-init.c, the package version).
# A kernel is remade only when its stamp changes.
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
set -euo pipefail
# a build left half-done by an error or ^C is removed with its directory
builds=()
trap 'rm -rf "${builds[@]}"' EXIT

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${IFT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ingero-ftrace/kernels}
KERNELS="linux-5.10-nobpf debian-6.1 linux-6.12"

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
	linux-5.10-nobpf)
		cat "$here/config/$name.config"
		bullseye_apt apt-get -qq update >/dev/null 2>&1 || true
		bullseye_apt apt-cache policy linux-source-5.10 2>/dev/null | awk '/Candidate/ { print $2 }' ;;
	debian-6.1) image_of linux-image-amd64 ;;
	linux-6.12) image_of linux-image-6.12-amd64 ;;
	*) die "no kernel '$name' (kernels: $KERNELS)" ;;
	esac
}

# The static PID 1 of every guest.
build_init() {
	local out=$1
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -static -o "$out" "$here/guest-init.c" ||
		die "cannot build guest-init (static glibc: libc6-dev)"
}

# Linux 5.10 from source, no BPF, no BTF, no modules.
build_5_10() {
	local dir=$1 src work jobs line sym
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
	say "configuring (defconfig, kvm_guest.config, config/linux-5.10-nobpf.config)"
	make -s -C "$src" defconfig kvm_guest.config >/dev/null
	(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$here/config/linux-5.10-nobpf.config" \
		>/dev/null)
	make -s -C "$src" olddefconfig >/dev/null
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
	done <"$here/config/linux-5.10-nobpf.config"
	say "building bzImage with $jobs jobs (about 15 min on 2 CPUs)"
	local t0=$SECONDS
	make -s -C "$src" -j"$jobs" bzImage >"$work/build.log" 2>&1 ||
		{ tail -20 "$work/build.log" >&2; die "the kernel build failed"; }
	echo "$((SECONDS - t0))" >"$dir/build_seconds"
	cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
	cp "$src/.config" "$dir/config"
	make -s -C "$src" kernelrelease >"$dir/release"
	python3 "$here/initramfs.py" --init "$dir/guest-init" -o "$dir/initrd"
	rm -rf "$work"
}

# A Debian image package: its vmlinuz, and the modules that mount 9p.
fetch_image() {
	local dir=$1 pkg=$2 work rel
	work=$(mktemp -d "$cache/build.XXXXXX")
	builds+=("$work")
	say "fetching $pkg"
	(cd "$work" && apt-get -qq -o APT::Sandbox::User=root download "$pkg") || die "cannot download $pkg"
	dpkg-deb -x "$work"/"$pkg"_*.deb "$work/pkg"
	rel=$(ls "$work/pkg/lib/modules") || die "$pkg has no modules"
	cp "$work/pkg/boot/vmlinuz-$rel" "$dir/bzImage"
	cp "$work/pkg/boot/config-$rel" "$dir/config"
	echo "$rel" >"$dir/release"
	python3 "$here/initramfs.py" --init "$dir/guest-init" --modules "$work/pkg/lib/modules/$rel" \
		-o "$dir/initrd" virtio_pci 9pnet_virtio 9p
	rm -rf "$work"
}

cmd_build() {
	local name=$1 dir stamp
	dir=$cache/$name
	stamp=$(recipe "$name" | sha256sum | cut -c1-16)
	if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] &&
	   [ -f "$dir/bzImage" ] && [ -f "$dir/initrd" ]; then
		echo "$dir"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	builds+=("$dir")
	build_init "$dir/guest-init"
	case $name in
	linux-5.10-nobpf) build_5_10 "$dir" ;;
	debian-6.1) fetch_image "$dir" "$(image_of linux-image-amd64)" ;;
	linux-6.12) fetch_image "$dir" "$(image_of linux-image-6.12-amd64)" ;;
	esac
	echo "$stamp" >"$dir/stamp"
	builds=()
	echo "$dir"
}

case ${1:-} in
list) echo "$KERNELS" ;;
path) [ -n "${2:-}" ] || die "usage: kernel.sh path NAME"; echo "$cache/$2" ;;
build)
	[ -n "${2:-}" ] || die "usage: kernel.sh build NAME"
	case " $KERNELS " in *" $2 "*) ;; *) die "no kernel '$2' (kernels: $KERNELS)" ;; esac
	mkdir -p "$cache"
	cmd_build "$2" ;;
*) echo "usage: kernel.sh list | build NAME | path NAME" >&2; exit 2 ;;
esac
