#!/usr/bin/env bash
# Bare Debian roots for the dist tests: what a user of the shipped artifacts
# has on another release, with nothing of this machine in it.
#
#   bash tests/dist/roots.sh build SUITE...      build each root once; prints its path
#   bash tests/dist/roots.sh path SUITE          the cached root's path (built or not)
#   bash tests/dist/roots.sh run SUITE [OPT...] -- CMD [ARG...]
#        runs CMD as root inside a fresh copy of SUITE's root: an overlay whose
#        upper layer is a temporary directory thrown away after CMD, so no run
#        sees another's changes and the cache stays as built. Inside a mount
#        namespace of its own (unshare --mount): the host's mount table is
#        untouched however CMD ends. /proc, /sys (with its submounts: BTF,
#        cgroups) and /dev are the host's. OPT:
#          --copy SRC:DST   copy the host file or directory SRC to DST in the root first
#          --bind SRC:DST   bind the host directory SRC at DST (read-write: results come out there)
#          --cwd DIR        run CMD in DIR (default /)
#        CMD's exit status is run's. The upper layers go under
#        $PYEBPF_ROOTS_TMP (default: beside the roots), removed after CMD.
#
# The roots: `mmdebstrap --variant=minbase --include=PKGS SUITE DIR` from the
# machine's usual Debian mirror, PKGS being what the tests use there and no
# more: python3 (the workload of the recording test and nothing of
# pyebpf's), man-db (the deb test's `man pyebpf`; it brings groff-base,
# which formats the page, and bsdextrautils). dpkg is in every root already.
# bullseye is the oldest glibc the artifacts promise (2.31); trixie the
# newest Debian release.
#
# Cached under $PYEBPF_ROOTS_DIR (/var/cache/pyebpf/roots)/SUITE, built into
# a temporary directory beside it and renamed into place, so a root is
# either whole or absent; SUITE/.pyebpf-recipe holds the recipe it was built
# with, and a root whose recipe differs from this file's is built again.
# A build holds SUITE's lock exclusively, a run holds it shared: a rebuild
# never swaps a root out from under a running test.
set -euo pipefail

ROOTS_DIR=${PYEBPF_ROOTS_DIR:-/var/cache/pyebpf/roots}
SELF=$(realpath "${BASH_SOURCE[0]}")
. "$(dirname "$SELF")/../../.ci/retry.sh"
PACKAGES=python3,man-db
# Bump the last field to force every root to be built again.
recipe() { echo "mmdebstrap --variant=minbase --include=$PACKAGES $1 (recipe 1)"; }

die() { echo "roots.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 build SUITE... | path SUITE | run SUITE [--copy SRC:DST] [--bind SRC:DST] [--cwd DIR] -- CMD..."; }

# One try of mmdebstrap into the empty directory DIR, its log in DIR.log: a
# failed try's half-made root is emptied (mmdebstrap wants an empty
# directory) and its log's end shown, so the next try starts clean.
mmdebstrap_once() { # SUITE DIR
	# Only the standard fds go to mmdebstrap: one inherited (the integration
	# tests' runner leaves some open) can take the number mmdebstrap gives
	# apt's hook pipe, and the hook then fails with "Bad fd number".
	(
		for fd in /proc/self/fd/*; do
			fd=${fd##*/}
			[ "$fd" -le 2 ] || eval "exec $fd>&-" 2>/dev/null || true
		done
		exec mmdebstrap --quiet --variant=minbase --include="$PACKAGES" "$1" "$2"
	) >"$2.log" 2>&1 && return 0
	local rc=$?
	tail -n 30 "$2.log" >&2
	find "$2" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	return "$rc"
}

suite_ok() { [[ $1 =~ ^[a-z]+$ ]] || die "bad suite name: $1"; }

is_current() { # SUITE: its root is built with today's recipe
	[ -f "$ROOTS_DIR/$1/.pyebpf-recipe" ] && [ "$(cat "$ROOTS_DIR/$1/.pyebpf-recipe")" = "$(recipe "$1")" ]
}

