#!/usr/bin/env bash
# One-shot validation of ingero-ftrace on a GPU machine (docs/gpu-validation.md):
# records contrib/gpu/dataloader_bench.py in its four modes and reports on each.
#
#   contrib/gpu-bundle.sh && sudo contrib/gpu-validate.sh [-o OUTDIR] [--samples N] [--quick]
#
# Run as root from anywhere in the tree.  Steps:
#   a. environment      kernel, OS, glibc, GPU, driver, torch, CPUs, /dev/shm
#   b. tracefs/uprobes  mounts tracefs if needed, writes a uprobe, `check`, `discover`
#   c. record + report  direct, slice, loaderN, loader0 (in that order: the slow
#                       one last); beside each, nvidia-smi dmon -s u, whose mean
#                       SM% is compared with the busy share record's NVML
#                       samples give (docs/gpu-validation.md)
#   d. tracefs clean    no uprobe and no instances/ingero_* left
#   e. results          OUTDIR: summary.txt (everything readable), results.tar.gz
#                       (every per-mode file), and at most two traces under 12 MiB
#
# Exit: 0 all went well; 1 a mode, a report or the cleanup failed; 2 unusable
# (no binary, not root, no tracefs or uprobes); 3 no torch or no GPU.
#
# Environment: IFT (the binary; default .gpu-bundle/ingero-ftrace, then
# ./ingero-ftrace), IFT_GPU_PYTHON (the interpreter; default the first of
# /opt/torch/.venv/bin/python3, python3, /usr/bin/python3 that imports torch),
# IFT_GPU_DEVICE (cuda; cpu for a dry run without a GPU), IFT_GPU_WORK
# (/tmp/ift-gpu: traces and work files), IFT_GPU_BUDGET (seconds for the whole
# run, default 330; a mode that cannot fit is skipped).
set -u -o pipefail

usage() {
	cat <<'EOF'
usage: contrib/gpu-validate.sh [-o OUTDIR] [--samples N] [--loader0-samples N]
                               [--batch N] [--workers N] [--quick] [--stack]
  -o OUTDIR            results (default /tmp/ift-gpu-out)
  --samples N          direct, slice and loaderN samples (default 7000000; --quick 1048576)
  --loader0-samples N  loader0 samples (default min(samples, 3 batches))
  --batch N            batch size (default 1048576; --quick 262144)
  --workers N          loaderN's num_workers (default 4)
  --quick              ~1M samples, shorter timeouts
  --stack              also record loaderN with record --stack (its call sites)
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2
cd "$root" || exit 2

outdir=/tmp/ift-gpu-out
samples='' batch='' loader0_samples='' workers=4 quick=0 stack=0
while [ $# -gt 0 ]; do
	case $1 in
	-o | --samples | --loader0-samples | --batch | --workers)
		if [ $# -lt 2 ]; then
			echo "gpu-validate: $1 needs a value" >&2
			exit 2
		fi
		case $1 in
		-o) outdir=$2 ;;
		--samples) samples=$2 ;;
		--loader0-samples) loader0_samples=$2 ;;
		--batch) batch=$2 ;;
		--workers) workers=$2 ;;
		esac
		shift 2
		;;
	--quick) quick=1; shift ;;
	--stack) stack=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "gpu-validate: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	: "${samples:=1048576}" "${batch:=262144}"
	rec_timeout=90
else
	: "${samples:=7000000}" "${batch:=1048576}"
	rec_timeout=150
fi
for v in "$samples" "$batch" "${loader0_samples:-1}" "$workers"; do
	case $v in
	'' | *[!0-9]* | 0) echo "gpu-validate: '$v' is not a positive number" >&2; exit 2 ;;
	esac
done
: "${loader0_samples:=$((samples < 3 * batch ? samples : 3 * batch))}"

work=${IFT_GPU_WORK:-/tmp/ift-gpu}
device=${IFT_GPU_DEVICE:-cuda}
budget=${IFT_GPU_BUDGET:-330}
tfs=/sys/kernel/tracing
bench=contrib/gpu/dataloader_bench.py
t0=$SECONDS
status=0

left() { echo $((budget - (SECONDS - t0))); }

if [ "$(id -u)" != 0 ]; then
	echo "gpu-validate: run as root: tracefs and uprobes need it" >&2
	exit 2
