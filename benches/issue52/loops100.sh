#!/bin/bash
# loops100.sh BIN: 100 loop devices (with_loops.sh: removed after); the default screen and the
# processes view against htop -d 10, 3 rounds each, at the machine's own count.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1
cd "$HERE/../.."
# shellcheck disable=SC2016
bash "$HERE/with_loops.sh" bash -c '
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 "$0" --no-config ";;" htop -d 10
date -u +%T
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 "$0" --no-config --view processes ";;" htop -d 10
date -u +%T' "$BIN"
