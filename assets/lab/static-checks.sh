#!/bin/sh
# Runs in the bare lab guest (boot.sh with LAB_BARE=1, tests/static_build.rs): the static
# pagewatch and busybox, nothing else. Prints the kernel, every shared object or dynamic
# loader on the guest's root file system (none expected), and what pagewatch says.
echo "== kernel $(uname -r)"
echo "== shared-objects"
find / -xdev \( -name '*.so' -o -name '*.so.*' -o -name 'ld-linux*' \) 2>/dev/null
echo "== version"
/bin/pagewatch --version 2>&1
echo "== batch"
/bin/pagewatch --batch --count 2 --format json 2>/tmp/err
echo "== status $?"
echo "== stderr"
cat /tmp/err
