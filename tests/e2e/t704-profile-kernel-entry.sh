#!/usr/bin/env bash
# record --profile tells a sample in the kernel by how it came in, from the
# kernel's call chain of the sample and /proc/kallsyms: a workload that
# spends its kernel time in read(2) of /dev/zero has those samples as
# system calls, one that maps and touches fresh pages as page faults
# (tests/workloads/kentry.c).  Each run's share of samples in the kernel is
# its own system time's share of its CPU (getrusage, 10 points), but for
# the time its samples hold over its CPU: the interrupts taken on its CPU,
# which perf's task clock counts in either mode and a kernel with
# CONFIG_IRQ_TIME_ACCOUNTING leaves out of getrusage (8-12% more in the
# arm64 5.10 guest), at most the machine's interrupt time over the run.  80% of its kernel samples are system calls, 60% page
# faults (the unmaps are system calls).  Where kallsyms hides the addresses,
# the trace says so and tells none apart.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v python3 >/dev/null || skip "needs python3"
cc -O2 -o kentry "$IFT_SRC/tests/workloads/kentry.c" || fail "cannot build the workload"

hidden=$(awk '$2 ~ /^[tT]$/ { print ($1 ~ /^0+$/); exit }' /proc/kallsyms)
for m in read fault; do
	unc0=$(uncounted)
	"$IFT" record -q -o $m.trace -- ./kentry $m 1.5 >$m.out 2>$m.err &
	rp=$!
	wait $rp || fail "record of kentry $m failed: $(tail -3 $m.err)"
	assert_no_leftover_of $rp
	unc=$(awk -v a="$unc0" -v b="$(uncounted)" 'BEGIN { print b - a }')
	"$IFT" info -i $m.trace >$m.info || fail "info failed"
	python3 - $m $m.out $m.info "$hidden" "$unc" <<'PY' || fail "kentry $m: the profile's kernel samples disagree (above)"
import sys
mode, hidden = sys.argv[1], sys.argv[4] == "1"
user, sys_ns, minflt = map(int, open(sys.argv[2]).read().split())
meta = dict(l.split(None, 1) for l in open(sys.argv[3]) if l.startswith("profile."))
n = {k: int(meta.get("profile." + k, "-1")) for k in ("samples", "kernel", "irq", "trap",
                                                        "fault", "syscall")}
period = int(meta.get("profile.period_ns", "0"))
entry = meta.get("profile.kernel_entry", "").strip()
bad = []
cpu = user + sys_ns
# the samples' time past the workload's clock, at most the machine's
# interrupts' and steal: in the kernel or not
over = min(max(n["samples"] * period - cpu, 0), float(sys.argv[5]) * 1e9)
print("%s: %s, kernel_entry %s; the workload's own CPU %.3f s, %.0f%% system (%d faults); "
      "the samples' %.3f s; the machine's interrupts and steal %s s"
      % (mode, n, entry, cpu / 1e9, 100 * sys_ns / cpu, minflt, n["samples"] * period / 1e9,
         sys.argv[5]))
lo, hi = 100 * sys_ns / (cpu + over), 100 * (sys_ns + over) / (cpu + over)
have = 100 * n["kernel"] / max(n["samples"], 1)
if n["samples"] < 50:
    bad.append("%d samples in 1.5 s at 99 Hz" % n["samples"])
if not lo - 10 <= have <= hi + 10:
    bad.append("%.0f%% of the samples in the kernel, the workload's system time %.0f%% "
               "(%.0f%% to %.0f%% with the samples' time past its CPU)"
               % (have, 100 * sys_ns / cpu, lo, hi))
if hidden:
    if not entry.startswith("no: ") or n["irq"] + n["trap"] + n["fault"] + n["syscall"]:
        bad.append("kallsyms hides its addresses, yet kernel_entry %r and %r" % (entry, n))
elif entry != "kallsyms":
    bad.append("kallsyms shows its addresses, yet kernel_entry %r" % entry)
elif n["irq"] + n["trap"] + n["fault"] + n["syscall"] > n["kernel"]:
    bad.append("more samples told apart than in the kernel: %r" % n)
elif mode == "read" and n["syscall"] < 0.8 * n["kernel"]:
    bad.append("%d of %d kernel samples system calls, under 80%%" % (n["syscall"], n["kernel"]))
elif mode == "fault" and n["fault"] < 0.6 * n["kernel"]:
    bad.append("%d of %d kernel samples page faults, under 60%%" % (n["fault"], n["kernel"]))
sys.exit("\n".join(bad) or None)
PY
done
exit 0
