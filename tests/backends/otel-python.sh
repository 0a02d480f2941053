#!/usr/bin/env bash
# OpenTelemetry Python with Flask, in a venv per interpreter, for the tests
# that read a traced request's span and context variables
# (tests/fixtures/otel/shop.py runs in them). Installed from PyPI, every
# package pinned below and installed with --no-deps, so two machines get the
# same files; cached.
#
#   bash tests/backends/otel-python.sh build        makes what is missing; prints "TAG PYTHON" per venv
#   bash tests/backends/otel-python.sh list [KIND]  prints "TAG PYTHON" for the venvs of KIND
#                                                   already made (flask, the default, or asgi)
#
# One venv per interpreter, $CACHE/TAG (default /var/cache/pyebpf/otel-python),
# its python at $CACHE/TAG/bin/python:
#   debian-3.11  /usr/bin/python3.11 --system-site-packages: Debian's python3-flask (make test-deps)
#   pyenv-3.10, pyenv-3.12, pyenv-3.13   pyenv's newest build of each, Flask from PyPI
#   sid-3.14     sid's python3.14 (.ci/pythons.sh, $PYEBPF_PYTHONS_DIR), Flask from PyPI
# and one venv of the other kind, asgi (tests/fixtures/otel/asgi_shop.py):
#   asgi-3.14    sid's python3.14: FastAPI on uvicorn, asgi-correlation-id, and
#                OpenTelemetry's ASGI and FastAPI instrumentations; one
#                interpreter, as the event-loop tests need no other (the
#                Flask venvs cover the readers on every version)
# A missing interpreter is skipped with one line. No 3.9: OpenTelemetry
# Python 1.45 and instrumentation 0.66 require Python >= 3.10.
#
# Pinned, found once with pip's resolver:
#   opentelemetry-api 1.45.2, opentelemetry-sdk 1.45.2,
#   opentelemetry-instrumentation-flask 0.66b1 with opentelemetry-instrumentation,
#   -instrumentation-wsgi and -util-http 0.66b1, and their libraries.
#   opentelemetry-semantic-conventions is 0.66b2, not the 0.66b1 that the
#   0.66b1 instrumentations declare: sdk 1.45.2 declares ==0.66b2, PyPI has
#   no instrumentation-flask 0.66b2, and the two semantic-conventions
#   releases differ only in their version string. The resolver refuses the
#   set, hence --no-deps (and an import check after the install).
#
# A venv's stamp ($CACHE/TAG/.pyebpf-stamp) holds its interpreter and the pin
# list: a venv whose stamp differs is made again. Each is made under a lock
# in a temporary directory beside it and renamed into place when complete
# (its scripts' #! lines and pyvenv.cfg rewritten for the final path first),
# so an interrupted build is never taken for a finished one. Cached, a run
# takes well under a second.
set -euo pipefail

CACHE=${PYEBPF_OTEL_PYTHON_CACHE:-/var/cache/pyebpf/otel-python}
PYTHONS_DIR=${PYEBPF_PYTHONS_DIR:-/var/cache/pyebpf/pythons}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
STAMP=.pyebpf-stamp

OTEL_PINS=(
	opentelemetry-api==1.45.2
	opentelemetry-sdk==1.45.2
	opentelemetry-semantic-conventions==0.66b2
	opentelemetry-instrumentation==0.66b1
	opentelemetry-instrumentation-wsgi==0.66b1
	opentelemetry-instrumentation-flask==0.66b1
	opentelemetry-util-http==0.66b1
	typing-extensions==4.16.0
	wrapt==2.5.2
	packaging==26.4
)
# The asgi kind's, beside OTEL_PINS less the Flask and WSGI instrumentations
# (pip's resolver chose the frameworks' set for sid's 3.14).
ASGI_PINS=(
	opentelemetry-instrumentation-asgi==0.66b1
	opentelemetry-instrumentation-fastapi==0.66b1
	asgiref==3.13.0
	fastapi==0.165.0
	starlette==1.10.0
	pydantic==2.14.4
	pydantic-core==2.50.5
	annotated-types==0.8.0
	annotated-doc==0.0.7
	typing-inspection==0.4.5
	anyio==4.16.0
	idna==3.20
	uvicorn==0.55.0
	h11==0.16.0
	click==8.5.1
	asgi-correlation-id==5.0.1
)
# Flask 3.1 and what it needs, for the interpreters without Debian's.
FLASK_PINS=(
	flask==3.1.3
	werkzeug==3.1.9
	jinja2==3.1.6
	markupsafe==3.0.4
	itsdangerous==2.2.0
	click==8.5.1
	blinker==1.9.0
)

