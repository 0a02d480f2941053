"""A Flask app for bench/push.sh, served by gunicorn: a few endpoints with
different stacks (templates, JSON, hashing, a database-like sort), so a
busy host's intervals hold what a real service's would."""
import hashlib
import json

from flask import Flask, render_template_string

app = Flask(__name__)
ROWS = [{"id": i, "name": "item-%d" % i, "price": i * 1.25} for i in range(300)]
PAGE = "<table>{% for r in rows %}<tr><td>{{ r.id }}</td><td>{{ r.name }}</td></tr>{% endfor %}</table>"


@app.route("/page")
def page():
    return render_template_string(PAGE, rows=ROWS)


@app.route("/api")
def api():
    return json.dumps(sorted(ROWS, key=lambda r: -r["price"])[:100])


@app.route("/hash")
def digest():
    h = b"seed"
    for _ in range(2000):
        h = hashlib.sha256(h).digest()
    return h.hex()
