#!/usr/bin/env bash
# What make dist left, checked as a user would receive it: the 2 static
# binaries, 2 wheels, 2 Debian packages and the OCI archive of VERSION, each
# for the CPU its name says, each holding the very binary of that CPU (a
# package built from a stale or the other CPU's binary fails here), and
# nothing of another version or half-written beside them.
#   deploy/dist/check.sh DISTDIR VERSION
# One line per check, 'dist: ok WHAT' or 'dist: FAIL WHAT', then a count;
# exit 1 if any check failed. Needs file, dpkg-deb and python3 (stdlib).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/dist/common.sh
. "$here/common.sh"

[[ $# -eq 2 ]] || die "usage: check.sh DISTDIR VERSION"
dist=$1 version=$2
[[ -d $dist ]] || die "DISTDIR '$dist' is not a directory"
check_version "$version"

passed=0 failed=0
ok() {
	echo "dist: ok $*"
	passed=$((passed + 1))
}
fail() {
	echo "dist: FAIL $*"
	failed=$((failed + 1))
}
sha() { sha256sum | cut -d' ' -f1; }

# Each CPU by its names: the binary's and the wheel's (uname -m), Debian's
# and OCI's, and what file(1) calls it.
cpus=(x86_64 aarch64)
declare -A deb_arch=([x86_64]=amd64 [aarch64]=arm64)
declare -A file_arch=([x86_64]=x86-64 [aarch64]='ARM aarch64')
declare -A bin_sha=()

for cpu in "${cpus[@]}"; do
	bin="$dist/pyebpf-$version-linux-$cpu"
	what="pyebpf-$version-linux-$cpu"
	if [[ ! -f $bin ]]; then
		fail "$what: missing"
		continue
	fi
	desc=$(file -b "$bin")
	if [[ $desc == "ELF 64-bit LSB "*", ${file_arch[$cpu]},"* && $desc == *executable* &&
		$desc == *"statically linked"* && $desc != *"not stripped"* && $desc == *stripped* ]]; then
		ok "$what: a static, stripped ${file_arch[$cpu]} executable"
	else
		fail "$what: not a static, stripped ${file_arch[$cpu]} executable: $desc"
	fi
	bin_sha[$cpu]=$(sha <"$bin")
done

# A wheel: its tag (file name and WHEEL), Root-Is-Purelib false, the script
# pyebpf-VERSION.data/scripts/pyebpf with mode 0755 and the binary's bytes.
for cpu in "${cpus[@]}"; do
	whl="$dist/pyebpf-$version-py3-none-manylinux_2_31_$cpu.whl"
	what="${whl##*/}"
	if [[ ! -f $whl ]]; then
		fail "$what: missing"
		continue
	fi
	if msg=$(python3 - "$whl" "$version" "$cpu" "${bin_sha[$cpu]:-}" <<'EOF'
import hashlib, stat, sys, zipfile
whl, version, cpu, want_sha = sys.argv[1:]
def bad(msg):  # on stdout: the shell prints it in the FAIL line
    print(msg)
    sys.exit(1)
tag = f"py3-none-manylinux_2_31_{cpu}"
try:
    z = zipfile.ZipFile(whl)
    wheel = z.read(f"pyebpf-{version}.dist-info/WHEEL").decode()
    meta = z.read(f"pyebpf-{version}.dist-info/METADATA").decode()
    script = f"pyebpf-{version}.data/scripts/pyebpf"
    info = z.getinfo(script)
    data = z.read(script)
except (OSError, KeyError, zipfile.BadZipFile) as e:
    bad(f"unreadable: {e}")
fields = [l.split(": ", 1) for l in wheel.splitlines() if ": " in l]
tags = [v for k, v in fields if k == "Tag"]
if tags != [tag]:
    bad(f"WHEEL tags {tags}, not [{tag}]")
if ("Root-Is-Purelib", "false") not in [tuple(f) for f in fields]:
    bad("WHEEL does not say Root-Is-Purelib: false")
if f"\nVersion: {version}\n" not in meta:
    bad(f"METADATA is not Version {version}")
if stat.S_IMODE(info.external_attr >> 16) != 0o755:
    bad(f"{script} has mode {oct(stat.S_IMODE(info.external_attr >> 16))}, not 0o755")
if hashlib.sha256(data).hexdigest() != want_sha:
    bad(f"{script} is not pyebpf-{version}-linux-{cpu}")
print(f"tag {tag}, the {cpu} binary as its 0755 script")
EOF
	); then
		ok "$what: $msg"
	else
		fail "$what: $msg"
	fi
done

# A Debian package: its control fields and /usr/bin/pyebpf's bytes.
for cpu in "${cpus[@]}"; do
	arch=${deb_arch[$cpu]}
	deb="$dist/pyebpf_${version}_$arch.deb"
	what="${deb##*/}"
	if [[ ! -f $deb ]]; then
		fail "$what: missing"
		continue
	fi
	fields=$(dpkg-deb -f "$deb" Package Version Architecture 2>&1 | tr '\n' ' ') || true
	if [[ $fields != "Package: pyebpf Version: $version Architecture: $arch " ]]; then
		fail "$what: control says '$fields'"
	elif [[ $(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/bin/pyebpf 2>/dev/null | sha) != "${bin_sha[$cpu]:-}" ]]; then
		fail "$what: /usr/bin/pyebpf is not pyebpf-$version-linux-$cpu"
	else
		ok "$what: Architecture $arch, Version $version, the $cpu binary as /usr/bin/pyebpf"
	fi
done

# The OCI archive: index.json names VERSION, an image index of linux/amd64
# and linux/arm64 manifests; each one's config says its CPU and its layer
# holds that CPU's binary as /usr/bin/pyebpf.
oci="$dist/pyebpf-$version-oci.tar"
what="${oci##*/}"
if [[ ! -f $oci ]]; then
	fail "$what: missing"
elif msg=$(python3 - "$oci" "$version" "${bin_sha[x86_64]:-}" "${bin_sha[aarch64]:-}" <<'EOF'
import gzip, hashlib, io, json, sys, tarfile
oci, version, sha_amd64, sha_arm64 = sys.argv[1:]
def bad(msg):  # on stdout: the shell prints it in the FAIL line
    print(msg)
    sys.exit(1)
want = {"amd64": sha_amd64, "arm64": sha_arm64}
try:
    outer = tarfile.open(oci)
    def read(name):
        return outer.extractfile(name).read()
    def blob(desc):
        data = read("blobs/sha256/" + desc["digest"].split(":", 1)[1])
        if "sha256:" + hashlib.sha256(data).hexdigest() != desc["digest"] or len(data) != desc["size"]:
            bad(f"blob {desc['digest']} does not match its digest or size")
        return data
    if json.loads(read("oci-layout")).get("imageLayoutVersion") != "1.0.0":
        bad("oci-layout is not imageLayoutVersion 1.0.0")
    index = json.loads(read("index.json"))
    named = [d for d in index["manifests"]
             if d.get("annotations", {}).get("org.opencontainers.image.ref.name") == version]
    if len(named) != 1 or named[0]["mediaType"] != "application/vnd.oci.image.index.v1+json":
        bad(f"index.json has no one image index named {version}")
    seen = []
    for m in json.loads(blob(named[0]))["manifests"]:
        arch = m["platform"]["architecture"]
        if m["platform"].get("os") != "linux" or arch not in want:
            bad(f"a manifest for {m['platform']}")
        manifest = json.loads(blob(m))
        config = json.loads(blob(manifest["config"]))
        if config["architecture"] != arch or config["os"] != "linux":
            bad(f"the {arch} manifest's config says {config['os']}/{config['architecture']}")
        if config["config"].get("Entrypoint") != ["/usr/bin/pyebpf"]:
            bad(f"the {arch} image's entrypoint is {config['config'].get('Entrypoint')}")
        (layer,) = manifest["layers"]
        files = tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(layer))))
        binary = files.getmember("usr/bin/pyebpf")
        if binary.mode != 0o755 or hashlib.sha256(files.extractfile(binary).read()).hexdigest() != want[arch]:
            bad(f"the {arch} image's /usr/bin/pyebpf is not its CPU's binary with mode 0755")
        files.getmember("etc/ssl/certs/ca-certificates.crt")
        seen.append(arch)
except (OSError, KeyError, ValueError, tarfile.TarError) as e:
    bad(f"unreadable: {e!r}")
if sorted(seen) != ["amd64", "arm64"]:
    bad(f"platforms {seen}, not linux/amd64 and linux/arm64")
print(f"tag {version}: linux/amd64 and linux/arm64, each with its CPU's binary")
EOF
); then
	ok "$what: $msg"
else
	fail "$what: $msg"
fi

# Nothing beside them that a 'dist/*' upload would take by mistake: the
# files of another version, or one a killed script left half-written.
stale=()
for f in "$dist"/pyebpf* "$dist"/.*partial*; do
	[[ -e $f ]] || continue
	case ${f##*/} in
	"pyebpf-$version-linux-x86_64" | "pyebpf-$version-linux-aarch64" | "pyebpf-$version-oci.tar" | \
		"pyebpf-$version-py3-none-manylinux_2_31_"*.whl | "pyebpf_${version}_"*.deb) ;;
	*) stale+=("${f##*/}") ;;
	esac
done
if [[ ${#stale[@]} -eq 0 ]]; then
	ok "no file of another version or half-written in $dist"
else
	fail "other files in $dist: ${stale[*]}"
fi

echo "dist: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
