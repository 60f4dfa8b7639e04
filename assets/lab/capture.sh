# Run inside the kernel lab's guest (assets/lab/boot.sh SUITE assets/lab/capture.sh): captures
# a tree of 4 roots, 1 s apart, of the files pagewatch reads, while a buffered dd writes to the
# ext4 disk and `pagewatch eat 300M` holds memory, and prints it as a base64 tar between
# `== tree` and `== end`. The same files and order as assets/capture-tree.sh (bash, which the
# guest lacks). assets/lab/README.md says how the trees under assets/trees/ were made with it.
# With MEMCG=1 (assets/lab/capture-memcg.sh) the writer runs instead in a cgroup `box` with
# memory.max 300M (nothing eaten). Every root also gets the cgroup v2 files pagewatch reads
# (each group's inode in `cgroup.ino`, as the copy's own inodes differ), the BDI limits and,
# where debugfs has it, wb_stats.
t=/tmp/tree
mkdir -p $t
getconf PAGESIZE > $t/page_size 2>/dev/null || echo 4096 > $t/page_size
cg=/sys/fs/cgroup
if [ "${MEMCG:-0}" = 1 ]; then
  echo "+memory +io" > $cg/cgroup.subtree_control
  mkdir -p $cg/box && echo 300M > $cg/box/memory.max
  sh -c "echo \$\$ > $cg/box/cgroup.procs; exec dd if=/dev/zero of=/mnt/load bs=1M count=1500 2>/dev/null" &
  writer=$!
  eater=
else
  pagewatch eat 300M > /tmp/eat.log 2>&1 < /dev/null &
  eater=$!
  for i in $(seq 1 100); do grep -q holding /tmp/eat.log && break; sleep 0.1; done
  dd if=/dev/zero of=/mnt/load bs=1M count=600 2>/dev/null &
  writer=$!
fi
sleep 2
# The cgroup, BDI and wb_stats files of one root ($1).
cgroup_files() {
  [ -f $cg/cgroup.controllers ] || return 0
  for d in $(find $cg -type d); do
    o=$1/sys/fs/cgroup${d#$cg}
    mkdir -p $o
    ls -id $d | awk '{print $1}' > $o/cgroup.ino
    for f in cgroup.controllers memory.current memory.max memory.high memory.stat memory.events \
      memory.pressure io.pressure io.stat; do
      [ -f $d/$f ] && cat $d/$f > $o/$f
    done
  done
  for b in /sys/class/bdi/*; do
    o=$1/sys/class/bdi/${b##*/}
    mkdir -p $o
    for f in min_ratio max_ratio max_ratio_fine max_bytes strict_limit; do
      [ -f $b/$f ] && cat $b/$f > $o/$f
    done
  done
  for w in /sys/kernel/debug/bdi/*/wb_stats; do
    [ -f $w ] || continue
    o=$1/sys/kernel/debug/bdi/$(basename $(dirname $w))
    mkdir -p $o && cat $w > $o/wb_stats
  done
}
for n in 000 001 002 003; do
  r=$t/$n
  mkdir -p $r/proc/sys/vm $r/proc/pressure
  cat /proc/uptime > $r/proc/uptime; cat /proc/diskstats > $r/proc/diskstats
  # meminfo and vmstat in one read, as the kernel's thresholds and MemAvailable need them
  # from the same instant (vmstat starts with nr_free_pages).
  cat /proc/meminfo /proc/vmstat > /tmp/mv
  sed '/^nr_free_pages /,$d' /tmp/mv > $r/proc/meminfo
  sed -n '/^nr_free_pages /,$p' /tmp/mv > $r/proc/vmstat
  for f in zoneinfo stat; do cat /proc/$f > $r/proc/$f; done
  for k in dirty_ratio dirty_background_ratio dirty_bytes dirty_background_bytes \
    dirty_expire_centisecs dirty_writeback_centisecs min_free_kbytes watermark_scale_factor swappiness; do
    cat /proc/sys/vm/$k > $r/proc/sys/vm/$k
  done
  for p in cpu memory io; do cat /proc/pressure/$p > $r/proc/pressure/$p 2>/dev/null; done
  for d in /sys/block/*; do
    dev=${d##*/}
    mkdir -p $r/sys/block/$dev/queue
    for q in rotational scheduler nr_requests write_cache; do
      cat $d/queue/$q > $r/sys/block/$dev/queue/$q 2>/dev/null || rm -f $r/sys/block/$dev/queue/$q
    done
  done
  cgroup_files $r
  sleep 1
done
kill $writer $eater 2>/dev/null
echo "== tree"
tar -C $t -czf - . | base64
echo "== end"
