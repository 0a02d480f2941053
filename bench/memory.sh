#!/usr/bin/env bash
# What `pyebpf record --mode memory` costs an allocation-heavy Python program,
# side by side with memray (`memray run`, the memory profiler a user would
# pick instead), in one run, interleaved (this machine is noisy: read the
# medians and ratios):
#   bash bench/memory.sh [ROUNDS] [SIZE]      (default 5 rounds, SIZE 4500: ~2.5 min)
#   bash bench/memory.sh stats                (the kernel statistics' line alone, ~10 s)
# The program: bench/memload.py SIZE, a dict/list builder (small records,
# lists of small objects, strings, 64 KiB-1 MiB buffers; a quarter kept in a
# pool that is halved when full, so its resident memory grows to ~130 MB and
# churns: ~500 MiB of growth in ~5 s, ~1,000 samples at the default rate).
# Each is launched by the tool, on Debian's python3.11 (the interpreter
# memray's venv is made of), alone, under pyebpf at the default rate
# (--mode memory, a sample every 512 KiB of growth, pprof written to a temp
# file) and under memray 1.20.0 (its default: every malloc/free of the
# system allocator, pymalloc's not traced; its capture file in a temp dir),
# in the order alone, A, alone, B, alone, ... with A and B swapping each
# round. A run's slowdown is its time over the mean of the alone runs either
# side of it, the median over ROUNDS: by the program's own clock over its
# work ("program": what the program feels while profiled, the tool's start
# and finish left out), by its CPU time over the same work (which leaves out
# other programs and the hypervisor taking the CPU; the kernel counts
# pyebpf's BPF time, run in the program's page faults, to the program), and
# end to end (from the command to its exit: pyebpf's BPF set-up, detaching
# and pprof writing, memray's import and capture file included). For pyebpf:
# its own CPU (the run's user + system time less the program's process's,
# less the same difference alone; in brackets what its summary says it spent
# while recording), its summary's BPF time per sample taken, samples taken
# and lost (the sums over ROUNDS); then, from one more run attached to the
# program, its whole BPF time from the kernel's statistics (per sample and as
# a share of the program's CPU: the summary's figure times only the samples
# taken; the page hook runs on every process's pages, so the program's part
# of it too), and a last line of ratios.
# memray, from the package registry into a venv in the cache, once:
#   /var/cache/pyebpf/peers/memray-venv (MEMRAY_VENV to move it).
# Results go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/retry.sh
. .ci/retry.sh
STATS_ONLY=false
if [ "${1:-}" = stats ]; then
	STATS_ONLY=true
	shift
