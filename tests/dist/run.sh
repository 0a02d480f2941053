#!/usr/bin/env bash
# The dist stage: what `make dist` leaves in DISTDIR, used as a user of
# another machine would use it, with nothing of this checkout's build.
#
#   bash tests/dist/run.sh DISTDIR VERSION
#
# One line per check, `dist: ok NAME` or `dist: FAIL NAME: why` followed by
# the evidence (the check's own output, indented); measured numbers follow an
# ok line, indented; then `dist: N passed, N failed` (the line
# tests/stages.sh counts) and a non-zero exit if any failed.
#
# The checks (each in its own process group under `timeout`, so a hung one
# is ended with everything it started and the next one runs):
#   static-x86_64, static-aarch64   the binaries are static ELF executables of their CPU
#   split-bullseye, split-trixie    the x86-64 binary alone in a bare root of that Debian
#                                   (tests/dist/roots.sh) records the root's own python3
#                                   running pywork.py's 60/40 split: the share within
#                                   SPLIT_PP points of the CPU the workload measured
#                                   itself, frames with file:line (the integration
#                                   tests' check, tests/integ/test_kernels.c)
#   deb-bullseye, deb-trixie        dpkg -i, --version, man pyebpf, dpkg --purge leaves no file
#   deb-arm64                       the arm64 package's fields and binary
#   wheel-3.8, wheel-3.15           pip install --no-index into a fresh venv of pyenv's 3.8 and
#                                   sid's 3.15; the venv's pyebpf records the venv's python
#   wheel-aarch64                   the aarch64 wheel's tag and binary
#   oci-layout                      the archive: an index of linux/amd64 and linux/arm64, each
#                                   image only /usr/bin/pyebpf and the CA bundle, that entrypoint
#   oci-load                        skopeo loads it into a private dockerd (tests/engines/docker.sh):
#                                   amd64, its entrypoint, --version
#   oci-daemonset                   the image run as deploy/daemonset.yaml runs it (host PID,
#                                   exactly its capabilities, read from /proc, read-only root,
#                                   its mounts) on that engine's containerd (ctr: dockerd 20.10
#                                   knows no CAP_BPF), pushing to a Pyroscope stand-in and an
#                                   OTel Collector (tests/backends/) while a python3 runs in a
#                                   docker container (the trixie root imported) and one on the host
#   oci-pyroscope, oci-otlp         both pythons' functions arrived at that backend, with file:line
#   oci-container-label             the container's series carries its container_id and name, and only its samples
#
# Caches: the roots (/var/cache/pyebpf/roots, roots.sh), the private
# dockerd's image store ($PYEBPF_DOCKER_DATA, /var/cache/pyebpf/docker: the
# python image is imported once per root build), the backends
# (/var/cache/pyebpf/backends, `make backends`). Needs root, mmdebstrap,
# docker.io (dockerd, containerd, ctr, runc), skopeo, pyenv's 3.8, and for
# 3.15's venv a pip that runs on 3.15: sid's python3-pip-whl in
# $PYEBPF_PYTHONS_DIR/sid/usr/share/python-wheels. Cached, a run takes ~50 s;
# the roots' first build adds ~1.5 min.
# PYEBPF_DIST_KEEP=1 keeps the work directory (logs, recordings).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SELF=$HERE/run.sh
ROOTS=$HERE/roots.sh
ENGINE=$TOP/tests/engines/docker.sh
BACKENDS=$TOP/tests/backends
FIXTURE=$TOP/tests/fixtures/pywork.py
DAEMONSET=$TOP/deploy/daemonset.yaml
PYTHONS_DIR=${PYEBPF_PYTHONS_DIR:-/var/cache/pyebpf/pythons}
DOCKER_DATA=${PYEBPF_DOCKER_DATA:-/var/cache/pyebpf/docker}
PYRO_PORT=${PYEBPF_DIST_PYROSCOPE_PORT:-24240}
OTEL_PORT=${PYEBPF_DIST_OTELCOL_PORT:-24241}
# The split's bound and length: ~5,000 samples at 999 Hz, one standard
# deviation of the sampled share ~0.7 points, so 3 points is over 4 sigma.
SPLIT_PP=${PYEBPF_DIST_SPLIT_PP:-3}
SPLIT_SECONDS=5
CPU_TYPE=process_cpu:cpu:nanoseconds:cpu:nanoseconds
PY_IMAGE=pyebpf-dist-python:trixie
export HERE TOP SELF ROOTS ENGINE BACKENDS FIXTURE DAEMONSET PYTHONS_DIR PYRO_PORT OTEL_PORT SPLIT_PP \
	SPLIT_SECONDS CPU_TYPE PY_IMAGE

# ---- inside a check ----------------------------------------------------------
# A check is a function run by `run.sh __check NAME FUNC ARGS` in a process
# of its own: `fail WHY` ends it, `note TEXT` adds a line under its ok.

fail() {
	echo "$*" >"$WORK/$CHECK.why"
	echo "run.sh: $*"
	exit 1
}
note() { echo "$*" >>"$WORK/$CHECK.note"; }

bin_of() { echo "$DISTDIR/pyebpf-$VERSION-linux-$1"; }
deb_of() { echo "$DISTDIR/pyebpf_${VERSION}_$1.deb"; }
wheel_of() { echo "$DISTDIR/pyebpf-$VERSION-py3-none-manylinux_2_31_$1.whl"; }
oci_of() { echo "$DISTDIR/pyebpf-$VERSION-oci.tar"; }

