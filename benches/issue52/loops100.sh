#!/bin/bash
# loops100.sh BIN: 100 loop devices on 64 MiB sparse files in /dev/shm (removed after); the default
# screen and the processes view against htop -d 10, 3 rounds each, at the machine's own count.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1
: > /tmp/cost/loops.txt
# Detached, a loop device stays in /sys/block and /proc/diskstats until LOOP_CTL_REMOVE: the
# ones made here are removed too, or every later measurement would carry 100 idle devices.
cleanup() {
  while read l; do losetup -d $l; done < /tmp/cost/loops.txt
  sed 's|/dev/loop||' /tmp/cost/loops.txt | python3 -c 'import fcntl, os, sys, time
time.sleep(1)  # losetup -d lets go asynchronously
fd = os.open("/dev/loop-control", os.O_RDWR)
for n in sys.stdin.read().split():
    try: fcntl.ioctl(fd, 0x4C81, int(n))
    except OSError as e: print("loop" + n, e, file=sys.stderr)'
  rm -f /dev/shm/pw-cost-loop-*.img
}
trap cleanup EXIT
for i in $(seq 1 100); do f=/dev/shm/pw-cost-loop-$i.img; truncate -s 64M $f; losetup -f --show $f >> /tmp/cost/loops.txt; done
echo "loops $(wc -l < /tmp/cost/loops.txt) block devices $(ls /sys/block | wc -l) $(date -u +%T)"
cd "$HERE/../.."
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config ";;" htop -d 10
date -u +%T
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config --view processes ";;" htop -d 10
date -u +%T
