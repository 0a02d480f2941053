#!/usr/bin/env python3
"""pyebpf's container image, for amd64 and arm64 at once, as an OCI image
layout archive (oci-layout, index.json, blobs/sha256/...): no base image and
no container tool, one layer per CPU holding the static binary
(/usr/bin/pyebpf), the CA bundle its pushes over HTTPS check servers with
(/etc/ssl/certs/ca-certificates.crt) and the spool's mount point
(/var/lib/pyebpf, which pyebpf would otherwise have to create a parent of).

  deploy/dist/oci.py --version 0.2.0 --bin amd64=dist/pyebpf-0.2.0-linux-x86_64 \\
      --bin arm64=dist/pyebpf-0.2.0-linux-aarch64 \\
      --ca-bundle /etc/ssl/certs/ca-certificates.crt -o dist/pyebpf-0.2.0-oci.tar

Reproducible: every date is SOURCE_DATE_EPOCH (0 when unset), entries
sorted, owned by 0:0, gzip without a name or a time, JSON with sorted keys:
the same inputs make the same bytes. Load into dockerd with
  skopeo copy --override-arch amd64 oci-archive:FILE:0.2.0 docker-daemon:pyebpf:0.2.0
Python 3.9+, standard library only.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import signal
import sys
import tarfile
import tempfile

PROG = "oci.py"
# The CPUs an image is made for, by OCI's name, and each one's ELF e_machine.
ELF_MACHINE = {"amd64": 62, "arm64": 183}
BIN_PATH = "usr/bin/pyebpf"
CA_PATH = "etc/ssl/certs/ca-certificates.crt"
SPOOL = "var/lib/pyebpf"
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def die(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(1)


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def check_elf(path, arch):
    """A 64-bit little-endian ELF executable for ARCH: an image whose binary
    is for the other CPU starts and dies with 'exec format error'."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError as e:
        die(f"--bin {arch}: cannot read '{path}': {e.strerror}")
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        die(f"--bin {arch}: '{path}' is not a 64-bit little-endian ELF file")
    e_type = int.from_bytes(head[16:18], "little")
    e_machine = int.from_bytes(head[18:20], "little")
    if e_type not in (2, 3):  # ET_EXEC, ET_DYN (a static PIE)
        die(f"--bin {arch}: '{path}' is not an executable (ELF type {e_type})")
    if e_machine != ELF_MACHINE[arch]:
        want = {62: "x86-64", 183: "aarch64"}
        die(f"--bin {arch}: '{path}' is for ELF machine {want.get(e_machine, e_machine)}, not {want[ELF_MACHINE[arch]]}")


class Layout:
    """The blobs of an image layout, kept in memory (a few MB) by digest."""

    def __init__(self):
        self.blobs = {}

    def add(self, data, media_type, **extra):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.blobs[digest] = data
        return dict(mediaType=media_type, digest=digest, size=len(data), **extra)


def tar_entry(name, mtime, mode, data=None):
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.mode = mode
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if data is None:
        info.type = tarfile.DIRTYPE
    else:
        info.size = len(data)
    return info


