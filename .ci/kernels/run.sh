#!/usr/bin/env bash
# Runs one command as root under one of the matrix's Debian kernels: QEMU
# (TCG: no KVM here) boots CACHE/SUITE/{vmlinuz,initrd.img} from
# .ci/kernels/fetch.sh, with this machine's / shared read-only over virtiofs
# and a tmpfs overlay on top in the guest (writes stay in the guest);
# KERNEL_ARCH=arm64: an arm64 kernel under qemu-system-aarch64 with its
# suite's arm64 root instead, this checkout and /tmp bound into it. The
# command runs in the caller's working directory, its output comes on this
# script's stdout, and this script exits with the command's exit code.
#
#   bash .ci/kernels/run.sh SUITE -- COMMAND [ARG]...
#
# Environment:
#   KERNEL_TIMEOUT   seconds before QEMU is killed (default 900): exit 124
#   KERNEL_ARCH      amd64 (default) or arm64
#   KERNEL_CACHE     where fetch.sh put the kernels (default /var/cache/pyebpf/kernels[-arm64])
#   KERNEL_PASSENV   more variable names to pass into the guest; CI, HOME,
#                    LANG, LC_*, TERM, TZ, PYTHON, PYTHONPATH and PYEBPF_* always go
#   KERNEL_CMDLINE   more kernel parameters (e.g. loglevel=7 to see the boot)
#   KERNEL_MEM, KERNEL_CPUS   guest size (default 2G, 2)
#
# In the guest: /proc, /sys, /dev, /sys/kernel/debug, /sys/kernel/tracing,
# /sys/fs/bpf, /sys/fs/cgroup (cgroup2) are mounted; PYEBPF_GUEST_KERNEL=SUITE.
# The guest prints PYEBPF-GUEST-KERNEL=<uname -r> uptime=<s> before the command
# and PYEBPF-GUEST-EXIT=<code> after it; a guest that never printed the
# latter (boot or /init failure) makes this script exit 125, one whose
# kernel oopsed 126.
set -euo pipefail
ARCH=${KERNEL_ARCH:-amd64}
case $ARCH in
amd64) CACHE=${KERNEL_CACHE:-/var/cache/pyebpf/kernels} QEMU=qemu-system-x86_64 ;;
arm64) CACHE=${KERNEL_CACHE:-/var/cache/pyebpf/kernels-arm64} QEMU=qemu-system-aarch64 ;;
*) echo "run.sh: KERNEL_ARCH is amd64 or arm64, not $ARCH" >&2; exit 125 ;;
esac
# 900: every recording reads the kernel's symbols as it starts (50 ms on
# hardware, seconds under TCG); a 5.10 guest's tests ran 543 s on 2026-11-26.
TIMEOUT=${KERNEL_TIMEOUT:-900}
MEM=${KERNEL_MEM:-2G}
CPUS=${KERNEL_CPUS:-2}

