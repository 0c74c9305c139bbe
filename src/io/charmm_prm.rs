//! CHARMM parameter files (`.prm`, `.par`, `.inp`, `.str` toppar streams): the Lennard-Jones
//! parameters of the `NONBONDED` section, by atom type.
//!
//! Owns [`read_nonbonded`]. Called by `io::ils_params` for `grid ils --params`. A CHARMM file is a
//! list of sections (`ATOMS`, `BONDS`, `ANGLES`, `DIHEDRALS`, `IMPROPER`, `CMAP`, `NONBONDED`,
//! `NBFIX`, `HBOND`, `END`); `!` starts a comment; a line ending in `-` continues on the next. The
//! `NONBONDED` keyword line (with its options, usually continued over a few lines) is followed by
//! `TYPE ignored eps rmin/2 [ignored eps14 rmin14/2]` lines. Wildcard types (`*`, `%`) are skipped;
//! a later entry for a type replaces an earlier one (as `read param append` does in CHARMM).

use super::ReadError;
use crate::model::lj::LjParams;
use std::collections::BTreeMap;
use std::path::Path;

/// Section keywords that end a `NONBONDED` section (first four letters, upper case).
const SECTIONS: [&str; 14] = [
    "ATOM", "MASS", "BOND", "ANGL", "THET", "DIHE", "PHI", "IMPR", "IMPH", "CMAP", "NBFI", "HBON", "END", "RETU",
];

/// The `NONBONDED` entries of a CHARMM parameter file, by atom type (upper case), added to `out`.
/// Returns how many entries the file held.
pub fn read_nonbonded(path: &Path, text: &str, out: &mut BTreeMap<String, LjParams>) -> Result<usize, ReadError> {
    let mut in_nonbonded = false;
    let mut in_header = false;
    let mut found = 0usize;
    for (k, raw) in text.lines().enumerate() {
        let line_no = k + 1;
        let line = raw.split('!').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let continues = line.ends_with('-');
        let first = line.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        let key: String = first.chars().take(4).collect();
        if in_header {
            in_header = continues;
            continue;
        }
        if key == "NONB" {
            in_nonbonded = true;
            in_header = continues;
            continue;
        }
        if SECTIONS.contains(&key.as_str()) {
            in_nonbonded = false;
            continue;
        }
        if !in_nonbonded {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            return Err(ReadError::line(
                path,
                line_no,
                format!("NONBONDED: expected `TYPE ignored eps rmin/2`, found '{line}'"),
            ));
        }
        if first.contains(['*', '%', '#']) {
            continue;
        }
        let num = |s: &str, what: &str| {
            s.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                ReadError::line(
                    path,
                    line_no,
                    format!("NONBONDED {first}: expected a number for {what}, found '{s}'"),
                )
            })
        };
        let eps = num(fields[2], "eps")?;
        let rmin_half = num(fields[3], "rmin/2")?;
        out.insert(first, LjParams::new(eps, rmin_half));
        found += 1;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonbonded_section() {
        let text = "BONDS\nCT1 CT2 222.5 1.538\nNONBONDED nbxmod  5 atom cdiel shift vatom vdistance vswitch -\ncutnb 14.0 ctofnb 12.0 ctonnb 10.0 eps 1.0 e14fac 1.0 wmin 1.5\n!comment\nC      0.000000  -0.110000     2.000000 ! ALLOW   PEP\nCT1    0.000000  -0.020000     2.275000   0.000000  -0.010000     1.900000\nNBFIX\nC CT1 -0.2 3.9\nEND\n";
        let mut m = BTreeMap::new();
        let n = read_nonbonded(Path::new("x.prm"), text, &mut m).unwrap();
        assert_eq!(n, 2);
        assert_eq!(m["C"], LjParams::new(0.11, 2.0));
        assert_eq!(m["CT1"], LjParams::new(0.02, 2.275));
        let bad = read_nonbonded(Path::new("x.prm"), "NONBONDED\nC 0.0 -0.1 x\n", &mut m).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "x.prm:2: NONBONDED C: expected a number for rmin/2, found 'x'"
        );
    }
}
