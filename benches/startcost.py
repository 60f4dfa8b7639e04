#!/usr/bin/env python3
"""What a live mode costs in its first half-minute, in 2 s windows: the process CPU clock
(exited threads included) of `BIN --batch --format json -n 60` at idle, for each binary given,
alternated ROUNDS times (default 2). Shows one-off costs of starting (a tracer armed at the
first sample, and removed when it lapses) that a window taken after warm-up does not.

    python3 benches/startcost.py OLD_BIN NEW_BIN [ROUNDS]
"""
import subprocess
import sys
import time


def cpu(pid):
    # The process CPU clock (clock_getcpuclockid's id for another process).
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def main():
    bins = [a for a in sys.argv[1:] if not a.isdigit()]
    rounds = int(next((a for a in sys.argv[1:] if a.isdigit()), "2"))
    if not bins:
        sys.exit(__doc__)
    for _ in range(rounds):
        for b in bins:
            p = subprocess.Popen([b, "--batch", "--format", "json", "-n", "60"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            t0, last, out = time.time(), cpu(p.pid), []
            for t in range(2, 34, 2):
                while time.time() - t0 < t:
                    time.sleep(0.02)
                c = cpu(p.pid)
                out.append((c - last) / 1e6 / 2)
                last = c
            p.kill()
            p.wait()
            print(b, "ms/s per 2 s window:", " ".join(f"{x:.2f}" for x in out))


main()
