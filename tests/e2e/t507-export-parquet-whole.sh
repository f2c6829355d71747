#!/usr/bin/env bash
# export --format parquet is whole or nothing.  Its files are written into a
# stage beside DIR and moved in only once all are written: an export that
# fails (a full disk, a trace that cannot be read, a trace already there)
# leaves DIR as it was, makes no DIR where there was none, and leaves no
# stage.  A partition that holds a trace (its mark, _ingero.ID) takes it no
# second time, whether exported before or named twice: its rows would count
# twice in every query over DIR.  Another trace of the same host and rank
# goes beside it (TABLE.1.parquet).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

A=$IFT_FIXTURES/examples/cudart-sequence.trace
B=$IFT_FIXTURES/examples/dataloader-starvation.trace
for f in $A $B; do [ -r $f ] || fail "no fixture $f"; done

run() {
	"$@" >out 2>err
	rc=$?
	[ $rc -lt 128 ] || fail "crashed (exit $rc): $*: $(head -c 2000 err)"
}
# a directory's state: every name, its size and its content's checksum
state() {
	(cd "$1" && find . -printf '%p %s\n' | sort && find . -type f -exec md5sum {} + | sort)
}
no_stage() {	# DIR: nothing of an export beside it
	local left
	left=$(ls -a "$(dirname "$1")" | grep -F ".$(basename "$1").ingero-")
	[ -z "$left" ] || fail "a stage was left beside $1: $left"
}
one_line() {	# what the error must say
	[ $rc = 1 ] || fail "exit $rc, want 1: $(cat err)"
	[ "$(grep -c . err)" = 1 ] || fail "not one line: $(cat err)"
	grep -qF -- "$1" err || fail "the error does not say '$1': $(cat err)"
}

# ---- into a new DIR: made whole, marked -------------------------------------
run "$IFT" export --format parquet -i $A -o pq
[ $rc = 0 ] || fail "export failed: $(cat err)"
part=pq/host=vm/rank=-1
marks=$(ls $part | grep -c '^_ingero\.[0-9a-f]\{16\}$')
[ "$marks" = 1 ] || fail "$marks marks in $part, want the trace's one: $(ls $part)"
tables=$(ls $part | grep -c '\.parquet$')
[ "$tables" -ge 20 ] || fail "only $tables tables in $part"
[ "$(stat -c %a pq)" = "$(printf '%o' $((0755 & ~$(umask))))" ] ||
	fail "DIR has mode $(stat -c %a pq), not 0755 less the umask $(umask)"
no_stage pq
before=$(state pq)

# ---- the same trace again: refused, DIR as it was -------------------------
run "$IFT" export --format parquet -i $A -o pq
one_line "'pq/host=vm/rank=-1' holds this trace already"
[ "$(state pq)" = "$before" ] || fail "a refused export changed DIR"
no_stage pq
# with another trace first: nothing of either is moved in
run "$IFT" export --format parquet -i $B -i $A -o pq
one_line "holds this trace already"
[ "$(state pq)" = "$before" ] || fail "a refused export moved the first trace's files in"
no_stage pq

# ---- named twice in one export: refused, no DIR made ------------------------
run "$IFT" export --format parquet -i $B -i $B -o twice
one_line "named twice"
[ ! -e twice ] || fail "a refused export made its DIR: $(find twice | head -3)"
no_stage twice

# ---- a trace that cannot be read, after one that can: no DIR ----------------
run "$IFT" export --format parquet -i $B -i missing.trace -o half
[ $rc = 1 ] || fail "export of a missing trace exited $rc"
[ ! -e half ] || fail "a failed export left $(find half | wc -l) entries at DIR"
no_stage half

# ---- another trace of the same host and rank: beside the first -------------
run "$IFT" export --format parquet -i $B -o pq
[ $rc = 0 ] || fail "export of a second trace failed: $(cat err)"
[ "$(ls $part | grep -c '^_ingero\.')" = 2 ] || fail "not two marks: $(ls $part | grep _ingero)"
for t in $(ls $part | sed -n 's/^\([a-z_]*\)\.parquet$/\1/p'); do
	[ -f $part/$t.1.parquet ] || fail "the second trace has no $t.1.parquet"
done
# the marks name the files: each file of the partition in one mark
listed=$(cat $part/_ingero.* | sed -n 's/^file //p' | sort)
[ "$listed" = "$(ls $part | grep '\.parquet$' | sort)" ] ||
	fail "the marks do not name the partition's files: $(diff <(echo "$listed") <(ls $part | grep '\.parquet$' | sort) | head -5)"
grep -qx "source $B" $part/_ingero.* || fail "no mark names its source $B"
no_stage pq

# ---- a DIR of the user's in a directory they cannot write (a mount point) --
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	skip_part "a DIR in a directory its user cannot write: needs root and setpriv"
else
	mkdir -p shut/pq && chmod 755 shut && chown nobody shut/pq
	chmod 755 .
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$IFT" export --format parquet \
		-i "$A" -o shut/pq >out 2>err
	rc=$?
	[ $rc = 0 ] || fail "export into nobody's DIR in root's directory: exit $rc: $(cat err)"
	[ -f shut/$part/calls.parquet ] || fail "no calls.parquet in nobody's DIR: $(find shut | head)"
	left=$(find shut -name '.*ingero-*')
	[ -z "$left" ] || fail "a stage was left: $left"
	[ "$(stat -c %U shut/$part/calls.parquet)" = nobody ] || fail "the files are not nobody's"
fi

# ---- a full disk: the export fails, DIR stays as it was -----------------------
if [ "$(id -u)" != 0 ]; then
	skip_part "a full disk: mounting a small tmpfs needs root"
else
	mkdir -p full
	mount -t tmpfs -o size=4m tmpfs full || fail "cannot mount a tmpfs"
	trap 'umount "$PWD/full"' EXIT
	run "$IFT" export --format parquet -i $A -o full/pq
	[ $rc = 0 ] || fail "export onto the tmpfs failed: $(cat err)"
	# room for a few more blocks, not for a second trace's files
	used=$(df -k --output=used full | tail -1)
	mount -o remount,size=$((used + 16))k full || fail "cannot shrink the tmpfs to ${used}k + 16k"
	before=$(state full/pq)
	run "$IFT" export --format parquet -i $B -o full/pq
	one_line "No space left on device"
	[ "$(state full/pq)" = "$before" ] || fail "an export that filled the disk changed DIR"
	no_stage full/pq
	run "$IFT" export --format parquet -i $B -o full/new
	one_line "No space left on device"
	[ ! -e full/new ] || fail "an export that filled the disk left DIR"
	no_stage full/new
	[ "$(df -k --output=used full | tail -1)" -le "$used" ] ||
		fail "the failed exports left blocks in use: $(find full | head)"
fi
exit 0
