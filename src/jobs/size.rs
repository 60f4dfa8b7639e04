//! Memory sizes as the user types them: `512M`, `2G`, `1.5G`, `1048576`, `50%`.
//!
//! Owns: turning that text into bytes, given MemTotal for percentages. Suffixes K/M/G/T are
//! 1024-based and case-insensitive, with an optional `B` or `iB` (`512MiB`, `2gb`). A percentage
//! is of **MemTotal** (not MemFree or MemAvailable), so `50%` means the same on a busy box and an
//! idle one. Pure: must not touch /proc or anything else; the caller passes MemTotal in.

/// Why a size was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Nothing given.
    #[error(
        "empty size: give bytes (1048576), a size (512M, 2G) or a percentage of MemTotal (50%)"
    )]
    Empty,
    /// The number part is not a number.
    #[error(
        "{0:?} is not a size: give bytes (1048576), a size (512M, 2G) or a percentage of MemTotal (50%)"
    )]
    NotANumber(String),
    /// A suffix other than K, M, G, T (optionally followed by B or iB) or %.
    #[error("{0:?} has an unknown unit: use K, M, G or T (1024-based), or %")]
    BadUnit(String),
    /// Zero, negative or not finite.
    #[error("{0:?} must be more than zero")]
    NotPositive(String),
    /// A percentage above 100.
    #[error("{0:?} is more than 100% of MemTotal")]
    OverHundred(String),
    /// Fractional plain bytes (`1.5`) or a size that does not fit in 64 bits.
    #[error("{0:?} is not a whole number of bytes")]
    NotWhole(String),
}

/// Parses `text` into bytes. `mem_total` (bytes) is the base for percentages.
pub fn parse_size(text: &str, mem_total: u64) -> Result<u64, SizeError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let v: f64 = num
        .parse()
        .map_err(|_| SizeError::NotANumber(t.to_owned()))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(SizeError::NotPositive(t.to_owned()));
    }
    if unit == "%" {
        if v > 100.0 {
            return Err(SizeError::OverHundred(t.to_owned()));
        }
        // Round down to whole bytes: a percentage never asks for more than it says.
        return whole(mem_total as f64 * v / 100.0, t);
    }
    let lower = unit.to_ascii_lowercase();
    let prefix = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let shift = match prefix {
        "" => {
            if num.contains('.') {
                return Err(SizeError::NotWhole(t.to_owned()));
            }
            if !lower.is_empty() && lower != "b" {
                return Err(SizeError::BadUnit(t.to_owned()));
            }
            0
        }
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(SizeError::BadUnit(t.to_owned())),
    };
    if shift == 0 {
        return num
            .parse::<u64>()
            .map_err(|_| SizeError::NotWhole(t.to_owned()));
    }
    whole(v * (1u64 << shift) as f64, t)
}

fn whole(bytes: f64, text: &str) -> Result<u64, SizeError> {
    // 2^64 as f64; anything at or above it does not fit.
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(SizeError::NotWhole(text.to_owned()));
    }
    let b = bytes.floor() as u64;
    if b == 0 {
        return Err(SizeError::NotPositive(text.to_owned()));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn suffixes_are_1024_based_and_case_insensitive() {
        assert_eq!(parse_size("512M", 0), Ok(512 << 20));
        assert_eq!(parse_size("512m", 0), Ok(512 << 20));
        assert_eq!(parse_size("2G", 0), Ok(2 * GIB));
        assert_eq!(parse_size("2GiB", 0), Ok(2 * GIB));
        assert_eq!(parse_size("2gb", 0), Ok(2 * GIB));
        assert_eq!(parse_size("4k", 0), Ok(4096));
        assert_eq!(parse_size("1T", 0), Ok(1 << 40));
        assert_eq!(parse_size(" 64M ", 0), Ok(64 << 20));
        assert_eq!(parse_size("64 M", 0), Ok(64 << 20));
    }

    #[test]
    fn fractions_and_plain_bytes() {
        assert_eq!(parse_size("1.5G", 0), Ok(3 * GIB / 2));
        assert_eq!(parse_size("0.5K", 0), Ok(512));
        assert_eq!(parse_size("1048576", 0), Ok(1_048_576));
        assert_eq!(parse_size("1048576B", 0), Ok(1_048_576));
        assert_eq!(parse_size("1.5", 0), Err(SizeError::NotWhole("1.5".into())));
    }

    #[test]
    fn percent_is_of_mem_total() {
        let total = 24_684_092 * 1024;
        assert_eq!(parse_size("50%", total), Ok(total / 2));
        assert_eq!(parse_size("100%", total), Ok(total));
        assert_eq!(parse_size("12.5%", 8 * GIB), Ok(GIB));
        assert_eq!(
            parse_size("101%", total),
            Err(SizeError::OverHundred("101%".into()))
        );
    }

    #[test]
    fn bad_input_is_named() {
        assert_eq!(parse_size("", 0), Err(SizeError::Empty));
        assert_eq!(
            parse_size("lots", 0),
            Err(SizeError::NotANumber("lots".into()))
        );
        assert_eq!(parse_size("5X", 0), Err(SizeError::BadUnit("5X".into())));
        assert_eq!(parse_size("5MX", 0), Err(SizeError::BadUnit("5MX".into())));
        assert_eq!(parse_size("0", 0), Err(SizeError::NotPositive("0".into())));
        assert_eq!(
            parse_size("0M", 0),
            Err(SizeError::NotPositive("0M".into()))
        );
        assert_eq!(
            parse_size("-1G", 0),
            Err(SizeError::NotANumber("-1G".into()))
        );
        assert_eq!(
            parse_size("1.2.3G", 0),
            Err(SizeError::NotANumber("1.2.3G".into()))
        );
        assert_eq!(
            parse_size("99999999999T", 0),
            Err(SizeError::NotWhole("99999999999T".into()))
        );
        assert_eq!(
            parse_size("99999999999999999999", 0),
            Err(SizeError::NotWhole("99999999999999999999".into()))
        );
        let msg = parse_size("5X", 0).unwrap_err().to_string();
        assert!(msg.contains("K, M, G or T"), "{msg}");
    }

    #[test]
    fn tiny_percent_rounds_to_zero_and_is_refused() {
        assert_eq!(
            parse_size("0.0001%", 100),
            Err(SizeError::NotPositive("0.0001%".into()))
        );
    }
}