# FILE: `pyebpf VERSION` (anything after it but another digit or dot).
version_is_ours() {
	local want=${VERSION//./\\.}
	grep -qE "^pyebpf $want([^0-9.]|$)" "$1"
}

# BIN CPU(x86_64|aarch64): a static ELF executable for that CPU, or fail.
static_elf() {
	local bin=$1 cpu=$2 desc want
	[ -f "$bin" ] || fail "no $bin"
	desc=$(file -b "$bin")
	case $cpu in
	x86_64) want='x86-64' ;;
	aarch64) want='ARM aarch64' ;;
	esac
	[[ $desc == ELF\ 64-bit*"$want"* ]] || fail "$(basename "$bin") is not an $cpu ELF file: $desc"
	echo "$desc"
	# A static binary has no loader to ask for and no library to load.
	if readelf -lW "$bin" | grep -q 'Requesting program interpreter' || readelf -dW "$bin" | grep -q '(NEEDED)'; then
		readelf -lW "$bin" | grep 'program interpreter'
		readelf -dW "$bin" | grep '(NEEDED)'
		fail "$(basename "$bin") is not statically linked: $desc"
	fi
}

# The last of PATHS (a glob's matches) in version order; empty if none exists.
newest() {
	local p
	for p in "$@"; do [ -e "$p" ] && echo "$p"; done | sort -V | tail -n 1
}

# The line of a `# LINE:NAME` marker in pywork.py.
marker() { grep -n "# LINE:$1\$" "$FIXTURE" | cut -d: -f1; }

# FOLDED SCRIPT STDOUT WHERE: pywork.py's split in a folded recording:
# alpha's calls of work at their file:line and beta's, their share against
# the share the workload measured itself (its stdout), within SPLIT_PP.
check_split() {
	local folded=$1 script=$2 stdout=$3 where=$4 truth total a b wl share
	[ -s "$folded" ] || fail "$where: no recording"
	truth=$(sed -n 's/^alpha-cpu-share \([0-9.]*\)$/\1/p' "$stdout")
	[ -n "$truth" ] || fail "$where: the workload printed no alpha-cpu-share: $(head -c 300 "$stdout")"
	# A folded line is "frame;frame;... COUNT": frames hold spaces, the count is the last field.
	read -r total a b wl < <(awk -v A="alpha ($script:$(marker alpha-call))" -v B="beta ($script:" \
		-v W="work ($script:" -v WL="work ($script:$(marker work))" '
		{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1); t += n
		  if (index(s, A) && index(s, W)) a += n
		  if (index(s, B) && index(s, W)) b += n
		  if (index(s, WL)) wl += n }
		END { print t + 0, a + 0, b + 0, wl + 0 }' "$folded")
	if [ "$total" -lt 200 ]; then
		head -n 20 "$folded"
		fail "$where: only $total samples"
	fi
	if [ $((a + b)) -lt $((total * 8 / 10)) ]; then
		sort -t' ' -k2 -n -r "$folded" | head -n 10
		fail "$where: only $((a + b)) of $total samples in alpha/beta calling work at $script:LINE"
	fi
	# Lines, not only names: work's samples are on its marked line.
	if [ $((wl * 2)) -lt $((a + b)) ]; then
		grep -o "work ($script:[0-9]*)" "$folded" | sort | uniq -c
		fail "$where: work at line $(marker work) in only $wl of $((a + b)) samples"
	fi
	share=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	note "$where: alpha $share% of $((a + b)) samples, measured $truth%; work's line in $wl"
	if ! awk -v s="$share" -v t="$truth" -v p="$SPLIT_PP" 'BEGIN { exit !(s > t - p && s < t + p) }'; then
		fail "$where: alpha has $share% of $((a + b)) samples, the workload measured $truth% (±$SPLIT_PP)"
	fi
}

# SUITE: its root, built now if it is not cached (the time it took is noted).
need_root() {
	if ! bash "$ROOTS" build "$1" >/dev/null 2>"$WORK/$CHECK.root"; then
		cat "$WORK/$CHECK.root"
		fail "no $1 root: $(tail -n1 "$WORK/$CHECK.root")"
	fi
	grep -h ' built in ' "$WORK/$CHECK.root" | sed 's/^roots.sh: /root /' >>"$WORK/$CHECK.note"
}

chk_static() { # CPU
	static_elf "$(bin_of "$1")" "$1"
}

chk_split() { # SUITE
	local suite=$1 bin out rc
	bin=$(bin_of x86_64)
	[ -f "$bin" ] || fail "no $bin"
	out=$WORK/$CHECK
	mkdir -p "$out"
	need_root "$suite"
	# The binary and the workload are copied in, nothing else: the root's
	# own python3 and libc, pyebpf's output back through /out.
	bash "$ROOTS" run "$suite" --copy "$bin:/usr/local/bin/pyebpf" --copy "$FIXTURE:/root/pywork.py" \
		--bind "$out:/out" -- sh -c 'python3 -V >/out/python 2>&1
		pyebpf record -F 999 -o /out/split.folded -- python3 /root/pywork.py split "$1" >/out/stdout 2>/out/stderr
		echo $? >/out/rc' sh "$SPLIT_SECONDS"
	rc=$(cat "$out/rc" 2>/dev/null)
	cat "$out/stderr" 2>/dev/null
	[ "$rc" = 0 ] || fail "pyebpf record in $suite's root exited ${rc:-?}: $(grep -v '^pyebpf: \(wrote\|cost\)' "$out/stderr" 2>/dev/null | tail -n 1)"
	check_split "$out/split.folded" /root/pywork.py "$out/stdout" "$suite ($(cat "$out/python"))"
}

