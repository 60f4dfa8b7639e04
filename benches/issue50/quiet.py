"""Reads quiet.sh's output directory: every batch record, its phase (idle, build, after) and
whatever it raised: a saturated or unjudged disk, an early warning, a victim or culprit, a
dirty state above background, reclaim, a memory taker."""
import json, sys
d = sys.argv[1]
b0 = int(open(f'{d}/build_start').read()); b1 = int(open(f'{d}/build_end').read())
counts = {}; raised = []
for line in open(f'{d}/batch.json'):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    s = r['time_ms'] / 1000
    phase = 'idle' if s < b0 else 'build' if s <= b1 else 'after'
    v = r['verdict']
    why = []
    if v['saturated']: why.append(f"saturated {v['saturated']}")
    if v.get('unjudged'): why.append(f"unjudged {v['unjudged']}")
    if v.get('early'): why.append(f"early {v['early']}")
    if v.get('victims'): why.append(f"victims {[x.get('comm') for x in v['victims']]}")
    if v['dirty']['state'] != 'below_background': why.append(f"dirty {v['dirty']['state']}")
    if v['reclaim']['state'] != 'none': why.append(f"reclaim {v['reclaim']['state']}")
    if v.get('memory_taker'): why.append('memory taker')
    n, f = counts.get(phase, (0, 0))
    counts[phase] = (n + 1, f + bool(why))
    if why:
        raised.append((phase, round(s - b0), '; '.join(why), v['headline']))
print(f'build {b1 - b0} s')
for p in ('idle', 'build', 'after'):
    n, f = counts.get(p, (0, 0))
    print(f'{p}: {n} records, {f} raised something')
for x in raised:
    print(*x, sep=' | ')
