//! The calm baselines kept across runs, the disks' and the processes': the state file every
//! pagewatch on the machine shares (`source::baselines` reads and writes it) and the
//! `pagewatch/baselines` pseudo-file a sample carries it in (`names::BASELINES`), in one text
//! format, so a recording judges its disks and names its victims against the baselines the
//! live run had.
//!
//! ```text
//! pagewatch-baselines 1
//! reference 1795950000 4831838208 24298708992
//! device serial=overlayblk;model=;size=536870912;lbs=512;rot=1
//! seen 1795950000
//! peak 812000 640000
//! reads 0.061 - - - - - - - - - - -
//! writes 0.86 - - - - 1.9 - - - - 6.1 -
//! saturated 1795950003
//! process 13460 python3
//! calm 0.32 -
//! seen 1795950003
//! ```
//!
//! One block per device, keyed by its identity (`parse::queue`): the wall time (s) it was last
//! written for, the most kB/s it read and wrote in one sample, each direction's calm await
//! (ms) per request size class (`model::saturation::SizeClass`, `-` for none), and, while an
//! instance judges the device saturated, the wall time (s) until which that judgement stands
//! (`model::saturation`: another instance that sees the same warning holds it too).
//!
//! At most one `reference` line: the wall time (s) of the last calm step an instance handed
//! back, the dirty threshold and MemAvailable (bytes) then (`model::story::Calm`): an instance
//! started mid-incident tells "T 4.5G → 1.1G as MemAvailable fell 22.6G → 5.4G" as one that
//! saw the calm does.
//!
//! One block per process, keyed by its pid and comm (the rest of the line: it may hold
//! spaces): its calm fsync mean (ms) and IO wait (ms/s), `-` for none (`model::story::Calm`),
//! and the wall time (s) a walk last listed it. A process's calm counts for
//! `PROCESS_KEEP_S` after that: an instance started mid-incident names the victims, with the
//! ratios, that one which saw them calm names. The version stays 1 (a file without process
//! blocks reads as before); a binary older than the process blocks refuses a file that has
//! them as an unknown line, and rewrites it without them.
//!
//! The file is someone else's input: it is refused whole, with the line and the reason, when
//! it is larger than `MAX_BYTES`, has more than `MAX_DEVICES` devices or `MAX_PROCESSES`
//! processes, an unknown line, a figure that is not finite or out of range, a bad comm, or a
//! device or process twice. Never a panic, never half a file.
//!
//! Owns: the format, `Stored`, `Device`, `Process`, `parse`, `render`. Must not touch: I/O,
//! judging.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Request size classes a direction keeps a baseline for (`model::saturation::SizeClass`).
pub const CLASSES: usize = 12;
/// The most devices the file keeps (the least recently seen are dropped on writing).
pub const MAX_DEVICES: usize = 64;
/// The most processes the file keeps (the least recently seen are dropped on writing).
pub const MAX_PROCESSES: usize = 256;
/// A process's calm counts this long after a walk last listed it, s, and is dropped from the
/// file on writing after it (`model::story::CALM_KEEP_MS`).
pub const PROCESS_KEEP_S: i64 = 300;
/// The largest file read. A device takes at most 879 bytes (a 512-byte identity, 12 figures
/// of up to 10 characters a direction, two 10-digit peaks, two 19-digit times): 64 take
/// 56,256. A process takes at most 136 (a 10-digit pid, a 64-byte comm, two 10-character
/// figures, a 19-digit time): 256 take 34,816. The `reference` line at most 64 (a 19-digit
/// time, two 16-digit byte counts). All, 91,158 bytes with the header, fit 96 KiB.
pub const MAX_BYTES: u64 = 96 * 1024;
/// A byte count above this (1 PiB) is not a machine's memory.
const MAX_BYTES_FIGURE: f64 = 1e15;
/// The longest comm accepted, bytes.
const MAX_COMM: usize = 64;
/// The longest identity accepted.
const MAX_IDENTITY: usize = 512;
/// A calm await above this (ms) is not a calm await.
const MAX_MS: f64 = 60_000.0;
/// A peak above this (kB/s, 1 TB/s) is not a disk's.
const MAX_KB_S: f64 = 1e9;
/// The first line.
const MAGIC: &str = "pagewatch-baselines 1";