chk_deb() { # SUITE
	local suite=$1 deb out why
	deb=$(deb_of amd64)
	[ -f "$deb" ] || fail "no $deb"
	out=$WORK/$CHECK
	mkdir -p "$out"
	need_root "$suite"
	cp "$deb" "$out/pyebpf.deb"
	# Run in the root by its dash: every step's failure is a "why:" line.
	cat >"$out/test.sh" <<'EOF'
set -u
cd /tmp/dist
v=$(echo "$1" | sed 's/\./\\./g')
why() { echo "why: $*"; exit 1; }
# Every file of the root but the mounts and this directory.
list() {
	find / \( -path /proc -o -path /sys -o -path /dev -o -path /tmp/dist \) -prune -o -print | LC_ALL=C sort >"$1"
}
list before.txt
dpkg -i pyebpf.deb >dpkg-i.log 2>&1
rc=$?
[ $rc = 0 ] || { cat dpkg-i.log; why "dpkg -i exited $rc: $(tail -n 1 dpkg-i.log)"; }
cat dpkg-i.log
[ "$(command -v pyebpf)" = /usr/bin/pyebpf ] || why "pyebpf on PATH is '$(command -v pyebpf)', not /usr/bin/pyebpf"
pyebpf --version >version.txt 2>&1
rc=$?
[ $rc = 0 ] || { cat version.txt; why "pyebpf --version exited $rc: $(head -n 1 version.txt)"; }
grep -qE "^pyebpf $v([^0-9.]|\$)" version.txt || why "pyebpf --version printed '$(head -n 1 version.txt)', not pyebpf $1"
man -P cat pyebpf >man.txt 2>man.err
rc=$?
[ $rc = 0 ] || { cat man.err; why "man pyebpf exited $rc: $(head -n 1 man.err)"; }
grep -q record man.txt || { head -n 20 man.txt; why "man pyebpf shows no 'record'"; }
dpkg -L pyebpf >files.txt
dpkg --purge pyebpf >purge.log 2>&1
rc=$?
[ $rc = 0 ] || { cat purge.log; why "dpkg --purge exited $rc: $(tail -n 1 purge.log)"; }
list after.txt
# What dpkg keeps of any package it ran (its database and log), and what
# man-db's trigger and man itself rewrite (its index cache), are not the
# package's files.
diff before.txt after.txt | sed -n 's/^[<>] //p' |
	grep -vE '^/var/lib/dpkg(/|$)|^/var/log/dpkg\.log$|^/var/cache/man(/|$)' >left.txt
if [ -s left.txt ]; then
	diff before.txt after.txt | head -n 30
	why "dpkg --purge left $(wc -l <left.txt) paths changed: $(head -n 3 left.txt | tr '\n' ' ')"
fi
echo "ok: $(head -n 1 version.txt); $(wc -l <files.txt) paths installed and purged"
EOF
	bash "$ROOTS" run "$suite" --bind "$out:/tmp/dist" -- sh /tmp/dist/test.sh "$VERSION" >"$out/out.txt" 2>&1
	cat "$out/out.txt"
	why=$(sed -n 's/^why: //p' "$out/out.txt" | tail -n 1)
	[ -z "$why" ] || fail "$suite: $why"
	grep -q '^ok: ' "$out/out.txt" || fail "$suite: the test in the root ended early"
	note "$suite: $(sed -n 's/^ok: //p' "$out/out.txt")"
}

chk_deb_arm64() {
	local deb f want out
	deb=$(deb_of arm64)
	[ -f "$deb" ] || fail "no $deb"
	for f in Package:pyebpf Version:"$VERSION" Architecture:arm64; do
		want=${f#*:}
		[ "$(dpkg-deb -f "$deb" "${f%%:*}")" = "$want" ] || fail "$(basename "$deb"): ${f%%:*} is '$(dpkg-deb -f "$deb" "${f%%:*}")', not '$want'"
	done
	out=$WORK/$CHECK
	mkdir -p "$out"
	dpkg-deb -x "$deb" "$out" || fail "dpkg-deb -x failed"
	static_elf "$out/usr/bin/pyebpf" aarch64
	ls "$out"/usr/share/man/man1/pyebpf.1* >/dev/null 2>&1 || fail "no man page in $(basename "$deb")"
}

# pip ARGS, as on a machine with no pip configuration: no PIP_* variable
# of this one's (PIP_FIND_LINKS would add a directory of wheels), and no
# configuration file (PIP_CONFIG_FILE=/dev/null: pip reads none).
pip_clean() {
	local unset=() v
	for v in $(compgen -e | grep '^PIP_'); do unset+=(-u "$v"); done
	env "${unset[@]}" PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"
}

# PYTHON VENV: a fresh venv with pip. An interpreter without ensurepip
# (Debian's: it is python3.X-venv's, and it would take the host's
# /usr/share/python-wheels) gets one as ensurepip would install it, from
# sid's pip wheel (python3-pip-whl): bookworm's pip 23 and pyenv's 24.2 do
# not run on 3.15 (typing.no_type_check_decorator is gone).
make_venv() {
	local py=$1 venv=$2 whl
	if "$py" -c 'import ensurepip' 2>/dev/null; then
		pip_clean "$py" -m venv "$venv" || fail "$py -m venv failed"
		return
	fi
	whl=$(newest "$PYTHONS_DIR"/sid/usr/share/python-wheels/pip-*.whl)
	[ -n "$whl" ] || fail "$py has no ensurepip and there is no pip wheel in $PYTHONS_DIR/sid/usr/share/python-wheels (sid's python3-pip-whl)"
	"$py" -m venv --without-pip "$venv" || fail "$py -m venv --without-pip failed"
	pip_clean "$venv/bin/python" "$whl/pip" install -q --no-index --no-cache-dir "$whl" ||
		fail "pip from $(basename "$whl") did not install into the venv of $py"
	note "$($py -V): no ensurepip; pip $(basename "$whl" | cut -d- -f2) from sid's python3-pip-whl"
}

chk_wheel() { # 3.8 | 3.15
	local ver=$1 py whl venv out rc
	whl=$(wheel_of x86_64)
	[ -f "$whl" ] || fail "no $whl"
	case $ver in
	3.8) py=$(newest "$HOME"/.pyenv/versions/3.8*/bin/python3.8) ;;
	3.15) py=$PYTHONS_DIR/sid/usr/bin/python3.15 ;;
	esac
	[ -x "$py" ] || fail "no python$ver (pyenv's 3.8; sid's 3.15 in $PYTHONS_DIR: make test-deps)"
	out=$WORK/$CHECK
	venv=$out/venv
	mkdir -p "$out"
	make_venv "$py" "$venv"
	pip_clean "$venv/bin/pip" install --no-index --no-cache-dir "$whl" ||
		fail "pip install --no-index $(basename "$whl") into python$ver's venv failed"
	[ -x "$venv/bin/pyebpf" ] || fail "the venv has no bin/pyebpf: $(cd "$venv/bin" && echo *)"
	static_elf "$venv/bin/pyebpf" x86_64 >/dev/null
	"$venv/bin/pyebpf" --version >"$out/version" 2>&1 || fail "venv/bin/pyebpf --version exited $?: $(head -n 1 "$out/version")"
	version_is_ours "$out/version" || fail "venv/bin/pyebpf --version printed '$(head -n 1 "$out/version")'"
	"$venv/bin/pyebpf" record -F 999 -o "$out/rec.folded" -- "$venv/bin/python" "$FIXTURE" split 3 \
		>"$out/stdout" 2>"$out/stderr"
	rc=$?
	cat "$out/stderr"
	[ "$rc" = 0 ] || fail "venv/bin/pyebpf record exited $rc: $(tail -n 1 "$out/stderr")"
	check_split "$out/rec.folded" "$FIXTURE" "$out/stdout" "$("$venv/bin/python" -V 2>&1) in a venv"
}

