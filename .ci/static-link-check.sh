#!/usr/bin/env bash
# The static link's warnings, read: glibc marks each function that would
# load the host's NSS modules (getpwnam, getaddrinfo, getservbyname...) and
# the linker names the function of ours or a library's that calls it. A
# static pyebpf must reach none of them: the host's modules are built for
# another glibc. The callers below are linked in but never called:
#   BIO_lookup_ex, BIO_gethostbyname: OpenSSL's own connecting BIOs; curl
#     resolves and connects itself and hands OpenSSL the socket.
#   ares_getaddrinfo (getservbyname): a service name looked up by name; curl
#     gives c-ares the port as a number (strace of a push: no /etc/services).
#   lookup_service (getservbyport_r): ares_getnameinfo, which curl never calls.
# Anything else fails the build, naming the caller.
#   bash .ci/static-link-check.sh LINKER-OUTPUT
set -euo pipefail
ALLOWED=" BIO_lookup_ex BIO_gethostbyname ares_getaddrinfo lookup_service "
bad=$(awk -F"[\`']" '/in function `/ { fn = $2; sub(/\..*/, "", fn) }
	/statically linked applications requires at runtime/ { print fn ":" $2 }' "$1" | sort -u |
	while IFS=: read -r fn sym; do
		case $ALLOWED in *" $fn "*) ;; *) echo "$fn calls $sym" ;; esac
	done)
[ -z "$bad" ] && exit 0
echo "static-link-check: the static binary would load the host's NSS modules: $bad" | tr '\n' ';'
echo
exit 1
