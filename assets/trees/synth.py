#!/usr/bin/env python3
"""synth.py -- deterministic generator for the synthetic pagewatch fixture trees.

    python3 assets/trees/synth.py            # (re)writes the synthetic trees next to this file
    python3 assets/trees/synth.py --check    # regenerate into a temp dir and diff against the tree

Produces, next to this script:
    kernel-4.14-diskstats14/    4.14-era: 14-field diskstats, no PSI, no KReclaimable, node vmstat names
    kernel-5.4-diskstats18/     5.4-era: 18-field diskstats, PSI (cpu: some only), KReclaimable
    kernel-4.4-vmstat-prezone/  4.4-era: per-zone pgscan/pgsteal names, single allocstall, 14-field diskstats

Every "kernel-computed" number (zone watermarks, lowmem protection, totalreserve_pages,
nr_dirty_threshold, nr_dirty_background_threshold, MemAvailable) is DERIVED here from the
input numbers with the formulas of docs/kernel-formulas.md (§1.2, §1.3, §2,
§3.1), never typed in. Each tree's README.md is generated too, so the documented numbers are
the same values that were written into the files.

No randomness, no clock: running it twice gives byte-identical output.
"""
import os
import shutil
import sys
import tempfile

PAGE = 4096
KB_PER_PAGE = PAGE // 1024
HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------------------------
# Kernel formulas (spec references in comments)
# --------------------------------------------------------------------------------------------

