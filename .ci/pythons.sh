#!/usr/bin/env bash
# The CPythons the tests need beyond pyenv's: Debian sid's 3.14 and 3.15
# (binary packages, run from a private root) and free-threaded 3.13t,
# 3.14t and 3.15t built from Debian sid's python3.13, 3.14 and 3.15 sources. Everything comes from the Debian
# archive this machine's apt already uses; results are cached in DIR, so a
# second run takes a second.
#
#   bash .ci/pythons.sh [DIR]     (default /var/cache/pyebpf/pythons)
#
# DIR/sid/usr/bin/python3.14, DIR/sid/usr/bin/python3.15: sid's builds need
# glibc >= 2.38, so sid's libc and libraries are unpacked beside them and
# the interpreters point at them with patchelf (the loader, and DT_RPATH so
# that libraries loaded by libraries come from the same root).
# DIR/3.13t/bin/python3.13t, DIR/3.14t/bin/python3.14t, DIR/3.15t/bin/
# python3.15t: ./configure --disable-gil, built side by side (one make job
# each on 2 cores: their configure, link and install steps are serial) while
# sid's binaries download and compile their standard library.
set -euo pipefail
DIR=${1:-/var/cache/pyebpf/pythons}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# shellcheck source=.ci/retry.sh disable=SC1091
. "$(dirname "$0")/retry.sh"
FT_VERSIONS="3.13 3.14 3.15"
# libc6-dbg: sid's libc is stripped; its debug file names its thread start.
# python3-pip-whl: the pip wheel a venv of 3.15 is given (tests/dist: the
# wheel installed into 3.15; bookworm's pip cannot run on 3.15).
SID_PKGS="python3.14 python3.15 libpython3.14-dev libpython3.15-dev libc6-dbg python3-pip-whl"

# The mirror of the machine's own sources (deb822 or one-line format).
mirror() {
	local m
	m=$(grep -rhoE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
		/etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^[:space:]]+' | head -n1 || true)
	[ -n "$m" ] || { echo "pythons.sh: no Debian mirror in /etc/apt/sources.list*" >&2; exit 1; }
	echo "${m%/}"
}

