//! Delay accounting of a few live processes (issue 56, spec §13.1): taskstats
//! `TASKSTATS_CMD_GET` with `TASKSTATS_CMD_ATTR_TGID` for each process `Wants::delays` names,
//! the replies' `struct taskstats` decoded by `parse::taskstats` (the exit listener's decoder)
//! and written as `g` lines into the `names::TASK_DELAYS` pseudo-file, so replay runs the same
//! derivation (`model::task_delays`).
//!
//! Owns: its own generic-netlink socket (not the exit listener's, whose non-blocking drain
//! would take the replies for exits), the family lookup, one request a process, the
//! pseudo-file's text. Must not touch: choosing the processes (`model::task_delays::pids`),
//! rates (`model::task_delays`).
//!
//! Needs CAP_NET_ADMIN (the `GET` op is `GENL_ADMIN_PERM`): refused, the state says
//! `no-permission` and the socket is retried every `taskstats::RETRY_TICKS` samples; a kernel without
//! `CONFIG_TASKSTATS` says `no-family`. A process gone since the walk answers ESRCH and is left
//! out.
//!
//! Budget: nothing unless `Wants::delays` names processes, which it does only while
//! `kernel.task_delayacct` is on and the process walk is wanted (memory taken, direct reclaim
//! or compaction, memory PSI, a busy disk, the processes view; `model::task_delays::pids`);
//! then at most `MAX_PIDS` (10) requests a sample, each one ~400-byte reply (~5 µs, spec
//! §11, against ~12 µs per process for the walk itself), the kernel walking the process's
//! threads. Read each sample, not only at walks, so a rate spans one interval like
//! `compact_stall_s` beside it.

use std::os::fd::OwnedFd;

use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{RecvFlags, SendFlags};

use super::taskstats::{Link, ack, family, request_bytes, socket};
use crate::parse::taskstats::{self as ts, Exits, NLMSG_ERROR, TASKSTATS_CMD_GET};
use crate::sample::MAX_DELAY_PIDS as MAX_PIDS;

/// `TASKSTATS_CMD_ATTR_TGID` (u32).
const ATTR_TGID: u16 = 2;

/// The querier, for the live system only.
pub struct Querier {
    sock: Option<(OwnedFd, u16)>,
    link: Link,
    seq: u32,
    buf: Vec<u8>,
    /// The text of this sample, when processes were asked for.
    pub out: String,
}

impl Default for Querier {
    fn default() -> Self {
        Self {
            sock: None,
            link: Link::off(),
            seq: 1,
            buf: vec![0; 16 << 10],
            out: String::new(),
        }
    }
}

impl Querier {
    /// Reads the delays of `pids` (at most `MAX_PIDS`) into `out`; `out` empty and the socket
    /// closed when none is asked for.
    pub fn sample(&mut self, pids: &[u32], mono_ns: u64) {
        self.out.clear();
        if pids.is_empty() {
            self.sock = None;
            self.link.state = "off";
            return;
        }
        if self.sock.is_none() && self.link.due() {
            match self.open() {
                Ok(s) => {
                    self.sock = Some(s);
                    self.link.opened("on");
                }
                Err((state, why)) => self.link.failed(state, why),
            }
        }
        let mut records = Vec::new();
        for &pid in pids.iter().take(MAX_PIDS) {
            if self.sock.is_none() {
                break;
            }
            self.query(pid, &mut records);
        }
        self.out = ts::render(&Exits {
            state: self.link.state.to_owned(),
            why: self.link.why.clone(),
            since_ns: None,
            read_ns: mono_ns,
            lost: 0,
            records,
        });
    }

    fn open(&mut self) -> Result<(OwnedFd, u16), (&'static str, String)> {
        let fd = socket()?;
        let family = family(&fd, &mut self.buf)?;
        Ok((fd, family))
    }

    /// One `GET` by tgid: its group record into `out`; a refusal closes the socket.
    fn query(&mut self, pid: u32, out: &mut Vec<ts::TaskExit>) {
        let Some((fd, family)) = &self.sock else {
            return;
        };
        let mut value = pid.to_ne_bytes().to_vec();
        let mut msg = request_bytes(*family, TASKSTATS_CMD_GET, ATTR_TGID, &mut value);
        // A sequence number of its own: an acknowledgement left from an earlier request (the
        // family's, one that timed out) is not this one's.
        self.seq = self.seq.wrapping_add(1).max(2);
        msg[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        let to = SocketAddrNetlink::new(0, 0);
        let mut result = rustix::net::sendto(fd, &msg, SendFlags::empty(), &to).map(|_| ());
        // The reply (`TASKSTATS_CMD_NEW`, an `AGGR_TGID` nest), then the acknowledgement; an
        // error comes alone.
        while result.is_ok() {
            let n = match rustix::net::recv(fd, &mut self.buf[..], RecvFlags::empty()) {
                Ok((_, n)) => n.min(self.buf.len()),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            ts::decode_datagram(&self.buf[..n], *family, out);
            let seq = self.seq.to_ne_bytes();
            let done = ts::messages(&self.buf[..n])
                .find(|(t, p)| *t == NLMSG_ERROR && p.get(12..16) == Some(&seq[..]));
            if let Some((_, payload)) = done {
                result = ack(payload);
                break;
            }
            if n == 0 {
                result = Err(rustix::io::Errno::PROTO);
            }
        }
        match result {
            Ok(()) | Err(rustix::io::Errno::SRCH) => {}
            Err(rustix::io::Errno::PERM | rustix::io::Errno::ACCESS) => {
                let why = "taskstats GET needs CAP_NET_ADMIN".to_owned();
                self.link.failed("no-permission", why);
                self.sock = None;
            }
            Err(e) => {
                self.link
                    .failed("error", format!("taskstats GET {pid}: {e}"));
                self.sock = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the live kernel: this test process's own delays read by tgid, or why not
    /// (no CAP_NET_ADMIN, no taskstats); nothing asked, nothing written.
    #[test]
    fn the_live_querier_reads_a_process_or_says_why() {
        let mut q = Querier::default();
        q.sample(&[], 1);
        assert!(q.out.is_empty());
        let me = std::process::id();
        q.sample(&[me], 5);
        let e = ts::parse(&q.out).unwrap();
        assert_eq!(e.read_ns, 5);
        if e.state != "on" {
            assert!(e.why.is_some(), "{}", q.out);
            return;
        }
        assert_eq!(e.records.len(), 1, "{}", q.out);
        let r = &e.records[0];
        assert!(r.group && r.pid == me, "{}", q.out);
        // This kernel's struct carries the compaction delay (v11+, 5.19).
        assert!(r.delays[4].is_some(), "{}", q.out);
        // A pid no process has: left out, still on.
        q.sample(&[me, u32::MAX - 1], 6);
        let e = ts::parse(&q.out).unwrap();
        assert_eq!((e.state.as_str(), e.records.len()), ("on", 1), "{}", q.out);
    }
}
