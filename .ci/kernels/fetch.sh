#!/usr/bin/env bash
# Debian's cloud kernels for the kernel matrix (.ci/kernels/run.sh boots them
# under QEMU): for each suite, the kernel that linux-image-cloud-ARCH points
# at today, unpacked, and a busybox initramfs that mounts the host's root
# over virtiofs with a tmpfs overlay on top. KERNEL_ARCH=arm64: Debian's
# arm64 kernels, and for each suite an arm64 root to share instead of the
# host's (ROOT_PACKAGES unpacked: no maintainer script runs, seconds not
# minutes).
#
#   bash .ci/kernels/fetch.sh [CACHE]     (default /var/cache/pyebpf/kernels[-arm64])
#
# CACHE/SUITE/vmlinuz      the kernel (a symlink into CACHE/SUITE/x/)
# CACHE/SUITE/initrd.img   busybox, the modules virtiofs and overlayfs need, the
#                          kernel's config (/boot/config-RELEASE in the guest), /init
# CACHE/SUITE/release      the kernel's release (uname -r)
# CACHE/SUITE/root/        arm64: the guest's root (python3, pyebpf's libraries, Criterion)
# CACHE/.apt-SUITE/        a private apt: the suite's lists, an empty dpkg status
#
# Cached and idempotent: the suite's package lists are refreshed once a day
# (KERNELS_REFRESH=1 forces it), a .deb already here is not downloaded again,
# x/ is unpacked again only when the set of .debs changed, and the initramfs
# is rebuilt only when it is older than this script, busybox or the kernel.
set -euo pipefail
ARCH=${KERNEL_ARCH:-amd64}
case $ARCH in
amd64) CACHE=${1:-/var/cache/pyebpf/kernels} SUITES=${KERNEL_SUITES:-bullseye bookworm trixie sid} QEMU=qemu-system-x86_64 ;;
arm64) CACHE=${1:-/var/cache/pyebpf/kernels-arm64} SUITES=${KERNEL_SUITES:-bookworm} QEMU=qemu-system-aarch64 ;;
*) echo "fetch.sh: KERNEL_ARCH is amd64 or arm64, not $ARCH" >&2; exit 1 ;;
esac
# An arm64 guest's root: what the guest tests run (guest-tests.sh, bash,
# bc, ps), pyebpf's and the integration tests' libraries, and the suite's
# python3. apt resolves the rest.
ROOT_PACKAGES=${ROOT_PACKAGES:-python3 bash dash coreutils grep sed procps util-linux bc libbpf1 libelf1 zlib1g libdw1
	libprotobuf-c1 libmicrohttpd12 libcurl4 libncursesw6 libstdc++6 libcriterion3 libpython3-dev mount}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# What the guest needs before it can mount its root: the virtio PCI transport,
# virtiofs (FUSE over virtio) and overlayfs. Built-in ones are skipped; the
# dependencies of the others are added.
MODULES="virtio virtio_ring virtio_pci fuse virtiofs overlay"
SELF=$(readlink -f "$0")
. "$(dirname "$SELF")/../retry.sh"

die() { echo "fetch.sh: $*" >&2; exit 1; }

# The host tools this needs; on a fresh machine (CI) apt brings them.
need=()
command -v $QEMU >/dev/null || need+=("$([ "$ARCH" = arm64 ] && echo qemu-system-arm || echo qemu-system-x86)")
# run.sh's virtiofsd: qemu-system-common's C one up to Debian 12, a package of its own after.
if ! command -v $QEMU >/dev/null || { [ ! -x /usr/lib/qemu/virtiofsd ] &&
	[ ! -x /usr/libexec/virtiofsd ] && ! command -v virtiofsd >/dev/null; }; then
	apt-cache show virtiofsd >/dev/null 2>&1 && need+=(virtiofsd)
