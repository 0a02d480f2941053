#!/usr/bin/env bash
# What the request labels cost, side by side (docs/requests.md): the Flask
# shop traced by OpenTelemetry (tests/fixtures/otel/shop.py) under its
# loopback client, alone, under `record -F 299 -p SHOP` (labels on, the
# default), under `--no-requests`, alone again, ROUNDS times. Reports per
# mode BPF's time per sample taken and pyebpf's userspace time per sample
# (medians over the rounds; from record's summary), and the shop's
# requests served against the mean of the alone runs around it.
#   bash bench/requests.sh [ROUNDS] [SECONDS]
# Needs the OpenTelemetry venvs of make otel-python (the newest is used).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-6}
PORT=18490
PYEBPF=build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
PYTHON=$(bash tests/backends/otel-python.sh list flask | tail -n 1 | awk '{print $2}')
[ -x "$PYTHON" ] || { echo "bench: no OpenTelemetry venv (make otel-python)" >&2; exit 1; }
tmp=$(mktemp -d)
shop=
trap '[ -z "$shop" ] || kill "$shop" 2>/dev/null; rm -rf "$tmp"' EXIT

"$PYTHON" tests/fixtures/otel/shop.py $PORT "$tmp/spans.jsonl" >"$tmp/ready" &
shop=$!
for _ in $(seq 100); do grep -q ready "$tmp/ready" 2>/dev/null && break; sleep 0.2; done
grep -q ready "$tmp/ready" || { echo "bench: the shop did not start" >&2; exit 1; }

served() { # the client's requests done in SECS
	"$PYTHON" tests/fixtures/otel/client.py $PORT "$SECS" | awk '{print $2 + $4}'
}
under() { # TAG OPTS...: requests served under record; its summary appended to $tmp/err.TAG
	local tag=$1 rec n
	shift
	$PYEBPF record -F 299 -p "$shop" "$@" -o "$tmp/r.pb.gz" 2>>"$tmp/err.$tag" &
	rec=$!
	sleep 1 # sampling begun (record's start-up is not the shop's cost)
	n=$(served)
	kill -INT $rec
	wait $rec
	echo "$n"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for i in $(seq "$ROUNDS"); do
	before=$(served)
	on=$(under labels)
	mid=$(served)
	off=$(under nolabels --no-requests)
	after=$(served)
	echo "$on / (($before + $mid) / 2)" | bc -l >>"$tmp/ratio.labels"
	echo "$off / (($mid + $after) / 2)" | bc -l >>"$tmp/ratio.nolabels"
	echo "round $i/$ROUNDS done" >&2
done
printf 'shop: Flask under OpenTelemetry, %s, %s s a run, %s rounds\n' "$PYTHON" "$SECS" "$ROUNDS"
for tag in labels nolabels; do
	bpf=$(grep -o 'BPF [0-9.]* us per sample taken' "$tmp/err.$tag" | awk '{print $2}' | median)
	user=$(grep -oE '\([0-9.]+ us per (record|sample)\)' "$tmp/err.$tag" | tr -d '(' | awk '{print $1}' | median)
	printf '%-28s BPF %6.2f us a sample, userspace %6.1f us a sample, shop %+.2f%% requests (medians)\n' \
		"record -F 299$([ $tag = labels ] || echo ' --no-requests')" "$bpf" "$user" \
		"$(echo "($(median <"$tmp/ratio.$tag") - 1) * 100" | bc -l)"
	echo "$bpf" >"$tmp/bpf.$tag"
done
printf 'labels on: BPF per sample x%.3f of --no-requests\n' \
	"$(echo "$(cat "$tmp/bpf.labels") / $(cat "$tmp/bpf.nolabels")" | bc -l)"
