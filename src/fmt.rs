//! Number formatting shared by the text output and the TUI: sizes, rates, percentages, time.
//!
//! Each format is a `Display` type (`Bytes`, `Rate`, `Opt`, `Fit`, `Percent`, `PerSec`,
//! `Dash`, `ClockUtc`) that callers write straight into the text they are building, with the
//! usual width and alignment (`{:>8}`); most also have a `value → String` function (`bytes`,
//! `rate`, `opt`, `pages`, `clock_utc`) for one-off use. Both give the same text.
//! `parse_duration` reads the duration syntax back (`90`, `10m`, `1.5h`).
//! Owns: pure formatting and the duration syntax. Must not touch: I/O or the clock.

use std::fmt::{self, Display, Formatter, Write};
use std::time::Duration;

/// A byte count as a short human size with binary units: `512B`, `1.5K`, `23.1G`.
#[derive(Debug, Clone, Copy)]
pub struct Bytes(pub f64);

impl Bytes {
    /// `p` pages of `page_size` bytes.
    #[must_use]
    pub fn pages(p: u64, page_size: u64) -> Self {
        Self(p as f64 * page_size as f64)
    }

    /// `kb` kibibytes (as /proc/meminfo counts).
    #[must_use]
    pub fn kb(kb: u64) -> Self {
        Self(kb as f64 * 1024.0)
    }
}

impl Display for Bytes {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
        let mut v = self.0;
        let mut u = 0;
        while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        // One decimal for K and up below 100: `1.5K`, `23.3G`, `512B`, `200M`.
        let decimals = usize::from(u > 0 && v.abs() < 100.0);
        padded(f, format_args!("{v:.decimals$}{}", UNITS[u]))
    }
}

/// A rate in compact form: `0`, `12`, `3.4k`, `12M`; `-` when there is none.
#[derive(Debug, Clone, Copy)]
pub struct Rate(pub Option<f64>);

impl Display for Rate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Some(v) = self.0 else { return f.pad("-") };
        if v < 10.0 {
            // One decimal, without a trailing `.0`.
            return with_text(format_args!("{v:.1}"), |s| {
                f.pad(s.strip_suffix(".0").unwrap_or(s))
            });
        }
        if v < 10_000.0 {
            padded(f, format_args!("{v:.0}"))
        } else if v < 10_000_000.0 {
            padded(f, format_args!("{:.1}k", v / 1000.0))
        } else {
            padded(f, format_args!("{:.0}M", v / 1e6))
        }
    }
}

/// An optional figure with a number of decimals, or `-` when there is none (first tick, reset).
#[derive(Debug, Clone, Copy)]
pub struct Opt(pub Option<f64>, pub usize);

impl Display for Opt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) => {
                let decimals = self.1;
                padded(f, format_args!("{v:.decimals$}"))
            }
            None => f.pad("-"),
        }
    }
}

/// Any shown value, or `-` when there is none.
#[derive(Debug, Clone, Copy)]
pub struct Dash<T>(pub Option<T>);

impl<T: Display> Display for Dash<T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(v) => v.fmt(f),
            None => f.pad("-"),
        }
    }
}

/// A percentage without decimals: `97%`.
#[derive(Debug, Clone, Copy)]
pub struct Percent(pub f64);

impl Display for Percent {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        padded(f, format_args!("{:.0}%", self.0))
    }
}

/// A figure per second: `12/s`, `1.5M/s`.
#[derive(Debug, Clone, Copy)]
pub struct PerSec<T>(pub T);

impl<T: Display> Display for PerSec<T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        padded(f, format_args!("{}/s", self.0))
    }
}

/// A figure in fewer than `width` characters (`.2`): with `decimals` (`.1`) when that is
/// short enough, else compact as a `Rate`; `-` when there is none. A table's cell.
#[derive(Debug, Clone, Copy)]
pub struct Fit(pub Option<f64>, pub usize, pub usize);

impl Display for Fit {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Self(v, decimals, width) = *self;
        let Some(v) = v else { return f.pad("-") };
        with_text(format_args!("{v:.decimals$}"), |s| {
            if s.len() < width {
                f.pad(s)
            } else {
                Rate(Some(v)).fmt(f)
            }
        })
    }
}

/// Writes `args` through `f.pad`, so width and alignment apply to the whole text as they do
/// to a `String`'s.
fn padded(f: &mut Formatter<'_>, args: fmt::Arguments<'_>) -> fmt::Result {
    if f.width().is_none() && f.precision().is_none() {
        // Nothing to pad or cut: `pad` would write the text as it is.
        return f.write_fmt(args);
    }
    with_text(args, |s| f.pad(s))
}

