# shellcheck shell=bash disable=SC2034 # VM_* results are read by the sourcing script
# scripts/lib/vm.sh: boot a Debian kernel under qemu with a busybox initramfs and bring files back.
#
# Sourced by scripts/rt-vm-test (and meant for other VM tests, e.g. an aarch64 one). It owns:
# host tools, a private apt configuration that fetches Debian packages for any suite and
# architecture (never touching the machine's own apt sources or dpkg state), kernel and busybox
# extraction into a cache, the initramfs, the qemu boot, and the 9p directory results come back
# through. It knows nothing about rtsoak: the caller supplies the payload script that runs inside.
#
# Every function takes the target architecture as the kernel names it (x86_64, aarch64) where
# it matters. Failures to fetch anything from the network exit with VM_EXIT_DOWNLOAD (75) and a
# line starting "DOWNLOAD FAILED", so a caller (and CI) can tell them from a failing test.

#
# A test composes them like this (scripts/rt-vm-test is the x86_64 one):
#   vm_ensure_tools qemu-system-aarch64:qemu-system-arm cpio:cpio xz:xz-utils
#   vm_fetch_kernel "$CACHE" trixie aarch64 rt      # sets VM_KERNEL, VM_KERNEL_MODULES
#   vm_fetch_busybox "$CACHE" trixie aarch64        # sets VM_BUSYBOX
#   vm_make_initramfs initrd.gz aarch64 payload.sh my-static-binary
#   vm_boot aarch64 "$VM_KERNEL" initrd.gz out/ serial.log 600 isolcpus=4,5
#   # the payload's files are now in out/, its exit status in out/payload.exit

VM_EXIT_DOWNLOAD=75

# --- messages ---------------------------------------------------------------------------------

vm_log() { printf '[rt-vm %s] %s\n' "$(date +%T)" "$*" >&2; }

# A network or mirror problem: not a failure of the software under test.
vm_download_failed() {
    printf 'DOWNLOAD FAILED: %s: this is not an rtsoak failure; check the network or the Debian mirror, then run again\n' "$*" >&2
    exit "$VM_EXIT_DOWNLOAD"
}

vm_die() {
    printf 'ERROR: %s\n' "$*" >&2
    exit 1
}

# Seconds since an earlier `date +%s.%N` reading, one decimal.
vm_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- architecture names -----------------------------------------------------------------------

vm_deb_arch() {
    case "$1" in
        x86_64) echo amd64 ;;
        aarch64) echo arm64 ;;
        *) vm_die "unsupported VM architecture '$1': use x86_64 or aarch64" ;;
    esac
}

vm_qemu_package() {
    case "$1" in
        x86_64) echo qemu-system-x86 ;;
        aarch64) echo qemu-system-arm ;;
        *) vm_die "unsupported VM architecture '$1': use x86_64 or aarch64" ;;
    esac
}

# --- host tools -------------------------------------------------------------------------------

