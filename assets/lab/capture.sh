# Run inside the kernel lab's guest (assets/lab/boot.sh SUITE assets/lab/capture.sh): captures
# a tree of 4 roots, 1 s apart, of the files pagewatch reads, while a buffered dd writes to the
# ext4 disk and `pagewatch eat 300M` holds memory, and prints it as a base64 tar between
# `== tree` and `== end`. The same files and order as assets/capture-tree.sh (bash, which the
# guest lacks). assets/lab/README.md says how the trees under assets/trees/ were made with it.
t=/tmp/tree
mkdir -p $t
getconf PAGESIZE > $t/page_size 2>/dev/null || echo 4096 > $t/page_size
pagewatch eat 300M > /tmp/eat.log 2>&1 < /dev/null &
eater=$!
for i in $(seq 1 100); do grep -q holding /tmp/eat.log && break; sleep 0.1; done
dd if=/dev/zero of=/mnt/load bs=1M count=600 2>/dev/null &
writer=$!
sleep 1
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
  sleep 1
done
kill $writer $eater 2>/dev/null
echo "== tree"
tar -C $t -czf - . | base64
echo "== end"
