# setup.py of pyebpf's binary wheel, copied into a staging directory by
# deploy/dist/wheel.sh beside the static binary (./pyebpf) and README.md; not
# run from the checkout. As py-spy ships itself: no Python code, the binary is
# the wheel's one script (pyebpf-VERSION.data/scripts/pyebpf), one wheel per
# platform tag, which states the glibc floor (manylinux_2_31_ARCH).
#   PYEBPF_WHEEL_VERSION=0.2.0 PYEBPF_WHEEL_PLAT=manylinux_2_31_x86_64 \
#       python -m build --wheel --no-isolation
import os
import re
import stat

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from distutils.command.build_scripts import build_scripts  # setuptools provides distutils

VERSION = os.environ["PYEBPF_WHEEL_VERSION"]
PLAT = os.environ["PYEBPF_WHEEL_PLAT"]


class BinaryScripts(build_scripts):
    """Copy the scripts byte for byte. distutils' build_scripts opens each
    script as Python source (tokenize.open) to rewrite a #! line, which fails
    on an ELF executable whose first bytes are not UTF-8."""

    def copy_scripts(self):
        self.mkpath(self.build_dir)
        outfiles = []
        for script in self.scripts:
            out = os.path.join(self.build_dir, os.path.basename(script))
            self.copy_file(script, out, preserve_mode=False)
            # 0755 whatever the umask: the zip entry's mode is the file's.
            os.chmod(out, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
            outfiles.append(out)
        return outfiles, outfiles


class PlatformWheel(bdist_wheel):
    """py3-none-PLAT with Root-Is-Purelib: false. setuptools calls a
    distribution without extension modules pure (Root-Is-Purelib: true, and
    an 'any' tag unless told otherwise); with an extension module it would
    tag the wheel for this interpreter (cp311-cp311). The binary runs under
    any Python 3 and no Python at all, but only on this CPU and glibc floor."""

    def finalize_options(self):
        self.plat_name = PLAT
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", PLAT


def long_description():
    """README.md's opening (what pyebpf is) and its tour of commands, without
    what only a checkout has: the build instructions, the screenshot (a path
    in the repository) and links into docs/ (kept as their text)."""
    with open("README.md", encoding="utf-8") as f:
        text = f.read()
    sections = re.split(r"(?m)^(?=## )", text)
    keep = [s for s in sections if not s.startswith("## ") or s.startswith("## A tour")]
    text = "".join(keep)
    text = re.sub(r"(?m)^!\[[^\]]*\]\([^)]*\)\n\n?", "", text)
    text = re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]*\)", r"\1", text)
    return text.rstrip() + (
        "\n\n## This wheel\n\n"
        "A static `pyebpf` executable for Linux (x86-64 or aarch64), installed "
        "as a script: `pip install pyebpf` puts it on the PATH of the "
        "environment. It needs no Python library; profiling needs root, or "
        "CAP_BPF and CAP_PERFMON, and a kernel 5.10 or later with BTF. sudo "
        "resets PATH, so name it by its path there: "
        "`sudo \"$(command -v pyebpf)\" record -a`.\n"
    )


setup(
    name="pyebpf",
    version=VERSION,
    description="A system-wide sampling profiler for Python, built on eBPF and written in C",
    long_description=long_description(),
    long_description_content_type="text/markdown",
    license_expression="GPL-2.0 OR BSD-3-Clause",
    python_requires=">=3",
    keywords=["profiler", "ebpf", "bpf", "flamegraph", "pprof", "sampling"],
    classifiers=[
        "Development Status :: 4 - Beta",
        "Environment :: Console",
        "Intended Audience :: Developers",
        "Intended Audience :: System Administrators",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: C",
        "Programming Language :: Python :: 3",
        "Topic :: Software Development :: Debuggers",
        "Topic :: System :: Monitoring",
    ],
    scripts=["pyebpf"],
    # No Python code: a package-less distribution (setuptools' automatic
    # discovery would otherwise look for one).
    packages=[],
    py_modules=[],
    cmdclass={"build_scripts": BinaryScripts, "bdist_wheel": PlatformWheel},
    zip_safe=False,
)
