#!/usr/bin/env bash
# A private Docker engine for the tests: Debian's docker.io (dockerd 20.10,
# containerd 1.6, runc), apart from any engine the machine runs. Its own
# sockets, containerd root and state, dockerd exec root and pid file, all
# in DIR; its image store (dockerd's data root) in DIR/data or a directory
# given, so a cached store keeps imported images from one run to the next.
# cgroupfs as the cgroup driver (no systemd here; this host's cgroups are
# hybrid: v1 controllers and the unified tree), no iptables rules and no
# bridge: containers run with --network host or none, and the host's
# firewall and interfaces are left as they were.
#
#   bash tests/engines/docker.sh start DIR [DATA_ROOT]
#        starts containerd and dockerd, waits until dockerd answers (60 s at
#        most), prints DOCKER_HOST=unix://DIR/docker.sock (for docker -H, or
#        export it) and CONTAINERD_ADDRESS=DIR/containerd.sock (for ctr -a:
#        the same engine's containerd, which can run what dockerd 20.10
#        cannot express, such as CAP_BPF and CAP_PERFMON). DATA_ROOT may be shared between runs, not between
#        engines at once: the second start fails (its lock is held by the
#        running dockerd).
#   bash tests/engines/docker.sh stop DIR
#        removes the engine's containers (dockerd's, then any left in any
#        containerd namespace: ctr's), stops dockerd, the containerd shims
#        of this engine's containerd and containerd (TERM, KILL after 20 s),
#        and unmounts what a killed daemon left mounted; only the processes
#        this DIR's start recorded or that name its containerd socket.
#   DOCKER_HOST=... bash tests/engines/docker.sh image NAME SUITE
#        NAME: SUITE's bare root (tests/dist/roots.sh) as an image
#        (`tar -C ROOT -c . | docker import`), imported once per root build:
#        the image carries the root's stamp as a label, and an image with the
#        stamp of today's root is kept.
#
# Every wait is bounded; a daemon that dies or never answers ends start with
# the last lines of its log, and start stops what it had started.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOTS=$HERE/../dist/roots.sh
START_TIMEOUT=${DOCKER_START_TIMEOUT:-60}

die() { echo "docker.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 start DIR [DATA_ROOT] | stop DIR | image NAME SUITE (with DOCKER_HOST set)"; }

