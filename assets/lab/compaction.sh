# Run inside a guest (assets/lab/boot.sh, 1 GiB) by tests/lab_compaction.rs (spec §13): memory
# fragmented by page cache (two 234 MiB files written a page at a time in turns, one removed),
# THP `enabled` and `defrag` at `always`, then `pagewatch eat 360M`, whose huge-page faults
# reclaim the cache and compact directly. `pagewatch --batch --format json -i 1` runs across
# it; `/proc/vmstat`'s compaction counters are read after its first record and once the eater
# holds, and the pagewatch run goes on two more records before it is stopped. With
# `kernel.task_delayacct` on, the eater paced and read by pagewatch before it runs, its
# compaction delay is checked too (spec §13.1). Sections start with `== NAME`.
echo "== kernel $(uname -r)"
thp=/sys/kernel/mm/transparent_hugepage
echo always > $thp/enabled; echo always > $thp/defrag
echo "== thp"; cat $thp/enabled $thp/defrag
# One writer filling two files a page at a time, in turns, then one file removed: every
# other page of the cache's blocks is free, so no huge page is free whole and each THP fault
# must compact (a single 640 MiB file left whole blocks to reclaim: 1 compact stall; two dd
# writers at once took their pages in runs of whole blocks: none). Proactive compaction off,
# so kcompactd does not mend it first.
echo 0 > /proc/sys/vm/compaction_proactiveness
awk 'BEGIN { p = sprintf("%4096s", ""); for (i = 0; i < 60000; i++) { printf "%s", p > "/mnt/a"; fflush("/mnt/a"); printf "%s", p > "/mnt/b"; fflush("/mnt/b") } }'
sync; rm /mnt/b
echo "== files"; ls -l /mnt
echo "== meminfo_before"; grep -E '^(MemFree|Cached|MemAvailable):' /proc/meminfo
# Delay accounting on before pagewatch and the eater start (spec §13.1: a task forked while
# it is off never counts): pagewatch reads the eater's compaction delay by taskstats.
echo 1 > /proc/sys/kernel/task_delayacct
echo "== delayacct"; cat /proc/sys/kernel/task_delayacct
pagewatch --batch --format json -i 1 --no-config > /tmp/pw.json 2>/dev/null &
pw=$!
lines() { wc -l < /tmp/pw.json; }
i=0
while [ "$(lines)" -lt 1 ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
echo "== before"; grep -E '^(compact_stall|compact_fail|compact_success|thp_fault_alloc|thp_fault_fallback) ' /proc/vmstat
# The eater starts stopped (the shell stops itself, then execs it under the same pid), and a
# direct-IO read of the disk (no page cache: the fragmentation stays) keeps it busy until the
# eater holds, so pagewatch walks throughout, lists the eater and reads its delays twice
# before it faults a page: its
# first compactions are then in a rate (left to the eater's own pressure to start the walk,
# the first burst of stalls was over before pagewatch had read it).
sh -c 'kill -STOP $$; exec pagewatch eat 360M --no-config' > /tmp/eat.out 2>&1 < /dev/null &
eater=$!
echo "== eater_pid"; echo $eater
# 4 KiB reads: ~500,000 of them, busy past the eater (1 MiB reads had read the whole 2 GiB
# disk before the eater compacted, and the walk lapsed).
dd if=/dev/vda of=/dev/null bs=4k iflag=direct 2>/dev/null &
reader=$!
read_twice() { [ "$(grep -c "{\"pid\":$eater,\"compact_ms_per_s\"" /tmp/pw.json)" -ge 1 ]; }
i=0
while ! read_twice && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
echo "== eater_read_before"; read_twice && echo yes || echo no
# Paced at about a twentieth of its speed (stopped 0.9 s in each 0.95 s): its faults, and so
# its compactions, then span many of pagewatch's 1 s records, past the walk that first lists
# it and the two taskstats reads a rate needs (at full speed they were over in ~3 s, before
# pagewatch had read the eater twice; at a fifth, when compaction failed early and the faults
# fell back, too).
i=0
while ! grep -q '"holding"' /tmp/eat.out && kill -0 $eater 2>/dev/null && [ $i -lt 90 ]; do
  kill -STOP $eater; sleep 0.9; kill -CONT $eater 2>/dev/null; sleep 0.05; i=$((i + 1))
done
kill $reader; wait $reader 2>/dev/null
echo "== after"; grep -E '^(compact_stall|compact_fail|compact_success|thp_fault_alloc|thp_fault_fallback) ' /proc/vmstat
echo "== eat"; tail -n 2 /tmp/eat.out
n=$(lines)
i=0
while [ "$(lines)" -lt $((n + 2)) ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
kill $pw; wait $pw 2>/dev/null
kill $eater; wait $eater 2>/dev/null
echo "== records"; cat /tmp/pw.json
echo "== dmesg"; dmesg | tail -n 20
