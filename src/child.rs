//! What pagewatch's guard children and pagewatch agree on: the variable that carries
//! pagewatch's pid to a child (`__guard`, the eater), so the child can check it was started by
//! the pagewatch it belongs to (and was not orphaned before its parent-death signal took
//! effect).
//!
//! Owns: `PARENT_ENV`, and the guards' wait for their parent's pipe to close
//! (`wait_for_close`). Sits below `source` and `jobs`, which both start guards (the tracefs
//! instance's, fio's). Must not touch: processes.

/// The environment variable carrying pagewatch's pid to the guard.
pub const PARENT_ENV: &str = "PAGEWATCH_PARENT_PID";

/// Blocks until the parent closes the guard's pipe (`r`, the guard's stdin): end of file, or
/// a read error other than an interrupted call. A persistent error (the pipe's end gone bad)
/// stops the wait as the end of file does, so a guard cannot spin on it forever; whatever it
/// was guarding is then cleaned up, as when pagewatch exits. Every guard that waits on its
/// parent's pipe waits here: the fio directory's (`jobs::fio::dir`) and the tracefs
/// instance's (`source::trace_guard`).
pub fn wait_for_close(mut r: impl std::io::Read) {
    let mut sink = [0u8; 64];
    loop {
        match r.read(&mut sink) {
            Ok(0) => return,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(_) => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that answers with `errs` errors of `kind`, then data, then end of file; it
    /// counts its calls.
    struct Script {
        kind: std::io::ErrorKind,
        errs: u32,
        calls: u32,
    }

    impl std::io::Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            assert!(self.calls < 1000, "the wait spins on a read error");
            if self.calls <= self.errs {
                return Err(std::io::Error::from(self.kind));
            }
            buf[0] = b'x';
            Ok(usize::from(self.calls == self.errs + 1))
        }
    }

    #[test]
    fn a_persistent_read_error_ends_the_wait_as_end_of_file_does() {
        let mut r = Script {
            kind: std::io::ErrorKind::Other,
            errs: u32::MAX,
            calls: 0,
        };
        wait_for_close(&mut r);
        assert_eq!(r.calls, 1, "stopped at the first error");
    }

    #[test]
    fn an_interrupted_read_and_data_keep_waiting_until_end_of_file() {
        let mut r = Script {
            kind: std::io::ErrorKind::Interrupted,
            errs: 3,
            calls: 0,
        };
        wait_for_close(&mut r);
        // 3 interruptions, one byte of data, then end of file.
        assert_eq!(r.calls, 5);
    }
}
