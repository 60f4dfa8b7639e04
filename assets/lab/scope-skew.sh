# The measurement behind tests/common/lab_scope.rs's SKEW_PAGES (issue 54), run by hand:
#   flock -o /tmp/pw-lab.lock env PAGEWATCH_BIN=target/debug/pagewatch \
#     assets/lab/boot.sh trixie assets/lab/scope-skew.sh
# Where the memcg domain's derived threshold (spec §1.8) and the kernel's WbDirtyThresh part:
# /box with memory.max 256M and a dd rewriting 1 GiB buffered in it, as scope.sh; then, while
# it writes and again once it has stopped and its pages are clean, triples read back to back:
# /box's file pages (memory.stat active_file + inactive_file, pages) and memory.current, the
# kernel's WbDirtyThresh for /box (debugfs wb_stats, kB), the same two again. Derive the
# threshold from each side (819·(filepages + 65536 − current/4096)/4096 at ratio 20) and place
# the kernel's figure between them or not.
# Each section starts with a line `== NAME`; a triple is `filepages current kB filepages current`.
cg=/sys/fs/cgroup
vda=$(cat /sys/block/vda/dev)
echo "== kernel $(uname -r)"
echo "== ratios $(cat /proc/sys/vm/dirty_ratio) $(cat /proc/sys/vm/dirty_background_ratio) $(cat /proc/sys/vm/dirty_bytes)"
echo "+memory +io" > $cg/cgroup.subtree_control
mkdir $cg/box && echo 256M > $cg/box/memory.max
ino=$(ls -id $cg/box | awk '{print $1}')
rm -f /tmp/stop-writer
sh -c "echo \$\$ > $cg/box/cgroup.procs
  while [ ! -e /tmp/stop-writer ]; do
    dd if=/dev/zero of=/mnt/big bs=1M count=1024 conv=notrunc 2>/dev/null
  done" &
writer=$!
for i in $(seq 1 240); do
  [ "$(cat $cg/box/memory.current)" -ge 241591910 ] && break
  sleep 0.25
done
side() {
  awk '/^active_file /{a=$2} /^inactive_file /{i=$2} END{printf "%d ", (a+i)/4096}' $cg/box/memory.stat
  cat $cg/box/memory.current
}
kernel() {
  awk -v ino="$ino" '/^WbCgIno:/{c=$2} /^WbDirtyThresh:/ && c==ino {print $2}' \
    /sys/kernel/debug/bdi/$vda/wb_stats
}
triples() {
  for i in $(seq 1 "$1"); do
    echo "$(side) $(kernel) $(side)"
  done
}
echo "== writing"
triples 30
touch /tmp/stop-writer; wait $writer 2>/dev/null; sync
sleep 1
echo "== stopped"
triples 10
rm -f /mnt/big
echo "== end"
