#!/usr/bin/env python3
"""vda.py: issue 52's block-tracer acceptance on vda itself (fio randread, libaio, depth 4,
direct, 4k, on a 1 GiB file this script makes on the root filesystem, never on /dev/vda).
Run every mode under `flock -o /tmp/pw-live.lock`; each prints `uptime`'s load beside its
figures.

  vda.py alone ROUNDS SECS           fio uncapped alone: IOPS, clat p50/p99 per run
  vda.py alternate BIN ROUNDS SECS   fio uncapped alone, then beside `BIN --no-config
                                     --latency vda` (a 160x48 pty), alternating which goes
                                     first; BIN's ms/s of CPU (process CPU clock) over fio's run
  vda.py capped BIN REF SECS         fio at 20k IOPS; `PW_ROUNDS=3 PW_WARMUP=20
                                     benches/side_by_side.py SECS BIN --no-config --latency vda
                                     ;; REF --no-config ;; htop -d 10` (REF: a copy of BIN)
  vda.py pct BIN SECS [IOPS]         fio (capped at IOPS, else uncapped) beside `BIN --no-config
                                     --batch --format json -n SECS --latency vda`: pagewatch's
                                     read p50/p99 of the summed histograms against fio's clat
  vda.py clean                       removes the data file

PW_FIO_FILE overrides the file (/var/tmp/pw-fio.dat).
"""
import fcntl, json, os, pty, select, signal, statistics, struct, subprocess, sys, termios, time

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = os.environ.get('PW_FIO_FILE', '/var/tmp/pw-fio.dat')


def load():
    return open('/proc/loadavg').read().split()[0]


def ensure_file():
    if os.path.exists(FILE) and os.path.getsize(FILE) >= 1 << 30:
        return
    subprocess.run(['dd', 'if=/dev/urandom', f'of={FILE}', 'bs=1M', 'count=1024',
                    'oflag=direct', 'status=none'], check=True)


def fio_cmd(secs, iops=None):
    cmd = ['fio', '--name=rr', f'--filename={FILE}', '--rw=randread', '--bs=4k',
           '--ioengine=libaio', '--iodepth=4', '--direct=1', '--time_based',
           f'--runtime={secs}', '--output-format=json']
    if iops:
        cmd.append(f'--rate_iops={iops}')
    return cmd


def fio_result(out):
    r = json.loads(out[out.index('{'):])['jobs'][0]['read']
    pct = r['clat_ns']['percentile']
    return r['iops'], pct['50.000000'] / 1e6, pct['99.000000'] / 1e6


def fio(secs, iops=None):
    return fio_result(subprocess.run(fio_cmd(secs, iops), capture_output=True, text=True,
                                     check=True).stdout)


