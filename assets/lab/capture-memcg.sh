# Run inside the kernel lab's guest (assets/lab/boot.sh SUITE assets/lab/capture-memcg.sh):
# assets/lab/capture.sh with the writer in a cgroup `box` capped at 300M (MEMCG=1).
MEMCG=1 . /bin/capture.sh
