#!/usr/bin/env bash
# What pyebpf's userspace costs on a large host, measured here: real samples
# are recorded once from bench/deep.py (two processes of two threads each,
# Python stacks 10, 50 and 300 frames deep; with and without --native, raw
# ring-buffer records through PYEBPF_RAW_OUT), the workloads are stopped
# (their memory stays readable, as a live target's), and build/bench/replay
# feeds the records to the ingest path at N CPUs x F Hz, with thread churn
# (a new tid every 10 s per thread) and process churn (one exec a second per
# 64 CPUs: the process is detected and its code read again, as a new one).
#   bash bench/replay.sh [SECONDS] [soak|hour|all|depth]
# prints, per configuration, pyebpf's CPU as a share of one core, RSS, and
# whether it kept up. `hour` adds an hour of a 128-CPU host at 99 Hz in one
# continuous interval, fed as fast as it goes, and the peak RSS of writing its
# pprof; `soak` adds 10 minutes at 128 x 99 Hz with a pprof written every
# 60 s (RSS per interval, growth after the first); `depth` prints only the
# table by depth. REPLAY_BEFORE=PATH (an older build's build/bench/replay)
# adds its figures on the same records beside each depth's.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER=${1:-10}
EXTRA=${2:-}
PYTHON=${PYTHON:-python3}
PYEBPF=${PYEBPF:-build/pyebpf} # another build to compare: PYEBPF=/path/to/pyebpf
REPLAY=${REPLAY:-build/bench/replay}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] && [ -x $REPLAY ] || { echo "bench: run 'make bench' (builds $REPLAY)" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { kill -KILL "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# Record each depth once, plain and --native, then stop its workload.
for depth in 10 50 300; do
	procs=()
	for _ in 1 2; do
		"$PYTHON" bench/deep.py "$depth" 2 &
		procs+=($!)
		disown $! # killed at the end without a "Killed" line
	done
	pids+=("${procs[@]}")
	sleep 1
	list=$(IFS=,; echo "${procs[*]}")
	PYEBPF_RAW_OUT="$tmp/d$depth.raw" $PYEBPF record -p "$list" -F 999 -d 4 -o "$tmp/d$depth.folded" 2>/dev/null
	PYEBPF_RAW_OUT="$tmp/d$depth.native.raw" $PYEBPF record --native -p "$list" -F 999 -d 4 \
		-o "$tmp/d$depth.native.folded" 2>/dev/null
	kill -STOP "${procs[@]}"
done

field() { grep -o "$1=[^ ]*" | cut -d= -f2; } # field NAME < replay's line

replay() { # CPUS HZ DEPTH native|python [more replay options]
	replay_with "$REPLAY" "$@"
}

replay_with() { # REPLAY_BINARY CPUS HZ DEPTH native|python [more replay options]
	local bin=$1 cpus=$2 hz=$3 depth=$4 kind=$5 raw execs
	shift 5
	raw="$tmp/d$depth.raw"
	[ "$kind" = native ] && raw="$tmp/d$depth.native.raw"
	execs=$((cpus / 64 > 0 ? cpus / 64 : 1))
	$bin $([ "$kind" = native ] && echo --native) --cpus "$cpus" --hz "$hz" --seconds "$SECONDS_PER" \
		--warmup 2 --thread-life 10 --execs "$execs" "$@" "$raw"
}

if [ "$EXTRA" != depth ]; then # depth: only the table by depth
echo "Userspace cost per CPU count and rate (Python stacks 50 frames deep; $SECONDS_PER s each):"
printf '%5s %4s %7s | %9s %7s %6s | %9s %7s %6s\n' CPUs Hz samp/s "CPU/core" RSS "keeps" \
	"--native" RSS "keeps"
for cpus in 32 64 128 192; do
	for hz in 19 99; do
		py=$(replay $cpus $hz 50 python)
		nat=$(replay $cpus $hz 50 native)
		printf '%5s %4s %7s | %8s%% %5sMB %6s | %8s%% %5sMB %6s\n' "$cpus" "$hz" $((cpus * hz)) \
			"$(field cpu <<<"$py" | tr -d %)" "$(field rss_end <<<"$py" | tr -d MB)" "$(field keeps_up <<<"$py")" \
			"$(field cpu <<<"$nat" | tr -d %)" "$(field rss_end <<<"$nat" | tr -d MB)" \
			"$(field keeps_up <<<"$nat")"
	done
done
fi

echo
echo "Per sample by Python stack depth at 128 CPUs x 99 Hz (us of pyebpf CPU per sample):"
printf '%6s | %8s %9s | %8s %9s\n' depth python CPU/core --native CPU/core
for depth in 10 50 300; do
	py=$(replay 128 99 $depth python)
	nat=$(replay 128 99 $depth native)
	printf '%6s | %8s %8s%% | %8s %8s%%\n' "$depth" "$(field us_per_sample <<<"$py")" \
		"$(field cpu <<<"$py" | tr -d %)" "$(field us_per_sample <<<"$nat")" "$(field cpu <<<"$nat" | tr -d %)"
	# REPLAY_BEFORE=older/build/bench/replay: the same records through another build, side by side.
	if [ -n "${REPLAY_BEFORE:-}" ]; then
		py=$(replay_with "$REPLAY_BEFORE" 128 99 $depth python)
		nat=$(replay_with "$REPLAY_BEFORE" 128 99 $depth native)
		printf '%6s | %8s %8s%% | %8s %8s%%   (REPLAY_BEFORE)\n' "$depth" "$(field us_per_sample <<<"$py")" \
			"$(field cpu <<<"$py" | tr -d %)" "$(field us_per_sample <<<"$nat")" \
			"$(field cpu <<<"$nat" | tr -d %)"
	fi
done

if [ "$EXTRA" = hour ] || [ "$EXTRA" = all ]; then
	echo
	echo "One hour of 128 CPUs x 99 Hz in one interval (45.6 million samples, fed as fast as they go):"
	line=$($REPLAY --virtual --cpus 128 --hz 99 --seconds 3600 --warmup 0 --thread-life 10 \
		--out "$tmp/hour.pb.gz" "$tmp/d50.raw")
	echo "  RSS before writing $(field rss_end <<<"$line"), peak while writing the pprof" \
		"$(field hwm_write <<<"$line"); file $(du -m "$tmp/hour.pb.gz" | cut -f1) MB;" \
		"$(field us_per_sample <<<"$line") us of CPU per sample"
fi

if [ "$EXTRA" = soak ] || [ "$EXTRA" = all ]; then
	echo
	echo "Soak: 10 minutes at 128 CPUs x 99 Hz, a pprof every 60 s:"
	SECONDS_PER=600 replay 128 99 50 python --interval 60 --out "$tmp/soak.pb.gz" 2>"$tmp/soak.err" >"$tmp/soak"
	sed 's/^replay: /  /' "$tmp/soak.err"
	first=$(grep -o 'RSS [0-9]*' "$tmp/soak.err" | head -1 | cut -d' ' -f2)
	last=$(grep -o 'RSS [0-9]*' "$tmp/soak.err" | tail -1 | cut -d' ' -f2)
	echo "  RSS growth after the first interval: $((last - first)) MB; CPU $(field cpu <"$tmp/soak");" \
		"kept up: $(field keeps_up <"$tmp/soak") (largest backlog $(field max_lag_ms <"$tmp/soak") ms)"
fi