# What a wheel or image holds, by Python's own zipfile and tarfile: the
# names and the binary inside.
chk_wheel_aarch64() {
	local whl out
	whl=$(wheel_of aarch64)
	[ -f "$whl" ] || fail "no $whl"
	out=$WORK/$CHECK
	mkdir -p "$out"
	python3 - "$whl" "$VERSION" "$out/pyebpf" <<'EOF' || fail "$(basename "$whl") is not what pip would install as pyebpf for aarch64 (above)"
import sys, zipfile
whl, v, dest = sys.argv[1:4]
z = zipfile.ZipFile(whl)
names = set(z.namelist())
script = "pyebpf-%s.data/scripts/pyebpf" % v
wheel = "pyebpf-%s.dist-info/WHEEL" % v
ok = True
for n in (script, wheel, "pyebpf-%s.dist-info/METADATA" % v, "pyebpf-%s.dist-info/RECORD" % v):
    if n not in names:
        print("missing", n, "; has", sorted(names)); ok = False
if ok:
    tags = [l.split(":", 1)[1].strip() for l in z.read(wheel).decode().splitlines() if l.startswith("Tag:")]
    if tags != ["py3-none-manylinux_2_31_aarch64"]:
        print("WHEEL tags", tags); ok = False
    mode = z.getinfo(script).external_attr >> 16
    if mode & 0o111 != 0o111:
        print("the script's mode is %o, not executable" % mode); ok = False
    open(dest, "wb").write(z.read(script))
sys.exit(0 if ok else 1)
EOF
	static_elf "$out/pyebpf" aarch64
}

chk_oci_layout() {
	local oci
	oci=$(oci_of)
	[ -f "$oci" ] || fail "no $oci"
	python3 - "$oci" "$(bin_of x86_64)" >"$WORK/$CHECK.out" <<'EOF' || { cat "$WORK/$CHECK.out"; fail "$(basename "$oci"): not the layout promised (above)"; }
import gzip, hashlib, io, json, sys, tarfile
path, x86 = sys.argv[1:3]
outer = tarfile.open(path)
files = {m.name.lstrip("./"): m for m in outer.getmembers() if m.isfile()}
def read(name):
    return outer.extractfile(files[name]).read()
def blob(desc):
    algo, hexd = desc["digest"].split(":")
    data = read("blobs/%s/%s" % (algo, hexd))
    if hashlib.new(algo, data).hexdigest() != hexd:
        raise SystemExit("blob %s does not match its digest" % desc["digest"])
    return data
bad = []
if "oci-layout" not in files or json.loads(read("oci-layout")).get("imageLayoutVersion") != "1.0.0":
    bad.append("no oci-layout 1.0.0")
# index.json lists the platform manifests, or an image index that does.
plats = {}
def walk(index):
    for m in index.get("manifests", []):
        mt = m.get("mediaType", "")
        if mt.endswith("image.index.v1+json") or mt.endswith("manifest.list.v2+json"):
            walk(json.loads(blob(m)))
        else:
            p = m.get("platform", {})
            plats["%s/%s" % (p.get("os"), p.get("architecture"))] = m
walk(json.loads(read("index.json")))
want_machine = {"linux/amd64": 62, "linux/arm64": 183}  # ELF e_machine: x86-64, AArch64
for plat in ("linux/amd64", "linux/arm64"):
    if plat not in plats:
        bad.append("no %s manifest (has %s)" % (plat, sorted(plats)))
        continue
    man = json.loads(blob(plats[plat]))
    cfg = json.loads(blob(man["config"]))
    if "%s/%s" % (cfg.get("os"), cfg.get("architecture")) != plat:
        bad.append("%s: its config says %s/%s" % (plat, cfg.get("os"), cfg.get("architecture")))
    ep = cfg.get("config", {}).get("Entrypoint")
    if ep != ["/usr/bin/pyebpf"]:
        bad.append("%s: Entrypoint %s" % (plat, ep))
    held, binary = set(), None
    for layer in man["layers"]:
        data = blob(layer)
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        for m in tarfile.open(fileobj=io.BytesIO(data)):
            if m.isdir():
                continue
            name = "/" + m.name.lstrip("./")
            held.add(name)
            if name == "/usr/bin/pyebpf":
                binary = tarfile.open(fileobj=io.BytesIO(data)).extractfile(m.name).read()
                if not m.mode & 0o111:
                    bad.append("%s: /usr/bin/pyebpf mode %o" % (plat, m.mode))
    want = {"/usr/bin/pyebpf", "/etc/ssl/certs/ca-certificates.crt"}
    if held != want:
        bad.append("%s: holds %s, not only %s" % (plat, sorted(held), sorted(want)))
    if binary is not None:
        machine = int.from_bytes(binary[18:20], "little")
        if binary[:4] != b"\x7fELF" or machine != want_machine[plat]:
            bad.append("%s: /usr/bin/pyebpf is not an ELF for it (e_machine %d)" % (plat, machine))
        if plat == "linux/amd64":
            same = hashlib.sha256(binary).digest() == hashlib.sha256(open(x86, "rb").read()).digest()
            print("amd64 /usr/bin/pyebpf %s the release's linux-x86_64 binary" % ("is" if same else "differs from"))
print("platforms:", sorted(plats))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
	grep -h '^amd64 /usr/bin/pyebpf\|^platforms' "$WORK/$CHECK.out" >>"$WORK/$CHECK.note"
}

