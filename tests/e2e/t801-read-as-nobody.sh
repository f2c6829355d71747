#!/usr/bin/env bash
# Every command that only reads a trace works as an unprivileged user: info,
# dump, report (text, --json, --per-process, --diff, --html), export (sqlite
# and perfetto) and query, run as nobody on an example trace, with the same
# output as root's where the output is the trace's alone.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to become nobody"
command -v setpriv >/dev/null || fail "no setpriv (util-linux)"
ex=$IFT_FIXTURES/examples
[ -r "$ex/dataloader-starvation.trace" ] || fail "no example traces in $ex"

# a directory of nobody's, with the binary and two traces (root's, read-only)
w=$(mktemp -d /tmp/ift-nobody.XXXXXX)
trap 'rm -rf "$w"' EXIT
cp "$IFT" "$w/ingero-ftrace"
cp "$ex/dataloader-starvation.trace" "$ex/direct-indexing.trace" "$w/"
chmod 755 "$w/ingero-ftrace"
chown nobody:nogroup "$w"
chmod 644 "$w"/*.trace
as_nobody() {
	(cd "$w" && setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
		env HOME="$w" TMPDIR="$w" "$@")
}
[ "$(as_nobody id -u)" != 0 ] || fail "setpriv did not drop root"

t=dataloader-starvation.trace
for cmd in "info -i $t" "dump -i $t --table calls" "report -i $t" "report -i $t --json" \
	"report -i $t --per-process" "report -i $t --diff direct-indexing.trace"; do
	# shellcheck disable=SC2086
	as_nobody ./ingero-ftrace $cmd >nobody.out 2>nobody.err || fail "as nobody: $cmd: $(cat nobody.err)"
	# shellcheck disable=SC2086
	(cd "$w" && ./ingero-ftrace $cmd) >root.out 2>/dev/null
	# info names the file's path alone: the same
	cmp -s nobody.out root.out || fail "as nobody: $cmd: output differs from root's"
done
as_nobody ./ingero-ftrace report -i $t --html page.html 2>nobody.err || fail "report --html: $(cat nobody.err)"
[ -s "$w/page.html" ] || fail "report --html wrote nothing"
as_nobody ./ingero-ftrace export -i $t --format perfetto -o t.json 2>nobody.err ||
	fail "export perfetto: $(cat nobody.err)"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$w/t.json" || fail "the perfetto export is no JSON"
as_nobody ./ingero-ftrace export -i $t --format sqlite -o t.db 2>nobody.err ||
	fail "export sqlite: $(cat nobody.err)"
as_nobody ./ingero-ftrace query -i t.db "SELECT count(*) FROM calls" >nobody.out 2>nobody.err ||
	fail "query: $(cat nobody.err)"
calls=$(as_nobody ./ingero-ftrace report -i $t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["calls"])')
grep -qw "$calls" nobody.out || fail "query counts $(cat nobody.out), report $calls calls"
as_nobody ./ingero-ftrace query -i $t --json "SELECT count(*) AS n FROM switches" >nobody.out 2>nobody.err ||
	fail "query on the trace: $(cat nobody.err)"
# and what needs privileges says so, in one line
as_nobody ./ingero-ftrace record -o x.trace -- true >/dev/null 2>nobody.err && fail "record ran as nobody"
[ "$(grep -c . nobody.err)" = 1 ] || fail "record as nobody: not one line: $(cat nobody.err)"
exit 0
