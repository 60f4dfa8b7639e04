#!/usr/bin/env python3
"""Side-by-side CPU of several terminal programs (issue 27): each command runs in its own
160x48 pty; after 5 s of warm-up, each process's CPU clock (exited threads included) is read over the same
SECS window for all of them, so they see the same machine. Then VmRSS, the bytes each wrote to
its terminal a second over the window, and the load average.

Usage: python3 benches/side_by_side.py SECS CMD ARGS ;; CMD ARGS ;; ...   (quote the ;;)
PW_WARMUP=S sets the warm-up (default 5 s): pagewatch's gate keeps its walk fast for 10 s after
its own start, so a steady idle figure wants 20.
PW_ROUNDS=K splits the window into K equal rounds and prints each process's ms/s in every
round, its median, and each round's ratio to the first command (the median ratio last). On
a VM whose host is busy, one process's idle cost moves 2-4x between windows minutes apart
(2026-11-27: the default screen 0.55-2.35 ms/s, htop 2.1-4.4), while the ratio in one round
moves less. Never run one binary twice in one window: copies doing the same system calls
read up to 3x apart (four idle pagewatch screens on one CPU: 0.87, 2.48, 1.15, 0.88 ms/s),
likely because they share their code pages and the first awake fetches them cold for all
(docs/PERFORMANCE.md, tenth round).
PW_PROCS=N first starts idle processes (`sleep`, each in its own session) until /proc lists N
before the measured programs start, and stops them at the end. htop's cost grows with the
processes it lists and the default screen's does not, so a ratio to htop means something only
with its process count: issue 27's figures were taken at ~120 processes, where a lean VM
idles at ~66. Every run prints the count /proc listed while it was measured.
"""
import glob, os, pty, select, statistics, struct, subprocess, sys, termios, time, fcntl

def nprocs():
    return sum(1 for d in os.listdir('/proc') if d.isdigit())
fillers=[]
want=int(os.environ.get('PW_PROCS','0'))
while nprocs() < want:
    fillers.append(subprocess.Popen(['sleep','100000'],start_new_session=True,
                                    stdin=subprocess.DEVNULL,stdout=subprocess.DEVNULL))

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
out={}  # bytes each terminal was written, by fd (counted from the end of the warm-up)
def drain(until):
    while time.time()<until:
        r,_,_=select.select([p[1] for p in procs],[],[],0.5)
        for fd in r:
            try: out[fd]=out.get(fd,0)+len(os.read(fd,65536))
            except OSError: pass
drain(time.time()+float(os.environ.get('PW_WARMUP','5')))
out.clear()
rounds=int(os.environ.get('PW_ROUNDS','1'))
marks=[([cpu(p[0]) for p in procs], time.time())]
for k in range(rounds):
    drain(marks[0][1]+secs*(k+1)/rounds)
    marks.append(([cpu(p[0]) for p in procs], time.time()))
(c0,t0),(c1,t1)=marks[0],marks[-1]; el=t1-t0
if rounds>1:
    per=[[(b-a)/1e6/(tb-ta) for a,b in zip(ca,cb)] for (ca,ta),(cb,tb) in zip(marks,marks[1:])]
    for i,(pid,fd,name) in enumerate(procs):
        v=[r[i] for r in per]
        print(f"rounds {' '.join(f'{x:.3f}' for x in v)}  median {statistics.median(v):.3f} ms/s  {name}")
    for i,(pid,fd,name) in enumerate(procs[1:],1):
        q=[r[0]/r[i] if r[i] else float('inf') for r in per]
        print(f"ratio first/this {' '.join(f'{x:.2f}' for x in q)}  median {statistics.median(q):.2f}  {name}")
for (pid,fd,name),a,b in zip(procs,c0,c1):
    rss=[l for l in open(f'/proc/{pid}/status') if l.startswith('VmRSS')][0].split()[1]
    print(f"{(b-a)/1e6/el:.3f} ms/s  rss {int(rss)/1024:.1f} MB  {out.get(fd,0)/el:.0f} B/s  {name}")
print("load", open('/proc/loadavg').read().strip(), f" processes {nprocs()} ({len(fillers)} idle fillers)")
for pid,fd,name in procs:
    try: os.write(fd,b'q')
    except OSError: pass
drain(time.time()+3)
for pid,fd,name in procs:
    try: os.kill(pid,15)
    except OSError: pass
    os.waitpid(pid,0)
for f in fillers:
    f.kill(); f.wait()
