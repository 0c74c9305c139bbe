//! AIM wfn reader, and the primitive-based wavefunction model the wfn and wfx readers share.
//!
//! Owns the conversion of primitive lists (each primitive: a centre, a Cartesian type, an exponent;
//! orbitals as coefficients of unnormalised primitives) to the contracted-shell model of
//! `model::basis`: every distinct (centre, l, exponent) group becomes a one-primitive Cartesian shell,
//! and coefficients are rescaled to the internal normalised functions. Missing components of a group
//! become functions with zero coefficients. Called by `io::load` and by `io::wfx`.

use super::ReadError;
use super::molden::check_and_correct;
use super::text::{lines, shorten};
use crate::model::basis::{angular_terms, cartesian_powers, primitive_norm};
use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
use std::path::Path;

/// Largest primitive and orbital counts accepted.
pub(super) const MAX_PRIMITIVES: usize = 2_000_000;

/// Cartesian powers of AIM primitive types 1..=56 (index 0 is type 1): s; p x y z; d xx yy zz xy xz
/// yz; f xxx yyy zzz xxy xxz yyz xyy xzz yzz xyz; g xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz
/// xxyy xxzz yyzz xxyz xyyz xyzz; h zzzzz yzzzz ... xxxxx (x power rising, then y).
pub(super) fn aim_type_powers(t: usize) -> Option<[u8; 3]> {
    const LOW: [[u8; 3]; 35] = [
        [0, 0, 0],
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [2, 0, 0],
        [0, 2, 0],
        [0, 0, 2],
        [1, 1, 0],
        [1, 0, 1],
        [0, 1, 1],
        [3, 0, 0],
        [0, 3, 0],
        [0, 0, 3],
        [2, 1, 0],
        [2, 0, 1],
        [0, 2, 1],
        [1, 2, 0],
        [1, 0, 2],
        [0, 1, 2],
        [1, 1, 1],
        [4, 0, 0],
        [0, 4, 0],
        [0, 0, 4],
        [3, 1, 0],
        [3, 0, 1],
        [1, 3, 0],
        [0, 3, 1],
        [1, 0, 3],
        [0, 1, 3],
        [2, 2, 0],
        [2, 0, 2],
        [0, 2, 2],
        [2, 1, 1],
        [1, 2, 1],
        [1, 1, 2],
    ];
    if (1..=35).contains(&t) {
        return LOW.get(t - 1).copied();
    }
    if (36..=56).contains(&t) {
        let mut k = 36;
        for a in 0..=5u8 {
            for b in 0..=(5 - a) {
                if k == t {
                    return Some([a, b, 5 - a - b]);
                }
                k += 1;
            }
        }
    }
    None
}

/// A primitive-based wavefunction as read, before conversion to shells.
pub(super) struct Primitives {
    pub(super) atoms: Vec<QmAtom>,
    pub(super) centers: Vec<usize>, // 0-based atom index
    pub(super) types: Vec<[u8; 3]>,
    pub(super) exponents: Vec<f64>,
    /// Per orbital: (occupation, energy, spin: None = both/unknown, Some(false) alpha, Some(true) beta, coefficients).
    pub(super) orbitals: Vec<(f64, f64, Option<bool>, Vec<f64>)>,
    pub(super) energy: Option<f64>,
    pub(super) title: String,
}

