import json,sys,re
O=sys.argv[1]; dev=sys.argv[2] if len(sys.argv)>2 else 'vda'
ls=int(open(O+'/load_start').read()); lt=int(open(O+'/late_start').read())
def load(n):
    d={}
    for l in open(f'{O}/{n}.json'):
        try: r=json.loads(l)
        except: continue
        v=r['verdict']; s=round(r['time_ms']/1000)
        d[s]=(dev in v['saturated'], v.get('unjudged'), v['headline'], v['dirty']['state'])
    return d
E,L,F=load('early'),load('late'),load('fresh')
for name,X,start in (('late',L,lt),('fresh',F,lt)):
    bad=[s for s in X if s>=start+10 and s<ls+60 and not X[s][0] and not X[s][1]]
    common=[s for s in X if s in E and ls<=s<ls+60]
    agree=sum(1 for s in common if X[s][0]==E[s][0])
    dstate=sum(1 for s in common if X[s][3]==E[s][3])
    print(f'{name}: records {len(X)}, from 10 s after start in load: silent {len(bad)} {bad[:5]}; agrees with early on saturated {agree}/{len(common)}; dirty state {dstate}/{len(common)}')
    print('  sample:', [X[s][2][:90] for s in sorted(X)[12:14]])
print('early in load saturated', sum(1 for s in E if ls<=s<ls+60 and E[s][0]), 'of', sum(1 for s in E if ls<=s<ls+60))
# screen
for sz in ('big','small'):
    txt=open(f'{O}/{sz}.txt').read().split('=== ')[1:]
    n=ag=0; dis=[]
    for blk in txt:
        t,_,scr=blk.partition('\n'); s=round(float(t))
        # the screen's header: first 4 lines
        head='\n'.join(scr.split('\n')[:4])
        sat=bool(re.search(r'saturated\s+'+dev, scr))
        if s in L and ls<=s<ls+60:
            n+=1; ag+= sat==L[s][0]
            if sat!=L[s][0]: dis.append((s-ls, L[s][2][:60], head.split('\n')[2][:100]))
    print(f'screen {sz}: agrees with late batch on saturated {ag}/{n}', dis[:3])
