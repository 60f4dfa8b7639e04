#!/usr/bin/env python3
"""One process holding 20 files open under DIR (on the disk), writing 256 KiB of new data a
second to each (5 MiB/s in all), for SECS seconds; removes them at the end.
Usage: writer20.py DIR SECS."""
import os, sys, time
d, secs = sys.argv[1], float(sys.argv[2])
os.makedirs(d, exist_ok=True)
fds = [os.open(os.path.join(d, f"w{i:02d}"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644) for i in range(20)]
chunk = os.urandom(256 << 10)
end, off = time.time() + secs, 0
while time.time() < end:
    for fd in fds:
        os.pwrite(fd, chunk, off)
    off += len(chunk)
    time.sleep(1)
for i, fd in enumerate(fds):
    os.close(fd)
    os.unlink(os.path.join(d, f"w{i:02d}"))
os.rmdir(d)
