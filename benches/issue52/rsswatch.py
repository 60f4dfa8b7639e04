#!/usr/bin/env python3
"""rsswatch.py NAME SECS -- CMD...: runs CMD in a detached 160x48 tmux session NAME, and every
10 s logs VmRSS, VmHWM and the Rss of the heap and of the anonymous mappings (thread arenas,
stacks) from /proc/PID/smaps to /tmp/cost/NAME.log; kills the session at the end."""
import os, subprocess, sys, time, re
os.makedirs('/tmp/cost', exist_ok=True)
name=sys.argv[1]; secs=float(sys.argv[2]); cmd=sys.argv[4:]
log=open(f'/tmp/cost/{name}.log','w',buffering=1)
subprocess.run(['tmux','new-session','-d','-s',name,'-x','160','-y','48',' '.join(cmd)],check=True)
time.sleep(1)
pane_pid=subprocess.run(['tmux','display','-p','-t',name,'#{pane_pid}'],capture_output=True,text=True).stdout.strip()
pid=pane_pid
log.write(f'pid {pid} cmd {" ".join(cmd)}\n')
def status():
    d={}
    for l in open(f'/proc/{pid}/status'):
        k,v=l.split(':',1)
        if k in('VmRSS','VmHWM','RssAnon','RssFile'): d[k]=int(v.split()[0])
    return d
def maps():
    out=[]; cur=None
    for l in open(f'/proc/{pid}/smaps'):
        if re.match(r'^[0-9a-f]+-[0-9a-f]+ ',l):
            parts=l.split()
            a,b=[int(x,16) for x in parts[0].split('-')]
            cur=[parts[5] if len(parts)>5 else 'anon',(b-a)//1024,0]; out.append(cur)
        elif l.startswith('Rss:') and cur: cur[2]=int(l.split()[1])
    return out
t0=time.time()
while time.time()-t0<secs:
    try:
        s=status(); m=maps()
    except Exception as e:
        log.write(f'gone {e}\n'); break
    heap=sum(r for n,sz,r in m if n=='[heap]')
    anon=sorted([(r,sz) for n,sz,r in m if n=='anon' and r>0],reverse=True)
    exe=sum(r for n,sz,r in m if 'pagewatch' in n)
    lib=sum(r for n,sz,r in m if n.endswith('.so') or '.so.' in n)
    log.write(f'{time.time()-t0:6.0f}s rss {s["VmRSS"]} hwm {s["VmHWM"]} anon {s["RssAnon"]} file {s["RssFile"]} heap {heap} exe {exe} libs {lib} anonmaps {anon[:8]}\n')
    time.sleep(10)
subprocess.run(['tmux','kill-session','-t',name])