# The engine and the backends are the main process's (see main): a check
# finds them ready, or the reason they are not.
engine_ready() {
	[ -s "$WORK/engine.env" ] || fail "no docker engine: $(cat "$WORK/engine.err" 2>/dev/null)"
	DOCKER_HOST=$(sed -n 's/^DOCKER_HOST=//p' "$WORK/engine.env")
	CONTAINERD_ADDRESS=$(sed -n 's/^CONTAINERD_ADDRESS=//p' "$WORK/engine.env")
	export DOCKER_HOST CONTAINERD_ADDRESS
}

chk_oci_load() {
	local oci ep arch
	oci=$(oci_of)
	[ -f "$oci" ] || fail "no $oci"
	engine_ready
	# dockerd 20.10's `docker load` takes docker-archive tars only. The
	# archive's index.json names its image index VERSION
	# (org.opencontainers.image.ref.name); skopeo takes this machine's
	# platform from it, and the daemon's address from its flag, not DOCKER_HOST.
	skopeo copy -q --dest-daemon-host "$DOCKER_HOST" "oci-archive:$oci:$VERSION" "docker-daemon:pyebpf:$VERSION" ||
		fail "skopeo copy oci-archive:$(basename "$oci"):$VERSION docker-daemon:pyebpf:$VERSION failed"
	ep=$(docker image inspect -f '{{json .Config.Entrypoint}}' "pyebpf:$VERSION")
	arch=$(docker image inspect -f '{{.Os}}/{{.Architecture}}' "pyebpf:$VERSION")
	[ "$ep" = '["/usr/bin/pyebpf"]' ] || fail "the loaded image's entrypoint is $ep"
	[ "$arch" = linux/amd64 ] || fail "the loaded image is $arch, not linux/amd64"
	docker run --rm --network none "pyebpf:$VERSION" --version >"$WORK/$CHECK.version" 2>&1 ||
		fail "docker run pyebpf:$VERSION --version exited $?: $(head -n 1 "$WORK/$CHECK.version")"
	version_is_ours "$WORK/$CHECK.version" || fail "the image's --version printed '$(head -n 1 "$WORK/$CHECK.version")'"
}

# The capabilities deploy/daemonset.yaml adds (`add: [A, B]`), one per line.
daemonset_caps() {
	sed -n 's/^ *add: *\[\(.*\)\] *$/\1/p' "$DAEMONSET" | tr ',' '\n' | tr -d ' '
}

# Linux's capability numbers (include/uapi/linux/capability.h), by name.
declare -A CAPNUM=([CHOWN]=0 [DAC_OVERRIDE]=1 [DAC_READ_SEARCH]=2 [FOWNER]=3 [FSETID]=4 [KILL]=5 [SETGID]=6
	[SETUID]=7 [SETPCAP]=8 [LINUX_IMMUTABLE]=9 [NET_BIND_SERVICE]=10 [NET_BROADCAST]=11 [NET_ADMIN]=12
	[NET_RAW]=13 [IPC_LOCK]=14 [IPC_OWNER]=15 [SYS_MODULE]=16 [SYS_RAWIO]=17 [SYS_CHROOT]=18 [SYS_PTRACE]=19
	[SYS_PACCT]=20 [SYS_ADMIN]=21 [SYS_BOOT]=22 [SYS_NICE]=23 [SYS_RESOURCE]=24 [SYS_TIME]=25
	[SYS_TTY_CONFIG]=26 [MKNOD]=27 [LEASE]=28 [AUDIT_WRITE]=29 [AUDIT_CONTROL]=30 [SETFCAP]=31
	[MAC_OVERRIDE]=32 [MAC_ADMIN]=33 [SYSLOG]=34 [WAKE_ALARM]=35 [BLOCK_SUSPEND]=36 [AUDIT_READ]=37
	[PERFMON]=38 [BPF]=39 [CHECKPOINT_RESTORE]=40)

