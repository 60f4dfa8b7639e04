#!/usr/bin/env python3
"""rsswatch.py NAME SECS -- CMD...: runs CMD in a detached 160x48 tmux session NAME, and every
10 s logs VmRSS, VmHWM, RssAnon, RssFile and the Rss of the binary's code and data, the shared
libraries, the heap, the main stack and the largest anonymous mappings (thread arenas, stacks,
mapped blocks) from /proc/PID/smaps to /tmp/cost/NAME.log; at the end, every resident mapping
and /proc/PID/smaps_rollup; then kills the session. PW_SCRAPE=URL fetches URL every 5 s (a
Prometheus scraping `serve`)."""
import os, subprocess, sys, time, re, urllib.request
os.makedirs('/tmp/cost', exist_ok=True)
name=sys.argv[1]; secs=float(sys.argv[2]); cmd=sys.argv[4:]
log=open(f'/tmp/cost/{name}.log','w',buffering=1)
subprocess.run(['tmux','new-session','-d','-s',name,'-x','160','-y','48',' '.join(cmd)],check=True)
time.sleep(1)
pid=subprocess.run(['tmux','display','-p','-t',name,'#{pane_pid}'],capture_output=True,text=True).stdout.strip()
exe=os.path.realpath(f'/proc/{pid}/exe')
log.write(f'pid {pid} exe {exe} cmd {" ".join(cmd)}\n')
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
            cur=[parts[5] if len(parts)>5 else 'anon',(b-a)//1024,0,parts[1],parts[0]]; out.append(cur)
        elif l.startswith('Rss:') and cur: cur[2]=int(l.split()[1])
    return out
scrape=os.environ.get('PW_SCRAPE')
t0=time.time(); last=None
while time.time()-t0<secs:
    try:
        s=status(); m=maps()
    except Exception as e:
        log.write(f'gone {e}\n'); break
    last=m
    heap=sum(r for n,sz,r,p,_ in m if n=='[heap]')
    stack=sum(r for n,sz,r,p,_ in m if n=='[stack]')
    anon=sorted([(r,sz) for n,sz,r,p,_ in m if n=='anon' and r>0],reverse=True)
    text=sum(r for n,sz,r,p,_ in m if n==exe and 'x' in p)
    data=sum(r for n,sz,r,p,_ in m if n==exe and 'x' not in p)
    lib=sum(r for n,sz,r,p,_ in m if '.so' in n)
    other=sum(r for n,sz,r,p,_ in m if n.startswith('/') and n!=exe and '.so' not in n)
    log.write(f'{time.time()-t0:6.0f}s rss {s["VmRSS"]} hwm {s["VmHWM"]} anon {s["RssAnon"]} file {s["RssFile"]} text {text} exedata {data} libs {lib} otherfiles {other} heap {heap} stack {stack} anonmaps {anon[:8]}\n')
    for _ in range(2 if scrape else 0):
        try: urllib.request.urlopen(scrape,timeout=2).read()
        except Exception as e: log.write(f'scrape {e}\n')
        time.sleep(5)
    if not scrape: time.sleep(10)
if last:
    log.write('resident mappings at the end (kB mapped, kB resident, perms, name):\n')
    for n,sz,r,p,rng in last:
        if r>0: log.write(f'  {rng} {sz:7d} {r:6d} {p} {n}\n')
    try: log.write(open(f'/proc/{pid}/smaps_rollup').read())
    except Exception: pass
subprocess.run(['tmux','kill-session','-t',name])
