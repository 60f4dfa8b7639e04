# Run inside the kernel lab's guest (assets/lab/boot.sh SUITE assets/lab/thrash.sh) by
# tests/lab_thrash.rs (issue 25 §3): a group capped at 64M re-reading a 160M file thrashes its
# own page cache. Beside it /calm re-reads a 16M file that fits in its own 64M, and /busy
# rewrites 64M (dirty pages, the cgroups view's default order). While they run, `pagewatch
# record` samples without the cgroups view open, as batch mode does; the host reads the raw
# memory.stat of each sample from the recording. The loads run at nice 19 (busybox has
# renice, not nice), so the recorder is not starved of the guest's CPU (a CI run under TCG
# saw its samples 3-4.5 s apart, not 0.5).
# Each section starts with `== NAME`.
cg=/sys/fs/cgroup
echo "== kernel $(uname -r)"
echo "+memory +io" > $cg/cgroup.subtree_control
dd if=/dev/zero of=/mnt/thrash-file bs=1M count=160 2>/dev/null
dd if=/dev/zero of=/mnt/calm-file bs=1M count=16 2>/dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
for g in thrash calm busy; do mkdir $cg/$g; done
echo 64M > $cg/thrash/memory.max
echo 64M > $cg/calm/memory.max
rm -f /tmp/stop-thrash
sh -c "echo \$\$ > $cg/thrash/cgroup.procs; renice 19 -p \$\$ > /dev/null
  while [ ! -e /tmp/stop-thrash ]; do cat /mnt/thrash-file > /dev/null; done" &
sh -c "echo \$\$ > $cg/calm/cgroup.procs; renice 19 -p \$\$ > /dev/null
  while [ ! -e /tmp/stop-thrash ]; do cat /mnt/calm-file > /dev/null; done" &
sh -c "echo \$\$ > $cg/busy/cgroup.procs; renice 19 -p \$\$ > /dev/null
  while [ ! -e /tmp/stop-thrash ]; do
    dd if=/dev/zero of=/mnt/busy-file bs=1M count=64 conv=notrunc 2>/dev/null
  done" &
# Two passes over the file, so the re-reads refault.
sleep 3
echo "== memory.stat"
cat $cg/thrash/memory.stat
pagewatch record /mnt/thrash.pwrec --interval 0.5 --duration 12s > /dev/null 2>&1
echo "== record-exit $?"
touch /tmp/stop-thrash
for j in $(jobs -p); do wait $j 2>/dev/null; done
echo "== replay"
pagewatch replay /mnt/thrash.pwrec --batch --format json
echo "== recording"
base64 /mnt/thrash.pwrec
rm -f /mnt/thrash-file /mnt/calm-file /mnt/busy-file /mnt/thrash.pwrec
echo "== end"
