"""A small service before and after a deploy, for bench/archive.sh.

It handles "requests" (render a page, then serialize it) for DURATION
seconds. Halfway through, the "deploy" swaps render() for one that also
escapes every field: the diff of the two halves must show escape() as new
and render() grown, serialize() shrunk in share.
"""
import html
import json
import sys
import time


def render(rows):
    return "".join("<tr><td>%s</td><td>%s</td></tr>" % (r["id"], r["name"]) for r in rows)


def escape(value):
    return html.escape(str(value), quote=True)


def render_escaped(rows):
    return "".join("<tr><td>%s</td><td>%s</td></tr>" % (escape(r["id"]), escape(r["name"])) for r in rows)


def serialize(rows):
    return json.dumps(rows)


def handle(rows, renderer):
    page = renderer(rows)
    body = serialize(rows)
    return len(page) + len(body)


def main(duration):
    rows = [{"id": i, "name": "item <%d> & co" % i} for i in range(300)]
    start = time.time()
    while time.time() - start < duration / 2:
        handle(rows, render)
    print("deploy at %.3f" % time.time(), flush=True)  # the new version from here on
    while time.time() - start < duration:
        handle(rows, render_escaped)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 40.0)
