#!/bin/bash
# cgtick.sh [BENCH] [SECS]: what one cold tick of `benches/sample.rs` costs in instructions
# and simulated cache misses (valgrind's callgrind, an 8 MiB last-level cache so that the
# bench's 64 MiB sweep leaves it cold), per call of `App::update` and `Screen::frame` in the
# timed loop. The same binary, inputs and environment give the same counts whatever else the
# machine does, which the bench's times do not on this VM (±20 % between runs). BENCH is
# `tick_cold_idle_160x48_loops100` unless given; SECS (40) is criterion's --profile-time, about
# 350 ticks under valgrind. The averages include the bench's restarts (a whole first frame
# every 150 samples). Needs valgrind; rustix reads the auxiliary vector through libc
# (`use-libc-auxv` in Cargo.toml) so that the binary starts under it.
set -eu
cd "$(dirname "$0")/../.."
name=${1:-tick_cold_idle_160x48_loops100}
secs=${2:-40}
bin=$(cargo bench --bench sample --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "sample":
        print(m["executable"])')
out=$(mktemp /tmp/pw-cgtick.XXXXXX)
trap 'rm -f "$out" "$out.log"' EXIT
valgrind --tool=callgrind --cache-sim=yes --LL=8388608,16,64 \
  --toggle-collect='*App>::update' --toggle-collect='*Screen::frame' \
  --callgrind-out-file="$out" "$bin" --bench --profile-time "$secs" "$name" > "$out.log" 2>&1
callgrind_annotate --tree=calling --inclusive=yes "$out" 2>/dev/null |
  grep -A4 '\*  .*benches/sample.rs:criterion::bencher::Bencher<M>::iter_custom' |
  python3 -c 'import re, sys
for l in sys.stdin:
    m = re.match(r"\s*(.*?)\s+>\s+.*\((\d+)x\)", l)
    if not m:
        continue
    n = [int(x.replace(",", "")) for x in re.findall(r"([\d,]+) \(", m.group(1))]
    calls = int(m.group(2))
    what = "frame " if "Screen::frame" in l else "update"
    print(f"{what} {calls} calls: {n[0] / calls:,.0f} instructions, {n[4] / calls:,.0f} L1 read "
          f"misses, {n[7] / calls:,.0f} last-level read misses, {n[8] / calls:,.0f} write misses")'
