//! PDB output: one MODEL per frame when there are several, each with its CRYST1 box, and atom
//! records with names, residues, chains, elements, and the occupancies and B-factors the files had
//! (1.00 and 0.00 otherwise): `ATOM` for the standard amino acids and nucleotides, `HETATM` for the
//! rest (ligands, water, ions, modified residues), as the wwPDB writes them. PQR output is `ATOM`
//! records with each atom's partial charge and radius (`Structure::radii_or_element`, as the
//! Poisson-Boltzmann solver takes it) in place of occupancy and B-factor, every field separated by a
//! space as APBS reads them (a `HETATM` keyword would run into a five-digit serial there). Called
//! through `io::write`.

use super::FrameWriter;
use crate::model::{Frame, Structure};
use std::io::Write;

pub struct PdbWriter {
    frames: usize,
    /// MODEL/ENDMDL around each frame (when more than one is written).
    models: bool,
    /// Charges and radii in place of occupancies and B-factors.
    pqr: bool,
}

impl PdbWriter {
    pub fn new(n_frames: usize) -> PdbWriter {
        PdbWriter {
            frames: 0,
            models: n_frames > 1,
            pqr: false,
        }
    }

    /// A PQR writer (the caller has checked the structure has charges).
    pub fn pqr(n_frames: usize) -> PdbWriter {
        PdbWriter {
            pqr: true,
            ..PdbWriter::new(n_frames)
        }
    }
}

/// The atom name in columns 13-16: one-letter elements start in column 14, as PDB files do.
fn atom_name(name: &str, symbol: &str) -> String {
    if name.len() < 4 && symbol.len() == 1 {
        format!(" {name:<3}")
    } else {
        format!("{:<4}", name.get(..4).unwrap_or(name))
    }
}

fn clip(s: &str, n: usize) -> &str {
    s.get(..n).unwrap_or(s)
}

