//! Sections of a Molden record: the pure flags, `[Atoms]` (with `[Pseudo]` effective charges), `[GTO]`,
//! `[MO]` and `[GEOMETRIES]`.

use super::*;

/// Pure flags for d, f and g-and-higher shells from the flag sections.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PureFlags {
    pub(super) d: bool,
    pub(super) f: bool,
    pub(super) g: bool,
}

impl PureFlags {
    pub(super) fn from_sections(sections: &[Section]) -> PureFlags {
        let mut p = PureFlags::default();
        for s in sections {
            match s.name.as_str() {
                "5d" | "5d7f" => {
                    p.d = true;
                    p.f = true;
                }
                "5d10f" => {
                    p.d = true;
                    p.f = false;
                }
                "7f" => p.f = true,
                "9g" => p.g = true,
                _ => {}
            }
        }
        p
    }

    pub(super) fn pure(self, l: u8) -> bool {
        match l {
            0 | 1 => false,
            2 => self.d,
            3 => self.f,
            _ => self.g,
        }
    }
}

pub(super) struct Atom {
    pub(super) element: Element,
    pub(super) z: f64,
    pub(super) position_bohr: [f64; 3],
}

pub(super) fn tokens(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// Effective nuclear charges of a `[Pseudo]` section (Molden2AIM, Multiwfn: "Fe 1 16", atom name,
/// 1-based atom number, charge less the core electrons) applied to `atoms`.
pub(super) fn apply_pseudo(path: &Path, sec: &Section, atoms: &mut [Atom]) -> Result<(), ReadError> {
    for l in &sec.body {
        let t = tokens(&l.text);
        if t.is_empty() {
            continue;
        }
        let (Some(index), Some(charge)) = (
            t.get(1).and_then(|v| v.parse::<usize>().ok()),
            t.get(2)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|c| c.is_finite() && *c >= 0.0),
        ) else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected a [Pseudo] line 'name atom-number charge', found {:?}",
                    shorten(l.text.trim())
                ),
            ));
        };
        let Some(atom) = index.checked_sub(1).and_then(|i| atoms.get_mut(i)) else {
            return Err(ReadError::line(
                path,
                l.number,
                format!("[Pseudo] names atom {index}, but [Atoms] has {}", atoms.len()),
            ));
        };
        atom.z = charge;
    }
    Ok(())
}

/// Atoms of `[Atoms]`, and a warning when the unit had to be assumed.
pub(super) fn read_atoms(path: &Path, sec: &Section) -> Result<(Vec<Atom>, Option<String>), ReadError> {
    let args = sec.args.to_ascii_lowercase();
    let mut warning = None;
    let angstrom = if args.contains("au") || args.contains("bohr") {
        false
    } else if args.contains("ang") {
        true
    } else if args.trim().is_empty() {
        warning = Some(format!(
            "line {}: [Atoms] gives no unit (AU or Angs); Angstrom assumed",
            sec.header_line
        ));
        true
    } else {
        return Err(ReadError::line(
            path,
            sec.header_line,
            format!(
                "expected the unit after [Atoms] (AU or Angs), found {:?}",
                shorten(&sec.args)
            ),
        ));
    };
    let mut atoms = Vec::new();
    for l in &sec.body {
        let t = tokens(&l.text);
        if t.is_empty() {
            continue;
        }
        if t.len() < 6 {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an atom line 'name index Z x y z', found {:?}",
                    shorten(l.text.trim())
                ),
            ));
        }
        let z = parse_i64(path, l.number, "the atomic number", t[2].as_bytes())?;
        let named = Element::from_symbol(t[0].trim_end_matches(|c: char| c.is_ascii_digit() || c == '_'));
        // With an effective core potential the third column is the nuclear charge less the core
        // electrons (PySCF, ORCA: "Mo 1 14"): the name gives the element when its atomic number
        // exceeds the column by the size of a closed-shell core.
        let ecp_core = named.filter(|e| {
            let core = i64::from(e.number()) - z;
            z > 0 && u32::try_from(core).is_ok_and(|c| crate::io::ecp::ECP_CORE_SIZES.contains(&c))
        });
        let element = ecp_core
            .or_else(|| u32::try_from(z).ok().filter(|&z| z > 0).and_then(Element::from_number))
            .or(named)
            .unwrap_or(Element::UNKNOWN);
        let mut p = [0.0; 3];
        for k in 0..3 {
            let v = parse_f64(path, l.number, "a coordinate", t[3 + k].as_bytes())?;
            p[k] = if angstrom { bohr_from_angstrom(v) } else { v };
        }
        atoms.push(Atom {
            element,
            z: z.max(0) as f64,
            position_bohr: p,
        });
    }
    if atoms.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected atom lines after [Atoms], found none",
        ));
    }
    Ok((atoms, warning))
}

