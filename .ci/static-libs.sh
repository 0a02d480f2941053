#!/usr/bin/env bash
# The two libraries pyebpf links statically that Debian does not ship in a
# form a self-contained binary can use, built from Debian's own sources:
#   - libcurl: Debian's libcurl.a brings curl's whole dependency set (GnuTLS
#     or OpenSSL, nghttp2, idn2, rtmp, ssh2, psl, GSSAPI, LDAP), several of
#     which have no static archive. pyebpf needs HTTP(S) POSTs only: this one
#     speaks HTTP and HTTPS over OpenSSL (Debian's libssl.a: TLS 1.3, security
#     support), resolves names with c-ares (a static glibc cannot use NSS
#     modules safely: getaddrinfo would dlopen the host's libnss_*), and
#     leaves out every other protocol, cookies, netrc and the CA paths (pyebpf
#     finds the host's CA bundle itself, user/push/ca_bundle.c).
#   - libmicrohttpd: Debian's is built with GnuTLS, which has no static
#     archive; serve speaks plain HTTP on loopback, so --disable-https.
# Everything else pyebpf links comes from Debian's -dev packages' .a files.
#
#   bash .ci/static-libs.sh ARCH DIR    (ARCH: x86 or arm64; arm64 cross-built)
#
# DIR/include and DIR/lib, with a stamp naming the sources' versions and
# this recipe: a second run with both unchanged takes a second.
set -euo pipefail
ARCH=${1:?usage: static-libs.sh x86|arm64 DIR}
DIR=${2:?usage: static-libs.sh x86|arm64 DIR}
case $ARCH in
x86) HOST=x86_64-linux-gnu ;;
arm64) HOST=aarch64-linux-gnu ;;
*) echo "static-libs.sh: ARCH is x86 or arm64, not '$ARCH'" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/retry.sh"
SRC_PKGS="curl libmicrohttpd"

# A private apt that reads the sources of the packages the host installs
# from: the host's own entries (deb822 or one-line), as deb-src.
APTDIR=/var/cache/pyebpf/static-src/apt
src_apt() {
	mkdir -p "$APTDIR"/{lists/partial,archives/partial,parts}
	: >"$APTDIR/status"
	rm -f "$APTDIR"/parts/*
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$APTDIR/parts/$(basename "$f")"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] && sed -n 's/^deb\([[:space:]]\)/deb-src\1/p' "$f" >"$APTDIR/parts/$(basename "$f" .list).list"
	done
	APT_OPTS=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APTDIR/parts"
		-o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR" -o "Dir::State::status=$APTDIR/status"
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	retry "apt-get update (Debian's source lists)" apt-get "${APT_OPTS[@]}" update >/dev/null
}

# One source package: a failed try's partial files are not kept for the next.
fetch_source() {
	apt-get "${APT_OPTS[@]}" source --download-only "$1=$2" >/dev/null && return 0
	local rc=$?
	rm -f ./"$1"_*
	return "$rc"
}

# The versions the archive has now, and this recipe: the stamp.
src_apt
want=$(for p in $SRC_PKGS; do apt-cache "${APT_OPTS[@]}" showsrc "$p" | sed -n 's/^Version: //p' | sort -V | tail -n1 |
	sed "s/^/$p /"; done)
want="$want
recipe $(sha256sum "$HERE/static-libs.sh" | cut -c1-16)"
if [ -e "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$want" ]; then
	exit 0
fi
echo "static-libs.sh: a trimmed libcurl and libmicrohttpd for $ARCH from Debian's sources into $DIR"

work=$(mktemp -d /var/cache/pyebpf/static-src/build.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Each package at the version the stamp names (the newest the sources list).
for p in $SRC_PKGS; do
	v=$(echo "$want" | sed -n "s/^$p //p")
	retry "Debian source package $p $v" fetch_source "$p" "$v"
done
# The .dsc was checked by apt against the archive's signed Sources index; its
# maintainer's own signature needs debian-keyring, which is not needed then.
for dsc in ./*.dsc; do dpkg-source -q --no-check -x "$dsc" >/dev/null; done
out=$work/out
common=(--host="$HOST" --prefix="$out" --disable-shared --enable-static --with-pic=no)
export CC=${HOST}-gcc CFLAGS="-O2 -g0 -ffunction-sections -fdata-sections"
[ "$ARCH" = x86 ] && export CC=gcc
export PKG_CONFIG_PATH="$out/lib/pkgconfig" PKG_CONFIG_LIBDIR=/usr/lib/$HOST/pkgconfig:/usr/share/pkgconfig

(
	cd curl-*/
	# Debian's patches are applied by dpkg-source; the release's configure is shipped.
	[ -x configure ] || autoreconf -fi >/dev/null 2>&1
	./configure "${common[@]}" --with-openssl --enable-ares --without-ca-bundle --without-ca-path \
		--without-ca-fallback --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
		--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap \
		--disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-manual --disable-netrc \
		--disable-ntlm --disable-ntlm-wb --disable-kerberos-auth --disable-negotiate-auth --disable-cookies \
		--disable-alt-svc --disable-hsts --disable-doh --disable-mime --disable-dateparse --disable-progress-meter \
		--disable-unix-sockets --disable-aws --disable-dnsshuffle --disable-get-easy-options --disable-socketpair \
		--disable-websockets --without-libidn2 --without-libpsl --without-nghttp2 --without-nghttp3 --without-ngtcp2 \
		--without-brotli --without-zstd --without-zlib --without-librtmp --without-libssh --without-libssh2 \
		--without-gssapi --without-libgsasl --disable-docs >config.out 2>&1 || { tail -n 30 config.log; exit 1; }
	make -j"$(nproc)" -C lib >make.out 2>&1 || { tail -n 30 make.out; exit 1; }
	make -C lib install >/dev/null
	make -C include install >/dev/null
	make install-pkgconfigDATA >/dev/null
)
(
	cd libmicrohttpd-*/
	[ -x configure ] || autoreconf -fi >/dev/null 2>&1
	./configure "${common[@]}" --disable-https --disable-doc --disable-examples --disable-curl --disable-tools \
		--disable-dauth --disable-bauth --disable-postprocessor --disable-httpupgrade \
		--disable-messages --without-gnutls >config.out 2>&1 || { tail -n 30 config.log; exit 1; }
	make -j"$(nproc)" -C src/microhttpd >make.out 2>&1 || { tail -n 30 make.out; exit 1; }
	make -C src/microhttpd install >/dev/null
	make -C src/include install >/dev/null
	make install-pkgconfigDATA >/dev/null 2>&1 || cp libmicrohttpd.pc "$out/lib/pkgconfig/" 2>/dev/null || true
)
# In place at once: a build cut short leaves the previous one whole.
rm -rf "$DIR.new" && mkdir -p "$(dirname "$DIR")"
mv "$out" "$DIR.new"
echo "$want" >"$DIR.new/.stamp"
rm -rf "$DIR" && mv "$DIR.new" "$DIR"