die() { echo "run.sh: $*" >&2; exit 125; }
if [ $# -lt 3 ] || [ "$2" != -- ]; then die "usage: run.sh SUITE -- COMMAND [ARG]..."; fi
suite=$1
shift 2
kdir=$CACHE/$suite
if [ ! -r "$kdir/vmlinuz" ] || [ ! -r "$kdir/initrd.img" ]; then
	die "no kernel for '$suite' in $CACHE: run .ci/kernels/fetch.sh first"
fi
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "KERNEL_TIMEOUT must be a number of seconds"
command -v $QEMU >/dev/null || die "$QEMU missing (run .ci/kernels/fetch.sh first)"
# The root the guest gets: this machine's, or the suite's arm64 one with
# this checkout and /tmp (where the command script is) in it.
share=/ binds=()
if [ "$ARCH" != amd64 ]; then
	share=$kdir/root
	[ -x "$share/bin/sh" ] || die "no $ARCH root for '$suite' in $CACHE: run KERNEL_ARCH=$ARCH .ci/kernels/fetch.sh first"
	binds=(/tmp "$(git rev-parse --show-toplevel 2>/dev/null || pwd -P)")
fi
# qemu-system-common's C virtiofsd (Debian 12; the one tested), or the Rust one (Debian 13 on).
VIRTIOFSD=
for v in /usr/lib/qemu/virtiofsd /usr/libexec/virtiofsd "$(command -v virtiofsd || true)"; do
	[ -n "$v" ] && [ -x "$v" ] && VIRTIOFSD=$v && break
done
[ -n "$VIRTIOFSD" ] || die "no virtiofsd (apt-get install qemu-system-common, or virtiofsd)"
cwd=$(pwd -P)

# Everything of this run in one short directory: the vhost-user socket's path
# must fit in sun_path (108 bytes), and /tmp is visible in the guest, which
# reads its command script from here through the shared root.
run=$(mktemp -d /tmp/pyebpf-vm.XXXXXX)
sock=$run/vfs.sock
log=$run/console.log
qemu_pid='' vfsd_pid='' reader_pid=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	# Best effort from here on: what is already gone fails to be killed.
	set +e
	# timeout(1) passes the signal on to QEMU.
	[ -z "$qemu_pid" ] || { kill -TERM "$qemu_pid" 2>/dev/null; wait "$qemu_pid" 2>/dev/null; }
	[ -z "$vfsd_pid" ] || { kill -TERM "$vfsd_pid" 2>/dev/null; wait "$vfsd_pid" 2>/dev/null; }
	[ -z "$reader_pid" ] || { kill -TERM "$reader_pid" 2>/dev/null; wait "$reader_pid" 2>/dev/null; }
	# File by file, no rm -r: $run/root is where virtiofsd's namespace binds
	# the whole of / (never visible here, but rmdir is what cannot go wrong).
	rm -f "$sock" "$log" "$run/out" "$run/guest.sh" "$run/virtiofsd.log"
	rmdir "$run/root" "$run" 2>/dev/null || echo "run.sh: warning: could not remove $run" >&2
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The command script the guest's /init runs with the host's /bin/sh: the
# environment, the caller's working directory, then exec COMMAND.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
	echo "# .ci/kernels/run.sh: the command for the guest"
	for name in CI HOME LANG LANGUAGE LC_ALL TERM TZ PYTHON PYTHONPATH ${KERNEL_PASSENV:-} $(compgen -e | grep -E '^(PYEBPF_|LC_)' || true); do
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
		[ -z "${!name+set}" ] || echo "export $name=$(q "${!name}")"
	done
	echo "export PATH=$(q "$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")"
	echo "export PYEBPF_GUEST_KERNEL=$(q "$suite")"
	echo "cd $(q "$cwd") || exit 125"
	printf 'exec'
	for a in "$@"; do printf ' %s' "$(q "$a")"; done
	echo
} >"$run/guest.sh"

# virtiofsd shares a copy of / whose every mount is read-only, made in a
# mount namespace of its own: the guest cannot write to this machine even if
# it remounts its side read-write. (util-linux 2.38 has no recursive ro, so
# mount by mount.)
mkdir "$run/root"
if "$VIRTIOFSD" --help 2>&1 | grep -q -- --shared-dir; then
	vfsd_args=(--socket-path="$sock" --shared-dir="$run/root" --cache=auto --sandbox=namespace --log-level=warn)
else
	vfsd_args=(--socket-path="$sock" -o source="$run/root" -o cache=auto -o sandbox=namespace -o log_level=warn)
fi
# shellcheck disable=SC2016
unshare --mount --propagation private -- bash -c '
	set -euo pipefail
	root=$1 share=$2
	shift 2
	mount --rbind "$share" "$root"
	while [ "$1" != -- ]; do
		mkdir -p "$root$1" && mount --rbind "$1" "$root$1"
		shift
	done
	shift
	findmnt -R -n -r -o TARGET "$root" | while read -r t; do
		printf -v t "%b" "$t"
		mount -o remount,bind,ro "$t" 2>/dev/null || echo "run.sh: warning: $t stays writable for the guest" >&2
	done
	exec "$@"
' virtiofsd-ro "$run/root" "$share" "${binds[@]}" -- "$VIRTIOFSD" "${vfsd_args[@]}" >"$run/virtiofsd.log" 2>&1 &
vfsd_pid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	kill -0 "$vfsd_pid" 2>/dev/null || break
	sleep 0.1
