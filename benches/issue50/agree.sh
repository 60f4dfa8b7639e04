#!/bin/bash
# Usage (root, under the machine lock): flock -o /tmp/pw-live.lock bash benches/issue50/agree.sh randread|flood;
# then python3 benches/issue50/agree.py /tmp/agree/randread (the second-by-second comparison).
# Issue 50 acceptance: one instance started 10 s before the load, two 20 s into it (shared
# baselines, and no history at all), and the screen at 160x48 and 80x24 started 20 s in.
set -u
LOAD=$1; PW=${PW:-target/debug/pagewatch}; O=${OUT:-/tmp/agree}/$LOAD; D=/var/tmp/pwagree
rm -rf $O; mkdir -p $O $D
restore() { sysctl -q vm.dirty_ratio=20 vm.dirty_background_ratio=10; tmux -L agree kill-server 2>/dev/null; }
trap restore EXIT
if [ $LOAD = randread ]; then
  fio --name=rr --filename=$D/rr.dat --size=4G --rw=randread --create_only=1 --output=/dev/null
else
  sysctl -q vm.dirty_bytes=67108864 vm.dirty_background_bytes=33554432
fi
$PW --no-config --batch --format json -i 1 -n 80 > $O/early.json 2> $O/early.err &
E=$!
sleep 10
date +%s > $O/load_start
if [ $LOAD = randread ]; then
  fio --name=rr --filename=$D/rr.dat --size=4G --rw=randread --bs=4k --iodepth=64 --ioengine=libaio --direct=1 --runtime=60 --time_based --output=$O/fio.txt &
else
  python3 -c '
import os,time
fd=os.open("/var/tmp/pwagree/loop.dat",os.O_WRONLY|os.O_CREAT,0o644)
end=time.time()+60
while time.time()<end:
    os.pwrite(fd,b"x"*4096,0); os.fsync(fd); time.sleep(0.1)
' &
  fio --name=flood --directory=$D --rw=write --bs=1M --size=2G --numjobs=2 --ioengine=psync --runtime=60 --time_based --output=$O/fio.txt &
fi
sleep 20
date +%s > $O/late_start
$PW --no-config --batch --format json -i 1 -n 45 > $O/late.json 2> $O/late.err &
L=$!
PAGEWATCH_BASELINES=off $PW --no-config --batch --format json -i 1 -n 45 > $O/fresh.json 2> $O/fresh.err &
F=$!
tmux -L agree new-session -d -s big -x 160 -y 48 "$PW --no-config"
tmux -L agree new-session -d -s small -x 80 -y 24 "$PW --no-config"
for i in $(seq 1 42); do
  sleep 1
  t=$(date +%s.%N)
  for s in big small; do echo "=== $t" >> $O/$s.txt; tmux -L agree capture-pane -p -t $s >> $O/$s.txt; done
done
wait $L $F $E
wait
rm -rf $D
echo done
