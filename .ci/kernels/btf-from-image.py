#!/usr/bin/env python3
"""The kernel's .BTF blob out of an uncompressed arm64 Image (Debian's arm64
vmlinuz is a plain Image, its .BTF section in it as it is), for `make vmlinux
ARCH=arm64` on a machine that runs another kernel: the BTF header (magic
0xeB9F, version 1, 24-byte header, types then strings) whose sections fit,
the largest such, written raw. Byte for byte the guest's /sys/kernel/btf/vmlinux.

    btf-from-image.py IMAGE OUT.btf
"""
import struct
import sys

MAGIC = b"\x9f\xeb\x01\x00"


def main(image, out):
    with open(image, "rb") as f:
        data = f.read()
    best = None
    i = data.find(MAGIC)
    while i >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", data, i + 4)
        end = i + hdr_len + str_off + str_len
        # Types right after the header, strings right after the types, both
        # of a kernel's size; a string section starts with "".
        if (hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 1 << 20 and str_len > 1 << 18
                and end <= len(data) and data[i + hdr_len + str_off] == 0
                and (best is None or type_len > best[1])):
            best = (i, type_len, end)
        i = data.find(MAGIC, i + 1)
    if not best:
        sys.exit("btf-from-image.py: no BTF in " + image)
    with open(out, "wb") as f:
        f.write(data[best[0]:best[2]])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: btf-from-image.py IMAGE OUT.btf")
    main(sys.argv[1], sys.argv[2])
