# Under sudo, discover never runs anything of the user's as root: the Python
# interpreter asked for its sys.path (an executable named python*, or the
# interpreter of a script's #!) runs as the invoking user, with that user's
# groups, and its answer is still used.  record's discovery too.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH CONDA_PREFIX
need_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
uid=$(id -u nobody) gid=$(id -g nobody)
# the truth: what the system says nobody's groups are
groups=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')

# a directory nobody can reach, holding a fake interpreter that says who it
# runs as and answers like Python: sys.prefix, then sys.path
w=$(mktemp -d /tmp/ift-pyuser.XXXXXX)
trap 'rm -rf "$w"' EXIT
chmod 755 "$w"
mkdir "$w/out"
chown "$uid:$gid" "$w/out"
fake_cudart "$w/build" 1
mkdir -p "$w/site/torch/lib"
cp "$w/build/libcudart.so.12" "$w/site/torch/lib/libcudart-abc123.so.12"
chmod -R a+rX "$w"
cat >"$w/python3" <<PY
#!/bin/sh
{ id -u; id -g; id -G | tr ' ' '\n' | sort -n | tr '\n' ' '; echo; } >"$w/out/\$\$.id"
echo /usr
echo "$w/site"
PY
chmod 755 "$w/python3"
printf '#!%s\nprint(1)\n' "$w/python3" >"$w/train.py"
chmod 755 "$w/train.py"

check_probe() {	# label
	set -- "$1" "$w"/out/*.id
	[ -e "$2" ] || fail "$1: the interpreter was not asked for its sys.path"
	[ $# = 2 ] || fail "$1: the interpreter ran $(($# - 1)) times"
	[ "$(sed -n 1p "$2")" = "$uid" ] || fail "$1: the interpreter ran as uid $(sed -n 1p "$2"), not the sudo user's $uid"
	[ "$(sed -n 2p "$2")" = "$gid" ] || fail "$1: the interpreter ran as gid $(sed -n 2p "$2"), not $gid"
	[ "$(sed -n 3p "$2")" = "$groups" ] ||
		fail "$1: the interpreter's groups are '$(sed -n 3p "$2")', not the user's '$groups'"
	expect_lib site/torch/lib/libcudart-abc123.so.12 python 5
	rm -f "$w"/out/*.id
}

cd "$w"
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=nobody discover -- ./python3
check_probe "an executable named python3"
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=nobody discover -- ./train.py
check_probe "a script whose #! is a Python"

# record asks it the same way, before the command (the same file) runs
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=nobody "$IFT" -v record -o "$w/out/r.trace" -- ./python3 -c 1 \
	>/dev/null 2>record.err &
rec=$!
wait $rec || fail "record failed: $(cat record.err)"
assert_no_leftover_of $rec
grep -q "libcudart-abc123.so.12 (python)" record.err || fail "record did not probe the wheel: $(cat record.err)"
set -- "$w"/out/*.id
[ $# = 2 ] || fail "record: expected the interpreter asked once and the command run once: $*"
for f; do
	[ "$(sed -n 1p "$f")" = "$uid" ] || fail "record: the interpreter or command ran as uid $(sed -n 1p "$f")"
	[ "$(sed -n 3p "$f")" = "$groups" ] || fail "record: groups $(sed -n 3p "$f"), not $groups"
done
rm -f "$w"/out/*.id

# without sudo, root's own command is asked as root
discover -- ./python3
set -- "$w"/out/*.id
[ "$(sed -n 1p "$1")" = 0 ] || fail "without sudo the interpreter should run as root"
exit 0
