//! The C allocator's settings for a long-running monitor: one arena, and large blocks given
//! back to the kernel when freed (issue 52: RSS within 8 MB at `--interval 0.1`).
//!
//! Owns: the `mallopt` calls made once at start (glibc only; another libc keeps its own
//! defaults). Must not touch: anything else.
//!
//! Why: by default glibc gives each thread that allocates (the sampler, the block tracer's
//! reader) an arena of its own, and raises its mmap threshold each time a large block is
//! freed, so that a frame buffer or a burst of events, once freed, stays in an arena's heap.
//! At `--interval 0.1` on a busy machine (the process walk and the block tracer armed by the
//! verdict) the screen read 11.2 MB after 140 s, 5.3 MB of it anonymous (one thread's arena
//! 2.5 MB), against 9.2 MB (2.9 MB) for the same binary in the same minutes with these
//! settings as glibc tunables (`GLIBC_TUNABLES=glibc.malloc.arena_max=1:
//! glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=65536`).

/// Blocks from this size are mapped apart and unmapped when freed.
pub const MMAP_THRESHOLD: i32 = 64 * 1024;

/// Free memory at the top of the heap beyond this is given back.
pub const TRIM_THRESHOLD: i32 = 64 * 1024;

/// Sets one arena and fixed thresholds (`MMAP_THRESHOLD`, `TRIM_THRESHOLD`), before any
/// thread starts (off glibc: nothing).
#[allow(unsafe_code)]
pub fn keep_small() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        for (param, value) in [
            (libc::M_ARENA_MAX, 1),
            (libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
            (libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        ] {
            // SAFETY: mallopt(3) takes two integers; called before other threads allocate.
            unsafe {
                libc::mallopt(param, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// glibc's arenas: 64 MiB-aligned anonymous mappings (`HEAP_MAX_SIZE` on 64-bit).
    fn arenas() -> usize {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        maps.lines()
            .filter(|l| {
                let mut w = l.split_whitespace();
                let start = w.next().and_then(|r| r.split('-').next());
                let start = start.and_then(|s| u64::from_str_radix(s, 16).ok());
                start.is_some_and(|s| s % (64 << 20) == 0) && l.split_whitespace().count() == 5
            })
            .count()
    }

    /// After `keep_small`, threads that allocate at once share the one arena: none is added
    /// (without it, each of 8 threads racing on 2 CPUs could get one of its own).
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn threads_allocating_at_once_add_no_arena() {
        // Arenas are the process's: the other tests of this binary, running beside it, add
        // theirs. So the check runs in a child of this binary that runs only it.
        if std::env::var_os("PAGEWATCH_MALLOC_CHILD").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "shell::malloc::tests::threads_allocating_at_once_add_no_arena",
                    "--test-threads",
                    "1",
                ])
                .env("PAGEWATCH_MALLOC_CHILD", "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{text}");
            assert!(text.contains("1 passed"), "the child ran nothing: {text}");
            return;
        }
        super::keep_small();
        let before = arenas();
        let start = std::sync::Arc::new(std::sync::Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let start = std::sync::Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    let held: Vec<Vec<u8>> = (0..200).map(|i| vec![1u8; 64 + i]).collect();
                    start.wait();
                    std::hint::black_box(held).len()
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().ok(), Some(200));
        }
        assert_eq!(arenas(), before, "no arena added");
    }
}
