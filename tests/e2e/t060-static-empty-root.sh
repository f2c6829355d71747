#!/usr/bin/env bash
# The static release binary (make STATIC=1, what make dist ships) in an empty
# root: a directory with only the binary, /proc, /sys (tracefs under it),
# /dev, /etc/passwd, /etc/group and a work directory, entered in a mount
# namespace of its own (nothing of it outlives the test).  There:
# - check passes;
# - record of simtrain, whose own files (it, simcuda, libc and ld.so) are
#   copied in at their paths, has every call the workload logged;
# - report (text, --json, --per-process), export (sqlite, perfetto,
#   parquet), query and mcp on that trace give what the dynamic build gives
#   outside on the same file, byte for byte (SQLite: row for row);
# - under sudo (SUDO_UID, SUDO_GID, SUDO_USER), a user whose groups come
#   only from the root's /etc/group runs the command with exactly them, and
#   where nsswitch.conf names a source the binary does not read, with those
#   groups and a warning that says so: fewer, never more.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim
static=${IFT_STATIC:-}
if [ -z "$static" ] || [ ! -x "$static" ]; then
	[ "${CI:-}" = true ] && fail "no static build at '${static}' (make STATIC=1)"
	skip "no static build at '${static}' (make STATIC=1)"
fi
file -L "$static" | grep -q 'statically linked' || fail "$static is not statically linked: $(file -L "$static")"
command -v unshare >/dev/null || fail "needs unshare (util-linux)"

# the root: the binary, the mount points, the account files, and simtrain's
# own files at their paths
root=$PWD/root
mkdir -p "$root"/{proc,sys,dev,etc,work}
cp "$static" "$root/ingero-ftrace"
idbin=$(command -v id) || fail "needs id (coreutils)"
for exe in "$SIMTRAIN" "$idbin"; do
	for f in "$exe" $(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		mkdir -p "$root/$(dirname "$f")"
		cp -L "$f" "$root/$f"
	done
done
[ -f "$root/$SIMCUDA" ] || fail "simtrain's ldd names no $SIMCUDA: $(ldd "$SIMTRAIN")"
chmod 1777 "$root/work"

# a user and two groups of the root's own: ids no host account uses
free_id() {
	local i=$1
	while getent passwd "$i" >/dev/null || getent group "$i" >/dev/null; do i=$((i + 1)); done
	echo "$i"
}
uid=$(free_id 61000)
g1=$(free_id $((uid + 1)))
g2=$(free_id $((g1 + 1)))
cat >"$root/etc/passwd" <<EOF
root:x:0:0:root:/:/nonexistent
iftuser:x:$uid:$uid::/work:/nonexistent
EOF
cat >"$root/etc/group" <<EOF
root:x:0:
iftuser:x:$uid:
iftone:x:$g1:someone,iftuser
ifttwo:x:$g2:iftuser
iftnot:x:$((g2 + 1)):someone
EOF

# The namespace's mounts must not reach the machine's: made private.  In a
# chroot (check-distros' roots) "/" is no mount point and cannot be; there
# the mounts are left as they are, which is safe where none is shared.
prop=private
if ! unshare -m --propagation private true 2>/dev/null; then
	grep -q ' shared:' /proc/self/mountinfo &&
		fail "cannot make a mount namespace private here, and some mounts are shared"
	prop=unchanged
fi

# inroot [ENV=VALUE...] CMD...: CMD in the root, from /work, in a mount
# namespace whose proc, sys and dev mounts go with it
inroot() {
	local envs=()
	while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
	unshare -m --propagation $prop sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
			mount --rbind /dev "$r/dev" || exit 125
		exec "$@"' sh "$root" env -i "${envs[@]}" unshare --root="$root" --wd=/work "$@"
}

inroot /ingero-ftrace check >check.out 2>&1 || fail "check in the empty root: $(tail -5 check.out)"

# record, and the calls against the workload's own log
inroot /ingero-ftrace record -o r.trace -- "$SIMTRAIN" direct --steps 60 -o r.jsonl \
	>record.out 2>record.err || fail "record in the empty root: $(tail -5 record.err)"
assert_no_leftovers
w=$root/work
[ -s "$w/r.trace" ] && [ -s "$w/r.jsonl" ] || fail "record left no trace or no truth: $(ls "$w")"
"$IFT" report --json -i "$w/r.trace" >dyn.json || fail "the dynamic build cannot report the trace"
"$IFT" dump --json -i "$w/r.trace" --table switches,wakeups,calls >dyn.dump.json || fail "dump failed"
sim_check "$w/r.jsonl" dyn.json dyn.dump.json <<'PY' || fail "the empty root's trace disagrees with the workload (above)"
import sys
from simcheck import *
truth, r, trace = Truth(sys.argv[1]), load_report(sys.argv[2]), Trace(sys.argv[3])
chk = Checks("empty root")
check_ops(chk, truth, r, probed(), Slack(trace, truth, probed()))
chk.done()
PY

# the read half: each output of the static binary in the root equals the
# dynamic build's outside, run from the same directory on the same names
same() {	# label, then the arguments to both
	local label=$1
	shift
	inroot /ingero-ftrace "$@" >"static.$label" 2>"static.$label.err" ||
		fail "static $label: $(tail -3 "static.$label.err")"
	(cd "$w" && "$IFT" "$@") >"dyn.$label" 2>"dyn.$label.err" ||
		fail "dynamic $label: $(tail -3 "dyn.$label.err")"
	cmp -s "static.$label" "dyn.$label" || fail "$label differs: $(diff "static.$label" "dyn.$label" | head -5)"
}
same report report -i r.trace
same json report --json -i r.trace
same per-process report --per-process -i r.trace
same query query -i r.trace "SELECT op, COUNT(*), SUM(dur_ns) FROM calls GROUP BY op ORDER BY op"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t060","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_causal_chains","arguments":{}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_trace_stats","arguments":{}}}' >mcp.in
unshare_stdin() { inroot /ingero-ftrace mcp -i r.trace <mcp.in; }
unshare_stdin >static.mcp 2>static.mcp.err || fail "static mcp: $(tail -3 static.mcp.err)"
(cd "$w" && "$IFT" mcp -i r.trace <"$OLDPWD/mcp.in") >dyn.mcp 2>dyn.mcp.err || fail "dynamic mcp failed"
[ "$(grep -c '"id":[23]' static.mcp)" = 2 ] || fail "static mcp answered no tool call: $(head -c 300 static.mcp)"
cmp -s static.mcp dyn.mcp || fail "mcp differs: $(diff static.mcp dyn.mcp | head -5)"
for fmt in sqlite perfetto parquet; do
	inroot /ingero-ftrace export --format $fmt -i r.trace -o static.$fmt 2>err.txt ||
		fail "static export $fmt: $(cat err.txt)"
	(cd "$w" && "$IFT" export --format $fmt -i r.trace -o dyn.$fmt) 2>err.txt ||
		fail "dynamic export $fmt: $(cat err.txt)"
