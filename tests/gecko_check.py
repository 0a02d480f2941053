#!/usr/bin/env python3
"""Check a Gecko profile (the Firefox Profiler's raw format) the way its
importer reads it: the version it upgrades from, every table's schema, every
index in range, prefixes before the stacks that use them, samples in time
order, categories and marker schemas known. Optionally, what it holds against
the same recording's other outputs (an empty sample, a null stack, counts for none).

    gecko_check.py FILE [--samples N] [--threads A,B,...] [--function NAME=COUNT]...

One line on stderr and exit 1 on the first thing wrong; prints a summary.
Written against firefox-devtools/profiler src/types/gecko-profile.ts and
docs-developer/CHANGELOG-formats.md (Gecko format 27: no optimizations column).
"""
import json
import sys

FRAME_SCHEMA = {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
                "line": 4, "column": 5, "category": 6, "subcategory": 7}
STACK_SCHEMA = {"prefix": 0, "frame": 1}
SAMPLE_SCHEMA = {"stack": 0, "time": 1, "eventDelay": 2}
MARKER_SCHEMA = {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5}


def fail(msg):
    print("gecko_check: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def func_name(location):
    """'spin (/x/pywork.py:12)' -> 'spin'; a native or kernel name as it is."""
    return location.split(" (", 1)[0]


def main(argv):
    if len(argv) < 2:
        fail("usage: gecko_check.py FILE [--samples N] [--threads A,B] [--function NAME=COUNT]...")
    with open(argv[1]) as f:
        d = json.load(f)
    want_samples, want_threads, want_funcs = None, [], {}
    i = 2
    while i < len(argv):
        opt, val = argv[i], argv[i + 1]
        if opt == "--samples":
            want_samples = int(val)
        elif opt == "--threads":
            want_threads = val.split(",")
        elif opt == "--function":
            name, count = val.rsplit("=", 1)
            want_funcs[name] = int(count)
        else:
            fail("unknown option " + opt)
        i += 2

    meta = d["meta"]
    check(isinstance(meta.get("version"), int) and 27 <= meta["version"] <= 30,
          "meta.version %r is not one the importer upgrades from as written" % meta.get("version"))
    check("preprocessedProfileVersion" not in meta, "a processed profile, not Gecko's")
    for key in ("startTime", "interval", "stackwalk", "processType", "categories", "markerSchema"):
        check(key in meta, "meta has no " + key)
    check(meta["interval"] > 0, "meta.interval %r" % meta["interval"])
    cats = meta["categories"]
    check(cats and all("name" in c and "color" in c and c.get("subcategories") for c in cats),
          "categories need a name, a colour and subcategories")
    schemas = {s["name"]: s for s in meta["markerSchema"]}
    for s in schemas.values():
        check(s.get("display") and isinstance(s.get("data"), list), "marker schema %s: display and data" % s["name"])
    for key in ("libs", "threads", "processes", "pausedRanges"):
        check(isinstance(d.get(key), list), "no list " + key)

    total, names, funcs, markers = 0, [], {}, 0
    for t in d["threads"]:
        for key in ("name", "processType", "pid", "tid", "registerTime", "stringTable"):
            check(key in t, "thread has no " + key)
        where = "thread %s (tid %s)" % (t["name"], t["tid"])
        names.append(t["name"])
        strings = t["stringTable"]
        check(all(isinstance(s, str) for s in strings), where + ": stringTable holds a non-string")
        for table, schema in (("frameTable", FRAME_SCHEMA), ("stackTable", STACK_SCHEMA),
                              ("samples", SAMPLE_SCHEMA), ("markers", MARKER_SCHEMA)):
            check(t[table]["schema"] == schema, "%s: %s schema %r" % (where, table, t[table]["schema"]))
        frames = t["frameTable"]["data"]
        for row in frames:
            check(len(row) == 8, where + ": a frame row of %d columns" % len(row))
            check(0 <= row[0] < len(strings), where + ": frame location out of the string table")
            check(row[6] is None or 0 <= row[6] < len(cats), where + ": frame category out of range")
            check(row[6] is None or 0 <= row[7] < len(cats[row[6]]["subcategories"]),
                  where + ": frame subcategory out of range")
            check(row[4] is None or (isinstance(row[4], int) and row[4] > 0), where + ": frame line %r" % row[4])
        stacks = t["stackTable"]["data"]
        for k, (prefix, frame) in enumerate(stacks):
            check(prefix is None or 0 <= prefix < k, where + ": stack %d's prefix %r is not before it" % (k, prefix))
            check(0 <= frame < len(frames), where + ": stack %d's frame out of range" % k)
        last = None
        for stack, time, _ in t["samples"]["data"]:
            check(stack is None or 0 <= stack < len(stacks), where + ": sample stack out of range")
            check(last is None or time >= last, where + ": samples go back in time at %r" % time)
            last = time
            if stack is None:  # an empty sample: where a thread was not sampled
                continue
            total += 1
            seen = set()
            while stack is not None:  # each function once per sample, as a folded count is
                name = func_name(strings[frames[stacks[stack][1]][0]])
                if name not in seen:
                    funcs[name] = funcs.get(name, 0) + 1
                    seen.add(name)
                stack = stacks[stack][0]
        for name, start, end, phase, cat, data in t["markers"]["data"]:
            check(0 <= name < len(strings), where + ": marker name out of the string table")
            check(phase in (0, 1, 2, 3) and (phase != 1 or (start is not None and end >= start)),
                  where + ": marker phase %r from %r to %r" % (phase, start, end))
            check(0 <= cat < len(cats), where + ": marker category out of range")
            check(data is None or data.get("type") in schemas, where + ": marker of no schema %r" % data)
            markers += 1

    if want_samples is not None:
        check(total == want_samples, "%d samples, not %d" % (total, want_samples))
    for name in want_threads:
        check(name in names, "no thread named %s (threads: %s)" % (name, ", ".join(names)))
    for name, count in want_funcs.items():
        check(funcs.get(name, 0) == count, "%s in %d samples, not %d" % (name, funcs.get(name, 0), count))
    print("gecko_check: %d threads, %d samples, %d markers" % (len(d["threads"]), total, markers))


if __name__ == "__main__":
    main(sys.argv)
