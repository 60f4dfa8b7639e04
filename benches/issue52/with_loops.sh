#!/bin/bash
# with_loops.sh CMD ARGS...: runs CMD with 100 loop devices on 64 MiB sparse files in /dev/shm,
# then removes them (detached, a loop device stays in /sys/block and /proc/diskstats until
# LOOP_CTL_REMOVE, so every later measurement would carry 100 idle devices). Root.
set -u
list=$(mktemp /tmp/pw-loops.XXXXXX)
cleanup() {
  while read -r l; do losetup -d "$l"; done < "$list"
  sed 's|/dev/loop||' "$list" | python3 -c 'import fcntl, os, sys, time
time.sleep(1)  # losetup -d lets go asynchronously
fd = os.open("/dev/loop-control", os.O_RDWR)
for n in sys.stdin.read().split():
    try: fcntl.ioctl(fd, 0x4C81, int(n))
    except OSError as e: print("loop" + n, e, file=sys.stderr)'
  rm -f /dev/shm/pw-cost-loop-*.img "$list"
}
trap cleanup EXIT
for i in $(seq 1 100); do
  f=/dev/shm/pw-cost-loop-$i.img
  truncate -s 64M "$f"
  losetup -f --show "$f" >> "$list"
done
echo "loops $(wc -l < "$list") block devices $(ls /sys/block | wc -l) $(date -u +%T)"
"$@"
