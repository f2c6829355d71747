# check: the kernel features recording needs, the CUDA libraries found, and
# the leftovers of a killed run, which --cleanup removes and nothing else.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
T=/sys/kernel/tracing
CUDART=$IFT_CUDART
[ -r "$CUDART" ] || { [ "${CI:-}" = true ] && fail "$CUDART is missing"; skip "no $CUDART"; }
# where no CUDA is installed (aarch64: the stand-in in the build tree), check
# finds the runtime as a conda environment's, as it would a user's
case $CUDART in
/usr/local/cuda*) ;;
*) mkdir -p env/lib && ln -s "$CUDART" env/lib/ && export CONDA_PREFIX=$PWD/env ;;
esac

# what tracefs held before: after the test it holds no more
cp "$T/uprobe_events" uprobes.before
ls "$T/instances" >instances.before

# a pid that was a process and is none now, as a run killed with SIGKILL leaves
dead=$(sh -c 'echo $$')
[ -e "/proc/$dead" ] && fail "pid $dead should be gone"
group=ingero_$dead
off=$(readelf -Ws "$CUDART" | awk '$8 ~ /^cudaMalloc(@|$)/ { print $2; exit }')
[ -n "$off" ] || fail "no cudaMalloc in $CUDART"

trap 'remove_planted "$group"' EXIT

# ---- a machine that can record --------------------------------------------
"$IFT" check >check.out 2>check.err || fail "check exited $?: $(cat check.out check.err)"
for what in "tracefs mounted at $T" "uprobes:" "uretprobes:" "instances:" "set_event_pid:" \
	    "event-fork:" "mono clock:" "privileges: can write"; do
	grep -q "^OK  *$what" check.out || fail "no OK line for '$what':
$(cat check.out)"
done
grep -q '^FAIL' check.out && fail "FAIL lines: $(grep '^FAIL' check.out)"
# every line is OK, WARN or FAIL, then what, then a fix unless OK
grep -Ev '^(OK    [^ ].*|(WARN|FAIL)  [^ ].*  \(fix: .*\))$' check.out &&
	fail "lines not in the 'OK|WARN|FAIL  what  (fix: ...)' form"
n=$(sed -n "s|^OK  *CUDA library $CUDART: \([0-9][0-9]*\) functions.*|\1|p" check.out | head -n 1)
[ -n "$n" ] || fail "$CUDART not listed: $(cat check.out)"
[ "$n" -gt 10 ] || fail "only $n functions in $CUDART"

# --json: one object, with the same verdicts in the same order
"$IFT" check --json >check.json || fail "check --json exited $?"
jq -e 'type == "object" and .ok == true' check.json >/dev/null || fail "not a JSON object with ok: true"
jq -r '.checks[] | "\(.status) \(.what)"' check.json >json.verdicts
sed -E 's/^(OK|WARN|FAIL) +/\1 /; s/  \(fix: .*\)$//' check.out >text.verdicts
cmp -s json.verdicts text.verdicts || fail "JSON and text differ: $(diff json.verdicts text.verdicts)"
jq -e --arg p "$CUDART" '.libraries[] | select(.path == $p) | .functions > 10' check.json >/dev/null ||
	fail "$CUDART not in the JSON libraries"
for id in tracefs uprobes uretprobes instances set_event_pid event_fork mono_clock privileges; do
	jq -e --arg id "$id" '.checks[] | select(.id == $id) | .status == "OK"' check.json >/dev/null ||
		fail "JSON check '$id' is not OK"
done

# the mapped rings, which no tracing file tells: check tries a mapping of
# its own; the truth is a mapping of ours, of a ring of an instance made
# for it (ENODEV before Linux 6.10)
probe=ift_t120_$$
mkdir "$T/instances/$probe" || fail "cannot make an instance to map"
maps=$(python3 - "$T/instances/$probe/per_cpu/cpu0/trace_pipe_raw" <<'PY'
import ctypes, mmap, os, sys
# the C library's mmap: Python's own will not map past a file's size (0 here)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
p = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
if p != ctypes.c_void_p(-1).value:
    print("yes")
else:
    e = ctypes.get_errno()
    print("no" if e in (19, 22) else "error %s" % os.strerror(e))
PY
)
rmdir "$T/instances/$probe" || fail "cannot remove $probe"
case $maps in
yes) want='^OK  *mapped rings: --reader=mmap|auto parses' ;;
no) want='^OK  *mapped rings: none; Linux 6.10 brought it; the rings are spliced' ;;
*) fail "cannot tell whether this kernel maps its rings: $maps" ;;
esac
grep -q "$want" check.out || fail "a mapping here says '$maps', check: $(grep 'mapped rings' check.out)"

# ---- a killed run's leftovers ---------------------------------------------
echo "p:$group/cudaMalloc_0 $CUDART:0x$off bytes=$(ift_argreg 1):u64" >>"$T/uprobe_events" ||
	fail "cannot plant a uprobe"
mkdir "$T/instances/$group" || fail "cannot plant an instance"
echo 0 >"$T/instances/$group/tracing_on"
echo 1 >"$T/instances/$group/events/$group/cudaMalloc_0/enable"

"$IFT" check >check2.out || fail "leftovers are no reason to fail: $(cat check2.out)"
grep -q "^WARN  leftover uprobe group $group of dead run $dead  (fix: ingero-ftrace check --cleanup)" check2.out ||
	fail "the planted group is not reported: $(cat check2.out)"
grep -q "^WARN  leftover instance $group of dead run $dead " check2.out ||
	fail "the planted instance is not reported: $(cat check2.out)"

"$IFT" check --cleanup >clean.out || fail "check --cleanup exited $?: $(cat clean.out)"
removed=$(sed -n 's/^OK  *cleanup: removed \([0-9][0-9]*\) leftover.*/\1/p' clean.out)
[ -n "$removed" ] || fail "no count of what was removed: $(cat clean.out)"
[ "$removed" -ge 2 ] || fail "removed $removed, the planted group and instance are 2"
grep -q "^OK  *leftovers: none" clean.out || fail "leftovers after --cleanup: $(cat clean.out)"
grep -q ":$group/" "$T/uprobe_events" && fail "the group survived --cleanup"
[ -e "$T/instances/$group" ] && fail "the instance survived --cleanup"

"$IFT" check --cleanup --json >clean.json || fail "check --cleanup --json exited $?"
jq -e '.cleaned >= 0' clean.json >/dev/null || fail "no count in the JSON of --cleanup"

# nothing left behind: every line there now was there before
cp "$T/uprobe_events" uprobes.after
ls "$T/instances" >instances.after
extra=$(grep -vxF -f uprobes.before uprobes.after)
[ -z "$extra" ] || fail "new uprobes left behind: $extra"
extra=$(grep -vxF -f instances.before instances.after)
[ -z "$extra" ] || fail "new instances left behind: $extra"
exit 0
