//! `Name8`: a short inline ASCII label (atom names, residue names, chain and segment ids).
//!
//! Structures of a million atoms keep four labels per atom; an inline 8-byte label avoids a heap
//! allocation per label and keeps readers fast. Longer labels are truncated by the readers, which
//! say so in a warning.

use std::fmt;

/// Up to 8 ASCII bytes, padded with zeros. Leading and trailing blanks are removed on creation.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name8([u8; 8]);

impl Name8 {
    /// The empty label.
    pub const EMPTY: Name8 = Name8([0; 8]);

    /// Builds a label from bytes, trimming ASCII blanks and truncating to 8 bytes. Non-ASCII bytes
    /// are replaced by `?` so the label always prints.
    pub fn new(bytes: &[u8]) -> Name8 {
        let trimmed = bytes.trim_ascii();
        let mut out = [0u8; 8];
        for (dst, &src) in out.iter_mut().zip(trimmed.iter()) {
            *dst = if src.is_ascii_graphic() { src } else { b'?' };
        }
        Name8(out)
    }

    /// True when the source had more than 8 non-blank bytes (so [`Name8::new`] truncated it).
    pub fn would_truncate(bytes: &[u8]) -> bool {
        bytes.trim_ascii().len() > 8
    }

    /// The label as a string slice.
    pub fn as_str(&self) -> &str {
        let n = self.0.iter().position(|&b| b == 0).unwrap_or(8);
        // Only ASCII graphic bytes are ever stored, so this cannot fail; fall back to "" anyway.
        std::str::from_utf8(&self.0[..n]).unwrap_or("")
    }

    /// True for the empty label.
    pub fn is_empty(&self) -> bool {
        self.0[0] == 0
    }
}

impl From<&str> for Name8 {
    fn from(s: &str) -> Self {
        Name8::new(s.as_bytes())
    }
}

impl fmt::Display for Name8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_truncates() {
        assert_eq!(Name8::new(b"  CA ").as_str(), "CA");
        assert_eq!(Name8::new(b"ABCDEFGHIJ").as_str(), "ABCDEFGH");
        assert!(Name8::would_truncate(b"ABCDEFGHIJ"));
        assert!(Name8::new(b"   ").is_empty());
        assert_eq!(Name8::new(&[0xff, b'A']).as_str(), "?A");
    }
}