fi
# busybox-static, not busybox: the initramfs has no libc.
dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
[ -r "$KEYRING" ] || need+=(debian-archive-keyring)
if [ ${#need[@]} -gt 0 ]; then
	echo "fetch.sh: installing ${need[*]}"
	retry "apt-get update" apt-get update -qq
	retry "apt-get install ${need[*]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
BUSYBOX=/bin/busybox

# The Debian mirror of this machine's own apt sources (deb822 .sources or
# one-line .list files); DEBIAN_MIRROR overrides it.
mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "${DEBIAN_MIRROR%/}"; return; fi
	local files=() m
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || die "no apt sources in /etc/apt"
	m=$(grep -hoE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
		"${files[@]}" | grep -oE 'https?://[^[:space:]]+' | head -n1 || true)
	[ -n "$m" ] || die "no Debian mirror in /etc/apt/sources.list* (set DEBIAN_MIRROR)"
	echo "${m%/}"
}
MIRROR=$(mirror)

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

# apt with a suite's private configuration: its own sources, lists, cache and
# an empty dpkg status, so nothing of the host's own apt state is read or changed.
# Its own binary cache too (hosts may turn apt's off): each apt-cache call
# would otherwise parse the suite's whole Packages list again.
papt() {
	local cmd=$1 d=$CACHE/.apt-$suite
	shift
	"$cmd" -o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d" -o Dir::State::status="$d/status" \
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o APT::Architecture="$ARCH" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# The module's dependencies as its .modinfo says (depends=a,b): the same list
# depmod writes into modules.dep, which Debian's packages do not ship (their
# postinst runs depmod) and which would need kmod on the host.
modinfo_depends() {
	decompress "$1" | tr '\0' '\n' | awk -F= '$1 == "depends" { print $2; exit }' | tr ',' ' '
}
decompress() {
	case $1 in
	*.ko.xz) xz -dc "$1" ;;
	*.ko.zst) zstd -qdc "$1" ;;
	*.ko.gz) gzip -dc "$1" ;;
	*.ko) cat "$1" ;;
	*) die "unknown module file $1" ;;
	esac
}

# The initramfs's /init: PID 1 until switch_root. It loads the modules in
# order, mounts the host's root (virtiofs tag "hostroot") read-only with a
# tmpfs overlay on top, and switches into it; stage 2 runs there.
write_init() {
	cat >"$1" <<'EOF'
#!/bin/busybox sh
# pyebpf kernel matrix: the guest's PID 1 in the initramfs (.ci/kernels/fetch.sh).
# /proc first: busybox --install links to the binary /proc/self/exe names.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
fail() {
	echo "pyebpf-init: error: $*"
	# run.sh sees no PYEBPF-GUEST-EXIT marker and reports the failure.
	reboot -f
}
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.load); do
	insmod "/lib/modules/$m.ko" || fail "insmod $m"
done
mkdir -p /lower /rw /newroot
# The device can show up a little after virtio_pci's probe: try for ~10 s.
i=0
until mount -t virtiofs -o ro hostroot /lower 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "cannot mount virtiofs tag hostroot"
	usleep 100000
done
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "cannot mount the overlay"
# Stage 2 and its busybox live on a tmpfs /run: the host's own /run is not the guest's.
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "cannot mount /run"
mkdir -p /newroot/run/pyebpf
cp /bin/busybox /stage2 /newroot/run/pyebpf/
# The guest kernel's config where the host's would be (the overlay takes the write).
if [ -f /config ]; then
	mkdir -p /newroot/boot && cp /config "/newroot/boot/config-$(uname -r)"
fi
for d in dev proc sys; do mount --move /$d /newroot/$d || fail "cannot move /$d"; done
exec switch_root /newroot /run/pyebpf/busybox sh /run/pyebpf/stage2
EOF
	chmod 0755 "$1"
}

# Stage 2: PID 1 in the overlay root. Mounts what BPF programs and the tests
# expect, runs the command run.sh wrote (its path is on the kernel command
# line), prints PYEBPF-GUEST-EXIT=<its exit code> and powers off.
write_stage2() {
	cat >"$1" <<'EOF'
# pyebpf kernel matrix: the guest's PID 1 after switch_root (.ci/kernels/fetch.sh).
BB=/run/pyebpf/busybox
mkdir -p /run/pyebpf/bin
$BB --install -s /run/pyebpf/bin
# busybox first for this script; the command gets the host's own tools.
export PATH=/run/pyebpf/bin
fail() { echo "pyebpf-init: error: $*"; reboot -f; }
mnt() { mount -t "$1" -o "$2" "$3" "$4" || echo "pyebpf-init: warning: cannot mount $1 on $4"; }
mkdir -p /dev/pts /dev/shm
mnt devpts mode=0620,ptmxmode=0666 devpts /dev/pts
mnt tmpfs mode=1777,nosuid,nodev tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
mnt debugfs mode=0700 debugfs /sys/kernel/debug
mnt tracefs mode=0700 tracefs /sys/kernel/tracing
mnt bpf mode=0700 bpf /sys/fs/bpf
mnt cgroup2 nsdelegate cgroup2 /sys/fs/cgroup
ip link set lo up 2>/dev/null
script=
for a in $(cat /proc/cmdline); do
	case $a in pyebpf.run=*) script=${a#pyebpf.run=} ;; esac
done
[ -n "$script" ] && [ -r "$script" ] || fail "no command script (pyebpf.run=$script)"
hostname "pyebpf-$(uname -r | cut -d- -f1)"
read -r up _ </proc/uptime
echo "PYEBPF-GUEST-KERNEL=$(uname -r) uptime=$up"
# The host's /bin/sh runs the script (it sets the environment, the working
# directory, and execs the command); no input: the console never ends.
/bin/sh "$script" </dev/null
rc=$?
echo "PYEBPF-GUEST-EXIT=$rc"
sync
# -no-reboot makes QEMU exit on reboot: no ACPI needed.
reboot -f
EOF
}

