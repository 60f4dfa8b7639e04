#!/bin/bash
# procs10k.sh BIN: starts idle `sleep` processes until /proc lists ~10,000, measures the processes
# view and the default screen against htop -d 10 (3 rounds each), and kills the sleeps.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/cost
BIN=$1
N=$(( 10000 - $(ls /proc | grep -c '^[0-9]') ))
: > /tmp/cost/sleeps.pids
trap 'xargs -r kill < /tmp/cost/sleeps.pids 2>/dev/null' EXIT
for i in $(seq 1 $N); do sleep 100000 < /dev/null > /dev/null 2>&1 & echo $! >> /tmp/cost/sleeps.pids; done
echo "started $N sleeps; /proc lists $(ls /proc | grep -c '^[0-9]') $(date -u +%T)"
cd "$HERE/../.."
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config --view processes ";;" htop -d 10
date -u +%T
PW_ROUNDS=3 PW_WARMUP=20 python3 benches/side_by_side.py 60 $BIN --no-config ";;" htop -d 10
date -u +%T
