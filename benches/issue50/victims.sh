#!/bin/bash
# Usage (root, under the machine lock): flock -o /tmp/pw-live.lock bash benches/issue50/victims.sh BIN...;
# then python3 benches/issue50/victims.py /tmp/victims.
# One answer across views: for each binary, plain batch (JSON) and the screen in the processes
# view (160x48, `--listen`, whose /metrics comes from the same step) start together; a
# 4 KiB write + fsync loop runs every 100 ms from the start; after IDLE_S (40) of that alone,
# two buffered fio writers flood for 40 s (vm.dirty_bytes 64M / background 32M, put back at the
# end). Every second the screens' victim lines are scraped; victims.py compares each screen with
# its batch, second by second.
set -u
O=${OUT:-/tmp/victims}; D=/var/tmp/pwvict; IDLE_S=${IDLE_S:-40}
rm -rf $O; mkdir -p $O $D
old=$(sysctl -n vm.dirty_bytes vm.dirty_background_bytes vm.dirty_ratio vm.dirty_background_ratio | tr '\n' ' ')
restore() {
  set -- $old
  if [ "$1" != 0 ]; then sysctl -q vm.dirty_bytes=$1; else sysctl -q vm.dirty_ratio=$3; fi
  if [ "$2" != 0 ]; then sysctl -q vm.dirty_background_bytes=$2; else sysctl -q vm.dirty_background_ratio=$4; fi
  tmux -L vict kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf $D
}
trap restore EXIT
sysctl -q vm.dirty_bytes=67108864 vm.dirty_background_bytes=33554432
total=$((IDLE_S + 45))
python3 -c '
import os,sys,time
fd=os.open("/var/tmp/pwvict/loop.dat",os.O_WRONLY|os.O_CREAT,0o644)
end=time.time()+float(sys.argv[1])
while time.time()<end:
    os.pwrite(fd,b"x"*4096,0); os.fsync(fd); time.sleep(0.1)
' $total &
i=0
for bin in "$@"; do
  port=$((7480 + i))
  echo "$bin $port" >> $O/bins
  $bin --no-config --batch --format json -i 1 -n $total > $O/batch$i.json 2> $O/batch$i.err &
  tmux -L vict new-session -d -s s$i -x 160 -y 48 "$bin --no-config --view processes --listen 127.0.0.1:$port"
  i=$((i + 1))
done
date +%s > $O/start
(sleep $IDLE_S; date +%s > $O/load_start
 fio --name=flood --directory=$D --rw=write --bs=1M --size=2G --numjobs=2 --ioengine=psync \
     --runtime=40 --time_based --output=$O/fio.txt) &
for t in $(seq 1 $total); do
  sleep 1
  for j in $(seq 0 $((i - 1))); do
    echo "=== $(date +%s.%N)" >> $O/metrics$j.txt
    curl -s --max-time 0.5 http://127.0.0.1:$((7480 + j))/metrics | grep -E '^pagewatch_victim|^pagewatch_culprit' >> $O/metrics$j.txt
  done
done
wait
echo done
