# Run inside the kernel lab's guest (assets/lab/boot.sh SUITE assets/lab/scope.sh, with
# LAB_EXTRA="unshare setpriv": busybox's unshare has no --cgroup) by tests/lab_scope.rs (issue 54): a
# group /box with memory.max 256M, a dd rewriting 1 GiB buffered in it, and pagewatch run
# in /box in its own cgroup namespace (`unshare --cgroup`, the cgroup2 mount left as it is),
# then from the root group with `--cgroup /box`, then as uid 1000 in /box, then the kernel's
# own wb_stats (6.10+), then from the root group again once the writer has stopped (`still`).
# Each section starts with a line `== NAME`.
cg=/sys/fs/cgroup
vda=$(cat /sys/block/vda/dev)
echo "== kernel $(uname -r)"
echo "+memory +io" > $cg/cgroup.subtree_control
mkdir $cg/box && echo 256M > $cg/box/memory.max
echo "== box-ino $(ls -id $cg/box | awk '{print $1}') $vda"
rm -f /tmp/stop-writer
sh -c "echo \$\$ > $cg/box/cgroup.procs
  while [ ! -e /tmp/stop-writer ]; do
    dd if=/dev/zero of=/mnt/big bs=1M count=1024 conv=notrunc 2>/dev/null
  done" &
writer=$!
# Sampled once /box is at 90 % of its limit, where the writer is paced by its own domain; up
# to 60 s.
for i in $(seq 1 240); do
  [ "$(cat $cg/box/memory.current)" -ge 241591910 ] && break
  sleep 0.25
done
echo "== inside-facts"
sh -c "echo \$\$ > $cg/box/cgroup.procs
  exec /usr/bin/unshare --cgroup sh -c 'cat /proc/self/cgroup; grep cgroup2 /proc/self/mountinfo'"
echo "== inside"
sh -c "echo \$\$ > $cg/box/cgroup.procs
  exec /usr/bin/unshare --cgroup pagewatch --batch --format json --count 6 --interval 0.5" | grep '^{'
echo "== host"
pagewatch --batch --format json --count 6 --interval 0.5 --cgroup /box | grep '^{'
# As uid 1000 in /box and its own cgroup namespace: cgroupfs files are world-readable,
# debugfs and tracefs are not.
echo "== nonroot"
sh -c "echo \$\$ > $cg/box/cgroup.procs
  exec /usr/bin/unshare --cgroup /usr/bin/setpriv --reuid 1000 --regid 1000 --clear-groups \
    env HOME=/tmp pagewatch --batch --format json --count 4 --interval 0.5" | grep '^{'
# The static binary (LAB_STATIC) alone in an empty root, /proc and /sys bind-mounted read-only
# (and the cgroup2 and debugfs mounts under it), in /box and its own cgroup namespace.
if [ -x /static/pagewatch ]; then
  e=/tmp/empty
  mkdir -p $e/proc $e/sys
  cp /static/pagewatch $e/pagewatch
  mount --bind /proc $e/proc && mount -o remount,bind,ro $e/proc
  mount --bind /sys $e/sys && mount -o remount,bind,ro $e/sys
  mount --bind $cg $e$cg && mount -o remount,bind,ro $e$cg
  mount --bind /sys/kernel/debug $e/sys/kernel/debug 2>/dev/null \
    && mount -o remount,bind,ro $e/sys/kernel/debug
  echo "== empty-root-files"
  ls -A $e
  echo "== empty-root"
  sh -c "echo \$\$ > $cg/box/cgroup.procs
    exec /usr/bin/unshare --cgroup chroot $e /pagewatch --batch --format json --count 4 --interval 0.5" | grep '^{'
  umount $e/sys/kernel/debug 2>/dev/null; umount $e$cg $e/sys $e/proc
fi
echo "== wb_stats"
cat /sys/kernel/debug/bdi/$vda/wb_stats 2>/dev/null
touch /tmp/stop-writer; wait $writer 2>/dev/null; sync
# The writer stopped and its pages clean: /box's counters hold still, so pagewatch and the
# kernel's wb_stats read the same inputs (while it writes, memory.current moves by tens of
# pages between two reads; see scope-skew.sh).
sleep 1
echo "== still"
pagewatch --batch --format json --count 4 --interval 0.5 --cgroup /box | grep '^{'
rm -f /mnt/big
echo "== end"