/// One device's calm baselines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    /// Each direction's (reads, writes) calm await per size class, ms.
    pub baseline_ms: [[Option<f64>; CLASSES]; 2],
    /// The most kB/s read and written in one sample.
    pub peak_kb_s: [f64; 2],
    /// Wall time it was last written for, seconds since the epoch (0: not yet).
    pub seen_s: i64,
    /// Wall time (s) until which an instance's "saturated" stands (`model::saturation`);
    /// `None` when no instance judged it saturated.
    pub saturated_until_s: Option<i64>,
}

impl Device {
    /// Whether it holds any baseline.
    #[must_use]
    pub fn any(&self) -> bool {
        self.baseline_ms.iter().flatten().any(Option::is_some)
    }
}

/// One process's calm figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Process {
    /// Calm fsync mean (ms) and IO wait (ms/s).
    pub calm: [Option<f64>; 2],
    /// Wall time a walk last listed it, seconds since the epoch.
    pub seen_s: i64,
}

/// The processes' calm figures by (pid, comm).
pub type Processes = BTreeMap<(u32, String), Process>;

/// The machine at the last calm step (`model::story::Calm`): the dirty threshold and
/// MemAvailable, bytes, against which "the thresholds moved" is told.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reference {
    /// Wall time of that step, seconds since the epoch.
    pub seen_s: i64,
    /// The dirty threshold (spec §1.2), bytes.
    pub thresh_bytes: f64,
    /// MemAvailable, bytes.
    pub available_bytes: f64,
}

/// What the file holds: the devices' baselines by identity, the processes' calm by (pid,
/// comm).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    /// Each device's baselines, by identity.
    pub devices: BTreeMap<String, Device>,
    /// Each process's calm figures, by pid and comm.
    pub processes: Processes,
    /// The machine at the last calm step any instance saw.
    pub reference: Option<Reference>,
}

impl Stored {
    /// Only `devices`.
    #[must_use]
    pub fn with_devices(devices: impl IntoIterator<Item = (String, Device)>) -> Self {
        Self {
            devices: devices.into_iter().collect(),
            processes: BTreeMap::new(),
            reference: None,
        }
    }

    /// Whether it holds no device, no process and no reference.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty() && self.processes.is_empty() && self.reference.is_none()
    }

    /// `other`'s devices and processes over these, and the newer reference; then at most
    /// `MAX_DEVICES` and `MAX_PROCESSES`, the least recently seen dropped.
    pub fn extend(&mut self, other: Self) {
        self.devices.extend(other.devices);
        self.processes.extend(other.processes);
        if let Some(r) = other.reference
            && self.reference.is_none_or(|mine| r.seen_s > mine.seen_s)
        {
            self.reference = Some(r);
        }
        self.trim();
    }

    /// Drops the least recently seen devices and processes beyond `MAX_DEVICES` and
    /// `MAX_PROCESSES`.
    pub fn trim(&mut self) {
        drop_oldest(&mut self.devices, MAX_DEVICES, |d| d.seen_s);
        drop_oldest(&mut self.processes, MAX_PROCESSES, |p| p.seen_s);
    }
}

/// Drops the entries of `map` with the smallest `seen` until at most `max` are left.
fn drop_oldest<K: Ord + Clone, V>(map: &mut BTreeMap<K, V>, max: usize, seen: fn(&V) -> i64) {
    if map.len() <= max {
        return;
    }
    let mut by_age: Vec<(i64, K)> = map.iter().map(|(k, v)| (seen(v), k.clone())).collect();
    by_age.sort();
    for (_, k) in by_age.into_iter().take(map.len() - max) {
        map.remove(&k);
    }
}

/// The block a line belongs to while parsing.
enum Block {
    Device(String, Box<Device>),
    Process((u32, String), Process),
}

