//! The taskstats exit listener (issue #24): a generic-netlink socket registered for the
//! kernel's exit notifications on every CPU, drained without blocking at each sample (walk or
//! not: the exits before the walk starts are credited at its first interval, issue 50), its
//! records written into the `names::EXITS` pseudo-file.
//!
//! Owns: the socket (open, family lookup, registration, drain, deregistration) and the
//! pseudo-file's text. Must not touch: decoding `struct taskstats` (`parse::taskstats`, pure)
//! or crediting (`model::exits`).
//!
//! Registering must be done from the initial user and pid namespaces, and by the kernel's
//! source needs CAP_NET_ADMIN (the taskstats `GET` command is `GENL_ADMIN_PERM`), though this
//! VM's 6.18 kernel acknowledged an unprivileged registration (uid 65534, no capabilities).
//! When it is refused, or on a kernel without `CONFIG_TASKSTATS`, the state says why
//! (`no-permission`, `no-family`, `error`) and the registration is retried every
//! `RETRY_TICKS` samples; the model falls back to the walk alone. The listener is registered
//! for the CPUs in `/sys/devices/system/cpu/possible` (a CPU brought online later is covered;
//! `online` when `possible` is unreadable).
//!
//! The receive buffer is `RCVBUF` (4 MiB, forced past `net.core.rmem_max` as root): about
//! 6,000 exit messages of ~700 bytes between two samples. When it overflows the kernel drops
//! messages and the next `recv` fails with ENOBUFS: counted in `lost` (the model then does
//! not subtract children's IO exactly until the next reap).
//!
//! Cost: while idle, one `recvfrom` per sample that returns EAGAIN, and in a recording the
//! pseudo-file's two times a sample. Listening at every sample, not only while the walk is on
//! (it was until issue 50, so 20 dd of 0.1 s on a quiet machine were over before it
//! registered), adds the exits of the quiet stretches: few on a quiet machine. Each exit costs the
//! kernel one message built at `do_exit` for the registered listener, and one `recvfrom`
//! here. At most `MAX_RECORDS` records are written per sample; the rest are counted as lost.
//! Measured on the 2-vCPU dev VM while other builds ran (`strace -f -c -e
//! trace=recvfrom,sendto pagewatch --batch --format json --count 30 --view processes`): 30
//! `recvfrom` returned EAGAIN (one a sample) and 897 returned an exit (~30 exits/s machine-wide,
//! 88 % of them threads), about 1 µs a call under strace; 3 `sendto` (family, register,
//! deregister). Recordings carry the exits: `pagewatch record` over the same 60 s, side by
//! side, made 116 KB with the listener and 49 KB without (6.9 against 2.9 MB/h) at that exit
//! rate; a quiet server exits far less.

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use rustix::net::netlink::{GENERIC, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

use crate::parse::taskstats::{
    self as ts, ATTR_DEREGISTER_CPUMASK, ATTR_REGISTER_CPUMASK, CTRL_ATTR_FAMILY_ID,
    CTRL_ATTR_FAMILY_NAME, CTRL_CMD_GETFAMILY, Exits, GENL_ID_CTRL, NLMSG_ERROR, TASKSTATS_CMD_GET,
};

/// The receive buffer asked for, bytes.
pub const RCVBUF: usize = 4 << 20;
/// Records written per sample at most.
pub const MAX_RECORDS: usize = 20_000;
/// Samples between two attempts to open after a failure.
const RETRY_TICKS: u32 = 30;

/// What a taskstats socket's owner says of it (its state word and why), and the samples left
/// before the next attempt to open it after a failure: the exit listener's and the delay
/// querier's (`source::task_delays`) alike.
#[derive(Debug)]
pub(super) struct Link {
    pub(super) state: &'static str,
    pub(super) why: Option<String>,
    wait: u32,
}

impl Link {
    /// Not open, nothing tried yet.
    pub(super) fn off() -> Self {
        Self {
            state: "off",
            why: None,
            wait: 0,
        }
    }

    /// Whether to try opening now (a closed socket): not within `RETRY_TICKS` samples of a
    /// failure, which this sample counts down.
    pub(super) fn due(&mut self) -> bool {
        let due = self.wait == 0;
        self.wait = self.wait.saturating_sub(1);
        due
    }

    /// Opened: `state`, and no reason.
    pub(super) fn opened(&mut self, state: &'static str) {
        self.state = state;
        self.why = None;
    }

    /// Failed (the caller closes the socket): `state` and why, and the next attempt
    /// `RETRY_TICKS` samples on.
    pub(super) fn failed(&mut self, state: &'static str, why: String) {
        self.state = state;
        self.why = Some(why);
        self.wait = RETRY_TICKS;
    }
}
/// `NLM_F_REQUEST | NLM_F_ACK`.
const REQUEST_ACK: u16 = 0x1 | 0x4;

/// The listener, for the live system only.
pub struct Listener {
    sys_root: PathBuf,
    sock: Option<(OwnedFd, u16, String)>,
    link: Link,
    since: Option<u64>,
    lost: u64,
    buf: Vec<u8>,
    records: Vec<ts::TaskExit>,
    /// The text of this sample, when there is one.
    pub out: String,
}

impl Listener {
    /// A listener not yet registered; `sys_root` for the CPU list.
    #[must_use]
    pub fn new(sys_root: PathBuf) -> Self {
        Self {
            sys_root,
            sock: None,
            link: Link::off(),
            since: None,
            lost: 0,
            buf: vec![0; 64 << 10],
            records: Vec::new(),
            out: String::new(),
        }
    }

    /// Drains the exits when `want` (registering first when needed) and writes the text into
    /// `out`; closes the socket and leaves `out` empty when not wanted.
    pub fn sample(&mut self, want: bool, mono_ns: u64) {
        self.out.clear();
        if !want {
            self.close();
            self.link.state = "off";
            self.since = None;
            return;
        }
        if self.sock.is_none() && self.link.due() {
            match self.open() {
                Ok(s) => {
                    self.sock = Some(s);
                    self.link.opened("listening");
                    self.lost = 0;
                }
                Err((state, why)) => self.link.failed(state, why),
            }
        }
        self.records.clear();
        if self.sock.is_some() {
            self.drain();
        }
        let e = Exits {
            state: self.link.state.to_owned(),
            why: self.link.why.clone(),
            since_ns: self.since,
            read_ns: mono_ns,
            lost: self.lost,
            records: std::mem::take(&mut self.records),
        };
        self.out = ts::render(&e);
        self.records = e.records;
        self.since = self.sock.is_some().then_some(mono_ns);
    }

    fn drain(&mut self) {
        let Some((fd, family, _)) = &self.sock else {
            return;
        };
        loop {
            match rustix::net::recv(fd, &mut self.buf[..], RecvFlags::DONTWAIT) {
                Ok((_, n)) => {
                    let n = n.min(self.buf.len());
                    let before = self.records.len();
                    ts::decode_datagram(&self.buf[..n], *family, &mut self.records);
                    if self.records.len() > MAX_RECORDS {
                        self.lost += (self.records.len() - before.max(MAX_RECORDS)) as u64;
                        self.records.truncate(MAX_RECORDS);
                    }
                }
                Err(rustix::io::Errno::NOBUFS) => self.lost += 1,
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::AGAIN) => return,
                Err(e) => {
                    self.link.failed("error", format!("recv: {e}"));
                    self.close();
                    return;
                }
            }
        }
    }

    /// Opens, resolves the family and registers; the socket, the family id and the CPU list.
    fn open(&mut self) -> Result<(OwnedFd, u16, String), (&'static str, String)> {
        let err = |what: &str, e: rustix::io::Errno| ("error", format!("{what}: {e}"));
        let fd = socket()?;
        // Forced past net.core.rmem_max with CAP_NET_ADMIN; otherwise what rmem_max allows.
        if rustix::net::sockopt::set_socket_recv_buffer_size_force(&fd, RCVBUF).is_err() {
            let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&fd, RCVBUF);
        }
        let family = family(&fd, &mut self.buf)?;
        let cpus = self.cpus();
        let mut mask = format!("{cpus}\0").into_bytes();
        self.request(
            &fd,
            family,
            TASKSTATS_CMD_GET,
            ATTR_REGISTER_CPUMASK,
            &mut mask,
        )
        .map_err(|e| match e {
            rustix::io::Errno::PERM | rustix::io::Errno::ACCESS => (
                "no-permission",
                "registering for exits needs root (CAP_NET_ADMIN)".to_owned(),
            ),
            e => err("register", e),
        })?;
        rustix::io::ioctl_fionbio(&fd, true).map_err(|e| err("nonblock", e))?;
        Ok((fd, family, cpus))
    }

    fn request(
        &mut self,
        fd: &OwnedFd,
        kind: u16,
        cmd: u8,
        attr: u16,
        value: &mut Vec<u8>,
    ) -> Result<Option<u16>, rustix::io::Errno> {
        request(fd, &mut self.buf, kind, cmd, attr, value)
    }

    /// The CPUs to register for, as a cpulist (`0-3`).
    fn cpus(&self) -> String {
        for f in ["possible", "online"] {
            let path = self.sys_root.join("devices/system/cpu").join(f);
            if let Ok(t) = std::fs::read_to_string(path)
                && !t.trim().is_empty()
            {
                return t.trim().to_owned();
            }
        }
        let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        format!("0-{}", n - 1)
    }

    /// Deregisters (best effort: the kernel also drops a listener whose socket is gone, at
    /// the next exit it fails to deliver) and closes.
    fn close(&mut self) {
        if let Some((fd, family, cpus)) = self.sock.take() {
            let mut mask = format!("{cpus}\0").into_bytes();
            let msg = request_bytes(
                family,
                TASKSTATS_CMD_GET,
                ATTR_DEREGISTER_CPUMASK,
                &mut mask,
            );
            let _ = rustix::net::sendto(
                &fd,
                &msg,
                SendFlags::DONTWAIT,
                &SocketAddrNetlink::new(0, 0),
            );
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sends one request with one attribute on `fd` and waits for its answer: the family id of a
/// `CTRL_CMD_NEWFAMILY` reply, `None` for an acknowledgement, or the error.
pub(super) fn request(
    fd: &OwnedFd,
    buf: &mut [u8],
    kind: u16,
    cmd: u8,
    attr: u16,
    value: &mut Vec<u8>,
) -> Result<Option<u16>, rustix::io::Errno> {
    let msg = request_bytes(kind, cmd, attr, value);
    rustix::net::sendto(fd, &msg, SendFlags::empty(), &SocketAddrNetlink::new(0, 0))?;
    loop {
        let (_, n) = rustix::net::recv(fd, &mut buf[..], RecvFlags::empty())?;
        let n = n.min(buf.len());
        let mut seen = false;
        for (t, payload) in ts::messages(&buf[..n]) {
            seen = true;
            if t == NLMSG_ERROR {
                return ack(payload).map(|()| None);
            }
            if t == GENL_ID_CTRL {
                return Ok(family_id(payload));
            }
            // An exit notification racing the acknowledgement: left for the drain.
        }
        if !seen {
            return Err(rustix::io::Errno::PROTO);
        }
    }
}

/// An `NLMSG_ERROR` payload: an acknowledgement (error 0) or the error.
pub(super) fn ack(payload: &[u8]) -> Result<(), rustix::io::Errno> {
    let code = payload
        .get(..4)
        .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    if code == 0 {
        Ok(())
    } else {
        Err(rustix::io::Errno::from_raw_os_error(-code))
    }
}

/// A generic-netlink socket bound to the kernel, its receives timing out after a second.
pub(super) fn socket() -> Result<OwnedFd, (&'static str, String)> {
    let err = |what: &str, e: rustix::io::Errno| ("error", format!("{what}: {e}"));
    let fd = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::RAW,
        SocketFlags::CLOEXEC,
        Some(GENERIC),
    )
    .map_err(|e| err("socket", e))?;
    rustix::net::bind(&fd, &SocketAddrNetlink::new(0, 0)).map_err(|e| err("bind", e))?;
    let timeout = Some(std::time::Duration::from_secs(1));
    rustix::net::sockopt::set_socket_timeout(&fd, rustix::net::sockopt::Timeout::Recv, timeout)
        .map_err(|e| err("timeout", e))?;
    Ok(fd)
}

/// The `TASKSTATS` family's id, asked of the control family on `fd`.
pub(super) fn family(fd: &OwnedFd, buf: &mut [u8]) -> Result<u16, (&'static str, String)> {
    let mut name = b"TASKSTATS\0".to_vec();
    request(
        fd,
        buf,
        GENL_ID_CTRL,
        CTRL_CMD_GETFAMILY,
        CTRL_ATTR_FAMILY_NAME,
        &mut name,
    )
    .map_err(|e| match e {
        rustix::io::Errno::NOENT => ("no-family", "the kernel has no TASKSTATS family".to_owned()),
        e => ("error", format!("family: {e}")),
    })?
    .ok_or(("no-family", "no family id in the reply".to_owned()))
}

/// A generic-netlink request: `nlmsghdr`, `genlmsghdr` (version 1), one attribute.
pub(super) fn request_bytes(kind: u16, cmd: u8, attr: u16, value: &mut Vec<u8>) -> Vec<u8> {
    let attr_len = 4 + value.len();
    let len = 16 + 4 + ((attr_len + 3) & !3);
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&REQUEST_ACK.to_ne_bytes());
    m.extend_from_slice(&1u32.to_ne_bytes()); // seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel's
    m.extend_from_slice(&[cmd, 1, 0, 0]);
    m.extend_from_slice(&(attr_len as u16).to_ne_bytes());
    m.extend_from_slice(&attr.to_ne_bytes());
    m.append(value);
    m.resize(len, 0);
    m
}

