//! The disks' calm baselines kept across runs: the state file every pagewatch on the machine
//! shares (`source::baselines` reads and writes it) and the `pagewatch/baselines` pseudo-file
//! a sample carries it in (`names::BASELINES`), in one text format, so a recording judges its
//! disks against the baselines the live run had.
//!
//! ```text
//! pagewatch-baselines 1
//! device serial=overlayblk;model=;size=536870912;lbs=512;rot=1
//! seen 1795950000
//! peak 812000 640000
//! reads 0.061 - - - - - - - - - - -
//! writes 0.86 - - - - 1.9 - - - - 6.1 -
//! saturated 1795950003
//! ```
//!
//! One block per device, keyed by its identity (`parse::queue`): the wall time (s) it was last
//! written for, the most kB/s it read and wrote in one sample, each direction's calm await
//! (ms) per request size class (`model::saturation::SizeClass`, `-` for none), and, while an
//! instance judges the device saturated, the wall time (s) until which that judgement stands
//! (`model::saturation`: another instance that sees the same warning holds it too). The file is
//! someone else's input: it is refused whole, with the line and the reason, when it is larger
//! than `MAX_BYTES`, has more than `MAX_DEVICES` devices, an unknown line, a figure that is
//! not finite or out of range, or a device twice. Never a panic, never half a file.
//!
//! Owns: the format, `Stored`, `Device`, `parse`, `render`. Must not touch: I/O, judging.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Request size classes a direction keeps a baseline for (`model::saturation::SizeClass`).
pub const CLASSES: usize = 12;
/// The most devices the file keeps (the least recently seen are dropped on writing).
pub const MAX_DEVICES: usize = 64;
/// The largest file read: 64 devices take about 12 KiB.
pub const MAX_BYTES: u64 = 64 * 1024;
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

/// The devices' baselines by identity.
pub type Stored = BTreeMap<String, Device>;

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
    let mut out = Stored::new();
    let mut cur: Option<(String, Device)> = None;
    for (i, line) in lines {
        let at = |why: String| format!("line {}: {why}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        if key == "device" {
            if let Some((id, d)) = cur.take() {
                put(&mut out, id, d).map_err(at)?;
            }
            identity_ok(rest).map_err(at)?;
            cur = Some((rest.to_owned(), Device::default()));
            continue;
        }
        let Some((_, d)) = cur.as_mut() else {
            return Err(at(format!("`{key}` before any `device`")));
        };
        match key {
            "seen" => d.seen_s = time(rest).map_err(at)?,
            "saturated" => d.saturated_until_s = Some(time(rest).map_err(at)?),
            "peak" => {
                let v = figures(rest, 2, MAX_KB_S).map_err(at)?;
                d.peak_kb_s = [v[0].unwrap_or(0.0), v[1].unwrap_or(0.0)];
            }
            "reads" | "writes" => {
                let v = figures(rest, CLASSES, MAX_MS).map_err(at)?;
                let dir = usize::from(key == "writes");
                for (slot, x) in d.baseline_ms[dir].iter_mut().zip(v) {
                    *slot = x.filter(|x| *x > 0.0);
                }
            }
            _ => return Err(at(format!("unknown line `{key}`"))),
        }
    }
    if let Some((id, d)) = cur {
        put(&mut out, id, d).map_err(|why| format!("end: {why}"))?;
    }
    Ok(out)
}

fn put(out: &mut Stored, id: String, d: Device) -> Result<(), String> {
    if out.len() >= MAX_DEVICES {
        return Err(format!("more than {MAX_DEVICES} devices"));
    }
    if out.contains_key(&id) {
        return Err(format!("device `{id}` twice"));
    }
    out.insert(id, d);
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
    for (id, d) in stored {
        let _ = writeln!(s, "device {id}");
        let _ = writeln!(s, "seen {}", d.seen_s);
        let _ = writeln!(s, "peak {:.0} {:.0}", d.peak_kb_s[0], d.peak_kb_s[1]);
        for (dir, name) in ["reads", "writes"].iter().enumerate() {
            s.push_str(name);
            for b in d.baseline_ms[dir] {
                match b {
                    Some(b) => {
                        let _ = write!(s, " {b:.4}");
                    }
                    None => s.push_str(" -"),
                }
            }
            s.push('\n');
        }
        if let Some(t) = d.saturated_until_s {
            let _ = writeln!(s, "saturated {t}");
        }
    }
    s
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
        Stored::from([("serial=x;size=8;lbs=512;rot=0".to_owned(), d)])
    }

    #[test]
    fn render_and_parse_agree() {
        let s = one();
        let text = render(&s);
        assert!(text.contains("\nreads 0.0610 - -"), "{text}");
        assert!(text.ends_with("\nsaturated 1795950003\n"), "{text}");
        assert_eq!(parse(&text), Ok(s));
        assert_eq!(parse(MAGIC), Ok(Stored::new()));
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
        assert_eq!(parse(&huge).unwrap_err(), "larger than 64 KiB");
        assert!(parse("").is_err());
        assert!(parse("seen 1\n").is_err());
        // A figure line before any device.
        assert!(
            parse(&format!("{MAGIC}\nreads 1"))
                .unwrap_err()
                .contains("before any")
        );
    }
}