die() { echo "otel-python: $*" >&2; exit 1; }
usage() { die "usage: $0 build | list [flask|asgi]"; }
# shellcheck source=.ci/retry.sh
. "$(dirname "$0")/../../.ci/retry.sh"

newest() { # GLOB...: the last existing match in version order, or nothing
	local f
	for f in "$@"; do [ -e "$f" ] && echo "$f"; done | sort -V | tail -n 1
}

# "TAG PYTHON SYSTEM KIND" for every venv wanted; SYSTEM 1: Debian's
# Flask through --system-site-packages. Missing ones are said on stderr.
interpreters() {
	local v py
	if ! [ -x /usr/bin/python3.11 ]; then echo "otel-python: no /usr/bin/python3.11: debian-3.11 skipped" >&2
	elif ! /usr/bin/python3.11 -c 'import flask' 2>/dev/null; then
		echo "otel-python: no Debian python3-flask (make test-deps): debian-3.11 skipped" >&2
	else echo "debian-3.11 /usr/bin/python3.11 1 flask"; fi
	for v in 3.10 3.12 3.13; do
		py=$(newest "$PYENV_ROOT"/versions/"$v".*/bin/python"$v")
		if [ -n "$py" ]; then echo "pyenv-$v $py 0 flask"
		else echo "otel-python: no pyenv $v in $PYENV_ROOT/versions: pyenv-$v skipped" >&2; fi
	done
	py=$PYTHONS_DIR/sid/usr/bin/python3.14
	if [ -x "$py" ]; then printf 'sid-3.14 %s 0 flask\nasgi-3.14 %s 0 asgi\n' "$py" "$py"
	else echo "otel-python: no $py (make test-deps: .ci/pythons.sh): sid-3.14 and asgi-3.14 skipped" >&2; fi
}

pins_of() { # SYSTEM KIND: the packages its venv installs
	local system=$1 kind=$2 p
	for p in "${OTEL_PINS[@]}"; do
		[ "$kind" = asgi ] && case $p in opentelemetry-instrumentation-wsgi* | opentelemetry-instrumentation-flask*) continue ;; esac
		echo "$p"
	done
	if [ "$kind" = asgi ]; then printf '%s\n' "${ASGI_PINS[@]}"
	elif [ "$system" != 1 ]; then printf '%s\n' "${FLASK_PINS[@]}"; fi
}

stamp_of() { # PYTHON SYSTEM KIND: what the stamp of its venv must hold
	local py=$1 system=$2 kind=$3
	echo "python $py $("$py" -c 'import sys; print(sys.version.split()[0])')"
	echo "system-site-packages $system"
	[ "$kind" = flask ] || echo "kind $kind"
	pins_of "$system" "$kind"
}

# A venv without pip, and pip run from sid's python3-pip-whl wheel
# (.ci/pythons.sh) into it: ensurepip would take as long as the install
# itself, and sid's 3.14 has none. Without sid's wheel, ensurepip's pip.
# Sets pip to the command that installs into DIR.
venv_and_pip() { # PYTHON SYSTEM DIR
	local py=$1 system=$2 dir=$3 flags=() whl
	[ "$system" = 1 ] && flags=(--system-site-packages)
	whl=$(newest "$PYTHONS_DIR"/sid/usr/share/python-wheels/pip-*.whl)
	if [ -n "$whl" ]; then
		"$py" -m venv --without-pip "${flags[@]}" "$dir" || die "$py -m venv --without-pip failed"
		pip=("$dir/bin/python" "$whl/pip")
	elif "$py" -c 'import ensurepip' 2>/dev/null; then
		"$py" -m venv "${flags[@]}" "$dir" || die "$py -m venv failed"
		pip=("$dir/bin/python" -m pip)
	else
		die "$py has no ensurepip and $PYTHONS_DIR/sid/usr/share/python-wheels has no pip wheel (make test-deps)"
	fi
}

