#!/bin/sh
# Fetches one Debian cloud kernel for the kernel lab and prints the directory it is unpacked in
# (vmlinuz, modules under lib/modules/VERSION). SUITE is bullseye (5.10), bookworm (6.1) or
# trixie (6.12). Uses a private apt configuration (its own sources list, lists and cache under
# the cache directory) that points at the Debian mirror this machine's apt already uses; the
# machine's own apt configuration is left alone. Cached: a second run downloads nothing.
set -eu
suite=$1
cache=${PAGEWATCH_LAB_CACHE:-/var/cache/pagewatch-lab}
d=$cache/$suite
mkdir -p "$d/etc" "$d/lists/partial" "$d/cache/archives/partial"
if [ ! -f "$d/kernel.dir" ]; then
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
  [ -n "$mirror" ] || mirror=$(awk '$1=="deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$mirror" ] || { echo "no Debian mirror in this machine's apt sources" >&2; exit 2; }
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$d/etc/sources.list"
  set -- -o Dir::Etc::sourcelist="$d/etc/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o Debug::NoLocking=1 \
    -o APT::Get::List-Cleanup=0 -o Acquire::Languages=none
  apt-get "$@" -qq update >&2
  pkg=$(apt-cache "$@" depends linux-image-cloud-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$pkg" ] || { echo "no cloud kernel package in $suite" >&2; exit 2; }
  rm -rf "$d/x"; mkdir -p "$d/x"
  (cd "$d/cache" && apt-get "$@" -qq download "$pkg" >&2 && dpkg-deb -x "$pkg"_*.deb "$d/x")
  echo "$d/x" > "$d/kernel.dir"
fi
cat "$d/kernel.dir"