fi
ROUNDS=${1:-5}
SIZE=${2:-4500}
PYTHON=/usr/bin/python3.11
MEMRAY_VERSION=1.20.0
VENV=${MEMRAY_VENV:-/var/cache/pyebpf/peers/memray-venv}
PYEBPF=${PYEBPF:-build/pyebpf}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$PYEBPF" ] || { echo "bench: run 'make' first" >&2; exit 1; }
[ -x $PYTHON ] || { echo "bench: needs Debian's python3.11 (apt-get install python3.11-venv)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! $STATS_ONLY && ! "$VENV/bin/memray" --version 2>/dev/null | grep -qx "$MEMRAY_VERSION"; then
	rm -rf "$VENV"
	$PYTHON -m venv "$VENV"
	retry "memray $MEMRAY_VERSION (PyPI)" "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
		--only-binary :all: "memray==$MEMRAY_VERSION" >&2
fi

# One run: TOOL (alone, pyebpf, memray). Appends "PROGRAM_WALL PROGRAM_CPU
# END_TO_END RUN_CPU PROGRAM_PROCESS_CPU" to $tmp/t.TOOL; pyebpf's summary
# lines to $tmp/cost.
run() {
	local tool=$1 cmd t0 t1
	case $tool in
	alone) cmd=("$PYTHON" bench/memload.py "$SIZE") ;;
	pyebpf) cmd=("$PYEBPF" record --mode memory -o "$tmp/m.pb.gz" -- "$PYTHON" bench/memload.py "$SIZE") ;;
	memray) cmd=("$VENV/bin/memray" run -q -f -o "$tmp/m.bin" bench/memload.py "$SIZE") ;;
	esac
	rm -f "$tmp/m.pb.gz" "$tmp/m.bin"
	t0=$(date +%s.%N)
	python3 bench/peers/rusage.py "$tmp/rusage" -- "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" ||
		{ echo "bench: $tool run failed:" >&2; cat "$tmp/err" >&2; exit 1; }
	t1=$(date +%s.%N)
	grep -q '^memload: ' "$tmp/out" || { echo "bench: $tool: no memload line" >&2; cat "$tmp/out" "$tmp/err" >&2; exit 1; }
	case $tool in
	pyebpf)
		[ -s "$tmp/m.pb.gz" ] || { echo "bench: pyebpf wrote no profile" >&2; cat "$tmp/err" >&2; exit 1; }
		grep -E 'memory samples from|cost:' "$tmp/err" >>"$tmp/cost" ;;
	memray)
		[ -s "$tmp/m.bin" ] || { echo "bench: memray wrote no capture file" >&2; cat "$tmp/err" >&2; exit 1; }
		echo $(($(stat -c %s "$tmp/m.bin") / 1024)) >>"$tmp/size.memray" ;;
	esac
	# memload: N units, W s wall, C s CPU (R units/s), peak RSS M MB, process CPU P s
	awk -v e2e="$(echo "$t1 - $t0" | bc -l)" -v run="$(cut -d' ' -f1 "$tmp/rusage")" \
		'/^memload: / {print $4, $7, e2e, run, $(NF-1)}' "$tmp/out" >>"$tmp/t.$tool"
}