# arm64: the guest's root (ROOT_PACKAGES and what they depend on) and the
# suite's busybox for its initramfs, downloaded into the private apt's
# cache and unpacked again only when the set of .debs changed.
foreign_root() {
	local debs stamp
	# shellcheck disable=SC2086 # a list of package names
	debs=$(papt apt-get -s -qq --no-install-recommends install $ROOT_PACKAGES busybox-static |
		sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*\[\([a-z0-9]*\)\]).*/\1_\2_\3.deb/p' | sed 's/:/%3a/g' | LC_ALL=C sort)
	[ -n "$debs" ] || die "$suite: apt resolves none of: $ROOT_PACKAGES"
	stamp=$(printf '%s\n' "$debs" | md5sum | cut -d' ' -f1)
	[ "$(cat "$CACHE/$suite/root/.pyebpf-debs" 2>/dev/null)" = "$stamp" ] && return 0
	echo "fetch.sh: $suite: the guest's root ($(echo "$debs" | wc -l) packages)"
	# shellcheck disable=SC2086
	retry "$suite: the arm64 root's packages" papt apt-get -qq -y --download-only --no-install-recommends \
		install $ROOT_PACKAGES busybox-static >/dev/null || die "$suite: cannot download the root's packages"
	rm -rf "$CACHE/$suite/root.new" "$CACHE/$suite/busybox"
	mkdir -p "$CACHE/$suite/root.new"
	for deb in $debs; do
		[ -s "$CACHE/.apt-$suite/archives/$deb" ] || die "$suite: $deb missing after the download"
		case $deb in
		busybox-static_*) dpkg-deb -x "$CACHE/.apt-$suite/archives/$deb" "$CACHE/$suite/busybox" ;;
		*) dpkg-deb -x "$CACHE/.apt-$suite/archives/$deb" "$CACHE/$suite/root.new" ;;
		esac
	done
	[ -x "$CACHE/$suite/root.new/bin/sh" ] || ln -s dash "$CACHE/$suite/root.new/bin/sh"
	echo "$stamp" >"$CACHE/$suite/root.new/.pyebpf-debs"
	rm -rf "$CACHE/$suite/root"
	mv "$CACHE/$suite/root.new" "$CACHE/$suite/root"
}

# One .deb into the current directory: a failed try's partial file is
# removed, or the next run would take it as the cached package.
download_deb() {
	papt apt-get -qq download "$1" && return 0
	local rc=$?
	rm -f "$2"
	return "$rc"
}

