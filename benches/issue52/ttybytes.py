#!/usr/bin/env python3
"""ttybytes.py SECS WARMUP CMD...: runs CMD in a 160x48 pty, and after WARMUP s counts for SECS s
the bytes written, attributed to the screen row each cursor move (CSI r;c H) lands on."""
import os, pty, select, struct, sys, termios, fcntl, time, re, collections
secs=float(sys.argv[1]); warm=float(sys.argv[2]); argv=sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.environ['TERM']='xterm-256color'; os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 48, 160, 0, 0))
def read_for(t):
    data=b''; end=time.time()+t
    while time.time()<end:
        r,_,_=select.select([fd],[],[],0.2)
        if r:
            try: data+=os.read(fd,65536)
            except OSError: break
    return data
read_for(warm)
d=read_for(secs)
os.kill(pid,15); time.sleep(0.3)
rows=collections.Counter(); cells=collections.Counter()
parts=re.split(rb'(\x1b\[\d+;\d+H)',d)
row=0
for p in parts:
    m=re.match(rb'\x1b\[(\d+);(\d+)H',p)
    if m: row=int(m.group(1)); rows[row]+=len(p); continue
    rows[row]+=len(p)
print(f'total {len(d)} B in {secs} s: {len(d)/secs:.0f} B/s')
for r,n in sorted(rows.items()): print(f'row {r:2d}: {n/secs:6.1f} B/s')
open('/tmp/cost/tty.raw','wb').write(d)
