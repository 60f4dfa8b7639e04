#!/usr/bin/env python3
"""Side-by-side CPU of several terminal programs (issue 27): each command runs in its own
160x48 pty; after 5 s of warm-up, each process's CPU clock (exited threads included) is read over the same
SECS window for all of them, so they see the same machine. Then VmRSS and the load average.

Usage: python3 benches/side_by_side.py SECS CMD ARGS ;; CMD ARGS ;; ...   (quote the ;;)
PW_WARMUP=S sets the warm-up (default 5 s): pagewatch's gate keeps its walk fast for 10 s after
its own start, so a steady idle figure wants 20.
"""
import glob, os, pty, select, struct, sys, termios, time, fcntl

secs=float(sys.argv[1]); rest=' '.join(sys.argv[2:]); cmds=[c.split() for c in rest.split(';;')]
procs=[]
for argv in cmds:
    pid, fd = pty.fork()
    if pid == 0:
        os.environ['TERM']='xterm-256color'; os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 48, 160, 0, 0))
    procs.append((pid,fd,' '.join(argv)))
def cpu(pid):
    # The process CPU clock (clock_getcpuclockid's id for another process): threads that
    # exited inside the window count too, which a sum over task/*/schedstat misses.
    try: return time.clock_gettime_ns(((~pid)<<3)|2)
    except OSError: pass
    t=0
    for f in glob.glob(f'/proc/{pid}/task/*/schedstat'):
        try: t+=int(open(f).read().split()[0])
        except Exception: pass
    return t
def drain(until):
    while time.time()<until:
        r,_,_=select.select([p[1] for p in procs],[],[],0.5)
        for fd in r:
            try: os.read(fd,65536)
            except OSError: pass
drain(time.time()+float(os.environ.get('PW_WARMUP','5')))
c0=[cpu(p[0]) for p in procs]; t0=time.time()
drain(t0+secs)
c1=[cpu(p[0]) for p in procs]; el=time.time()-t0
for (pid,fd,name),a,b in zip(procs,c0,c1):
    rss=[l for l in open(f'/proc/{pid}/status') if l.startswith('VmRSS')][0].split()[1]
    print(f"{(b-a)/1e6/el:.3f} ms/s  rss {int(rss)/1024:.1f} MB  {name}")
print("load", open('/proc/loadavg').read().strip())
for pid,fd,name in procs:
    try: os.write(fd,b'q')
    except OSError: pass
drain(time.time()+3)
for pid,fd,name in procs:
    try: os.kill(pid,15)
    except OSError: pass
    os.waitpid(pid,0)
