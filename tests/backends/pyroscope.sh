#!/usr/bin/env bash
# A stand-in for Grafana Pyroscope in the integration tests: a small Go server
# (tests/backends/pyroscope-stub/main.go) built on Pyroscope's own API module
# (github.com/grafana/pyroscope/api, Apache-2.0: generated protobuf and Connect
# handlers), so the wire protocol is Pyroscope's; the server side mimics its
# distributor and querier. The real server cannot be built here (its main
# module is not on the module proxy, and it is AGPL).
#
#   bash tests/backends/pyroscope.sh build                       prints the binary's path (builds it once)
#   bash tests/backends/pyroscope.sh start DIR PORT [FLAGS...]   serves 127.0.0.1:PORT; DIR gets pyroscope.log, pid
#   bash tests/backends/pyroscope.sh stop DIR
#
# FLAGS go to the server: -reject-older-than 1h, -reject-newer-than 10m,
# -basic-auth-file FILE (user:pass), -bearer-token-file FILE, -require-tenant,
# -store-cancelled, -settle DURATION. See main.go's head for the endpoints:
#   POST /push.v1.PusherService/Push, /querier.v1.QuerierService/SelectMergeProfile
#   (Connect: Content-Type application/proto or application/json), and the
#   stub's own /stub/fail, /stub/delay, /stub/reset, /stub/stats, /stub/totals,
#   /stub/pprof.
# The binary is cached under $PYEBPF_BACKENDS_CACHE (/var/cache/pyebpf/backends)
# by a hash of the sources. Needs Go >= 1.26 (/usr/local/go/bin is put on PATH)
# and, for the first build, the Go module proxy.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/pyroscope-stub
CACHE_ROOT=${PYEBPF_BACKENDS_CACHE:-/var/cache/pyebpf/backends}
START_TIMEOUT=${PYROSCOPE_START_TIMEOUT:-20}

die() { echo "pyroscope: $*" >&2; exit 1; }
NAME=pyroscope-stub
# shellcheck source=tests/backends/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=.ci/retry.sh
. "$(dirname "$0")/../../.ci/retry.sh"

usage() { die "usage: $0 build | start DIR PORT [FLAGS...] | stop DIR"; }

build() {
	local hash cache bin tmp
	hash=$(cat "$SRC/main.go" "$SRC/go.mod" "$SRC/go.sum" | sha256sum | cut -c1-16)
	cache=$CACHE_ROOT/pyroscope-stub-$hash
	bin=$cache/pyroscope-stub
	if [ -x "$bin" ]; then echo "$bin"; return; fi
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9
	if [ -x "$bin" ]; then echo "$bin"; return; fi # built by another while we waited
	[ -d /usr/local/go/bin ] && PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null || die "no go on PATH"
	tmp=$(mktemp -d "$cache/.build.XXXXXX")
	# shellcheck disable=SC2064 # tmp is fixed now
	trap "rm -rf '$tmp'" EXIT
	echo "pyroscope: building the stub (about a minute the first time)..." >&2
	# The modules first, tried again on a failure of the module proxy (go
	# keeps only whole, verified modules in its cache); then an offline build.
	# -mod=readonly: go.mod and go.sum are used as committed, never rewritten.
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	retry "the stub's Go modules (Go module proxy)" \
		sh -c 'cd "$1" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go mod download' sh "$SRC" >&2 ||
		die "cannot download the stub's Go modules from the Go module proxy"
	if ! (cd "$SRC" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false -p=1" \
		go build -trimpath -o "$tmp/pyroscope-stub" .) >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		die "build failed"
	fi
	mv -f "$tmp/pyroscope-stub" "$bin" # same filesystem: an atomic rename
	rm -rf "$tmp"
	trap - EXIT
	echo "$bin"
}

ready() { # PORT: GET /ready answers 200
	[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/ready" 2>/dev/null)" = 200 ]
}

start() {
	[ $# -ge 2 ] || usage
	local dir port bin pid
	start_args "$1" "$2"
	shift 2
	vacant
	bin=$(build)
	rm -f "$dir/pid"
	launch pyroscope.log ready "the server" "GET /ready did not answer 200" "$bin" -addr "127.0.0.1:$port" "$@"
	echo "pyroscope: pid $pid, http://127.0.0.1:$port (log $dir/pyroscope.log)" >&2
}

main "$@"