/// Calls `then` with the text of `args`, formatted on the stack when it is short.
fn with_text<R>(args: fmt::Arguments<'_>, then: impl FnOnce(&str) -> R) -> R {
    let mut s = Stack::default();
    if s.write_fmt(args).is_ok() {
        then(s.as_str())
    } else {
        then(&args.to_string())
    }
}

/// Text formatted into a few bytes on the stack; writing more than fits is an error.
#[derive(Default)]
struct Stack {
    buf: [u8; 32],
    len: usize,
}

impl Stack {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are copied in, so the bytes are UTF-8.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl Write for Stack {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dest = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dest.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A byte count as a short human size with binary units: `512B`, `1.5K`, `23.1G`.
#[must_use]
pub fn bytes(b: f64) -> String {
    Bytes(b).to_string()
}

/// Pages as a human size.
#[must_use]
pub fn pages(p: u64, page_size: u64) -> String {
    Bytes::pages(p, page_size).to_string()
}

/// An optional figure with `decimals`, or `-` when there is none (first tick, reset).
#[must_use]
pub fn opt(v: Option<f64>, decimals: usize) -> String {
    Opt(v, decimals).to_string()
}

/// A rate in compact form: `0`, `12`, `3.4k`, `12M`.
#[must_use]
pub fn rate(v: Option<f64>) -> String {
    Rate(v).to_string()
}

/// `HH:MM:SS` in UTC for milliseconds since the epoch (deterministic: no time zone lookup).
#[derive(Debug, Clone, Copy)]
pub struct ClockUtc(pub i64);

impl Display for ClockUtc {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0.div_euclid(1000);
        let day = s.rem_euclid(86_400);
        padded(
            f,
            format_args!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60),
        )
    }
}

/// `HH:MM:SS` in UTC for milliseconds since the epoch (deterministic: no time zone lookup).
#[must_use]
pub fn clock_utc(ms: i64) -> String {
    ClockUtc(ms).to_string()
}

/// Text from a file or another program (a playbook's name, phases and markers, a recording's
/// events), safe to show on a terminal, in a table or in report.md: each control character
/// (C0 including newline and tab, DEL, C1) and each bidirectional formatting character becomes
/// a visible escape (`\x1b`, `\u{202e}`), so the text cannot move the cursor, clear the
/// screen, retitle the terminal or reorder what is shown. Borrowed when there is nothing to
/// escape.
#[must_use]
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    escape_with(text, false)
}

/// `escape_controls` for text of several lines (a playbook shown whole): newlines and tabs
/// stay, every other control character is escaped.
#[must_use]
pub fn escape_controls_multiline(text: &str) -> std::borrow::Cow<'_, str> {
    escape_with(text, true)
}

