#!/usr/bin/env bash
# pyebpf's own cost in continuous mode: `record -a --continuous` at 19 Hz and
# 99 Hz, each for DURATION seconds (default 600), on a host running NPROCS
# (default 20) Python processes that each work 5 ms in every 50 ms. Reports
# pyebpf's CPU (user + system, as a share of one core), its peak RSS
# (VmHWM) and the interval files written. The BPF program's own time is spent
# in the sampled tasks; `record` prints it per sample at the end.
#   bash bench/continuous.sh [DURATION] [NPROCS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-600}
NPROCS=${2:-20}
PYTHON=${PYTHON:-python3}
PYEBPF=build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

for _ in $(seq "$NPROCS"); do
	"$PYTHON" -c '
import time
def work(n):
    return sum(i * i for i in range(n))
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.005:
        work(1000)
    time.sleep(0.045)
' &
	pids+=($!)
done

ticks=$(getconf CLK_TCK)
printf "%-6s %10s %12s %8s\n" "rate" "CPU/core" "peak RSS" "files"
for hz in 19 99; do
	out="$tmp/out-$hz"
	$PYEBPF record -a -F "$hz" --continuous "$out" --interval 60s 2>"$tmp/err-$hz" &
	pid=$!
	until grep -q "pyebpf: sampling" "$tmp/err-$hz" 2>/dev/null; do sleep 0.05; done
	read -r u0 s0 < <(awk '{print $14, $15}' /proc/$pid/stat)
	sleep "$DURATION"
	read -r u1 s1 < <(awk '{print $14, $15}' /proc/$pid/stat)
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
	kill -TERM $pid
	wait $pid
	cpu=$(echo "100 * ($u1 + $s1 - $u0 - $s0) / $ticks / $DURATION" | bc -l)
	printf "%-6s %9.2f%% %9d kB %8d\n" "${hz}Hz" "$cpu" "$hwm" "$(ls "$out" | wc -l)"
done
echo "($NPROCS Python processes, $DURATION s per rate, $(nproc) CPUs)"