done
[ -S "$sock" ] || { cat "$run/virtiofsd.log" >&2; die "virtiofsd did not start"; }

# QEMU's serial console -> this script's stdout, live, without the \r the
# guest's tty adds, and into a log for the exit marker.
mkfifo "$run/out"
# The kernel's last word (pr_emerg: no loglevel hides it) stays in the log only.
sed -u 's/\r$//' <"$run/out" | tee "$log" | sed -u '/reboot: Restarting system$/d' &
reader_pid=$!

if [ "$ARCH" = amd64 ]; then
	# qboot: SeaBIOS would put its banner and terminal escapes (reset, clear
	# screen) on the console, i.e. on our stdout. (Boot time is the same.)
	machine=(-machine "pc,memory-backend=mem" -cpu max)
	[ -r /usr/share/qemu/qboot.rom ] && machine+=(-bios /usr/share/qemu/qboot.rom)
	append="console=ttyS0 tsc=reliable"
else
	# pauth-impdef: pointer authentication by QEMU's cheap hash, not QARMA
	# (where TCG spends much of its time otherwise).
	machine=(-machine "virt,memory-backend=mem" -cpu "max,pauth-impdef=on")
	append="console=ttyAMA0"
fi
# oops=panic: a guest kernel that oopses ends at once (exit 126 below),
# not hung with a dead kthread until the timeout (bookworm's 6.1.176 under
# TCG on 2026-12-03: rcu_tasks_trace jumped to 0, the guest hung).
append+=" panic=-1 oops=panic quiet loglevel=3 random.trust_cpu=on"
append+=" pyebpf.run=$run/guest.sh ${KERNEL_CMDLINE:-}"
started=$(date +%s%N)
# -no-reboot: the guest's reboot -f (and panic=-1) ends QEMU.
timeout -k 10 "$TIMEOUT" "$QEMU" -name "pyebpf-$suite" \
	"${machine[@]}" -accel tcg,thread=multi -m "$MEM" -smp "$CPUS" \
	-nographic -nodefaults -no-user-config -no-reboot \
	-object memory-backend-memfd,id=mem,size="$MEM",share=on \
	-chardev socket,id=vfs,path="$sock" -device vhost-user-fs-pci,chardev=vfs,tag=hostroot \
	-serial stdio \
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.img" -append "$append" \
	</dev/null >"$run/out" 2>&1 &
qemu_pid=$!
qemu_rc=0
wait "$qemu_pid" || qemu_rc=$?
qemu_pid=
wait "$reader_pid" || true
reader_pid=
ms=$((($(date +%s%N) - started) / 1000000))
elapsed=$((ms / 1000)).$((ms % 1000 / 100))

release=$(grep -ao 'PYEBPF-GUEST-KERNEL=[^ ]*' "$log" | tail -n1 | cut -d= -f2 || true)
boot=$(grep -ao 'PYEBPF-GUEST-KERNEL=.* uptime=[0-9.]*' "$log" | tail -n1 | sed 's/.*uptime=//' || true)
rc=$(grep -ao 'PYEBPF-GUEST-EXIT=[0-9]*' "$log" | tail -n1 | cut -d= -f2 || true)
if [ -z "$rc" ]; then
	if grep -aq 'Oops:' "$log"; then
		oops=$(grep -a -m1 -E 'BUG:|Oops:' "$log" | tr -cd '[:print:]' | cut -c1-200)
		echo "run.sh: $suite: the guest kernel oopsed after ${elapsed}s: $oops" >&2
		exit 126
	fi
	if [ "$qemu_rc" = 124 ]; then
		echo "run.sh: $suite: timed out after ${TIMEOUT}s (KERNEL_TIMEOUT); QEMU killed" >&2
		exit 124
	fi
	[ -n "$release" ] || echo "run.sh: $suite: the guest never reached its command (boot or /init failure; QEMU exit $qemu_rc)" >&2
	die "$suite: no PYEBPF-GUEST-EXIT marker from the guest (QEMU exit $qemu_rc)"
fi
printf 'run.sh: %s: %s, command started %ss after the kernel, QEMU ran %ss, exit %s\n' \
	"$suite" "$release" "${boot:-?}" "$elapsed" "$rc" >&2
exit "$rc"
