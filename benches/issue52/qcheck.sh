#!/bin/bash
# qcheck.sh BIN: fio randread at 5k IOPS on a loop device over a file in /dev/shm; the batch JSON of
# BIN --latency LOOP without and with --queue-time: what each says about queue time.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1
IMG=/dev/shm/pw-cost-q.img
truncate -s 256M $IMG
LOOP=$(losetup -f --show $IMG); L=$(basename $LOOP)
trap 'losetup -d $LOOP; rm -f $IMG' EXIT
fio --name=rr --filename=$LOOP --rw=randread --bs=4k --ioengine=libaio --iodepth=4 --direct=1 --rate_iops=5000 --time_based --runtime=20 > /dev/null 2>&1 &
F=$!
sleep 1
for q in "" "--queue-time"; do
  echo "== $BIN --batch --format json -n 4 --latency $L $q"
  $BIN --batch --no-config --format json -n 4 --latency $L $q | python3 -c '
import json,sys
for line in sys.stdin:
    r=json.loads(line)
    for d in r.get("disks",[]):
        if d["name"]=="'$L'" and d.get("lat_events") is not None:
            print(" events",d["lat_events"],"read p50",d["lat_read_p50_ms"],"queue_timed",d.get("lat_queue_timed"),"queue p50",d["queue_p50_ms"],"queue_hist",d["queue_hist"])'
  echo "== batch text, --queue-time '$q'"
  $BIN --batch --no-config -n 3 --latency $L $q | grep "latency $L" | tail -1
done
wait $F
