//! Text values of the fio form: sizes (`8k`, `2G`), numbers in a range, booleans, runtimes.
//!
//! Owns: parsing and printing those values. Must not touch: anything else.

pub(crate) fn pick(allowed: &[&str], value: &str) -> Option<String> {
    allowed
        .iter()
        .find(|a| **a == value)
        .map(|a| (*a).to_string())
}

pub(crate) fn parse_int(value: &str, lo: u32, hi: u32) -> Option<u32> {
    value.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n))
}

pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Seconds for `runtime`: `Ok(None)` for `0`/`none` (one pass over the file).
pub(crate) fn parse_runtime(value: &str) -> Result<Option<u32>, ()> {
    if matches!(value, "0" | "none" | "") {
        return Ok(None);
    }
    parse_int(value.strip_suffix('s').unwrap_or(value), 1, 86_400)
        .map(Some)
        .ok_or(())
}

/// Parses `4096`, `8k`, `64M`, `2G`, `1T` (1024-based, as fio reads them; `KiB`/`KB` also).
#[must_use]
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().ok()?;
    let unit = unit.to_ascii_lowercase();
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// The shortest exact text for a size: `8k`, `500M`, `2G`, or bytes.
#[must_use]
pub fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}
