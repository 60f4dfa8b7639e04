/* The floor of a once-a-second /proc monitor on this machine (issue 27): once a second, read
 * the files pagewatch reads every tick (held open, pread at offset 0, as `source::fs` does)
 * and write a frame-sized burst of cursor moves and digits to the terminal, nothing else.
 * Whatever this costs beside htop is what no parse, derive or draw can take back.
 *
 * Build and measure beside htop in one window:
 *   gcc -O2 -o /tmp/floor benches/floor.c
 *   PW_WARMUP=10 python3 benches/side_by_side.py 90 /tmp/floor 500 ";;" htop -d 10
 * The argument is the bytes written a second (pagewatch's idle screen writes 480-550 B/s at
 * 160x48, `cargo bench --bench tui_pty`). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *files[] = {"/proc/meminfo",         "/proc/vmstat",      "/proc/stat",
                           "/proc/uptime",          "/proc/pressure/cpu",
                           "/proc/pressure/memory", "/proc/pressure/io", "/proc/buddyinfo",
                           "/proc/diskstats"};
    enum { N = sizeof files / sizeof *files };
    int fds[N];
    for (int i = 0; i < N; i++) fds[i] = open(files[i], O_RDONLY);
    int bytes = argc > 1 ? atoi(argv[1]) : 500;
    static char buf[65536], out[65536];
    if (write(1, "\x1b[?1049h", 8) < 0) return 1;
    for (unsigned t = 0;; t++) {
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && pread(fds[i], buf, sizeof buf, 0) < 0) return 1;
        int k = 0;
        for (int row = 1; k < bytes && k < (int)sizeof out - 64; row++)
            k += snprintf(out + k, sizeof out - k, "\x1b[%d;10H%10u %10u  ", row % 40 + 1, t,
                          t * 7);
        if (write(1, out, k) < 0) return 1;
        struct timespec second = {1, 0};
        nanosleep(&second, 0);
    }
}
