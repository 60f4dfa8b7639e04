#!/bin/bash
# preads.sh BIN SECS [ARGS]: the kernel time of each file a 160x48 screen reads, by bpftrace
# (`pread64` entry to exit, summed by file descriptor over SECS after 25 s of warm-up), in µs
# a second, and the files it opened in that time. Root; needs bpftrace and tmux.
set -u
BIN=$1 SECS=$2
shift 2
out=$(mktemp /tmp/pw-preads.XXXXXX)
trap 'rm -f "$out"; tmux kill-session -t pw-preads 2>/dev/null' EXIT
tmux new-session -d -s pw-preads -x 160 -y 48 "exec $BIN --no-config $*"
sleep 25
pid=$(tmux list-panes -t pw-preads -F '#{pane_pid}')
timeout -s INT $((SECS + 5)) bpftrace -e "
tracepoint:syscalls:sys_enter_pread64 /pid == $pid/ { @s[tid] = nsecs; @fd[tid] = args->fd; }
tracepoint:syscalls:sys_exit_pread64 /pid == $pid && @s[tid]/ {
  @t[@fd[tid]] = sum(nsecs - @s[tid]); @n[@fd[tid]] = count(); delete(@s[tid]); }
tracepoint:syscalls:sys_enter_openat /pid == $pid/ { @open[str(args->filename)] = count(); }
interval:s:$SECS { exit(); }" > "$out" 2>&1
grep '^@t\[' "$out" | while read -r key ns; do
  fd=${key#@t[}
  fd=${fd%]:}
  n=$(grep "^@n\[$fd\]:" "$out" | awk '{print $2}')
  echo "$((ns / SECS / 1000)) µs/s  $n reads  $(readlink "/proc/$pid/fd/$fd")"
done | sort -n -r
grep '^@open' "$out" | sort -t: -k2 -n -r | head -20
