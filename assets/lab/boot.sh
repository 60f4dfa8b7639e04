#!/bin/sh
# The kernel lab: boots a Debian cloud kernel (SUITE: bullseye 5.10, bookworm 6.1, trixie 6.12)
# under qemu (TCG) with a busybox initramfs holding pagewatch, iostat and their libraries, an
# ext4 disk image of its own on virtio (/dev/vda, mounted on /mnt), runs SCRIPT as root inside
# with cgroup2, debugfs and tracefs mounted, and prints what SCRIPT printed, between two marker lines
# the caller looks for. Never touches a real block device; the disk image is a file in a
# temporary directory, removed at the end. Environment: PAGEWATCH_BIN (the binary to copy in),
# PAGEWATCH_LAB_CACHE (where kernels are cached), LAB_MEM (MiB, default 1024), LAB_TIMEOUT
# (seconds, default 300; tests/common/lab.rs boots one guest at a time, 52 s under TCG on two
# cores, and boots once more a guest that hangs, soft-locks up or panics before its end),
# LAB_DISK (the image's size, default 2G: sparse), LAB_KEEP (a directory to copy the disk image to, for the caller),
# LAB_BARE (set: copy in PAGEWATCH_BIN alone, without its libraries or iostat), LAB_EXTRA (more
# host programs to copy in with their libraries, by name: `unshare`), LAB_STATIC (a static
# pagewatch, copied to /static/pagewatch), LAB_NUMA (set: two NUMA nodes of half the memory and
# one vCPU each).
set -eu
suite=$1
script=$2
here=$(cd "$(dirname "$0")" && pwd)
k=$("$here/fetch-kernel.sh" "$suite")
bin=${PAGEWATCH_BIN:?PAGEWATCH_BIN must name the pagewatch binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
r=$work/root
mkdir -p "$r/bin" "$r/sbin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/mnt" "$r/mods" "$r/run" "$r/etc"
cp /usr/bin/busybox "$r/bin/busybox"
# A program and the shared libraries it loads, at their own paths.
put() {
  cp "$1" "$r/bin/"
  for lib in $(ldd "$1" | awk '$2 == "=>" {print $3} $1 ~ /^\// {print $1}'); do
    [ -f "$lib" ] && mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib"
  done
}
if [ -n "${LAB_BARE:-}" ]; then
  # The bare guest (tests/static_build.rs): the binary alone, no library, no other tool but
  # the static busybox; a binary that needs shared libraries cannot start there.
  cp "$bin" "$r/bin/"
else
  put "$bin"
  put "$(command -v iostat)"
  # More host tools with their libraries (LAB_EXTRA="unshare": util-linux's, with --cgroup).
  # A static pagewatch beside the dynamic one (LAB_STATIC: its path), for an empty root.
  if [ -n "${LAB_STATIC:-}" ]; then mkdir -p "$r/static" && cp "$LAB_STATIC" "$r/static/pagewatch"; fi
  # In /usr/bin: busybox --install -s /bin would put its own in their place.
  mkdir -p "$r/usr/bin"
  for tool in ${LAB_EXTRA:-}; do
    put "$(command -v "$tool")"
    mv "$r/bin/$tool" "$r/usr/bin/$tool"
  done
  cp "$here/../capture-tree.sh" "$r/bin/capture-tree.sh" 2>/dev/null || true
  cp "$here/capture.sh" "$r/bin/capture.sh"
fi
# virtio for the disk; on 6.12 only virtio_blk is a module (compressed with xz).
modules=$(find "$k" -path '*/kernel/drivers/*' \( -name 'virtio.ko*' -o -name 'virtio_ring.ko*' \
  -o -name 'virtio_pci_modern_dev.ko*' -o -name 'virtio_pci_legacy_dev.ko*' -o -name 'virtio_pci.ko*' \
  -o -name 'virtio_blk.ko*' \))
n=0
for name in virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk; do
  f=$(echo "$modules" | grep "/$name\.ko" | head -n 1 || true)
  [ -n "$f" ] || continue
  n=$((n + 1))
  case "$f" in
    *.xz) xz -dc "$f" > "$r/mods/$n-$name.ko" ;;
    *) cp "$f" "$r/mods/$n-$name.ko" ;;
  esac
done
cp "$script" "$r/test.sh"
cat > "$r/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
for m in /mods/*.ko; do insmod "$m" 2>/dev/null; done
for i in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 0.2; done
mount -t ext4 /dev/vda /mnt || echo "lab: no /dev/vda"
echo "==PW-LAB-BEGIN=="
cd /tmp && sh /test.sh 2>&1
echo "==PW-LAB-END=="
sync
umount /mnt 2>/dev/null
poweroff -f
INIT
chmod +x "$r/init"
(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd"
truncate -s "${LAB_DISK:-2G}" "$work/disk.img"
mkfs.ext4 -q -F "$work/disk.img"
vmlinuz=$(ls "$k"/boot/vmlinuz-*)
# LAB_NUMA (set): two NUMA nodes, each half the memory and one vCPU (spec §12 checks).
numa=""
if [ -n "${LAB_NUMA:-}" ]; then
  half=$(( ${LAB_MEM:-1024} / 2 ))
  numa="-object memory-backend-ram,id=m0,size=${half}M -object memory-backend-ram,id=m1,size=${half}M
    -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1"
fi
# shellcheck disable=SC2086 # $numa is a list of arguments
timeout "${LAB_TIMEOUT:-300}" qemu-system-x86_64 -nographic -no-reboot -m "${LAB_MEM:-1024}" -smp 2 $numa \
  -kernel "$vmlinuz" -initrd "$work/initrd" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 cgroup_no_v1=all" \
  -drive "file=$work/disk.img,format=raw,if=virtio" </dev/null
if [ -n "${LAB_KEEP:-}" ]; then cp "$work/disk.img" "$LAB_KEEP/disk.img"; fi