impl FrameWriter for PdbWriter {
    fn write_frame(&mut self, out: &mut dyn Write, atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        if self.frames == 0 {
            writeln!(out, "REMARK   1 written by orbitfield")?;
        }
        if self.models {
            writeln!(out, "MODEL     {:>4}", (self.frames + 1) % 10000)?;
        }
        // One CRYST1 per model: boxes change from frame to frame.
        if let Some(c) = frame.cell {
            let [a, b, cc] = c.lengths_angstrom;
            let [al, be, ga] = c.angles_degree;
            writeln!(
                out,
                "CRYST1{a:9.3}{b:9.3}{cc:9.3}{al:7.2}{be:7.2}{ga:7.2} P 1           1"
            )?;
        }
        let radii = if self.pqr {
            atoms.radii_or_element().0
        } else {
            Vec::new()
        };
        for (i, p) in frame.positions_angstrom.iter().enumerate() {
            let symbol = atoms.elements.get(i).map_or("X", |e| e.symbol());
            let name = atoms.names.get(i).map_or("", |n| n.as_str());
            let resname = atoms.resnames.get(i).map_or("", |n| n.as_str());
            let chain = atoms.chains.get(i).map_or("", |n| n.as_str());
            let segid = atoms.segids.get(i).map_or("", |n| n.as_str());
            let resid = atoms.resids.get(i).copied().unwrap_or(1).rem_euclid(10000);
            let element = if symbol == "X" { "" } else { symbol };
            if self.pqr {
                let q = known(&atoms.charges_e, i, 0.0);
                let r = radii.get(i).copied().unwrap_or(0.0);
                writeln!(
                    out,
                    "ATOM  {:>5} {} {:<4}{:>1} {:>4}{:1}   {:8.3} {:8.3} {:8.3} {:8.4} {:7.4}",
                    (i + 1) % 100000,
                    atom_name(clip(name, 4), symbol),
                    clip(resname, 4),
                    clip(chain, 1),
                    resid,
                    atoms.icode(i) as char,
                    p[0],
                    p[1],
                    p[2],
                    q,
                    r,
                )?;
                ter(out, atoms, i)?;
                continue;
            }
            // Column 17 the alternate location, column 27 the insertion code, as read. Residues
            // outside the standard polymers (ligands, water, ions, modified residues) are HETATM
            // records, as the wwPDB writes them.
            let polymer =
                crate::model::select::is_protein_resname(resname) || crate::model::select::is_nucleic_resname(resname);
            writeln!(
                out,
                "{}{:>5} {}{:1}{:<4}{:1}{:>4}{:1}   {:8.3}{:8.3}{:8.3}{:6.2}{:6.2}      {:<4}{:>2}",
                if polymer { "ATOM  " } else { "HETATM" },
                (i + 1) % 100000,
                atom_name(clip(name, 4), symbol),
                atoms.altloc(i) as char,
                clip(resname, 4),
                clip(chain, 1),
                resid,
                atoms.icode(i) as char,
                p[0],
                p[1],
                p[2],
                known(&atoms.occupancies, i, 1.0),
                known(&atoms.bfactors, i, 0.0),
                clip(segid, 4),
                element.to_ascii_uppercase(),
            )?;
            ter(out, atoms, i)?;
        }
        if self.models {
            writeln!(out, "ENDMDL")?;
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(&mut self, out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        writeln!(out, "END")
    }
}

/// A TER record after atom `i` when the next atom is of another chain (chain id or segment):
/// readers that split chains by TER (PDB2PQR, pdb2gmx, older viewers) see where each ends.
fn ter(out: &mut dyn Write, atoms: &Structure, i: usize) -> std::io::Result<()> {
    let differs = |v: &[crate::model::Name8]| match (v.get(i), v.get(i + 1)) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    };
    if differs(&atoms.chains) || differs(&atoms.segids) {
        writeln!(out, "TER")?;
    }
    Ok(())
}

/// Residue numbers a PDB file cannot hold in its four columns: a note naming them, or `None`.
pub fn resid_wrap_note(atoms: &Structure, indices: Option<&[u32]>) -> Option<String> {
    let outside = |r: i32| !(-999..=9999).contains(&r);
    let count = match indices {
        Some(idx) => idx
            .iter()
            .filter(|&&i| atoms.resids.get(i as usize).is_some_and(|&r| outside(r)))
            .count(),
        None => atoms.resids.iter().filter(|&&r| outside(r)).count(),
    };
    (count > 0).then(|| {
        format!(
            "{count} {} residue numbers outside -999 to 9999, which PDB's four columns hold only \
             modulo 10000 (as VMD and MDAnalysis write them); a .gro file keeps five digits",
            if count == 1 { "atom has" } else { "atoms have" }
        )
    })
}

/// Residue and atom names longer than the PDB columns hold (four characters; MDAnalysis and VMD cut
/// them too): a note naming a few of them, or `None`.
pub fn cut_names_note(atoms: &Structure, indices: Option<&[u32]>) -> Option<String> {
    let all: Vec<usize> = match indices {
        Some(idx) => idx.iter().map(|&i| i as usize).collect(),
        None => (0..atoms.len()).collect(),
    };
    let mut long: Vec<&str> = Vec::new();
    let mut count = 0usize;
    for &i in &all {
        for name in [atoms.resnames.get(i), atoms.names.get(i)].into_iter().flatten() {
            let n = name.as_str();
            if n.len() > 4 {
                count += 1;
                if long.len() < 3 && !long.contains(&n) {
                    long.push(n);
                }
            }
        }
    }
    (count > 0).then(|| {
        let shown: Vec<String> = long.iter().map(|n| format!("{n} as {}", clip(n, 4))).collect();
        format!(
            "{count} residue or atom {} longer than the four characters PDB's columns hold, cut \
             ({}); a .gro file keeps five",
            if count == 1 { "name is" } else { "names are" },
            shown.join(", ")
        )
    })
}

/// Atom `i`'s value of an optional column, `default` where the file had none (or a blank).
fn known(column: &Option<Vec<f32>>, i: usize, default: f32) -> f32 {
    column
        .as_ref()
        .and_then(|v| v.get(i).copied())
        .filter(|v| v.is_finite())
        .unwrap_or(default)
}