# The run's CPU (its children's included) less the program's process's
# (getrusage before the interpreter's finalization): the tool's own, and
# the program's finalization and exit, which the alone runs tell.
own() { awk '{print $4 - $5}' "$tmp/t.$1" | median; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
col() { cut -d' ' -f"$1" "$2"; }           # column K of FILE
last() { tail -n1 "$tmp/t.$1" | cut -d' ' -f"$2"; } # column K of TOOL's last run

# pyebpf's whole BPF time, from the kernel's statistics (pyebpf turns them
# on in memory mode with PYEBPF_BPF_STATS=1: they time every BPF program on
# the machine, so not by default): the summary's "us per sample taken" times the samples taken, but its
# page hook runs on every page the program gains, sampled or not, and the
# munmap/brk/madvise/mremap hooks on each call. Once, attached (-p) for 4 s
# to a long run of the program: the run time of pyebpf's BPF programs (its
# file descriptors' fdinfo, read every 50 ms until they close) over the
# program's CPU time meanwhile (its schedstat: the BPF time, run in its page
# faults, is in it). The page hook runs on every process's pages (it keeps
# the targets' in BPF): its runs are the machine's, its time a little more
# than the program's share. The page hook is whichever serves: fentry on the
# kernel's anon-rmap function, or (where the kernel refuses fentry) the
# mm_lru_insertion tracepoint; either program's fd has the statistics.
# Writes "BPF_NS PROGRAM_NS HOOK_RUNS SAMPLES MAPPED".
bpf_whole() {
	local prog rec r last="0 0 0" cpu0=
	"$PYTHON" bench/memload.py 1000000 >/dev/null & # stopped once pyebpf is done
	prog=$!
	sleep 0.5
	PYEBPF_BPF_STATS=1 "$PYEBPF" record --mode memory -p $prog -d 4 -o "$tmp/a.pb.gz" 2>"$tmp/a.err" &
	rec=$!
	while kill -0 $rec 2>/dev/null; do
		if [ -z "$cpu0" ] && grep -q 'pyebpf: sampling' "$tmp/a.err"; then
			cpu0=$(cut -d' ' -f1 /proc/$prog/schedstat)
		fi
		# total run time, the busiest program's runs (the page hook), the program's CPU
		r=$(awk '/^run_time_ns:/ {t += $2} /^run_cnt:/ && $2 > n {n = $2} END {print t + 0, n + 0}' \
			/proc/$rec/fdinfo/* 2>/dev/null || true)
		r+=" $(cut -d' ' -f1 /proc/$prog/schedstat 2>/dev/null || echo 0)"
		# kept while it grows: the fds close one by one as pyebpf stops
		[ -n "$cpu0" ] && [ "${r%% *}" -gt "${last%% *}" ] 2>/dev/null && last=$r
		sleep 0.05
	done
	wait $rec || true # a failed recording is said below, in a line
	kill $prog 2>/dev/null || true
	wait $prog 2>/dev/null || true
	read -r bns runs cpu1 <<<"$last"
	echo "$bns $((cpu1 - ${cpu0:-$cpu1})) $runs $(grep -o '[0-9]* memory samples' "$tmp/a.err" | cut -d' ' -f1)" \
		"$(grep -o 'mapped in [0-9.]* [KMG]\?i\?B' "$tmp/a.err" | cut -d' ' -f3-)" >"$tmp/whole"
	grep -E 'cost:' "$tmp/a.err" | grep -o 'BPF [0-9.]* us' | cut -d' ' -f2 >"$tmp/whole.summary" || true
}

# The line of the kernel's statistics, or one line saying why they could not be read (never a
# division by zero: a hook whose runs were not counted, a recording that failed).
whole_line() {
	local bns pns runs wtaken mapped tus pages mine hook why=
	read -r bns pns runs wtaken mapped <"$tmp/whole" || true
	tus=$(cat "$tmp/whole.summary")
	if grep -q 'refuses fentry' "$tmp/a.err"; then
		hook="the mm_lru_insertion tracepoint (the kernel refuses fentry)"
	else
		hook="fentry"
	fi
	if ! grep -q 'pyebpf: sampling' "$tmp/a.err"; then
		why="the recording attached to the program failed: $(grep -v '^$' "$tmp/a.err" | tail -n1)"
	elif ! [ "${runs:-0}" -gt 0 ] 2>/dev/null; then
		why="no run of pyebpf's programs was counted (its page hook at $hook; kernel.bpf_stats_enabled is $(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo unknown) after the run)"
	elif ! [ "${wtaken:-0}" -gt 0 ] 2>/dev/null || [ -z "$tus" ]; then
		why="the recording took no memory sample in 4 s"
	elif ! [ "${pns:-0}" -gt 0 ] 2>/dev/null || [ -z "$mapped" ]; then
		why="the program's CPU time or the memory it mapped in was not read"
	fi
	if [ -n "$why" ]; then
		echo "pyebpf BPF, all of it (kernel statistics, attached 4 s): not read: $why"
		return
	fi
	# The program's part: the samples' time (the summary's) and of the rest the
	# share of its pages among the hook's runs (the program's pages: what the
	# summary says it mapped in, in 4 KiB pages).
	pages=$(echo "$mapped" | awk '{print int($1 * ($2 == "GiB" ? 2^30 : $2 == "MiB" ? 2^20 : $2 == "KiB" ? 2^10 : 1) / 4096)}')
	mine=$(echo "$wtaken * $tus * 1000 + ($bns - $wtaken * $tus * 1000) * $pages / $runs" | bc -l)
	printf 'pyebpf BPF, all of it (kernel statistics, attached 4 s, its page hook at %s): %.1f ms, %.2f us per sample (%s samples; the summary: %s us per sample taken), %.2f%% of the program'"'"'s CPU time; its page hook ran %s times (%.0f ns a run), %s of them the program'"'"'s pages (it mapped in %s), the rest other processes'"'"': the program'"'"'s part %.2f us per sample, %.2f%% of its CPU time\n' \
		"$hook" "$(echo "$bns / 1000000" | bc -l)" "$(echo "$bns / 1000 / $wtaken" | bc -l)" "$wtaken" "$tus" \
		"$(echo "$bns * 100 / $pns" | bc -l)" "$runs" "$(echo "$bns / $runs" | bc -l)" "$pages" "$mapped" \
		"$(echo "$mine / 1000 / $wtaken" | bc -l)" "$(echo "$mine * 100 / $pns" | bc -l)"
}

if $STATS_ONLY; then
	bpf_whole
	whole_line
	exit 0
fi

run alone
for i in $(seq "$ROUNDS"); do
	order=(pyebpf memray)
	[ $((i % 2)) = 0 ] && order=(memray pyebpf)
	for tool in "${order[@]}"; do
		before=$(tail -n1 "$tmp/t.alone")
		run "$tool"
		run alone
		after=$(tail -n1 "$tmp/t.alone")
		for k in 1 2 3; do # the ratio to the mean of the alone runs either side, by each clock
			a=$(echo "$before" | cut -d' ' -f$k) b=$(echo "$after" | cut -d' ' -f$k)
			echo "$(last "$tool" $k) / (($a + $b) / 2)" | bc -l >>"$tmp/ratio.$tool.$k"
		done
	done
	echo "round $i/$ROUNDS done" >&2
done
bpf_whole

pct() { printf '%+.2f%%' "$(echo "($1 - 1) * 100" | bc -l)"; }
# A column of ratios: "MEDIAN% (MIN% to MAX%)", the spread of the rounds.
slow() { printf '%s (%s to %s)' "$(pct "$(median <"$1")")" "$(pct "$(sort -g "$1" | head -n1)")" "$(pct "$(sort -g "$1" | tail -n1)")"; }
echo "bench/memload.py $SIZE on $($PYTHON -V), launched alone, under pyebpf $(git rev-parse --short HEAD) record --mode memory (default rate) and under memray $MEMRAY_VERSION run; $ROUNDS rounds interleaved, medians; $(nproc) CPUs, Linux $(uname -r)"
echo "Command: bash bench/memory.sh $ROUNDS $SIZE"
echo
echo "| run | program wall | slowdown (rounds' range) | by CPU time | end to end | slowdown | profiler's own |"
echo "|---|---|---|---|---|---|---|"
printf '| alone | %.3f s | | | %.3f s | | |\n' "$(col 1 "$tmp/t.alone" | median)" "$(col 3 "$tmp/t.alone" | median)"
for tool in pyebpf memray; do
	if [ "$tool" = pyebpf ]; then
		rec=$(grep -o 'pyebpf [0-9.]* s CPU while recording' "$tmp/cost" | awk '{print $2}' | median)
		bpf=$(grep -o 'BPF [0-9.]* us per sample' "$tmp/cost" | awk '{print $2}' | median)
		taken=$(grep -o '[0-9]* memory samples' "$tmp/cost" | awk '{s+=$1} END {print s+0}')
		lost=$(grep -o ', [0-9]* lost' "$tmp/cost" | awk '{s+=$2} END {print s+0}')
		own=$(printf '%.3f s CPU (%s s while recording), BPF %s us/sample, %s samples, %s lost' \
			"$(echo "$(own pyebpf) - $(own alone)" | bc -l)" "$rec" "$bpf" "$taken" "$lost")
	else
		own=$(printf 'in the program: %.3f s CPU more than alone; capture file %s kB' \
			"$(echo "$(col 4 "$tmp/t.memray" | median) - $(col 4 "$tmp/t.alone" | median)" | bc -l)" \
			"$(median <"$tmp/size.memray")")
	fi
	printf '| %s | %.3f s | %s | %s | %.3f s | %s | %s |\n' "$tool" \
		"$(col 1 "$tmp/t.$tool" | median)" "$(slow "$tmp/ratio.$tool.1")" \
		"$(slow "$tmp/ratio.$tool.2")" "$(col 3 "$tmp/t.$tool" | median)" \
		"$(slow "$tmp/ratio.$tool.3")" "$own"
done
echo
whole_line
p=$(median <"$tmp/ratio.pyebpf.1") m=$(median <"$tmp/ratio.memray.1")
printf 'ratios (program wall, median of paired): pyebpf/alone %.4f, memray/alone %.4f, memray/pyebpf %.4f\n' \
	"$p" "$m" "$(echo "$m / $p" | bc -l)"