fn needs_escape(c: char, keep_lines: bool) -> bool {
    if keep_lines && matches!(c, '\n' | '\t') {
        return false;
    }
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_with(text: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_lines)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !needs_escape(c, keep_lines) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A mean and a longest wait (the sync calls'), `mean/max` ms (`-` without one; seconds from 10 s).
#[must_use]
pub fn mean_max_ms(mean: Option<f64>, max: Option<f64>) -> String {
    let short = |x: Option<f64>| match x {
        None => "-".to_owned(),
        Some(x) if x < 10.0 => format!("{x:.1}"),
        Some(x) if x < 10_000.0 => format!("{x:.0}"),
        Some(x) => format!("{:.0}s", x / 1000.0),
    };
    if mean.is_none() && max.is_none() {
        return "-".to_owned();
    }
    format!("{}/{}", short(mean), short(max))
}

/// Parses a duration: plain seconds (`90`), or a number with `s`, `m` or `h` (`1.5h`).
pub fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    use anyhow::{Context, bail};
    let t = text.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => bail!("duration {text:?}: the unit must be s, m or h (like 90s, 10m, 1h)"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .with_context(|| format!("duration {text:?} is not a positive number of s, m or h"))?;
    Duration::try_from_secs_f64(v * scale).with_context(|| format!("duration {text:?} is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(bytes(512.0), "512B");
        assert_eq!(bytes(1536.0), "1.5K");
        assert_eq!(bytes(24_402_324.0 * 1024.0), "23.3G");
        assert_eq!(bytes(200.0 * 1024.0 * 1024.0), "200M");
        assert_eq!(pages(262_144, 4096), "1.0G");
        assert_eq!(opt(None, 2), "-");
        assert_eq!(opt(Some(1.234), 2), "1.23");
        assert_eq!(rate(Some(0.0)), "0");
        assert_eq!(rate(Some(2.5)), "2.5");
        assert_eq!(rate(Some(12_345.0)), "12.3k");
        assert_eq!(clock_utc(86_400_000 + 3_723_000), "01:02:03");
    }

    /// The old `String` formulas, which the `Display` types must match text for text.
    fn old_bytes(b: f64) -> String {
        const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
        let mut v = b;
        let mut u = 0;
        while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 || v.abs() >= 100.0 {
            format!("{v:.0}{}", UNITS[u])
        } else {
            format!("{v:.1}{}", UNITS[u])
        }
    }

    fn old_rate(v: Option<f64>) -> String {
        let Some(v) = v else { return "-".to_owned() };
        if v < 10.0 {
            format!("{v:.1}").trim_end_matches(".0").to_owned()
        } else if v < 10_000.0 {
            format!("{v:.0}")
        } else if v < 10_000_000.0 {
            format!("{:.1}k", v / 1000.0)
        } else {
            format!("{:.0}M", v / 1e6)
        }
    }

    fn old_cell(v: f64, decimals: usize, width: usize) -> String {
        let s = format!("{v:.decimals$}");
        if s.len() < width {
            s
        } else {
            old_rate(Some(v))
        }
    }

    #[test]
    fn same_text_as_string_formulas() {
        let mut values = vec![
            0.0,
            -0.0,
            0.04,
            0.05,
            0.95,
            0.96,
            2.25,
            9.94,
            9.96,
            10.0,
            9_999.4,
            9_999.6,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::EPSILON,
        ];
        // A sweep over many magnitudes, fractions and signs.
        let mut x = 0.001_f64;
        while x < 1e19 {
            values.extend([x, -x, x * 1.37, x * 9.995, x * 1023.95]);
            x *= 3.1;
        }
        for v in values {
            assert_eq!(bytes(v), old_bytes(v), "{v}");
            assert_eq!(rate(Some(v)), old_rate(Some(v)), "{v}");
            for d in 0..3 {
                assert_eq!(opt(Some(v), d), format!("{v:.d$}"), "{v}");
            }
            // Width and alignment apply to the whole text, as to a String.
            assert_eq!(
                format!("{:>8}", Rate(Some(v))),
                format!("{:>8}", old_rate(Some(v)))
            );
            assert_eq!(format!("{:<9}", Bytes(v)), format!("{:<9}", old_bytes(v)));
            assert_eq!(
                format!("{:>12}", Opt(Some(v), 2)),
                format!("{:>12}", format!("{v:.2}"))
            );
            for (d, w) in [(0, 6), (1, 7), (1, 8), (2, 8), (1, 9), (2, 40)] {
                assert_eq!(
                    format!("{:>w$}", Fit(Some(v), d, w)),
                    format!("{:>w$}", old_cell(v, d, w))
                );
            }
        }
        assert_eq!(format!("{:>4}", Dash::<u8>(None)), "   -");
        assert_eq!(format!("{:>4}", Dash(Some(Bytes(512.0)))), "512B");
        assert_eq!(format!("{:>3}", Rate(None)), "  -");
        assert_eq!(format!("{:>7}", PerSec(Rate(Some(2.0)))), "    2/s");
        assert_eq!(format!("{:>4}", Percent(97.4)), " 97%");
        assert_eq!(format!("{:>7}", Fit(Some(12.345), 2, 8)), "  12.35");
        assert_eq!(Fit(Some(1_234_567.0), 1, 9).to_string(), "1234.6k");
        assert_eq!(Fit(None, 1, 8).to_string(), "-");
        assert_eq!(Dash(Some(PerSec(Bytes(1536.0)))).to_string(), "1.5K/s");
    }

    #[test]
    fn durations_take_seconds_minutes_and_hours() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("0.5").unwrap(), Duration::from_millis(500));
        for bad in ["", "0", "-5", "10d", "m", "1e400", "ten", "5 m s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_become_visible_escapes() {
        assert!(matches!(
            escape_controls("plain ü 名"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape_controls("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
        assert_eq!(escape_controls("x\u{9b}31m\u{7f}"), "x\\u{9b}31m\\x7f");
        assert_eq!(escape_controls("l\nt\tr\r"), "l\\nt\\tr\\r");
        assert_eq!(escape_controls("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(
            escape_controls_multiline("a\n\tb\x1bc\r\n"),
            "a\n\tb\\x1bc\\r\n"
        );
        // Nothing a terminal acts on is left.
        let all: String = (0u32..0x2070).filter_map(char::from_u32).collect();
        assert!(
            !escape_controls(&all)
                .chars()
                .any(|c| needs_escape(c, false))
        );
    }
}
