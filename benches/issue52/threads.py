#!/usr/bin/env python3
"""threads.py SECS WARM BIN ARGS...: BIN in a 160x48 pty; each thread's CPU (by /proc/PID/task/*/schedstat, summed by thread name) over SECS after WARM s, and the process total by the process CPU clock (exited threads included). Issue 52: the block tracer's reader (`pagewatch-blk`) apart from the sampler. Run under flock -o /tmp/pw-live.lock."""
import os, pty, sys, time, select, struct, fcntl, termios, signal, glob
secs, warm = float(sys.argv[1]), float(sys.argv[2]); argv = sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.environ['TERM'] = 'xterm-256color'; os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 48, 160, 0, 0))
def drain(s):
    u = time.time() + s
    while time.time() < u:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try: os.read(fd, 65536)
            except OSError: return
def snap():
    d = {}
    for t in glob.glob(f'/proc/{pid}/task/*'):
        try:
            name = open(t + '/comm').read().strip(); ns = int(open(t + '/schedstat').read().split()[0])
            d[name] = d.get(name, 0) + ns
        except OSError: pass
    return d, time.clock_gettime_ns(((~pid) << 3) | 2)
drain(warm); a, ca = snap(); t0 = time.time(); drain(secs); b, cb = snap(); dt = time.time() - t0
for k in sorted(set(a) | set(b)):
    print(f'  {k:16s} {(b.get(k, 0) - a.get(k, 0)) / 1e6 / dt:6.3f} ms/s')
print(f'  total (process clock) {(cb - ca) / 1e6 / dt:.3f} ms/s, load {open("/proc/loadavg").read().split()[0]}')
os.write(fd, b'q'); drain(1)
try: os.kill(pid, signal.SIGTERM)
except ProcessLookupError: pass
os.waitpid(pid, 0)