/// Parses the file or pseudo-file; `Err("line N: why")` refuses it whole.
pub fn parse(text: &str) -> Result<Stored, String> {
    if text.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {} KiB", MAX_BYTES / 1024));
    }
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, MAGIC)) => {}
        _ => return Err(format!("line 1: not `{MAGIC}`")),
    }
    let mut out = Stored::default();
    let mut cur: Option<Block> = None;
    for (i, line) in lines {
        let at = |why: String| format!("line {}: {why}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let next = match key {
            "device" => {
                identity_ok(rest).map_err(at)?;
                Block::Device(rest.to_owned(), Box::default())
            }
            "process" => Block::Process(process_key(rest).map_err(at)?, Process::default()),
            "reference" => {
                if out.reference.is_some() {
                    return Err(at("`reference` twice".into()));
                }
                out.reference = Some(reference(rest).map_err(at)?);
                if let Some(done) = cur.take() {
                    put(&mut out, done).map_err(at)?;
                }
                continue;
            }
            _ => {
                let Some(block) = cur.as_mut() else {
                    return Err(at(format!("`{key}` before any `device` or `process`")));
                };
                match block {
                    Block::Device(_, d) => device_line(d, key, rest).map_err(at)?,
                    Block::Process(_, p) => process_line(p, key, rest).map_err(at)?,
                }
                continue;
            }
        };
        if let Some(done) = cur.replace(next) {
            put(&mut out, done).map_err(at)?;
        }
    }
    if let Some(done) = cur {
        put(&mut out, done).map_err(|why| format!("end: {why}"))?;
    }
    Ok(out)
}

/// One line of a device block.
fn device_line(d: &mut Device, key: &str, rest: &str) -> Result<(), String> {
    match key {
        "seen" => d.seen_s = time(rest)?,
        "saturated" => d.saturated_until_s = Some(time(rest)?),
        "peak" => {
            let v = figures(rest, 2, MAX_KB_S)?;
            d.peak_kb_s = [v[0].unwrap_or(0.0), v[1].unwrap_or(0.0)];
        }
        "reads" | "writes" => {
            let v = figures(rest, CLASSES, MAX_MS)?;
            let dir = usize::from(key == "writes");
            for (slot, x) in d.baseline_ms[dir].iter_mut().zip(v) {
                *slot = x.filter(|x| *x > 0.0);
            }
        }
        _ => return Err(format!("unknown line `{key}`")),
    }
    Ok(())
}

/// One line of a process block.
fn process_line(p: &mut Process, key: &str, rest: &str) -> Result<(), String> {
    match key {
        "seen" => p.seen_s = time(rest)?,
        "calm" => {
            let v = figures(rest, 2, MAX_MS)?;
            p.calm = [v[0], v[1]];
        }
        _ => return Err(format!("unknown line `{key}`")),
    }
    Ok(())
}

/// A `reference` line's rest: the wall time (s), the dirty threshold and MemAvailable (bytes).
fn reference(rest: &str) -> Result<Reference, String> {
    let (seen, bytes) = rest.split_once(' ').unwrap_or((rest, ""));
    let v = figures(bytes, 2, MAX_BYTES_FIGURE)?;
    let (Some(thresh_bytes), Some(available_bytes)) = (v[0], v[1]) else {
        return Err("a `reference` without its figures".into());
    };
    Ok(Reference {
        seen_s: time(seen)?,
        thresh_bytes,
        available_bytes,
    })
}

/// The (pid, comm) of a `process` line's rest.
fn process_key(rest: &str) -> Result<(u32, String), String> {
    let (pid, comm) = rest.split_once(' ').unwrap_or((rest, ""));
    let pid: u32 = pid
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("bad pid `{pid}`"))?;
    comm_ok(comm)?;
    Ok((pid, comm.to_owned()))
}

/// A comm is printable text, 1 to `MAX_COMM` bytes.
pub fn comm_ok(comm: &str) -> Result<(), String> {
    if comm.is_empty() || comm.len() > MAX_COMM || comm.chars().any(char::is_control) {
        return Err("bad process comm".into());
    }
    Ok(())
}

fn put(out: &mut Stored, block: Block) -> Result<(), String> {
    match block {
        Block::Device(id, d) => {
            if out.devices.len() >= MAX_DEVICES {
                return Err(format!("more than {MAX_DEVICES} devices"));
            }
            if out.devices.contains_key(&id) {
                return Err(format!("device `{id}` twice"));
            }
            out.devices.insert(id, *d);
        }
        Block::Process(key, p) => {
            if out.processes.len() >= MAX_PROCESSES {
                return Err(format!("more than {MAX_PROCESSES} processes"));
            }
            if out.processes.contains_key(&key) {
                return Err(format!("process `{} {}` twice", key.0, key.1));
            }
            out.processes.insert(key, p);
        }
    }
    Ok(())
}

