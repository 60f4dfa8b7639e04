#!/usr/bin/env bash
# Builds the one file to copy onto any x86_64 Linux server (kernel 4.x or later, any libc or
# none): pagewatch with glibc linked in statically (x86_64-unknown-linux-gnu and
# `-C target-feature=+crt-static`), profile `dist` (stripped, LTO). Prints where it is, its
# size and the time the build took, and fails when the file is over the size budget
# (PW_SIZE_BUDGET_MB, default 8; docs/REFERENCE.md states it) or is not static after all.
# musl would be the usual way, but its target cannot be fetched on the build machines here; the
# gnu target needs nothing more than the toolchain, and pagewatch never calls the parts of
# static glibc that load shared objects at run time (NSS name lookups, iconv): see the link
# warnings check below. Extra arguments go to cargo build.
set -euo pipefail
cd "$(dirname "$0")/.."
budget_mb=${PW_SIZE_BUDGET_MB:-8}
triple=x86_64-unknown-linux-gnu
dir=${CARGO_TARGET_DIR:-target}/$triple/dist
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# --target keeps RUSTFLAGS off build scripts and proc macros (which must stay dynamic) and
# puts the result beside, not over, the ordinary builds. The final link goes through GNU ld
# (rustc's default, lld, drops glibc's link-time warnings) with -W linker-messages (rustc
# hides the linker's stderr by default), for the check below; only the binary's own crate
# gets those flags, so changing them rebuilds nothing else.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -W linker-messages" \
  cargo rustc --locked --profile dist --target "$triple" --bin pagewatch "$@" \
  -- -C link-arg=-fuse-ld=bfd 2>&1 | tee "$log"
secs=$(($(date +%s) - start))
bin=$dir/pagewatch
# glibc warns at link time when a static program uses a function that needs shared objects at
# run time (getpwnam, getaddrinfo, dlopen...): such a call would fail on the server.
if grep -i "statically linked applications requires at runtime" "$log"; then
  echo "static.sh: the binary calls glibc functions that need shared libraries at run time" >&2
  # Removed, so the next run links again (and warns again) rather than finding it fresh.
  rm -f "$bin"
  exit 1
fi
if readelf -lW "$bin" | grep -q INTERP || readelf -dW "$bin" | grep -q NEEDED; then
  echo "static.sh: $bin is linked dynamically" >&2
  readelf -dW "$bin" | grep NEEDED >&2 || true
  exit 1
fi
size=$(stat -c %s "$bin")
budget=$((budget_mb * 1024 * 1024))
echo "static.sh: $bin: $("$bin" --version)"
echo "static.sh: $size bytes ($((size * 100 / 1048576 / 100)).$(printf %02d $((size * 100 / 1048576 % 100))) MiB), budget $budget_mb MiB; built in ${secs} s"
if [ "$size" -gt "$budget" ]; then
  echo "static.sh: over the budget of $budget_mb MiB by $((size - budget)) bytes" >&2
  exit 1
fi
