#!/usr/bin/env python3
"""The README and docs/ checked against the tree and the binary:
- every relative link resolves: the file exists, and an anchor names a
  heading of it (GitHub's slugs);
- every pyebpf command in a shell block still parses: the same options with
  --help put before any `-- CMD` must make pyebpf print its help and exit 0
  (an unknown option or a bad value exits 2 first).
Prints one line per problem, then 'docs: N passed, N failed'.
    docs_check.py PYEBPF_BINARY
"""
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out, seen = set(), {}
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        s = slug(line.lstrip("#"))
        n = seen.get(s, 0)
        out.add(s if n == 0 else "%s-%d" % (s, n))
        seen[s] = n + 1
    return out


def links(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)  # nor does inline code
    return re.findall(r"\]\(([^)\s]+)\)", text)


def commands(path):
    """pyebpf command lines of sh blocks, continuations joined, comments dropped."""
    cmds, block, buf = [], None, ""
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            block = None if block is not None else line[3:].strip()
            continue
        if block != "sh":
            continue
        line = line.rstrip("\n")
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        line, buf = buf + line, ""
        words = shlex.split(line, comments=True)
        if words[:1] == ["sudo"]:
            words = words[1:]
        if words[:1] != ["pyebpf"]:
            continue
        cut = [i for i, w in enumerate(words) if w in ("&&", "|", ">", ";", "&")]
        cmds.append(words[: cut[0]] if cut else words)
    return cmds


def main():
    binary = os.path.abspath(sys.argv[1])
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    passed = failed = 0
    for f in files:
        rel = os.path.relpath(f, ROOT)
        for target in links(f):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                print("docs: %s: link to %s: no such file" % (rel, target))
                failed += 1
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                print("docs: %s: link to %s: no such heading" % (rel, target))
                failed += 1
            else:
                passed += 1
        for words in commands(f):
            argv = [binary] + words[1:]
            at = argv.index("--") if "--" in argv else len(argv)
            argv = argv[:at] + ["--help"]
            r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10, text=True)
            if r.returncode != 0:
                print("docs: %s: '%s' no longer parses: %s" % (rel, " ".join(words), r.stderr.strip()[:200]))
                failed += 1
            else:
                passed += 1
    print("docs: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
