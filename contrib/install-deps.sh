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
#                           and flex, bison and bc to build a kernel
# Test-only packages are never installed by a plain `make`.
set -eu

what=${1:-build}

build_pkgs="pkg-config:pkg-config gcc:gcc make:make
libtracefs:libtracefs-dev libtraceevent:libtraceevent-dev libunwind:libunwind-dev
sqlite3:libsqlite3-dev libzstd:libzstd-dev zlib:zlib1g-dev json-c:libjson-c-dev
libelf:libelf-dev"
test_pkgs="cmocka:libcmocka-dev python3:python3 python3-embed:libpython3-dev torch:python3-torch chromium:chromium
node:nodejs npm:npm"
fuzz_pkgs="clang:clang libclang_rt.fuzzer:libclang-rt-14-dev"
kernel_pkgs="qemu-system-x86_64:qemu-system-x86 flex:flex bison:bison bc:bc xz:xz-utils
libssl:libssl-dev"

have() {
	name=$1
	case $name in
	pkg-config|gcc|make|python3|clang|chromium|node|npm|qemu-system-x86_64|flex|bison|bc|xz)
		command -v "$name" >/dev/null 2>&1 ;;
	torch) /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 ;;
	libclang_rt.fuzzer) ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 ;;
	*) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$name" ;;
	esac
}

case $what in
build) list=$build_pkgs ;;
test) list="$build_pkgs $test_pkgs" ;;
fuzz) list="$build_pkgs $fuzz_pkgs" ;;
kernels) list="$build_pkgs $test_pkgs $kernel_pkgs" ;;
*) echo "usage: $0 build|test|fuzz|kernels" >&2; exit 2 ;;
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
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a second make, unattended upgrades) holds dpkg's lock for
# a while: wait for it rather than fail the build.
apt="$SUDO apt-get -o DPkg::Lock::Timeout=600"
# an old package list may not know the packages yet
$apt install -y -q --no-install-recommends $missing >&2 ||
	{ $apt update -q >&2 &&
	  $apt install -y -q --no-install-recommends $missing >&2; }
