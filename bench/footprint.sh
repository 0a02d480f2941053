#!/usr/bin/env bash
# What pyebpf holds and spends on a host, side by side in one run: peak RSS
# (/usr/bin/time's maximum resident set size) and CPU (user + system) of
#   one-shot    record -a -d 5 -F 99           the whole machine, 5 s
#   start-up    record -p PID -d 0.3           one busy python3 (its start-up)
#   continuous  record -a --continuous DIR --interval 5s -d 30, pushed to a
#               Pyroscope stand-in (tests/backends/pyroscope.sh) when it can
#               start, else spooled only (said so)
# medians of ROUNDS. Side by side with another build when BEFORE=/path/to/pyebpf
# is given, rounds interleaved (machines are noisy). What else runs on the host
# is sampled too (and its programs' symbols held): run it on a quiet machine.
#   bash bench/footprint.sh [ROUNDS]
#   BEFORE=/tmp/old/build/pyebpf bash bench/footprint.sh 5
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
PYEBPF=${PYEBPF:-build/pyebpf}
BEFORE=${BEFORE:-}
PORT=${PORT:-25041}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$PYEBPF" ] || { echo "bench: run 'make' first" >&2; exit 1; }
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "bench: BEFORE=$BEFORE is not a program" >&2; exit 1; }
tmp=$(mktemp -d)
# The busy Python's own pid (a pyenv shim in front of it has another).
python3 -c 'import os, sys
open(sys.argv[1], "w").write(str(os.getpid()))
while True:
    pass' "$tmp/busy.pid" &
launcher=$!
until [ -s "$tmp/busy.pid" ]; do sleep 0.05; done
busy=$(cat "$tmp/busy.pid")
pushing=
cleanup() {
	kill "$busy" "$launcher" 2>/dev/null || true
	[ -z "$pushing" ] || bash tests/backends/pyroscope.sh stop "$tmp/pyroscope" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

push=()
if bash tests/backends/pyroscope.sh start "$tmp/pyroscope" "$PORT" 2>"$tmp/pyroscope.err"; then
	pushing=yes
	push=(--push "http://127.0.0.1:$PORT")
else
	echo "bench: no Pyroscope stand-in ($(tail -n1 "$tmp/pyroscope.err")): continuous mode spools only" >&2
fi

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

measure() { # BUILD NAME CASE ARGS...: one run; peak RSS (MB) and CPU (s) appended
	local build=$1 name=$2 case=$3
	shift 3
	/usr/bin/time -f '%M %U %S' -o "$tmp/time" "$build" record "$@" 2>"$tmp/err.$name.$case" ||
		{ cat "$tmp/err.$name.$case" >&2; exit 1; }
	awk '{printf "%.1f\n", $1 / 1024}' "$tmp/time" >>"$tmp/rss.$name.$case"
	awk '{print $2 + $3}' "$tmp/time" >>"$tmp/cpu.$name.$case"
}

one() { # BUILD NAME: each case once
	local build=$1 name=$2
	measure "$build" "$name" one-shot -a -d 5 -F 99 -o "$tmp/all.pb.gz"
	measure "$build" "$name" start-up -p "$busy" -d 0.3 -o "$tmp/one.pb.gz"
	rm -rf "$tmp/spool"
	measure "$build" "$name" continuous -a --continuous "$tmp/spool" --interval 5s -d 30 "${push[@]}"
}

builds=("$PYEBPF")
names=(now)
[ -n "$BEFORE" ] && builds+=("$BEFORE") && names+=(before)
for i in $(seq "$ROUNDS"); do
	for k in "${!builds[@]}"; do
		one "${builds[$k]}" "${names[$k]}"
	done
	echo "round $i/$ROUNDS done" >&2
done
printf '%-8s %-11s %14s %10s\n' build case "peak RSS (MB)" "CPU (s)"
for k in "${!names[@]}"; do
	for case in one-shot start-up continuous; do
		printf '%-8s %-11s %14.1f %10.3f\n' "${names[$k]}" "$case" \
			"$(median <"$tmp/rss.${names[$k]}.$case")" "$(median <"$tmp/cpu.${names[$k]}.$case")"
	done
done
how="spooled only"
[ -z "$pushing" ] || how="pushed to a Pyroscope stand-in"
echo "($(nproc) CPUs, $ROUNDS rounds; continuous mode $how)"
