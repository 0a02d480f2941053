#!/usr/bin/env python3
"""What an OpenTelemetry collector's file exporter wrote (OTLP profiles as
JSON lines, opentelemetry-proto v1.11.0), as folded stacks:
"SERVICE;root;...;leaf COUNT", COUNT in samples (value / period), for one
sample type. The integration tests compare it with pyebpf's own files.

    otlp_folded.py PROFILES.json TYPE > out.folded
"""
import json
import sys
from collections import Counter


def attr_value(v, strings):
    if "stringValueStrindex" in v:
        return strings[v["stringValueStrindex"]]
    return v.get("stringValue", "")


def profiles(path, want):
    """Each profile of sample type `want` in the file exporter's JSON lines:
    (its line's dictionary, string table, resource profile, profile)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            dic = d.get("dictionary", {})
            strings = dic.get("stringTable", [""])
            for rp in d.get("resourceProfiles", []):
                for sp in rp.get("scopeProfiles", []):
                    for p in sp.get("profiles", []):
                        if strings[p.get("sampleType", {}).get("typeStrindex", 0)] == want:
                            yield dic, strings, rp, p


def main():
    path, want = sys.argv[1], sys.argv[2]
    out = Counter()
    for dic, strings, rp, p in profiles(path, want):
        funcs = dic.get("functionTable", [{}])
        locs = dic.get("locationTable", [{}])
        stacks = dic.get("stackTable", [{}])
        service = "?"
        for a in rp.get("resource", {}).get("attributes", []):
            key = strings[a["keyStrindex"]] if "keyStrindex" in a else a.get("key")
            if key == "service.name":
                service = attr_value(a.get("value", {}), strings)
        period = int(p.get("period", "1")) or 1
        for s in p.get("samples", []):
            names = []
            stack = stacks[s.get("stackIndex", 0)]
            for li in stack.get("locationIndices", []):
                for ln in locs[li].get("lines", []):
                    fn = funcs[ln.get("functionIndex", 0)]
                    name = strings[fn.get("nameStrindex", 0)]
                    if int(ln.get("line", "0")):
                        fname = strings[fn.get("filenameStrindex", 0)].rsplit("/", 1)[-1]
                        name = "%s (%s:%s)" % (name, fname, ln["line"])
                    names.append(name.replace(";", ":"))
            names.reverse()
            value = sum(int(v) for v in s.get("values", []))
            out[";".join([service] + names)] += value // period
    for stack, count in sorted(out.items()):
        print(stack, count)


if __name__ == "__main__":
    main()