/// `CTRL_ATTR_FAMILY_ID` of a control-family reply's payload.
fn family_id(payload: &[u8]) -> Option<u16> {
    let mut b = payload.get(4..)?;
    while b.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([b[0], b[1]]));
        let kind = u16::from_ne_bytes([b[2], b[3]]);
        if len < 4 || len > b.len() {
            return None;
        }
        if kind == CTRL_ATTR_FAMILY_ID && len >= 6 {
            return Some(u16::from_ne_bytes([b[4], b[5]]));
        }
        b = b.get((len + 3) & !3..)?;
    }
    None
}

/// What the listener says for the status line, for tests.
#[cfg(test)]
fn describe(l: &Listener) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = write!(s, "{} {:?}", l.link.state, l.link.why);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a failure the next attempt is `RETRY_TICKS` samples on, and opening clears
    /// the reason.
    #[test]
    fn a_failed_link_is_tried_again_retry_ticks_later() {
        let mut l = Link::off();
        assert!(l.due(), "a first attempt at once");
        l.failed("error", "recv: EIO".to_owned());
        let waited = (0..=RETRY_TICKS).take_while(|_| !l.due()).count();
        assert_eq!(waited, RETRY_TICKS as usize);
        assert_eq!((l.state, l.why.as_deref()), ("error", Some("recv: EIO")));
        l.opened("listening");
        assert_eq!((l.state, l.why.as_deref()), ("listening", None));
        assert!(l.due());
    }

    #[test]
    fn a_request_is_padded_and_carries_its_attribute() {
        let mut v = b"TASKSTATS\0".to_vec();
        let m = request_bytes(
            GENL_ID_CTRL,
            CTRL_CMD_GETFAMILY,
            CTRL_ATTR_FAMILY_NAME,
            &mut v,
        );
        assert_eq!(m.len(), 36, "16 + 4 + 4 + 10, padded to 12");
        assert_eq!(u32::from_ne_bytes(m[..4].try_into().unwrap()), 36);
        assert_eq!(&m[24..33], b"TASKSTATS");
        assert_eq!(m[16], CTRL_CMD_GETFAMILY);
    }

    #[test]
    fn the_family_id_is_found_among_the_reply_attributes() {
        // genlmsghdr, a name attribute, then the id.
        let mut p = vec![1, 2, 0, 0];
        p.extend_from_slice(&14u16.to_ne_bytes());
        p.extend_from_slice(&CTRL_ATTR_FAMILY_NAME.to_ne_bytes());
        p.extend_from_slice(b"TASKSTATS\0\0\0\0\0");
        p.truncate(4 + 16);
        p.extend_from_slice(&6u16.to_ne_bytes());
        p.extend_from_slice(&CTRL_ATTR_FAMILY_ID.to_ne_bytes());
        p.extend_from_slice(&0x1bu16.to_ne_bytes());
        p.extend_from_slice(&[0, 0]);
        assert_eq!(family_id(&p), Some(0x1b));
        assert_eq!(family_id(&p[..10]), None);
    }

    /// Against the live kernel: the listener registers and sees a child's exit with its comm
    /// and the bytes it dirtied, or says why it could not (a kernel without taskstats, or one
    /// that wants CAP_NET_ADMIN of a caller without it; this VM's 6.18 accepts anyone).
    #[test]
    fn the_live_listener_registers_or_says_why() {
        let mut l = Listener::new("/sys".into());
        l.sample(true, 1);
        if l.link.state != "listening" {
            assert!(l.link.why.is_some(), "{}", describe(&l));
            assert!(
                l.out.starts_with(&format!("state {}\n", l.link.state)),
                "{}",
                l.out
            );
            return;
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mut child = std::process::Command::new("dd")
            .args(["if=/dev/zero", "bs=64k", "count=16", "status=none"])
            .arg(format!("of={}", dir.path().join("f").display()))
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(child.wait().unwrap().success());
        l.sample(true, 2);
        let e = ts::parse(&l.out).unwrap();
        let dd = e
            .records
            .iter()
            .find(|r| r.pid == pid && !r.group)
            .unwrap_or_else(|| panic!("no dd {pid} in {}", l.out));
        assert_eq!(dd.comm, "dd");
        // 1 MiB of data; the filesystem at times charges dd a page more (1 MiB + 4 KiB seen).
        let dirtied = dd.io.unwrap()[3];
        assert!(
            (1 << 20..=(1 << 20) + (64 << 10)).contains(&dirtied),
            "dd dirtied 1 MiB: {}",
            l.out
        );
        assert!(dd.flags & ts::AGROUP != 0, "{}", l.out);
        assert_eq!(e.since_ns, Some(1));
        l.sample(false, 3);
        assert!(l.out.is_empty());
    }
}
