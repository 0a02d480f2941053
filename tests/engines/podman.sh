#!/usr/bin/env bash
# A private podman for the tests: Debian's podman (4.3, conmon, runc), its
# storage (--root, --runroot) and its libpod state (--tmpdir) all in DIR,
# apart from any podman the machine uses. cgroupfs as the cgroup manager
# (no systemd here; this host's cgroups are hybrid), no events journal, no
# network: containers run with --network none. podman has no daemon: each
# command below is one podman process, and what runs is conmon and runc.
#
#   bash tests/engines/podman.sh image DIR NAME SUITE
#        NAME: SUITE's bare root (tests/dist/roots.sh) imported into DIR's
#        storage (`tar -C ROOT -c . | podman import`, a few seconds).
#   bash tests/engines/podman.sh run DIR NAME ARGS...
#        starts container NAME detached (podman run -d --name NAME
#        --network none ARGS...), with modest file and process limits
#        (podman's own defaults, a million open files, are refused where the
#        host's hard limits are lower: runc cannot raise them); prints its id.
#   bash tests/engines/podman.sh do DIR ARGS...
#        podman ARGS... with DIR's storage (restart, stop, inspect...).
#   bash tests/engines/podman.sh stop DIR
#        removes DIR's containers and images, unmounts what is left mounted
#        under DIR, and removes DIR.
#
# Every command is bounded (120 s).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOTS=$HERE/../dist/roots.sh

die() { echo "podman.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 image DIR NAME SUITE | run DIR NAME ARGS... | do DIR ARGS... | stop DIR"; }

# DIR ARGS...: podman with DIR's storage and state.
pm() {
	local dir=$1
	shift
	mkdir -p "$dir/tmp"
	timeout 120 podman --root "$dir/root" --runroot "$dir/run" --tmpdir "$dir/tmp" --cgroup-manager cgroupfs \
		--events-backend none "$@"
}

image() {
	[ $# -eq 3 ] || usage
	local dir=$1 name=$2 suite=$3 root start=$SECONDS
	command -v podman >/dev/null || die "podman is not installed (make test-deps installs it)"
	root=$(bash "$ROOTS" build "$suite")
	tar -C "$root" --exclude=./.pyebpf-recipe -c . | pm "$dir" import - "$name" >/dev/null ||
		die "podman import of $root as $name failed"
	echo "podman.sh: $suite's root imported as $name in $((SECONDS - start)) s" >&2
}

run() {
	[ $# -ge 3 ] || usage
	local dir=$1 name=$2
	shift 2
	pm "$dir" run -d --name "$name" --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$@"
}

stop() {
	[ $# -eq 1 ] || usage
	local dir=$1
	[ -d "$dir/root" ] || { rm -rf "$dir"; return 0; }
	pm "$dir" rm -f -a -t 0 >/dev/null 2>&1 || true
	pm "$dir" rmi -f -a >/dev/null 2>&1 || true
	# What a killed podman left mounted (overlay layers, a container's shm), deepest first.
	findmnt -rn -o TARGET | awk -v d="$dir/" 'index($0, d) == 1' | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$dir"
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1
	shift
	case $cmd in
	image) image "$@" ;;
	run) run "$@" ;;
	do) [ $# -ge 2 ] || usage; pm "$@" ;;
	stop) stop "$@" ;;
	*) usage ;;
	esac
}

main "$@"
