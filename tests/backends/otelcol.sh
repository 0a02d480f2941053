#!/usr/bin/env bash
# A real OpenTelemetry Collector that takes OTLP profiles over HTTP, for the
# integration tests. Built from the Go module proxy with the collector builder
# (ocb) and cached; no gRPC.
#
#   bash tests/backends/otelcol.sh build           prints the binary's path (builds it once)
#   bash tests/backends/otelcol.sh start DIR PORT  OTLP/HTTP on 127.0.0.1:PORT -> DIR/profiles.json
#   bash tests/backends/otelcol.sh stop DIR
#
# Pinned: go.opentelemetry.io/collector/cmd/builder v0.165.0, with
#   receiver/otlpreceiver v0.165.0, exporter/debugexporter v0.165.0 (core),
#   opentelemetry-collector-contrib/exporter/fileexporter v0.165.0,
#   confmap providers env/file/yaml v1.71.0 (the builder's own defaults);
#   its pdata (v1.71.0) implements opentelemetry-proto v1.11.0 (profiles/v1development).
# Feature gate: --feature-gates=service.profilesSupport (alpha, off by default:
# without it a "profiles" pipeline is refused).
# POST http://127.0.0.1:PORT/v1development/profiles, Content-Type
# application/x-protobuf or application/json, optional Content-Encoding: gzip.
# A request reaches DIR/profiles.json up to 100ms after its HTTP 200 (the flush
# interval): poll it. One request per line, as OTLP JSON; one with no samples is
# not written.
# DIR also gets config.yaml, otelcol.log, pid.
# Needs Go >= 1.26 (pdata's go.mod; /usr/local/go/bin is put on PATH) and the module proxy for the build.
set -euo pipefail

VERSION=0.165.0
CONTRIB_VERSION=0.165.0
CONFMAP_VERSION=1.71.0
FEATURE_GATE=service.profilesSupport

CACHE_ROOT=${PYEBPF_BACKENDS_CACHE:-/var/cache/pyebpf/backends}
CACHE=$CACHE_ROOT/otelcol-$VERSION
BIN=$CACHE/otelcol
START_TIMEOUT=${OTELCOL_START_TIMEOUT:-30}

die() { echo "otelcol: $*" >&2; exit 1; }
NAME=otelcol
# shellcheck source=tests/backends/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=.ci/retry.sh
. "$(dirname "$0")/../../.ci/retry.sh"

usage() { die "usage: $0 build | start DIR PORT | stop DIR"; }

build_collector() { # TMP
	GOFLAGS="$GOFLAGS -e" "$1/bin/builder" --config "$1/manifest.yaml" >"$1/builder.log" 2>&1 && return 0
	local rc=$?
	tail -n 30 "$1/builder.log" >&2
	rm -rf "$1/dist"
	return "$rc"
}

build() {
	if [ -x "$BIN" ]; then echo "$BIN"; return; fi
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	if [ -x "$BIN" ]; then echo "$BIN"; return; fi # built by another while we waited
	[ -d /usr/local/go/bin ] && PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null || die "no go on PATH"
	local tmp
	tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
	# shellcheck disable=SC2064 # tmp is fixed now
	trap "rm -rf '$tmp'" EXIT
	export GOFLAGS="-p=1 -trimpath -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
	echo "otelcol: building the collector $VERSION (a few minutes)..." >&2
	retry "the collector's builder $VERSION (Go module proxy)" \
		env GOBIN="$tmp/bin" go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2 ||
		die "cannot download the collector's builder $VERSION from the Go module proxy"
	cat >"$tmp/manifest.yaml" <<EOF
dist:
  name: otelcol
  module: pyebpf.test/otelcol
  description: pyebpf test collector (OTLP/HTTP profiles to a file)
  version: $VERSION
  output_path: $tmp/dist
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$VERSION
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v$VERSION
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v$CONTRIB_VERSION
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v$CONFMAP_VERSION
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v$CONFMAP_VERSION
  - gomod: go.opentelemetry.io/collector/confmap/provider/yamlprovider v$CONFMAP_VERSION
EOF
	# GOFLAGS -e: the builder's "go mod tidy" also resolves the imports of
	# fileexporter's own tests, one of which (contrib's otlpencodingextension)
	# the module proxy does not serve here; -e lets tidy go on past it (go build
	# ignores -e; the collector itself does not import that module).
	# The builder downloads the components' modules: tried again on a failure
	# (the module proxy's), its half-made output removed first.
	if ! retry "the collector's modules (Go module proxy)" build_collector "$tmp"; then
		die "build failed (the builder's log above)"
	fi
	"$tmp/dist/otelcol" --version >&2 || die "the built binary does not run"
	mv -f "$tmp/dist/otelcol" "$BIN" # same filesystem: an atomic rename
	rm -rf "$tmp"
	trap - EXIT
	echo "$BIN"
}

start() {
	[ $# -eq 2 ] || usage
	local dir port bin pid
	start_args "$1" "$2"
	[[ $dir != *[\'\$]* ]] || die "DIR may hold neither ' nor \$: $dir"
	vacant
	bin=$(build)
	rm -f "$dir/profiles.json" "$dir/pid"
	cat >"$dir/config.yaml" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$port
exporters:
  file:
    path: '$dir/profiles.json'
    format: json
    flush_interval: 100ms
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [file, debug]
EOF
	launch otelcol.log answers "the collector" "port $port did not answer" \
		"$bin" --config "file:$dir/config.yaml" --feature-gates="$FEATURE_GATE"
	echo "otelcol: pid $pid, http://127.0.0.1:$port/v1development/profiles -> $dir/profiles.json" >&2
}

main "$@"