/// A shell as read, before pure flags are known.
pub(super) struct RawShell {
    pub(super) l: u8,
    pub(super) atom: usize,
    pub(super) exponents: Vec<f64>,
    pub(super) coefficients: Vec<f64>,
}

/// Angular momentum of a lower-case shell letter (s, p, d, f, g, h, i, k).
pub(crate) fn shell_l(kind: &str) -> Option<u8> {
    match kind {
        "s" => Some(0),
        "p" => Some(1),
        "d" => Some(2),
        "f" => Some(3),
        "g" => Some(4),
        "h" => Some(5),
        "i" => Some(6),
        "k" => Some(7),
        _ => None,
    }
}

pub(super) fn read_gto(path: &Path, sec: &Section, n_atoms: usize) -> Result<Vec<RawShell>, ReadError> {
    let mut shells = Vec::new();
    let mut atom: Option<usize> = None;
    let body = &sec.body;
    let mut i = 0;
    while let Some(l) = body.get(i) {
        i += 1;
        let t = tokens(&l.text);
        let Some(first) = t.first() else { continue };
        if let Ok(idx) = first.parse::<i64>() {
            if idx < 1 || idx as u64 > n_atoms as u64 {
                return Err(ReadError::line(
                    path,
                    l.number,
                    format!("atom index {idx} in [GTO] is out of range ([Atoms] lists {n_atoms} atoms)"),
                ));
            }
            atom = Some(idx as usize - 1);
            continue;
        }
        let kind = first.to_ascii_lowercase();
        let Some(a) = atom else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an atom index before the shell, found {:?}",
                    shorten(l.text.trim())
                ),
            ));
        };
        let ls: Vec<u8> = if kind == "sp" {
            vec![0, 1]
        } else if let Some(l) = shell_l(&kind) {
            vec![l]
        } else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected a shell type (s, p, sp, d, f, g, h, i), found {:?}",
                    shorten(first)
                ),
            ));
        };
        let nprim = t.get(1).ok_or_else(|| {
            ReadError::line(
                path,
                l.number,
                "expected the number of primitives after the shell type, found nothing",
            )
        })?;
        let nprim = parse_i64(path, l.number, "the number of primitives", nprim.as_bytes())?;
        let remaining = body.len().saturating_sub(i);
        if nprim < 1 || nprim as u64 > remaining as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("shell declares {nprim} primitives but {remaining} lines remain in [GTO]"),
            ));
        }
        let scale = match t.get(2) {
            Some(s) => parse_f64(path, l.number, "the exponent scale factor", s.as_bytes())?,
            None => 1.0,
        };
        // NWChem writes 0 where it means "not scaled".
        let scale = if scale == 0.0 { 1.0 } else { scale };
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(ReadError::line(
                path,
                l.number,
                format!("expected a positive scale factor (or 0 for none), found {scale}"),
            ));
        }
        let mut exps = Vec::new();
        let mut coefs: Vec<Vec<f64>> = vec![Vec::new(); ls.len()];
        for _ in 0..nprim {
            let Some(pl) = body.get(i) else { break };
            i += 1;
            let pt = tokens(&pl.text);
            if pt.len() < 1 + ls.len() {
                return Err(ReadError::line(
                    path,
                    pl.number,
                    format!(
                        "expected an exponent and {} coefficient(s), found {:?}",
                        ls.len(),
                        shorten(pl.text.trim())
                    ),
                ));
            }
            let e = parse_f64(path, pl.number, "an exponent", pt[0].as_bytes())? * scale * scale;
            if !(e > 0.0 && e.is_finite()) {
                return Err(ReadError::line(
                    path,
                    pl.number,
                    format!("expected a positive exponent, found {e}"),
                ));
            }
            exps.push(e);
            for (k, c) in coefs.iter_mut().enumerate() {
                c.push(parse_f64(
                    path,
                    pl.number,
                    "a contraction coefficient",
                    pt[1 + k].as_bytes(),
                )?);
            }
        }
        for (k, &l) in ls.iter().enumerate() {
            shells.push(RawShell {
                l,
                atom: a,
                exponents: exps.clone(),
                coefficients: coefs[k].clone(),
            });
        }
    }
    if shells.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected shells after [GTO], found none",
        ));
    }
    Ok(shells)
}

pub(super) struct RawMo {
    pub(super) line: usize,
    pub(super) sym: String,
    pub(super) energy: f64,
    pub(super) beta: bool,
    pub(super) occupation: f64,
    pub(super) coefficients: Vec<(usize, usize, f64)>, // (line, 1-based index, value)
}

