//! Line cursor and small text helpers of the log readers: trimming, tokens, numbers as printed
//! (Fortran exponents, fixed-width columns that run together).

use crate::io::ReadError;
use std::path::Path;

/// Iterates over lines with 1-based numbers; can be rewound to a saved position.
#[derive(Clone, Copy)]
pub(crate) struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        Lines { bytes, pos: 0, line: 0 }
    }

    /// The next line without its terminator.
    #[inline]
    pub fn next_line(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (line, advance) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        self.line += 1;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// True when every line has been returned.
    pub fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// 1-based number of the line last returned (0 before the first).
    pub fn line_no(&self) -> usize {
        self.line
    }

    /// The next line that is not blank.
    pub fn next_nonblank_line(&mut self) -> Option<&'a [u8]> {
        std::iter::from_fn(|| self.next_line()).find(|l| !is_blank(l))
    }

    /// The error for a log that ends inside `what` (a block that began at line `start`).
    pub fn truncated(&self, path: &Path, what: &str, start: usize) -> ReadError {
        ReadError::line(
            path,
            self.line,
            format!("file ends inside {what} that starts at line {start} (the log is truncated)"),
        )
    }
}

#[inline]
pub(crate) fn trim_start(l: &[u8]) -> &[u8] {
    let n = l.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(l.len());
    &l[n..]
}

#[inline]
pub(crate) fn trim(l: &[u8]) -> &[u8] {
    let l = trim_start(l);
    let n = l.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    &l[..n]
}

/// Substring test for short lines: a first-byte scan, cheaper than building a searcher per line.
#[inline]
pub(crate) fn contains(l: &[u8], pat: &[u8]) -> bool {
    let Some((&first, rest)) = pat.split_first() else {
        return true;
    };
    memchr::memchr_iter(first, l).any(|i| l.get(i + 1..).is_some_and(|tail| tail.starts_with(rest)))
}

pub(crate) fn is_blank(l: &[u8]) -> bool {
    l.iter().all(|b| b.is_ascii_whitespace())
}

pub(crate) fn tokens(l: &[u8]) -> impl Iterator<Item = &[u8]> {
    l.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

pub(crate) fn text(l: &[u8]) -> String {
    crate::io::text::shorten(&String::from_utf8_lossy(trim(l)))
}

/// Parses a float token (accepts Fortran `D` exponents); `None` when it is not a finite number.
#[inline]
pub(crate) fn num(t: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(trim(t)).ok()?;
    let v = if s.bytes().any(|b| b == b'D' || b == b'd') {
        s.replace(['D', 'd'], "E").parse::<f64>().ok()?
    } else {
        s.parse::<f64>().ok()?
    };
    v.is_finite().then_some(v)
}

/// Powers of ten that are exact in f64.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Parses a plain decimal field ("-0.701483") quickly: with at most 15 digits the mantissa and
/// the power of ten are exact, so one division gives the correctly rounded value (the same as
/// `str::parse`). Anything else (exponents, long fields) goes through [`num`].
#[inline]
pub(crate) fn decimal(t: &[u8]) -> Option<f64> {
    let t = trim(t);
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut mantissa: u64 = 0;
    let mut n_digits = 0usize;
    let mut frac: Option<usize> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                n_digits += 1;
                if let Some(f) = frac.as_mut() {
                    *f += 1;
                }
            }
            b'.' if frac.is_none() => frac = Some(0),
            _ => return num(t),
        }
        if n_digits > 15 {
            return num(t);
        }
    }
    if n_digits == 0 {
        return None;
    }
    let v = mantissa as f64 / POW10[frac.unwrap_or(0).min(15)];
    Some(if neg { -v } else { v })
}

#[inline]
pub(crate) fn int(t: &[u8]) -> Option<i64> {
    std::str::from_utf8(trim(t)).ok()?.parse::<i64>().ok()
}

/// Reads the `k` values at the end of a coefficient row, printed in fixed-width fields of `width`
/// characters (so numbers printed without a space between them are split right), falling back to
/// whitespace splitting when the fixed layout does not fit. Appends exactly `k` values and returns
/// the label before them, or appends nothing and returns `None`.
pub(crate) fn row_values<'a>(l: &'a [u8], width: usize, k: usize, out: &mut Vec<f64>) -> Option<&'a [u8]> {
    let n = l.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    let l = &l[..n];
    let start = out.len();
    if let Some(label_end) = n.checked_sub(width * k) {
        let body = &l[label_end..];
        let mut ok = true;
        for field in body.chunks(width.max(1)) {
            match decimal(field) {
                Some(v) => out.push(v),
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && out.len() == start + k {
            return Some(&l[..label_end]);
        }
        out.truncate(start);
    }
    // Whitespace-separated: the last k tokens.
    let mut end = n;
    let mut vals = Vec::with_capacity(k);
    for _ in 0..k {
        let tok_end = l[..end]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        let tok_start = l[..tok_end]
            .iter()
            .rposition(|b| b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        let v = num(&l[tok_start..tok_end])?;
        vals.push(v);
        end = tok_start;
    }
    vals.reverse();
    out.extend(vals);
    Some(&l[..end])
}
