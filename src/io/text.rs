//! Small helpers shared by the text readers: line iteration with 1-based numbers, and number
//! parsing that reports what was found.

use super::ReadError;
use std::path::Path;

/// Iterates over lines of a byte buffer (`\n` or `\r\n`), yielding `(line_number, bytes)`.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> + Clone {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    body.split(|&b| b == b'\n')
        .enumerate()
        .filter(move |_| !empty)
        .map(|(i, l)| (i + 1, l.strip_suffix(b"\r").unwrap_or(l)))
}

/// Parses a float from a field, naming the file, line and field on failure. Accepts Fortran `D`
/// exponents. Rejects NaN and infinities.
pub fn parse_f64(path: &Path, line: usize, what: &str, field: &[u8]) -> Result<f64, ReadError> {
    let s = std::str::from_utf8(field).unwrap_or("").trim();
    let parsed = if s.contains(['D', 'd']) {
        s.replace(['D', 'd'], "E").parse::<f64>().ok()
    } else {
        s.parse::<f64>().ok()
    };
    match parsed {
        Some(v) if v.is_finite() => Ok(v),
        _ => Err(ReadError::line(
            path,
            line,
            format!("expected {what} (a finite number), found {:?}", shorten(s)),
        )),
    }
}

/// Parses an integer from a field, naming the file, line and field on failure.
pub fn parse_i64(path: &Path, line: usize, what: &str, field: &[u8]) -> Result<i64, ReadError> {
    let s = std::str::from_utf8(field).unwrap_or("").trim();
    s.parse::<i64>().map_err(|_| {
        ReadError::line(
            path,
            line,
            format!("expected {what} (an integer), found {:?}", shorten(s)),
        )
    })
}

/// Parses a non-negative count and checks it against a sanity limit, so a damaged header cannot
/// make a reader allocate without bound.
pub fn parse_count(path: &Path, line: usize, what: &str, field: &[u8], max: usize) -> Result<usize, ReadError> {
    let v = parse_i64(path, line, what, field)?;
    if v < 0 || v as u64 > max as u64 {
        return Err(ReadError::line(
            path,
            line,
            format!("{what} {v} is out of range (0..={max})"),
        ));
    }
    Ok(v as usize)
}

/// The first 40 characters of a field, for messages.
pub fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_lines() {
        let p = Path::new("f");
        assert_eq!(parse_f64(p, 1, "x", b" 1.5D-01 ").ok(), Some(0.15));
        assert!(parse_f64(p, 1, "x", b"nan").is_err());
        assert!(parse_count(p, 1, "atoms", b"99999999999", 1000).is_err());
        let v: Vec<_> = lines(b"a\r\nb\n").collect();
        assert_eq!(v, vec![(1, &b"a"[..]), (2, &b"b"[..])]);
        let v: Vec<_> = lines(b"a\n\nb").collect();
        assert_eq!(v.len(), 3);
    }
}
