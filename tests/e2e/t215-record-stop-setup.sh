# A Ctrl-C or SIGTERM while record is still setting up (here: while the
# command's Python is asked for its sys.path) stops the run at once: the
# command never runs, the interpreter asked is stopped, nothing is left in
# tracefs, and the exit status is the signal's.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v setsid >/dev/null || fail "no setsid (util-linux)"

w=$PWD
# set-up's first slow step: the interpreter says it started (through a fifo,
# so the test waits for that event, not for a time), then hangs
mkfifo started
cat >python3 <<PY
#!/bin/sh
if [ "\$1" = -c ]; then
	echo \$\$ >"$w/started"
	exec sleep 300
fi
touch "$w/ran"
PY
chmod 755 python3

for how in "INT recorder" "TERM group"; do
	set -- $how
	sig=$1
	setsid "$IFT" -q record -o $sig.trace -- "$w/python3" train.py 2>$sig.err &
	rec=$!
	probe=$(timeout 30 cat started) || fail "SIG$sig: the interpreter was never asked"
	t0=$(date +%s%N)
	if [ "$2" = group ]; then
		kill -$sig -- -$rec	# as a terminal does: the recorder's whole group
	else
		kill -$sig $rec
	fi
	wait $rec
	rc=$?
	t1=$(date +%s%N)
	want=$((128 + $(kill -l $sig)))
	[ $rc = $want ] || fail "SIG$sig during set-up: exit $rc, expected $want; $(cat $sig.err)"
	[ ! -e ran ] || fail "SIG$sig during set-up: the command ran anyway"
	# the interpreter's own deadline is 5 s: stopping must not wait for it
	[ $(( (t1 - t0) / 1000000 )) -lt 5000 ] ||
		fail "SIG$sig during set-up: took $(( (t1 - t0) / 1000000 )) ms to stop"
	kill -0 "$probe" 2>/dev/null && { kill "$probe"; fail "SIG$sig: the interpreter was left running"; }
	assert_no_leftover_of $rec
done
exit 0