/// A wall time, seconds since the epoch.
fn time(text: &str) -> Result<i64, String> {
    text.parse()
        .ok()
        .filter(|t| *t >= 0)
        .ok_or_else(|| format!("bad time `{text}`"))
}

/// An identity is one line of printable text, at most `MAX_IDENTITY` bytes.
pub fn identity_ok(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > MAX_IDENTITY || id.chars().any(char::is_control) {
        return Err("bad device identity".into());
    }
    Ok(())
}

/// Exactly `n` figures, each `-` or a finite number in `0..=max`.
fn figures(text: &str, n: usize, max: f64) -> Result<Vec<Option<f64>>, String> {
    let v: Vec<Option<f64>> = text
        .split_whitespace()
        .map(|f| match f {
            "-" => Ok(None),
            f => match f.parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=max).contains(&x) => Ok(Some(x)),
                _ => Err(format!("bad figure `{f}`")),
            },
        })
        .collect::<Result<_, _>>()?;
    if v.len() != n {
        return Err(format!("{} figures, not {n}", v.len()));
    }
    Ok(v)
}

/// The text of `stored`, which `parse` reads back the same (figures kept to 4 significant
/// decimals of a ms, peaks to the kB/s).
#[must_use]
pub fn render(stored: &Stored) -> String {
    let mut s = format!("{MAGIC}\n");
    if let Some(r) = &stored.reference {
        let (t, a) = (r.thresh_bytes, r.available_bytes);
        let _ = writeln!(s, "reference {} {t:.0} {a:.0}", r.seen_s);
    }
    for (id, d) in &stored.devices {
        let _ = writeln!(s, "device {id}");
        let _ = writeln!(s, "seen {}", d.seen_s);
        let _ = writeln!(s, "peak {:.0} {:.0}", d.peak_kb_s[0], d.peak_kb_s[1]);
        for (dir, name) in ["reads", "writes"].iter().enumerate() {
            s.push_str(name);
            put_figures(&mut s, &d.baseline_ms[dir]);
        }
        if let Some(t) = d.saturated_until_s {
            let _ = writeln!(s, "saturated {t}");
        }
    }
    for ((pid, comm), p) in &stored.processes {
        let _ = writeln!(s, "process {pid} {comm}");
        s.push_str("calm");
        put_figures(&mut s, &p.calm);
        let _ = writeln!(s, "seen {}", p.seen_s);
    }
    s
}