# A workload with one function per place, so each sample says where it ran.
write_distwork() {
	cat >"$1" <<'EOF'
import sys, time

def spin(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        for i in range(2000):
            x ^= i * i
    return x

def dist_in_container(seconds):
    return spin(seconds)  # LINE:container

def dist_on_host(seconds):
    return spin(seconds)  # LINE:host

{"container": dist_in_container, "host": dist_on_host}[sys.argv[1]](float(sys.argv[2]))
EOF
}

chk_oci_daemonset() {
	local out c rc cid hostpid agentpid bnd want=0 caps=() drops=() left=() ctr image st i
	engine_ready
	[ -s "$WORK/backends.ok" ] || fail "no backends: $(cat "$WORK/backends.err" 2>/dev/null)"
	out=$WORK/oci
	mkdir -p "$out/spool" "$out/pods" "$out/containers"
	write_distwork "$out/distwork.py"
	local start=$SECONDS
	bash "$ENGINE" image "$PY_IMAGE" trixie || fail "no python image ($ENGINE image $PY_IMAGE trixie)"
	note "python image ready in $((SECONDS - start)) s"
	# The agent runs on the engine's containerd, as a DaemonSet's pod does
	# under Kubernetes (CRI): dockerd 20.10 refuses the capabilities the
	# DaemonSet asks for ("invalid CapAdd: unknown capability: "CAP_BPF"");
	# containerd sets them as given. The image comes from the archive, no registry.
	ctr=(ctr -a "$CONTAINERD_ADDRESS" -n pyebpf-dist)
	"${ctr[@]}" images import --platform linux/amd64 --base-name pyebpf.test/pyebpf "$(oci_of)" ||
		fail "ctr images import of the archive failed"
	image=pyebpf.test/pyebpf:$VERSION
	# Exactly the DaemonSet's capabilities: every other one dropped (drop:
	# [ALL]); a capability this test itself lacks cannot be given (runc:
	# "unable to apply caps: operation not permitted"): it is left out and said.
	bnd=$((16#$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)))
	while read -r c; do
		[ -n "${CAPNUM[$c]:-}" ] || fail "unknown capability $c in $DAEMONSET"
		if ((bnd >> CAPNUM[$c] & 1)); then
			caps+=(--cap-add "CAP_$c")
			want=$((want | 1 << CAPNUM[$c]))
		else
			left+=("$c")
		fi
	done < <(daemonset_caps)
	[ ${#caps[@]} -gt 0 ] || fail "no capabilities found in $DAEMONSET"
	[ ${#left[@]} -eq 0 ] || note "left out (not in this machine's bounding set, so not this test's to give): ${left[*]}"
	for c in "${!CAPNUM[@]}"; do
		((want >> CAPNUM[$c] & 1)) || drops+=(--cap-drop "CAP_$c")
	done
	# Whatever this check leaves running ends with it, even on a failure.
	trap '"${ctr[@]}" tasks kill -s SIGKILL pyebpf-dist-agent >/dev/null 2>&1
		docker rm -f pyebpf-dist-py >/dev/null 2>&1; [ -z "${hostpid:-}" ] || kill "$hostpid" 2>/dev/null' EXIT
	cid=$(docker run -d --name pyebpf-dist-py --network none -v "$out/distwork.py:/distwork.py:ro" "$PY_IMAGE" \
		python3 /distwork.py container 120) || fail "the python container did not start"
	echo "$cid" >"$out/cid"
	python3 "$out/distwork.py" host 120 &
	hostpid=$!
	# deploy/daemonset.yaml's container: host PID namespace (this test's),
	# no privileges beyond its capabilities and no gaining any (ctr sets
	# no_new_privs), no seccomp filter (ctr sets none without --seccomp;
	# there is no AppArmor here), root filesystem read-only, its limits,
	# its mounts (kubelet's pod and container logs: empty directories here; the spool: a
	# directory of this run), its arguments with this test's backends, a
	# 2 s interval and a duration. The host network: the backends listen on loopback.
	mkdir -p /usr/lib/debug
	# --foreground: this timeout stays in the check's process group, which
	# the check's own bound ends as a whole.
	timeout --foreground 120 "${ctr[@]}" run --rm --net-host --with-ns "pid:/proc/self/ns/pid" --read-only \
		"${drops[@]}" "${caps[@]}" --cpus 0.5 --memory-limit $((512 << 20)) --env PYEBPF_HOST=dist-node \
		--mount type=bind,src=/sys,dst=/sys,options=rbind:ro \
		--mount type=bind,src=/sys/kernel/debug,dst=/sys/kernel/debug,options=rbind:ro \
		--mount type=bind,src=/usr/lib/debug,dst=/usr/lib/debug,options=rbind:ro \
		--mount type=bind,src=/sys/fs/cgroup,dst=/sys/fs/cgroup,options=rbind:ro \
		--mount "type=bind,src=$out/pods,dst=/var/log/pods,options=rbind:ro" \
		--mount "type=bind,src=$out/containers,dst=/var/log/containers,options=rbind:ro" \
		--mount "type=bind,src=$out/spool,dst=/var/lib/pyebpf,options=rbind:rw" \
		"$image" pyebpf-dist-agent /usr/bin/pyebpf record -a -d 10 --continuous=/var/lib/pyebpf --interval=2s \
		--max-disk=1G --rate-limit=2 --push="http://127.0.0.1:$PYRO_PORT" --otlp="http://127.0.0.1:$OTEL_PORT" \
		--label=cluster=dist-test >"$out/agent.log" 2>&1 &
	local run=$!
	# What the agent's process really holds, read from here while it runs.
	for ((i = 0; i < 100; i++)); do
		agentpid=$("${ctr[@]}" tasks ls 2>/dev/null | awk '$1 == "pyebpf-dist-agent" { print $2 }')
		[ -n "$agentpid" ] && [ "$agentpid" != 0 ] && break
		kill -0 "$run" 2>/dev/null || break
		sleep 0.1
	done
	if [ -n "$agentpid" ] && [ -r "/proc/$agentpid/status" ]; then
		grep -E '^(Cap(Eff|Prm|Bnd)|NoNewPrivs|Seccomp):' "/proc/$agentpid/status" >"$out/agent.status"
		{
			echo "pidns: $(readlink "/proc/$agentpid/ns/pid") (this test's: $(readlink /proc/self/ns/pid))"
			echo "root: $(awk '$2 == "/" { print $4 }' "/proc/$agentpid/mounts")"
		} >>"$out/agent.status"
	fi
	wait "$run"
	rc=$?
	cat "$out/agent.log"
	cat "$out/agent.status" 2>/dev/null
	[ "$rc" = 0 ] || fail "the DaemonSet's container exited $rc: $(grep -v '^pyebpf: wrote' "$out/agent.log" | tail -n 1)"
	[ -s "$out/agent.status" ] || fail "the agent's process was not seen running"
	for st in CapEff CapPrm CapBnd; do
		c=$(sed -n "s/^$st:[[:space:]]*//p" "$out/agent.status")
		[ "$((16#$c))" = "$want" ] || fail "the agent's $st is $c, not $(printf '%016x' "$want") (the DaemonSet's capabilities)"
	done
	grep -q '^NoNewPrivs:[[:space:]]*1$' "$out/agent.status" || fail "the agent may gain privileges (NoNewPrivs 0)"
	grep -q '^Seccomp:[[:space:]]*0$' "$out/agent.status" || fail "the agent runs under a seccomp filter"
	grep -qE '^pidns: (.*) \(this test.s: \1\)$' "$out/agent.status" || fail "the agent is not in the host's PID namespace"
	grep -qE '^root: (.*,)?ro(,|$)' "$out/agent.status" || fail "the agent's root filesystem is writable"
	grep -q '^pyebpf: pushed ' "$out/agent.log" || fail "the DaemonSet's container pushed nothing"
	compgen -G "$out/spool/*.pb.gz" >/dev/null || fail "no interval file in the spool"
	note "$(grep '^pyebpf: pushed [0-9]* intervals' "$out/agent.log" | tail -n 1)"
	touch "$out/ran"
}

ran_or_fail() { [ -e "$WORK/oci/ran" ] || fail "nothing to look at: oci-daemonset failed"; }

# FOLDED WHERE: both workload functions at distwork.py's line (pyebpf's
# folded frames name the file by its path, otlp_folded.py by its base name).
both_functions() {
	local folded=$1 where=$2 f fn line n
	for f in container host; do
		case $f in
		container) fn=dist_in_container ;;
		host) fn=dist_on_host ;;
		esac
		line=$(grep -n "# LINE:$f\$" "$WORK/oci/distwork.py" | cut -d: -f1)
		n=$(awk -v re="$fn [(]([^)]*/)?distwork[.]py:${line}[)]" '$0 ~ re { t += $NF } END { print t + 0 }' "$folded")
		if [ "$n" -lt 20 ]; then
			grep -o 'dist_[a-z_]* ([^)]*)' "$folded" | sort | uniq -c
			fail "$where: $n samples of $fn at distwork.py:$line (the $f's python)"
		fi
		note "$where: $n samples of $fn (the $f's python)"
	done
}

chk_oci_pyroscope() {
	local out=$WORK/oci
	ran_or_fail
	curl -sf -g -o "$out/pyroscope.pb.gz" "http://127.0.0.1:$PYRO_PORT/stub/pprof?type=$CPU_TYPE" ||
		fail "the Pyroscope stand-in gave no merged profile"
	"$(bin_of x86_64)" report "$out/pyroscope.pb.gz" -o "$out/pyroscope.folded" || fail "pyebpf report of Pyroscope's profile failed"
	both_functions "$out/pyroscope.folded" pyroscope
}

chk_oci_otlp() {
	local out=$WORK/oci
	ran_or_fail
	sleep 0.3 # the collector's file exporter flushes every 100 ms
	python3 "$BACKENDS/otlp_folded.py" "$WORK/otelcol/profiles.json" cpu >"$out/otlp.folded" ||
		fail "no OTLP profiles in $WORK/otelcol/profiles.json"
	both_functions "$out/otlp.folded" otlp
}

chk_oci_container_label() {
	local out=$WORK/oci cid sel t
	ran_or_fail
	cid=$(cat "$out/cid")
	sel=$(printf '{container_id="%s"}' "$cid" | python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read()))')
	t=$(curl -sf "http://127.0.0.1:$PYRO_PORT/stub/totals?type=$CPU_TYPE&selector=$sel") ||
		fail "the Pyroscope stand-in did not answer /stub/totals"
	echo "$t"
	# Its name, from dockerd's state seen through dockerd's /proc/PID/root (the agent has its own root).
	case $t in *'"container":"pyebpf-dist-py"'*) ;; *) fail "the series of container_id=${cid:0:12} lacks container=pyebpf-dist-py" ;; esac
	curl -sf -o "$out/container.pb.gz" "http://127.0.0.1:$PYRO_PORT/stub/pprof?type=$CPU_TYPE&selector=$sel" ||
		fail "no profile of container_id=$cid at Pyroscope"
	"$(bin_of x86_64)" report "$out/container.pb.gz" -o "$out/container.folded" || fail "pyebpf report failed"
	grep -q 'dist_in_container (' "$out/container.folded" || fail "the series of container_id=${cid:0:12} lacks the container's function"
	if grep -q 'dist_on_host (' "$out/container.folded"; then
		fail "the series of container_id=${cid:0:12} holds the host python's samples"
	fi
}

# ---- the main process --------------------------------------------------------

# NAME SECONDS FUNC [ARG...]: run one check and print its line.
check() {
	local name=$1 limit=$2 pid rc start why
	shift 2
	start=$SECONDS
	rm -f "$WORK/$name.why" "$WORK/$name.note"
	# timeout runs the check in a process group of its own and signals the
	# whole group (TERM, KILL 5 s later) when it outlives its bound.
	timeout -k 5 "$limit" bash "$SELF" __check "$name" "$@" </dev/null >"$WORK/$name.log" 2>&1 &
	pid=$!
	CURRENT=$pid
	wait "$pid"
	rc=$?
	CURRENT=
	# Whatever it left in its group (a background process of a failed step).
	kill -KILL -- "-$pid" 2>/dev/null
	TIMES+=("$name $((SECONDS - start))s")
	if [ "$rc" = 0 ]; then
		echo "dist: ok $name"
		PASSED=$((PASSED + 1))
		[ ! -s "$WORK/$name.note" ] || sed 's/^/    /' "$WORK/$name.note"
		return 0
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="timed out after ${limit}s"
	else
		why=$(cat "$WORK/$name.why" 2>/dev/null)
		[ -n "$why" ] || why="exited $rc"
	fi
	echo "dist: FAIL $name: $why"
	FAILED=$((FAILED + 1))
	grep -v '^run.sh: ' "$WORK/$name.log" | tail -n 40 | sed 's/^/    | /'
	return 0
}

# The engine and both backends for the oci checks, started once here so
# that each check can look at what an earlier one left (and the EXIT trap
# stops them however the run ends). Their failures become the checks'.
start_services() {
	local start=$SECONDS
	if ! timeout 120 bash "$ENGINE" start "$WORK/engine" "$DOCKER_DATA" >"$WORK/engine.env" 2>"$WORK/engine.err"; then
		: >"$WORK/engine.env"
	fi
	TIMES+=("engine $((SECONDS - start))s")
	start=$SECONDS
	if timeout 600 bash "$BACKENDS/pyroscope.sh" start "$WORK/pyroscope" "$PYRO_PORT" 2>>"$WORK/backends.err" &&
		timeout 600 bash "$BACKENDS/otelcol.sh" start "$WORK/otelcol" "$OTEL_PORT" 2>>"$WORK/backends.err"; then
		echo ok >"$WORK/backends.ok"
	fi
	TIMES+=("backends $((SECONDS - start))s")
}

cleanup() {
	[ -n "${WORK:-}" ] && [ -d "$WORK" ] || return 0
	# A check interrupted with this script (its group is its own: a
	# terminal's Ctrl-C does not reach it).
	if [ -n "${CURRENT:-}" ]; then
		kill -TERM -- "-$CURRENT" 2>/dev/null && sleep 2
		kill -KILL -- "-$CURRENT" 2>/dev/null
	fi
	bash "$ENGINE" stop "$WORK/engine" >/dev/null 2>&1
	bash "$BACKENDS/pyroscope.sh" stop "$WORK/pyroscope" >/dev/null 2>&1
	bash "$BACKENDS/otelcol.sh" stop "$WORK/otelcol" >/dev/null 2>&1
	if [ "${PYEBPF_DIST_KEEP:-}" = 1 ]; then
		echo "dist: the work directory is kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}

main() {
	[ $# -eq 2 ] || { echo "usage: $0 DISTDIR VERSION" >&2; exit 2; }
	[ -d "$1" ] || { echo "run.sh: no directory $1" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (BPF, mounts, dockerd)" >&2; exit 2; }
	DISTDIR=$(realpath "$1")
	VERSION=$2
	# Short: the engine's unix sockets live under it.
	WORK=$(mktemp -d /tmp/pyebpf-dist.XXXXXX)
	# roots.sh's overlay upper layers: removed with WORK whatever ends a run.
	PYEBPF_ROOTS_TMP=$WORK/roots
	export DISTDIR VERSION WORK PYEBPF_ROOTS_TMP
	PASSED=0 FAILED=0 TIMES=() CURRENT=
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local start=$SECONDS
	echo "dist: $DISTDIR, version $VERSION"
	check static-x86_64 30 chk_static x86_64
	check static-aarch64 30 chk_static aarch64
	# A root's first build is ~45 s (mmdebstrap); cached, a check is ~7 s.
	check split-bullseye 300 chk_split bullseye
	check split-trixie 300 chk_split trixie
	check deb-bullseye 300 chk_deb bullseye
	check deb-trixie 300 chk_deb trixie
	check deb-arm64 30 chk_deb_arm64
	check wheel-3.8 120 chk_wheel 3.8
	check wheel-3.15 120 chk_wheel 3.15
	check wheel-aarch64 30 chk_wheel_aarch64
	check oci-layout 60 chk_oci_layout
	start_services
	check oci-load 120 chk_oci_load
	check oci-daemonset 400 chk_oci_daemonset
	check oci-pyroscope 60 chk_oci_pyroscope
	check oci-otlp 60 chk_oci_otlp
	check oci-container-label 60 chk_oci_container_label
	echo "dist: times: ${TIMES[*]}; all $((SECONDS - start))s"
	echo "dist: $PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}

if [ "${1:-}" = __check ]; then
	CHECK=$2
	export CHECK
	shift 2
	"$@"
	exit $?
fi
main "$@"