fi
mkdir -p "$outdir" || exit 2
outdir=$(cd "$outdir" && pwd) || exit 2
mkdir -p "$work" || exit 2
work=$(cd "$work" && pwd) || exit 2
case $outdir/ in "$work"/*)
	echo "gpu-validate: OUTDIR must not be inside $work" >&2
	exit 2
	;;
esac
rm -f "$work"/*.trace "$work"/*.trace.part "$work"/*.json "$work"/*.txt "$work"/*.log "$work"/*.err
rm -f "$outdir"/summary.txt "$outdir"/results.tar.gz "$outdir"/*.trace
summary=$outdir/summary.txt

# say: a line on stdout and in the summary; show FILE: a file, the same way.
say() { printf '%s\n' "$*" | tee -a "$summary"; }
show() { tr '\r' '\n' <"$1" | sed 's/^/    /' | tee -a "$summary"; }
step() {
	say ""
	say "=== [$1] $2  (t=$((SECONDS - t0)) s)"
}

# e. results into OUTDIR, on every way out once the work dir exists.
finish() {
	local rc=$1 kept=0 m f size
	step e "results in $outdir"
	for m in loaderN direct slice loader0; do
		f=$work/$m.trace
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f")
		if [ "$kept" -lt 2 ] && [ "$size" -lt $((12 << 20)) ]; then
			cp "$f" "$outdir/" && kept=$((kept + 1))
			say "copied $m.trace ($size bytes)"
		else
			say "left $f ($size bytes) out of OUTDIR"
		fi
	done
	if (cd "$work" && find . -maxdepth 1 -type f ! -name '*.trace' ! -name '*.part' \
		-printf '%P\n' | sort | tar -czf "$outdir/results.tar.gz" -T -); then
		size=$(stat -c %s "$outdir/results.tar.gz")
		if [ "$size" -ge $((15 << 20)) ]; then
			say "results.tar.gz is $size bytes: removed (over 15 MiB)"
			rm -f "$outdir/results.tar.gz"
		fi
	fi
	say "exit $rc after $((SECONDS - t0)) s; OUTDIR:"
	(cd "$outdir" && ls -l) | tee -a "$summary"
	exit "$rc"
}

# Interrupted: the recording in flight ends cleanly (record finishes the trace
# and removes its probes on SIGTERM), then the results are written.
run_pgid=''
# shellcheck disable=SC2317  # called through trap
on_signal() {
	trap '' INT TERM HUP
	say ""
	say "gpu-validate: interrupted"
	if [ -n "$run_pgid" ]; then
		kill -TERM -- -"$run_pgid" 2>/dev/null
		wait "$run_pgid" 2>/dev/null
	fi
	[ -z "${dmon_pid:-}" ] || kill "$dmon_pid" 2>/dev/null
	finish 130
}
trap on_signal INT TERM HUP

die() { # die RC MESSAGE: the one line that says why
	say "gpu-validate: $2"
	finish "$1"
}

# ---- a. environment ------------------------------------------------------
step a "environment"
say "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "kernel:   $(uname -r) ($(uname -m))"
say "os:       $(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null)"
say "glibc:    $(ldd --version 2>&1 | head -n 1)"
say "cpus:     $(nproc), memory $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
smi=$(command -v nvidia-smi)
for c in /usr/local/nvidia/bin/nvidia-smi /usr/bin/nvidia-smi; do
	[ -z "$smi" ] && [ -x "$c" ] && smi=$c
done
if [ -n "$smi" ]; then
	say "gpu:      $(timeout 30 "$smi" --query-gpu=name,driver_version --format=csv,noheader 2>&1 | paste -sd ';')"
else
	say "gpu:      nvidia-smi not found"
fi

if [ -n "${IFT:-}" ]; then
	ift=$IFT
elif [ -x .gpu-bundle/ingero-ftrace ]; then
	ift=$root/.gpu-bundle/ingero-ftrace
elif [ -x ./ingero-ftrace ]; then
	ift=$root/ingero-ftrace
else
	die 2 "no ingero-ftrace: run contrib/gpu-bundle.sh first, or set IFT=/path/to/ingero-ftrace"
fi
if ! v=$("$ift" --version 2>&1); then
	die 2 "$ift does not run: $(printf '%s\n' "$v" | head -n 1)"
fi
say "binary:   $ift: $v"
say "          $(ldd "$ift" 2>&1 | awk '$2 == "=>" {printf "%s ", $3}')"

# /dev/shm carries every batch from the loader workers (4 x prefetch 2 x 400 MB).
shm_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $2}')
if [ ! -d /dev/shm ] || [ -z "$shm_kib" ]; then
	mkdir -p /dev/shm && mount -t tmpfs -o size=32g tmpfs /dev/shm &&
		say "/dev/shm: was missing; mounted a 32 GiB tmpfs"
elif [ "$shm_kib" -lt $((6 << 20)) ]; then
	mount -o remount,size=32g /dev/shm &&
		say "/dev/shm: was $((shm_kib >> 10)) MiB; remounted with 32 GiB"
fi
say "/dev/shm: $(df -Ph /dev/shm 2>&1 | awk 'NR == 2 {print $2 " (" $1 ")"}')"

pycode='
import sys, torch
print("python:   %s %s" % (sys.version.split()[0], sys.executable))
print("torch:    %s, built for CUDA %s, cuda available: %s, %d threads"
      % (torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.get_num_threads()))
if torch.cuda.is_available():
    torch.zeros(1, device="cuda")
    print("device:   %s, capability %d.%d" % ((torch.cuda.get_device_name(0),) + torch.cuda.get_device_capability(0)))
    seen = set()
    for line in open("/proc/self/maps"):
        p = line.split()[-1]
        b = p.rsplit("/", 1)[-1]
        if (b.startswith("libcudart") or b.startswith("libcuda.so")) and p not in seen:
            seen.add(p)
            print("mapped:   " + p)
'
py='' no_torch=''
if [ -n "${IFT_GPU_PYTHON:-}" ]; then
	candidates=("$IFT_GPU_PYTHON")
else
	candidates=(/opt/torch/.venv/bin/python3 "$(command -v python3 || echo python3)" /usr/bin/python3)
fi
for c in "${candidates[@]}"; do
	command -v "$c" >/dev/null || continue
	if timeout 240 "$c" -c "$pycode" >"$work/python.txt" 2>"$work/python.err"; then
		py=$(command -v "$c")
		break
	fi
	no_torch="$c: $(grep -v '^ ' "$work/python.err" | tail -n 1)"
done
if [ -n "$py" ]; then
	show "$work/python.txt"
	if [ "$device" = cuda ] && ! grep -q '^device:' "$work/python.txt"; then
		no_torch="$py: torch sees no GPU (cuda available: False)"
		say "gpu-validate: $no_torch"
	else
		no_torch=
	fi
else
	[ -n "$no_torch" ] || no_torch="no interpreter found among: ${candidates[*]}"
	say "gpu-validate: no python3 imports torch (last: $no_torch); set IFT_GPU_PYTHON=/path/to/python3"
fi

# ---- b. tracefs and uprobes -----------------------------------------------
step b "tracefs and uprobes"
if [ ! -f $tfs/uprobe_events ] && ! grep -qs " $tfs tracefs " /proc/mounts; then
	if mount -t tracefs nodev $tfs 2>"$work/mount.err"; then
		say "mounted tracefs at $tfs"
	else
		die 2 "cannot mount tracefs at $tfs: $(head -n 1 "$work/mount.err")"
	fi
fi
[ -f $tfs/uprobe_events ] ||
	die 2 "$tfs/uprobe_events is missing: the kernel has no uprobe events (CONFIG_UPROBE_EVENTS)"
target=$(readlink -f /bin/true)
if ! { echo "p:ift_validate/probe $target:0x0" >>$tfs/uprobe_events; } 2>"$work/uprobe.err"; then
	die 2 "cannot add a uprobe through $tfs/uprobe_events: $(head -n 1 "$work/uprobe.err")"
fi
echo "-:ift_validate/probe" >>$tfs/uprobe_events 2>/dev/null
if grep -q ift_validate $tfs/uprobe_events; then
	die 2 "a uprobe added to $tfs/uprobe_events cannot be removed"
fi
uprobes_before=$(grep -c . $tfs/uprobe_events)
say "uprobe_events: writable (a probe on $target added and removed); $uprobes_before entries before our runs"

say "\$ ingero-ftrace check"
timeout 60 "$ift" check >"$work/check.txt" 2>&1
rc=$?
show "$work/check.txt"
if [ "$rc" != 0 ]; then
	die 2 "ingero-ftrace check failed (exit $rc): $(grep '^FAIL' "$work/check.txt" | head -n 3 | paste -sd ';')"
fi

if [ -n "$py" ]; then
	say "\$ ingero-ftrace discover -- $py -c 'import torch'"
	timeout 60 "$ift" discover -- "$py" -c 'import torch' >"$work/discover.txt" 2>&1
else
	say "\$ ingero-ftrace discover"
	timeout 60 "$ift" discover >"$work/discover.txt" 2>&1
fi
rc=$?
show "$work/discover.txt"
[ "$rc" = 0 ] || say "discover: exit $rc"
# Which libraries torch really maps, and whether discover found each beforehand.
while read -r _ path; do
	real=$(readlink -f "$path")
	found=no
	while IFS=$'\t' read -r dpath _; do
		[ -n "$dpath" ] && [ "$(readlink -f "$dpath")" = "$real" ] && found=yes
	done <"$work/discover.txt"
	if [ "$found" = yes ]; then
		say "torch maps $path: found by discover"
	else
		say "torch maps $path: NOT found by discover (record can only add it when it rescans the maps)"
	fi
done < <(grep '^mapped:' "$work/python.txt" 2>/dev/null)

# What only a real arm64 machine (Jetson, Grace) can show, as docs/kernels.md
# lists it: the base page (host.page_size: 64 KiB kernels count 16x the
# bytes per page), and how NVIDIA's arm64 functions begin, where the entry
# probe goes (past "bti c"; never past "paciasp", whose signed link register
# the return probe would replace).
say "page size: $(getconf PAGESIZE) bytes"
if [ "$(uname -m)" = aarch64 ]; then
	while IFS=$'\t' read -r lib _; do
		for fn in cudaMalloc cudaMemcpyAsync cudaLaunchKernel cudaStreamSynchronize cuLaunchKernel; do
			off=$(python3 - "$lib" "$fn" 2>/dev/null <<'PY'
import struct, sys
# the file offset of FN: its st_value within the PT_LOAD holding it
f = open(sys.argv[1], "rb"); d = f.read()
shoff, = struct.unpack_from("<Q", d, 0x28); shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
phoff, = struct.unpack_from("<Q", d, 0x20); phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
for s in secs:
    if s[1] != 11:  # SHT_DYNSYM
        continue
    strtab = secs[s[6]]
    for k in range(s[5] // 24):
        name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", d, s[4] + k * 24)
        n = d[strtab[4] + name:d.index(b"\0", strtab[4] + name)].decode()
        if n.split("@")[0] == sys.argv[2] and value:
            for i in range(phnum):
                t, _, off, va, _, fs, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
                if t == 1 and va <= value < va + fs:
                    print(value - va + off); sys.exit(0)
sys.exit(1)
PY
) || continue
			w=$(od -An -tx4 -j "$off" -N8 "$lib" | awk '{print $1, $2}')
			case ${w%% *} in
			d503245f) what="bti c (the probe goes after it)" ;;
			d503233f) what="paciasp (the probe stays on it)" ;;
			*) what="no landing pad" ;;
			esac
			say "arm64 entry: $lib $fn: $w: $what"
		done
	done < <(cut -f1,2 "$work/discover.txt" 2>/dev/null | grep -E '	(runtime|driver)$')
fi

# ---- c. record and report each mode ----------------------------------------
step c "record and report: direct, slice, loaderN, loader0 (batch $batch, $workers workers)"
reserve=40 # for the reports, the cleanup check and the results
ran=()

# nvidia-smi's own view of the GPUs beside a recording, a line a second
# (dmon -s u: sm mem enc dec), and the comparison with the busy share the
# trace's NVML samples give over the same recording (report --json's gpu).
dmon_pid=''
dmon_start() {
	[ -n "$smi" ] || return 0
	"$smi" dmon -s u -d 1 >"$work/$1.dmon" 2>&1 &
	dmon_pid=$!
}
dmon_stop() {
	[ -n "$dmon_pid" ] || return 0
	kill "$dmon_pid" 2>/dev/null
	wait "$dmon_pid" 2>/dev/null
	dmon_pid=''
}
nvml_vs_dmon() { # nvml_vs_dmon MODE
	[ -s "$work/$1.dmon" ] && [ -s "$work/$1.report.json" ] || return 0
	python3 - "$work/$1.report.json" "$work/$1.dmon" <<'PY' 2>&1 | tee -a "$summary"
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]
sm = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 2 and not line.startswith("#") and f[0].isdigit() and f[1].isdigit():
        sm.setdefault(int(f[0]), []).append(int(f[1]))
if not g["measured"]:
    print("nvml:     not measured: %s; nvidia-smi dmon: %s" % (g["reason"], {
        k: "%.1f%% over %d s" % (sum(v) / len(v), len(v)) for k, v in sm.items()}))
    sys.exit(0)
for x in g["gpus"]:
    w, d = x["window"], sm.get(x["gpu"]) or []
    have = 100 * w["busy_ns"] / max(w["covered_ns"], 1)
    want = sum(d) / len(d) if d else float("nan")
    print("nvml:     GPU %d busy %.1f%% of %.1f s (record's samples); nvidia-smi dmon sm "
          "%.1f%% over %d s; %.1f points apart" % (x["gpu"], have, w["covered_ns"] / 1e9, want,
                                                    len(d), abs(have - want)))
PY
}

run_mode() { # run_mode LABEL SAMPLES [RECORD_ARGS...]: LABEL is the bench's mode, or MODE-stack
	local mode=$1 n=$2 to rc t tpid trace=$work/$1.trace
	local args=(--mode "${mode%-stack}" --samples "$n" --batch "$batch" --workers "$workers" --device "$device")
	shift 2
	local extra=("$@")
	say ""
	say "--- $mode: $n samples"
	to=$rec_timeout
	[ $(($(left) - reserve)) -lt "$to" ] && to=$(($(left) - reserve))
	if [ "$to" -lt 30 ]; then
		say "$mode: SKIPPED: $(left) s left of the ${budget} s budget"
		status=1
		return
	fi
	say "\$ ingero-ftrace record --as-root ${extra[*]} -o $trace -- $py $bench ${args[*]}   (timeout $to s)"
	t=$SECONDS
	# timeout puts itself, record, python and the loader workers in a process
	# group of their own (pgid = its pid): whatever survives a recorder that
	# died is killed through it.
	dmon_start "$mode"
	timeout -k 30 "$to" "$ift" record --as-root "${extra[@]}" -o "$trace" -- "$py" "$bench" "${args[@]}" \
		>"$work/$mode.json" 2>"$work/$mode.record.log" &
	tpid=$!
	run_pgid=$tpid
	wait "$tpid"
	rc=$?
	run_pgid=''
	dmon_stop
	if kill -0 -- -"$tpid" 2>/dev/null; then
		say "$mode: processes of the run outlived record (exit $rc): killing process group $tpid"
		ps -eo pgid=,pid=,stat=,etime=,args= | awk -v g="$tpid" '$1 == g' | cut -c1-200 | tee -a "$summary"
		kill -KILL -- -"$tpid" 2>/dev/null
		sleep 1
		status=1
	fi
	# What this run left in tracefs (the next record would clean it silently),
	# once its teardown helper is done: it holds its instance's lock till then.
	local left_probes left_dirs d
	for d in $tfs/instances/ingero_*; do [ -d "$d" ] && flock -s -w 300 "$d" true; done 2>/dev/null
	left_probes=$(grep -c 'ingero_' $tfs/uprobe_events)
	left_dirs=$(find $tfs/instances -maxdepth 1 -name 'ingero_*' 2>/dev/null | paste -sd ' ')
	if [ "$left_probes" != 0 ] || [ -n "$left_dirs" ]; then
		say "$mode: record left $left_probes uprobes and instances '${left_dirs}': check --cleanup"
		timeout 60 "$ift" check --cleanup 2>&1 | grep -E '^(FAIL|OK +cleanup)' | tee -a "$summary"
		status=1
	else
		say "$mode: tracefs clean after record"
	fi
	case $rc in
	0) say "$mode: record exit 0 after $((SECONDS - t)) s" ;;
	124 | 137) say "$mode: TIMED OUT after $((SECONDS - t)) s (limit $to s)"; status=1 ;;
	*) say "$mode: record exit $rc after $((SECONDS - t)) s"; status=1 ;;
	esac
	say "record's stderr (and the bench's), last 25 lines:"
	tr '\r' '\n' <"$work/$mode.record.log" | grep -v '^$' | tail -n 25 >"$work/$mode.tail"
	show "$work/$mode.tail"
	rm -f "$work/$mode.tail"
	if grep -q '^{' "$work/$mode.json"; then
		say "bench $mode: $(grep '^{' "$work/$mode.json" | tail -n 1)"
	else
		say "bench $mode: no JSON line"
		status=1
	fi
	if [ ! -f "$trace" ]; then
		say "$mode: no trace file ($(ls "$trace".part 2>/dev/null || echo 'no .part either'))"
		status=1
		return
	fi
	ran+=("$mode")
	say "\$ ingero-ftrace info -i $trace"
	timeout 60 "$ift" info -i "$trace" >"$work/$mode.info.txt" 2>&1 || status=1
	show "$work/$mode.info.txt"
	say "\$ ingero-ftrace report -i $trace"
	if ! timeout 60 "$ift" report -i "$trace" >"$work/$mode.report.txt" 2>"$work/$mode.report.err"; then
		say "$mode: report failed: $(head -n 1 "$work/$mode.report.err")"
		status=1
	fi
	show "$work/$mode.report.txt"
	if ! timeout 60 "$ift" report --json -i "$trace" >"$work/$mode.report.json" 2>>"$work/$mode.report.err"; then
		say "$mode: report --json failed: $(tail -n 1 "$work/$mode.report.err")"
		status=1
	else
		say "(report --json: $work/$mode.report.json, $(stat -c %s "$work/$mode.report.json") bytes)"
		nvml_vs_dmon "$mode"
	fi
}

if [ -n "$no_torch" ] || [ -z "$py" ]; then
	say "gpu-validate: cannot run the benchmark: ${no_torch:-no python3 with torch}"
	status=3
else
	run_mode direct "$samples"
	# the original investigation's fast path, x[i:i+B].cuda(): no gather
	run_mode slice "$samples"
	run_mode loaderN "$samples"
	run_mode loader0 "$loader0_samples"
	# the user stacks of the loaderN run's CUDA calls (record --stack): torch's
	# C++ frames demangled, the interpreter's frames marked [python]
	if [ "$stack" = 1 ]; then
		run_mode loaderN-stack "$samples" --stack
	fi
	if "$ift" report --help 2>&1 | grep -q -- '--diff'; then
		if [ -f "$work/loaderN.trace" ] && [ -f "$work/direct.trace" ]; then
			say ""
			say "\$ ingero-ftrace report -i loaderN.trace --diff direct.trace"
			timeout 60 "$ift" report -i "$work/loaderN.trace" --diff "$work/direct.trace" \
				>"$work/diff.report.txt" 2>&1 || status=1
			show "$work/diff.report.txt"
		fi
		# the original comparison: the DataLoader against the plain slice
		if [ -f "$work/loaderN.trace" ] && [ -f "$work/slice.trace" ]; then
			say ""
			say "\$ ingero-ftrace report -i loaderN.trace --diff slice.trace"
			timeout 60 "$ift" report -i "$work/loaderN.trace" --diff "$work/slice.trace" \
				>"$work/diff-slice.report.txt" 2>&1 || status=1
			show "$work/diff-slice.report.txt"
		fi
	else
		say ""
		say "report has no --diff: skipped the loaderN/direct and loaderN/slice comparisons"
	fi
fi

# ---- d. tracefs left clean --------------------------------------------------
step d "tracefs left clean"
leftovers() {
	local n ours dirs
	n=$(grep -c . $tfs/uprobe_events)
	ours=$(grep -c 'ingero_' $tfs/uprobe_events)
	dirs=$(find $tfs/instances $tfs/events -maxdepth 1 -name 'ingero_*' 2>/dev/null | paste -sd ' ')
	say "uprobe_events: $n entries ($uprobes_before before), $ours of ours; instances/events ingero_*: ${dirs:-none}"
	[ "$ours" = 0 ] && [ -z "$dirs" ] && [ "$n" -le "$uprobes_before" ]
}
if leftovers; then
	say "tracefs: CLEAN"
else
	say "tracefs: NOT CLEAN; running ingero-ftrace check --cleanup"
	timeout 60 "$ift" check --cleanup >"$work/cleanup.txt" 2>&1
	show "$work/cleanup.txt"
	leftovers && say "tracefs: clean after check --cleanup"
	status=1
fi
say "runs with a trace: ${ran[*]:-none}"

finish "$status"
