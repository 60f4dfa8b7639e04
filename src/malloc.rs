//! The C allocator's settings for a long-running monitor: one arena, and large blocks given
//! back to the kernel when freed (issue 52: RSS within 8 MB at `--interval 0.1`).
//!
//! Owns: the `mallopt` calls made once at start, and `GiveBack`, which returns the heap's free
//! pages every `GIVE_BACK_EVERY` (glibc only; another libc keeps its own defaults). The one
//! sampler loop (`sampler::run`) calls it after every sample, so every live mode (the screen,
//! `--batch`, `record`, `serve`, a playbook) gives back the same way. Also `fit`, the rule for
//! a buffer kept from one sample to the next: it keeps its room for reuse, but not four times
//! what it holds once that room is a mapping of its own. Must not touch: anything else.
//!
//! Why: by default glibc gives each thread that allocates (the sampler, the block tracer's
//! reader) an arena of its own, and raises its mmap threshold each time a large block is
//! freed, so that a frame buffer or a burst of events, once freed, stays in an arena's heap.
//! At `--interval 0.1` on a busy machine (the process walk and the block tracer armed by the
//! verdict) the screen read 11.2 MB after 140 s, 5.3 MB of it anonymous (one thread's arena
//! 2.5 MB), against 9.2 MB (2.9 MB) for the same binary in the same minutes with these
//! settings as glibc tunables (`GLIBC_TUNABLES=glibc.malloc.arena_max=1:
//! glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=65536`).
//!
//! `M_TRIM_THRESHOLD` gives back only free memory at the top of the heap. Each sample
//! allocates and frees blocks of many sizes (files read, rows parsed, the frame's text), so
//! free chunks stay between live ones below the top and keep their pages: the screen at
//! `--interval 0.1` grew its heap to 2,888 KB in 8 minutes, and one `malloc_trim(0)` (through
//! gdb) brought it to 1,960 KB without freeing anything live. `GiveBack` makes that call every
//! 10 s: a pass over the free lists of a heap of a few MB, and pages refaulted only where the
//! heap grows again. Until it was the sampler loop's, only the screen made it: `--batch`,
//! `record` and `serve` at `--interval 0.1` kept heaps of 1.3–1.9 MB after ten minutes.

use std::time::{Duration, Instant};

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

/// Gives back the room of a buffer kept from sample to sample (its capacity, in `T`s) once it
/// is past `MMAP_THRESHOLD` bytes and more than four times what the buffer holds, keeping
/// twice that: `malloc_trim` cannot return the pages of a block still allocated. Issue 52: a
/// burst of 1,100 processes left the walk's text 1.2 MB of room, 0.6 MB resident, and its
/// copy in the sample as much, for good after the burst; the steps of RSS at
/// `--interval 0.1` were such arrays doubling and never shrinking.
pub fn fit<T>(v: &mut Vec<T>) {
    let size = std::mem::size_of::<T>().max(1);
    let room = v.capacity();
    if room * size > MMAP_THRESHOLD as usize && room > 4 * v.len() {
        v.shrink_to(2 * v.len());
    }
}

/// `fit` for a string.
pub fn fit_string(s: &mut String) {
    if s.capacity() > MMAP_THRESHOLD as usize && s.capacity() > 4 * s.len() {
        s.shrink_to(2 * s.len());
    }
}

/// How often a long-running loop gives the heap's free pages back.
pub const GIVE_BACK_EVERY: Duration = Duration::from_secs(10);

/// Gives the heap's free pages back to the kernel (`malloc_trim(0)`: every whole page inside
/// a free chunk, not only the top), at most once an `every` (`GIVE_BACK_EVERY` by default).
#[derive(Debug)]
pub struct GiveBack {
    every: Duration,
    last: Option<Instant>,
    /// How many times it gave back.
    pub times: u64,
}

impl Default for GiveBack {
    fn default() -> Self {
        Self::every(GIVE_BACK_EVERY)
    }
}

