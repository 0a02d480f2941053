#!/usr/bin/env bash
# A Debian package of the static binary for one CPU, made with debhelper from
# deploy/debian (copied as debian/ into a staging tree: the repository has no
# debian/ of its own). Nothing is compiled: the tree holds the binary, its man
# page, README.md and docs/*.md, and the systemd unit with the packaged path.
#   deploy/dist/deb.sh BIN MANPAGE VERSION DEBARCH(amd64|arm64) OUTDIR
#     -> OUTDIR/pyebpf_VERSION_DEBARCH.deb
# The changelog's one entry is made here from VERSION, dated
# SOURCE_DATE_EPOCH (default: the last commit's time), which dpkg then uses
# for every file's mtime. The package must pass lintian without an error.
# Needs: dpkg-dev, debhelper, lintian, file (an arm64 package builds on an
# x86-64 host with no arm64 package installed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=deploy/dist/common.sh
. "$here/common.sh"

[[ $# -eq 5 ]] || die "usage: deb.sh BIN MANPAGE VERSION DEBARCH(amd64|arm64) OUTDIR"
bin=$1 manpage=$2 version=$3 debarch=$4 outdir=$5
case $debarch in
amd64) cpu=x86_64 ;;
arm64) cpu=aarch64 ;;
*) die "DEBARCH '$debarch' is not amd64 or arm64" ;;
esac
check_version "$version"
check_elf "$bin" "$cpu"
[[ -f $manpage && -r $manpage ]] || die "MANPAGE '$manpage' is not a readable file"
grep -q '^\.TH PYEBPF 1 ' "$manpage" || die "MANPAGE '$manpage' is not pyebpf(1) (no .TH PYEBPF 1 line)"
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || die "$tool is missing (apt-get install dpkg-dev debhelper lintian)"
done
prepare_outdir "$outdir"
SOURCE_DATE_EPOCH=$(source_date_epoch "$repo")
export SOURCE_DATE_EPOCH
name="pyebpf_${version}_$debarch.deb"

tmp=$(mktemp -d)
CLEANUP+=("$tmp")
umask 022
src="$tmp/pyebpf-$version"
mkdir -p "$src/docs"
cp -r "$repo/deploy/debian" "$src/debian"
install -m 0755 "$bin" "$src/pyebpf"
install -m 0644 "$manpage" "$src/pyebpf.1"
install -m 0644 "$repo/README.md" "$src/README.md"
install -m 0644 "$repo"/docs/*.md "$src/docs/"

# The unit as deploy/pyebpf.service has it (for make install's
# /usr/local/bin), with the package's path and a word on how it comes.
{
	echo "# Installed by the pyebpf package as /usr/bin/pyebpf, the unit neither enabled nor"
	echo "# started: name the backend in /etc/default/pyebpf, then systemctl enable --now pyebpf."
	sed 's#^ExecStart=/usr/local/bin/pyebpf #ExecStart=/usr/bin/pyebpf #' "$repo/deploy/pyebpf.service"
} >"$src/debian/pyebpf.service"
grep -q '^ExecStart=/usr/bin/pyebpf ' "$src/debian/pyebpf.service" ||
	die "deploy/pyebpf.service has no 'ExecStart=/usr/local/bin/pyebpf ' line to point at /usr/bin/pyebpf"

# The changelog: one entry for VERSION, by the package's maintainer.
maintainer=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
{
	echo "pyebpf ($version) unstable; urgency=medium"
	echo
	echo "  * pyebpf $version: the static binary of make dist."
	echo
	echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} >"$src/debian/changelog"

# -b: the binary package alone; --host-arch: arm64 on an x86-64 host too (the
# rules compile and strip nothing, so no cross tools are run); -d: no build
# dependency is checked against the host architecture's packages (an arm64
# debhelper-compat would be looked for otherwise). make's variables of the
# caller (make dist) are kept away from debian/rules' make.
if ! (cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	dpkg-buildpackage -b -us -uc -d --host-arch "$debarch") >"$tmp/build.log" 2>&1; then
	cat "$tmp/build.log" >&2
	die "dpkg-buildpackage failed for $name"
fi
deb="$tmp/$name"
[[ -f $deb ]] || die "dpkg-buildpackage did not make $name: $(ls "$tmp")"
[[ $(dpkg-deb -f "$deb" Architecture) == "$debarch" && $(dpkg-deb -f "$deb" Version) == "$version" ]] ||
	die "$name says Architecture $(dpkg-deb -f "$deb" Architecture), Version $(dpkg-deb -f "$deb" Version)"

# lintian: no error (the overrides in deploy/debian/pyebpf.lintian-overrides
# say why each is inherent); its warnings are shown.
if ! lintian --fail-on error --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1; then
	cat "$tmp/lintian.log" >&2
	die "lintian finds errors in $name"
fi
grep -v "^running with root privileges" "$tmp/lintian.log" | sed "s/^/lintian: /" >&2 || true

publish "$deb" "$outdir" "$name"
echo "$outdir/$name"