build_one() { # SUITE
	local suite=$1 root=$ROOTS_DIR/$1 tmp start
	suite_ok "$suite"
	# Built already: no lock needed (a root appears by one rename), so a
	# check of a root in use by a run does not wait for that run.
	if is_current "$suite"; then
		echo "$root"
		return
	fi
	mkdir -p "$ROOTS_DIR"
	exec 8>"$ROOTS_DIR/.$suite.lock"
	flock 8
	if ! is_current "$suite"; then
		command -v mmdebstrap >/dev/null || die "no mmdebstrap (apt-get install mmdebstrap)"
		# mmdebstrap wants a directory that does not exist or is empty.
		tmp=$(mktemp -d "$ROOTS_DIR/.$suite.new.XXXXXX")
		# shellcheck disable=SC2064 # tmp is fixed now
		trap "rm -rf '$tmp' '$tmp.log'" EXIT
		echo "roots.sh: $(recipe "$suite") ..." >&2
		start=$SECONDS
		retry "the $suite root (mmdebstrap from the Debian mirror)" mmdebstrap_once "$suite" "$tmp" ||
			die "mmdebstrap $suite failed ${RETRY_TIMES:-5} times (its log above: a download from the Debian mirror?)"
		rm -f "$tmp.log"
		# The apt lists and downloaded packages are half the size and no test reads them.
		rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/archives/*.deb
		recipe "$suite" >"$tmp/.pyebpf-recipe"
		# A stale root moves aside first: two renames, each atomic; a reader
		# (holding the shared lock) cannot be between them.
		if [ -e "$root" ]; then
			mv "$root" "$tmp.old"
			rm -rf "$tmp.old"
		fi
		mv "$tmp" "$root"
		trap - EXIT
		echo "roots.sh: $suite built in $((SECONDS - start)) s ($(du -sh "$root" | cut -f1))" >&2
	fi
	exec 8>&-
	echo "$root"
}

# The inside of `run`, in its own mount namespace: mount the overlay, bind
# the host's /proc, /sys and /dev, copy and bind what was asked, chroot.
inside() {
	local suite=$1 tmp=$2 cwd=$3 ncopy=$4
	shift 4
	local root=$ROOTS_DIR/$suite m=$tmp/merged i src dst
	# private: nothing mounted here propagates back to the host's namespace.
	mount --make-rprivate /
	mkdir -p "$tmp/upper" "$tmp/work" "$m"
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$tmp/upper,workdir=$tmp/work" "$m"
	mount --rbind /proc "$m/proc"
	mount --rbind /sys "$m/sys"
	mount --rbind /dev "$m/dev"
	for ((i = 0; i < ncopy; i++)); do
		src=${1%%:*} dst=${1#*:}
		shift
		mkdir -p "$m$(dirname "$dst")"
		cp -a "$src" "$m$dst"
	done
	while [ "$1" != -- ]; do
		src=${1%%:*} dst=${1#*:}
		shift
		mkdir -p "$m$dst"
		mount --bind "$src" "$m$dst"
	done
	shift
	# env -i: the root's own PATH and nothing of this machine's environment
	# (no PYTHONPATH, no pyenv shims, no LD_LIBRARY_PATH).
	# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
	exec chroot "$m" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@"
}

run() {
	[ $# -ge 1 ] || usage
	local suite=$1 cwd=/ tmp rc copies=() binds=()
	shift
	suite_ok "$suite"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		--copy)
			if [ $# -lt 2 ] || [[ $2 != *:/* ]]; then usage; fi
			[ -e "${2%%:*}" ] || die "no ${2%%:*}"
			copies+=("$2")
			shift 2
			;;
		--bind)
			if [ $# -lt 2 ] || [[ $2 != *:/* ]]; then usage; fi
			[ -d "${2%%:*}" ] || die "no directory ${2%%:*}"
			binds+=("$(realpath "${2%%:*}"):${2#*:}")
			shift 2
			;;
		--cwd) [ $# -ge 2 ] || usage; cwd=$2; shift 2 ;;
		*) usage ;;
		esac
	done
	[ $# -ge 2 ] || usage
	shift
	exec 8>>"$ROOTS_DIR/.$suite.lock"
	flock -s 8
	is_current "$suite" || die "no root for $suite with today's recipe: run '$0 build $suite' first"
	# Upper and work directories of the overlay (one filesystem, not an
	# overlay itself); a caller that may be killed names a directory it
	# removes itself (PYEBPF_ROOTS_TMP), else they go beside the roots.
	local parent=${PYEBPF_ROOTS_TMP:-$ROOTS_DIR/.run}
	mkdir -p "$parent"
	tmp=$(mktemp -d "$parent/XXXXXX")
	# shellcheck disable=SC2064 # tmp is fixed now
	trap "rm -rf '$tmp'" EXIT
	rc=0
	unshare --mount bash "$SELF" __inside "$suite" "$tmp" "$cwd" "${#copies[@]}" "${copies[@]}" "${binds[@]}" -- "$@" || rc=$?
	# The namespace died with CMD, and its mounts with it: only files remain
	# (the EXIT trap removes them).
	return "$rc"
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1 s
	shift
	case $cmd in
	build) [ $# -ge 1 ] || usage; for s in "$@"; do build_one "$s"; done ;;
	path) [ $# -eq 1 ] || usage; suite_ok "$1"; echo "$ROOTS_DIR/$1" ;;
	run) run "$@" ;;
	__inside) inside "$@" ;;
	*) usage ;;
	esac
}

main "$@"
