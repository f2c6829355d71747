#!/usr/bin/env bash
# record runs as root under sudo: the trace file is created without following
# links and handed to the user through its descriptor (docs/security.md).
# A link planted at FILE.part is refused and its target left alone, not
# written nor chowned; the traced program (the sudo user) swapping a link in
# for FILE.part while it runs gives nothing of root's to the user; a stale
# regular FILE.part of the user's (a killed run's) is replaced.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

# as the sudo user nobody; the recorder's own leftovers checked (others' runs
# may come and go)
as_nobody() {
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$@" &
	local pid=$! rc=0
	wait $pid || rc=$?
	assert_no_leftover_of $pid
	return $rc
}
# the user's own directory, as a sudo user records into one
mkdir w
chown 65534:65534 w
chmod 755 w
cd w
echo "root's secret" >target
chmod 600 target
want=$(stat -c '%i %s %Y %u:%g %a' target)
target_intact() {
	[ "$(cat target)" = "root's secret" ] || fail "$1: the target was written"
	[ "$(stat -c '%i %s %Y %u:%g %a' target)" = "$want" ] || fail "$1: the target changed: $(stat -c '%u:%g %a %s' target)"
}

# a link at FILE.part before the run: refused, named, the target untouched
ln -s target ingero.trace.part
as_nobody "$IFT" -q record -- true 2>err && fail "a link at ingero.trace.part was not refused"
grep -q "ingero.trace.part" err || fail "the error does not name ingero.trace.part: $(cat err)"
target_intact "a link at ingero.trace.part"
[ -L ingero.trace.part ] || fail "the link at ingero.trace.part was removed"
[ ! -e ingero.trace ] || fail "ingero.trace written though its .part was refused"
rm ingero.trace.part

# the traced program swaps a link in for FILE.part while it runs: it owns the
# directory as a user may; the recorder neither follows it nor chowns through it
mkdir d
chown 65534:65534 d
mv target d/target
cd d
as_nobody "$IFT" -q record -o t.trace -- sh -c 'rm -f t.trace.part && ln -s target t.trace.part' 2>../err &&
	fail "record did not notice its trace file replaced"
cd ..
mv d/target target
target_intact "a link swapped in while recording"
grep -q "replaced" err || fail "the error does not say the file was replaced: $(cat err)"
[ ! -e d/t.trace ] || fail "the swapped-in link was renamed to t.trace"

# a stale regular FILE.part of the user's is replaced; the trace is the user's
rm -rf d
mkdir d
chown 65534:65534 d
echo stale >d/s.trace.part
chown 65534:65534 d/s.trace.part
as_nobody "$IFT" -q record -o d/s.trace -- true 2>err || fail "a stale s.trace.part stopped record: $(cat err)"
[ ! -e d/s.trace.part ] || fail "s.trace.part left behind"
[ "$(stat -c %u:%g d/s.trace)" = 65534:65534 ] || fail "the trace belongs to $(stat -c %u:%g d/s.trace)"
"$IFT" info -i d/s.trace >/dev/null || fail "the trace does not read"

# under sudo the trace is made with the user's permissions: a directory only
# root may write is refused, and nothing is created there
mkdir r
chmod 755 r
as_nobody "$IFT" -q record -o r/x.trace -- true 2>err && fail "record wrote into a directory its user may not"
grep -q "permissions of uid 65534" err || fail "the error does not say whose permissions: $(cat err)"
[ -z "$(ls -A r)" ] || fail "files created in r: $(ls -A r)"
exit 0