/// ` 0.0610 - …` and the end of the line.
fn put_figures(s: &mut String, figures: &[Option<f64>]) {
    for f in figures {
        match f {
            Some(f) => {
                let _ = write!(s, " {f:.4}");
            }
            None => s.push_str(" -"),
        }
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Stored {
        let mut d = Device {
            peak_kb_s: [812_000.0, 640_000.0],
            seen_s: 1_795_950_000,
            ..Device::default()
        };
        d.baseline_ms[0][0] = Some(0.061);
        d.baseline_ms[1][5] = Some(1.9);
        d.saturated_until_s = Some(1_795_950_003);
        Stored::with_devices([("serial=x;size=8;lbs=512;rot=0".to_owned(), d)])
    }

    #[test]
    fn render_and_parse_agree() {
        let s = one();
        let text = render(&s);
        assert!(text.contains("\nreads 0.0610 - -"), "{text}");
        assert!(text.ends_with("\nsaturated 1795950003\n"), "{text}");
        assert_eq!(parse(&text), Ok(s));
        assert_eq!(parse(MAGIC), Ok(Stored::default()));
    }

    #[test]
    fn a_damaged_or_hostile_file_is_refused_whole_with_the_line() {
        let good = render(&one());
        let bad = |from: &str, to: &str| parse(&good.replace(from, to)).unwrap_err();
        assert_eq!(
            bad("pagewatch-baselines 1", "pagewatch-baselines 9"),
            "line 1: not `pagewatch-baselines 1`"
        );
        assert_eq!(bad("reads 0.0610", "reads NaN"), "line 5: bad figure `NaN`");
        assert_eq!(bad("reads 0.0610", "reads -1"), "line 5: bad figure `-1`");
        assert_eq!(
            bad("reads 0.0610", "reads 1e300"),
            "line 5: bad figure `1e300`"
        );
        assert_eq!(
            bad("reads 0.0610 -", "reads 0.0610"),
            "line 5: 11 figures, not 12"
        );
        assert_eq!(
            bad("seen 1795950000", "seen soon"),
            "line 3: bad time `soon`"
        );
        assert_eq!(bad("peak", "rm -rf"), "line 4: unknown line `rm`");
        assert_eq!(
            bad("saturated 1795950003", "saturated -5"),
            "line 7: bad time `-5`"
        );
        assert_eq!(
            bad("device serial", "device \u{1b}[2Jserial"),
            "line 2: bad device identity"
        );
        // Truncated in the middle of a line (a torn copy): refused, not half-read.
        let torn = &good[..good.len() - 30];
        assert!(parse(torn).unwrap_err().starts_with("line 6:"), "{torn}");
        // The same device twice, too many devices, too large a file, no header.
        let twice = format!("{good}{}", good.trim_start_matches(MAGIC));
        assert!(parse(&twice).unwrap_err().contains("twice"));
        let mut many = String::from(MAGIC);
        for i in 0..=MAX_DEVICES {
            let _ = write!(many, "\ndevice d{i}");
        }
        assert_eq!(
            parse(&many).unwrap_err(),
            format!("end: more than {MAX_DEVICES} devices")
        );
        let huge = format!("{MAGIC}\n{}", " ".repeat(MAX_BYTES as usize));
        assert_eq!(parse(&huge).unwrap_err(), "larger than 96 KiB");
        assert!(parse("").is_err());
        assert!(parse("seen 1\n").is_err());
        // A figure line before any device.
        assert!(
            parse(&format!("{MAGIC}\nreads 1"))
                .unwrap_err()
                .contains("before any")
        );
    }

    /// `one()` with two processes: python3's calm fsync, and a comm with a space.
    fn with_processes() -> Stored {
        let mut s = one();
        s.processes.insert(
            (13460, "python3".into()),
            Process {
                calm: [Some(0.32), None],
                seen_s: 1_795_950_003,
            },
        );
        s.processes.insert(
            (7, "kworker u8:2".into()),
            Process {
                calm: [None, Some(0.0)],
                seen_s: 1_795_950_001,
            },
        );
        s
    }

    #[test]
    fn processes_render_and_parse_agree_and_a_file_without_them_still_parses() {
        let s = with_processes();
        let text = render(&s);
        assert!(
            text.ends_with(
                "\nprocess 7 kworker u8:2\ncalm - 0.0000\nseen 1795950001\n\
                 process 13460 python3\ncalm 0.3200 -\nseen 1795950003\n"
            ),
            "{text}"
        );
        assert_eq!(parse(&text), Ok(s));
        // A file written before the process blocks: its devices, no process.
        let old = render(&one());
        assert_eq!(parse(&old).unwrap().processes.len(), 0);
        assert_eq!(parse(&old).unwrap().devices.len(), 1);
        // A process block first, then a device.
        let first = format!(
            "{MAGIC}\nprocess 1 init\ncalm 0.1 -\nseen 5\n{}",
            old.trim_start_matches(MAGIC).trim_start()
        );
        let read = parse(&first).unwrap();
        assert_eq!((read.devices.len(), read.processes.len()), (1, 1));
    }

    #[test]
    fn a_bad_process_block_refuses_the_file_whole() {
        let good = render(&with_processes());
        let bad = |from: &str, to: &str| parse(&good.replace(from, to)).unwrap_err();
        let long = format!("13460 {}", "p".repeat(MAX_COMM + 1));
        for (from, to, why) in [
            ("calm 0.3200 -", "calm inf -", "line 12: bad figure `inf`"),
            ("calm 0.3200 -", "calm 0.32", "line 12: 1 figures, not 2"),
            (
                "calm 0.3200 -",
                "calm 0.3200 - 1",
                "line 12: 3 figures, not 2",
            ),
            ("calm 0.3200 -", "reads 1", "line 12: unknown line `reads`"),
            ("process 13460 ", "process x ", "line 11: bad pid `x`"),
            ("process 13460 ", "process 0 ", "line 11: bad pid `0`"),
            (
                "13460 python3",
                "13460 \u{1b}]0;x",
                "line 11: bad process comm",
            ),
            ("13460 python3", "13460", "line 11: bad process comm"),
            ("13460 python3", &long, "line 11: bad process comm"),
            // The same process twice; a device's line in a process block.
            (
                "process 7 kworker u8:2",
                "process 13460 python3",
                "end: process `13460 python3` twice",
            ),
            (
                "seen 1795950001",
                "saturated 1795950001",
                "line 10: unknown line `saturated`",
            ),
        ] {
            assert_eq!(bad(from, to), why, "{from} → {to}");
        }
        let fits = format!("13460 {}", "p".repeat(MAX_COMM));
        assert!(parse(&good.replace("13460 python3", &fits)).is_ok());
        // More than `MAX_PROCESSES`.
        let mut many = String::from(MAGIC);
        for i in 1..=MAX_PROCESSES + 1 {
            let _ = write!(many, "\nprocess {i} p\ncalm 1 -");
        }
        assert_eq!(
            parse(&many).unwrap_err(),
            format!("end: more than {MAX_PROCESSES} processes")
        );
    }

    #[test]
    fn the_largest_file_fits_max_bytes_and_trim_keeps_the_newest() {
        let mut s = Stored::default();
        for i in 0..MAX_DEVICES {
            let mut d = Device {
                peak_kb_s: [MAX_KB_S; 2],
                seen_s: i64::MAX,
                saturated_until_s: Some(i64::MAX),
                ..Device::default()
            };
            d.baseline_ms = [[Some(MAX_MS); CLASSES]; 2];
            let id = format!("{i:0>512}");
            s.devices.insert(id, d);
        }
        for i in 0..MAX_PROCESSES + 10 {
            let comm = format!("{i:p>64}");
            let p = Process {
                calm: [Some(MAX_MS); 2],
                seen_s: i64::MAX - 1000 + i64::try_from(i).unwrap(),
            };
            s.processes.insert((u32::MAX - i as u32, comm), p);
        }
        s.reference = Some(Reference {
            seen_s: i64::MAX,
            thresh_bytes: MAX_BYTES_FIGURE,
            available_bytes: MAX_BYTES_FIGURE,
        });
        s.trim();
        assert_eq!(s.processes.len(), MAX_PROCESSES);
        // The ten least recently seen went.
        assert!(s.processes.values().all(|p| p.seen_s >= i64::MAX - 990));
        let text = render(&s);
        assert_eq!(text.len(), 91_158);
        assert!(text.len() as u64 <= MAX_BYTES);
        assert_eq!(parse(&text), Ok(s));
    }

    #[test]
    fn the_reference_reads_back_and_a_bad_one_refuses_the_file() {
        let mut s = one();
        s.reference = Some(Reference {
            seen_s: 1_795_950_000,
            thresh_bytes: 4_831_838_208.0,
            available_bytes: 24_298_708_992.0,
        });
        let text = render(&s);
        assert!(
            text.starts_with(
                "pagewatch-baselines 1\nreference 1795950000 4831838208 24298708992\n"
            ),
            "{text}"
        );
        assert_eq!(parse(&text), Ok(s));
        // After a block, it ends that block and belongs to none.
        let after = "pagewatch-baselines 1\nprocess 7 sh\ncalm 0.5 -\nreference 5 10 20\nseen 9\n";
        assert_eq!(
            parse(after),
            Err("line 5: `seen` before any `device` or `process`".into())
        );
        for (bad, why) in [
            (
                "reference 5 10 20\nreference 6 10 20",
                "line 3: `reference` twice",
            ),
            ("reference 5 10", "line 2: 1 figures, not 2"),
            (
                "reference 5 - 20",
                "line 2: a `reference` without its figures",
            ),
            ("reference -5 10 20", "line 2: bad time `-5`"),
            ("reference 5 10 2e15", "line 2: bad figure `2e15`"),
        ] {
            let text = format!("pagewatch-baselines 1\n{bad}\n");
            assert_eq!(parse(&text), Err(why.into()), "{bad}");
        }
    }
}
