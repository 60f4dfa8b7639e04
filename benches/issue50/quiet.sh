#!/bin/bash
# Issue 50's "an idle minute and a cargo build: no false alarm and no false warning": one
# `--batch --format json` through IDLE_S (default 60) seconds of idle, a full debug `cargo
# build` of a fresh clone of this repository (its own target directory, so every crate
# compiles), and 20 s after; then benches/issue50/quiet.py lists every record that raised
# anything, by phase. Run on a quiet machine, under the live lock:
#   flock -o /tmp/pw-live.lock bash benches/issue50/quiet.sh
set -eu
cd "$(git rev-parse --show-toplevel)"
BIN=${PAGEWATCH_BIN:-target/release/pagewatch}
OUT=$(mktemp -d /var/tmp/pw-quiet.XXXXXX)
trap 'kill $PW 2>/dev/null || true; rm -rf "$OUT/src" "$OUT/target"' EXIT
"$BIN" --batch --format json -i 1 > "$OUT/batch.json" 2> "$OUT/batch.err" &
PW=$!
sleep "${IDLE_S:-60}"
date +%s > "$OUT/build_start"
git clone -q . "$OUT/src"
(cd "$OUT/src" && CARGO_TARGET_DIR="$OUT/target" cargo build -q 2>&1 | tail -3)
date +%s > "$OUT/build_end"
sleep 20
kill $PW; wait $PW 2>/dev/null || true
python3 benches/issue50/quiet.py "$OUT"
echo "records kept in $OUT/batch.json"
