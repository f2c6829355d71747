# Under sudo the command runs as the invoking user, who also owns the trace;
# --as-root keeps root.  -a records the whole system for --duration.  Every
# recording samples the system ten times a second.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

chmod 777 .
SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$IFT" -q record -o s.trace -- sh -c 'id -u; id -g' >ids.txt ||
	fail "record under sudo failed"
[ "$(sed -n 1p ids.txt)" = 65534 ] || fail "the command ran as uid $(sed -n 1p ids.txt), not the sudo user"
[ "$(sed -n 2p ids.txt)" = 65534 ] || fail "the command ran as gid $(sed -n 2p ids.txt)"
[ "$(stat -c %u:%g s.trace)" = 65534:65534 ] || fail "the trace belongs to $(stat -c %u:%g s.trace)"

SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$IFT" -q record --as-root -o r.trace -- id -u >id.txt
[ "$(cat id.txt)" = 0 ] || fail "--as-root should run the command as root"
[ "$(stat -c %u r.trace)" = 0 ] || fail "--as-root: the trace should stay root's"

# -a: other processes' events are there too: a shell that sleeps and wakes
# a hundred times a second (a spinning task alone on a CPU may never be
# switched: a 2-CPU guest's recording of 1 s had none of it)
sh -c 'while :; do :; done' &
busy=$!
sh -c 'while :; do sleep 0.01; done' &
sleeper=$!
# (2 s: the system samples' gaps are measured by their median, which one
# stall of the recorder's loop must not decide; an emulated arm64 guest's
# recording of 1 s had 3 samples, one stall in two gaps)
"$IFT" -q record -a --duration 2 -o a.trace || fail "record -a failed"
kill $busy $sleeper
"$IFT" dump --json -i a.trace --table switches >sw.json
python3 - sw.json $sleeper <<'PY' || fail "-a did not record the whole system"
import json, sys
sleeper = int(sys.argv[2])
pids = {json.loads(l)["pid"] for l in open(sys.argv[1])}
if sleeper not in pids or len(pids) < 3:
    sys.exit("tasks seen: %s" % sorted(pids)[:20])
PY

# system samples: about ten a second, busy CPUs show up as busy
# busy is the share of all CPUs: one spinning task keeps one CPU of the
# trace's cpu.count busy, whatever else runs
"$IFT" dump --json -i a.trace --table samples >samples.json
cpus=$("$IFT" info -i a.trace | awk '$1 == "cpu.count" { print $2 }')
[ "$cpus" -ge 1 ] 2>/dev/null || fail "a.trace has no cpu.count: '$cpus'"
[ "$cpus" = "$(getconf _NPROCESSORS_ONLN)" ] || fail "cpu.count $cpus, this machine has $(getconf _NPROCESSORS_ONLN) CPUs online"
python3 - samples.json "$cpus" <<'PY' || fail "system samples missing or wrong"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
cpus = int(sys.argv[2])
busy = [x for x in s if x["metric"] == "cpu.busy_permille" and x.get("scope") == "system"]
# ten a second: each sample 100 ms at least after the one before (the
# sampler's period), most of them not much more (a machine that stalls
# makes one gap long, not the others)
ts = sorted(x["ts"] for x in busy)
gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
if len(busy) < 4 or gaps[0] < 100000000 or gaps[len(gaps) // 2] > 150000000:
    sys.exit("%d system CPU samples in 2 s, %s ms apart" % (len(busy), [g // 1000000 for g in gaps]))
# 10% below one whole CPU: a 100 ms sample may miss a tick or two of it
want = 0.9 * 1000 / cpus
if max(x["value"] for x in busy) < want:
    sys.exit("a spinning task on %d CPUs should show >= %.0f permille busy: %s"
             % (cpus, want, [x["value"] for x in busy]))
PY
assert_no_leftovers
exit 0