pub(super) fn build(path: &Path, p: Primitives) -> Result<Wavefunction, ReadError> {
    // Group primitives into one-primitive Cartesian shells keyed by (centre, l, exponent).
    let mut shells: Vec<Shell> = Vec::new();
    let mut filled: Vec<Vec<bool>> = Vec::new();
    let mut open: Vec<((usize, u8, u64), usize)> = Vec::new(); // key -> latest shell index
    let mut target: Vec<(usize, usize)> = Vec::with_capacity(p.types.len()); // (shell, component)
    for ((&c, &pw), &e) in p.centers.iter().zip(&p.types).zip(&p.exponents) {
        let l = pw[0] + pw[1] + pw[2];
        let key = (c, l, e.to_bits());
        let comp = cartesian_powers(l).iter().position(|q| *q == pw).unwrap_or(0);
        let existing = open.iter().rev().find(|(k, _)| *k == key).map(|(_, s)| *s);
        let shell = match existing {
            Some(s) if !filled[s][comp] => s,
            _ => {
                let center = p.atoms.get(c).map_or([0.0; 3], |a| a.position_bohr);
                shells.push(Shell {
                    l,
                    pure: false,
                    atom: c,
                    center_bohr: center,
                    exponents: vec![e],
                    coefficients: vec![1.0],
                });
                filled.push(vec![false; cartesian_powers(l).len()]);
                open.push((key, shells.len() - 1));
                shells.len() - 1
            }
        };
        filled[shell][comp] = true;
        target.push((shell, comp));
    }
    let basis = BasisSet { shells };
    let offsets = basis.shell_offsets();
    let n_basis = basis.n_functions();
    // Internal function = N(alpha) * a_c * monomial * exp, so c_int = c_raw / (N a_c).
    let scale: Vec<(usize, f64)> = target
        .iter()
        .map(|&(s, comp)| {
            let sh = &basis.shells[s];
            let ang = angular_terms(sh.l, false)
                .get(comp)
                .and_then(|t| t.first())
                .map_or(1.0, |t| t.0);
            let n = primitive_norm(sh.l, sh.exponents[0]) * ang;
            (offsets[s] + comp, if n > 0.0 { 1.0 / n } else { 0.0 })
        })
        .collect();
    let unrestricted = p.orbitals.iter().any(|o| o.2 == Some(true));
    let mut alpha = OrbitalSet {
        n_basis,
        ..Default::default()
    };
    let mut beta = OrbitalSet {
        n_basis,
        ..Default::default()
    };
    for (occ, ene, spin, raw) in &p.orbitals {
        let set = if unrestricted && *spin == Some(true) {
            &mut beta
        } else {
            &mut alpha
        };
        set.occupations.push(*occ);
        set.energies_hartree.push(*ene);
        set.symmetries.push(String::new());
        let start = set.coefficients.len();
        set.coefficients.resize(start + n_basis, 0.0);
        for (&(idx, f), &c) in scale.iter().zip(raw) {
            if let Some(v) = set.coefficients.get_mut(start + idx) {
                *v += c * f;
            }
        }
    }
    if alpha.is_empty() {
        return Err(ReadError::file(path, "the file lists no orbitals"));
    }
    let spin = if unrestricted {
        SpinKind::Unrestricted
    } else if alpha.occupations.contains(&1.0) && alpha.occupations.iter().all(|&o| o == 0.0 || o == 1.0 || o == 2.0) {
        SpinKind::RestrictedOpen
    } else {
        SpinKind::Restricted
    };
    let lower = p.title.to_ascii_lowercase();
    let program = [
        "pyscf",
        "gaussian",
        "orca",
        "gamess",
        "psi4",
        "molpro",
        "multiwfn",
        "aimall",
        "nwchem",
        "q-chem",
        "turbomole",
    ]
    .iter()
    .zip([
        "PySCF",
        "Gaussian",
        "ORCA",
        "GAMESS",
        "Psi4",
        "Molpro",
        "Multiwfn",
        "AIMAll",
        "NWChem",
        "Q-Chem",
        "Turbomole",
    ])
    .find(|(k, _)| lower.contains(**k))
    .map(|(_, v)| v.to_string());
    let mut wf = Wavefunction {
        atoms: p.atoms,
        basis,
        spin,
        alpha,
        beta: if unrestricted { Some(beta) } else { None },
        program,
        corrections: Vec::new(),
        energy_hartree: p.energy,
        scf_density: None,
    };
    // Primitive-based files have no normalisation conventions to get wrong; a failure here means
    // damaged data, reported as a warning by the check (no corrections to try).
    let _ = check_and_correct(&mut wf, &[]);
    Ok(wf)
}

/// Finds `key` (e.g. "OCC NO =") in `s` and parses the number after it.
fn number_after(s: &str, key: &str) -> Option<f64> {
    let i = s.find(key)?;
    let rest = s.get(i + key.len()..)?.trim_start();
    let tok: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
    tok.replace(['D', 'd'], "E")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// Parses floats separated by spaces; falls back to fixed-width fields of `width` when numbers run together.
pub(super) fn floats(s: &str, width: usize) -> Option<Vec<f64>> {
    let parse = |t: &str| {
        t.trim()
            .replace(['D', 'd'], "E")
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
    };
    let v: Option<Vec<f64>> = s.split_whitespace().map(parse).collect();
    if v.is_some() {
        return v;
    }
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let end = (i + width).min(bytes.len());
        let field = std::str::from_utf8(bytes.get(i..end)?).ok()?;
        if !field.trim().is_empty() {
            out.push(parse(field)?);
        }
        i = end;
    }
    Some(out)
}

