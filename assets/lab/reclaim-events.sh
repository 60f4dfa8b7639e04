#!/bin/sh
# Lab check (tests/lab_reclaim.rs; by hand: boot.sh SUITE assets/lab/reclaim-events.sh): the
# vmscan reclaim tracepoints the reclaim tracer enables (parse::reclaim_trace::EVENTS, spec
# §3.3), each event's `format` in a section of its own. Reads tracefs only.
t=/sys/kernel/tracing
[ -d $t/events ] || t=/sys/kernel/debug/tracing
echo "== uname"
uname -r
for e in mm_vmscan_direct_reclaim_begin mm_vmscan_direct_reclaim_end \
  mm_vmscan_memcg_reclaim_begin mm_vmscan_memcg_reclaim_end; do
  echo "== vmscan/$e"
  cat $t/events/vmscan/$e/format 2>/dev/null || echo missing
done
