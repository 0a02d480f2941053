#!/usr/bin/env bash
# What the sampler's BPF program costs per sample, by Python stack depth,
# side by side with bpftrace's `profile` probe taking frame-pointer kernel
# and user stacks of the same workload (the floor of any eBPF stack sampler).
# For each depth (bench/deep.py: one CPU-bound process per CPU), ROUNDS
# rounds of: pyebpf record -p for SECONDS at 999 Hz (its BPF time per
# sample from the kernel's statistics), then bpftrace for SECONDS with the
# kernel's statistics on (bpftool reads its program's run time). Reports the
# medians, and the fixed cost and cost per Python frame fitted over depths.
#   bash bench/bpfcost.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
PYTHON=${PYTHON:-python3}
PYEBPF=${PYEBPF:-build/pyebpf} # another build to compare: PYEBPF=/path/to/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
BPFTRACE=$(command -v bpftrace || true)
tmp=$(mktemp -d)
pids=()
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	kill -KILL "${pids[@]}" 2>/dev/null || true
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

bpftrace_us() { # PIDLIST: BPF us per run of bpftrace's profile program over SECS
	local id runs ns
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	"$BPFTRACE" -e "profile:hz:999 /$1/ { @[kstack, ustack] = count(); }" >/dev/null 2>&1 &
	local bt=$!
	sleep 2 # attached
	id=$(bpftool prog show -j | python3 -c '
import json, sys
progs = [p for p in json.load(sys.stdin) if p.get("type") == "perf_event" and p.get("name", "") == "999"]  # bpftrace names it by the rate
print(progs[-1]["id"] if progs else "")')
	[ -n "$id" ] || { kill -INT $bt; wait $bt || true; echo "?"; return; }
	read -r runs ns < <(bpftool prog show id "$id" -j | python3 -c '
import json, sys; p = json.load(sys.stdin); print(p.get("run_cnt", 0), p.get("run_time_ns", 0))')
	sleep "$SECS"
	read -r runs2 ns2 < <(bpftool prog show id "$id" -j | python3 -c '
import json, sys; p = json.load(sys.stdin); print(p.get("run_cnt", 0), p.get("run_time_ns", 0))')
	kill -INT $bt
	wait $bt || true
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	printf '%.2f\n' "$(echo "($ns2 - $ns) / ($runs2 - $runs) / 1000" | bc -l)"
}

ncpu=$(nproc)
printf '%6s | %14s | %14s\n' depth "pyebpf BPF us" "bpftrace us"
for depth in 10 50 150 300; do
	procs=()
	for _ in $(seq "$ncpu"); do
		"$PYTHON" bench/deep.py "$depth" 1 &
		procs+=($!)
		disown $!
	done
	pids+=("${procs[@]}")
	sleep 1
	list=$(IFS=,; echo "${procs[*]}")
	filter=$(printf 'pid == %s || ' "${procs[@]}" | sed 's/ || $//')
	for _ in $(seq "$ROUNDS"); do
		$PYEBPF record -p "$list" -F 999 -d "$SECS" -o "$tmp/p.folded" 2>"$tmp/err"
		grep -o 'BPF [0-9.]* us' "$tmp/err" | awk '{print $2}' >>"$tmp/py.$depth"
		if [ -n "$BPFTRACE" ]; then
			bpftrace_us "$filter" >>"$tmp/bt.$depth"
		fi
	done
	kill -KILL "${procs[@]}"
	py=$(median <"$tmp/py.$depth")
	bt=$([ -n "$BPFTRACE" ] && median <"$tmp/bt.$depth" || echo "n/a")
	printf '%6s | %14.2f | %14s\n' "$depth" "$py" "$bt"
	echo "$depth $py" >>"$tmp/fit"
done
# Least squares: us = fixed + per_frame x depth.
awk '{n++; sx+=$1; sy+=$2; sxx+=$1*$1; sxy+=$1*$2}
END {b=(n*sxy-sx*sy)/(n*sxx-sx*sx); a=(sy-b*sx)/n;
     printf "pyebpf: %.2f us fixed + %.3f us per Python frame (fitted over depths)\n", a, b}' "$tmp/fit"
