#!/bin/bash
# ab.sh ROUNDS SECS "ARGS" BIN...: windows of one pagewatch at a time (each BIN in turn, with
# ARGS) beside `htop -d 10` in 160x48 ptys (`side_by_side.py`, 20 s of warm-up), ROUNDS times;
# prints each window's round, binary, ms/s, htop's ms/s and the ratio. Two builds compared in
# one window read apart by their order (the first started read higher: 1.34 and 1.05 with the
# order swapped, 2026-11-30), so each has windows of its own, alternated.
set -u
ROUNDS=$1 SECS=$2 ARGS=$3
shift 3
cd "$(dirname "$0")/../.."
for r in $(seq 1 "$ROUNDS"); do
  for bin in "$@"; do
    # shellcheck disable=SC2086
    out=$(PW_WARMUP=20 python3 benches/side_by_side.py "$SECS" "$bin" --no-config $ARGS ";;" htop -d 10 2>&1)
    pw=$(echo "$out" | grep "ms/s  rss" | sed -n 1p | awk '{print $1}')
    ht=$(echo "$out" | grep "ms/s  rss" | sed -n 2p | awk '{print $1}')
    echo "$r $bin $pw $ht $(python3 -c "print(round($pw / $ht, 3))")"
  done
done