# PIDFILE WORD: the pid in PIDFILE, if that process runs and its command line holds WORD.
ours() {
	local pid
	[ -s "$1" ] || return 1
	pid=$(cat "$1")
	[ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2" && echo "$pid"
}

# PID: it runs (a zombie, which kill -0 still finds, has ended).
running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	[[ ${stat##*) } != Z* ]]
}

# PID SECONDS: TERM, then KILL if it still runs after SECONDS.
end_process() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < $2 * 10; i++)); do
		running "$pid" || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# DIR NAME WHAT CHECK...: wait until CHECK succeeds; if NAME (DIR/NAME.pid)
# ends first, or START_TIMEOUT passes, stop everything and die saying so.
# Whether it still runs is asked by its pid alone: just after the fork the
# child may not have exec'd the daemon yet, so its command line is still
# this shell's (`ours` would call a starting daemon gone); one that exited
# is a zombie of this shell until it ends, which `running` tells apart.
await() {
	local dir=$1 name=$2 what=$3 i
	shift 3
	for ((i = 0; i < START_TIMEOUT * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		if ! running "$(cat "$dir/$name.pid")"; then
			tail -n 20 "$dir/$name.log" >&2
			stop "$dir"
			die "$name exited at start"
		fi
		sleep 0.1
	done
	tail -n 20 "$dir/$name.log" >&2
	stop "$dir"
	die "$name $what in ${START_TIMEOUT}s"
}

start() {
	if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
	local dir data sock c ids
	mkdir -p "$1"
	dir=$(realpath "$1")
	data=${2:-$dir/data}
	mkdir -p "$data"
	data=$(realpath "$data")
	sock=$dir/docker.sock
	# A unix socket's path is at most 107 bytes; containerd adds ".ttrpc".
	[ ${#dir} -le 80 ] || die "DIR's path is too long for its sockets (${#dir} > 80): $dir"
	for c in containerd dockerd docker runc; do command -v "$c" >/dev/null || die "no $c (apt-get install docker.io)"; done
	if ours "$dir/containerd.pid" "$dir/containerd.sock" >/dev/null || ours "$dir/dockerd.pid" "$sock" >/dev/null; then
		die "an engine runs in $dir already"
	fi
	# containerd's own configuration: nothing from /etc/containerd (the
	# CRI plugin, Kubernetes' interface, is not needed; its opt directory
	# would be /var/lib/containerd's).
	cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$dir/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
EOF
	# Not /etc/docker/daemon.json; and the key dockerd 20.10 makes for
	# itself goes here, not to /etc/docker/key.json (a setting of the file only).
	printf '{"deprecated-key-path": "%s/key.json"}\n' "$dir" >"$dir/daemon.json"
	echo "$data" >"$dir/data-root"
	setsid containerd --config "$dir/containerd.toml" </dev/null >"$dir/containerd.log" 2>&1 &
	echo $! >"$dir/containerd.pid"
	await "$dir" containerd "made no socket" test -S "$dir/containerd.sock"
	# The data root's lock: fd 9 stays open in dockerd, so the lock is held
	# exactly as long as that dockerd runs, and a killed one frees it.
	exec 9>>"$data/.pyebpf-engine.lock"
	if ! flock -n 9; then
		stop "$dir"
		die "$data is another running engine's data root"
	fi
	setsid dockerd --host "unix://$sock" --containerd "$dir/containerd.sock" --data-root "$data" \
		--exec-root "$dir/exec" --pidfile "$dir/dockerd.pid.own" --config-file "$dir/daemon.json" \
		--storage-driver overlay2 \
		--exec-opt native.cgroupdriver=cgroupfs --iptables=false --ip6tables=false --ip-forward=false \
		--ip-masq=false --bridge=none --userland-proxy=false </dev/null >"$dir/dockerd.log" 2>&1 &
	echo $! >"$dir/dockerd.pid"
	exec 9>&-
	await "$dir" dockerd "did not answer" docker -H "unix://$sock" version
	# A cached store starts with no container: any there is a killed run's
	# (its names would be taken).
	ids=$(timeout 20 docker -H "unix://$sock" ps -aq 2>/dev/null || true)
	if [ -n "$ids" ]; then
		# shellcheck disable=SC2086 # one id a word
		timeout 60 docker -H "unix://$sock" rm -f $ids >/dev/null 2>&1 || true
	fi
	echo "DOCKER_HOST=unix://$sock"
	echo "CONTAINERD_ADDRESS=$dir/containerd.sock"
}

stop() {
	[ $# -eq 1 ] || usage
	local dir pid ids shim m d
	[ -d "$1" ] || return 0
	dir=$(realpath "$1")
	if pid=$(ours "$dir/dockerd.pid" "$dir/docker.sock"); then
		# The engine's own containers (every one is this engine's: its store
		# may be shared over time, never at once), then the daemon.
		ids=$(timeout 20 docker -H "unix://$dir/docker.sock" ps -aq 2>/dev/null || true)
		if [ -n "$ids" ]; then
			# shellcheck disable=SC2086 # one id a word
			timeout 30 docker -H "unix://$dir/docker.sock" rm -f $ids >/dev/null 2>&1 || true
		fi
		end_process "$pid" 20
	fi
	rm -f "$dir/dockerd.pid"
	if ours "$dir/containerd.pid" "$dir/containerd.toml" >/dev/null; then
		remove_tasks "$dir/containerd.sock"
	fi
	# Shims outlive containerd; they carry its socket's path on their command line.
	for shim in $(pgrep -f "containerd-shim.* -address $dir/containerd.sock( |\$)" || true); do
		end_process "$shim" 5
	done
	if pid=$(ours "$dir/containerd.pid" "$dir/containerd.toml"); then
		end_process "$pid" 20
	fi
	rm -f "$dir/containerd.pid"
	# What a killed daemon or shim left mounted under DIR (rootfs, shm,
	# overlay layers of the data root when it is DIR/data), deepest first.
	for d in "$dir" $(cat "$dir/data-root" 2>/dev/null || true); do
		awk -v d="$d/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do
			umount -l "$m" 2>/dev/null || true
		done
	done
}

# SOCK: every task and container of this containerd, in every namespace
# (ctr's, and dockerd's "moby" if dockerd could not remove its own).
remove_tasks() {
	local ns t i
	for ns in $(timeout 10 ctr -a "$1" namespaces ls -q 2>/dev/null); do
		for t in $(timeout 10 ctr -a "$1" -n "$ns" tasks ls -q 2>/dev/null); do
			timeout 10 ctr -a "$1" -n "$ns" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
			for ((i = 0; i < 50; i++)); do
				timeout 10 ctr -a "$1" -n "$ns" tasks rm "$t" >/dev/null 2>&1 && break
				sleep 0.1
			done
		done
		for t in $(timeout 10 ctr -a "$1" -n "$ns" containers ls -q 2>/dev/null); do
			timeout 10 ctr -a "$1" -n "$ns" containers rm "$t" >/dev/null 2>&1 || true
		done
	done
	return 0
}

image() {
	[ $# -eq 2 ] || usage
	local name=$1 suite=$2 root stamp have start
	[ -n "${DOCKER_HOST:-}" ] || die "DOCKER_HOST is not set (docker.sh start prints it)"
	root=$(bash "$ROOTS" build "$suite")
	# The root's identity: its recipe and when it was built.
	stamp="$(cat "$root/.pyebpf-recipe") $(stat -c %Y "$root/.pyebpf-recipe")"
	have=$(timeout 30 docker image inspect -f '{{index .Config.Labels "pyebpf.root"}}' "$name" 2>/dev/null || true)
	if [ "$have" = "$stamp" ]; then
		return 0
	fi
	start=$SECONDS
	if ! tar -C "$root" --exclude=./.pyebpf-recipe -c . |
		timeout 300 docker import -c "LABEL pyebpf.root=\"$stamp\"" - "$name" >/dev/null; then
		die "docker import of $root as $name failed"
	fi
	echo "docker.sh: $suite's root imported as $name in $((SECONDS - start)) s" >&2
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1
	shift
	case $cmd in
	start) start "$@" ;;
	stop) stop "$@" ;;
	image) image "$@" ;;
	*) usage ;;
	esac
}

main "$@"
