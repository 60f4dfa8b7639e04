# Run inside a two-node guest (assets/lab/boot.sh with LAB_NUMA=1) by tests/lab_numa.rs
# (spec §12): a dd writer bound to node 0 by a cpuset (cpus 0, mems 0; a binding forbids the
# spill to node 1, so node 0 holds the dirty pages: with cpus 0 alone the page cache went to
# node 1 from the start, node 0 being short of free pages), and while it writes,
# node 0's own vmstat read just before and just after a pagewatch record, the record, and
# what the test needs to compute node 0's dirty limit itself (zoneinfo, both nodes' vmstat,
# the dirty sysctls, read right after the record). Each section starts with `== NAME`.
node=/sys/devices/system/node
echo "== kernel $(uname -r)"
echo "== nodes"; ls -d $node/node* | wc -l
cd /sys/fs/cgroup && echo +cpuset > cgroup.subtree_control && mkdir -p w \
  && echo 0 > w/cpuset.cpus && echo 0 > w/cpuset.mems
cd /
sh -c 'echo $$ > /sys/fs/cgroup/w/cgroup.procs; exec dd if=/dev/zero of=/mnt/f bs=1M count=600' \
  > /dev/null 2>&1 &
writer=$!
sleep 4
# Stopped, so the file LRU stays as it is across each try (the flusher still cleans pages:
# dirty moves to writeback and clean, the LRU does not). It may have ended already (the
# kill's complaint would land in a section).
kill -STOP $writer 2>/dev/null
for try in 1 2 3; do
  echo "== before$try"; grep -E '^(nr_dirty|nr_writeback|numa_miss) ' $node/node0/vmstat $node/node1/vmstat
  echo "== sample$try"; pagewatch --batch --format json --count 1 --interval 0.5 | tail -n 1
  echo "== after$try"; grep -E '^(nr_dirty|nr_writeback|numa_miss) ' $node/node0/vmstat $node/node1/vmstat
  echo "== state$try"
  cat /proc/zoneinfo $node/node0/vmstat
  echo "dirty_ratio $(cat /proc/sys/vm/dirty_ratio)"; echo "dirty_bytes $(cat /proc/sys/vm/dirty_bytes)"
  echo "node1:"; cat $node/node1/vmstat
done
kill -CONT $writer 2>/dev/null; kill $writer 2>/dev/null; wait $writer 2>/dev/null
