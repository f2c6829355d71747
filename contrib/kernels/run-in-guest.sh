#!/usr/bin/env bash
# run-in-guest.sh - run a command as root in a QEMU guest booted with one of
# the kernels of kernel.sh, on this machine's own files.
#
#   contrib/kernels/run-in-guest.sh --kernel NAME [--cpus N] [--mem MB]
#       [--tree DIR] [--timeout SECONDS] -- COMMAND [ARGS...]
#
# The guest's root is this machine's root filesystem, read-only (9p); /tmp,
# /run, /var/tmp and /dev/shm are fresh tmpfs; DIR (default: the source tree
# this script is in) is writable at the same path, so a build or a test
# there leaves its results on the host; tracefs is mounted.  COMMAND runs as
# root in the current directory (/ where the guest has no such directory)
# with this environment; its stdout and stderr are this script's; the guest
# powers off when it ends, and this script exits with COMMAND's status.
# When the guest itself fails (no kernel, no boot, a timeout) it says why in
# one line on stderr and exits 125; the guest's console is kept in
# $IFT_GUEST_CONSOLE when that is set.
#
# NAME is built or fetched first when it is not in the cache (kernel.sh).
# An aarch64 kernel (kernel.sh's `arch` file says which) boots in
# qemu-system-aarch64's virt machine on a Debian 12 arm64 root of its own
# (rootfs.sh, made when missing) instead of this machine's root; the rest is
# the same.  It has one UART: the command's stdout and stderr are virtio
# consoles (hvc0, hvc1) rather than serial ports.
# QEMU uses KVM where a probe boot shows KVM works on this machine (nested
# KVM may not), else TCG; IFT_GUEST_ACCEL=kvm|tcg forces one.  TCG runs
# every vCPU on one host thread (IFT_GUEST_TCG_THREAD=multi gives each its
# own, faster, but see below).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name= cpus= mem=2048 tree=$(cd "$here/../.." && pwd) limit=0

usage() {
	echo "usage: run-in-guest.sh --kernel NAME [--cpus N] [--mem MB] [--tree DIR] [--timeout S] -- COMMAND [ARGS...]" >&2
	exit 2
}
die() { echo "run-in-guest: $*" >&2; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) name=${2:-}; shift 2 || usage ;;
	--cpus) cpus=${2:-}; shift 2 || usage ;;
	--mem) mem=${2:-}; shift 2 || usage ;;
	--tree) tree=${2:-}; shift 2 || usage ;;
	--timeout) limit=${2:-}; shift 2 || usage ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ -n "$name" ] && [ $# -gt 0 ] || usage
[ -n "$cpus" ] || cpus=$(nproc)
[[ $cpus =~ ^[1-9][0-9]*$ && $mem =~ ^[1-9][0-9]*$ && $limit =~ ^[0-9]+$ ]] ||
	die "--cpus, --mem and --timeout take positive numbers"
[ -d "$tree" ] || die "--tree $tree: no such directory"
tree=$(cd "$tree" && pwd)

kdir=$("$here/kernel.sh" build "$name") || die "kernel $name is not available (above)"
# the guest's machine, as kernel.sh built NAME: what differs is chosen here
arch=$(cat "$kdir/arch" 2>/dev/null || echo x86_64)
case $arch in
x86_64)
	qemu_bin="qemu-system-x86_64"
	root=/ ;;
aarch64)
	qemu_bin="qemu-system-aarch64"
	root=$("$here/rootfs.sh" aarch64) || die "no arm64 root for $name (above)"
	# the tree is mounted at its own path, and guest-init runs
	# guest-run.sh before that: the root holds both (renamed into place,
	# as another guest may be reading it)
	mkdir -p "$root$tree" "$root/usr/local/lib/ingero-ftrace" || die "cannot write $root"
	g=$root/usr/local/lib/ingero-ftrace/guest-run.sh
	if ! cmp -s "$here/guest-run.sh" "$g"; then
		cp "$here/guest-run.sh" "$g.$$" && mv "$g.$$" "$g" || die "cannot copy guest-run.sh to $root"
	fi ;;
*) die "$kdir/arch: no guests for '$arch'" ;;
esac
command -v "$qemu_bin" >/dev/null ||
	die "no $qemu_bin (contrib/install-deps.sh kernels installs it)"

