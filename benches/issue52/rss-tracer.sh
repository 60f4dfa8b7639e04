#!/bin/bash
# rss-tracer.sh BIN SECS [BIN2...]: fio randread capped at 20k IOPS on a loop device over a file in
# /dev/shm, beside `BIN --latency LOOP --interval 0.1` in a 160x48 tmux pane (and each BIN2 in one
# of its own, at the same time, for a comparison in the same minutes); VmRSS/VmHWM/smaps every
# 10 s to /tmp/cost/NAME.log (NAME, else rss-tracer; NAME-2, NAME-3... for the others).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1; SECS=$2; shift 2
IMG=/dev/shm/pw-cost-rss.img
truncate -s 1G $IMG
LOOP=$(losetup -f --show $IMG); L=$(basename $LOOP)
trap 'losetup -d $LOOP; rm -f $IMG' EXIT
dd if=/dev/zero of=$LOOP bs=1M count=1024 oflag=direct status=none
fio --name=rr --filename=$LOOP --rw=randread --bs=4k --ioengine=libaio --iodepth=4 --direct=1 --rate_iops=20000 --time_based --runtime=$((SECS+15)) --output-format=terse > /tmp/cost/rss-fio.txt 2>&1 &
F=$!
n=1
for other in "$@"; do
  n=$((n+1))
  python3 "$HERE/rsswatch.py" ${NAME:-rss-tracer}-$n $SECS -- $other --no-config --interval 0.1 --latency $L &
done
python3 "$HERE/rsswatch.py" ${NAME:-rss-tracer} $SECS -- $BIN --no-config --interval 0.1 --latency $L
wait
