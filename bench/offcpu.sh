#!/usr/bin/env bash
# What --mode wall costs, measured side by side.
#  1. A context-switch-heavy workload (build/bench/pingpong: two processes on
#     one CPU handing a byte over pipes, every hand-over a switch) alone,
#     under `pyebpf record -a --mode wall -F 99` (a target), alone, under
#     `--mode wall -p` of an idle process (not a target: what every other
#     process on the host pays), alone, under `--mode cpu`, alone, under
#     --mode wall with a switch hook that returns at once (the floor of any
#     design that runs a program per switch), alone: a run's slowdown is its
#     time over the mean of the two alone runs around it; the median over
#     ROUNDS.
#  2. The BPF time of the switch hook per context switch, the ping-pong a
#     target, not a target, and the empty hook (bpf_stats, in separate runs:
#     the statistics cost a switch ~70 ns themselves).
#  3. pyebpf's own CPU in `--mode wall -a -F 99` on an idle machine with
#     1000 sleeping threads (build/bench/sleepers).
#   bash bench/offcpu.sh [ROUNDS] [SWITCH_ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
PP_ROUNDS=${2:-1000000}
PYEBPF=build/pyebpf
PINGPONG=build/bench/pingpong
SLEEPERS=build/bench/sleepers
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] && [ -x $PINGPONG ] && [ -x $SLEEPERS ] || { echo "bench: run 'make bench'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pp() { $PINGPONG "$PP_ROUNDS" | awk '{print $4}'; } # its own time, in seconds

# A process that is not the ping-pong and never switches: -p of it makes the
# ping-pong's switches those of a non-target.
sleep 100000 &
idle=$!
trap 'kill $idle 2>/dev/null; rm -rf "$tmp"' EXIT

under() { # MODE: one pingpong run under pyebpf; its summary to $tmp/err.MODE
	local mode=$1 pid t
	# "empty": --mode wall with a switch hook that returns at once (the floor:
	# what running any BPF program at each context switch costs here).
	if [ "$mode" = empty ]; then
		PYEBPF_BENCH_EMPTY_HOOK=1 $PYEBPF record -a --mode wall -F 99 -o "$tmp/p.folded" 2>"$tmp/err" &
	elif [ "$mode" = nontarget ]; then
		$PYEBPF record -p $idle --no-children --mode wall -F 99 -o "$tmp/p.folded" 2>"$tmp/err" &
	else
		$PYEBPF record -a --mode "$mode" -F 99 -o "$tmp/p.folded" 2>"$tmp/err" &
	fi
	pid=$!
	until grep -q "pyebpf: sampling" "$tmp/err" 2>/dev/null; do sleep 0.05; done
	t=$(pp)
	kill -INT $pid
	wait $pid
	cat "$tmp/err" >>"$tmp/err.$mode"
	echo "$t"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for i in $(seq "$ROUNDS"); do
	before=$(pp)
	for mode in wall nontarget cpu empty; do
		t=$(under $mode)
		after=$(pp)
		echo "$t / (($before + $after) / 2)" | bc -l >>"$tmp/ratio.$mode"
		echo "$before" >>"$tmp/alone"
		before=$after
	done
	echo "round $i/$ROUNDS done" >&2
done
# The hook's own time, from the kernel's statistics: the ping-pong a target,
# not a target, and the empty hook.
for i in 1 2 3; do
	PYEBPF_BPF_STATS=1 $PYEBPF record -a --mode wall -F 99 -o "$tmp/p.folded" -- $PINGPONG "$PP_ROUNDS" \
		>>"$tmp/stats" 2>&1
	for other in nontarget empty; do
		if [ $other = empty ]; then
			envs=(PYEBPF_BPF_STATS=1 PYEBPF_BENCH_EMPTY_HOOK=1) targets=(-a)
		else
			envs=(PYEBPF_BPF_STATS=1) targets=(-p "$idle" --no-children)
		fi
		env "${envs[@]}" $PYEBPF record "${targets[@]}" --mode wall -F 99 -o "$tmp/p.folded" \
			2>"$tmp/err.stats" &
		pid=$!
		until grep -q "pyebpf: sampling" "$tmp/err.stats" 2>/dev/null; do sleep 0.05; done
		$PINGPONG "$PP_ROUNDS" >/dev/null
		kill -INT $pid
		wait $pid
		cat "$tmp/err.stats" >>"$tmp/stats.$other"
	done
done
# pyebpf's own CPU with 1000 threads asleep and nothing else running.
$SLEEPERS 1000 40 >"$tmp/sleepers.out" &
sleepers=$!
until grep -q asleep "$tmp/sleepers.out" 2>/dev/null; do sleep 0.05; done
$PYEBPF record -a --mode wall -F 99 -d 20 -o "$tmp/idle.folded" 2>"$tmp/idle"
kill $sleepers
wait $sleepers 2>/dev/null || true

switches=$(grep -o '([0-9]*/s)' "$tmp/stats" | tr -d '(/s)' | median)
printf 'workload: %s %s (%s context switches a second alone, on one CPU), %s rounds\n' "$PINGPONG" "$PP_ROUNDS" \
	"$switches" "$ROUNDS"
printf '%-44s median %.3f s\n' "alone" "$(median <"$tmp/alone")"
for mode in wall nontarget cpu empty; do
	label="under pyebpf record -a --mode $mode -F 99"
	[ $mode = nontarget ] && label="under --mode wall -p OTHER (not a target)"
	[ $mode = empty ] && label="an empty BPF program on sched_switch"
	printf '%-44s slowdown %+.2f%% (median of paired ratios)\n' "$label" \
		"$(echo "($(median <"$tmp/ratio.$mode") - 1) * 100" | bc -l)"
done
printf '%-44s %s ns per context switch (bpf_stats, median of 3 runs)\n' "BPF of the switch hook, a target" \
	"$(grep -o 'BPF [0-9]* ns each' "$tmp/stats" | awk '{print $2}' | median)"
printf '%-44s %s ns per context switch\n' "BPF of the switch hook, not a target" \
	"$(grep -o 'BPF [0-9]* ns each' "$tmp/stats.nontarget" | awk '{print $2}' | median)"
printf '%-44s %s ns per context switch\n' "BPF of an empty hook" \
	"$(grep -o 'BPF [0-9]* ns each' "$tmp/stats.empty" | awk '{print $2}' | median)"
cpu=$(grep -o 'pyebpf [0-9.]* s CPU' "$tmp/idle" | awk '{print $2}')
secs=$(grep -o ' in [0-9.]* s ' "$tmp/idle" | awk '{print $2}')
printf '%-44s %.2f%% of a core (%s s CPU in %s s; %s)\n' "pyebpf, idle machine, 1000 sleeping threads" \
	"$(echo "$cpu * 100 / $secs" | bc -l)" "$cpu" "$secs" \
	"$(grep -o 'off-CPU: [0-9]* samples ([0-9.]* s of waiting) in [0-9]* records' "$tmp/idle")"
