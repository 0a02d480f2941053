#!/usr/bin/env bash
# Is a long --continuous recording of a busy service bounded by its
# interval, not by the requests it has seen? tests/fixtures/ctxvar.py serves
# ~1,000 requests a second (1 ms of CPU each, a new request_id each), and
# every pyebpf given records it at once, side by side, with
# `--continuous --interval INTERVAL --context-label request_id` at 999 Hz
# for DURATION seconds: nearly every sample a new id. Reports each one's
# RSS after the first interval and at the end, and the interval files'
# mean size; a binary that keeps every id it has seen grows by the ids.
#   bash bench/requests_bound.sh [DURATION [INTERVAL]] [PYEBPF...]
# (default 300 s, 10 s, build/pyebpf; an older build beside it:
#  git worktree add /tmp/old HEAD~1 && make -C /tmp/old build/pyebpf)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-300}
INTERVAL=${2:-10}
shift $(($# < 2 ? $# : 2))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(build/pyebpf)
PYTHON=${PYTHON:-python3}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
for b in "${bins[@]}"; do [ -x "$b" ] || { echo "bench: $b: no such binary ('make' first)" >&2; exit 1; }; done
tmp=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

"$PYTHON" tests/fixtures/ctxvar.py sync $((DURATION + 60)) str 1 >"$tmp/app.out" &
app=$!
pids+=($app)
until grep -q ready "$tmp/app.out" 2>/dev/null; do sleep 0.05; done
rec=()
for i in "${!bins[@]}"; do
	"${bins[$i]}" record -p $app -F 999 --context-label request_id --continuous "$tmp/out-$i" \
		--interval "${INTERVAL}s" 2>"$tmp/err-$i" &
	rec+=($!)
	pids+=($!)
done
for i in "${!bins[@]}"; do
	until grep -q "pyebpf: sampling" "$tmp/err-$i" 2>/dev/null; do sleep 0.05; done
done
# The baseline: RSS once the first interval is written (its file there).
first=()
for i in "${!bins[@]}"; do
	until [ "$(ls "$tmp/out-$i" 2>/dev/null | wc -l)" -ge 1 ]; do sleep 0.2; done
	first[$i]=$(rss "${rec[$i]}")
done
start=$SECONDS
sleep "$DURATION"
printf "%-40s %12s %12s %10s %8s %12s\n" "pyebpf" "RSS first" "RSS end" "growth" "files" "mean file"
for i in "${!bins[@]}"; do
	end=$(rss "${rec[$i]}")
	kill -TERM "${rec[$i]}"
	wait "${rec[$i]}" || true
	files=$(ls "$tmp/out-$i" | wc -l)
	bytes=$(cat "$tmp/out-$i"/* | wc -c)
	printf "%-40s %9d kB %9d kB %7d kB %8d %9d kB\n" "${bins[$i]}" "${first[$i]}" "$end" \
		$((end - first[$i])) "$files" $((bytes / files / 1024))
done
kill $app 2>/dev/null || true
wait $app 2>/dev/null || true
echo "($((SECONDS - start)) s after the first interval, ${INTERVAL} s intervals, ~1,000 requests a second)"
