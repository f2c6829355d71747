#!/bin/sh
# Installs what ingero-ftrace needs from Debian 12, and nothing that is already there.
#   install-deps.sh build   libraries and tools to build the binary (called by make)
#   install-deps.sh test    what `make check` needs on top (cmocka, python3,
#                           libpython3-dev for pystack's test, which embeds it,
#                           Debian's CPU build of PyTorch for the real-DataLoader test,
#                           chromium to render report --html headless, and
#                           node and npm for the MCP SDK test, which npm-installs
#                           @modelcontextprotocol/sdk into build/npm itself)
#   install-deps.sh kernels what `make check-kernels` needs on top of test: QEMU,
#                           and flex, bison and bc to build a kernel; for the
#                           arm64 guests qemu-system-arm, the cross compiler,
#                           and mmdebstrap and qemu-user-static for their root
#   install-deps.sh cross-aarch64  `make ARCH=aarch64` on x86-64 and its unit tests
#                           under qemu-user: the cross compiler and Debian's
#                           arm64 -dev packages (adds the arm64 architecture)
#   install-deps.sh distros `make check-distros`: mmdebstrap for its roots
#   install-deps.sh static, static-aarch64  `make STATIC=1` (make dist): on top
#                           of build or cross-aarch64, libstdc++'s static archive
#                           (the unwinder's C++ demangler, linked in)
# Test-only packages are never installed by a plain `make`.
set -eu

what=${1:-build}

build_pkgs="pkg-config:pkg-config gcc:gcc make:make
libtracefs:libtracefs-dev libtraceevent:libtraceevent-dev libunwind:libunwind-dev
sqlite3:libsqlite3-dev libzstd:libzstd-dev zlib:zlib1g-dev json-c:libjson-c-dev
libelf:libelf-dev"
test_pkgs="cmocka:libcmocka-dev python3:python3 python3-embed:libpython3-dev torch:python3-torch
torchvision:python3-torchvision pil:python3-pil chromium:chromium node:nodejs npm:npm"
# arm64/NAME: NAME's arm64 .pc file, beside the host's (multiarch)
cross_aarch64_pkgs="pkg-config:pkg-config make:make aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu
arm64-libc:libc6-dev-arm64-cross qemu-aarch64:qemu-user
arm64/libtracefs:libtracefs-dev:arm64 arm64/libtraceevent:libtraceevent-dev:arm64
arm64/libunwind:libunwind-dev:arm64 arm64/sqlite3:libsqlite3-dev:arm64
arm64/libzstd:libzstd-dev:arm64 arm64/zlib:zlib1g-dev:arm64 arm64/json-c:libjson-c-dev:arm64
arm64/libelf:libelf-dev:arm64 arm64/cmocka:libcmocka-dev:arm64
arm64/python3-embed:libpython3-dev:arm64"
# gcc's major version names its libstdc++ package (Debian 12: 12)
gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
static_pkgs="cxx-static:libstdc++-${gcc_major:-12}-dev"
static_aarch64_pkgs="arm64-cxx-static:libstdc++-${gcc_major:-12}-dev-arm64-cross"
fuzz_pkgs="clang:clang libclang_rt.fuzzer:libclang-rt-14-dev"
kernel_pkgs="qemu-system-x86_64:qemu-system-x86 flex:flex bison:bison bc:bc xz:xz-utils
libssl:libssl-dev qemu-system-aarch64:qemu-system-arm aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu
arm64-libc:libc6-dev-arm64-cross qemu-aarch64-static:qemu-user-static mmdebstrap:mmdebstrap
arch-test:arch-test"

have() {
	name=$1
	case $name in
	pkg-config|gcc|make|python3|clang|chromium|node|npm|qemu-system-x86_64|flex|bison|bc|xz)
		command -v "$name" >/dev/null 2>&1 ;;
	# the arm64 guests (contrib/kernels): their QEMU, and what makes their
	# Debian root (rootfs.sh)
	qemu-system-aarch64|qemu-aarch64-static|mmdebstrap|arch-test)
		command -v "$name" >/dev/null 2>&1 ;;
	torch) /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 ;;
	torchvision) /usr/bin/python3 -c 'import torchvision' >/dev/null 2>&1 ;;
	pil) /usr/bin/python3 -c 'import PIL' >/dev/null 2>&1 ;;
	aarch64-linux-gnu-gcc) command -v "$name" >/dev/null 2>&1 ;;
	arm64-libc) [ -e /usr/aarch64-linux-gnu/include/stdio.h ] ;;
	# a compiler that finds no file prints the bare name
	cxx-static) [ "$(gcc -print-file-name=libstdc++.a)" != libstdc++.a ] ;;
	arm64-cxx-static) command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 &&
		[ "$(aarch64-linux-gnu-gcc -print-file-name=libstdc++.a)" != libstdc++.a ] ;;
	# qemu-user's, or qemu-user-static's
	qemu-aarch64) command -v qemu-aarch64 >/dev/null 2>&1 || command -v qemu-aarch64-static >/dev/null 2>&1 ;;
	arm64/*) command -v pkg-config >/dev/null 2>&1 &&
		PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
			pkg-config --exists "${name#arm64/}" ;;
	libclang_rt.fuzzer) ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 ;;
	*) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$name" ;;
	esac
}

case $what in
build) list=$build_pkgs ;;
test) list="$build_pkgs $test_pkgs" ;;
fuzz) list="$build_pkgs $fuzz_pkgs" ;;
cross-aarch64) list=$cross_aarch64_pkgs ;;
static) list="$build_pkgs $static_pkgs" ;;
distros) list="mmdebstrap:mmdebstrap" ;;
static-aarch64) list="$cross_aarch64_pkgs $static_aarch64_pkgs" ;;
kernels) list="$build_pkgs $test_pkgs $kernel_pkgs" ;;
*) echo "usage: $0 build|test|fuzz|kernels|distros|cross-aarch64|static|static-aarch64" >&2; exit 2 ;;
esac

missing=
for entry in $list; do
	name=${entry%%:*}
	pkg=${entry#*:}
	have "$name" || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing$missing" >&2
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "install-deps: need root to install$missing" >&2
		exit 1
	fi
else
	SUDO=
fi
# the arm64 packages install beside the host's once dpkg knows the
# architecture; the install below then updates the package lists
if { [ "$what" = cross-aarch64 ] || [ "$what" = static-aarch64 ]; } && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$SUDO dpkg --add-architecture arm64
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a second make, unattended upgrades) holds dpkg's lock for
# a while: wait for it rather than fail the build.
apt="$SUDO apt-get -o DPkg::Lock::Timeout=600"
# an old package list may not know the packages yet
$apt install -y -q --no-install-recommends $missing >&2 ||
	{ $apt update -q >&2 &&
	  $apt install -y -q --no-install-recommends $missing >&2; }
