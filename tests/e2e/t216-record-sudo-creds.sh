# Under sudo the command runs as the invoking user with exactly that user's
# groups.  When that cannot be done (SUDO_UID or SUDO_GID unparsable, a user
# with no name: no passwd entry and no SUDO_USER) record refuses with one line
# and runs nothing, rather than keep root's groups or take gid 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
id nobody >/dev/null 2>&1 || skip "no user nobody"

chmod 777 .
uid=$(id -u nobody) gid=$(id -g nobody)
sorted_groups() { tr ' ' '\n' | sort -n | tr '\n' ' '; }
groups=$(id -G nobody | sorted_groups)

# a uid and gid no passwd or group entry names
nouid=54321
while getent passwd $nouid >/dev/null || getent group $nouid >/dev/null; do
	nouid=$((nouid + 1))
done

refused() {	# label, then the environment's assignments
	local label=$1
	shift
	rm -f ran
	env -u SUDO_UID -u SUDO_GID -u SUDO_USER "$@" "$IFT" -q record -o r.trace -- touch "$PWD/ran" \
		2>err.txt >/dev/null && fail "$label: record did not refuse"
	[ "$(grep -c . err.txt)" = 1 ] || fail "$label: expected one line of error, got: $(cat err.txt)"
	[ ! -e ran ] || fail "$label: the command ran"
}
refused "no name for the user" SUDO_UID=$nouid SUDO_GID=$nouid
refused "an unparsable SUDO_GID" SUDO_UID=$uid SUDO_GID=nogroup SUDO_USER=nobody
refused "an empty SUDO_GID" SUDO_UID=$uid SUDO_GID= SUDO_USER=nobody
refused "an unparsable SUDO_UID" SUDO_UID=nobody SUDO_GID=$gid SUDO_USER=nobody
refused "a SUDO_UID with trailing junk" SUDO_UID=${uid}x SUDO_GID=$gid SUDO_USER=nobody
refused "a SUDO_UID out of range" SUDO_UID=99999999999 SUDO_GID=$gid SUDO_USER=nobody

# the user's own groups, named by the passwd entry or by SUDO_USER
for env in "SUDO_USER=nobody" "SUDO_USER="; do
	env -u SUDO_USER SUDO_UID=$uid SUDO_GID=$gid $env "$IFT" -q record -o g.trace -- \
		sh -c 'id -u; id -g; id -G' >ids.txt 2>err.txt &
	rec=$!
	wait $rec || fail "record as nobody ($env) failed: $(cat err.txt)"
	assert_no_leftover_of $rec
	[ "$(sed -n 1p ids.txt)" = "$uid" ] || fail "($env) the command ran as uid $(sed -n 1p ids.txt)"
	[ "$(sed -n 2p ids.txt)" = "$gid" ] || fail "($env) the command ran as gid $(sed -n 2p ids.txt)"
	[ "$(sed -n 3p ids.txt | sorted_groups)" = "$groups" ] ||
		fail "($env) the command's groups are $(sed -n 3p ids.txt), not nobody's: $groups"
done
exit 0