for suite in $SUITES; do
	d=$CACHE/.apt-$suite
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$CACHE/$suite"
	[ -e "$d/status" ] || : >"$d/status"
	src="deb [signed-by=$KEYRING] $MIRROR $suite main"
	[ "$(cat "$d/sources.list" 2>/dev/null)" = "$src" ] || { echo "$src" >"$d/sources.list"; rm -f "$d/lists/"*_Packages*; }

	# Refresh the lists once a day: "today's kernel" without a download on every run.
	fresh=$(find "$d/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 | head -n1)
	if [ -z "$fresh" ] || [ "${KERNELS_REFRESH:-0}" = 1 ]; then
		echo "fetch.sh: $suite: apt-get update"
		if ! retry "$suite: apt-get update" papt apt-get -qq update; then
			[ -e "$CACHE/$suite/release" ] || die "$suite: apt-get update failed"
			echo "fetch.sh: $suite: apt-get update failed; keeping the cached kernel" >&2
		fi
		touch "$d/lists/"*_Packages* 2>/dev/null || true
	fi

	# linux-image-cloud-ARCH -> linux-image-VERSION-cloud-ARCH; newer kernels
	# split that into linux-binary-VERSION (vmlinuz) and linux-modules-VERSION.
	image=$(papt apt-cache depends "linux-image-cloud-$ARCH" |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
	[ -n "$image" ] || die "$suite: linux-image-cloud-$ARCH depends on no linux-image-VERSION"
	release=${image#linux-image-}
	pkgs=("$image")
	while read -r p; do pkgs+=("$p"); done < <(papt apt-cache depends "$image" |
		sed -n "s/^ *Depends: \(linux-[a-z]*-$(printf '%s' "$release" | sed 's/\./\\./g')\)\$/\1/p" | sort -u)

	cd "$CACHE/$suite"
	debs=()
	for p in "${pkgs[@]}"; do
		v=$(papt apt-cache show --no-all-versions "$p" | sed -n 's/^Version: //p' | head -n1)
		[ -n "$v" ] || die "$suite: no version for $p"
		deb=${p}_${v//:/%3a}_$ARCH.deb
		if [ ! -s "$deb" ]; then
			echo "fetch.sh: $suite: downloading $p $v"
			retry "$suite: $p $v" download_deb "$p" "$deb"
		fi
		[ -s "$deb" ] || die "$suite: $deb missing after apt-get download"
		debs+=("$deb")
	done
	# Older kernels of this suite go.
	for f in *.deb; do
		[[ " ${debs[*]} " == *" $f "* ]] || { echo "fetch.sh: $suite: removing old $f"; rm -f "$f"; }
	done

	stamp=$(printf '%s\n' "${debs[@]}" | sort)
	if [ "$(cat x/.pyebpf-debs 2>/dev/null)" != "$stamp" ]; then
		echo "fetch.sh: $suite: unpacking $release"
		rm -rf x x.new
		mkdir x.new
		for deb in "${debs[@]}"; do dpkg-deb -x "$deb" x.new; done
		printf '%s\n' "$stamp" >x.new/.pyebpf-debs
		mv x.new x
	fi

	moddir=
	for m in x/lib/modules/$release x/usr/lib/modules/$release; do [ -d "$m" ] && moddir=$m; done
	[ -n "$moddir" ] || die "$suite: no modules for $release"
	# /boot/vmlinuz-RELEASE, or (newer packages) /usr/lib/modules/RELEASE/vmlinuz.
	kernel=
	for k in x/boot/vmlinuz-$release "$moddir/vmlinuz"; do [ -f "$k" ] && kernel=$k && break; done
	[ -n "$kernel" ] || die "$suite: no vmlinuz for $release in $CACHE/$suite/x"
	ln -sfn "$kernel" vmlinuz

	guest_busybox=$BUSYBOX
	if [ "$ARCH" != amd64 ]; then
		foreign_root
		guest_busybox=$CACHE/$suite/busybox/bin/busybox
		[ -x "$guest_busybox" ] || guest_busybox=$CACHE/$suite/busybox/usr/bin/busybox # trixie on
	fi

	if [ -s initrd.img ] && [ initrd.img -nt "$SELF" ] && [ initrd.img -nt "$guest_busybox" ] &&
		[ initrd.img -nt x/.pyebpf-debs ] && [ "$(cat release 2>/dev/null)" = "$release" ]; then
		echo "fetch.sh: $suite: $release (cached)"
		continue
	fi

	# Module name (dashes as underscores) -> file, and the built-in ones.
	declare -A modfile=() builtin=() seen=()
	while read -r f; do
		n=${f##*/}
		n=${n%%.ko*}
		modfile[${n//-/_}]=$f
	done < <(find "$moddir/kernel" -name '*.ko*')
	while read -r f; do
		n=${f##*/}
		n=${n%%.ko*}
		builtin[${n//-/_}]=1
	done <"$moddir/modules.builtin"
	order=()
	# Depth first: a module after everything it depends on.
	add_module() {
		local n=${1//-/_} dep
		[ -z "${seen[$n]:-}" ] || return 0
		seen[$n]=1
		[ -z "${builtin[$n]:-}" ] || return 0
		[ -n "${modfile[$n]:-}" ] || die "$suite: module $n is neither built in nor in $moddir"
		for dep in $(modinfo_depends "${modfile[$n]}"); do add_module "$dep"; done
		order+=("$n")
	}
	for m in $MODULES; do add_module "$m"; done

	tmp=$(mktemp -d "$CACHE/$suite/initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,lib/modules}
	cp "$guest_busybox" "$tmp/bin/busybox"
	# insmod from busybox reads plain .ko files only: decompress here.
	for n in "${order[@]}"; do decompress "${modfile[$n]}" >"$tmp/lib/modules/$n.ko"; done
	printf '%s\n' "${order[@]}" >"$tmp/modules.load"
	# The kernel's config, for /boot/config-RELEASE in the guest: libbpf's
	# __kconfig externs and bpftool feature probe read it there.
	for c in x/boot/config-$release "$moddir/config"; do [ -f "$c" ] && cp "$c" "$tmp/config" && break; done
	write_init "$tmp/init"
	write_stage2 "$tmp/stage2"
	# The console before devtmpfs is mounted: the kernel opens /dev/console for /init.
	mknod -m 600 "$tmp/dev/console" c 5 1
	(cd "$tmp" && find . | LC_ALL=C sort | "$BUSYBOX" cpio -o -H newc -R 0:0 2>/dev/null) >initrd.img.new
	rm -rf "$tmp"
	mv initrd.img.new initrd.img
	echo "$release" >release
	echo "fetch.sh: $suite: $release, initramfs with ${order[*]:-no modules}"
	unset modfile builtin seen
done
