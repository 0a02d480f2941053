#!/usr/bin/env python3
"""The trace links of what an OpenTelemetry collector's file exporter wrote
(OTLP profiles as JSON lines, opentelemetry-proto v1.11.0): for one sample
type, each link's samples and the endpoint attribute they carry,
"TRACE_ID SPAN_ID SAMPLES ENDPOINT" (ids in hex as OTLP/JSON writes them;
ENDPOINT "-" when none), then "unlinked SAMPLES" for samples without a link.

    otlp_links.py PROFILES.json TYPE
"""
import sys
from collections import Counter

from otlp_folded import profiles  # the same file read the same way


def main():
    path, want = sys.argv[1], sys.argv[2]
    linked, unlinked = Counter(), 0
    for dic, strings, _, p in profiles(path, want):
        links = dic.get("linkTable", [{}])
        attrs = dic.get("attributeTable", [{}])
        period = int(p.get("period", "1")) or 1
        for s in p.get("samples", []):
            n = sum(int(v) for v in s.get("values", [])) // period
            endpoint = "-"
            for i in s.get("attributeIndices", []):
                a = attrs[i]
                if strings[a.get("keyStrindex", 0)] == "pyebpf.endpoint":
                    endpoint = a.get("value", {}).get("stringValue", "-")
            link = links[s.get("linkIndex", 0)]
            if s.get("linkIndex", 0) and link.get("traceId") and link.get("spanId"):
                linked[(link["traceId"], link["spanId"], endpoint)] += n
            else:
                unlinked += n
    for (trace, span, endpoint), n in sorted(linked.items()):
        print(trace, span, n, endpoint)
    print("unlinked", unlinked)


if __name__ == "__main__":
    main()
