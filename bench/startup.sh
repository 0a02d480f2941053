#!/usr/bin/env bash
# What starting a recording costs: `pyebpf record -p PID -d 0.3` of an idle
# process, in CPU mode and wall mode, its CPU (user + system, /usr/bin/time)
# and the time until it says it samples. Side by side with another build
# when BEFORE=/path/to/pyebpf is given, rounds interleaved (machines are
# noisy); medians of ROUNDS.
#   bash bench/startup.sh [ROUNDS]
#   BEFORE=/tmp/old/build/pyebpf bash bench/startup.sh 5
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
PYEBPF=${PYEBPF:-build/pyebpf}
BEFORE=${BEFORE:-}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$PYEBPF" ] || { echo "bench: run 'make' first" >&2; exit 1; }
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "bench: BEFORE=$BEFORE is not a program" >&2; exit 1; }
tmp=$(mktemp -d)
sleep 100000 &
idle=$!
trap 'kill $idle 2>/dev/null; rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

one() { # BUILD NAME MODE: one start; CPU seconds and seconds to "sampling" appended
	local build=$1 name=$2 mode=$3 t0 t1
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$build" record -p "$idle" --mode "$mode" -d 0.3 \
		-o "$tmp/out.folded" 2>"$tmp/err" &
	until grep -q 'pyebpf: sampling' "$tmp/err" 2>/dev/null; do sleep 0.002; done
	t1=$(date +%s.%N)
	wait $!
	awk '{print $1 + $2}' "$tmp/time" >>"$tmp/cpu.$name.$mode"
	echo "$t1 - $t0" | bc -l >>"$tmp/lat.$name.$mode"
}

builds=("$PYEBPF")
names=(now)
[ -n "$BEFORE" ] && builds+=("$BEFORE") && names+=(before)
for i in $(seq "$ROUNDS"); do
	for mode in cpu wall; do
		for k in "${!builds[@]}"; do
			one "${builds[$k]}" "${names[$k]}" $mode
		done
	done
	echo "round $i/$ROUNDS done" >&2
done
printf '%-8s %-6s %12s %16s\n' build mode "CPU (s)" "to sampling (s)"
for k in "${!names[@]}"; do
	for mode in cpu wall; do
		printf '%-8s %-6s %12.3f %16.3f\n' "${names[$k]}" $mode "$(median <"$tmp/cpu.${names[$k]}.$mode")" \
			"$(median <"$tmp/lat.${names[$k]}.$mode")"
	done
done
