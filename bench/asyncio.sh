#!/usr/bin/env bash
# What asyncio task time costs, side by side: an asyncio service
# (bench/asyncio_service.py: TASKS pending tasks and one task doing CPU work
# in slices) alone, under `record --mode wall -F 99` (task time on), under
# `--mode wall --no-tasks`, alone again, ROUNDS times. Reports the service's
# slowdown (slices done, against the mean of the alone runs around it;
# median over rounds) and pyebpf's own CPU in each mode.
#   bash bench/asyncio.sh [ROUNDS] [TASKS] [SECONDS]
# Needs CPython 3.14+ (PYTHON, default Debian's 3.14 from make deps).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
TASKS=${2:-1000}
SECS=${3:-8}
PYEBPF=build/pyebpf
PYTHON=${PYTHON:-${PYEBPF_PYTHONS_DIR:-/var/cache/pyebpf/pythons}/sid/usr/bin/python3.14}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
[ -x "$PYTHON" ] || { echo "bench: no CPython 3.14+ at $PYTHON (make deps, or PYTHON=)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

alone() { "$PYTHON" bench/asyncio_service.py "$TASKS" "$SECS" | awk '{print $2}'; }
under() { # OPTS...: slices done under pyebpf; its summary appended to $tmp/err.$1
	local tag=$1
	shift
	$PYEBPF record --mode wall -F 99 "$@" -o "$tmp/r.pb.gz" -- "$PYTHON" bench/asyncio_service.py "$TASKS" \
		"$SECS" 2>>"$tmp/err.$tag" | awk '{print $2}'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for i in $(seq "$ROUNDS"); do
	before=$(alone)
	t=$(under tasks)
	mid=$(alone)
	n=$(under notasks --no-tasks)
	after=$(alone)
	echo "$t / (($before + $mid) / 2)" | bc -l >>"$tmp/ratio.tasks"
	echo "$n / (($mid + $after) / 2)" | bc -l >>"$tmp/ratio.notasks"
	echo "round $i/$ROUNDS done" >&2
done
printf 'service: %s pending tasks + one CPU task, %s s, %s, %s rounds\n' "$TASKS" "$SECS" "$PYTHON" "$ROUNDS"
for tag in tasks notasks; do
	label="--mode wall -F 99"
	[ $tag = notasks ] && label="--mode wall -F 99 --no-tasks"
	cpu=$(grep -o 'pyebpf [0-9.]* s CPU' "$tmp/err.$tag" | awk '{print $2}' | median)
	printf '%-32s service slowdown %+.2f%%, pyebpf %.2f%% of a core (%s s CPU, median)\n' "$label" \
		"$(echo "(1 - $(median <"$tmp/ratio.$tag")) * 100" | bc -l)" "$(echo "$cpu * 100 / $SECS" | bc -l)" "$cpu"
done
grep -o 'in [0-9]* walks of the task lists ([0-9.]* ms and [0-9]* pages read each)' "$tmp/err.tasks" | tail -n 1
