#!/usr/bin/env python3
"""Usage: python3 benches/issue52/fdhog.py N SECS: a writer that holds N fds (files it creates in
/var/tmp/pw-fdhog-PID, removed at the end) and writes and fsyncs 4 KiB every 0.5 s, so its
write_bytes rises at every process walk. Three of them beside `--view processes` measured
writer_files::Listed (80b6552): `ulimit -n 4096; for i in 1 2 3; do python3
benches/issue52/fdhog.py 1000 150 & done; PW_ROUNDS=4 PW_WARMUP=20 python3
benches/side_by_side.py 100 NEW --no-config --view processes ";;" OLD ... ";;" htop -d 10`."""
# Holds N fds (files it created under /var/tmp/pw-fdhog-PID) and writes+fsyncs 4 KiB a second.
import os, sys, time
n=int(sys.argv[1]); d=f"/var/tmp/pw-fdhog-{os.getpid()}"; os.makedirs(d, exist_ok=True)
fds=[os.open(f"{d}/{i}", os.O_RDONLY|os.O_CREAT, 0o644) for i in range(n)]
w=os.open(f"{d}/w", os.O_WRONLY|os.O_CREAT, 0o644)
end=time.time()+float(sys.argv[2])
while time.time()<end:
    os.pwrite(w, b"x"*4096, 0); os.fsync(w); time.sleep(0.5)
import shutil; shutil.rmtree(d)
