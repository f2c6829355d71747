# Sourced by the benchmarks in contrib/bench: what they all need of tracefs
# and of ELF files.  T is the tracefs mount.
T=/sys/kernel/tracing

# bench_paths BUILD: $bdir, the build directory (BUILD, relative to the
# top of the tree unless absolute), and $ift, the binary in it (else the
# top's ./ingero-ftrace)
bench_paths() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	case $1 in /*) bdir=$1 ;; *) bdir=$top/$1 ;; esac
	ift=$bdir/ingero-ftrace
	[ -x "$ift" ] || ift=$top/ingero-ftrace
}

# bench_setup NAME: root, tracefs mounted, and the peers' tools installed
# (--no-install-recommends) when missing: trace-cmd, linux-perf, time.
bench_setup() {
	[ "$(id -u)" = 0 ] || { echo "$1: needs root" >&2; exit 1; }
	[ -e $T/uprobe_events ] || mount -t tracefs nodev $T
	local p
	for p in trace-cmd:trace-cmd perf:linux-perf /usr/bin/time:time; do
		command -v "${p%%:*}" >/dev/null ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
				"${p#*:}" >&2
	done
}

# bench_remove_group GROUP...: disables and removes every uprobe of the groups
bench_remove_group() {
	local g e def pass
	for g in "$@"; do
		for e in $T/events/"$g"/*/enable; do [ -f "$e" ] && echo 0 >"$e"; done 2>/dev/null || true
		# a deletion can fail for a moment (EBUSY while another tool's
		# teardown still holds the event): the rest go on, then again
		for pass in 1 2 3 4 5; do
			grep -q "^[pr]:$g/" $T/uprobe_events 2>/dev/null || break
			grep "^[pr]:$g/" $T/uprobe_events 2>/dev/null | while read -r def _; do
				echo "-:${def#*:}" >>$T/uprobe_events 2>/dev/null || true
			done
			grep -q "^[pr]:$g/" $T/uprobe_events 2>/dev/null && sleep 0.$pass
		done
		if grep -q "^[pr]:$g/" $T/uprobe_events 2>/dev/null; then
			echo "bench: could not remove uprobe group $g" >&2
		fi
	done
	return 0
}

# bench_fileoff LIB SYM: the file offset uprobe_events wants for SYM, that is
# its vaddr - p_vaddr + p_offset of the PT_LOAD holding it
bench_fileoff() {
	local vaddr v typ off va _x _y memsz
	# awk reads to the end: an early exit would kill readelf with SIGPIPE
	vaddr=$(readelf -Ws --dyn-syms "$1" |
		awk -v f="$2" '!n && ($8 == f || index($8, f "@") == 1) { print $2; n = 1 }')
	[ -n "$vaddr" ] || { echo "bench: no symbol $2 in $1" >&2; return 1; }
	v=$((16#$vaddr))
	while read -r typ off va _x _y memsz _; do
		[ "$typ" = LOAD ] || continue
		if [ "$v" -ge $((va)) ] && [ "$v" -lt $((va + memsz)) ]; then
			printf '0x%x\n' $((v - va + off))
			return
		fi
	done < <(readelf -lW "$1")
	echo "bench: no PT_LOAD holds $2 in $1" >&2
	return 1
}

# bench_build_loop BDIR LIB: the probed tiny library and the loop that calls
# it (contrib/bench/probe-tiny.c, probe-loop.c), into BDIR/bench; sets $tiny
# and $loop.  The library must be called libcudart*.so* for --cuda-lib to take
# it, and is built so that its function starts with `push %rbp`, as
# libcudart's do (gcc drops the frame pointer of a leaf at -O2).
bench_build_loop() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	mkdir -p "$1/bench"
	tiny=$1/bench/libcudart-probetiny.so
	loop=$1/bench/probe-loop
	cc -O0 -fcf-protection=none -fPIC -shared -o "$tiny" "$top/contrib/bench/probe-tiny.c"
	cc -O2 -o "$loop" "$top/contrib/bench/probe-loop.c" "$2" -Wl,-rpath,"$(dirname "$2")" -ldl
}

# bench_shim DIR: DIR/shim.so, which keeps trace-cmd off the function
# tracer's files (refused on machines like this one); LD_PRELOAD it
bench_shim() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cc -O2 -shared -fPIC -o "$1/shim.so" "$top/contrib/bench/tracecmd-shim.c" -ldl
}

# bench_await_helpers: until every helper our records left tearing down has
# finished (the lock each holds on its run's instance).  `record` returns
# before its teardown, whose writes hold the kernel's event_mutex for
# seconds: the next tool's set-up would wait for them, inside its measured
# run (trace-cmd kept 30,000 events of 1.9 million that way).
bench_await_helpers() {
	local d
	for d in $T/instances/ingero_*; do
		[ -d "$d" ] && flock -s "$d" true 2>/dev/null
	done
	return 0
}

# bench_alternate NAME REPS TOOL...: REPS repetitions, each running every
# TOOL once through the script's own `run TOOL` (which leaves its result
# line in $work/r, and what else it measured in $work/e if anything), the
# order rotated each time so no tool always runs first after a pause.
# Appends "TOOL RESULT [EXTRA]" to $work/results; logs a line per
# repetition on stderr.  Fails when a tool gives no result.
bench_alternate() {
	local name=$1 reps=$2 i k tool r line
	shift 2
	local tools=("$@")
	: >"$work/results"
	for ((i = 1; i <= reps; i++)); do
		line="run $i:"
		for k in "${!tools[@]}"; do
			tool=${tools[$(((k + i - 1) % ${#tools[@]}))]}
			: >"$work/e"
			run "$tool"	# not in $(...): its background pids must stay ours
			r=$(cat "$work/r")
			[ -n "$r" ] || { echo "$name: $tool printed no result" >&2; exit 1; }
			echo "$tool $r $(cat "$work/e")" >>"$work/results"
			line+=" $tool $r;"
		done
		echo "$line" >&2
	done
}

# bench_maps: whether this kernel maps its rings (record --reader=mmap:
# mmap of trace_pipe_raw, Linux 6.10 and later)
bench_maps() {
	uname -r | awk -F. '{ exit !($1 > 6 || ($1 == 6 && $2 + 0 >= 10)) }'
}
