# guest-run.sh - run by guest-init (PID 1) inside a guest that
# run-in-guest.sh started, with the host's root filesystem as the read-only
# root.  Sets up what a command expects of a machine, runs the host's
# command as root, and leaves its exit status for the host.
#
# From the kernel command line (the kernel puts name=value in init's
# environment): IFT_TREE, a host directory shared writable at the same path
# (9p tag "tree").  The exchange directory is 9p tag "xchg": `cmd` in,
# `status` out.
# The command's stdout is ttyS1 and its stderr ttyS2, which QEMU joins to
# run-in-guest.sh's own; IFT_GUEST_OUT and IFT_GUEST_ERR (kernel command
# line) name others where the machine has one UART (aarch64: hvc0, hvc1).
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

fail() {
	echo "guest-run: $*" >/dev/console
	exit 1
}

opts=trans=virtio,version=9p2000.L,msize=262144
# what the read-only root leaves writable: fresh tmpfs everywhere a program
# writes without asking
mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "mount /tmp"
mount -t tmpfs -o mode=755 tmpfs /run || fail "mount /run"
mount -t tmpfs -o mode=1777 tmpfs /var/tmp || fail "mount /var/tmp"
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm || fail "mount /dev/shm"
mount -t devpts devpts /dev/pts 2>/dev/null
# tracefs where the kernel has it, else under debugfs (before 4.1)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
	[ -d /sys/kernel/debug/tracing ] || fail "no tracefs"
[ -d /sys/fs/cgroup ] && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
hostname guest 2>/dev/null

mkdir -p /run/ift-xchg
mount -t 9p -o "$opts" xchg /run/ift-xchg || fail "mount the exchange directory (9p tag xchg)"
x=/run/ift-xchg
if [ -n "${IFT_TREE:-}" ]; then
	mount -t 9p -o "$opts" tree "$IFT_TREE" || fail "mount $IFT_TREE writable (9p tag tree)"
fi

out=${IFT_GUEST_OUT:-/dev/ttyS1} err=${IFT_GUEST_ERR:-/dev/ttyS2}
for t in "$out" "$err"; do
	# a virtio console may still be probing: without the device, the
	# redirection below would make a plain file in /dev
	i=0
	while [ ! -c "$t" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -c "$t" ] || fail "no $t"
done
# held open from here: a virtio console (hvc) forgets its settings at its
# last close, so raw mode must be set on the open that the command writes to
exec 3>"$out" 4>"$err"
for t in "$out" "$err"; do
	stty -F "$t" raw -echo 2>/dev/null
done
# the command, in its directory, with the host's environment (run-in-guest.sh)
bash "$x/cmd" </dev/null >&3 2>&4 3>&- 4>&-
echo $? >"$x/status"
sync
