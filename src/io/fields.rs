//! Allocation-free field parsing for the structure readers (PDB, PQR, PSF, GRO, XYZ, mmCIF):
//! numbers straight from byte slices, fixed-column slicing that tolerates short lines,
//! hybrid-36 integers, and whitespace tokenising.
//!
//! The hot loops of the readers call these once or more per atom, so the common fixed-point
//! forms (`-12.345`) take a short path that is exact: an integer mantissa of at most 15 digits
//! divided by an exact power of ten gives the correctly rounded double. Anything else (exponents,
//! long mantissas) goes through the standard library parser.

/// Exact powers of ten for the short path.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Parses a finite float from a field, ignoring surrounding blanks. Accepts a sign, a decimal
/// point, `e`/`E` and Fortran `d`/`D` exponents. `None` for empty, malformed, NaN or infinite.
#[inline]
pub fn float(field: &[u8]) -> Option<f64> {
    let s = field.trim_ascii();
    let (neg, rest) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut mantissa: u64 = 0;
    let mut digits = 0usize;
    let mut frac = 0usize;
    let mut seen_dot = false;
    for &c in rest {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                digits += 1;
                if digits > 15 {
                    return float_slow(s);
                }
                frac += usize::from(seen_dot);
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return float_slow(s),
        }
    }
    if digits == 0 {
        return None;
    }
    let v = mantissa as f64 / POW10[frac];
    Some(if neg { -v } else { v })
}

#[cold]
fn float_slow(s: &[u8]) -> Option<f64> {
    if s.len() > 64 {
        return None;
    }
    let mut buf = [0u8; 64];
    for (d, &c) in buf.iter_mut().zip(s) {
        *d = if c == b'd' || c == b'D' { b'e' } else { c };
    }
    let text = std::str::from_utf8(&buf[..s.len()]).ok()?;
    // The standard parser accepts "inf"/"nan" spellings; only digits, signs, dots and exponents
    // are numbers here.
    if !text
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses a decimal integer (optional sign, surrounding blanks ignored).
#[inline]
pub fn int(field: &[u8]) -> Option<i64> {
    let s = field.trim_ascii();
    let (neg, rest) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest.is_empty() || rest.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in rest {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(if neg { -v } else { v })
}

/// The leading integer of a field ("380A" -> 380, "12" -> 12); `None` when it starts otherwise.
pub fn leading_int(field: &[u8]) -> Option<i64> {
    let s = field.trim_ascii();
    let sign = usize::from(matches!(s.first(), Some(b'-' | b'+')));
    let end = sign + s[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    int(&s[..end])
}

/// Decodes a hybrid-36 integer of the given field width (PDB serials: 5, residue numbers: 4).
/// Plain decimal fields decode as themselves; `A0000`.. continue after 99999 and `a0000`.. after
/// `ZZZZZ`. `None` for malformed fields (including the `*****` some writers print on overflow).
pub fn hybrid36(field: &[u8], width: u32) -> Option<i64> {
    let s = field.trim_ascii();
    let first = *s.first()?;
    if first.is_ascii_digit() || first == b'-' || first == b'+' {
        return int(s);
    }
    if s.len() != width as usize {
        return None;
    }
    let upper = first.is_ascii_uppercase();
    if !upper && !first.is_ascii_lowercase() {
        return None;
    }
    let mut v: i64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'Z' if upper => c - b'A' + 10,
            b'a'..=b'z' if !upper => c - b'a' + 10,
            _ => return None,
        };
        v = v * 36 + i64::from(d);
    }
    let p36 = 36i64.pow(width - 1);
    let p10 = 10i64.pow(width);
    Some(if upper { v - 10 * p36 + p10 } else { v + 16 * p36 + p10 })
}

/// Columns `start..end` (0-based, end exclusive) of a line, clipped to the line's length.
#[inline]
pub fn cols(line: &[u8], start: usize, end: usize) -> &[u8] {
    let end = end.min(line.len());
    if start >= end { &[] } else { &line[start..end] }
}

/// Splits on ASCII whitespace, skipping empty pieces.
#[inline]
pub fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|c| c.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

/// A field for messages: lossy UTF-8, at most 40 characters.
pub fn show(field: &[u8]) -> String {
    super::text::shorten(String::from_utf8_lossy(field.trim_ascii()).as_ref())
}

/// Iterates over lines with 1-based numbers like [`super::text::lines`], also giving each line's
/// byte offset in the buffer (used to size-check declared counts against what remains).
#[derive(Clone)]
pub struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    number: usize,
}

impl<'a> Lines<'a> {
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        Lines {
            bytes,
            pos: 0,
            number: 0,
        }
    }

    /// Bytes not yet returned as lines.
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The number of the last line returned (0 before the first).
    pub fn number(&self) -> usize {
        self.number
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (line, advance) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        self.number += 1;
        Some((self.number, line.strip_suffix(b"\r").unwrap_or(line)))
    }
}