x=$(mktemp -d /tmp/ift-guest.XXXXXX) || die "mktemp failed"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$x"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the command, with this environment and directory
{
	echo "# run by guest-run.sh"
	export -p | grep -Ev '^declare -x (PWD|OLDPWD|SHLVL|_|HOSTNAME|TMPDIR)='
	printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$x/cmd"
echo "$PWD" >"$x/cwd"
mkfifo "$x/out" "$x/err" || die "mkfifo failed"
cat "$x/out" &
pids+=($!)
cat "$x/err" >&2 &
pids+=($!)

# KVM when it boots a guest here, found once per kernel and kept
accel=${IFT_GUEST_ACCEL:-}
if [ "$arch" != "$(uname -m)" ]; then
	# KVM runs the host's own architecture only
	[ "${accel:-tcg}" = tcg ] || die "IFT_GUEST_ACCEL=$accel: $arch guests run under TCG here"
	accel=tcg
fi
if [ -z "$accel" ]; then
	accel=tcg
	if [ -f "$kdir/accel" ]; then
		accel=$(cat "$kdir/accel")
	elif [ -w /dev/kvm ] && [ -z "${IFT_GUEST_PROBING:-}" ]; then
		if IFT_GUEST_PROBING=1 IFT_GUEST_ACCEL=kvm "$0" --kernel "$name" --cpus 1 --mem 512 \
		   --timeout 30 -- true >/dev/null 2>&1; then
			accel=kvm
		fi
		echo "$accel" >"$kdir/accel"
	fi
fi
tcg_cpu=max
# aarch64: pointer authentication with QEMU's own cipher rather than QARMA,
# the same to the guest and much cheaper to emulate
[ "$arch" = aarch64 ] && tcg_cpu=max,pauth-impdef=on
case $accel in
kvm) accel_args=(-accel kvm -cpu host) ;;
# one host thread runs every vCPU: with a thread each (MTTCG), Linux 5.10
# died twice of an int3 in __schedule, a jump label caught mid-patch as a
# tracepoint was switched (QEMU 7.2; KVM and real CPUs synchronise that)
tcg) accel_args=(-accel "tcg,thread=${IFT_GUEST_TCG_THREAD:-single}" -cpu "$tcg_cpu") ;;
*) die "IFT_GUEST_ACCEL=$accel: kvm or tcg" ;;
esac

console=${IFT_GUEST_CONSOLE:-$x/console.log}
case $arch in
x86_64)
	qemu=(qemu-system-x86_64 "${accel_args[@]}" -m "$mem" -smp "$cpus"
		-display none -monitor none -no-reboot -nodefaults
		-kernel "$kdir/bzImage" -initrd "$kdir/initrd"
		-append "console=ttyS0 panic=-1 loglevel=4 IFT_GUEST=$here/guest-run.sh IFT_TREE=$tree"
		-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$x,mount_tag=xchg,security_model=none"
		-virtfs "local,path=$tree,mount_tag=tree,security_model=none"
		-serial "file:$console" -serial "file:$x/out" -serial "file:$x/err") ;;
aarch64)
	qemu=(qemu-system-aarch64 -M virt "${accel_args[@]}" -m "$mem" -smp "$cpus"
		-display none -monitor none -no-reboot -nodefaults
		-kernel "$kdir/Image" -initrd "$kdir/initrd"
		-append "console=ttyAMA0 panic=-1 loglevel=4 IFT_GUEST=/usr/local/lib/ingero-ftrace/guest-run.sh IFT_TREE=$tree IFT_GUEST_OUT=/dev/hvc0 IFT_GUEST_ERR=/dev/hvc1"
		-virtfs "local,path=$root,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$x,mount_tag=xchg,security_model=none"
		-virtfs "local,path=$tree,mount_tag=tree,security_model=none"
		-serial "file:$console"
		-device virtio-serial-pci
		-chardev "file,id=out,path=$x/out" -device "virtconsole,chardev=out"
		-chardev "file,id=err,path=$x/err" -device "virtconsole,chardev=err") ;;
esac
t0=$SECONDS
if [ "$limit" -gt 0 ]; then
	timeout -k 5 "$limit" "${qemu[@]}" </dev/null
else
	"${qemu[@]}" </dev/null
fi
rc=$?
# let the readers drain the fifos (QEMU closed them)
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
if [ -s "$x/status" ]; then
	exit "$(cat "$x/status")"
fi
[ $rc = 124 ] && die "the guest ($name) ran past --timeout $limit s"
why=$(grep -a -E 'guest-init:|guest-run:|Kernel panic|not syncing' "$console" 2>/dev/null | tail -1 | tr -d '\r')
[ -n "$why" ] || why="qemu exited $rc after $((SECONDS - t0)) s; last console line: $(tail -1 "$console" 2>/dev/null | tr -d '\r')"
die "the guest ($name) failed: $why"
