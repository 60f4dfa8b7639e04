#!/usr/bin/env bash
# Builds the Debian package in target/debian/: the binary, the man pages and the shell
# completions (generated from the CLI definition by `pagewatch __gen`), and the Prometheus
# rules (assets in [package.metadata.deb] of Cargo.toml). Needs cargo-deb
# (`cargo install cargo-deb`). PROFILE=dev packages a debug build (the package test does, to
# reuse the test build); the default is release. Extra arguments go to cargo-deb.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
case "$profile" in
  dev) dir=debug ;;
  *) dir=$profile ;;
esac
target=${CARGO_TARGET_DIR:-target}
cargo build --locked --profile "$profile" --bin pagewatch
rm -rf "$target/$dir/gen"
"$target/$dir/pagewatch" __gen "$target/$dir/gen"
# Debian policy: man pages gzipped (-n: no name or time stamp, so builds are reproducible).
gzip -9n "$target/$dir/gen/man/man1/"*.1
cargo deb --no-build --strip --profile "$profile" "$@"