/// An atom count `n` read at `line` that fits the rest of the file (`room` atom lines at most).
pub fn check_frame_atoms(path: &std::path::Path, line: usize, n: u64, room: usize) -> Result<usize, super::ReadError> {
    if n > room as u64 {
        return Err(super::ReadError::line(
            path,
            line,
            format!("the header declares {n} atoms but the rest of the file has room for at most {room} atom lines"),
        ));
    }
    Ok(n as usize)
}

/// Where a frame of a multi-frame text file (XYZ, GRO, Tinker) starts and how many atoms its header
/// declares.
#[derive(Clone, Copy, Debug)]
pub struct FrameHeader {
    /// The frame's first line (a GRO title, an XYZ or Tinker count line).
    pub start_line: usize,
    /// The line of the atom count.
    pub count_line: usize,
    pub atoms: u64,
}

/// The atoms to read for the frame `header` opens, after `frames_read` frames of `first_n` atoms
/// each; the rest of the file has room for `room` atom lines. `None` ends the frames with a warning:
/// a later frame that does not fit the rest of the file was cut short (the rest is skipped), one of
/// another atom count is unlike the first. A first frame that does not fit is an error.
pub fn frame_atoms(
    path: &std::path::Path,
    lines: &mut Lines<'_>,
    header: FrameHeader,
    room: usize,
    (frames_read, first_n): (usize, usize),
    warnings: &mut Vec<String>,
) -> Result<Option<usize>, super::ReadError> {
    let n = header.atoms;
    if frames_read > 0 && n > room as u64 {
        lines.by_ref().for_each(drop);
        warnings.push(super::cut_short_lines_warning(
            frames_read as u64,
            header.start_line,
            lines.number(),
        ));
        return Ok(None);
    }
    if frames_read > 0 && n != first_n as u64 {
        warnings.push(frame_unlike_first(frames_read, header.count_line, n, first_n));
        return Ok(None);
    }
    check_frame_atoms(path, header.count_line, n, room).map(Some)
}

/// The next line that is not blank, with its number.
pub fn next_nonblank<'a>(lines: &mut Lines<'a>) -> Option<(usize, &'a [u8])> {
    lines.find(|(_, l)| !l.trim_ascii().is_empty())
}

/// The warning for a model or frame (`subject`: "model 3 (line 120)") whose atoms differ from the
/// first's (`found` atoms against `first_n`; an ensemble of different models, a data set of
/// different molecules, or a damaged file): the `kept` ones before it are read, the rest are not.
/// `unit` is "model" or "frame".
pub fn unlike_first(subject: &str, unit: &str, found: &str, first_n: usize, kept: usize) -> String {
    let hint = if unit == "frame" {
        " (open a file of different molecules one molecule at a time)"
    } else {
        ""
    };
    format!(
        "{subject} has {found} atoms where the first {unit} has {first_n}: the {kept} {unit}(s) before it are read, \
         the {unit}s from it on are not{hint}"
    )
}

/// "3 of 120 atoms have a `what` that names no element": the warning of a reader whose elements
/// come from names or symbols, when some name none (`None` when all do).
pub fn unknown_elements_warning(structure: &crate::model::Structure, what: &str) -> Option<String> {
    let unknown = structure
        .elements
        .iter()
        .filter(|e| **e == crate::model::Element::UNKNOWN)
        .count();
    (unknown > 0).then(|| {
        format!(
            "{unknown} of {} atoms have {what} that names no element",
            structure.len()
        )
    })
}

/// [`unlike_first`] for frame `frames_read + 1` of a multi-frame text file, its count at `line`.
pub fn frame_unlike_first(frames_read: usize, line: usize, n: u64, first_n: usize) -> String {
    let subject = format!("frame {} (line {line})", frames_read + 1);
    unlike_first(&subject, "frame", &n.to_string(), first_n, frames_read)
}

/// How atoms read against a first set (a later frame against the first, coordinates against their
/// topology) differ when their counts agree: the first atom that differs, what it is on each side,
/// and whether the same atoms came in another order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomsDiffer {
    /// 0-based index of the first atom that differs.
    pub index: usize,
    /// The atom there as read, and in the first set (an element symbol or an atom name).
    pub found: String,
    pub expected: String,
    pub n_atoms: usize,
    /// The same atoms in another order (else other atoms).
    pub reordered: bool,
}

impl AtomsDiffer {
    /// Compares `other` with `first` (the same length) by `key`; `differs(i)` says whether atom
    /// `i` counts as different (`key`s that differ, or a narrower rule), `label` how an atom is
    /// named in the message. `None` when no atom differs.
    pub fn compare<T, K: Ord>(
        first: &[T],
        other: &[T],
        key: impl Fn(&T) -> K,
        differs: impl Fn(usize) -> bool,
        label: impl Fn(&T) -> String,
    ) -> Option<AtomsDiffer> {
        if first.len() != other.len() {
            return None;
        }
        let index = (0..first.len()).find(|&i| differs(i))?;
        let sorted = |v: &[T]| {
            let mut k: Vec<K> = v.iter().map(&key).collect();
            k.sort_unstable();
            k
        };
        Some(AtomsDiffer {
            index,
            found: label(other.get(index)?),
            expected: label(first.get(index)?),
            n_atoms: first.len(),
            reordered: sorted(first) == sorted(other),
        })
    }

