#!/bin/bash
# rss-modes.sh TAG SECS BIN [BIN...]: each BIN in the four live modes at --interval 0.1, each in
# its own detached 160x48 tmux pane, all at once (the screen, --batch, record to a file in
# /var/tmp, serve scraped every 5 s), VmRSS and smaps every 10 s to /tmp/cost/TAG-N-MODE.log
# (rsswatch.py; N counts the BINs from 1). With PW_LATENCY=DEV each also gets --latency DEV,
# beside a fio randread capped at 2,000 IOPS (libaio, depth 4, direct, 4k) on a 256 MiB file
# in /var/tmp; run that under `flock -o /tmp/pw-live.lock`. The files are removed at the end.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=$1; SECS=$2; shift 2
LAT=()
FIO=
files=()
trap '[ -n "$FIO" ] && kill $FIO 2>/dev/null; sleep 1; rm -f "${files[@]}"' EXIT
if [ -n "${PW_LATENCY:-}" ]; then
  LAT=(--latency "$PW_LATENCY")
  files+=(/var/tmp/pw-rss.fio)
  fio --name=r --filename=/var/tmp/pw-rss.fio --size=256M --rw=randread --bs=4k --direct=1 \
    --ioengine=libaio --iodepth=4 --rate_iops=2000 --time_based --runtime=$((SECS + 60)) \
    --output-format=terse > /tmp/cost/$TAG-fio.txt 2>&1 &
  FIO=$!
  sleep 20 # fio lays its file out first
fi
# serve's port: one range a TAG, so that runs side by side do not collide.
n=0; port=$((17000 + $(echo "$TAG" | cksum | cut -d' ' -f1) % 100 * 8))
for bin in "$@"; do
  n=$((n + 1)); port=$((port + 1))
  rec=/var/tmp/pw-rss-$TAG-$n.pwrec; files+=($rec)
  python3 "$HERE/rsswatch.py" $TAG-$n-screen $SECS -- $bin --no-config --interval 0.1 "${LAT[@]}" &
  python3 "$HERE/rsswatch.py" $TAG-$n-batch $SECS -- $bin --no-config --interval 0.1 --batch "${LAT[@]}" &
  python3 "$HERE/rsswatch.py" $TAG-$n-record $SECS -- $bin record $rec --no-config --interval 0.1 "${LAT[@]}" &
  PW_SCRAPE=http://127.0.0.1:$port/metrics python3 "$HERE/rsswatch.py" $TAG-$n-serve $SECS -- \
    $bin serve --listen 127.0.0.1:$port --no-config --interval 0.1 "${LAT[@]}" &
done
wait $(jobs -p | grep -v "^${FIO:-x}$")
