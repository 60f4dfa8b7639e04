# Run inside a two-node guest (assets/lab/boot.sh with LAB_NUMA=1) by tests/lab_numa.rs
# (spec §12). Each section starts with `== NAME`.
#
# Part 1, node 0's own figures: a dd bound to node 0 by a cpuset (cpus 0, mems 0) writes 48 MiB
# and ends. The flusher's periodic and expiry writeback are off and 48 MiB is under the
# background threshold, so nothing moves node 0's dirty pages or its file LRU afterwards (a
# 600 MiB writer stopped mid-way left the flusher cleaning and kswapd reclaiming node 0 under
# the checks). Node 0's vmstat is read just before and after a pagewatch record, then what the
# test needs to compute node 0's dirty limit itself (zoneinfo, node 0's vmstat, the sysctls).
#
# Part 2, the spill: a dd on node 0's CPU but free to use both nodes (cpus 0, mems 0-1: a
# binding forbids the spill) writes 1500 MiB with the background threshold raised to 19 %, so
# node 0 passes its own dirty share (20 % of its dirtyable memory) long before the global
# threshold and `node_dirty_ok()` sends its page cache to node 1. Each try: both nodes'
# numastat, a pagewatch record of a 1 s interval, both nodes' numastat again.
node=/sys/devices/system/node
echo "== kernel $(uname -r)"
echo "== nodes"; ls -d $node/node* | wc -l
sysctl -q -w vm.dirty_writeback_centisecs=0 vm.dirty_expire_centisecs=360000
cd /sys/fs/cgroup && echo +cpuset > cgroup.subtree_control && mkdir -p w s \
  && echo 0 > w/cpuset.cpus && echo 0 > w/cpuset.mems && echo 0 > s/cpuset.cpus
cd /
sh -c 'echo $$ > /sys/fs/cgroup/w/cgroup.procs; exec dd if=/dev/zero of=/mnt/f bs=1M count=48' \
  > /dev/null 2>&1
# Node 0's file LRU still moved across the first record once (12 294 → 12 342; the test
# leaves such a try out). Compaction drains every CPU's LRU-add batch (the dd's last pages
# wait there off the LRU counts) and the sleep lets the per-CPU vmstat deltas fold
# (vm.stat_interval, 1 s), so that the tries start from settled counts.
echo 1 > /proc/sys/vm/compact_memory
sleep 2
for try in 1 2 3; do
  echo "== before$try"; grep -E '^(nr_dirty|nr_writeback|nr_(in)?active_file) ' $node/node0/vmstat $node/node1/vmstat
  echo "== sample$try"; pagewatch --batch --format json --count 1 --interval 0.5 | tail -n 1
  echo "== after$try"; grep -E '^(nr_dirty|nr_writeback|nr_(in)?active_file) ' $node/node0/vmstat $node/node1/vmstat
  echo "== state$try"
  cat /proc/zoneinfo $node/node0/vmstat
  echo "dirty_ratio $(cat /proc/sys/vm/dirty_ratio)"; echo "dirty_bytes $(cat /proc/sys/vm/dirty_bytes)"
done
sysctl -q -w vm.dirty_background_ratio=19
sh -c 'echo $$ > /sys/fs/cgroup/s/cgroup.procs; exec dd if=/dev/zero of=/mnt/g bs=1M count=1500' \
  > /dev/null 2>&1 &
writer=$!
for try in 1 2 3 4 5 6; do
  echo "== spill_before$try"; grep -H numa_miss $node/node0/numastat $node/node1/numastat
  echo "== spill_sample$try"; pagewatch --batch --format json --count 1 --interval 1 | tail -n 1
  echo "== spill_after$try"; grep -H numa_miss $node/node0/numastat $node/node1/numastat
done
kill $writer 2>/dev/null; wait $writer 2>/dev/null