# The checks a venv passes before it is renamed into place: the packages
# import, the framework's instrumentation instruments an app, and the
# install's files are the pinned ones.
check_venv() { # DIR KIND
	if [ "$2" = asgi ]; then
		"$1/bin/python" - <<'EOF'
import asgi_correlation_id, fastapi, uvicorn
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.version import __version__ as api
FastAPIInstrumentor.instrument_app(fastapi.FastAPI())
assert api == "1.45.2", api
EOF
		return
	fi
	"$1/bin/python" - <<'EOF'
import flask
from opentelemetry import trace
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.version import __version__ as api
app = flask.Flask("check")
FlaskInstrumentor().instrument_app(app)
assert api == "1.45.2", api
EOF
}

make_venv() { # TAG PYTHON SYSTEM KIND STAMP
	local tag=$1 py=$2 system=$3 kind=$4 want=$5 final=$CACHE/$1 tmp pins old f pip
	tmp=$(mktemp -d "$CACHE/.build.$tag.XXXXXX")
	chmod 755 "$tmp"
	# shellcheck disable=SC2064 # tmp is fixed now
	trap "rm -rf '$tmp'" EXIT
	venv_and_pip "$py" "$system" "$tmp"
	mapfile -t pins < <(pins_of "$system" "$kind")
	retry "OpenTelemetry Python for $tag (PyPI)" "${pip[@]}" install -q --disable-pip-version-check \
		--no-deps --only-binary=:all: "${pins[@]}" >&2 || die "pip install into $tag's venv failed"
	check_venv "$tmp" "$kind" || die "$tag's venv does not import OpenTelemetry and its framework (above)"
	# A venv names its own path in its scripts' #! lines and pyvenv.cfg; the
	# modules' .pyc files name it too, but import puts the real path in
	# their code objects (importlib's _fix_co_filename).
	for f in "$tmp"/bin/* "$tmp/pyvenv.cfg"; do
		[ -f "$f" ] && [ ! -L "$f" ] && grep -Iq "$tmp" "$f" && sed -i "s|$tmp|$final|g" "$f"
	done
	echo "$want" >"$tmp/$STAMP"
	old=
	if [ -e "$final" ]; then
		old=$(mktemp -d "$CACHE/.old.$tag.XXXXXX")
		mv "$final" "$old/"
	fi
	mv "$tmp" "$final" # same filesystem: a rename
	trap - EXIT
	[ -z "$old" ] || rm -rf "$old"
}

build() {
	local tag py system kind want start
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	rm -rf "$CACHE"/.build.* "$CACHE"/.old.* # left by a build that was killed
	while read -r tag py system kind; do
		want=$(stamp_of "$py" "$system" "$kind") || die "$py does not run"
		if [ "$(cat "$CACHE/$tag/$STAMP" 2>/dev/null)" != "$want" ] || ! "$CACHE/$tag/bin/python" -c '' 2>/dev/null; then
			start=$SECONDS
			echo "otel-python: making $tag's venv ($py)..." >&2
			make_venv "$tag" "$py" "$system" "$kind" "$want"
			echo "otel-python: $tag made in $((SECONDS - start)) s" >&2
		fi
		echo "$tag $CACHE/$tag/bin/python"
	done < <(interpreters)
	flock -u 9
}

list() { # KIND
	local d kind
	for d in "$CACHE"/*/; do
		d=${d%/}
		if ! [ -f "$d/$STAMP" ] || ! [ -x "$d/bin/python" ]; then continue; fi
		# A Flask venv's stamp names no kind (so the venvs made before
		# the asgi kind stay valid).
		kind=$(sed -n 's/^kind //p' "$d/$STAMP")
		[ "${kind:-flask}" = "$1" ] && echo "$(basename "$d") $d/bin/python"
	done
	return 0
}

case $#:${1:-} in
1:build) build ;;
1:list) list flask ;;
2:list) case $2 in flask | asgi) list "$2" ;; *) usage ;; esac ;;
*) usage ;;
esac