# A private apt for sid: its own lists, cache and an empty dpkg status.
APTDIR=$DIR/.apt
sid_apt() {
	mkdir -p "$APTDIR"/{lists/partial,archives/partial}
	: > "$APTDIR/status"
	local m
	m=$(mirror)
	printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\ndeb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\n' \
		"$m" "$m" > "$APTDIR/sources.list"
	APT_OPTS=(-q -o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR" -o "Dir::State::status=$APTDIR/status"
		-o APT::Architecture=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	[ -n "$(ls "$APTDIR/lists" 2>/dev/null | grep Packages || true)" ] ||
		retry "Debian sid's package lists" apt-get "${APT_OPTS[@]}" update >/dev/null
}

# The source of PKG into DEST. The archive may list a newer version than
# its pool holds yet: take the newest it serves. Every version answered
# 404 is no passing fault: 0 with nothing in DEST (not tried again).
sid_source() {
	local pkg=$1 dest=$2 v out missing=1
	for v in $(apt-cache "${APT_OPTS[@]}" showsrc "$pkg" | sed -n 's/^Version: //p' | sort -rV); do
		out=$(cd "$dest" && apt-get "${APT_OPTS[@]}" source --download-only "$pkg=$v" 2>&1) && return 0
		grep -q ' 404 ' <<<"$out" || missing=0
	done
	[ "$missing" = 1 ]
}

# A free-threaded CPython V (3.14) from the source in DIR/.src-Vt into
# DIR/Vt, with JOBS make jobs; its output in DIR/.build-Vt.log.
build_ft() {
	local v=$1 jobs=$2 src=$DIR/.src-$1t start=$SECONDS
	(
		set -e
		tar -C "$src" -xf "$src/python${v}_"*.orig.tar.xz
		cd "$src"/Python-"$v".*/
		./configure --disable-gil --prefix="$DIR/${v}t" --without-ensurepip
		make -j"$jobs"
		make altinstall
	) >"$DIR/.build-${v}t.log" 2>&1 || {
		echo "pythons.sh: the build of ${v}t failed; the end of $DIR/.build-${v}t.log:" >&2
		tail -n 20 "$DIR/.build-${v}t.log" >&2
		return 1
	}
	"$DIR/${v}t/bin/python${v}t" -c 'import sys; assert not sys._is_gil_enabled()'
	rm -rf "$src"
	touch "$DIR/${v}t/.done"
	echo "pythons.sh: ${v}t built in $((SECONDS - start)) s (make -j$jobs)"
}

command -v patchelf >/dev/null ||
	retry "patchelf" apt-get install -y -qq --no-install-recommends patchelf >/dev/null

# The free-threaded builds not cached yet start first, in the background:
# they take minutes of CPU, the rest is mostly downloads.
FT_TODO=()
for v in $FT_VERSIONS; do [ -e "$DIR/${v}t/.done" ] || FT_TODO+=("$v"); done
FT_PIDS=()
if [ ${#FT_TODO[@]} -gt 0 ]; then
	echo "pythons.sh: free-threaded ${FT_TODO[*]/%/t} from Debian sid's sources into $DIR"
	retry "CPython's build dependencies" apt-get install -y -qq --no-install-recommends build-essential \
		libffi-dev zlib1g-dev libbz2-dev liblzma-dev libssl-dev xz-utils >/dev/null
	sid_apt
	FT_BUILD=()
	for v in "${FT_TODO[@]}"; do
		rm -rf "$DIR/.src-${v}t" "$DIR/${v}t" && mkdir -p "$DIR/.src-${v}t"
		retry "the source of Debian sid's python$v" sid_source "python$v" "$DIR/.src-${v}t"
		if ls "$DIR/.src-${v}t/python${v}_"*.orig.tar.xz >/dev/null 2>&1; then
			FT_BUILD+=("$v")
		else
			# Not fatal: the tests hold every interpreter they find (tests/pythons.h).
			echo "pythons.sh: Debian's archive here serves no python$v source (404 for every version sid lists): ${v}t is not built" >&2
			rm -rf "$DIR/.src-${v}t"
		fi
	done
	jobs=$(($(nproc) / (${#FT_BUILD[@]} > 0 ? ${#FT_BUILD[@]} : 1)))
	[ "$jobs" -ge 1 ] || jobs=1
	for v in "${FT_BUILD[@]}"; do
		build_ft "$v" "$jobs" &
		FT_PIDS+=($!)
	done
fi

if [ ! -x "$DIR/sid/usr/bin/python3.15" ] || [ ! -e "$DIR/sid/.done" ] ||
	! ls "$DIR"/sid/usr/share/python-wheels/pip-*.whl >/dev/null 2>&1; then
	echo "pythons.sh: CPython 3.14 and 3.15 from Debian sid into $DIR/sid"
	sid_apt
	rm -rf "$DIR/sid" && mkdir -p "$DIR/sid"
	# shellcheck disable=SC2086
	retry "Debian sid's $SID_PKGS" apt-get "${APT_OPTS[@]}" install -y --download-only --no-install-recommends \
		$SID_PKGS >/dev/null
	for deb in "$APTDIR"/archives/*.deb; do dpkg-deb -x "$deb" "$DIR/sid"; done
	libdir=$DIR/sid/usr/lib/x86_64-linux-gnu
	for v in 3.14 3.15; do
		patchelf --set-interpreter "$libdir/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libdir" \
			"$DIR/sid/usr/bin/python$v"
	done
	"$DIR/sid/usr/bin/python3.14" -c 'import sys, threading; assert sys.version_info[:2] == (3, 14)'
	"$DIR/sid/usr/bin/python3.15" -c 'import sys, threading; assert sys.version_info[:2] == (3, 15)'
	rm -f "$APTDIR"/archives/*.deb
	touch "$DIR/sid/.done"
fi

# dpkg-deb -x runs no postinst: byte-compile the standard library as
# Debian's py3compile would, or every run compiles what it imports.
if [ ! -e "$DIR/sid/.compiled" ]; then
	for v in 3.14 3.15; do
		"$DIR/sid/usr/bin/python$v" -m compileall -q -j0 -x 'lib2to3|test' "$DIR/sid/usr/lib/python$v" >/dev/null || true
	done
	touch "$DIR/sid/.compiled"
fi

failed=0
for pid in "${FT_PIDS[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || exit 1
echo "pythons.sh: $("$DIR/sid/usr/bin/python3.14" -V), $("$DIR/sid/usr/bin/python3.15" -V)$(for v in $FT_VERSIONS; do
	[ ! -x "$DIR/${v}t/bin/python${v}t" ] || printf ', %s' "$("$DIR/${v}t/bin/python${v}t" -VV | head -c 60)"
done)"
