#!/usr/bin/env bash
# Overhead of `pyebpf record -a` on a CPU-bound workload, measured side by side:
# the workload alone and under pyebpf at 99 Hz and 999 Hz, interleaved, ROUNDS
# times; reports median wall times, their ratios, and pyebpf's own cost per
# sample (userspace CPU while recording, and time in the BPF program). When
# perf is installed, `perf record -a -g` at the same rates runs beside it: the
# reference for what the timer interrupts alone cost on this machine.
#   bash bench/overhead.sh [ROUNDS] [c|python]
# c: a frame-pointer C loop (build/fixtures/busy); python: bench/pyload.py
# under $PYTHON (default python3), with Python stacks walked in BPF.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
KIND=${2:-c}
PYTHON=${PYTHON:-python3}
PYEBPF=build/pyebpf
BUSY=build/fixtures/busy
case $KIND in
c) WORKLOAD=("$BUSY" --work 2400000000) ;;
python) WORKLOAD=("$PYTHON" bench/pyload.py 400) ;;
*) echo "bench: unknown workload '$KIND' (c or python)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] && [ -x $BUSY ] || { echo "bench: run 'make bench'" >&2; exit 1; }
PERF=$(command -v perf || true) # optional: Debian's linux-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
timed() { local t0; t0=$(now); "$@" >/dev/null; echo "$(now) - $t0" | bc -l; }

under() { # HZ: one timed workload run under pyebpf -a at HZ; cost lines to $tmp/cost.HZ
	local hz=$1 pid t
	$PYEBPF record -a -F "$hz" -o "$tmp/p.folded" 2>"$tmp/err" &
	pid=$!
	sleep 1 # loaded and attached
	t=$(timed "${WORKLOAD[@]}")
	kill -INT $pid
	wait $pid
	grep -E 'samples from|cost:' "$tmp/err" >>"$tmp/cost.$hz"
	echo "$t"
}

perf_under() { # HZ: the same under `perf record -a -g`, the reference for the timer's own cost
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

for i in $(seq "$ROUNDS"); do
	timed "${WORKLOAD[@]}" >>"$tmp/base"
	under 99 >>"$tmp/hz99"
	timed "${WORKLOAD[@]}" >>"$tmp/base"
	under 999 >>"$tmp/hz999"
	if [ -n "$PERF" ]; then
		perf_under 99 >>"$tmp/perf99"
		perf_under 999 >>"$tmp/perf999"
	fi
	echo "round $i/$ROUNDS done" >&2
done

base=$(median <"$tmp/base")
printf 'workload: %s (single-threaded, CPU-bound), %s rounds, interleaved\n' "${WORKLOAD[*]}" "$ROUNDS"
printf '%-28s median %.3f s\n' "alone" "$base"
for hz in 99 999; do
	m=$(median <"$tmp/hz$hz")
	us=$(grep -o '[0-9.]* us per sample)' "$tmp/cost.$hz" | tr -d ' us per sample)' | median)
	bpf=$(grep -o 'BPF [0-9.]* us' "$tmp/cost.$hz" | awk '{print $2}' | median)
	lost=$(grep -o '), [0-9]* lost' "$tmp/cost.$hz" | awk '{s+=$2} END {print s+0}')
	printf '%-28s median %.3f s  ratio %.4f (%+.2f%%)  pyebpf %s us/sample, BPF %s us/sample, %s lost\n' \
		"under record -a -F $hz" "$m" "$(echo "$m / $base" | bc -l)" "$(echo "($m / $base - 1) * 100" | bc -l)" \
		"$us" "$bpf" "$lost"
done
for hz in 99 999; do
	[ -s "$tmp/perf$hz" ] || continue
	m=$(median <"$tmp/perf$hz")
	printf '%-28s median %.3f s  ratio %.4f (%+.2f%%)\n' "under perf record -a -g -F $hz" "$m" \
		"$(echo "$m / $base" | bc -l)" "$(echo "($m / $base - 1) * 100" | bc -l)"
done