/// Reads an AIM wfn file.
pub fn read_wfn(path: &Path, bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    let all: Vec<(usize, String)> = lines(bytes)
        .map(|(n, b)| (n, String::from_utf8_lossy(b).into_owned()))
        .collect();
    let mut it = all.iter().peekable();
    let Some((_, title)) = it.next() else {
        return Err(ReadError::file(path, "empty file: expected a wfn title line"));
    };
    let Some((hn, header)) = it.next() else {
        return Err(ReadError::file(
            path,
            "file ends after the title: expected 'GAUSSIAN n MOL ORBITALS n PRIMITIVES n NUCLEI'",
        ));
    };
    let count_before = |key: &str| -> Option<usize> {
        let i = header.find(key)?;
        let tok = header.get(..i)?.split_whitespace().last()?;
        tok.parse::<usize>().ok()
    };
    let (Some(n_mo), Some(n_prim), Some(n_atoms)) = (
        count_before("MOL ORBITALS"),
        count_before("PRIMITIVES"),
        count_before("NUCLEI"),
    ) else {
        return Err(ReadError::line(
            path,
            *hn,
            format!(
                "expected 'GAUSSIAN n MOL ORBITALS n PRIMITIVES n NUCLEI', found {:?}",
                shorten(header.trim())
            ),
        ));
    };
    // Each atom, primitive and orbital needs at least some bytes: bound the counts by the file size.
    if n_prim > MAX_PRIMITIVES || n_atoms > bytes.len() / 20 || n_mo > bytes.len() / 20 || n_prim > bytes.len() / 3 {
        return Err(ReadError::line(
            path,
            *hn,
            format!(
                "counts ({n_mo} orbitals, {n_prim} primitives, {n_atoms} nuclei) do not fit a file of {} bytes",
                bytes.len()
            ),
        ));
    }
    let mut atoms = Vec::with_capacity(n_atoms.min(4096));
    for _ in 0..n_atoms {
        let Some((n, l)) = it.next() else {
            return Err(ReadError::file(
                path,
                format!("file ends inside the atom list ({n_atoms} nuclei declared)"),
            ));
        };
        let sym: String = l
            .split_whitespace()
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .collect();
        let after = l.find(')').and_then(|i| l.get(i + 1..)).unwrap_or("");
        let coords_text = after.split("CHARGE").next().unwrap_or("");
        // FORMAT (A8,16X,3F12.8): negative coordinates of 100 bohr and more run together
        // ("0.00000000-94.48630664"); read the fixed columns 25-60 then.
        let xyz = floats(coords_text, 12)
            .filter(|v| v.len() == 3)
            .or_else(|| {
                let fixed = l.get(24..60)?;
                let v = [fixed.get(..12)?, fixed.get(12..24)?, fixed.get(24..)?]
                    .iter()
                    .map(|f| f.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
                    .collect::<Option<Vec<f64>>>()?;
                Some(v)
            })
            .ok_or_else(|| {
                ReadError::line(
                    path,
                    *n,
                    format!(
                        "expected 'SYMBOL n (CENTRE n) x y z CHARGE = q', found {:?}",
                        shorten(l.trim())
                    ),
                )
            })?;
        let charge = number_after(l, "CHARGE =")
            .ok_or_else(|| ReadError::line(path, *n, "expected 'CHARGE = q' on the atom line"))?;
        let element = Element::from_symbol(&sym)
            .or_else(|| Element::from_number(charge.round().max(0.0) as u32))
            .unwrap_or(Element::UNKNOWN);
        atoms.push(QmAtom {
            element,
            nuclear_charge: charge,
            position_bohr: [xyz[0], xyz[1], xyz[2]],
        });
    }
    let mut centers = Vec::new();
    let mut types = Vec::new();
    let mut exponents = Vec::new();
    while let Some((n, l)) = it.peek() {
        if l.starts_with("CENTRE ASSIGNMENTS") {
            // Fields of width 3 from column 21 (the format's definition; wide numbers run together).
            for f in fixed_ints(l.get(20..).unwrap_or(""), 3)
                .ok_or_else(|| ReadError::line(path, *n, "expected centre numbers"))?
            {
                if f < 1 || f > n_atoms {
                    return Err(ReadError::line(
                        path,
                        *n,
                        format!("centre {f} is out of range ({n_atoms} nuclei)"),
                    ));
                }
                centers.push(f - 1);
            }
        } else if l.starts_with("TYPE ASSIGNMENTS") {
            for t in fixed_ints(l.get(20..).unwrap_or(""), 3)
                .ok_or_else(|| ReadError::line(path, *n, "expected primitive type numbers"))?
            {
                types.push(aim_type_powers(t).ok_or_else(|| {
                    ReadError::line(path, *n, format!("primitive type {t} is not supported (1..=56)"))
                })?);
            }
        } else if let Some(rest) = l.strip_prefix("EXPONENTS") {
            for e in floats(rest, 14).ok_or_else(|| {
                ReadError::line(
                    path,
                    *n,
                    format!("expected exponents, found {:?}", shorten(rest.trim())),
                )
            })? {
                if e <= 0.0 {
                    return Err(ReadError::line(
                        path,
                        *n,
                        format!("expected a positive exponent, found {e}"),
                    ));
                }
                exponents.push(e);
            }
        } else {
            break;
        }
        if centers.len() > n_prim || types.len() > n_prim || exponents.len() > n_prim {
            return Err(ReadError::line(
                path,
                *n,
                format!("more primitives listed than the {n_prim} declared"),
            ));
        }
        it.next();
    }
    if centers.len() != n_prim || types.len() != n_prim || exponents.len() != n_prim {
        let line = it.peek().map_or(all.len(), |(n, _)| *n);
        return Err(ReadError::line(
            path,
            line,
            format!(
                "expected {n_prim} centres, types and exponents, found {}, {} and {}",
                centers.len(),
                types.len(),
                exponents.len()
            ),
        ));
    }
    let mut orbitals = Vec::with_capacity(n_mo.min(4096));
    let mut numbers = Vec::with_capacity(n_mo.min(4096));
    let mut energy = None;
    let mut mo_spins: Vec<u8> = Vec::new();
    while let Some((n, l)) = it.next() {
        let t = l.trim_start();
        if t.starts_with("END DATA") {
            let mut in_spins = false;
            for (sn, l2) in it.by_ref() {
                if let Some(e) = number_after(l2, "ENERGY =") {
                    energy = Some(e);
                }
                if l2.contains("$MOSPIN") {
                    // Multiwfn's extension: the spin of every orbital (1 alpha, 2 beta, 3 both).
                    in_spins = true;
                } else if in_spins && mo_spins.len() < n_mo {
                    for v in fixed_ints(l2, 2).unwrap_or_default() {
                        if !(1..=3).contains(&v) {
                            return Err(ReadError::line(
                                path,
                                *sn,
                                format!("$MOSPIN: expected 1 (alpha), 2 (beta) or 3 (both), found {v}"),
                            ));
                        }
                        mo_spins.push(v as u8);
                    }
                }
            }
            break;
        }
        if !t.starts_with("MO") {
            if t.is_empty() {
                continue;
            }
            return Err(ReadError::line(
                path,
                *n,
                format!(
                    "expected an 'MO n ... OCC NO = ... ORB. ENERGY = ...' line, found {:?}",
                    shorten(t)
                ),
            ));
        }
        let occ = number_after(l, "OCC NO =")
            .ok_or_else(|| ReadError::line(path, *n, "expected 'OCC NO =' on the orbital line"))?;
        let ene = number_after(l, "ENERGY =").unwrap_or(0.0);
        let spin = if l.contains("(Beta)") || l.contains("(beta)") {
            Some(true)
        } else if l.contains("(Alpha)") {
            Some(false)
        } else {
            None
        };
        let mut c = Vec::new();
        while c.len() < n_prim {
            let Some((cn, cl)) = it.next() else {
                return Err(ReadError::line(
                    path,
                    *n,
                    format!(
                        "file ends inside orbital {}: {} of {n_prim} coefficients",
                        orbitals.len() + 1,
                        c.len()
                    ),
                ));
            };
            let v = floats(cl, 16).ok_or_else(|| {
                ReadError::line(
                    path,
                    *cn,
                    format!("expected orbital coefficients, found {:?}", shorten(cl.trim())),
                )
            })?;
            if v.is_empty() {
                return Err(ReadError::line(
                    path,
                    *cn,
                    "expected orbital coefficients, found an empty line",
                ));
            }
            c.extend(v);
        }
        if c.len() != n_prim {
            return Err(ReadError::line(
                path,
                *n,
                format!(
                    "orbital {} has {} coefficients, expected {n_prim}",
                    orbitals.len() + 1,
                    c.len()
                ),
            ));
        }
        numbers.push(
            t.get(2..)
                .and_then(|r| r.split_whitespace().next()?.parse::<usize>().ok()),
        );
        orbitals.push((occ, ene, spin, c));
    }
    if orbitals.len() != n_mo {
        return Err(ReadError::line(
            path,
            all.len(),
            format!(
                "expected {n_mo} orbitals, found {}: the file looks truncated",
                orbitals.len()
            ),
        ));
    }
    assign_wfn_spins(path, &mut orbitals, &numbers, &mo_spins)?;
    build(
        path,
        Primitives {
            atoms,
            centers,
            types,
            exponents,
            orbitals,
            energy,
            title: title.clone(),
        },
    )
}

/// Spins of the orbitals of a wfn file, which has no spin field: Multiwfn's `$MOSPIN` list when
/// present; otherwise, when every occupation is at most 1 (spin orbitals, as Gaussian writes an
/// unrestricted wavefunction: the alpha orbitals, then the beta ones), the alpha orbitals are the
/// first run in which energies rise, occupations fall and orbital numbers count up by one (the
/// rule iodata applies); the orbitals after it are beta.
fn assign_wfn_spins(
    path: &Path,
    orbitals: &mut [(f64, f64, Option<bool>, Vec<f64>)],
    numbers: &[Option<usize>],
    mo_spins: &[u8],
) -> Result<(), ReadError> {
    if orbitals.iter().any(|o| o.2.is_some()) {
        return Ok(());
    }
    if !mo_spins.is_empty() {
        if mo_spins.len() != orbitals.len() || (mo_spins.contains(&2) && mo_spins.contains(&3)) {
            return Err(ReadError::file(
                path,
                format!(
                    "$MOSPIN lists {} spins for {} orbitals, or mixes beta (2) with both (3)",
                    mo_spins.len(),
                    orbitals.len()
                ),
            ));
        }
        for (o, &s) in orbitals.iter_mut().zip(mo_spins) {
            o.2 = match s {
                1 => Some(false),
                2 => Some(true),
                _ => None,
            };
        }
        return Ok(());
    }
    if orbitals.iter().any(|o| o.0 > 1.0 + 1e-6) {
        return Ok(());
    }
    let mut n_alpha = 1;
    while let (Some(prev), Some(next)) = (orbitals.get(n_alpha - 1), orbitals.get(n_alpha)) {
        let counting = match (numbers.get(n_alpha - 1), numbers.get(n_alpha)) {
            (Some(Some(a)), Some(Some(b))) => *b == a + 1,
            _ => true,
        };
        if next.1 < prev.1 || next.0 > prev.0 || !counting {
            break;
        }
        n_alpha += 1;
    }
    if n_alpha < orbitals.len() {
        for (k, o) in orbitals.iter_mut().enumerate() {
            o.2 = Some(k >= n_alpha);
        }
    }
    Ok(())
}

/// Integers in fixed-width fields (wfn assignment lines run wide numbers together).
fn fixed_ints(s: &str, width: usize) -> Option<Vec<usize>> {
    let simple: Option<Vec<usize>> = s.split_whitespace().map(|t| t.parse::<usize>().ok()).collect();
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let end = (i + width).min(b.len());
        let f = std::str::from_utf8(b.get(i..end)?).ok()?.trim();
        if !f.is_empty() {
            out.push(f.parse::<usize>().ok()?);
        }
        i = end;
    }
    // Prefer the fixed-width reading (it is the format's definition); fall back to whitespace.
    if out.is_empty() { simple } else { Some(out) }
}

pub use super::wfx::read_wfx;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_table() {
        assert_eq!(aim_type_powers(1), Some([0, 0, 0]));
        assert_eq!(aim_type_powers(14), Some([2, 1, 0]));
        assert_eq!(aim_type_powers(35), Some([1, 1, 2]));
        assert_eq!(aim_type_powers(36), Some([0, 0, 5]));
        assert_eq!(aim_type_powers(56), Some([5, 0, 0]));
        assert_eq!(aim_type_powers(57), None);
        assert_eq!(aim_type_powers(0), None);
    }

    #[test]
    fn garbage_is_an_error() {
        let p = Path::new("x.wfn");
        assert!(read_wfn(p, b"").is_err());
        assert!(
            read_wfn(
                p,
                b"t\nGAUSSIAN 99999999 MOL ORBITALS 9999999 PRIMITIVES 99999 NUCLEI\n"
            )
            .is_err()
        );
        assert!(read_wfx(Path::new("x.wfx"), b"<Number of Nuclei>\n1\n</Number of Nuclei>\n").is_err());
    }
}
