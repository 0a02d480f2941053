# Shared by deploy/dist/*.sh (sourced, not run): the checks every script
# makes of its arguments, and how a finished file reaches OUTDIR.
# shellcheck shell=bash

# What to remove however the script ends: its temporary directory, a
# half-copied output. A signal becomes an exit, so the EXIT trap runs then too.
CLEANUP=()
cleanup() { [[ ${#CLEANUP[@]} -eq 0 ]] || rm -rf "${CLEANUP[@]}"; }
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# One line on stderr, named after the script, and out: make shows it last.
die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# VERSION as make dist passes it (0.2.0): plain dotted numbers, so the same
# string is a valid PEP 440 version, Debian version and OCI tag, and names
# the same release in every file.
check_version() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+){1,3}$ ]] ||
		die "VERSION '$1' is not a release number like 0.2.0"
}

# BIN must be a 64-bit ELF executable for the CPU (x86_64 or aarch64) the
# package is named for: a binary packaged for the wrong CPU installs fine and
# fails only when run. What it does is not checked here.
check_elf() {
	local bin=$1 cpu=$2 want desc
	case $cpu in
	x86_64) want='x86-64' ;;
	aarch64) want='ARM aarch64' ;;
	*) die "unknown CPU '$cpu'" ;;
	esac
	[[ -f $bin && -r $bin ]] || die "BIN '$bin' is not a readable file"
	desc=$(file -b "$bin")
	[[ $desc == "ELF 64-bit LSB "*", $want,"* && $desc == *executable* ]] ||
		die "BIN '$bin' is not an executable for $cpu: $desc"
}

# The time every file made is dated: SOURCE_DATE_EPOCH when the caller sets
# it (reproducible-builds.org), else the checkout's last commit, so that two
# builds of one commit make the same bytes; outside a git checkout, now.
source_date_epoch() {
	if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
		[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH '$SOURCE_DATE_EPOCH' is not a number of seconds"
		echo "$SOURCE_DATE_EPOCH"
	else
		git -C "$1" log -1 --format=%ct 2>/dev/null || date +%s
	fi
}

# Put FILE (made in a temporary directory) into OUTDIR as NAME in one rename:
# a copy under a hidden name first (OUTDIR may be on another file system),
# so OUTDIR never holds a half-written NAME, even if this is killed.
publish() {
	local file=$1 outdir=$2 name=$3 part
	part="$outdir/.$name.partial.$$"
	CLEANUP+=("$part")
	cp "$file" "$part" || die "cannot write $outdir"
	chmod 0644 "$part"
	mv -f "$part" "$outdir/$name"
}

# OUTDIR is made if missing; an existing non-directory is an error.
prepare_outdir() {
	mkdir -p "$1" 2>/dev/null || die "OUTDIR '$1' cannot be made"
	[[ -d $1 && -w $1 ]] || die "OUTDIR '$1' is not a writable directory"
}