    /// "atom 4 is H, the first frame's atom 4 is O (same count, 375 atoms, different order)";
    /// `whose` names the first set ("the first frame's", "ache.prmtop's").
    pub fn describe(&self, whose: &str) -> String {
        let k = self.index + 1;
        format!(
            "atom {k} is {}, {whose} atom {k} is {} (same count, {} atoms, {})",
            self.found,
            self.expected,
            self.n_atoms,
            if self.reordered {
                "different order"
            } else {
                "different atoms"
            }
        )
    }
}

/// The warning for frame `frames_read + 1` of a multi-frame text file (its first line at `line`)
/// whose atoms are not the first frame's though their count is: the frames before it are read,
/// the rest are not.
pub fn frame_atoms_differ(frames_read: usize, line: usize, d: &AtomsDiffer) -> String {
    format!(
        "frame {} (line {line}): {}: the {frames_read} frame(s) before it are read, the frames from it on are not \
         (open a file of different molecules one molecule at a time)",
        frames_read + 1,
        d.describe("the first frame's")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_that_differ_are_named() {
        let first = ["O", "H", "H", "O", "H", "H"];
        let swapped = ["O", "H", "H", "H", "O", "H"];
        let d = AtomsDiffer::compare(&first, &swapped, |a| *a, |i| first[i] != swapped[i], |a| a.to_string()).unwrap();
        assert_eq!(
            d.describe("the first frame's"),
            "atom 4 is H, the first frame's atom 4 is O (same count, 6 atoms, different order)"
        );
        let other = ["O", "H", "H", "N", "H", "H"];
        let d = AtomsDiffer::compare(&first, &other, |a| *a, |i| first[i] != other[i], |a| a.to_string()).unwrap();
        assert!(d.describe("x's").ends_with("(same count, 6 atoms, different atoms)"));
        assert_eq!(
            AtomsDiffer::compare(&first, &first, |a| *a, |_| false, |a| a.to_string()),
            None
        );
    }

    #[test]
    fn floats() {
        assert_eq!(float(b"  -11.921"), Some(-11.921));
        assert_eq!(float(b"26.307"), Some(26.307));
        assert_eq!(float(b"5"), Some(5.0));
        assert_eq!(float(b".5"), Some(0.5));
        assert_eq!(float(b"-0.900000E-01"), Some(-0.09));
        assert_eq!(float(b"1.5D-01"), Some(0.15));
        assert_eq!(float(b"0.1234567890123456789"), Some(0.123_456_789_012_345_68));
        for bad in [
            &b""[..],
            b"-",
            b".",
            b"1.2.3",
            b"abc",
            b"nan",
            b"inf",
            b"1e999",
            b"--1",
            b"1-",
        ] {
            assert_eq!(float(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        // The short path agrees with the standard parser.
        for s in ["-8.154", "123.456", "0.001", "99999.999", "-0.000"] {
            assert_eq!(float(s.as_bytes()), s.parse::<f64>().ok());
        }
    }

    #[test]
    fn ints_and_hybrid36() {
        assert_eq!(int(b" 42 "), Some(42));
        assert_eq!(int(b"-7"), Some(-7));
        assert_eq!(int(b"4x"), None);
        assert_eq!(leading_int(b"380A"), Some(380));
        assert_eq!(hybrid36(b"99999", 5), Some(99999));
        assert_eq!(hybrid36(b"A0000", 5), Some(100_000));
        assert_eq!(hybrid36(b"A0001", 5), Some(100_001));
        assert_eq!(hybrid36(b"ZZZZZ", 5), Some(100_000 + 26 * 36i64.pow(4) - 1));
        assert_eq!(hybrid36(b"a0000", 5), Some(100_000 + 26 * 36i64.pow(4)));
        assert_eq!(hybrid36(b"A000", 4), Some(10_000));
        assert_eq!(hybrid36(b"*****", 5), None);
        assert_eq!(hybrid36(b"A00", 5), None);
    }

    #[test]
    fn lines_and_cols() {
        let v: Vec<_> = Lines::new(b"a\r\nbc\n\nd").collect();
        assert_eq!(v, vec![(1, &b"a"[..]), (2, &b"bc"[..]), (3, &b""[..]), (4, &b"d"[..])]);
        assert_eq!(cols(b"abcdef", 2, 4), b"cd");
        assert_eq!(cols(b"abc", 2, 10), b"c");
        assert_eq!(cols(b"abc", 5, 10), b"");
    }
}
