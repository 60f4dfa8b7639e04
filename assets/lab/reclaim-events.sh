#!/bin/sh
# Lab check (boot.sh SUITE assets/lab/reclaim-events.sh): the vmscan reclaim tracepoints the
# reclaim tracer enables (parse::reclaim_trace::EVENTS, spec §3.3) and their fields on this
# kernel. Reads tracefs only.
t=/sys/kernel/tracing
[ -d $t/events ] || t=/sys/kernel/debug/tracing
uname -r
for e in mm_vmscan_direct_reclaim_begin mm_vmscan_direct_reclaim_end \
  mm_vmscan_memcg_reclaim_begin mm_vmscan_memcg_reclaim_end; do
  f=$t/events/vmscan/$e/format
  if [ -f $f ]; then
    echo "$e: $(grep -v common_ $f | grep 'field:' | sed 's/^[[:space:]]*field://; s/;[[:space:]]*offset:/ @/; s/;.*//' | tr '\n' ',')"
  else
    echo "$e: missing"
  fi
done