# vm_ensure_tools COMMAND:PACKAGE...: install (apt-get) the packages whose command is missing.
# A command given as a path (/usr/share/...) is checked as a file.
vm_ensure_tools() {
    local pair command package missing=()
    for pair in "$@"; do
        command=${pair%%:*}
        package=${pair#*:}
        if [[ $command == /* ]]; then
            [[ -e $command ]] || missing+=("$package")
        else
            command -v "$command" >/dev/null 2>&1 || missing+=("$package")
        fi
    done
    ((${#missing[@]} == 0)) && return 0
    [[ $(id -u) == 0 ]] || vm_die "missing host packages: ${missing[*]}; install them (sudo apt-get install ${missing[*]}) or run as root"
    command -v apt-get >/dev/null || vm_die "missing host packages: ${missing[*]}, and no apt-get to install them; install them by hand"
    vm_log "installing host packages: ${missing[*]}"
    apt-get update -q >&2 || vm_download_failed "apt-get update for host packages ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2 ||
        vm_download_failed "apt-get install ${missing[*]}"
}

# --- a private apt configuration --------------------------------------------------------------

# The machine's Debian mirror (first URI of its Debian sources), or deb.debian.org.
# RTSOAK_VM_MIRROR overrides it.
vm_host_mirror() {
    if [[ -n ${RTSOAK_VM_MIRROR:-} ]]; then
        echo "$RTSOAK_VM_MIRROR"
        return
    fi
    local uri=""
    if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
        uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
    fi
    if [[ -z $uri && -r /etc/apt/sources.list ]]; then
        uri=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}

# vm_apt_setup DIR SUITE ARCH: create DIR with its own sources, lists and archives for one
# suite and architecture, and set VM_APT (the apt-get/apt-cache options that use it). The host's
# apt.conf.d still applies (proxies, Check-Valid-Until for snapshot mirrors).
vm_apt_setup() {
    local dir=$1 suite=$2 deb_arch
    deb_arch=$(vm_deb_arch "$3")
    mkdir -p "$dir/sources.list.d" "$dir/preferences.d" "$dir/state/lists/partial" \
        "$dir/cache/archives/partial" "$dir/debs"
    cat >"$dir/sources.list.d/$suite.sources" <<EOF
Types: deb
URIs: $(vm_host_mirror)
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    VM_APT=(
        -o "Dir::Etc::SourceList=/dev/null"
        -o "Dir::Etc::SourceParts=$dir/sources.list.d"
        -o "Dir::Etc::Preferences=/dev/null"
        -o "Dir::Etc::PreferencesParts=$dir/preferences.d"
        -o "Dir::State=$dir/state"
        -o "Dir::State::status=/dev/null"
        -o "Dir::Cache=$dir/cache"
        -o "APT::Architecture=$deb_arch"
        -o "APT::Architectures=$deb_arch"
        -o "Debug::NoLocking=true"
        -o "APT::Sandbox::User=root"
    )
}

# vm_apt_update DIR SUITE ARCH: set up DIR and refresh its package lists. Returns non-zero
# (without exiting) when the mirror cannot be reached, so a caller may fall back to its cache.
vm_apt_update() {
    vm_apt_setup "$@"
    # Error-Mode=any: a list that failed to download is an error, not a warning.
    timeout 300 apt-get "${VM_APT[@]}" -o APT::Update::Error-Mode=any -q update >&2
}

# vm_apt_depends_image META: the versioned linux-image package a metapackage depends on.
vm_apt_depends_image() {
    apt-cache "${VM_APT[@]}" show --no-all-versions "$1" 2>/dev/null |
        awk -F': ' '/^Depends:/ { print $2; exit }' | tr ',' '\n' |
        awk '$1 ~ /^linux-image-/ { print $1; exit }'
}

# vm_apt_download DIR PACKAGE: download PACKAGE's .deb into DIR/debs unless it is there; print
# its path.
vm_apt_download() {
    local dir=$1 package=$2
    if ! compgen -G "$dir/debs/${package}_*.deb" >/dev/null; then
        (cd "$dir/debs" && timeout 600 apt-get "${VM_APT[@]}" -q download "$package" >&2) ||
            return 1
    fi
    compgen -G "$dir/debs/${package}_*.deb" | sort -V | tail -n 1
}

# --- kernel and busybox from Debian -----------------------------------------------------------

# vm_fetch_kernel CACHE SUITE ARCH FLAVOUR: make a Debian kernel ready under CACHE and set
# VM_KERNEL (the image), VM_KERNEL_MODULES (its modules directory, with modules.builtin and
# the file-system and network modules) and VM_KERNEL_PACKAGE. FLAVOUR is the metapackage suffix
# (`rt` gives linux-image-rt-amd64). Without network, a kernel cached earlier is used.
vm_fetch_kernel() {
    local cache=$1 suite=$2 arch=$3 flavour=$4 deb_arch meta apt_dir package deb kdir
    deb_arch=$(vm_deb_arch "$arch")
    meta="linux-image-$flavour-$deb_arch"
    apt_dir="$cache/apt/$suite-$deb_arch"
    if vm_apt_update "$apt_dir" "$suite" "$arch"; then
        package=$(vm_apt_depends_image "$meta") || package=""
        [[ -n $package ]] || vm_download_failed "$meta in Debian $suite: the mirror lists no versioned kernel for it"
        echo "$package" >"$apt_dir/kernel-package"
    elif [[ -s $apt_dir/kernel-package ]]; then
        package=$(cat "$apt_dir/kernel-package")
        vm_log "WARNING: cannot refresh Debian $suite package lists; using the cached $package"
    else
        vm_download_failed "apt-get update for Debian $suite ($(vm_host_mirror))"
    fi
    VM_KERNEL_PACKAGE=$package
    kdir="$cache/kernels/$package"
    # .complete-2: the extraction holds the block and ext4 modules too (for a disk root).
    if [[ ! -e $kdir/.complete-2 ]]; then
        deb=$(vm_apt_download "$apt_dir" "$package") || vm_download_failed "apt-get download $package (Debian $suite)"
        vm_log "extracting $(basename "$deb")"
        rm -rf "$kdir" && mkdir -p "$kdir"
        # Only the image, the list of built-in modules and the module directories an initramfs
        # may need (9p, virtio, a virtio disk with ext4, and their dependencies): a full
        # extraction is ~180 MB. Modules are in /usr/lib/modules since Debian 13, /lib/modules
        # before.
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir" --wildcards \
            './boot/vmlinuz-*' './*lib/modules/*/modules.builtin' \
            './*lib/modules/*/kernel/fs/*' './*lib/modules/*/kernel/net/*' \
            './*lib/modules/*/kernel/drivers/virtio/*' './*lib/modules/*/kernel/drivers/block/*' \
            './*lib/modules/*/kernel/lib/*' './*lib/modules/*/kernel/crypto/*' ||
            vm_die "cannot extract $deb: delete it and run again"
        # Keep only the current kernel of this suite (each is ~100 MB).
        find "$apt_dir/debs" -maxdepth 1 -name 'linux-image-*.deb' ! -name "${package}_*" -delete
        touch "$kdir/.complete-2"
    fi
    VM_KERNEL=$(find "$kdir/boot" -name 'vmlinuz-*' -print -quit)
    # /usr/lib/modules since Debian 13, /lib/modules before.
    VM_KERNEL_MODULES=$(find "$kdir" -path '*lib/modules/*' -prune -type d -print -quit)
    [[ -n $VM_KERNEL && -n $VM_KERNEL_MODULES ]] || vm_die "$package holds no kernel image or modules: delete $kdir and run again"
}

# vm_fetch_busybox CACHE SUITE ARCH: set VM_BUSYBOX to a static busybox for ARCH from Debian
# SUITE (its lists must be fresh from vm_fetch_kernel or vm_apt_update in the same cache).
vm_fetch_busybox() {
    local cache=$1 suite=$2 arch=$3 deb_arch apt_dir deb dir
    deb_arch=$(vm_deb_arch "$arch")
    apt_dir="$cache/apt/$suite-$deb_arch"
    dir="$cache/busybox/$deb_arch"
    if [[ ! -s $dir/busybox.ok ]]; then
        vm_apt_setup "$apt_dir" "$suite" "$arch"
        deb=$(vm_apt_download "$apt_dir" busybox-static) || vm_download_failed "apt-get download busybox-static (Debian $suite $deb_arch)"
        rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
        dpkg-deb -x "$deb" "$dir.tmp"
        mkdir -p "$dir"
        # usr/bin/busybox since Debian 13, bin/busybox before.
        cp "$(find "$dir.tmp" -type f -path '*bin/busybox' -print -quit)" "$dir/busybox"
        rm -rf "$dir.tmp"
        file "$dir/busybox" | grep -q 'statically linked' ||
            vm_die "$dir/busybox is not a static executable ($(file -b "$dir/busybox")): delete $dir and run again"
        basename "$deb" >"$dir/busybox.ok"
    fi
    VM_BUSYBOX="$dir/busybox"
}

# --- initramfs --------------------------------------------------------------------------------

# vm_module_cat FILE: a kernel module's bytes, whatever its compression.
vm_module_cat() {
    case "$1" in
        *.ko.xz) xz -dc "$1" ;;
        *.ko.zst) zstd -qdc "$1" ;;
        *.ko.gz) gzip -dc "$1" ;;
        *.ko) cat "$1" ;;
        *) vm_die "unknown kernel module format: $1" ;;
    esac
}

# vm_module_order MODULES_DIR NAME...: the module files (paths under MODULES_DIR) to load, in
# dependency order, so that NAME... become available. The .deb ships no modules.dep (depmod
# makes it at install), so the dependencies come from each module's own `depends=` field.
# Built-in modules (modules.builtin) are skipped.
vm_module_order() {
    local dir=$1 name
    shift
    declare -A _vm_seen=()
    _vm_order=()
    _vm_visit() {
        local name=${1//-/_} file deps dep
        [[ -n ${_vm_seen[$name]:-} ]] && return
        _vm_seen[$name]=1
        file=$(find "$dir/kernel" \( -name "$name.ko*" -o -name "${name//_/-}.ko*" \) -print -quit)
        if [[ -z $file ]]; then
            grep -Eq "/(${name}|${name//_/-})\.ko\$" "$dir/modules.builtin" 2>/dev/null && return
            vm_die "kernel module $name is neither under $dir/kernel nor built in"
        fi
        # awk reads to the end (an early exit would kill the decompressor with SIGPIPE).
        deps=$(vm_module_cat "$file" | tr '\0' '\n' | awk -F= '/^depends=/ && !found { print $2; found = 1 }')
        for dep in ${deps//,/ }; do
            _vm_visit "$dep"
        done
        _vm_order+=("${file#"$dir"/}")
    }
    for name in "$@"; do
        _vm_visit "$name"
    done
    ((${#_vm_order[@]} == 0)) || printf '%s\n' "${_vm_order[@]}"
}

# vm_make_initramfs OUT ARCH PAYLOAD FILE...: pack OUT (a gzip cpio) holding busybox
# (VM_BUSYBOX), the 9p modules of VM_KERNEL_MODULES, a generic /init, the payload script and
# FILE... (copied to /payload/). The init mounts proc, sys, devtmpfs, debugfs, tracefs, a tmpfs on /tmp
# and the host's 9p share "out" on /out, runs `/payload/run` with its output on the console, and
# powers off. The payload's exit status is written to /out/payload.exit.
vm_make_initramfs() {
    local out=$1 arch=$2 payload=$3 root
    shift 3
    root=$(vm_initramfs_root virtio_pci 9pnet_virtio 9p)
    cp "$payload" "$root/payload/run"
    chmod +x "$root/payload/run"
    (($# == 0)) || cp "$@" "$root/payload/"
    cat >"$root/init" <<'EOF'
#!/bin/busybox sh
# Generic init of scripts/lib/vm.sh: mount what Linux tools expect, bring up the 9p share, run
# the payload, power off. Nothing here may stop before the poweroff.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t tmpfs tmp /tmp
# Loopback up, as on any booted system (rtsoak's network load streams over 127.0.0.1).
ip link set lo up || echo "VM-INIT: cannot bring up lo"
# Only emergencies on the console from here, so kernel chatter cannot mix with our output.
echo 1 >/proc/sys/kernel/printk
for module in $(cat /modules/order); do insmod "/modules/$module" || echo "VM-INIT: insmod $module failed"; done
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out; then
    echo "VM-INIT: payload starts"
    cd /tmp && /payload/run
    echo $? >/out/payload.exit
    sync
    umount /out
else
    echo "VM-INIT: ERROR: cannot mount the 9p share 'out'"
fi
echo "VM-INIT: power off"
poweroff -f
EOF
    chmod +x "$root/init"
    vm_pack_initramfs "$root" "$out"
}

# vm_initramfs_root MODULE...: a new directory holding busybox (VM_BUSYBOX) and MODULE... of
# VM_KERNEL_MODULES with their dependencies, uncompressed (busybox insmod takes plain .ko
# files), in load order in modules/order; print its path.
vm_initramfs_root() {
    local root module plain
    root=$(mktemp -d)
    mkdir -p "$root"/{bin,dev,proc,sys,tmp,out,payload,modules}
    cp "$VM_BUSYBOX" "$root/bin/busybox"
    chmod +x "$root/bin/busybox"
    while read -r module; do
        [[ -n $module ]] || continue
        plain=$(basename "${module%.ko*}.ko")
        vm_module_cat "$VM_KERNEL_MODULES/$module" >"$root/modules/$plain"
        echo "$plain" >>"$root/modules/order"
    done < <(vm_module_order "$VM_KERNEL_MODULES" "$@")
    touch "$root/modules/order"
    echo "$root"
}

# vm_pack_initramfs ROOT OUT: pack ROOT into OUT (a gzip cpio) and delete ROOT.
vm_pack_initramfs() {
    (cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
    rm -rf "$1"
}

# vm_make_disk_initramfs OUT: pack OUT (a gzip cpio) whose /init mounts the ext4 file system on
# the virtio disk /dev/vda as the root, the host's 9p share "out" on its /mnt/out, and hands
# over to the root's own init (systemd, as on an installed machine) with switch_root.
vm_make_disk_initramfs() {
    local out=$1 root
    # crc32c_generic: ext4 asks the crypto API for crc32c on every mount, and nothing here can
    # load a module on demand.
    root=$(vm_initramfs_root virtio_pci virtio_blk crc32c_generic ext4 9pnet_virtio 9p)
    cat >"$root/init" <<'EOF'
#!/bin/busybox sh
# Disk init of scripts/lib/vm.sh: the modules, the root disk, the 9p share, then the root's
# init as PID 1. On any failure: say so and power off (the host sees no result).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for module in $(cat /modules/order); do insmod "/modules/$module" || echo "VM-INIT: insmod $module failed"; done
mkdir -p /newroot
tries=0
while [ ! -b /dev/vda ] && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
if ! mount -t ext4 /dev/vda /newroot; then
    echo "VM-INIT: ERROR: cannot mount the root disk /dev/vda"
    poweroff -f
fi
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /newroot/mnt/out ||
    echo "VM-INIT: ERROR: cannot mount the 9p share 'out'"
umount /proc /sys
mount --move /dev /newroot/dev
echo "VM-INIT: switching to the root's init"
exec switch_root /newroot /sbin/init
EOF
    chmod +x "$root/init"
    vm_pack_initramfs "$root" "$out"
}

# --- boot -------------------------------------------------------------------------------------

# vm_boot ARCH KERNEL INITRD OUT_DIR SERIAL_LOG TIMEOUT_S APPEND...: boot under qemu TCG with
# 6 CPUs and 1 GiB, share OUT_DIR as 9p tag "out", log the serial console to SERIAL_LOG, and kill
# qemu after TIMEOUT_S seconds. Returns qemu's status (124 on timeout). VM_SMP sets another CPU
# count; VM_REBOOT=1 lets a reboot (a panic with panic=N) reset the guest into KERNEL again, as
# a machine's firmware would, instead of ending qemu; VM_TCG_THREAD=single runs every virtual CPU
# in one host thread (slower, but the kernel patching its own text, as switching a static key
# does, then never traps on int3 under emulation).
vm_boot() {
    local arch=$1 kernel=$2 initrd=$3 out_dir=$4 serial=$5 timeout_s=$6 machine console
    shift 6
    case "$arch" in
        x86_64) machine=(qemu-system-x86_64 -cpu "${RTSOAK_VM_CPU:-max}") console=ttyS0 ;;
        aarch64) machine=(qemu-system-aarch64 -M virt -cpu "${RTSOAK_VM_CPU:-cortex-a76}") console=ttyAMA0 ;;
        *) vm_die "unsupported VM architecture '$arch'" ;;
    esac
    # VM_DISK: a raw disk image to attach as /dev/vda (vm_make_disk_initramfs boots from it).
    local disk=()
    [[ -z ${VM_DISK:-} ]] || disk=(-drive "file=$VM_DISK,format=raw,if=virtio")
    # -nic none: the guest needs no network (files come back over 9p), and qemu's default NIC
    # needs a boot ROM (efi-virtio.rom, from ipxe-qemu) that a host with only
    # qemu-system-arm installed without recommends does not have.
    local reboot=(-no-reboot)
    [[ -z ${VM_REBOOT:-} ]] || reboot=()
    timeout --kill-after=10 "$timeout_s" "${machine[@]}" \
        -accel "tcg,thread=${VM_TCG_THREAD:-multi}" -smp "${VM_SMP:-6}" -m 1024 -nographic "${reboot[@]}" -nic none "${disk[@]}" \
        -kernel "$kernel" -initrd "$initrd" \
        -virtfs "local,path=$out_dir,mount_tag=out,security_model=none,id=out" \
        -append "console=$console quiet panic=-1 $*" \
        </dev/null >"$serial" 2>&1
}
