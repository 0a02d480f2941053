#!/usr/bin/env bash
# The CPythons the tests need beyond pyenv's: Debian sid's 3.14 and 3.15
# (binary packages, run from a private root) and a free-threaded 3.13t
# built from Debian's python3.13 source. Everything comes from the Debian
# archive this machine's apt already uses; results are cached in DIR, so a
# second run takes a second.
#
#   bash .ci/pythons.sh [DIR]     (default /var/cache/pyebpf/pythons)
#
# DIR/sid/usr/bin/python3.14, DIR/sid/usr/bin/python3.15: sid's builds need
# glibc >= 2.38, so sid's libc and libraries are unpacked beside them and
# the interpreters point at them with patchelf (the loader, and DT_RPATH so
# that libraries loaded by libraries come from the same root).
# DIR/3.13t/bin/python3.13t: ./configure --disable-gil.
set -euo pipefail
DIR=${1:-/var/cache/pyebpf/pythons}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
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
	[ -n "$(ls "$APTDIR/lists" 2>/dev/null | grep Packages || true)" ] || apt-get "${APT_OPTS[@]}" update >/dev/null
}

command -v patchelf >/dev/null || apt-get install -y -qq --no-install-recommends patchelf >/dev/null

if [ ! -x "$DIR/sid/usr/bin/python3.15" ] || [ ! -e "$DIR/sid/.done" ] ||
	! ls "$DIR"/sid/usr/share/python-wheels/pip-*.whl >/dev/null 2>&1; then
	echo "pythons.sh: CPython 3.14 and 3.15 from Debian sid into $DIR/sid"
	sid_apt
	rm -rf "$DIR/sid" && mkdir -p "$DIR/sid"
	apt-get "${APT_OPTS[@]}" install -y --download-only --no-install-recommends $SID_PKGS >/dev/null
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

if [ ! -e "$DIR/3.13t/.done" ]; then
	echo "pythons.sh: a free-threaded CPython 3.13t from Debian's python3.13 source into $DIR/3.13t (~4 min)"
	apt-get install -y -qq --no-install-recommends build-essential libffi-dev zlib1g-dev libbz2-dev liblzma-dev \
		libssl-dev xz-utils >/dev/null
	sid_apt
	src=$DIR/.src
	rm -rf "$src" "$DIR/3.13t" && mkdir -p "$src"
	# The archive may list a newer version than its pool holds yet: take the newest it serves.
	for v in $(apt-cache "${APT_OPTS[@]}" showsrc python3.13 | sed -n 's/^Version: //p' | sort -rV); do
		(cd "$src" && apt-get "${APT_OPTS[@]}" source --download-only "python3.13=$v" >/dev/null 2>&1) && break
	done
	ls "$src"/python3.13_*.orig.tar.xz >/dev/null
	tar -C "$src" -xf "$src"/python3.13_*.orig.tar.xz
	(cd "$src"/Python-3.13.* && ./configure -q --disable-gil --prefix="$DIR/3.13t" --without-ensurepip >/dev/null &&
		make -s -j"$(nproc)" >/dev/null 2>&1 && make -s altinstall >/dev/null 2>&1)
	"$DIR/3.13t/bin/python3.13t" -c 'import sys; assert not sys._is_gil_enabled()'
	rm -rf "$src"
	touch "$DIR/3.13t/.done"
fi
echo "pythons.sh: $("$DIR/sid/usr/bin/python3.14" -V), $("$DIR/sid/usr/bin/python3.15" -V), $("$DIR/3.13t/bin/python3.13t" -VV | head -c 60)"
