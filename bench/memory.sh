#!/usr/bin/env bash
# What `pyebpf record --mode memory` costs an allocation-heavy Python program,
# side by side with memray (`memray run`, the memory profiler a user would
# pick instead), in one run, interleaved (this machine is noisy: read the
# medians and ratios):
#   bash bench/memory.sh [ROUNDS] [SIZE]      (default 5 rounds, SIZE 4500: ~3 min)
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
# end to end (from the command to its exit: pyebpf's BPF set-up and pprof
# writing, memray's import and capture file included). For pyebpf: its own
# CPU (the run's user + system time less the program's process's; in
# brackets what its summary says it spent while recording), its summary's
# BPF time per sample taken, samples taken and lost (the sums over ROUNDS).
# memray, from the package registry into a venv in the cache, once:
#   /var/cache/pyebpf/peers/memray-venv (MEMRAY_VENV to move it).
# Results go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
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

if ! "$VENV/bin/memray" --version 2>/dev/null | grep -qx "$MEMRAY_VERSION"; then
	rm -rf "$VENV"
	$PYTHON -m venv "$VENV"
	"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
		"memray==$MEMRAY_VERSION" >&2
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

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
col() { cut -d' ' -f"$1" "$2"; }           # column K of FILE
last() { tail -n1 "$tmp/t.$1" | cut -d' ' -f"$2"; } # column K of TOOL's last run

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
		# the tool's own CPU: the run's (its children's included) less the program's process's
		echo "$(last "$tool" 4) - $(last "$tool" 5)" | bc -l >>"$tmp/own.$tool"
	done
	echo "round $i/$ROUNDS done" >&2
done

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
			"$(median <"$tmp/own.pyebpf")" "$rec" "$bpf" "$taken" "$lost")
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
p=$(median <"$tmp/ratio.pyebpf.1") m=$(median <"$tmp/ratio.memray.1")
printf 'ratios (program wall, median of paired): pyebpf/alone %.4f, memray/alone %.4f, memray/pyebpf %.4f\n' \
	"$p" "$m" "$(echo "$m / $p" | bc -l)"
