#!/bin/bash
# loops100.sh BIN: 100 loop devices on 64 MiB sparse files in /dev/shm (removed after); the default
# screen and the processes view against htop -d 10, 3 rounds each, at the machine's own count.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1
: > /tmp/cost/loops.txt
cleanup() { while read l; do losetup -d $l; done < /tmp/cost/loops.txt; rm -f /dev/shm/pw-cost-loop-*.img; }
trap cleanup EXIT
for i in $(seq 1 100); do f=/dev/shm/pw-cost-loop-$i.img; truncate -s 64M $f; losetup -f --show $f >> /tmp/cost/loops.txt; done
echo "loops $(wc -l < /tmp/cost/loops.txt) block devices $(ls /sys/block | wc -l) $(date -u +%T)"
cd "$HERE/../.."
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config ";;" htop -d 10
date -u +%T
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config --view processes ";;" htop -d 10
date -u +%T
