#!/usr/bin/env bash
# Overhead of `pyebpf record -a` on a CPU-bound workload, measured side by side.
# Each round runs the workload alone, under pyebpf at 99 Hz, alone, under
# pyebpf at 999 Hz, alone (and under `perf record -a -g` at both rates when
# perf is installed: the reference for what the timer interrupts alone cost on
# this machine). A run's slowdown is its time over the mean of the two alone
# runs around it; the report gives the median over ROUNDS, pyebpf's own cost
# per sample (userspace CPU while recording, time in the BPF program) and the
# samples lost.
#   bash bench/overhead.sh [ROUNDS] [c|python|native]
# c: a frame-pointer C loop (build/fixtures/busy); python: bench/pyload.py
# under $PYTHON (default python3), with Python stacks walked in BPF; native:
# the same Python workload under plain Python mode and under --native (user
# stack copied in BPF, unwound with libdw and merged), side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
KIND=${2:-c}
PYTHON=${PYTHON:-python3}
PYEBPF=build/pyebpf
BUSY=build/fixtures/busy
case $KIND in
c) WORKLOAD=("$BUSY" --work 2400000000) ;;
python | native) WORKLOAD=("$PYTHON" bench/pyload.py 400) ;;
*) echo "bench: unknown workload '$KIND' (c, python or native)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] && [ -x $BUSY ] || { echo "bench: run 'make bench'" >&2; exit 1; }
PERF=$(command -v perf || true) # optional: Debian's linux-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
timed() { local t0; t0=$(now); "$@" >/dev/null; echo "$(now) - $t0" | bc -l; }

under_pyebpf() { # HZ [OPTION...]: one timed run under pyebpf -a; its summary lines to $tmp/cost.HZ
	local hz=$1 pid t cost
	shift
	cost=$tmp/cost.$hz${1:+.native} # options given: the --native run
	$PYEBPF record -a -F "$hz" "$@" -o "$tmp/p.folded" 2>"$tmp/err" &
	pid=$!
	until grep -q "pyebpf: sampling" "$tmp/err" 2>/dev/null; do sleep 0.05; done
	t=$(timed "${WORKLOAD[@]}")
	kill -INT $pid
	wait $pid
	grep -E 'samples from|cost:' "$tmp/err" >>"$cost"
	echo "$t"
}

under_native() { under_pyebpf "$1" --native; }

under_perf() { # HZ
	local hz=$1 pid t
	perf record -a -g -F "$hz" -o "$tmp/perf.data" >/dev/null 2>&1 &
	pid=$!
	sleep 1
	t=$(timed "${WORKLOAD[@]}")
	kill -INT $pid
	wait $pid || true
	echo "$t"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

runs=(pyebpf:99 pyebpf:999)
if [ "$KIND" = native ]; then
	runs=(pyebpf:99 native:99 pyebpf:999 native:999)
elif [ -n "$PERF" ]; then
	runs+=(perf:99 perf:999)
fi
for i in $(seq "$ROUNDS"); do
	before=$(timed "${WORKLOAD[@]}")
	echo "$before" >>"$tmp/alone"
	for r in "${runs[@]}"; do
		tool=${r%:*} hz=${r#*:}
		t=$(under_$tool "$hz")
		after=$(timed "${WORKLOAD[@]}")
		echo "$after" >>"$tmp/alone"
		echo "$t / (($before + $after) / 2)" | bc -l >>"$tmp/ratio.$tool.$hz"
		before=$after
	done
	echo "round $i/$ROUNDS done" >&2
done

printf 'workload: %s (single-threaded, CPU-bound), %s rounds\n' "${WORKLOAD[*]}" "$ROUNDS"
printf '%-40s median %.3f s\n' "alone" "$(median <"$tmp/alone")"
for r in "${runs[@]}"; do
	tool=${r%:*} hz=${r#*:}
	ratio=$(median <"$tmp/ratio.$tool.$hz")
	label="under $tool record -a -F $hz"
	cost="$tmp/cost.$hz"
	[ "$tool" = native ] && label="under pyebpf record -a --native -F $hz" cost="$tmp/cost.$hz.native"
	line=$(printf '%-40s slowdown %+.2f%% (median of paired ratios)' "$label" \
		"$(echo "($ratio - 1) * 100" | bc -l)")
	if [ "$tool" != perf ]; then
		us=$(grep -o '(.* us per sample)' "$cost" | tr -d '()' | awk '{print $1}' | median)
		bpf=$(grep -o 'BPF [0-9.]* us' "$cost" | awk '{print $2}' | median)
		lost=$(grep -o '), [0-9]* lost' "$cost" | awk '{s+=$2} END {print s+0}')
		line+=$(printf '  pyebpf %s us/sample, BPF %s us/sample, %s lost' "$us" "$bpf" "$lost")
	fi
	echo "$line"
done