def make_tar(files, mtime):
    """A tar of FILES ({path: (mode, bytes or None for a directory)}), every
    parent directory made explicit, entries in path order."""
    entries = dict(files)
    for path in files:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            entries.setdefault("/".join(parts[:i]), (0o755, None))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path in sorted(entries):
            mode, data = entries[path]
            tar.addfile(tar_entry(path, mtime, mode, data), io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def gzip_bytes(data):
    # No name and mtime 0 in the gzip header: the same tar, the same blob.
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    return buf.getvalue()


def rfc3339(epoch):
    import datetime

    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def build(args, epoch):
    layout = Layout()
    with open(args.ca_bundle, "rb") as f:
        ca = f.read()
    created = rfc3339(epoch)
    labels = {
        "org.opencontainers.image.title": "pyebpf",
        "org.opencontainers.image.description": "A system-wide sampling profiler for Python, built on eBPF",
        "org.opencontainers.image.version": args.version,
        "org.opencontainers.image.licenses": "GPL-2.0 OR BSD-3-Clause",
        "org.opencontainers.image.created": created,
    }
    if args.source:
        labels["org.opencontainers.image.source"] = args.source
    manifests = []
    for arch in sorted(args.bins):
        with open(args.bins[arch], "rb") as f:
            binary = f.read()
        layer_tar = make_tar(
            {BIN_PATH: (0o755, binary), CA_PATH: (0o644, ca), SPOOL: (0o700, None)},
            epoch,
        )
        layer = layout.add(gzip_bytes(layer_tar), MT_LAYER)
        config = {
            "created": created,
            "architecture": arch,
            "os": "linux",
            "config": {
                "Entrypoint": ["/usr/bin/pyebpf"],
                "Cmd": ["record", "-a", "--continuous=/var/lib/pyebpf"],
                "Env": [
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "SSL_CERT_FILE=/" + CA_PATH,
                ],
                "WorkingDir": "/",
                "Labels": labels,
            },
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]},
            "history": [{"created": created, "created_by": "deploy/dist/oci.py: pyebpf, the CA bundle"}],
        }
        manifest = {
            "schemaVersion": 2,
            "mediaType": MT_MANIFEST,
            "config": layout.add(canonical_json(config), MT_CONFIG),
            "layers": [layer],
            "annotations": {"org.opencontainers.image.version": args.version, "org.opencontainers.image.created": created},
        }
        manifests.append(
            layout.add(canonical_json(manifest), MT_MANIFEST, platform={"architecture": arch, "os": "linux"})
        )
    # index.json names one thing, VERSION: the image index of both CPUs'
    # manifests (each with its platform). Tools then pick the CPU by
    # platform: skopeo resolves oci-archive:FILE:VERSION to the first
    # descriptor of that name, so two manifests named VERSION side by side in
    # index.json would always give the first CPU's.
    image_index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": manifests}
    top = layout.add(
        canonical_json(image_index), MT_INDEX, annotations={"org.opencontainers.image.ref.name": args.version}
    )
    index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [top]}
    files = {
        "oci-layout": (0o644, canonical_json({"imageLayoutVersion": "1.0.0"})),
        "index.json": (0o644, canonical_json(index)),
    }
    for digest, data in layout.blobs.items():
        files["blobs/sha256/" + digest.split(":", 1)[1]] = (0o644, data)
    return make_tar(files, epoch)


def parse_args():
    p = argparse.ArgumentParser(prog=PROG, description="Make pyebpf's multi-CPU OCI image layout archive.")
    p.add_argument("--version", required=True, help="the release, e.g. 0.2.0: the image's tag")
    p.add_argument("--bin", action="append", required=True, metavar="ARCH=PATH",
                   help="the static binary for amd64 or arm64 (give both)")
    p.add_argument("--ca-bundle", required=True, metavar="PATH", help="the PEM CA bundle to ship")
    p.add_argument("--source", metavar="URL", help="org.opencontainers.image.source, if any")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the archive to write")
    args = p.parse_args()
    if not re.fullmatch(r"[0-9]+(\.[0-9]+){1,3}", args.version):
        die(f"--version '{args.version}' is not a release number like 0.2.0")
    args.bins = {}
    for spec in args.bin:
        arch, sep, path = spec.partition("=")
        if not sep or arch not in ELF_MACHINE or not path:
            die(f"--bin '{spec}' is not amd64=PATH or arm64=PATH")
        if arch in args.bins:
            die(f"--bin {arch} is given twice")
        check_elf(path, arch)
        args.bins[arch] = path
    missing = sorted(set(ELF_MACHINE) - set(args.bins))
    if missing:
        die(f"no --bin for {', '.join(missing)}: the image is made for amd64 and arm64")
    try:
        with open(args.ca_bundle, "rb") as f:
            pem = f.read()
    except OSError as e:
        die(f"--ca-bundle: cannot read '{args.ca_bundle}': {e.strerror}")
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        die(f"--ca-bundle '{args.ca_bundle}' holds no PEM certificate")
    outdir = os.path.dirname(os.path.abspath(args.output))
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        die(f"-o: cannot make the directory of '{args.output}': {e.strerror}")
    if os.path.isdir(args.output):
        die(f"-o '{args.output}' is a directory: name the archive")
    return args


def main():
    # SIGTERM (make interrupted) as an exception: the half-written output
    # is then removed like on any other error.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    args = parse_args()
    sde = os.environ.get("SOURCE_DATE_EPOCH", "0")
    if not sde.isdigit():
        die(f"SOURCE_DATE_EPOCH '{sde}' is not a number of seconds")
    archive = build(args, int(sde))
    # Written beside the output under a hidden name, then renamed: the output
    # is whole or absent.
    out = os.path.abspath(args.output)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), prefix="." + os.path.basename(out) + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(archive)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    print(args.output)


if __name__ == "__main__":
    main()
