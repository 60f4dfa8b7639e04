#!/usr/bin/env python3
"""verify-tree.py TREE [TREE...]

Independent cross-check of a tree sequence (assets/trees/<name>/NNN/...) against
docs/kernel-formulas.md:
  - totalreserve (§1.3) and Σlow rebuilt from proc/zoneinfo,
  - nr_dirty_threshold / nr_dirty_background_threshold (§1.2, free = MemFree/4 per §1.7,
    file LRU = nr_active_file + nr_inactive_file from vmstat, ≥v6.10 step order; not RT),
  - MemAvailable (§2, KReclaimable if present else SReclaimable),
  - uptime strictly increasing.
Prints one line per root; exit status 1 if any synthetic (README says 'synthetic') root
is not exact or uptime does not increase.
"""
import os
import re
import sys

PAGE = 4096


def kv(path, sep=None):
    d = {}
    with open(path) as f:
        for line in f:
            p = line.replace(":", " ").split() if sep == ":" else line.split()
            if len(p) >= 2:
                d[p[0]] = int(p[1])
    return d


def zones(path):
    out, cur = [], None
    with open(path) as f:
        for line in f:
            m = re.match(r"Node\s+(\d+),\s+zone\s+(\S+)", line)
            if m:
                cur = {"node": int(m.group(1)), "zone": m.group(2), "boost": 0}
                out.append(cur)
                continue
            if cur is None:
                continue
            s = line.strip()
            m = re.match(r"protection:\s*\((.*)\)", s)
            if m:
                cur["protection"] = [int(x) for x in m.group(1).split(",")]
                continue
            p = s.split()
            if len(p) == 3 and p[0] == "pages" and p[1] == "free":
                cur["free"] = int(p[2])
            elif len(p) == 2 and p[0] in ("boost", "min", "low", "high", "promo",
                                          "spanned", "present", "managed", "cma"):
                cur.setdefault(p[0], int(p[1]))  # first occurrence (zone header part)
    return out


def sysctl(root, name):
    with open(os.path.join(root, "proc/sys/vm", name)) as f:
        return int(f.read().split()[0])


def totalreserve(zs):
    return sum(min(z["managed"], z["high"] - z.get("boost", 0) + max(z["protection"])) for z in zs)


def sum_low(zs):
    return sum(z["low"] for z in zs)


def dirty_limits(free, reserve, file_lru, ratio, bg_ratio, dbytes, bg_bytes):
    avail = free - min(free, reserve) + file_lru + 1
    r = ratio * PAGE // 100
    bgr = bg_ratio * PAGE // 100
    thresh = -(-dbytes // PAGE) if dbytes else r * avail // PAGE
    bg = -(-bg_bytes // PAGE) if bg_bytes else bgr * avail // PAGE
    thresh = min(thresh, 2**32 - 1)
    if bg >= thresh:
        bg = thresh // 2
    return avail, thresh, bg


def mem_available(free, reserve, file_lru, reclaimable, low):
    a = free - reserve
    a += file_lru - min(file_lru // 2, low)
    a += reclaimable - min(reclaimable // 2, low)
    return max(a, 0)


def check_root(root):
    mi = kv(os.path.join(root, "proc/meminfo"), ":")
    vm = kv(os.path.join(root, "proc/vmstat"))
    zs = zones(os.path.join(root, "proc/zoneinfo"))
    with open(os.path.join(root, "proc/uptime")) as f:
        up = float(f.read().split()[0])
    free = mi["MemFree"] // 4
    res = totalreserve(zs)
    low = sum_low(zs)
    lru = vm["nr_active_file"] + vm["nr_inactive_file"]
    avail, th, bg = dirty_limits(free, res, lru,
                                 sysctl(root, "dirty_ratio"), sysctl(root, "dirty_background_ratio"),
                                 sysctl(root, "dirty_bytes"), sysctl(root, "dirty_background_bytes"))
    recl = mi.get("KReclaimable", mi["SReclaimable"]) // 4
    # MemAvailable uses meminfo's file LRU (Active(file)+Inactive(file)); same counters as vmstat
    lru_mi = (mi["Active(file)"] + mi["Inactive(file)"]) // 4
    ma = mem_available(free, res, lru_mi, recl, low) * 4
    return dict(uptime=up, free=free, nr_free_pages=vm.get("nr_free_pages"), reserve=res, low=low,
                avail=avail, thresh=th, bg=bg, k_thresh=vm["nr_dirty_threshold"],
                k_bg=vm["nr_dirty_background_threshold"], memavail=ma, k_memavail=mi["MemAvailable"])


def main(argv):
    bad = False
    for tree in argv:
        synthetic = False
        readme = os.path.join(tree, "README.md")
        if os.path.exists(readme):
            synthetic = "synthetic" in open(readme).read().lower()[:400]
        roots = sorted(d for d in os.listdir(tree) if re.fullmatch(r"\d{3}", d))
        print(f"== {tree} ({'synthetic' if synthetic else 'captured'}, {len(roots)} roots)")
        prev = None
        for r in roots:
            c = check_root(os.path.join(tree, r))
            dth, dbg, dma = c["thresh"] - c["k_thresh"], c["bg"] - c["k_bg"], c["memavail"] - c["k_memavail"]
            print(f"  {r}: uptime {c['uptime']:.2f}  MemFree/4 {c['free']} (nr_free_pages {c['nr_free_pages']})"
                  f"  totalreserve {c['reserve']}  Σlow {c['low']}  dirtyable {c['avail']}\n"
                  f"       thresh calc {c['thresh']} kernel {c['k_thresh']} (Δ{dth:+d})"
                  f"  bg calc {c['bg']} kernel {c['k_bg']} (Δ{dbg:+d})"
                  f"  MemAvailable calc {c['memavail']} kB kernel {c['k_memavail']} kB (Δ{dma:+d} kB)")
            if synthetic and (dth or dbg or dma):
                bad = True
            if prev is not None and c["uptime"] <= prev:
                print("  ERROR: uptime not increasing")
                bad = True
            prev = c["uptime"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
