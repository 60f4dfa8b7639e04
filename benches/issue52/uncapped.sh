#!/bin/bash
# uncapped.sh BIN ROUNDS: fio randread uncapped (libaio, depth 4, direct, 4k) on a loop device over a
# file in /dev/shm; per round: fio alone (no monitor), then fio beside `BIN --latency LOOP` and
# htop -d 10 (benches/side_by_side.py, 20 s after 5 s). Run under flock -o /tmp/pw-live.lock.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1; ROUNDS=${2:-3}; EXTRA=${3:-}
IMG=/dev/shm/pw-cost-fio.img
truncate -s 1G $IMG
LOOP=$(losetup -f --show $IMG); L=$(basename $LOOP)
trap 'losetup -d $LOOP; rm -f $IMG' EXIT
dd if=/dev/zero of=$LOOP bs=1M count=1024 oflag=direct status=none
fiorun() { fio --name=rr --filename=$LOOP --rw=randread --bs=4k --ioengine=libaio --iodepth=4 --direct=1 --time_based --runtime=$1 --output-format=json $EXTRA 2>/dev/null | python3 "$HERE/iops.py"; }
cd "$HERE/../.."
for r in $(seq 1 $ROUNDS); do
  echo "round $r $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  echo "  fio alone iops $(fiorun 25)"
  fiorun 27 > /tmp/cost/fio-with.txt &
  F=$!
  sleep 0.5
  PW_WARMUP=5 python3 benches/side_by_side.py 20 $BIN --no-config --latency $L ";;" htop -d 10 | sed 's/^/  /'
  wait $F
  echo "  fio with tracer iops $(cat /tmp/cost/fio-with.txt)"
done
