#!/usr/bin/env bash
# The outputs in the viewers people open them with, checked and photographed:
# go tool pprof (-traces, -tags, -http through headless Chromium), speedscope
# (from npm, in headless Chromium) and the SVG (flame and icicle). Profiles a
# real workload: Debian's numpy under --native and a multiprocessing pool.
#
#   bash tests/viewers.sh [OUTDIR]      (root; make viewers)
#
# Needs golang-go, graphviz, chromium, npm (Debian's, or the one nodejs brings; not
# in make deps: it conflicts with some nodejs builds) and the npm registry once (speedscope
# is cached in OUTDIR), python3-numpy. Prints one line per check; exits
# non-zero at the first that fails. Screenshots: OUTDIR/*.png.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/retry.sh
. .ci/retry.sh
OUT=$(realpath -m "${1:-build/viewers}")
PYEBPF=${PYEBPF:-build/pyebpf}
SPEEDSCOPE_VERSION=1.20.0
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

fail() { echo "viewers: FAIL: $*" >&2; exit 1; }
ok() { echo "viewers: ok: $*"; }
shot() { # URL PNG [WIDTHxHEIGHT]
	timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="${3:-1400,900}" --virtual-time-budget=6000 --screenshot="$2" "$1" >/dev/null 2>&1 || true
	[ -s "$2" ] && [ "$(stat -c %s "$2")" -gt 15000 ] || fail "no screenshot of $1"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- recordings ---------------------------------------------------------
"$PYEBPF" record --native -F 499 -o "$OUT/numpy.pb.gz" -- /usr/bin/python3 tests/fixtures/real/np_sort.py 2>"$OUT/numpy.log"
PY312=$(ls -d "$(pyenv root 2>/dev/null || echo /root/.pyenv)"/versions/3.1[2-9]*/bin/python3.1[2-9] 2>/dev/null | head -1 || true)
"$PYEBPF" record -F 999 -o "$OUT/pool.pb.gz" -- "${PY312:-/usr/bin/python3}" tests/fixtures/real/mp_pool.py spawn 2>"$OUT/pool.log"
stacks=$(sed -n 's/.*wrote .* (\([0-9]*\) stacks)$/\1/p' "$OUT/numpy.log")
[ -n "$stacks" ] || fail "no recording: $(tail -1 "$OUT/numpy.log")"

# ---- go tool pprof ------------------------------------------------------
go tool pprof -top "$OUT/numpy.pb.gz" >"$OUT/top.txt" 2>&1
grep -q '^File: python3' "$OUT/top.txt" || fail "pprof header: $(head -1 "$OUT/top.txt") (want the main binary)"
grep -q '^Build ID: [0-9a-f]\{40\}' "$OUT/top.txt" || fail "no build id in the pprof header"
ok "go tool pprof -top: $(head -1 "$OUT/top.txt"), $(sed -n 2p "$OUT/top.txt")"
go tool pprof -raw "$OUT/numpy.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$p' >"$OUT/mappings.txt"
sed -n 2p "$OUT/mappings.txt" | grep -q '^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* /usr/bin/python3[.0-9]* [0-9a-f]\{40\}' ||
	fail "first mapping: $(sed -n 2p "$OUT/mappings.txt")"
ok "mappings: $(sed -n 2p "$OUT/mappings.txt")"
go tool pprof -traces "$OUT/numpy.pb.gz" >"$OUT/traces.txt" 2>&1
blocks=$(grep -c -- '-----------+-------' "$OUT/traces.txt" || true)
# One block per pprof Sample: a distinct stack and label set (the stacks
# written, times the gil label's two values at most).
[ "$blocks" -le $((2 * stacks)) ] || fail "-traces printed $blocks blocks for $stacks stacks"
ok "go tool pprof -traces: $blocks blocks for $stacks stacks, $(wc -l <"$OUT/traces.txt") lines"
go tool pprof -tags "$OUT/pool.pb.gz" >"$OUT/tags.txt" 2>&1
grep -q '^ thread: Total' "$OUT/tags.txt" || fail "-tags has no thread summary"
! grep -q '^ time:' "$OUT/tags.txt" || fail "-tags lists a time per sample"
[ "$(wc -l <"$OUT/tags.txt")" -lt 100 ] || fail "-tags printed $(wc -l <"$OUT/tags.txt") lines"
ok "go tool pprof -tags: $(wc -l <"$OUT/tags.txt") lines"
port=$(free_port)
go tool pprof -http="127.0.0.1:$port" -no_browser "$OUT/numpy.pb.gz" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/ui/" >/dev/null 2>&1 && break; sleep 0.2; done
shot "http://127.0.0.1:$port/ui/" "$OUT/pprof-graph.png"
shot "http://127.0.0.1:$port/ui/flamegraph" "$OUT/pprof-flame.png"
ok "go tool pprof -http: $OUT/pprof-graph.png, $OUT/pprof-flame.png"

# ---- speedscope ---------------------------------------------------------
ss="$OUT/speedscope/node_modules/speedscope/dist/release"
[ -f "$ss/index.html" ] || (mkdir -p "$OUT/speedscope" && cd "$OUT/speedscope" &&
	retry "speedscope $SPEEDSCOPE_VERSION (npm)" npm install --no-audit --no-fund --silent \
		"speedscope@$SPEEDSCOPE_VERSION" >/dev/null)
"$PYEBPF" report "$OUT/pool.pb.gz" -o "$ss/pool.speedscope.json" 2>/dev/null
port=$(free_port)
(cd "$ss" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
pids+=($!)
sleep 1
url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/pool.speedscope.json"
timeout 90 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=6000 --dump-dom "$url" \
	2>/dev/null >"$OUT/speedscope-dom.html" || true
busiest=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["profiles"][d["activeProfileIndex"]]["name"])' "$ss/pool.speedscope.json")
grep -qF "${busiest%% (tid*}" "$OUT/speedscope-dom.html" || fail "speedscope did not open $busiest"
shot "$url" "$OUT/speedscope.png"
ok "speedscope $SPEEDSCOPE_VERSION opens on the busiest thread, $busiest: $OUT/speedscope.png"

# ---- SVG ----------------------------------------------------------------
"$PYEBPF" report "$OUT/pool.pb.gz" --threads -o "$OUT/pool.svg" 2>/dev/null
shot "file://$OUT/pool.svg?icicle" "$OUT/svg-icicle.png" 1400,900
h=$(sed -n 's/.*<svg[^>]* height="\([0-9]*\)".*/\1/p' "$OUT/pool.svg" | head -1)
shot "file://$OUT/pool.svg" "$OUT/svg-flame.png" "1400,$((h + 200))"
ok "SVG: $OUT/svg-flame.png, $OUT/svg-icicle.png"
# ---- asyncio task time ---------------------------------------------------
# Debian's aiohttp: clients wait on /slow (fetch_remote: 200 ms); task time
# in go tool pprof (its own sample type) and in the SVG of report --tasks.
if /usr/bin/python3 -c 'import aiohttp' 2>/dev/null; then
	port=$(free_port)
	"$PYEBPF" record --mode wall -F 99 -o "$OUT/aio.pb.gz" -- /usr/bin/python3 \
		tests/fixtures/real/aiohttp_service.py "$port" 6 2>"$OUT/aio.log" &
	rec=$!
	for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/fast" >/dev/null 2>&1 && break; sleep 0.1; done
	for c in 1 2 3 4; do
		(for _ in $(seq 15); do curl -fs "http://127.0.0.1:$port/slow" >/dev/null || true; done) &
	done
	wait $rec
	go tool pprof -sample_index=task_wall -top "$OUT/aio.pb.gz" >"$OUT/aio-top.txt" 2>&1
	grep -q 'fetch_remote' "$OUT/aio-top.txt" || fail "no fetch_remote in task_wall's -top: $(head -3 "$OUT/aio-top.txt")"
	ok "go tool pprof -sample_index=task_wall -top: $(grep -m1 'fetch_remote' "$OUT/aio-top.txt" | tr -s ' ')"
	port2=$(free_port)
	go tool pprof -sample_index=task_wall -http="127.0.0.1:$port2" -no_browser "$OUT/aio.pb.gz" >/dev/null 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port2/ui/" >/dev/null 2>&1 && break; sleep 0.2; done
	shot "http://127.0.0.1:$port2/ui/flamegraph?si=task_wall" "$OUT/aio-pprof-flame.png"
	"$PYEBPF" report "$OUT/aio.pb.gz" --tasks -o "$OUT/aio-tasks.svg" 2>/dev/null
	h=$(sed -n 's/.*<svg[^>]* height="\([0-9]*\)".*/\1/p' "$OUT/aio-tasks.svg" | head -1)
	shot "file://$OUT/aio-tasks.svg" "$OUT/aio-tasks-svg.png" "1400,$((h + 200))"
	ok "asyncio task time: $OUT/aio-pprof-flame.png, $OUT/aio-tasks-svg.png"
fi
# ---- Firefox Profiler (Gecko) --------------------------------------------
# Its own importer over our files (jest, offline). It is on no registry this
# project reaches: a checkout of firefox-devtools/profiler with its node
# modules installed and node 24 in tools/ (docs/outputs.md says how it was
# made) in FFPROFILER; without one, said and skipped.
FF=${FFPROFILER:-/var/cache/pyebpf/ffprofiler}
if [ -x "$FF/tools/node_modules/.bin/node" ] && [ -d "$FF/src/node_modules" ]; then
	"$PYEBPF" record -F 499 -o "$OUT/threads.gecko.json" -- /usr/bin/python3 tests/fixtures/pywork.py threads 3 2>/dev/null
	"$PYEBPF" record --mode wall -F 499 -o "$OUT/gil.gecko.json" -- /usr/bin/python3 tests/fixtures/pywall.py gil 3 2>/dev/null
	cp tests/viewers/pyebpf-gecko.test.ts "$FF/src/src/test/unit/"
	rm -f "$OUT/gecko-import.json"
	(cd "$FF/src" && PATH="$FF/tools/node_modules/.bin:$PATH" PYEBPF_GECKO="$OUT/threads.gecko.json,$OUT/gil.gecko.json" \
		PYEBPF_GECKO_OUT="$OUT/gecko-import.json" LC_ALL=C TZ=UTC NODE_ENV=test JEST_PROJECTS=browser \
		node node_modules/.bin/jest --ci src/test/unit/pyebpf-gecko.test.ts >"$OUT/gecko-import.log" 2>&1) ||
		fail "the Firefox Profiler's importer refused a file: $(grep -m3 -E '●|Error' "$OUT/gecko-import.log")"
	# Every thread: no warning, and the time the profiler traces is the
	# samples' (an unsampled gap drawn as busy read 6x too long).
	python3 - "$OUT/gecko-import.json" <<'PY' || fail "Firefox Profiler: traced time or warnings (above)"
import json, sys
text = open(sys.argv[1]).read()
dec, at, files = json.JSONDecoder(), 0, []
while at < len(text.rstrip()):
    obj, at = dec.raw_decode(text, at)
    files.append(obj)
    while at < len(text) and text[at].isspace():
        at += 1
for f in files:
    assert not f["warnings"], f"{f['file']}: {f['warnings'][:3]}"
    for t in f["threads"]:
        busy = t["samples"] - t["sampleCategories"].get("(null stack)", 0)
        traced, want = t["tracedTotalMs"], busy * f["meta"]["interval"]
        assert traced <= want * 1.1 + 10, f"{f['file']}: {t['name']}: {traced:.0f} ms traced for {busy} samples ({want:.0f} ms)"
print("viewers: ok: Firefox Profiler imports", ", ".join(f"{f['file'].split('/')[-1]} ({len(f['threads'])} threads)" for f in files))
PY
else
	echo "viewers: skipped: no Firefox Profiler checkout in $FF (docs/outputs.md)"
fi
echo "viewers: all checks passed; screenshots in $OUT"
