#!/usr/bin/env bash
# capture-tree.sh DEST COUNT INTERVAL
#
# Capture COUNT sample roots of the live /proc + /sys files that pagewatch reads into
# DEST/000, DEST/001, ... (tree-sequence layout, see assets/trees/*/README.md).
# Read-only with respect to the system: it only reads /proc and /sys and writes under DEST.
#
#   DEST      output directory (created; must not already contain 000/)
#   COUNT     number of sample roots (>= 1)
#   INTERVAL  seconds between sample starts (may be fractional, e.g. 1 or 0.5)
#
# Each sample's files are read back-to-back with no sleeps in between. Order inside a sample:
# uptime (the sample timestamp) and diskstats first (they are rated against each other), then
# meminfo + vmstat in a single cat (the dirty-threshold / MemAvailable cross-checks need them
# from the same instant), then zoneinfo, stat, the vm sysctls, PSI, and /sys/block.
# /proc files report st_size 0, so they are copied with cat (cp/rsync may copy 0 bytes).
# /sys/block/<dev> are symlinks on the live system; the tree gets real directories. Single-line
# sysfs attributes are read with the bash builtin `read` (no fork); unreadable ones are omitted.
# Also writes DEST/page_size (getconf PAGESIZE) if absent.
set -u

if [ $# -ne 3 ]; then
    echo "usage: $0 DEST COUNT INTERVAL" >&2
    exit 2
fi
DEST=$1
COUNT=$2
INTERVAL=$3
case $COUNT in ''|*[!0-9]*) echo "COUNT must be a positive integer" >&2; exit 2;; esac
[ "$COUNT" -ge 1 ] || { echo "COUNT must be >= 1" >&2; exit 2; }
if [ -e "$DEST/000" ]; then
    echo "$DEST/000 already exists; refusing to overwrite" >&2
    exit 1
fi
mkdir -p "$DEST" || exit 1

PROC_FILES_FIRST="uptime diskstats"
PROC_FILES_AFTER="zoneinfo stat"
PSI_FILES="cpu memory io"
VM_SYSCTLS="dirty_ratio dirty_background_ratio dirty_bytes dirty_background_bytes \
dirty_expire_centisecs dirty_writeback_centisecs min_free_kbytes watermark_scale_factor swappiness"
QUEUE_FILES="rotational scheduler nr_requests write_cache"

# copy SRC DST: cat SRC into DST; on read failure remove the partial DST and return 1.
copy() {
    if ! cat "$1" >"$2" 2>/dev/null; then
        rm -f "$2"
        return 1
    fi
}

# copy1 SRC DST: single-line sysfs attribute, read with the bash builtin (no fork).
copy1() {
    local line
    if { IFS= read -r line <"$1"; } 2>/dev/null; then
        printf '%s\n' "$line" >"$2"
    else
        return 1
    fi
}

now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }

capture_one() {
    local root=$1 f dev name dirs
    # Pre-create all directories in one call so the reads below run without interleaved mkdirs.
    dirs=("$root/proc/sys/vm")
    [ -d /proc/pressure ] && dirs+=("$root/proc/pressure")
    for dev in /sys/block/*; do
        [ -e "$dev" ] || continue
        name=${dev##*/}
        dirs+=("$root/sys/block/$name/queue")
        [ -r "$dev/dm/name" ] && dirs+=("$root/sys/block/$name/dm")
    done
    mkdir -p "${dirs[@]}" || return 1

    # --- the sample proper: reads back-to-back ---
    T_PROC0=$(now)
    for f in $PROC_FILES_FIRST; do
        copy "/proc/$f" "$root/proc/$f" || echo "warning: cannot read /proc/$f" >&2
    done
    # meminfo + vmstat in ONE cat process, so the two reads are microseconds apart (MemFree
    # and the kernel's nr_dirty_threshold move fast under buffered-write load); split after the
    # fact: every meminfo line contains ':', no vmstat line does.
    if cat /proc/meminfo /proc/vmstat >"$root/proc/.meminfo+vmstat" 2>/dev/null; then
        awk -v mi="$root/proc/meminfo" -v vm="$root/proc/vmstat" \
            'index($0, ":") { print > mi; next } { print > vm }' "$root/proc/.meminfo+vmstat"
        rm -f "$root/proc/.meminfo+vmstat"
    else
        rm -f "$root/proc/.meminfo+vmstat"
        copy /proc/meminfo "$root/proc/meminfo" || echo "warning: cannot read /proc/meminfo" >&2
        copy /proc/vmstat "$root/proc/vmstat" || echo "warning: cannot read /proc/vmstat" >&2
    fi
    for f in $PROC_FILES_AFTER; do
        copy "/proc/$f" "$root/proc/$f" || echo "warning: cannot read /proc/$f" >&2
    done
    for f in $VM_SYSCTLS; do
        copy "/proc/sys/vm/$f" "$root/proc/sys/vm/$f" || echo "warning: cannot read /proc/sys/vm/$f" >&2
    done
    if [ -d /proc/pressure ]; then
        for f in $PSI_FILES; do
            # EOPNOTSUPP (psi disabled) -> file omitted
            copy "/proc/pressure/$f" "$root/proc/pressure/$f"
        done
    fi
    T_PROC1=$(now)
    for dev in /sys/block/*; do
        [ -e "$dev" ] || continue
        name=${dev##*/}
        for f in $QUEUE_FILES; do
            # unreadable/missing attributes (e.g. zram has no scheduler) are omitted
            copy1 "$dev/queue/$f" "$root/sys/block/$name/queue/$f"
        done
        [ -r "$dev/dm/name" ] && copy1 "$dev/dm/name" "$root/sys/block/$name/dm/name"
    done
    [ -d "$root/proc/pressure" ] && rmdir "$root/proc/pressure" 2>/dev/null  # only if nothing readable
    T_ALL1=$(now)
    return 0
}

[ -e "$DEST/page_size" ] || getconf PAGESIZE >"$DEST/page_size"

start=$(now)
i=0
while [ "$i" -lt "$COUNT" ]; do
    if [ "$i" -gt 0 ]; then
        # Sleep until start + i*INTERVAL (absolute schedule: no accumulated drift).
        delay=$(awk -v s="$start" -v i="$i" -v iv="$INTERVAL" -v n="$(now)" \
                    'BEGIN { d = s + i*iv - n; if (d < 0) d = 0; printf "%.3f", d }')
        sleep "$delay"
    fi
    root=$(printf '%s/%03d' "$DEST" "$i")
    capture_one "$root" || exit 1
    read -r up _ <"$root/proc/uptime"
    awk -v r="$root" -v a="$T_PROC0" -v b="$T_PROC1" -v c="$T_ALL1" -v u="$up" \
        'BEGIN { printf "captured %s  uptime %s  /proc reads %.1f ms, all reads %.1f ms\n", r, u, (b-a)*1000, (c-a)*1000 }' >&2
    i=$((i + 1))
done
