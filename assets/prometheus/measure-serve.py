#!/usr/bin/env python3
"""Measures what the metrics endpoint costs (docs/REFERENCE.md's "Live metrics" figures).

Usage: measure-serve.py PAGEWATCH [SECONDS]

1. Per scrape: 1000 scrapes back to back of one `pagewatch serve`; CPU per scrape from
   pagewatch's own pagewatch_self_cpu_seconds_total (process CPU time, all threads, read at the
   scrape), less the sampling that ran meanwhile; bytes per scrape in each format.
2. Idle cost: two `pagewatch serve --interval 1` side by side for SECONDS (default 60), one
   scraped every 5 s, the other only at the start and the end; CPU ms per second of each.
"""
import re
import socket
import subprocess
import sys
import time

OM = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def start(exe):
    p = subprocess.Popen([exe, "serve", "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    host, port = re.search(r"http://([\d.]+):(\d+)/metrics", line).groups()
    return p, (host, int(port))


def scrape(addr, accept=None):
    s = socket.create_connection(addr)
    extra = f"Accept: {accept}\r\n" if accept else ""
    s.sendall(f"GET /metrics HTTP/1.0\r\n{extra}\r\n".encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    return data.split(b"\r\n\r\n", 1)[1].decode()


def value(text, name):
    m = re.search(r"^" + name + r"\{[^}]*\} (\S+)$", text, re.M)
    return float(m.group(1))


def main():
    exe = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    p, addr = start(exe)
    time.sleep(3)
    om, classic = scrape(addr, OM), scrape(addr)
    print(f"bytes per scrape: OpenMetrics {len(om)}, classic {len(classic)}")
    # Sampling alone, then sampling plus 1000 scrapes.
    a = value(scrape(addr), "pagewatch_self_cpu_seconds_total")
    t = time.monotonic()
    time.sleep(10)
    b = value(scrape(addr), "pagewatch_self_cpu_seconds_total")
    idle_per_s = (b - a) / (time.monotonic() - t)
    t = time.monotonic()
    n = 1000
    for _ in range(n):
        scrape(addr, OM)
    c = value(scrape(addr), "pagewatch_self_cpu_seconds_total")
    took = time.monotonic() - t
    per = ((c - b) - idle_per_s * took) / n
    print(f"per scrape: {per * 1e6:.0f} us CPU (sampling alone {idle_per_s * 1e3:.3f} ms/s)")
    p.kill()

    # Idle cost, side by side.
    scraped, sa = start(exe)
    alone, aa = start(exe)
    time.sleep(3)
    s0, a0, t0 = value(scrape(sa), "pagewatch_self_cpu_seconds_total"), value(scrape(aa), "pagewatch_self_cpu_seconds_total"), time.monotonic()
    while time.monotonic() - t0 < secs:
        time.sleep(5)
        scrape(sa, OM)
    s1, a1, t1 = value(scrape(sa), "pagewatch_self_cpu_seconds_total"), value(scrape(aa), "pagewatch_self_cpu_seconds_total"), time.monotonic()
    rss = lambda pid: int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
    print(f"idle over {t1 - t0:.0f} s: scraped every 5 s {(s1 - s0) / (t1 - t0) * 1e3:.3f} ms/s "
          f"(RSS {rss(scraped.pid)} kB), not scraped {(a1 - a0) / (t1 - t0) * 1e3:.3f} ms/s (RSS {rss(alone.pid)} kB)")
    scraped.kill()
    alone.kill()


main()