def cpu_ns(pid):
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def screen(argv):
    """Starts argv in a 160x48 pty; returns (pid, fd)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ['TERM'] = 'xterm-256color'
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 48, 160, 0, 0))
    return pid, fd


def drain(fd, secs):
    until = time.time() + secs
    while time.time() < until:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def stop(pid, fd):
    try:
        os.write(fd, b'q')
    except OSError:
        pass
    drain(fd, 1.0)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)


def beside(binary, secs):
    """fio uncapped for secs beside the screen with the tracer: fio's IOPS, the screen's ms/s
    over fio's run."""
    pid, fd = screen([binary, '--no-config', '--latency', 'vda'])
    drain(fd, 5)
    p = subprocess.Popen(fio_cmd(secs), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    c0, t0 = cpu_ns(pid), time.time()
    while p.poll() is None:
        drain(fd, 0.5)
    c1, t1 = cpu_ns(pid), time.time()
    out = p.stdout.read()
    stop(pid, fd)
    iops, p50, p99 = fio_result(out)
    return iops, (c1 - c0) / 1e6 / (t1 - t0), p50, p99


def alone(rounds, secs):
    for r in range(rounds):
        iops, p50, p99 = fio(secs)
        print(f'run {r + 1} load {load()}: fio alone {iops:,.0f} IOPS, clat p50 {p50:.3f} '
              f'p99 {p99:.3f} ms', flush=True)


def alternate(binary, rounds, secs):
    alone_iops, with_iops = [], []
    for r in range(rounds):
        order = ['alone', 'with'] if r % 2 == 0 else ['with', 'alone']
        for what in order:
            if what == 'alone':
                iops, p50, p99 = fio(secs)
                alone_iops.append(iops)
                print(f'round {r + 1} load {load()}: fio alone {iops:,.0f} IOPS '
                      f'(clat p50 {p50:.3f} p99 {p99:.3f} ms)', flush=True)
            else:
                iops, ms, p50, p99 = beside(binary, secs)
                with_iops.append(iops)
                print(f'round {r + 1} load {load()}: fio beside the tracer {iops:,.0f} IOPS '
                      f'(clat p50 {p50:.3f} p99 {p99:.3f} ms), pagewatch {ms:.2f} ms/s',
                      flush=True)
    a = sorted(alone_iops)
    w = sorted(with_iops)
    ma, mw = statistics.median(a), statistics.median(w)
    print(f'fio alone: {a[0]:,.0f}-{a[-1]:,.0f} IOPS (spread {100 * (a[-1] - a[0]) / ma:.1f} % '
          f'of the median {ma:,.0f}, sd {100 * statistics.stdev(a) / ma:.1f} %); beside the '
          f'tracer {w[0]:,.0f}-{w[-1]:,.0f}, median {mw:,.0f}: {100 * (mw - ma) / ma:+.1f} %')
    # Each round's two runs are minutes apart at most and in alternating order: their ratio
    # is the paired figure, free of the drift between rounds.
    pairs = [100 * (x / y - 1) for x, y in zip(with_iops, alone_iops)]
    mean = statistics.mean(pairs)
    se = statistics.stdev(pairs) / len(pairs) ** 0.5 if len(pairs) > 1 else float('nan')
    print('paired (beside / alone - 1, per round): ' + ', '.join(f'{p:+.1f} %' for p in pairs)
          + f'; mean {mean:+.1f} % ± {se:.1f} (standard error)')


def capped(binary, ref, secs):
    warm = 20
    p = subprocess.Popen(fio_cmd(secs + warm + 15, 20000), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    time.sleep(2)
    print(f'load {load()} at the start', flush=True)
    env = dict(os.environ, PW_ROUNDS='3', PW_WARMUP=str(warm))
    subprocess.run(['python3', os.path.join(HERE, '..', 'side_by_side.py'), str(secs),
                    binary, '--no-config', '--latency', 'vda', ';;', ref, '--no-config', ';;',
                    'htop', '-d', '10'], env=env, check=True)
    iops, p50, p99 = fio_result(p.communicate()[0])
    print(f'load {load()} at the end; fio {iops:,.0f} IOPS, clat p50 {p50:.3f} p99 {p99:.3f} ms')


def summed(hists):
    n = max((len(h) for h in hists), default=0)
    return [sum(h[k] for h in hists if k < len(h)) for k in range(n)]


def quantile(counts, q):
    """As `Hist::quantile` (without the max cap): bucket 0 under 1 µs, k ≥ 1 [2^(k-1), 2^k)."""
    total = sum(counts)
    rank, below = q * total, 0
    for k, c in enumerate(counts):
        if c and below + c >= rank:
            lo, hi = (0.0, 1.0) if k == 0 else (2.0 ** (k - 1), 2.0 ** k)
            return (lo + (hi - lo) * (rank - below) / c) / 1000
        below += c
    return None


def pct(binary, secs, iops):
    p = subprocess.Popen(fio_cmd(secs + 4, iops), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    time.sleep(2)
    print(f'load {load()} at the start', flush=True)
    b = subprocess.run([binary, '--no-config', '--batch', '--format', 'json', '-n', str(secs),
                        '--latency', 'vda'], capture_output=True, text=True, check=True)
    fiops, f50, f99 = fio_result(p.communicate()[0])
    hists, every, events, lost, rows = [], set(), 0, 0, []
    for line in b.stdout.splitlines():
        j = json.loads(line)
        for d in j.get('disks', []):
            if d.get('name') == 'vda' and d.get('lat_read_hist') is not None:
                hists.append(d['lat_read_hist'])
                every.add(d.get('lat_sample_every'))
                events += d.get('lat_events') or 0
                lost += d.get('lat_lost') or 0
                rows.append((d.get('lat_read_p50_ms'), d.get('lat_read_p99_ms')))
    h = summed(hists)
    p50, p99 = quantile(h, 0.5), quantile(h, 0.99)
    print(f'fio {fiops:,.0f} IOPS (cap {iops or "none"}): clat p50 {f50:.3f} ms, p99 {f99:.3f} ms')
    print(f'pagewatch, {len(hists)} intervals, 1 in {sorted(every)} timed, {sum(h)} reads timed, '
          f'{events} events, {lost} lost: p50 {p50:.3f} ms ({p50 / f50:.2f}x fio), '
          f'p99 {p99:.3f} ms ({p99 / f99:.2f}x fio)')
    p50s = sorted(a for a, _ in rows if a is not None)
    p99s = sorted(b for _, b in rows if b is not None)
    if p50s and p99s:
        print(f'per interval: p50 {p50s[0]:.3f}-{p50s[-1]:.3f} ms ({p50s[0] / f50:.2f}-'
              f'{p50s[-1] / f50:.2f}x fio), p99 {p99s[0]:.3f}-{p99s[-1]:.3f} ms '
              f'({p99s[0] / f99:.2f}-{p99s[-1] / f99:.2f}x fio)')
    print(f'load {load()} at the end')


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == 'clean':
        if os.path.exists(FILE):
            os.remove(FILE)
        return
    ensure_file()
    if a[0] == 'alone':
        alone(int(a[1]), int(a[2]))
    elif a[0] == 'alternate':
        alternate(a[1], int(a[2]), int(a[3]))
    elif a[0] == 'capped':
        capped(a[1], a[2], int(a[3]))
    elif a[0] == 'pct':
        pct(a[1], int(a[2]), int(a[3]) if len(a) > 3 else None)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
