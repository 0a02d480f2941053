#!/usr/bin/env bash
# The archive's questions, timed: a continuous recording of a service before
# and after a "deploy" (bench/deploy.py, DURATION seconds, 5 s intervals),
# then report over a window, the diff of the two halves, and pyebpf serve;
# then a week of one-minute intervals (one real interval file, 10 s of the
# whole machine at 999 Hz, hard-linked under 10,080 names) to time a
# 20-minute window and to measure serve's memory once it has summarized all
# of them. Writes the demo's SVGs and a screenshot of serve into OUT
# (default bench/out).
#   bash bench/archive.sh [DURATION] [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-40}
OUT=${2:-bench/out}
PYEBPF=build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
mkdir -p "$OUT"
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
dir=$tmp/archive

# "2026-11-24T06:07:34.289Z" of an interval file's name.
name_time() { basename "$1" | sed -E 's/pyebpf-(....)(..)(..)T(..)(..)(..)\.(...)Z-.*/\1-\2-\3T\4:\5:\6.\7Z/'; }

echo "== a service before and after a deploy: $DURATION s in 5 s intervals"
$PYEBPF record -F 99 --continuous "$dir" --interval 5s -- python3 bench/deploy.py "$DURATION" \
	>"$tmp/deploy.out" 2>"$tmp/record.err"
files=("$dir"/pyebpf-*.pb.gz)
n=${#files[@]}
half=$((n / 2))
t_half=$(name_time "${files[$half]}")
echo "$n interval files; $(cat "$tmp/deploy.out"); the second half from $t_half"

echo; echo "== pyebpf report $dir --since $t_half --top 5"
$PYEBPF report "$dir" --since "$t_half" --top 5
echo; echo "== the diff: after the deploy against before it"
$PYEBPF report "$dir" --since "$t_half" --diff-base "$dir" --base-until "$t_half" --top 6
$PYEBPF report "$dir" --since "$t_half" --diff-base "$dir" --base-until "$t_half" -o "$OUT/deploy-diff.svg" 2>/dev/null
$PYEBPF report "$dir" --since "$t_half" --diff-base "$dir" --base-until "$t_half" -o "$OUT/deploy-diff.folded" 2>/dev/null
$PYEBPF report "$dir" -o "$OUT/deploy-all.svg" 2>/dev/null

echo; echo "== pyebpf serve, in headless Chromium"
$PYEBPF serve "$dir" --listen 127.0.0.1:0 2>"$tmp/serve.err" &
srv=$!
for _ in $(seq 50); do grep -q serving "$tmp/serve.err" && break; sleep 0.1; done
url=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' "$tmp/serve.err")
if command -v chromium >/dev/null; then
	chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,1100 \
		--virtual-time-budget=15000 --screenshot="$OUT/serve.png" \
		"${url}#drag=$half-$((n - 1))&dragbase=0-$((half - 1))&s=escape&functions=1" 2>/dev/null
	echo "screenshot: $OUT/serve.png"
fi
kill $srv; wait $srv 2>/dev/null || true; srv=

echo; echo "== a week of one-minute intervals: 10080 names of one file"
week=$tmp/week
mkdir -p "$week"
# One busy minute's worth: 10 s of the service at 999 Hz, all its threads.
src=$tmp/minute.pb.gz
$PYEBPF record -a -F 999 -d 10 -o "$src" 2>/dev/null &
rec=$!
python3 bench/deploy.py 10 >/dev/null
wait $rec
python3 - "$src" "$week" <<'PY'
import datetime, os, sys
src, week = sys.argv[1], sys.argv[2]
t0 = datetime.datetime(2026, 11, 16, 0, 0, tzinfo=datetime.timezone.utc)
for i in range(10080):
    t = t0 + datetime.timedelta(minutes=i)
    os.link(src, os.path.join(week, "pyebpf-%s.000Z-%06d.pb.gz" % (t.strftime("%Y%m%dT%H%M%S"), i)))
PY
echo "files: $(ls "$week" | wc -l) names of one $(stat -c %s "$src")-byte interval file"
s=$(date +%s.%N)
$PYEBPF report "$week" --since 2026-11-20T14:00:30Z --until 2026-11-20T14:20:30Z --top 1 >/dev/null 2>"$tmp/week.err"
e=$(date +%s.%N)
echo "report over a 20-minute window: $(printf '%.2f' "$(echo "$e - $s" | bc)") s; $(grep -o 'read [0-9]* of [0-9]* recordings' "$tmp/week.err")"
$PYEBPF serve "$week" --listen 127.0.0.1:0 2>"$tmp/serve2.err" &
srv=$!
for _ in $(seq 50); do grep -q serving "$tmp/serve2.err" && break; sleep 0.1; done
url=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' "$tmp/serve2.err")
echo "serve: RSS $(awk '/VmRSS/ {print $2}' /proc/$srv/status) kB before the first request"
s=$(date +%s.%N)
while curl -s "${url}api/intervals" | grep -q '"pending":[1-9]'; do :; done
e=$(date +%s.%N)
echo "serve: all 10080 intervals summarized in $(printf '%.1f' "$(echo "$e - $s" | bc)") s (2 s per request at most)"
echo "serve: RSS $(awk '/VmRSS/ {print $2}' /proc/$srv/status) kB with 10080 summaries"
s=$(date +%s.%N)
curl -s -o /dev/null "${url}api/flame?from=6000&to=6019"
e=$(date +%s.%N)
echo "serve: flame graph of 20 intervals in $(printf '%.2f' "$(echo "$e - $s" | bc)") s; RSS $(awk '/VmRSS/ {print $2}' /proc/$srv/status) kB, peak $(awk '/VmHWM/ {print $2}' /proc/$srv/status) kB"
