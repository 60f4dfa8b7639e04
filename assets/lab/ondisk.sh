# Run inside a guest (assets/lab/boot.sh, 1 GiB, /dev/vda an ext4 image file on /mnt) by
# tests/lab_ondisk.rs (issue 53, spec §15.4, §15.5): `/box` with `io.max` capping vda's
# writes at 20 MB/s (wbps=20971520 on vda's MAJ:MIN), a `dd bs=1M` of 200 MB buffered in
# it, with the kernel's own dirty thresholds. `pagewatch --batch --format json -i 1` runs
# across it, as root with debugfs mounted (boot.sh's init mounts it; mounted again here if
# not), so the disk figures are the kernel's `bdi/MAJ:MIN/stats`. A watcher appends, as soon as
# each record appears, `RECORDS DIRTY_KB WRITEBACK_KB` from /proc/meminfo: the kernel's
# figures at that moment. Once dd returned and the next record is out, `sync` runs, timed by
# /proc/uptime. Sections start with `== NAME`.
echo "== kernel"; uname -r
grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
majmin=$(cat /sys/block/vda/dev)
echo "== disk"; echo "$majmin"
echo "== bdi_stats"; cat "/sys/kernel/debug/bdi/$majmin/stats" 2>&1 | head -n 3
echo "+io +memory" > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/box
echo "$majmin wbps=20971520" > /sys/fs/cgroup/box/io.max
echo "== io_max"; cat /sys/fs/cgroup/box/io.max
echo "== thresholds"; cat /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio
pagewatch --batch --format json -i 1 --no-config > /tmp/pw.json 2>/tmp/pw.err &
pw=$!
lines() { wc -l < /tmp/pw.json; }
upt() { cut -d' ' -f1 /proc/uptime; }
# The watcher: the kernel's Dirty and Writeback as each record appears.
(
  seen=0
  while kill -0 $pw 2>/dev/null; do
    n=$(lines)
    if [ "$n" -gt "$seen" ]; then
      echo "$n $(awk '/^Dirty:/ {d = $2} /^Writeback:/ {w = $2} END {print d, w}' /proc/meminfo)"
      seen=$n
    fi
    sleep 0.02
  done
) > /tmp/mem.txt &
i=0
while [ "$(lines)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
echo "== dd"
echo "start $(upt) $(lines)"
sh -c 'echo $$ > /sys/fs/cgroup/box/cgroup.procs; exec dd if=/dev/zero of=/mnt/two-hundred bs=1M count=200 2>&1' | tail -n 1
echo "end $(upt) $(lines)"
# The next record, then sync at once: the eta it printed against the time sync takes.
n=$(lines)
i=0
while [ "$(lines)" -le "$n" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
echo "== sync"
s0=$(upt)
echo "start $s0 $(lines)"
sync
s1=$(upt)
echo "end $s1 $(lines)"
n=$(lines)
i=0
while [ "$(lines)" -lt $((n + 3)) ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill $pw; wait $pw 2>/dev/null
sleep 0.1
echo "== meminfo"; cat /tmp/mem.txt
echo "== records"; cat /tmp/pw.json
echo "== pw_err"; tail -n 5 /tmp/pw.err
