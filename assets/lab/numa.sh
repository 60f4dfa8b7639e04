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
# Part 2, the spill. The ratios go to 40 (node shares) and 39 (background) first, so that the
# flusher stays off while node 0 is past its share and node 1 is not. A dd bound to node 0
# (mems 0: a binding forbids the spill, the allocator's slow path then ignores the share)
# pushes node 0 past its share, 40 % of its dirtyable memory: 42.8k pages in one boot (free
# pages differ between boots: 86k and 106k at part 1), against the ~52k its 48 + 160 MiB make.
# Then a writer on node 0's CPU but free to use both nodes (cpus 0, mems 0-1) dirties 1 MiB
# every 0.25 s: `node_dirty_ok()` refuses node 0, so its page cache goes to node 1 (node 0's
# numa_foreign, node 1's numa_miss). It is paced so that the spill lasts the tries: global
# dirty stays under the background threshold (39 % of ~181k pages, ~70k) for ~18k pages more,
# ~20 s at the ~900 pages/s the writer makes (the six tries take ~9 s), so nothing cleans
# node 0's pages (its margin holds) and nothing throttles the writer. The earlier 1500 MiB dd
# at full speed filled node 1 in about a second, then ran at the disk's pace with both nodes
# at their shares: the verdict read node 1 past its share, or every node, and in one CI try
# the dd dirtied nothing for the whole second (paused in balance_dirty_pages). Each try: both
# nodes' numastat (numa_miss, numa_foreign), a pagewatch record of a 1 s interval, both
# nodes' numastat again.
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
sysctl -q -w vm.dirty_ratio=40 vm.dirty_background_ratio=39
sh -c 'echo $$ > /sys/fs/cgroup/w/cgroup.procs; exec dd if=/dev/zero of=/mnt/h bs=1M count=160' \
  > /dev/null 2>&1
sh -c 'echo $$ > /sys/fs/cgroup/s/cgroup.procs; i=0; while [ $i -lt 600 ]; do
  dd if=/dev/zero of=/mnt/g bs=1M count=1 seek=$i conv=notrunc; i=$((i + 1)); sleep 0.25; done' \
  > /dev/null 2>&1 &
writer=$!
sleep 1
for try in 1 2 3 4 5 6; do
  echo "== spill_before$try"; grep -H -E '^numa_(miss|foreign) ' $node/node0/numastat $node/node1/numastat
  echo "== spill_sample$try"; pagewatch --batch --format json --count 1 --interval 1 | tail -n 1
  echo "== spill_after$try"; grep -H -E '^numa_(miss|foreign) ' $node/node0/numastat $node/node1/numastat
done
kill $writer 2>/dev/null; wait $writer 2>/dev/null