pub(super) fn read_mos(path: &Path, sec: &Section) -> Result<Vec<RawMo>, ReadError> {
    let mut mos: Vec<RawMo> = Vec::new();
    let mut in_coefs = true; // a key line after coefficients starts a new orbital
    for l in &sec.body {
        let text = l.text.trim();
        if text.is_empty() {
            continue;
        }
        if let Some((key, value)) = text.split_once('=') {
            if in_coefs || mos.is_empty() {
                mos.push(RawMo {
                    line: l.number,
                    sym: String::new(),
                    energy: 0.0,
                    beta: false,
                    occupation: 0.0,
                    coefficients: Vec::new(),
                });
                in_coefs = false;
            }
            let Some(mo) = mos.last_mut() else { continue };
            let value = value.trim();
            match key.trim().to_ascii_lowercase().as_str() {
                "sym" => mo.sym = value.to_string(),
                "ene" => mo.energy = parse_f64(path, l.number, "an orbital energy", value.as_bytes())?,
                "occup" => mo.occupation = parse_f64(path, l.number, "an occupation", value.as_bytes())?,
                "spin" => {
                    let v = value.to_ascii_lowercase();
                    mo.beta = match v.as_str() {
                        "alpha" => false,
                        "beta" => true,
                        _ => {
                            return Err(ReadError::line(
                                path,
                                l.number,
                                format!("expected Spin= Alpha or Beta, found {:?}", shorten(value)),
                            ));
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        let t = tokens(text);
        let Some(mo) = mos.last_mut() else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an orbital header (Ene=, Spin=, Occup=), found {:?}",
                    shorten(text)
                ),
            ));
        };
        if t.len() < 2 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("expected 'index coefficient', found {:?}", shorten(text)),
            ));
        }
        let idx = parse_i64(path, l.number, "a basis function index", t[0].as_bytes())?;
        if idx < 1 || idx as u64 > MAX_FUNCTIONS as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("basis function index {idx} is out of range"),
            ));
        }
        let v = parse_f64(path, l.number, "an MO coefficient", t[1].as_bytes())?;
        mo.coefficients.push((l.number, idx as usize, v));
        in_coefs = true;
    }
    if mos.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected orbitals after [MO], found none",
        ));
    }
    // A file cut off inside the last orbital: every other orbital is dense, the last is shorter.
    if mos.len() > 1 {
        let full = mos
            .iter()
            .take(mos.len() - 1)
            .map(|m| m.coefficients.len())
            .min()
            .unwrap_or(0);
        let max = mos.iter().map(|m| m.coefficients.len()).max().unwrap_or(0);
        if let Some(last) = mos.last()
            && full == max
            && last.coefficients.len() < full
        {
            let line = last.coefficients.last().map_or(last.line, |c| c.0);
            return Err(ReadError::line(
                path,
                line,
                format!(
                    "the last orbital has {} coefficients, the others {full}: the file looks truncated",
                    last.coefficients.len()
                ),
            ));
        }
    }
    for m in &mos {
        if m.coefficients.is_empty() {
            return Err(ReadError::line(
                path,
                m.line,
                "expected coefficient lines after this orbital header, found none",
            ));
        }
    }
    Ok(mos)
}

/// Atoms of one `[GEOMETRIES] XYZ` block, positions in bohr.
pub(super) fn read_geometries(path: &Path, sec: &Section, n_atoms: usize) -> Result<Vec<Vec<[f64; 3]>>, ReadError> {
    if !sec.args.is_empty() && !sec.args.to_ascii_lowercase().contains("xyz") {
        return Err(ReadError::line(
            path,
            sec.header_line,
            format!("expected [GEOMETRIES] XYZ, found {:?}", shorten(&sec.args)),
        ));
    }
    let mut out = Vec::new();
    let mut i = 0;
    // Each block: count line, comment line (may be blank, so read from the raw body), count atom lines.
    let raw = &sec.body;
    while i < raw.len() {
        let Some(l) = raw.get(i) else { break };
        if l.text.trim().is_empty() {
            i += 1;
            continue;
        }
        let n = parse_i64(path, l.number, "the atom count of a geometry", l.text.trim().as_bytes())?;
        if n as u64 != n_atoms as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("geometry has {n} atoms, [Atoms] lists {n_atoms}"),
            ));
        }
        i += 2; // count + comment
        let mut g = Vec::with_capacity(n_atoms);
        for _ in 0..n_atoms {
            let Some(al) = raw.get(i) else {
                return Err(ReadError::line(path, l.number, "the file ends inside a geometry block"));
            };
            i += 1;
            let t = tokens(&al.text);
            if t.len() < 4 {
                return Err(ReadError::line(
                    path,
                    al.number,
                    format!("expected 'element x y z', found {:?}", shorten(al.text.trim())),
                ));
            }
            let mut p = [0.0; 3];
            for k in 0..3 {
                p[k] = bohr_from_angstrom(parse_f64(path, al.number, "a coordinate", t[1 + k].as_bytes())?);
            }
            g.push(p);
        }
        out.push(g);
    }
    Ok(out)
}