impl GiveBack {
    /// Gives back at most once an `every`.
    #[must_use]
    pub fn every(every: Duration) -> Self {
        Self {
            every,
            last: None,
            times: 0,
        }
    }

    /// Gives the free pages back when `every` has passed since the last time (the first call
    /// only starts the count); says whether it did.
    pub fn after_sample(&mut self, now: Instant) -> bool {
        let last = *self.last.get_or_insert(now);
        if now.saturating_duration_since(last) < self.every {
            return false;
        }
        self.last = Some(now);
        self.times += 1;
        give_back();
        true
    }
}

/// Gives every free page of the heap back to the kernel now (off glibc: nothing).
#[allow(unsafe_code)]
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) takes a size and only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// The process's resident anonymous memory, kB (`RssAnon`).
    fn rss_anon_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("RssAnon:"));
        let kb = line.and_then(|l| l.split_whitespace().nth(1)?.parse().ok());
        kb.unwrap_or(0)
    }

    /// Runs the test `name` of this binary alone in a child (the allocator's state is the
    /// process's, and other tests run beside it), so that it can measure the process.
    fn in_a_child(name: &str) -> bool {
        if std::env::var_os("PAGEWATCH_MALLOC_CHILD").is_some() {
            return true;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads", "1"])
            .env("PAGEWATCH_MALLOC_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "the child ran nothing: {text}");
        false
    }

    /// Free chunks between live blocks keep their pages until `give_back`: 4 MB freed as
    /// 16 KB holes below a live top stays resident, and is given back by it.
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn free_pages_between_live_blocks_are_given_back() {
        if !in_a_child("malloc::tests::free_pages_between_live_blocks_are_given_back") {
            return;
        }
        super::keep_small();
        let mut blocks: Vec<Vec<u8>> = (0..512).map(|_| vec![1u8; 16 * 1024]).collect();
        let top = vec![1u8; 1024]; // live above the holes: the top cannot be trimmed
        for b in blocks.iter_mut().step_by(2) {
            *b = Vec::new();
        }
        let before = rss_anon_kb();
        super::give_back();
        let after = rss_anon_kb();
        std::hint::black_box((&blocks, &top));
        assert!(
            before >= after + 3 * 1024,
            "4 MB of holes: {before} kB before, {after} kB after"
        );
    }

    /// `GiveBack` acts once `GIVE_BACK_EVERY` has passed, not at the first sample nor sooner.
    #[test]
    fn give_back_is_paced() {
        let mut g = super::GiveBack::default();
        let t0 = Instant::now();
        assert!(!g.after_sample(t0), "the first sample starts the count");
        assert!(!g.after_sample(t0 + Duration::from_secs(9)));
        assert!(g.after_sample(t0 + super::GIVE_BACK_EVERY));
        assert!(!g.after_sample(t0 + Duration::from_secs(15)));
        assert!(g.after_sample(t0 + Duration::from_secs(20)));
    }

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
        // theirs.
        if !in_a_child("malloc::tests::threads_allocating_at_once_add_no_arena") {
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

    /// A buffer past the mmap threshold gives back room over four times what it holds; a
    /// small one, or one that holds a fair share of its room, keeps it.
    #[test]
    fn fit_gives_back_room_over_four_times_the_contents() {
        let mut big: Vec<u64> = Vec::with_capacity(100_000);
        big.extend(0..1_000);
        super::fit(&mut big);
        assert!(
            (1_000..=2_000).contains(&big.capacity()),
            "{}",
            big.capacity()
        );
        let mut busy: Vec<u64> = Vec::with_capacity(100_000);
        busy.extend(0..30_000);
        super::fit(&mut busy);
        assert_eq!(busy.capacity(), 100_000, "a third full: kept");
        let mut small: Vec<u8> = Vec::with_capacity(16 * 1024);
        super::fit(&mut small);
        assert_eq!(small.capacity(), 16 * 1024, "under the threshold: kept");
        let mut text = String::with_capacity(1 << 20);
        text.push_str("walk 1\n");
        super::fit_string(&mut text);
        assert!(text.capacity() < 64, "{}", text.capacity());
    }
}
