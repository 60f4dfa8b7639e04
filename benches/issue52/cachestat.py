#!/usr/bin/env python3
"""cachestat.py FILE [CALLS]: times whole-file cachestat(2) calls (syscall 451, x86_64, Linux
6.5+) on FILE, as the dirty-files refresh makes them (docs/PERFORMANCE.md, issue 52's seventh
round), and prints each call's time with the page counts it returned."""
import ctypes, os, sys, time

libc = ctypes.CDLL(None, use_errno=True)


class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("cache", "dirty", "writeback", "evicted", "recently_evicted")]


fd = os.open(sys.argv[1], os.O_RDONLY)
whole, cs = Range(0, 0), Stat()
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    t = time.perf_counter()
    rc = libc.syscall(451, fd, ctypes.byref(whole), ctypes.byref(cs), 0)
    ms = (time.perf_counter() - t) * 1000
    if rc != 0:
        sys.exit(f"cachestat: {os.strerror(ctypes.get_errno())}")
    print(f"{ms:.2f} ms  cache {cs.cache} dirty {cs.dirty} writeback {cs.writeback} "
          f"evicted {cs.evicted}")
