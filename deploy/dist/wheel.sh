#!/usr/bin/env bash
# A wheel of the static binary for one CPU, as py-spy ships itself: the binary
# is the wheel's one script (pyebpf-VERSION.data/scripts/pyebpf, 0755), so
# `pip install pyebpf` puts it on the environment's PATH; the platform tag
# manylinux_2_31_ARCH says which CPU and glibc floor (Debian 11's), and
# `auditwheel show` must agree with it.
#   deploy/dist/wheel.sh BIN VERSION ARCH(x86_64|aarch64) OUTDIR
#     -> OUTDIR/pyebpf-VERSION-py3-none-manylinux_2_31_ARCH.whl
# The tools (setuptools, build, auditwheel: deploy/dist/requirements.txt) are
# installed into a venv of their own, $PYEBPF_DIST_TOOLS
# (/var/cache/pyebpf/dist-tools), on first use. SOURCE_DATE_EPOCH dates the
# zip entries (default: the last commit's time).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=deploy/dist/common.sh
. "$here/common.sh"

[[ $# -eq 4 ]] || die "usage: wheel.sh BIN VERSION ARCH(x86_64|aarch64) OUTDIR"
bin=$1 version=$2 arch=$3 outdir=$4
case $arch in
x86_64 | aarch64) ;;
*) die "ARCH '$arch' is not x86_64 or aarch64" ;;
esac
check_version "$version"
check_elf "$bin" "$arch"
prepare_outdir "$outdir"
# The binary's glibc floor, as the static build promises: the wheel claims it
# and auditwheel checks the binary asks for nothing newer.
plat="manylinux_2_31_$arch"
name="pyebpf-$version-py3-none-$plat.whl"
SOURCE_DATE_EPOCH=$(source_date_epoch "$repo")
export SOURCE_DATE_EPOCH

# The tools' venv, made once per requirements.txt and Python: under a lock,
# since make -j builds both wheels at once; its stamp is written last, so an
# interrupted install is never taken for a finished one (a venv cannot be
# made elsewhere and moved: its scripts name its path).
tools=${PYEBPF_DIST_TOOLS:-/var/cache/pyebpf/dist-tools}
stamp="$(sha256sum <"$here/requirements.txt" | cut -d' ' -f1) $(python3 -c 'import sys; print(sys.base_prefix, sys.version.split()[0])')"
mkdir -p "$(dirname "$tools")"
exec 9>"$tools.lock"
flock 9
if [[ $(cat "$tools/.stamp" 2>/dev/null) != "$stamp" ]] || ! "$tools/bin/python" -c '' 2>/dev/null; then
	rm -rf "$tools"
	python3 -m venv "$tools" || die "cannot make a venv with python3 -m venv (Debian: apt-get install python3-venv)"
	"$tools/bin/pip" install --quiet --disable-pip-version-check --require-hashes --only-binary=:all: \
		-r "$here/requirements.txt" || die "cannot install the wheel tools (deploy/dist/requirements.txt) into $tools"
	echo "$stamp" >"$tools/.stamp"
fi
flock -u 9

tmp=$(mktemp -d)
CLEANUP+=("$tmp")
# The staging tree setuptools builds from: the binary, the README its long
# description comes from, and deploy/dist/wheel-setup.py as setup.py. A umask
# of 022 so that the zip entries' modes do not depend on the caller's.
umask 022
mkdir "$tmp/src"
cp "$bin" "$tmp/src/pyebpf"
cp "$repo/README.md" "$tmp/src/README.md"
cp "$here/wheel-setup.py" "$tmp/src/setup.py"
# Same mtime on every input: setuptools copies them into the wheel's tree.
touch -d "@$SOURCE_DATE_EPOCH" "$tmp/src"/*
# --no-isolation: build with the pinned setuptools of the venv, not whatever
# version an isolated build environment would fetch.
if ! (cd "$tmp/src" && PYEBPF_WHEEL_VERSION=$version PYEBPF_WHEEL_PLAT=$plat \
	"$tools/bin/python" -m build --wheel --no-isolation --outdir "$tmp/out" .) >"$tmp/build.log" 2>&1; then
	cat "$tmp/build.log" >&2
	die "python -m build failed for $name"
fi
[[ -f $tmp/out/$name ]] || die "python -m build did not make $name: $(ls "$tmp/out")"

# auditwheel's verdict: the most compatible tag the binary allows (from the
# glibc symbol versions it asks for, none for a static binary) must be at
# most as new as the tag claimed, and for the same CPU.
"$tools/bin/auditwheel" show --json "$tmp/out/$name" >"$tmp/audit.json" 2>"$tmp/audit.err" || {
	cat "$tmp/audit.err" >&2
	die "auditwheel show failed on $name"
}
verdict=$("$tools/bin/python" - "$tmp/audit.json" "$plat" <<'EOF'
import json, re, sys
info = json.load(open(sys.argv[1]))
claimed = sys.argv[2]
tag = info.get("overall_tag") or info.get("error") or "none"
m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
c = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", claimed)
ok = bool(m) and m.group(3) == c.group(3) and \
    (int(m.group(1)), int(m.group(2))) <= (int(c.group(1)), int(c.group(2)))
print(("ok " if ok else "bad ") + tag + " " + json.dumps(info.get("versioned_symbols", {})))
EOF
)
[[ $verdict == ok\ * ]] || die "auditwheel does not accept $plat for $bin: the binary needs ${verdict#bad }"

publish "$tmp/out/$name" "$outdir" "$name"
echo "$outdir/$name"
