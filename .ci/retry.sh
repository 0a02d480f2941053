# Sourced by the scripts that download (apt, mmdebstrap, curl, pip, go):
# the archive and the registries fail a download now and then (mmdebstrap's
# "apt download failed" on a fresh machine, passing by hand minutes later),
# so each download is tried again with backoff, and the last failure says
# which download it was.
#
#   retry "what is downloaded" CMD [ARG...]
#
# Tries CMD up to RETRY_TIMES (5) times, waiting 2, 4, 8, 16 s between; a
# note on stderr for each failure; returns CMD's last status. CMD must be
# safe to run again (a partial download is started over by CMD itself).
retry() {
	local what=$1 n=1 times=${RETRY_TIMES:-5} wait=2 rc
	shift
	while :; do
		"$@" && return 0
		rc=$?
		if [ "$n" -ge "$times" ]; then
			echo "download failed: $what (exit $rc after $n attempts): $*" >&2
			return "$rc"
		fi
		echo "retry: $what failed (exit $rc, attempt $n of $times), again in ${wait} s" >&2
		sleep "$wait"
		n=$((n + 1))
		wait=$((wait * 2))
	done
}
