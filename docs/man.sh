#!/usr/bin/env bash
# pyebpf(1), made from the binary's own help: the top-level usage, then each
# command's --help as it prints it (each verb's help and its parser's option
# table are held together by tests/unit/test_help.c), so help, man page and
# parser cannot disagree.
#   bash docs/man.sh build/pyebpf > build/pyebpf.1
set -euo pipefail
bin=$1
# roff: a backslash doubled, a line starting with . or ' guarded.
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$("$bin" --version | awk '{print $2}')
cat <<HEAD
.TH PYEBPF 1 "" "pyebpf $version" "User Commands"
.SH NAME
pyebpf \\- a system-wide sampling profiler for Python, built on eBPF
.SH SYNOPSIS
.B pyebpf
.I COMMAND
[\\fIOPTIONS\\fR]
.SH DESCRIPTION
.nf
HEAD
"$bin" --help | roff
echo ".fi"
for verb in record top report serve dump push; do
	echo ".SH \"PYEBPF ${verb^^}\""
	echo ".nf"
	"$bin" "$verb" --help | roff
	echo ".fi"
done
cat <<'TAIL'
.SH FILES
.TP
.I /var/lib/pyebpf
where deploy/pyebpf.service keeps its continuous directory, the spool of --push and --otlp
.SH SEE ALSO
The README and docs/ of the source tree; go tool pprof, speedscope, Grafana Pyroscope.
TAIL