done
cmp -s "$w/static.perfetto" "$w/dyn.perfetto" || fail "export perfetto differs between the builds"
# parquet: a directory of one file a table
[ -n "$(ls "$w/static.parquet")" ] && diff -r "$w/static.parquet" "$w/dyn.parquet" >/dev/null ||
	fail "export parquet differs between the builds: $(diff -rq "$w/static.parquet" "$w/dyn.parquet" | head -3)"
python3 - "$w/static.sqlite" "$w/dyn.sqlite" <<'PY' || fail "export sqlite differs between the builds"
import sqlite3, sys
a, b = (sqlite3.connect(p) for p in sys.argv[1:3])
tables = [r[0] for r in a.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
if tables != [r[0] for r in b.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]:
    sys.exit("the tables differ")
for t in tables:
    q = 'SELECT * FROM "%s" ORDER BY 1, 2' % t if t != "meta" else 'SELECT * FROM meta ORDER BY 1'
    if list(a.execute(q)) != list(b.execute(q)):
        sys.exit("table %s differs" % t)
if not tables:
    sys.exit("no tables")
PY

# sudo: the command runs as the user, with the groups the root's /etc/group
# gives it (iftone and ifttwo, not iftnot)
as_user() {	# label: record of id with the environment sudo gives
	inroot SUDO_UID=$uid SUDO_GID=$uid SUDO_USER=iftuser /ingero-ftrace record \
		-o "$1.trace" -- "$idbin" >"$1.ids" 2>"$1.err" ||
		fail "record under sudo ($1): $(tail -3 "$1.err")"
	got=$(sed -n 's/^uid=\([0-9]*\).* gid=\([0-9]*\).* groups=\(.*\)$/\1 \2 \3/p' "$1.ids" |
		awk '{ n = split($3, g, ","); s = ""; for (i = 1; i <= n; i++) { sub(/\(.*/, "", g[i]); s = s " " g[i] }
		       print $1, $2, s }' | tr ' ' '\n' | sed '/^$/d' | sort -n | tr '\n' ' ')
	want=$(printf '%s\n' $uid $uid $uid $g1 $g2 | sort -n | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "($1) the command ran as $(cat "$1.ids"), want uid, gid $uid and groups $uid $g1 $g2"
}
rm -f "$root/etc/nsswitch.conf"
as_user files
! grep -q 'groups' files.err || fail "a warning where /etc/group is the whole group database: $(cat files.err)"
printf 'passwd: files\ngroup:  files [NOTFOUND=return] sss ldap # remote\n' >"$root/etc/nsswitch.conf"
as_user remote
[ "$(grep -c 'groups' remote.err)" = 1 ] && grep -q "warning: .*sss, ldap, which may give more" remote.err ||
	fail "no one-line warning of the unread sources sss and ldap: $(cat remote.err)"
grep 'groups' remote.err
exit 0
