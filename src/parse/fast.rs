//! Byte-level helpers for the parsers' fast paths: finding the end of a token (vmstat,
//! meminfo) or of a line (`lines`, `line_at`: every line-by-line parser) eight bytes at a time,
//! and reading a run of digits.
//!
//! Owns: these scans. Must not touch: what a line means or how bad input is worded (each
//! parser's general path decides that; a fast path only accepts the kernel's exact shape).

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The index of the first byte at or after `i` that is a blank or a control byte (`<= b' '`),
/// or `b.len()` when there is none.
#[must_use]
pub fn token_end(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*w);
        // Sets the high bit of every byte below 0x21, and possibly of bytes above the first
        // such one (borrows run upwards), so the lowest set bit marks the first one exactly.
        // Bytes of 0x80 and up have their high bit cleared by `!x`.
        let below = x.wrapping_sub(ONES * 0x21) & !x & HIGHS;
        if below != 0 {
            return i + (below.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] > b' ' {
        i += 1;
    }
    i
}

/// The number written by the digits at `b[i..]` and the index after them, when there are 1 to
/// 19 of them (19 cannot overflow a `u64`). `None` for no digit or 20 and more.
#[must_use]
pub fn digits(b: &[u8], start: usize) -> Option<(u64, usize)> {
    let mut i = start;
    let mut val = 0u64;
    while i < b.len() && b[i].is_ascii_digit() {
        if i - start == 19 {
            return None;
        }
        val = val * 10 + u64::from(b[i] - b'0');
        i += 1;
    }
    (i > start).then_some((val, i))
}

/// The index of the first `\n` at or after `i`, or `b.len()`: eight bytes at a time (for
/// lines of a few dozen bytes this beats `memchr`, whose setup costs more than the search).
#[must_use]
pub fn newline(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let y = u64::from_le_bytes(*w) ^ (ONES * u64::from(b'\n'));
        // High bit of each zero byte of `y`, exactly (no borrow between bytes).
        let zero = !(((y & !HIGHS) + !HIGHS) | y) & HIGHS;
        if zero != 0 {
            return i + (zero.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// The line starting at byte `start` as `str::lines` gives it (without its `\n`, or `\r\n`),
/// and the index of its `\n` (or the end of the text).
#[must_use]
pub fn line_at(text: &str, start: usize) -> (&str, usize) {
    let end = newline(text.as_bytes(), start);
    let line = &text[start..end];
    if end < text.len() {
        (line.strip_suffix('\r').unwrap_or(line), end)
    } else {
        (line, end)
    }
}

/// `str::lines`, found with `newline`.
#[must_use]
pub fn lines(text: &str) -> Lines<'_> {
    Lines { text, at: 0 }
}

/// The iterator of `lines`.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.at >= self.text.len() {
            return None;
        }
        let (line, end) = line_at(self.text, self.at);
        self.at = end + 1;
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_end_naive(b: &[u8], mut i: usize) -> usize {
        while i < b.len() && b[i] > b' ' {
            i += 1;
        }
        i
    }

    #[test]
    fn token_end_finds_the_first_blank_or_control_byte_exactly() {
        // Every byte value at every position of a 20-byte token, from every start, with a
        // second stop byte further on (a borrow from the first must not move the answer).
        for len in [0, 1, 7, 8, 9, 20] {
            for pos in 0..len {
                for v in 0..=255u8 {
                    let mut b = vec![b'x'; len];
                    b[pos] = v;
                    if pos + 2 < len {
                        b[pos + 2] = 0x80;
                    }
                    for i in 0..=len + 1 {
                        assert_eq!(token_end(&b, i), token_end_naive(&b, i), "{b:?} from {i}");
                    }
                }
            }
        }
        assert_eq!(token_end(b"nr_dirty 5\n", 0), 8);
        assert_eq!(token_end(b"nr_dirty_background_threshold 1", 0), 29);
        assert_eq!(token_end("caf\u{e9}s\tx".as_bytes(), 0), 6);
        assert_eq!(token_end(b"abc", 0), 3);
    }

    #[test]
    fn digits_reads_one_to_nineteen() {
        assert_eq!(digits(b"x 123\n", 2), Some((123, 5)));
        assert_eq!(digits(b"0", 0), Some((0, 1)));
        assert_eq!(digits(b"x", 0), None);
        assert_eq!(digits(b"", 0), None);
        assert_eq!(
            digits(b"9999999999999999999", 0),
            Some((9_999_999_999_999_999_999, 19))
        );
        assert_eq!(digits(b"18446744073709551615", 0), None);
        assert_eq!(digits(b"12a", 0), Some((12, 2)));
    }

    #[test]
    fn newline_finds_the_first_one_exactly() {
        for len in [0, 1, 7, 8, 9, 17, 30] {
            for pos in 0..len {
                for v in [b'\n', b'\n' ^ 0x80, 0x0b, 0x09, 0x8a, 0x00, 0xff, b'x'] {
                    let mut b = vec![b'x'; len];
                    b[pos] = v;
                    if pos + 1 < len {
                        b[pos + 1] = b'\n';
                    }
                    for i in 0..=len {
                        let naive = (i..len).find(|&k| b[k] == b'\n').unwrap_or(len);
                        assert_eq!(newline(&b, i), naive, "{b:?} from {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn line_at_walks_like_str_lines() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\n",
            "a\r",
            "a\r\nb\r",
            "\n\nb\n",
            "x\ry\n\r\n\r",
            "caf\u{e9}\n\u{e9}",
            "a long line of text\r\nsecond long line, here\n\r\nthird one is long too\r",
            "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\n\u{2028}x\u{0085}\n",
        ] {
            let mut got = Vec::new();
            let mut start = 0;
            while start < text.len() {
                let (line, end) = line_at(text, start);
                got.push(line);
                start = end + 1;
            }
            assert_eq!(got, text.lines().collect::<Vec<_>>(), "{text:?}");
            assert_eq!(lines(text).collect::<Vec<_>>(), got, "{text:?}");
        }
    }
}
