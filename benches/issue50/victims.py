#!/usr/bin/env python3
"""Compares, second by second, the victims (seen calm, with a ratio) and the culprits that each
processes-view screen's /metrics named with those its plain batch named (victims.sh)."""
import json, re, sys
O = sys.argv[1]
bins = [l.split() for l in open(f"{O}/bins")]
load = int(open(f"{O}/load_start").read())
for i, (b, _) in enumerate(bins):
    batch, bculprits, bearly = {}, {}, {}
    for l in open(f"{O}/batch{i}.json"):
        j = json.loads(l)
        t = int(j["time_ms"] // 1000)
        v = j.get("verdict") or {}
        batch[t] = {(x["comm"], x["figure"]) for x in v.get("victims") or [] if x.get("ratio") is not None}
        bculprits[t] = {x["comm"] for x in v.get("culprits") or []}
        bearly[t] = bool(v.get("early"))
    screen, sculprits = {}, {}
    for chunk in open(f"{O}/metrics{i}.txt").read().split("=== ")[1:]:
        head, *lines = chunk.split("\n")
        t = int(float(head))
        screen[t] = {tuple(re.findall(r'(?:comm|figure)="([^"]*)"', l)) for l in lines if l.startswith("pagewatch_victim_ratio")}
        sculprits[t] = {re.findall(r'comm="([^"]*)"', l)[0] for l in lines if l.startswith("pagewatch_culprit")}
    common = sorted(set(batch) & set(screen))
    agree = [t for t in common if batch[t] == screen[t] or batch.get(t - 1) == screen[t]]
    named_b = sum(1 for t in common if batch[t]); named_s = sum(1 for t in common if screen[t])
    print(f"{b}: {len(agree)}/{len(common)} seconds agree (the batch record of that second or the one before); "
          f"batch named {named_b}, screen {named_s}; from the load: "
          f"{sum(1 for t in agree if t >= load)}/{sum(1 for t in common if t >= load)}")
    early = [t - load for t in sorted(bearly) if bearly[t] and t >= load]
    print(f"   batch's early warning from the load: {early[:1] and f'+{early[0]} s' or 'never'}"
          f" ({len(early)} records)")
    cagree = [t for t in common if sculprits[t] in (bculprits[t], bculprits.get(t - 1))]
    print(f"   culprits: {len(cagree)}/{len(common)} seconds agree; batch named some in "
          f"{sum(1 for t in common if bculprits[t])}, the screen in {sum(1 for t in common if sculprits[t])}")
    for t in common:
        if t not in cagree:
            print(f"   +{t - load:4d}s culprits: batch {sorted(bculprits[t])} screen {sorted(sculprits[t])}")
        if t not in agree:
            print(f"   +{t - load:4d}s batch {sorted(batch[t])} screen {sorted(screen[t])}")