def setup_wmarks(zones, min_free_kbytes, wsf, era):
    """§3.1 __setup_per_zone_wmarks(). era: 'pre46' (LOW=MIN+tmp/4, HIGH=MIN+tmp/2) or
    'post46' (delta = max(tmp>>2, managed*wsf/10000)). For all eras used here (< 5.13) only
    highmem zones get the clamped MIN; an empty Movable zone therefore gets 0/0/0 and
    lowmem_pages counts every !highmem zone (Movable included; it is empty anyway)."""
    pages_min = min_free_kbytes >> (12 - 10)
    lowmem = sum(z["managed"] for z in zones)  # no highmem on x86_64
    for z in zones:
        tmp = pages_min * z["managed"] // lowmem
        z["min"] = tmp
        if era == "pre46":
            z["low"] = z["min"] + (tmp >> 2)
            z["high"] = z["min"] + (tmp >> 1)
        else:
            mult_frac = (z["managed"] // 10000) * wsf + ((z["managed"] % 10000) * wsf) // 10000
            delta = max(tmp >> 2, mult_frac)
            z["low"] = z["min"] + delta
            z["high"] = z["min"] + 2 * delta
        z["boost"] = 0


def setup_lowmem_reserve(zones, ratios):
    """setup_per_zone_lowmem_reserve(): zone i protects against allocations that could use
    zone j>i with (sum of managed of zones i+1..j) / ratio[i]."""
    n = len(zones)
    for i, z in enumerate(zones):
        prot = [0] * n
        acc = 0
        ratio = max(ratios[i], 1)
        for j in range(i + 1, n):
            acc += zones[j]["managed"]
            prot[j] = acc // ratio
        z["protection"] = prot


def totalreserve(zones):
    """§1.3 calculate_totalreserve_pages(): Σ min(managed, high + max(protection))."""
    parts = [min(z["managed"], z["high"] - z["boost"] + max(z["protection"])) for z in zones]
    return sum(parts), parts


def dirty_limits(free, reserve, file_lru, sc):
    """§1.1 + §1.2 (not RT/DL; per-PAGE_SIZE ratio; bytes round up; bg>=thresh -> thresh/2)."""
    avail = free - min(free, reserve) + file_lru + 1
    ratio = sc["dirty_ratio"] * PAGE // 100
    bg_ratio = sc["dirty_background_ratio"] * PAGE // 100
    if sc["dirty_bytes"]:
        thresh = -(-sc["dirty_bytes"] // PAGE)
    else:
        thresh = ratio * avail // PAGE
    if sc["dirty_background_bytes"]:
        bg = -(-sc["dirty_background_bytes"] // PAGE)
    else:
        bg = bg_ratio * avail // PAGE
    if bg >= thresh:
        bg = thresh // 2
    return dict(avail=avail, ratio=ratio, bg_ratio=bg_ratio, thresh=thresh, bg=bg,
                freerun=(thresh + bg) // 2)


def mem_available(free, reserve, file_lru, reclaimable, sum_low):
    """§2 si_mem_available() (v4.5+ form: free - totalreserve)."""
    a = free - reserve
    pc = file_lru - min(file_lru // 2, sum_low)
    rc = reclaimable - min(reclaimable // 2, sum_low)
    return dict(base=a, pagecache_term=pc, reclaim_term=rc, pages=max(a + pc + rc, 0))


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

def cum(base, deltas):
    """[base, base+d1, base+d1+d2, ...]"""
    out = [base]
    for d in deltas:
        out.append(out[-1] + d)
    return out


def split(total, weights):
    """Integer split of total by weights; the last nonzero-weight bucket takes the remainder
    so that the parts sum to total exactly."""
    s = sum(weights)
    parts = [total * w // s if s else 0 for w in weights]
    last = max(i for i, w in enumerate(weights) if w) if s else len(weights) - 1
    parts[last] += total - sum(parts)
    return parts


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def meminfo_text(rows):
    out = []
    for k, v in rows:
        if k.startswith("HugePages_"):
            out.append(f"{k + ':':<16}{v:>8}")
        elif k == "HardwareCorrupted":          # printed with its own "%5lu kB" format
            out.append(f"{k}: {v:>5} kB")
        else:
            out.append(f"{k + ':':<16}{v:>8} kB")
    return "\n".join(out) + "\n"


def psi_line(kind, a10, a60, a300, total):
    return f"{kind} avg10={a10:.2f} avg60={a60:.2f} avg300={a300:.2f} total={total}\n"


def diskstats_text(rows):
    return "".join(f"{maj:4d} {mnr:7d} {name} " + " ".join(str(x) for x in f) + "\n"
                   for maj, mnr, name, f in rows)


def stat_text(cpus, extra):
    """cpus: list of per-CPU 10-tuples (user nice system idle iowait irq softirq steal guest gn)."""
    tot = [sum(c[i] for c in cpus) for i in range(10)]
    lines = ["cpu  " + " ".join(map(str, tot))]
    for i, c in enumerate(cpus):
        lines.append(f"cpu{i} " + " ".join(map(str, c)))
    lines.append(f"intr {extra['intr']} 0 9 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0")
    lines.append(f"ctxt {extra['ctxt']}")
    lines.append(f"btime {extra['btime']}")
    lines.append(f"processes {extra['processes']}")
    lines.append(f"procs_running {extra['procs_running']}")
    lines.append(f"procs_blocked {extra['procs_blocked']}")
    sirq = extra["softirq"]
    lines.append(f"softirq {sirq} 0 {sirq // 3} 12 {sirq // 5} {sirq // 7} 0 {sirq // 9} {sirq // 4} 0 {sirq // 11}")
    return "\n".join(lines) + "\n"


def cpu_rows(ncpu, base_secs, per_cpu_per_s, t):
    """Per-CPU jiffies (USER_HZ=100): base = base_secs*100 split by the same shares, each
    second adds per_cpu_per_s (a 10-tuple summing to 100) with a small per-CPU skew that
    keeps every row summing to 100 per second."""
    rows = []
    for c in range(ncpu):
        share = list(per_cpu_per_s)
        skew = (c % 3) - 1  # -1, 0, +1 ticks/s moved between user and idle
        share[0] += skew
        share[3] -= skew
        base = [int(base_secs * s) for s in share]  # base_secs*share = jiffies since boot
        rows.append(tuple(b + s * t for b, s in zip(base, share)))
    return rows


def uptime_idle(cpus):
    # /proc/uptime field 2 = Σ per-CPU idle time (iowait excluded), seconds
    return sum(c[3] for c in cpus) / 100.0


# --------------------------------------------------------------------------------------------
# zoneinfo writers
# --------------------------------------------------------------------------------------------

def zoneinfo_node_era(zones, node_items, zone_items, ncpu, era):
    """4.13+ layout (4.14, 5.4): every zone printed; per-node stats in the first populated
    zone; no boost/promo/cma lines (boost: 2021 patch, cma: 5.1x, promo: 2022)."""
    out = []
    first = True
    for z in zones:
        out.append(f"Node 0, zone {z['name']:>8}")
        populated = z["present"] > 0
        if populated and first:
            out.append("  per-node stats")
            for k, v in node_items:
                out.append(f"      {k:<12} {v}")
            first = False
        out.append(f"  pages free     {z['free']}")
        out.append(f"        min      {z['min']}")
        out.append(f"        low      {z['low']}")
        out.append(f"        high     {z['high']}")
        out.append(f"        spanned  {z['spanned']}")
        out.append(f"        present  {z['present']}")
        out.append(f"        managed  {z['managed']}")
        out.append("        protection: (" + ", ".join(str(p) for p in z["protection"]) + ")")
        if not populated:
            continue
        for k, v in zone_items(z):
            out.append(f"      {k:<12} {v}")
        out.append("  pagesets")
        for c in range(ncpu):
            cnt = 0 if z["name"] == "DMA" else 17 + 23 * c
            high = 0 if z["name"] == "DMA" else 186
            batch = 1 if z["name"] == "DMA" else 31
            out.append(f"    cpu: {c}")
            out.append(f"              count: {cnt}")
            out.append(f"              high:  {high}")
            out.append(f"              batch: {batch}")
            out.append(f"  vm stats threshold: {z['stat_threshold']}")
        out.append("  node_unreclaimable:  0")
        out.append(f"  start_pfn:           {z['start_pfn']}")
    return "\n".join(out) + "\n"


def zoneinfo_44(zones, zone_items, ncpu):
    """4.4 layout: only populated zones; zone stat items (4-space indent) BEFORE protection;
    'scanned' line; all_unreclaimable/start_pfn/inactive_ratio trailer."""
    out = []
    for z in zones:
        if z["present"] == 0:
            continue
        out.append(f"Node 0, zone {z['name']:>8}")
        out.append(f"  pages free     {z['free']}")
        out.append(f"        min      {z['min']}")
        out.append(f"        low      {z['low']}")
        out.append(f"        high     {z['high']}")
        out.append(f"        scanned  0")
        out.append(f"        spanned  {z['spanned']}")
        out.append(f"        present  {z['present']}")
        out.append(f"        managed  {z['managed']}")
        for k, v in zone_items(z):
            out.append(f"    {k:<12} {v}")
        out.append("        protection: (" + ", ".join(str(p) for p in z["protection"]) + ")")
        out.append("  pagesets")
        for c in range(ncpu):
            out.append(f"    cpu: {c}")
            out.append(f"              count: {0 if z['name'] == 'DMA' else 41 + 11 * c}")
            out.append(f"              high:  {0 if z['name'] == 'DMA' else 186}")
            out.append(f"              batch: {1 if z['name'] == 'DMA' else 31}")
            out.append(f"  vm stats threshold: {z['stat_threshold']}")
        out.append("  all_unreclaimable: 0")
        out.append(f"  start_pfn:         {z['start_pfn']}")
        out.append(f"  inactive_ratio:    {z['inactive_ratio']}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Tree description: everything per root is derived from the inputs below
# --------------------------------------------------------------------------------------------

def make_zones(defs):
    return [dict(name=n, spanned=s, present=p, managed=m, start_pfn=pfn, stat_threshold=th,
                 inactive_ratio=ir) for n, s, p, m, pfn, th, ir in defs]


def zone_copy(zones):
    return [dict(z) for z in zones]


SYSBLOCK_LEGACY_HDD = dict(rotational="1", scheduler="noop deadline [cfq] ", nr_requests="128",
                           write_cache="write back")


class Tree:
    pass


def tree_414():
    t = Tree()
    t.name = "kernel-4.14-diskstats14"
    t.kernel = "4.14"
    t.ncpu = 4
    t.sysctl = dict(dirty_ratio=20, dirty_background_ratio=10, dirty_bytes=0, dirty_background_bytes=0,
                    dirty_expire_centisecs=3000, dirty_writeback_centisecs=500, min_free_kbytes=67584,
                    watermark_scale_factor=10, swappiness=60)
    t.zones = make_zones([
        # name     spanned  present  managed  start_pfn stat_thr inactive_ratio
        ("DMA", 4095, 3998, 3977, 1, 8, 0),
        ("DMA32", 1044480, 782288, 766234, 4096, 48, 0),
        ("Normal", 3407872, 3407872, 3338651, 1048576, 64, 0),
        ("Movable", 0, 0, 0, 0, 0, 0),
    ])
    setup_wmarks(t.zones, t.sysctl["min_free_kbytes"], t.sysctl["watermark_scale_factor"], "post46")
    setup_lowmem_reserve(t.zones, [256, 256, 32, 0])
    t.uptime0 = 351702.37
    # per-root inputs (pages) ---------------------------------------------------------------
    t.zone_free = {"DMA": [3896, 3896, 3896], "DMA32": [14210, 9870, 8120],
                   "Normal": [52311, 21705, 19630], "Movable": [0, 0, 0]}
    t.active_file = [1902334, 1903120, 1904010]
    t.inactive_file = [1680512, 1708441, 1710377]
    t.active_anon = [231880, 231902, 231957]
    t.inactive_anon = [30112, 30120, 30118]
    t.unevictable = [1024, 1024, 1024]
    t.mlock = [1024, 1024, 1024]
    t.anon_pages = [249860, 249870, 249921]
    t.shmem = [12156, 12152, 12154]
    t.mapped = [61234, 61240, 61251]
    t.buffers = [41210, 41388, 41502]
    t.swapcache = [0, 0, 0]
    t.dirty = [38412, 51230, 60118]
    t.writeback = [2110, 4871, 5002]
    t.slab_recl = [96412, 96390, 96401]
    t.slab_unrecl = [31877, 31880, 31879]
    t.kernel_stack_kb = [9808, 9808, 9824]   # 4.14: nr_kernel_stack is in kB
    t.page_tables = [5231, 5233, 5240]
    t.misc_recl = None                       # no NR_KERNEL_MISC_RECLAIMABLE before 4.20
    # cumulative counters: base + per-interval deltas
    t.written_d = [12800, 12060]             # = sda1 sectors written / 8
    t.dirtied_d = [None, None]               # derived: Δ(dirty+writeback) + written
    t.events = dict(
        pgscan_kswapd=(48123345, [41230, 9850]),
        pgscan_direct=(312980, [1024, 0]),
        pgsteal_kswapd=(46012876, [38905, 9311]),
        pgsteal_direct=(301233, [998, 0]),
        allocstall_dma=(0, [0, 0]),
        allocstall_dma32=(0, [0, 0]),
        allocstall_normal=(1311, [3, 0]),
        allocstall_movable=(0, [0, 0]),
        workingset_refault=(5123311, [412, 388]),
        workingset_activate=(1023311, [120, 97]),
        pswpin=(0, [0, 0]),
        pswpout=(0, [0, 0]),
        pgmajfault=(210399, [150, 96]),
        pgfault=(9812332101, [22311, 19876]),
        pageoutrun=(190233, [6, 2]),
        slabs_scanned=(8123392, [2048, 512]),
    )
    # diskstats (14 fields = 3 + 11). Values per device: base tuple + per-interval deltas.
    # fields: rd rd_merges rd_sect rd_ms wr wr_merges wr_sect wr_ms in_flight io_ms weighted_ms
    part = dict(
        rd=[150, 96], rdm=[0, 0], rds=[9600, 6144], rdms=[900, 576],
        wr=[1200, 1140], wrm=[400, 380], wrs=[102400, 96480], wrms=[9600, 9120],
        inflight=[3, 12, 9], io=[852, 790], wt=[10540, 9730])
    dm = dict(
        rd=[150, 96], rdm=[0, 0], rds=[9600, 6144], rdms=[960, 610],
        wr=[1600, 1520], wrm=[0, 0], wrs=[102400, 96480], wrms=[12800, 12160],
        inflight=[4, 16, 11], io=[870, 801], wt=[13790, 12800])
    flat = dict(rd=[0, 0], rdm=[0, 0], rds=[0, 0], rdms=[0, 0], wr=[0, 0], wrm=[0, 0], wrs=[0, 0],
                wrms=[0, 0], inflight=[0, 0, 0], io=[0, 0], wt=[0, 0])
    t.disks = [
        # maj, min, name, base (11 fields, in_flight ignored), deltas
        (8, 0, "sda", (3212093, 120331, 250123998, 21311012, 41233101, 13012331, 2633012880, 331210443,
                       0, 170231122, 352809977), part),
        (8, 1, "sda1", (3211833, 120331, 250112398, 21310233, 41233098, 13012331, 2633012856, 331210401,
                        0, 170230610, 352808420), part),
        (8, 16, "sdb", (51233, 1021, 6123380, 410233, 2211, 301, 180344, 20331, 0, 298133, 430564),
         flat),
        (253, 0, "dm-0", (3330012, 0, 250100010, 23411022, 54233100, 0, 2633000008, 451022331,
                          0, 171022331, 474433353), dm),
    ]
    t.diskfmt = 14
    t.sysblock = {
        "sda": SYSBLOCK_LEGACY_HDD,
        "sdb": SYSBLOCK_LEGACY_HDD,
        "dm-0": dict(rotational="1", scheduler="none", nr_requests="128", write_cache="write back",
                     dm_name="vg0-root"),
    }
    t.psi = None
    t.cpu_share = (22, 0, 9, 55, 12, 0, 2, 0, 0, 0)
    t.swap_total_kb = 8388604
    t.story = ("A 4-CPU, 16 GiB server (sda = LVM PV on sda1 holding dm-0 `vg0-root`, sdb an idle "
               "data disk) with the page cache full: an application dirties ~28k pages/s "
               "(~110 MB/s) of buffered writes into vg0-root, writeback pushes ~50 MB/s to sda, and "
               "kswapd reclaims clean cache (one short direct-reclaim burst in the first interval).")
    return t


def tree_54():
    t = Tree()
    t.name = "kernel-5.4-diskstats18"
    t.kernel = "5.4"
    t.ncpu = 8
    t.sysctl = dict(dirty_ratio=20, dirty_background_ratio=0, dirty_bytes=0,
                    dirty_background_bytes=268435456,
                    dirty_expire_centisecs=3000, dirty_writeback_centisecs=500, min_free_kbytes=90112,
                    watermark_scale_factor=10, swappiness=10)
    t.zones = make_zones([
        ("DMA", 4095, 3998, 3977, 1, 12, 0),
        ("DMA32", 1044480, 765810, 749426, 4096, 56, 0),
        ("Normal", 7340032, 7340032, 7212345, 1048576, 80, 0),
        ("Movable", 0, 0, 0, 0, 0, 0),
        ("Device", 0, 0, 0, 0, 0, 0),
    ])
    setup_wmarks(t.zones, t.sysctl["min_free_kbytes"], t.sysctl["watermark_scale_factor"], "post46")
    setup_lowmem_reserve(t.zones, [256, 256, 32, 0, 0])
    t.uptime0 = 15043.81
    t.zone_free = {"DMA": [3968, 3968, 3968], "DMA32": [641022, 640310, 639877],
                   "Normal": [5167340, 5145840, 5128057], "Movable": [0, 0, 0], "Device": [0, 0, 0]}
    t.active_file = [612004, 613880, 615102]
    t.inactive_file = [498223, 516340, 531811]
    t.active_anon = [803112, 803377, 803420]
    t.inactive_anon = [41020, 41034, 41047]
    t.unevictable = [8, 8, 8]
    t.mlock = [8, 8, 8]
    t.anon_pages = [798330, 798602, 798651]
    t.shmem = [45802, 45809, 45816]
    t.mapped = [150233, 150301, 150288]
    t.buffers = [52310, 52355, 52402]
    t.swapcache = [0, 0, 0]
    t.dirty = [12880, 14210, 9734]
    t.writeback = [0, 620, 2302]
    t.slab_recl = [101233, 101250, 101244]
    t.slab_unrecl = [48112, 48120, 48131]
    t.kernel_stack_kb = [22432, 22448, 22448]
    t.page_tables = [12233, 12240, 12251]
    t.misc_recl = [3210, 3210, 3210]          # 4.20+: KReclaimable = SReclaimable + this
    t.written_d = [6812, 7288]                # = (p1 + p2 sectors written) / 8
    t.dirtied_d = [None, None]
    t.events = dict(
        pgscan_kswapd=(0, [0, 0]),
        pgscan_direct=(0, [0, 0]),
        pgsteal_kswapd=(0, [0, 0]),
        pgsteal_direct=(0, [0, 0]),
        allocstall_dma=(0, [0, 0]),
        allocstall_dma32=(0, [0, 0]),
        allocstall_normal=(0, [0, 0]),
        allocstall_movable=(0, [0, 0]),
        workingset_refault=(0, [0, 0]),
        workingset_activate=(0, [0, 0]),
        workingset_restore=(0, [0, 0]),
        pswpin=(0, [0, 0]),
        pswpout=(0, [0, 0]),
        pgmajfault=(41233, [4310, 4074]),
        pgfault=(201233981, [184331, 176020]),
        pageoutrun=(0, [0, 0]),
        slabs_scanned=(0, [0, 0]),
    )
    # 18 fields = 3 + 15: ... + discards, discard_merges, discard_sectors, discard_ms
    p1 = dict(rd=[210, 180], rdm=[0, 0], rds=[13440, 11520], rdms=[95, 81],
              wr=[850, 910], wrm=[120, 140], wrs=[54400, 58240], wrms=[1105, 1183],
              inflight=[0, 2, 0], io=[260, 330], wt=[1200, 1304],
              dc=[0, 24], dcm=[0, 0], dcs=[0, 2097152], dcms=[0, 40])
    p2 = dict(rd=[4096, 3890], rdm=[0, 0], rds=[32768, 31120], rdms=[1230, 1167],
              wr=[12, 8], wrm=[0, 0], wrs=[96, 64], wrms=[6, 4],
              inflight=[1, 0, 3], io=[370, 350], wt=[1236, 1171],
              dc=[0, 0], dcm=[0, 0], dcs=[0, 0], dcms=[0, 0])
    disk = {k: [a + b for a, b in zip(p1[k], p2[k])] for k in p1}
    disk["io"] = [612, 640]                   # whole-disk busy time is not the sum of partitions
    md = dict(rd=[4096, 3890], rdm=[0, 0], rds=[32768, 31120], rdms=[0, 0],
              wr=[12, 8], wrm=[0, 0], wrs=[96, 64], wrms=[0, 0],
              inflight=[0, 0, 0], io=[0, 0], wt=[0, 0],
              dc=[0, 0], dcm=[0, 0], dcs=[0, 0], dcms=[0, 0])
    t.disks = [
        (259, 0, "nvme0n1", (1233012, 2213, 80123312, 410233, 2311023, 310233, 190233128, 2810331,
                             0, 3101233, 3223011, 1130, 0, 220332160, 1822), disk),
        (259, 1, "nvme0n1p1", (410233, 2213, 60311320, 201233, 2301001, 310233, 190122016, 2801220,
                               0, 2231002, 3002453, 1130, 0, 220332160, 1822), p1),
        (259, 2, "nvme0n1p2", (822731, 0, 19809800, 208990, 10020, 0, 111080, 9111,
                               0, 870102, 218101, 0, 0, 0, 0), p2),
        (9, 0, "md0", (822701, 0, 19809560, 0, 10018, 0, 111064, 0, 0, 0, 0, 0, 0, 0, 0), md),
    ]
    t.diskfmt = 18
    t.sysblock = {
        "nvme0n1": dict(rotational="0", scheduler="[none] mq-deadline ", nr_requests="1023",
                        write_cache="write back"),
        "md0": dict(rotational="0", scheduler="none", nr_requests="128", write_cache="write back"),
    }
    # PSI: cpu has ONLY a "some" line (4.20-5.12); memory and io have some+full. total in µs.
    t.psi = dict(
        cpu=dict(some=(81233012, [112500, 98300], [(9.80, 7.12, 3.30), (10.61, 7.31, 3.35), (10.20, 7.40, 3.38)])),
        memory=dict(some=(120331, [1250, 0], [(0.00, 0.00, 0.00), (0.11, 0.02, 0.00), (0.10, 0.02, 0.00)]),
                    full=(80112, [0, 0], [(0.00, 0.00, 0.00)] * 3)),
        io=dict(some=(30123311, [85100, 91420], [(7.90, 5.61, 2.80), (7.97, 5.70, 2.82), (8.17, 5.80, 2.84)]),
                full=(21120331, [61200, 70115], [(5.51, 4.02, 2.01), (5.58, 4.08, 2.03), (5.72, 4.15, 2.05)])),
    )
    t.cpu_share = (61, 2, 14, 18, 3, 0, 2, 0, 0, 0)
    t.swap_total_kb = 2097148
    t.story = ("An 8-CPU, 32 GiB NVMe workstation: nvme0n1p1 is the ext4 root (a build writes "
               "~27-29 MB/s; `fstrim` issues 24 discards = 1 GiB between 001 and 002), nvme0n1p2 is "
               "the only member of md0 (random 4 KiB reads at ~4k IOPS through md0). No memory "
               "pressure: reclaim counters are flat at 0. Mixed dirty mode: dirty_ratio=20 but "
               "dirty_background_bytes=256 MiB (so dirty_background_ratio reads 0).")
    return t


def tree_44():
    t = Tree()
    t.name = "kernel-4.4-vmstat-prezone"
    t.kernel = "4.4"
    t.ncpu = 2
    # 4.4 has no vm.watermark_scale_factor (added in 4.6): that file is absent from the tree.
    t.sysctl = dict(dirty_ratio=30, dirty_background_ratio=5, dirty_bytes=0, dirty_background_bytes=0,
                    dirty_expire_centisecs=3000, dirty_writeback_centisecs=500, min_free_kbytes=45056,
                    swappiness=60)
    t.zones = make_zones([
        ("DMA", 4095, 3998, 3977, 1, 4, 1),
        ("DMA32", 1044480, 782302, 763270, 4096, 20, 4),
        ("Normal", 1310720, 1310720, 1284110, 1048576, 24, 5),
        ("Movable", 0, 0, 0, 0, 0, 0),        # empty: NOT printed by 4.4 zoneinfo
    ])
    setup_wmarks(t.zones, t.sysctl["min_free_kbytes"], 0, "pre46")
    setup_lowmem_reserve(t.zones, [256, 256, 32, 0])
    t.uptime0 = 2093311.06
    t.zone_free = {"DMA": [3890, 3889, 3890], "DMA32": [21500, 4102, 3980],
                   "Normal": [12300, 7120, 6880], "Movable": [0, 0, 0]}
    t.active_file = [180220, 176410, 171905]
    t.inactive_file = [95310, 90122, 88470]
    t.active_anon = [1451233, 1473120, 1480231]
    t.inactive_anon = [160123, 161200, 161877]
    t.unevictable = [0, 0, 0]
    t.mlock = [0, 0, 0]
    t.anon_pages = [1598300, 1621270, 1629052]
    t.shmem = [12056, 12050, 12056]
    t.mapped = [31233, 30877, 30790]
    t.buffers = [8120, 8090, 8088]
    t.swapcache = [1200, 1210, 1232]
    t.dirty = [1210, 1190, 1262]
    t.writeback = [40, 22, 15]
    t.slab_recl = [30221, 29870, 29502]
    t.slab_unrecl = [14330, 14331, 14329]
    t.kernel_stack = [612, 612, 614]          # 4.4: number of 16 KiB stacks; KernelStack = x*16 kB
    t.kernel_stack_kb = [x * 16 for x in t.kernel_stack]
    t.page_tables = [6011, 6080, 6102]
    t.misc_recl = None
    t.written_d = [70, 56]                    # fs writeback pages (swap-out is separate: pswpout)
    t.dirtied_d = [None, None]
    # Pre-4.8 per-zone reclaim counters: (base per zone dma,dma32,normal,movable ; deltas per interval)
    t.zonal = dict(
        pgscan_kswapd=((0, 4123310, 9810233, 0), [(0, 2048, 5120, 0), (0, 1536, 3584, 0)]),
        pgscan_direct=((0, 912233, 2011023, 0), [(0, 640, 1408, 0), (0, 320, 704, 0)]),
        pgsteal_kswapd=((0, 3912011, 9402212, 0), [(0, 1902, 4733, 0), (0, 1470, 3371, 0)]),
        pgsteal_direct=((0, 861002, 1910231, 0), [(0, 601, 1297, 0), (0, 297, 650, 0)]),
        pgrefill=((0, 2012331, 4503311, 0), [(0, 810, 2210, 0), (0, 502, 1460, 0)]),
        pgalloc=((1, 98233101, 402331123, 0), [(0, 9120, 20311, 0), (0, 7230, 15010, 0)]),
    )
    t.events = dict(
        allocstall=(43310, [9, 4]),
        pswpin=(310233, [88, 140]),
        pswpout=(1201233, [1210, 860]),
        pgmajfault=(612033, [1332, 911]),
        pgfault=(8123310233, [30211, 22870]),
        pageoutrun=(120331, [14, 9]),
        slabs_scanned=(4123904, [3072, 2048]),
    )
    t.zonal_gauge_weights = (0, 37, 63, 0)    # split of LRU/other zone counters DMA:DMA32:Normal
    t.refault_zone_d = [(0, 480, 830, 0), (0, 330, 575, 0)]
    t.refault_base = (0, 801233, 1410233, 0)
    t.activate_zone_d = [(0, 150, 252, 0), (0, 101, 170, 0)]
    t.activate_base = (0, 210331, 390122, 0)
    # diskstats, 14 fields. vda1 carries all I/O; vda = vda1 + its own older history.
    part = dict(rd=[1420, 1051], rdm=[85, 60], rds=[12688, 9552], rdms=[11360, 9459],
                wr=[310, 228], wrm=[920, 610], wrs=[10240, 7328], wrms=[2480, 1824],
                inflight=[2, 5, 1], io=[968, 931], wt=[13890, 11301])
    flat = dict(rd=[0, 0], rdm=[0, 0], rds=[0, 0], rdms=[0, 0], wr=[0, 0], wrm=[0, 0], wrs=[0, 0],
                wrms=[0, 0], inflight=[0, 0, 0], io=[0, 0], wt=[0, 0])
    t.disks = [
        (253, 0, "vda", (9120331, 301233, 412033120, 88120331, 3310233, 4120331, 301233120, 41023311,
                         0, 61233012, 129310233), part),
        (253, 1, "vda1", (9119911, 301233, 412012100, 88119870, 3310201, 4120331, 301232864, 41023201,
                          0, 61232450, 129309011), part),
        (11, 0, "sr0", (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), flat),
    ]
    t.diskfmt = 14
    t.sysblock = {
        # 4.4: no queue/write_cache attribute (added in 4.7) -> not written
        "vda": dict(rotational="1", scheduler="none", nr_requests="128"),
        "sr0": dict(rotational="1", scheduler="noop deadline [cfq] ", nr_requests="128"),
    }
    t.psi = None
    t.cpu_share = (30, 0, 18, 10, 40, 0, 2, 0, 0, 0)
    t.swap_total_kb = 2097148
    t.story = ("A 2-CPU, 8 GiB KVM guest on a 4.4 kernel under anonymous-memory pressure: a "
               "process grows its heap by ~90 MB/s, kswapd and direct reclaim scan both DMA32 and "
               "Normal, file pages refault from vda, and the guest swaps to a swap file on vda1. "
               "vm.watermark_scale_factor does not exist on 4.4, so proc/sys/vm/watermark_scale_factor "
               "is deliberately absent; queue/write_cache (4.7+) is absent too.")
    return t


# --------------------------------------------------------------------------------------------
# Build a root
# --------------------------------------------------------------------------------------------

def derive(t):
    """Compute per-root derived values and store them on t.roots[i]."""
    n = 3
    t.roots = []
    for i in range(n):
        r = {}
        zones = zone_copy(t.zones)
        for z in zones:
            z["free"] = t.zone_free[z["name"]][i]
        r["zones"] = zones
        r["free"] = sum(z["free"] for z in zones)
        r["file_lru"] = t.active_file[i] + t.inactive_file[i]
        r["reserve"], r["reserve_parts"] = totalreserve(zones)
        r["sum_low"] = sum(z["low"] for z in zones)
        r["dirty"] = dirty_limits(r["free"], r["reserve"], r["file_lru"], t.sysctl)
        recl = t.slab_recl[i] + (t.misc_recl[i] if t.misc_recl else 0)
        r["reclaimable"] = recl
        r["memavail"] = mem_available(r["free"], r["reserve"], r["file_lru"], recl, r["sum_low"])
        r["uptime"] = round(t.uptime0 + i * 1.00, 2)
        t.roots.append(r)
    # cumulative: dirtied = Δ(dirty+writeback) + written (pages flow dirty -> writeback -> clean)
    t.written = cum(1033120331 if t.kernel != "4.4" else 41233012, t.written_d)
    dd = []
    for i in range(1, n):
        d = (t.dirty[i] + t.writeback[i]) - (t.dirty[i - 1] + t.writeback[i - 1]) + t.written_d[i - 1]
        assert d >= 0, (t.name, i, d)
        dd.append(d)
    t.dirtied_d = dd
    t.dirtied = cum(t.written[0] + 12331012, dd)
    # sanity: memory accounting fits in MemTotal
    total = sum(z["managed"] for z in t.zones)
    for i, r in enumerate(t.roots):
        used = (r["free"] + r["file_lru"] + t.active_anon[i] + t.inactive_anon[i] + t.unevictable[i]
                + t.slab_recl[i] + t.slab_unrecl[i] + t.page_tables[i] + t.kernel_stack_kb[i] // 4)
        assert used <= total, (t.name, i, used, total)
        # zone free must stay above 0 and below managed
        for z in r["zones"]:
            assert 0 <= z["free"] <= z["managed"], (t.name, z)


def disk_rows(t, i):
    rows = []
    keys14 = ["rd", "rdm", "rds", "rdms", "wr", "wrm", "wrs", "wrms", "inflight", "io", "wt"]
    keys18 = keys14 + ["dc", "dcm", "dcs", "dcms"]
    keys = keys14 if t.diskfmt == 14 else keys18
    for maj, mnr, name, base, d in t.disks:
        f = []
        for k, b in zip(keys, base):
            if k == "inflight":
                f.append(d["inflight"][i])
            else:
                f.append(b + sum(d[k][:i]))
        rows.append((maj, mnr, name, f))
    return rows


def vmstat_items(t, i):
    """Ordered (name, value) list for /proc/vmstat in the tree's era."""
    r = t.roots[i]
    ev = {k: cum(b, d)[i] for k, (b, d) in t.events.items()}
    file_pages = t.active_file[i] + t.inactive_file[i] + t.shmem[i] + t.swapcache[i]
    common_node = dict(
        nr_inactive_anon=t.inactive_anon[i], nr_active_anon=t.active_anon[i],
        nr_inactive_file=t.inactive_file[i], nr_active_file=t.active_file[i],
        nr_unevictable=t.unevictable[i], nr_slab_reclaimable=t.slab_recl[i],
        nr_slab_unreclaimable=t.slab_unrecl[i], nr_isolated_anon=0, nr_isolated_file=0,
        nr_anon_pages=t.anon_pages[i], nr_mapped=t.mapped[i], nr_file_pages=file_pages,
        nr_dirty=t.dirty[i], nr_writeback=t.writeback[i], nr_writeback_temp=0, nr_shmem=t.shmem[i],
        nr_unstable=0, nr_vmscan_write=0, nr_vmscan_immediate_reclaim=0,
        nr_dirtied=t.dirtied[i], nr_written=t.written[i])
    # pgpgin/pgpgout (KiB) = sectors submitted at the top of the stack / 2
    top = [row for row in disk_rows(t, i) if row[2] in t.top_devices]
    pgpgin = t.pgpg_base[0] + sum(row[3][2] for row in top) // 2
    pgpgout = t.pgpg_base[1] + sum(row[3][6] for row in top) // 2
    if t.kernel in ("4.14", "5.4"):
        zone_items = [
            ("nr_free_pages", r["free"]),
            ("nr_zone_inactive_anon", t.inactive_anon[i]), ("nr_zone_active_anon", t.active_anon[i]),
            ("nr_zone_inactive_file", t.inactive_file[i]), ("nr_zone_active_file", t.active_file[i]),
            ("nr_zone_unevictable", t.unevictable[i]),
            ("nr_zone_write_pending", t.dirty[i] + t.writeback[i]),
            ("nr_mlock", t.mlock[i]), ("nr_page_table_pages", t.page_tables[i]),
            ("nr_kernel_stack", t.kernel_stack_kb[i]), ("nr_bounce", 0), ("nr_zspages", 0),
            ("nr_free_cma", 0),
            ("numa_hit", 9123312011 + 40331 * i), ("numa_miss", 0), ("numa_foreign", 0),
            ("numa_interleave", 41233), ("numa_local", 9123312011 + 40331 * i), ("numa_other", 0),
        ]
        node = [(k, common_node[k]) for k in (
            "nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file", "nr_unevictable",
            "nr_slab_reclaimable", "nr_slab_unreclaimable", "nr_isolated_anon", "nr_isolated_file")]
        if t.kernel == "5.4":
            node.append(("workingset_nodes", 10233))
        node += [("workingset_refault", ev["workingset_refault"]),
                 ("workingset_activate", ev["workingset_activate"])]
        if t.kernel == "5.4":
            node.append(("workingset_restore", ev["workingset_restore"]))
        node.append(("workingset_nodereclaim", 0))
        node += [(k, common_node[k]) for k in (
            "nr_anon_pages", "nr_mapped", "nr_file_pages", "nr_dirty", "nr_writeback",
            "nr_writeback_temp", "nr_shmem")]
        node += [("nr_shmem_hugepages", 0), ("nr_shmem_pmdmapped", 0)]
        if t.kernel == "5.4":
            node += [("nr_file_hugepages", 0), ("nr_file_pmdmapped", 0)]
        node += [("nr_anon_transparent_hugepages", 112 if t.kernel == "5.4" else 31)]
        node += [(k, common_node[k]) for k in (
            "nr_unstable", "nr_vmscan_write", "nr_vmscan_immediate_reclaim", "nr_dirtied", "nr_written")]
        if t.kernel == "5.4":
            node.append(("nr_kernel_misc_reclaimable", t.misc_recl[i]))
        t._node_items = node
        items = zone_items + node
        items += [("nr_dirty_threshold", r["dirty"]["thresh"]),
                  ("nr_dirty_background_threshold", r["dirty"]["bg"])]
        items += [("pgpgin", pgpgin), ("pgpgout", pgpgout),
                  ("pswpin", ev["pswpin"]), ("pswpout", ev["pswpout"]),
                  ("pgalloc_dma", 1), ("pgalloc_dma32", 301233101 + 8120 * i),
                  ("pgalloc_normal", 9802331233 + 33120 * i), ("pgalloc_movable", 0),
                  ("allocstall_dma", ev["allocstall_dma"]), ("allocstall_dma32", ev["allocstall_dma32"]),
                  ("allocstall_normal", ev["allocstall_normal"]),
                  ("allocstall_movable", ev["allocstall_movable"]),
                  ("pgskip_dma", 0), ("pgskip_dma32", 0), ("pgskip_normal", 0), ("pgskip_movable", 0),
                  ("pgfree", 10203311233 + 43011 * i), ("pgactivate", 412331023 + 1203 * i),
                  ("pgdeactivate", 301233 + 412 * i), ("pglazyfree", 0),
                  ("pgfault", ev["pgfault"]), ("pgmajfault", ev["pgmajfault"]), ("pglazyfreed", 0),
                  ("pgrefill", 401233101 + 3120 * i),
                  ("pgsteal_kswapd", ev["pgsteal_kswapd"]), ("pgsteal_direct", ev["pgsteal_direct"]),
                  ("pgscan_kswapd", ev["pgscan_kswapd"]), ("pgscan_direct", ev["pgscan_direct"]),
                  ("pgscan_direct_throttle", 0), ("zone_reclaim_failed", 0), ("pginodesteal", 0),
                  ("slabs_scanned", ev["slabs_scanned"]), ("kswapd_inodesteal", 1203),
                  ("kswapd_low_wmark_hit_quickly", 12033), ("kswapd_high_wmark_hit_quickly", 3120),
                  ("pageoutrun", ev["pageoutrun"]), ("pgrotated", 23310), ("drop_pagecache", 0),
                  ("drop_slab", 0), ("oom_kill", 0),
                  ("numa_pte_updates", 0), ("numa_huge_pte_updates", 0), ("numa_hint_faults", 0),
                  ("numa_hint_faults_local", 0), ("numa_pages_migrated", 0),
                  ("pgmigrate_success", 120331), ("pgmigrate_fail", 12),
                  ("compact_migrate_scanned", 1203311), ("compact_free_scanned", 4120331),
                  ("compact_isolated", 250331), ("compact_stall", 31), ("compact_fail", 4),
                  ("compact_success", 27), ("compact_daemon_wake", 1203),
                  ("compact_daemon_migrate_scanned", 120331), ("compact_daemon_free_scanned", 412033),
                  ("htlb_buddy_alloc_success", 0), ("htlb_buddy_alloc_fail", 0),
                  ("unevictable_pgs_culled", 12033), ("unevictable_pgs_scanned", 0),
                  ("unevictable_pgs_rescued", 1120), ("unevictable_pgs_mlocked", 13153),
                  ("unevictable_pgs_munlocked", 12129), ("unevictable_pgs_cleared", 0),
                  ("unevictable_pgs_stranded", 0),
                  ("thp_fault_alloc", 1203), ("thp_fault_fallback", 12), ("thp_collapse_alloc", 120),
                  ("thp_collapse_alloc_failed", 0), ("thp_file_alloc", 0), ("thp_file_mapped", 0),
                  ("thp_split_page", 31), ("thp_split_page_failed", 0), ("thp_deferred_split_page", 33),
                  ("thp_split_pmd", 40), ("thp_split_pud", 0), ("thp_zero_page_alloc", 1),
                  ("thp_zero_page_alloc_failed", 0), ("thp_swpout", 0), ("thp_swpout_fallback", 0),
                  ("balloon_inflate", 0), ("balloon_deflate", 0), ("balloon_migrate", 0),
                  ("swap_ra", 0), ("swap_ra_hit", 0)]
        return items, zone_items
    # ---- 4.4: pre-4.8, all LRU/state counters are per-zone zone_stat_items ----
    zonal = {k: [b + sum(d[z] for d in ds[:i]) for z, b in enumerate(base)]
             for k, (base, ds) in t.zonal.items()}
    refault = [b + sum(d[z] for d in t.refault_zone_d[:i]) for z, b in enumerate(t.refault_base)]
    activate = [b + sum(d[z] for d in t.activate_zone_d[:i]) for z, b in enumerate(t.activate_base)]
    zone_vals = [
        ("nr_free_pages", r["free"]), ("nr_alloc_batch", 1301),
        ("nr_inactive_anon", t.inactive_anon[i]), ("nr_active_anon", t.active_anon[i]),
        ("nr_inactive_file", t.inactive_file[i]), ("nr_active_file", t.active_file[i]),
        ("nr_unevictable", t.unevictable[i]), ("nr_mlock", t.mlock[i]),
        ("nr_anon_pages", t.anon_pages[i]), ("nr_mapped", t.mapped[i]), ("nr_file_pages", file_pages),
        ("nr_dirty", t.dirty[i]), ("nr_writeback", t.writeback[i]),
        ("nr_slab_reclaimable", t.slab_recl[i]), ("nr_slab_unreclaimable", t.slab_unrecl[i]),
        ("nr_page_table_pages", t.page_tables[i]), ("nr_kernel_stack", t.kernel_stack[i]),
        ("nr_unstable", 0), ("nr_bounce", 0), ("nr_vmscan_write", 1211233 + 1210 * i),
        ("nr_vmscan_immediate_reclaim", 1203), ("nr_writeback_temp", 0),
        ("nr_isolated_anon", 0), ("nr_isolated_file", 0), ("nr_shmem", t.shmem[i]),
        ("nr_dirtied", t.dirtied[i]), ("nr_written", t.written[i]), ("nr_pages_scanned", 0),
        ("numa_hit", 8120331233 + 30211 * i), ("numa_miss", 0), ("numa_foreign", 0),
        ("numa_interleave", 21033), ("numa_local", 8120331233 + 30211 * i), ("numa_other", 0),
        ("workingset_refault", sum(refault)), ("workingset_activate", sum(activate)),
        ("workingset_nodereclaim", 1233), ("nr_anon_transparent_hugepages", 0), ("nr_free_cma", 0),
    ]
    t._zone_refault, t._zone_activate = refault, activate
    items = list(zone_vals)
    items += [("nr_dirty_threshold", r["dirty"]["thresh"]),
              ("nr_dirty_background_threshold", r["dirty"]["bg"])]
    sfx = ["dma", "dma32", "normal", "movable"]
    items += [("pgpgin", pgpgin), ("pgpgout", pgpgout), ("pswpin", ev["pswpin"]), ("pswpout", ev["pswpout"])]
    items += [(f"pgalloc_{s}", zonal["pgalloc"][k]) for k, s in enumerate(sfx)]
    items += [("pgfree", 10233120331 + 29331 * i), ("pgactivate", 312033101 + 2210 * i),
              ("pgdeactivate", 292331233 + 3120 * i), ("pgfault", ev["pgfault"]),
              ("pgmajfault", ev["pgmajfault"])]
    items += [(f"pgrefill_{s}", zonal["pgrefill"][k]) for k, s in enumerate(sfx)]
    items += [(f"pgsteal_kswapd_{s}", zonal["pgsteal_kswapd"][k]) for k, s in enumerate(sfx)]
    items += [(f"pgsteal_direct_{s}", zonal["pgsteal_direct"][k]) for k, s in enumerate(sfx)]
    items += [(f"pgscan_kswapd_{s}", zonal["pgscan_kswapd"][k]) for k, s in enumerate(sfx)]
    items += [(f"pgscan_direct_{s}", zonal["pgscan_direct"][k]) for k, s in enumerate(sfx)]
    items += [("pgscan_direct_throttle", 0), ("zone_reclaim_failed", 0), ("pginodesteal", 0),
              ("slabs_scanned", ev["slabs_scanned"]), ("kswapd_inodesteal", 31203),
              ("kswapd_low_wmark_hit_quickly", 20331), ("kswapd_high_wmark_hit_quickly", 9120),
              ("pageoutrun", ev["pageoutrun"]), ("allocstall", ev["allocstall"]),
              ("pgrotated", 412033 + 310 * i), ("drop_pagecache", 0), ("drop_slab", 0),
              ("numa_pte_updates", 0), ("numa_huge_pte_updates", 0), ("numa_hint_faults", 0),
              ("numa_hint_faults_local", 0), ("numa_pages_migrated", 0),
              ("pgmigrate_success", 31203), ("pgmigrate_fail", 3),
              ("compact_migrate_scanned", 912033), ("compact_free_scanned", 3120331),
              ("compact_isolated", 120331), ("compact_stall", 120), ("compact_fail", 31),
              ("compact_success", 89), ("htlb_buddy_alloc_success", 0), ("htlb_buddy_alloc_fail", 0),
              ("unevictable_pgs_culled", 3120), ("unevictable_pgs_scanned", 0),
              ("unevictable_pgs_rescued", 412), ("unevictable_pgs_mlocked", 3532),
              ("unevictable_pgs_munlocked", 3532), ("unevictable_pgs_cleared", 0),
              ("unevictable_pgs_stranded", 0),
              ("thp_fault_alloc", 312), ("thp_fault_fallback", 41), ("thp_collapse_alloc", 31),
              ("thp_collapse_alloc_failed", 2), ("thp_split", 12), ("thp_zero_page_alloc", 1),
              ("thp_zero_page_alloc_failed", 0),
              ("balloon_inflate", 0), ("balloon_deflate", 0), ("balloon_migrate", 0)]
    return items, zone_vals


def zone_item_splitter(t, i, zone_vals, zones):
    """Per-zone values for zone stat items: nr_free_pages = the zone's own free; gauges split
    DMA32/Normal by weights (DMA gets 0); reclaim-ish counters per zone from the zonal data."""
    idx = {z["name"]: k for k, z in enumerate(zones)}
    weights = getattr(t, "zonal_gauge_weights", None) or tuple(
        0 if z["name"] in ("DMA", "Movable", "Device") else (18 if z["name"] == "DMA32" else 82)
        for z in zones)
    cache = {}
    for k, v in zone_vals:
        if k == "nr_free_pages":
            cache[k] = [z["free"] for z in zones]
        elif k in ("workingset_refault",):
            cache[k] = list(t._zone_refault)
        elif k in ("workingset_activate",):
            cache[k] = list(t._zone_activate)
        elif k.startswith("numa_") or k in ("nr_alloc_batch",):
            # numa counters / alloc batch: give DMA a tiny share, rest by weights
            parts = split(v, [1 if zones[j]["name"] == "DMA" else weights[j] for j in range(len(zones))])
            cache[k] = parts
        else:
            cache[k] = split(v, list(weights))

    def items(z):
        j = idx[z["name"]]
        return [(k, cache[k][j]) for k, _ in zone_vals]
    return items


def build_tree(t, outdir):
    derive(t)
    root_dir = os.path.join(outdir, t.name)
    if os.path.exists(root_dir):
        shutil.rmtree(root_dir)
    os.makedirs(root_dir)
    write(os.path.join(root_dir, "page_size"), f"{PAGE}\n")
    total_pages = sum(z["managed"] for z in t.zones)
    for i, r in enumerate(t.roots):
        base = os.path.join(root_dir, f"{i:03d}")
        items, zone_vals = vmstat_items(t, i)
        write(os.path.join(base, "proc/vmstat"), "".join(f"{k} {v}\n" for k, v in items))
        # ---- zoneinfo ----
        zsplit = zone_item_splitter(t, i, zone_vals, r["zones"])
        if t.kernel == "4.4":
            zi = zoneinfo_44(r["zones"], zsplit, t.ncpu)
        else:
            zi = zoneinfo_node_era(r["zones"], t._node_items, zsplit, t.ncpu, t.kernel)
        write(os.path.join(base, "proc/zoneinfo"), zi)
        # ---- meminfo ----
        kb = KB_PER_PAGE
        file_pages = t.active_file[i] + t.inactive_file[i] + t.shmem[i] + t.swapcache[i]
        cached = file_pages - t.swapcache[i] - t.buffers[i]
        swap_used_kb = {"4.4": 1310720, "4.14": 0, "5.4": 0}[t.kernel]
        rows = [("MemTotal", total_pages * kb), ("MemFree", r["free"] * kb),
                ("MemAvailable", r["memavail"]["pages"] * kb), ("Buffers", t.buffers[i] * kb),
                ("Cached", cached * kb), ("SwapCached", t.swapcache[i] * kb),
                ("Active", (t.active_anon[i] + t.active_file[i]) * kb),
                ("Inactive", (t.inactive_anon[i] + t.inactive_file[i]) * kb),
                ("Active(anon)", t.active_anon[i] * kb), ("Inactive(anon)", t.inactive_anon[i] * kb),
                ("Active(file)", t.active_file[i] * kb), ("Inactive(file)", t.inactive_file[i] * kb),
                ("Unevictable", t.unevictable[i] * kb), ("Mlocked", t.mlock[i] * kb),
                ("SwapTotal", t.swap_total_kb), ("SwapFree", t.swap_total_kb - swap_used_kb),
                ("Dirty", t.dirty[i] * kb), ("Writeback", t.writeback[i] * kb),
                ("AnonPages", t.anon_pages[i] * kb), ("Mapped", t.mapped[i] * kb),
                ("Shmem", t.shmem[i] * kb)]
        if t.misc_recl is not None:
            rows.append(("KReclaimable", (t.slab_recl[i] + t.misc_recl[i]) * kb))
        rows += [("Slab", (t.slab_recl[i] + t.slab_unrecl[i]) * kb),
                 ("SReclaimable", t.slab_recl[i] * kb), ("SUnreclaim", t.slab_unrecl[i] * kb),
                 ("KernelStack", t.kernel_stack_kb[i]), ("PageTables", t.page_tables[i] * kb),
                 ("NFS_Unstable", 0), ("Bounce", 0), ("WritebackTmp", 0),
                 ("CommitLimit", total_pages * kb // 2 + t.swap_total_kb),
                 ("Committed_AS", (t.anon_pages[i] + t.shmem[i]) * kb * 3 // 2),
                 ("VmallocTotal", 34359738367), ("VmallocUsed", 0), ("VmallocChunk", 0)]
        if t.kernel == "5.4":
            rows.append(("Percpu", 12800))
        rows += [("HardwareCorrupted", 0), ("AnonHugePages", (112 if t.kernel == "5.4" else 31 if t.kernel == "4.14" else 0) * 2048)]
        if t.kernel in ("4.14", "5.4"):
            rows += [("ShmemHugePages", 0), ("ShmemPmdMapped", 0)]
        if t.kernel == "5.4":
            rows += [("FileHugePages", 0), ("FilePmdMapped", 0)]
        rows += [("CmaTotal", 0), ("CmaFree", 0),
                 ("HugePages_Total", 0), ("HugePages_Free", 0), ("HugePages_Rsvd", 0),
                 ("HugePages_Surp", 0), ("Hugepagesize", 2048)]
        if t.kernel == "5.4":
            rows.append(("Hugetlb", 0))
        rows += [("DirectMap4k", 212340), ("DirectMap2M", 6078464),
                 ("DirectMap1G", max(total_pages * kb - 6078464 - 212340, 0) // 1048576 * 1048576 + 1048576)]
        write(os.path.join(base, "proc/meminfo"), meminfo_text(rows))
        # ---- diskstats ----
        write(os.path.join(base, "proc/diskstats"), diskstats_text(disk_rows(t, i)))
        # ---- stat + uptime ----
        cpus = cpu_rows(t.ncpu, t.uptime0, t.cpu_share, i)
        extra = dict(intr=912331233 + 15231 * i, ctxt=1823312011 + 31220 * i,
                     btime=1700000000 - int(t.uptime0), processes=1203311 + 37 * i,
                     procs_running=[3, 5, 4][i], procs_blocked=[1, 2, 2][i],
                     softirq=412331011 + 9210 * i)
        write(os.path.join(base, "proc/stat"), stat_text(cpus, extra))
        write(os.path.join(base, "proc/uptime"), f"{r['uptime']:.2f} {uptime_idle(cpus):.2f}\n")
        # ---- pressure ----
        if t.psi:
            for res, lines in t.psi.items():
                txt = ""
                for kind in ("some", "full"):
                    if kind in lines:
                        b, d, avgs = lines[kind]
                        a = avgs[i] if len(avgs) > i else avgs[0]
                        txt += psi_line(kind, a[0], a[1], a[2], cum(b, d)[i])
                write(os.path.join(base, "proc/pressure", res), txt)
        # ---- sysctls ----
        for k, v in t.sysctl.items():
            write(os.path.join(base, "proc/sys/vm", k), f"{v}\n")
        # ---- sys/block ----
        for dev, attrs in t.sysblock.items():
            for k in ("rotational", "scheduler", "nr_requests", "write_cache"):
                if k in attrs:
                    write(os.path.join(base, "sys/block", dev, "queue", k), attrs[k] + "\n")
            if "dm_name" in attrs:
                write(os.path.join(base, "sys/block", dev, "dm/name"), attrs["dm_name"] + "\n")
    write(os.path.join(root_dir, "README.md"), readme(t))


# --------------------------------------------------------------------------------------------
# README generation
# --------------------------------------------------------------------------------------------

def fmt(n):
    return f"{n:,}".replace(",", " ")


def iostat_example(t, dev, k):
    """iostat -x style numbers for device dev over interval k (Δt = 1.00 s = 100 cs)."""
    d = next(x[4] for x in t.disks if x[2] == dev)
    itv = 100.0
    S = lambda v: v / itv * 100
    g = {key: d[key][k] for key in d if key != "inflight"}
    out = [f"{dev} {k:03d}→{k + 1:03d}:"]
    for p, io, m, sec, ms in (("r", "rd", "rdm", "rds", "rdms"), ("w", "wr", "wrm", "wrs", "wrms"),
                              ("d", "dc", "dcm", "dcs", "dcms")):
        if io not in g or (g[io] == 0 and p == "d"):
            continue
        n = g[io]
        pct = g[m] / (g[m] + n) * 100 if g[m] + n else 0
        aw = g[ms] / n if n else 0
        sz = g[sec] / n / 2 if n else 0
        out.append(f"{p}/s {S(n):.2f}, {p}kB/s {S(g[sec]) / 2:.2f}, {p}rqm/s {S(g[m]):.2f}, "
                   f"%{p}rqm {pct:.2f}, {p}_await {aw:.2f}, {p}areq-sz {sz:.2f},")
    out.append(f"aqu-sz {S(g['wt']) / 1000:.2f}, %util {S(g['io']) / 10:.2f}")
    return " ".join(out)


def readme(t):
    L = []
    A = L.append
    A(f"# {t.name} — synthetic Linux {t.kernel}-era tree")
    A("")
    A(f"**Synthetic.** Generated by `assets/trees/synth.py` (deterministic; re-run "
      f"`python3 assets/trees/synth.py` to rebuild, `--check` to verify). Not captured from a "
      f"machine; formats follow the {t.kernel} kernel's printers. 3 roots (`000`–`002`), "
      f"`proc/uptime` exactly 1.00 s apart, `page_size` = 4096.")
    A("")
    A("## Scenario")
    A("")
    A(t.story)
    A("")
    A("## Era features encoded")
    A("")
    if t.kernel == "4.14":
        A("- `/proc/diskstats`: 14 fields per line (3 + 11; discard fields came in 4.18).")
        A("- No `/proc/pressure` (PSI is 4.20+).")
        A("- `/proc/meminfo`: no `KReclaimable` (4.20+); MemAvailable uses SReclaimable.")
        A("- `/proc/vmstat`: 4.8+ node names `pgscan_kswapd`, `pgscan_direct`, `pgsteal_kswapd`, "
          "`pgsteal_direct`; per-zone `allocstall_dma/_dma32/_normal/_movable`; single "
          "`workingset_refault` (no `_anon/_file` split, 5.9); `nr_unstable` is a real line; "
          "`nr_kernel_stack` is in kB.")
        A("- `/proc/zoneinfo`: no `boost`, `promo`, `cma` lines; all zones printed (empty "
          "Movable with min/low/high 0/0/0 — the Movable min clamp is 5.13+); 4-entry protection.")
        A("- `sys/block`: sda and sdb `noop deadline [cfq] ` (legacy single-queue elevator; the "
          "kernel prints a trailing space), dm-0 `none` (bio-based dm) with `dm/name` = `vg0-root`. "
          "sda1 is a partition: in diskstats only, not under sys/block.")
    elif t.kernel == "5.4":
        A("- `/proc/diskstats`: 18 fields per line (3 + 15: discard fields, no flush fields — those are 5.5+).")
        A("- `/proc/pressure/cpu` has ONLY a `some` line (4.20–5.12 format); memory and io have some+full.")
        A("- `/proc/meminfo`: `KReclaimable` = SReclaimable + nr_kernel_misc_reclaimable·4 "
          "(3 210 pages = 12 840 kB of misc reclaimable, so KReclaimable ≠ SReclaimable on purpose).")
        A("- `/proc/vmstat`: node names as 4.14 plus `workingset_restore`, `workingset_nodes`, "
          "`nr_kernel_misc_reclaimable`; single `workingset_refault`; `nr_unstable` still a real line.")
        A("- `/proc/zoneinfo`: no `boost`/`cma`/`promo`; 5 zones (empty Movable and Device, 0/0/0).")
        A("- md0 reports ios/merges/sectors but **all time fields 0** (5.4 md only accounted "
          "ios+sectors; md io accounting came in 5.14): r_await/%util must come out 0, not NaN.")
        A("- `sys/block`: nvme0n1 rotational 0, `[none] mq-deadline ` (trailing space as printed), "
          "nr_requests 1023; md0 `none`. Partitions nvme0n1p1/p2 only in diskstats.")
    else:
        A("- `/proc/vmstat`: pre-4.8 names — per-zone `pgscan_kswapd_<zone>`, `pgscan_direct_<zone>`, "
          "`pgsteal_kswapd_<zone>`, `pgsteal_direct_<zone>`, `pgrefill_<zone>` for "
          "dma/dma32/normal/movable; single `allocstall`; single `workingset_refault`; "
          "`nr_dirty_threshold`/`nr_dirty_background_threshold` present (2.6.37+); LRU counters are "
          "zone items (`nr_inactive_file`, not `nr_zone_inactive_file`); `nr_kernel_stack` counts 16 KiB "
          "stacks (KernelStack = ×16 kB); `nr_alloc_batch`, `nr_pages_scanned` present.")
        A("- `/proc/meminfo`: MemAvailable present (3.14+), no KReclaimable, no ShmemHugePages.")
        A("- `/proc/zoneinfo`: 4.4 layout — only populated zones printed (no Movable block), zone "
          "stat items *before* `protection:`, `scanned` line, `all_unreclaimable`/`inactive_ratio` trailer.")
        A("- Watermarks use the pre-4.6 rule LOW = MIN + tmp/4, HIGH = MIN + tmp/2 (no "
          "watermark_scale_factor); **`proc/sys/vm/watermark_scale_factor` is absent** (sysctl is 4.6+).")
        A("- `/proc/diskstats`: 14 fields; no pressure dir; `sys/block/*/queue/write_cache` absent (4.7+); "
          "vda is blk-mq (scheduler `none`), sr0 legacy (`noop deadline [cfq] `).")
        A("- **Caveat:** a real 4.4 kernel computed MemAvailable as `free − Σlow + …` (the switch "
          "to `free − totalreserve` is v4.5, spec §2 History). As requested, this tree's "
          "MemAvailable follows spec §2 (totalreserve form) like the other trees; the 4.4-faithful "
          "value is listed below for reference. In 4.4 the dirty code subtracts "
          "`dirty_balance_reserve`, which 4.4 sets equal to `totalreserve_pages`, so §1.2 is faithful.")
    A("")
    A("## How the numbers were built")
    A("")
    A("Inputs typed into `synth.py`: zone sizes (spanned/present/managed), per-zone free pages, "
      "LRU sizes, dirty/writeback, slab, sysctls, counter bases and per-interval deltas, disk "
      "deltas. Everything below is derived:")
    A("")
    A("- MemTotal = Σ managed × 4 kB; MemFree = Σ zone `pages free` × 4 = `nr_free_pages` × 4 (mainline "
      "identity; the dev-VM anomaly of spec §1.7 is not reproduced).")
    A("- Meminfo ↔ vmstat: every kB value = pages × 4 (Active(file) = nr_active_file×4, Dirty = nr_dirty×4, "
      "SReclaimable = nr_slab_reclaimable×4, …); `nr_file_pages` = active_file + inactive_file + "
      "shmem + swapcache; Cached = nr_file_pages − SwapCached − Buffers; "
      "`nr_zone_write_pending` = nr_dirty + nr_writeback (4.8+).")
    A("- Zone counters: each zone's `pages free` is an input; other per-zone items are the global "
      "value split DMA32:Normal (DMA gets 0) so that Σ zones = the /proc/vmstat global exactly.")
    if t.kernel == "4.4":
        A(f"- Watermarks (§3.1, pre-4.6): pages_min = min_free_kbytes/4 = {t.sysctl['min_free_kbytes'] // 4}; "
          "tmp = pages_min·managed/Σmanaged; MIN = tmp; LOW = MIN + tmp>>2; HIGH = MIN + tmp>>1.")
    else:
        A(f"- Watermarks (§3.1, 4.6+): pages_min = min_free_kbytes/4 = {t.sysctl['min_free_kbytes'] // 4}; "
          f"tmp = pages_min·managed/Σmanaged; MIN = tmp; delta = max(tmp>>2, managed·"
          f"{t.sysctl['watermark_scale_factor']}/10000); LOW = MIN+delta; HIGH = MIN+2·delta.")
    A("- Protection (lowmem_reserve, ratios 256/256/32): zone i entry j = Σ managed(i+1..j) / ratio[i].")
    A("- totalreserve (§1.3) = Σ min(managed, high + max(protection)); Σlow over every zone.")
    A("- Dirty (§1.1/§1.2): avail = free − min(free, totalreserve) + (nr_active_file + nr_inactive_file) + 1; "
      "ratio = dirty_ratio·4096/100 (integer); thresh = ratio·avail/4096; bytes modes round up; "
      "if bg ≥ thresh then bg = thresh/2. Written into vmstat as nr_dirty_threshold / "
      "nr_dirty_background_threshold.")
    A("- MemAvailable (§2) = max(0, free − totalreserve + (LRUfile − min(LRUfile/2, Σlow)) + "
      f"({'KReclaimable' if t.misc_recl else 'SReclaimable'}/4 − min(that/2, Σlow))) pages, × 4 kB.")
    A("- Cumulative: nr_written Δ = sectors written on the filesystem's device / 8; nr_dirtied Δ = "
      "Δ(nr_dirty + nr_writeback) + nr_written Δ (so the dirty→writeback→clean flow balances); "
      "pgpgin/pgpgout Δ (KiB) = sectors read/written on the top-of-stack device / 2.")
    A("- /proc/stat: per CPU 100 jiffies/s split " + "/".join(map(str, t.cpu_share[:8])) +
      " (user/nice/system/idle/iowait/irq/softirq/steal) with ±1 user↔idle skew per CPU; "
      "uptime field 2 = Σ idle jiffies / 100.")
    A("")
    # zone table (root 000; watermarks/protection do not change)
    z0 = t.roots[0]["zones"]
    A("## Zones (constant across roots)")
    A("")
    A("| zone | managed | min | low | high | protection | reserve term min(managed, high+maxprot) |")
    A("|---|---|---|---|---|---|---|")
    for z, part in zip(z0, t.roots[0]["reserve_parts"]):
        A(f"| {z['name']} | {fmt(z['managed'])} | {z['min']} | {z['low']} | {z['high']} | "
          f"({', '.join(map(str, z['protection']))}) | {fmt(part)} |")
    A("")
    A(f"totalreserve = {' + '.join(fmt(p) for p in t.roots[0]['reserve_parts'])} = "
      f"**{fmt(t.roots[0]['reserve'])}**; Σlow = {' + '.join(str(z['low']) for z in z0)} = "
      f"**{fmt(t.roots[0]['sum_low'])}**.")
    A("")
    sc = t.sysctl
    A("## Expected values per root (pages unless marked)")
    A("")
    A(f"Sysctls: dirty_ratio={sc['dirty_ratio']}, dirty_background_ratio={sc['dirty_background_ratio']}, "
      f"dirty_bytes={sc['dirty_bytes']}, dirty_background_bytes={sc['dirty_background_bytes']}. "
      f"ratio = {t.roots[0]['dirty']['ratio']}/4096, bg_ratio = {t.roots[0]['dirty']['bg_ratio']}/4096.")
    A("")
    A("| root | uptime | free (MemFree/4) | LRU file | dirtyable avail | nr_dirty_threshold | nr_dirty_background_threshold | freerun | nr_dirty+nr_writeback | MemAvailable (kB) |")
    A("|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(t.roots):
        d = r["dirty"]
        A(f"| {i:03d} | {r['uptime']:.2f} | {fmt(r['free'])} | {fmt(r['file_lru'])} | {fmt(d['avail'])} | "
          f"**{fmt(d['thresh'])}** | **{fmt(d['bg'])}** | {fmt(d['freerun'])} | "
          f"{fmt(t.dirty[i] + t.writeback[i])} | **{fmt(r['memavail']['pages'] * 4)}** |")
    A("")
    A("Hand computation:")
    A("")
    for i, r in enumerate(t.roots):
        d, m = r["dirty"], r["memavail"]
        R = r["reserve"]
        fp = min(r["free"], R)
        A(f"- **{i:03d}**: avail = {fmt(r['free'])} − min({fmt(r['free'])}, {fmt(R)}) + {fmt(r['file_lru'])} + 1 "
          f"= {fmt(r['free'] - fp)} + {fmt(r['file_lru'])} + 1 = {fmt(d['avail'])}.")
        if sc["dirty_bytes"]:
            A(f"  thresh = ⌈{sc['dirty_bytes']}/4096⌉ = {fmt(d['thresh'])}.")
        else:
            A(f"  thresh = {d['ratio']}·{fmt(d['avail'])}/4096 = {fmt(d['thresh'])}.")
        if sc["dirty_background_bytes"]:
            A(f"  bg = ⌈{sc['dirty_background_bytes']}/4096⌉ = {fmt(d['bg'])} (< thresh, kept).")
        else:
            A(f"  bg = {d['bg_ratio']}·{fmt(d['avail'])}/4096 = {fmt(d['bg'])}.")
        lru, low, rec = r["file_lru"], r["sum_low"], r["reclaimable"]
        A(f"  MemAvailable = ({fmt(r['free'])} − {fmt(R)}) + ({fmt(lru)} − min({fmt(lru // 2)}, {fmt(low)})) "
          f"+ ({fmt(rec)} − min({fmt(rec // 2)}, {fmt(low)})) = {fmt(m['base'])} + {fmt(m['pagecache_term'])} "
          f"+ {fmt(m['reclaim_term'])} = {fmt(m['pages'])} pages = {fmt(m['pages'] * 4)} kB.")
        if t.kernel == "4.4":
            faithful = mem_available(r["free"], r["sum_low"], lru, rec, low)["pages"]
            A(f"  (Real-4.4 form, free − Σlow instead of − totalreserve: {fmt(faithful)} pages = "
              f"{fmt(faithful * 4)} kB — NOT what the file contains.)")
    A("")
    # rates
    A("## Rates between roots (Δt = 1.00 s, so per-second rate = Δ)")
    A("")
    if t.kernel == "4.4":
        A("Per-zone deltas and summed families (dma + dma32 + normal + movable):")
        A("")
        A("| counter family | Δ 000→001 per zone | Σ 000→001 (/s) | Δ 001→002 per zone | Σ 001→002 (/s) |")
        A("|---|---|---|---|---|")
        for fam in ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgrefill"):
            d1, d2 = t.zonal[fam][1]
            A(f"| `{fam}_*` | {'/'.join(map(str, d1))} | **{fmt(sum(d1))}** | {'/'.join(map(str, d2))} | **{fmt(sum(d2))}** |")
        for k in ("allocstall", "pswpin", "pswpout", "pgmajfault"):
            d = t.events[k][1]
            A(f"| `{k}` | – | **{fmt(d[0])}** | – | **{fmt(d[1])}** |")
        A(f"| `workingset_refault` | {'/'.join(map(str, t.refault_zone_d[0]))} | **{fmt(sum(t.refault_zone_d[0]))}** | "
          f"{'/'.join(map(str, t.refault_zone_d[1]))} | **{fmt(sum(t.refault_zone_d[1]))}** |")
    else:
        A("| counter | Δ 000→001 | Δ 001→002 |")
        A("|---|---|---|")
        for k in ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "allocstall_normal",
                  "workingset_refault", "pgmajfault"):
            d = t.events[k][1]
            A(f"| `{k}` | {fmt(d[0])} | {fmt(d[1])} |")
    A(f"| `nr_dirtied` | {fmt(t.dirtied_d[0])} | {fmt(t.dirtied_d[1])} |" if t.kernel != "4.4" else
      f"| `nr_dirtied` | – | **{fmt(t.dirtied_d[0])}** | – | **{fmt(t.dirtied_d[1])}** |")
    A(f"| `nr_written` | {fmt(t.written_d[0])} | {fmt(t.written_d[1])} |" if t.kernel != "4.4" else
      f"| `nr_written` | – | **{fmt(t.written_d[0])}** | – | **{fmt(t.written_d[1])}** |")
    A("")
    if t.kernel == "4.4":
        s1 = [sum(t.zonal[f][1][0]) for f in ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct")]
        A(f"Derived: pgscan total (kswapd+direct) 000→001 = {fmt(s1[0] + s1[1])}/s, pgsteal total = "
          f"{fmt(s1[2] + s1[3])}/s, reclaim efficiency = {s1[2] + s1[3]}/{s1[0] + s1[1]} = "
          f"{(s1[2] + s1[3]) / (s1[0] + s1[1]) * 100:.2f} %.")
        A("")
    # disks
    A("### Disk deltas (diskstats)")
    A("")
    keys = ["rd", "rdm", "rds", "rdms", "wr", "wrm", "wrs", "wrms", "io", "wt"]
    if t.diskfmt == 18:
        keys += ["dc", "dcs", "dcms"]
    A("| device | interval | " + " | ".join(keys) + " | in_flight (gauge at end) |")
    A("|---|---|" + "---|" * len(keys) + "---|")
    for maj, mnr, name, base, d in t.disks:
        for k in range(2):
            A(f"| {name} | {k:03d}→{k + 1:03d} | " + " | ".join(str(d[x][k]) for x in keys) +
              f" | {d['inflight'][k + 1]} |")
    A("")
    A("Keys: rd/wr = ios completed, rdm/wrm = merges, rds/wrs = sectors (512 B), rdms/wrms = ms, "
      "io = io_ticks ms (field 13), wt = weighted ms (field 14)" +
      (", dc/dcs/dcms = discard ios/sectors/ms." if t.diskfmt == 18 else "."))
    A("")
    if t.kernel == "4.14":
        A("sdb is flat (identical counters in all roots, non-zero since-boot history). sda = sda1 + "
          "history (all I/O goes to the PV sda1); dm-0 sees the same sectors as sda1 but more, "
          "unmerged ios (bio-level, 0 merges) and its own latencies.")
        A("")
        A("iostat -x equivalents (spec §5.2, itv = 100 cs): " + iostat_example(t, "sda", 0) + "; "
          + iostat_example(t, "dm-0", 0) + ".")
    elif t.kernel == "5.4":
        A("nvme0n1 = nvme0n1p1 + nvme0n1p2 for every counter except io_ticks (whole-disk busy time "
          "612/640 ms, not the sum). md0 ios/sectors equal nvme0n1p2's (single-member md); md0 "
          "time fields stay 0. Discards (fstrim) on p1 and nvme0n1 in 001→002 only.")
        A("")
        A("iostat -x equivalents (spec §5.2, itv = 100 cs): " + iostat_example(t, "nvme0n1", 1) + "; "
          + iostat_example(t, "md0", 0) + ".")
        A("")
        psi = []
        for res, lines in t.psi.items():
            for kind, (b, d, _) in lines.items():
                psi.append(f"{res} {kind} +{fmt(d[0])} / +{fmt(d[1])} µs (= {d[0] / 1e4:.2f} % / {d[1] / 1e4:.2f} %)")
        A("PSI `total` deltas per interval (µs over 1.00 s): " + "; ".join(psi) + ".")
    else:
        A("vda = vda1 + history; sr0 all zeros (never used). Reads include swap-in (pswpin × 8 "
          "sectors) and refaults; writes are swap-out (pswpout × 8 sectors) plus filesystem "
          "writeback (nr_written × 8): 1210·8 + 70·8 = 10 240 and 860·8 + 56·8 = 7 328 sectors.")
    A("")
    return "\n".join(L) + "\n"


def main():
    trees = [tree_414(), tree_54(), tree_44()]
    # top-of-stack devices for pgpgin/pgpgout and a base for those counters
    # pgpgin/pgpgout (KiB) = base + Σ sectors of the top-of-stack devices / 2; the base stands for
    # I/O on devices not listed as top-of-stack (4.14: sdb's history, sectors/2).
    trees[0].top_devices, trees[0].pgpg_base = {"dm-0"}, (6123380 // 2, 180344 // 2)
    trees[1].top_devices, trees[1].pgpg_base = {"nvme0n1p1", "md0"}, (0, 0)
    trees[2].top_devices, trees[2].pgpg_base = {"vda1"}, (0, 0)
    check = "--check" in sys.argv
    out = tempfile.mkdtemp() if check else HERE
    for t in trees:
        build_tree(t, out)
    if check:
        import filecmp
        bad = 0
        for t in trees:
            cmp = filecmp.dircmp(os.path.join(out, t.name), os.path.join(HERE, t.name))
            stack = [cmp]
            while stack:
                c = stack.pop()
                if c.diff_files or c.left_only or c.right_only:
                    print(t.name, c.left, c.diff_files, c.left_only, c.right_only)
                    bad += 1
                stack.extend(c.subdirs.values())
        shutil.rmtree(out)
        print("check:", "OK" if not bad else f"{bad} differences")
        return 1 if bad else 0
    for t in trees:
        print(f"{t.name}:")
        for i, r in enumerate(t.roots):
            print(f"  {i:03d} uptime {r['uptime']:.2f} free {r['free']} totalreserve {r['reserve']} "
                  f"sumlow {r['sum_low']} avail {r['dirty']['avail']} thresh {r['dirty']['thresh']} "
                  f"bg {r['dirty']['bg']} MemAvailable {r['memavail']['pages'] * 4} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
