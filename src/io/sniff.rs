//! Format detection from the file name (compression suffixes ignored) and, when the name says
//! nothing useful, from the first bytes of the content.

use std::path::Path;

/// Every format `io` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Pdb,
    Pqr,
    Psf,
    Gro,
    Xyz,
    Mmcif,
    Dcd,
    Xtc,
    /// AMBER parm7/prmtop topology (also CHAMBER).
    Prmtop,
    /// AMBER NetCDF trajectory or restart (NetCDF-3).
    AmberNetcdf,
    /// AMBER ASCII trajectory.
    Mdcrd,
    /// AMBER ASCII restart / input coordinates.
    Rst7,
    Mol2,
    /// GROMACS full-precision trajectory.
    Trr,
    /// GROMACS run input (topology).
    Tpr,
    LammpsData,
    LammpsDump,
    Molden,
    Fchk,
    /// Molekel (ORCA's `orca_2mkl` output).
    Mkl,
    Wfn,
    Wfx,
    Cube,
    Dx,
    /// Output of a QM program (Gaussian, GAMESS, ORCA); the program is detected from its banner.
    QmLog,
    /// CHARMM coordinates (`.crd`/`.cor` with `*` title lines; normal and extended).
    CharmmCrd,
    /// NAMD binary coordinates or velocities (`.coor`, `.vel`).
    NamdBin,
    /// BinaryCIF (MessagePack-encoded mmCIF).
    Bcif,
    /// Tinker XYZ or archive (`.txyz`, `.arc`; Tinker's `.xyz` by its atom lines).
    Tinker,
    /// MDL molfile or SD file (`.mol`, `.sdf`, `.sd`; V2000 and V3000).
    Sdf,
    /// DL_POLY CONFIG, REVCON or HISTORY (by its name, or a title naming DL_POLY).
    DlPoly,
}

impl Format {
    /// Lower-case name used in messages and `--format` flags.
    pub fn name(self) -> &'static str {
        match self {
            Format::Pdb => "pdb",
            Format::Pqr => "pqr",
            Format::Psf => "psf",
            Format::Gro => "gro",
            Format::Xyz => "xyz",
            Format::Mmcif => "mmcif",
            Format::Dcd => "dcd",
            Format::Xtc => "xtc",
            Format::Prmtop => "prmtop",
            Format::AmberNetcdf => "netcdf",
            Format::Mdcrd => "mdcrd",
            Format::Rst7 => "rst7",
            Format::Mol2 => "mol2",
            Format::Trr => "trr",
            Format::Tpr => "tpr",
            Format::LammpsData => "lammps-data",
            Format::LammpsDump => "lammps-dump",
            Format::Molden => "molden",
            Format::Fchk => "fchk",
            Format::Mkl => "mkl",
            Format::Wfn => "wfn",
            Format::Wfx => "wfx",
            Format::Cube => "cube",
            Format::Dx => "dx",
            Format::QmLog => "qmlog",
            Format::CharmmCrd => "charmm-crd",
            Format::NamdBin => "namdbin",
            Format::Bcif => "bcif",
            Format::Tinker => "tinker",
            Format::Sdf => "sdf",
            Format::DlPoly => "dlpoly",
        }
    }

    /// True for formats that only carry coordinates (they need a topology beside them).
    pub fn is_trajectory_only(self) -> bool {
        matches!(
            self,
            Format::Dcd
                | Format::Xtc
                | Format::AmberNetcdf
                | Format::Mdcrd
                | Format::Rst7
                | Format::Trr
                | Format::LammpsDump
                | Format::NamdBin
        )
    }

    /// From a file extension (case-insensitive), without the compression suffix.
    pub fn from_extension(ext: &str) -> Option<Format> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "pdb" | "ent" => Format::Pdb,
            "pqr" => Format::Pqr,
            "psf" => Format::Psf,
            "gro" => Format::Gro,
            "xyz" => Format::Xyz,
            "cif" | "mmcif" => Format::Mmcif,
            "dcd" => Format::Dcd,
            "xtc" => Format::Xtc,
            "prmtop" | "parm7" => Format::Prmtop,
            "nc" | "ncdf" | "netcdf" | "ncrst" => Format::AmberNetcdf,
            "mdcrd" | "trj" | "crdbox" => Format::Mdcrd,
            "rst7" | "inpcrd" | "restrt" | "rst" => Format::Rst7,
            "mol2" => Format::Mol2,
            "trr" => Format::Trr,
            "tpr" => Format::Tpr,
            "data" | "lmp" | "lammps" => Format::LammpsData,
            "lammpstrj" | "lammpsdump" | "dump" => Format::LammpsDump,
            "molden" | "mold" | "molf" | "molden_input" => Format::Molden,
            "fchk" | "fch" => Format::Fchk,
            "mkl" => Format::Mkl,
            "wfn" => Format::Wfn,
            "wfx" => Format::Wfx,
            "cube" | "cub" => Format::Cube,
            "dx" => Format::Dx,
            "coor" | "vel" => Format::NamdBin,
            "bcif" => Format::Bcif,
            "txyz" | "arc" => Format::Tinker,
            "sdf" | "sd" | "mol" => Format::Sdf,
            _ => return None,
        })
    }

    /// From content alone: the first few kilobytes of the (decompressed) file.
    pub fn from_content(head: &[u8]) -> Option<Format> {
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        // A file with %VERSION/%FLAG records is an AMBER prmtop whatever else is wrong in it, and
        // its reader's message is the one that helps.
        if is_prmtop_text(&text) {
            return Some(Format::Prmtop);
        }
        if head.len() >= 8 {
            let le = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let be = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            if (le == 84 || be == 84) && &head[4..8] == b"CORD" {
                return Some(Format::Dcd);
            }
            if be == 1995 {
                return Some(Format::Xtc);
            }
            if be == 1993 && head.get(12..24) == Some(b"GMX_trn_file") {
                return Some(Format::Trr);
            }
            if is_tpr_header(head) {
                return Some(Format::Tpr);
            }
        }
        if head.first() == Some(&0x83) || head.first() == Some(&0x84) || head.first() == Some(&0xde) {
            // A MessagePack map at the top: BinaryCIF names its version and encoder first.
            if head
                .get(..256)
                .is_some_and(|h| h.windows(10).any(|w| w == b"dataBlocks"))
            {
                return Some(Format::Bcif);
            }
        }
        if first == "ITEM: TIMESTEP" {
            return Some(Format::LammpsDump);
        }
        if is_lammps_data(&text) {
            return Some(Format::LammpsData);
        }
        if is_netcdf_magic(head) {
            return Some(Format::AmberNetcdf);
        }
        if text.lines().any(|l| l.trim_start().starts_with("@<TRIPOS>MOLECULE")) {
            return Some(Format::Mol2);
        }
        if super::qmlog::Program::detect(head).is_some() {
            return Some(Format::QmLog);
        }
        if text
            .lines()
            .nth(3)
            .map(|l| l.trim_end().to_ascii_uppercase())
            .is_some_and(|l| l.ends_with("V2000") || l.ends_with("V3000"))
        {
            return Some(Format::Sdf);
        }
        if first.starts_with("[Molden Format]") || first.eq_ignore_ascii_case("[molden format]") {
            return Some(Format::Molden);
        }
        if first.eq_ignore_ascii_case("$mkl") {
            return Some(Format::Mkl);
        }
        if first.starts_with('*') && super::charmm_crd::looks_like(head) {
            return Some(Format::CharmmCrd);
        }
        if first.starts_with("PSF") {
            return Some(Format::Psf);
        }
        if first.starts_with("data_") || text.contains("_atom_site.") {
            return Some(Format::Mmcif);
        }
        if text.contains("<Keywords>") || first.starts_with("<Title>") {
            return Some(Format::Wfx);
        }
        if text.contains("object 1 class gridpositions") {
            return Some(Format::Dx);
        }
        if text.contains("Number of basis functions")
            && (text.contains("Number of atoms") || text.contains("Atomic numbers"))
        {
            return Some(Format::Fchk);
        }
        if text
            .lines()
            .nth(1)
            .is_some_and(|l| l.trim_start().starts_with("GAUSSIAN") && l.contains("PRIMITIVES"))
        {
            return Some(Format::Wfn);
        }
        for line in text.lines().take(50) {
            if line.starts_with("ATOM  ")
                || line.starts_with("HETATM")
                || line.starts_with("CRYST1")
                || line.starts_with("MODEL ")
            {
                return Some(Format::Pdb);
            }
        }
        if super::tinker::looks_like(head) {
            return Some(Format::Tinker);
        }
        if first.to_ascii_uppercase().contains("DL_POLY") && super::dlpoly::looks_like(head) {
            return Some(Format::DlPoly);
        }
        if first.parse::<usize>().is_ok() {
            return Some(Format::Xyz);
        }
        None
    }

    /// Detects a file's format: extension first (after stripping `.gz`/`.bz2`), then content. A
    /// NetCDF signature wins over the extension (AMBER restarts are text or NetCDF under the same
    /// names).
    pub fn detect(path: &Path, head: &[u8]) -> Option<Format> {
        if is_netcdf_magic(head) {
            return Some(Format::AmberNetcdf);
        }
        let name = super::uncompressed_name(path);
        let ext = Path::new(&name).extension().map(|e| e.to_string_lossy().into_owned());
        let base = Path::new(&name).file_name().map(|b| b.to_string_lossy().into_owned());
        if base.as_deref().is_some_and(super::dlpoly::named_like) && super::dlpoly::looks_like(head) {
            return Some(Format::DlPoly);
        }
        // `.crd` and `.cor` are CHARMM coordinates (a `*` title first) or AMBER ASCII trajectories
        // (cpptraj's name for mdcrd): the content decides.
        if ext
            .as_deref()
            .is_some_and(|e| e.eq_ignore_ascii_case("crd") || e.eq_ignore_ascii_case("cor"))
        {
            return Some(if super::charmm_crd::looks_like(head) {
                Format::CharmmCrd
            } else {
                Format::Mdcrd
            });
        }
        if let Some(f) = ext.as_deref().and_then(Format::from_extension) {
            // Tinker names its coordinates `.xyz` too: its atom lines tell them apart.
            if f == Format::Xyz && super::tinker::looks_like(head) {
                return Some(Format::Tinker);
            }
            return Some(f);
        }
        Format::from_content(head)
    }
}

/// A GROMACS TPR: its header string written by XDR, the string's length plus one, the length, then
/// `VERSION ...` (bytes 8..15), all of it binary; text never has both lengths.
fn is_tpr_header(head: &[u8]) -> bool {
    let word = |at: usize| {
        head.get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
    };
    matches!((word(0), word(4)), (Some(a), Some(b)) if a == b.wrapping_add(1) && (8..=1024).contains(&b))
        && head.get(8..15) == Some(b"VERSION")
}

/// An AMBER prmtop: among its first records (comments and blank lines aside) a `%VERSION` or a
/// `%FLAG NAME` line.
fn is_prmtop_text(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .take(8)
        .any(|l| l.starts_with("%VERSION") || l.starts_with("%FLAG "))
}

/// The NetCDF-3 signature (classic, 64-bit offset, CDF-5).
fn is_netcdf_magic(head: &[u8]) -> bool {
    matches!(head.get(..4), Some([b'C', b'D', b'F', 1 | 2 | 5]))
}

/// A LAMMPS data file: a header with an "N atoms" line and the "xlo xhi" box line.
fn is_lammps_data(text: &str) -> bool {
    let mut lines = text.lines().skip(1).map(|l| l.split('#').next().unwrap_or("").trim());
    let header: Vec<&str> = lines.by_ref().take(40).filter(|l| !l.is_empty()).collect();
    let atoms = header.iter().any(|l| {
        let mut w = l.split_whitespace();
        w.next().is_some_and(|n| n.parse::<u64>().is_ok()) && w.next() == Some("atoms") && w.next().is_none()
    });
    atoms && header.iter().any(|l| l.ends_with("xlo xhi"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_extension_and_content() {
        assert_eq!(Format::detect(Path::new("a.PDB.gz"), b""), Some(Format::Pdb));
        assert_eq!(
            Format::detect(Path::new("a.txt"), b"[Molden Format]\n"),
            Some(Format::Molden)
        );
        assert_eq!(Format::detect(Path::new("ligand.MOL"), b""), Some(Format::Sdf));
        let config = b"KCl\n         2         3      2000\n";
        assert_eq!(Format::detect(Path::new("run/REVCON"), config), Some(Format::DlPoly));
        assert_eq!(
            Format::detect(Path::new("x"), b"DL_POLY: KCl\n 0 0 3\n"),
            Some(Format::DlPoly)
        );
        assert_eq!(Format::detect(Path::new("CONFIG.pdb"), b"ATOM  "), Some(Format::Pdb));
        let molfile = b"713\n  -OEChem-03292115373D\n\n  6  5  0     0  0  0  0  0  0999 v2000\n";
        assert_eq!(Format::detect(Path::new("download"), molfile), Some(Format::Sdf));
        let mut dcd = 84i32.to_le_bytes().to_vec();
        dcd.extend_from_slice(b"CORD");
        assert_eq!(Format::detect(Path::new("traj"), &dcd), Some(Format::Dcd));
        assert_eq!(
            Format::detect(Path::new("x"), b"3\ncomment\nO 0 0 0\n"),
            Some(Format::Xyz)
        );
        assert_eq!(Format::detect(Path::new("x"), b"\x00\x01garbage"), None);
        assert_eq!(
            Format::detect(Path::new("a.rst7"), b"CDF\x02\0\0\0\0"),
            Some(Format::AmberNetcdf)
        );
        assert_eq!(
            Format::detect(Path::new("a.top"), b"%VERSION  VERSION_STAMP"),
            Some(Format::Prmtop)
        );
        assert_eq!(
            Format::detect(Path::new("a"), b"@<TRIPOS>MOLECULE\n"),
            Some(Format::Mol2)
        );
        assert_eq!(Format::detect(Path::new("a.parm7.bz2"), b""), Some(Format::Prmtop));
        // A prmtop is told by its records even when its first line is odd; "VERSION" at byte 8 of
        // text is no TPR header (a TPR's two XDR lengths come first).
        assert_eq!(
            Format::from_content(b"%VERSIONVERSION_STAMP = V0001.000\n%FLAG TITLE\n"),
            Some(Format::Prmtop)
        );
        assert_eq!(
            Format::from_content(b"%COMMENT by hand\n\n%FLAG POINTERS\n%FORMAT(10I8)\n"),
            Some(Format::Prmtop)
        );
        assert_eq!(Format::from_content(b"12345678VERSION 2021\n"), None);
        let mut tpr = vec![0, 0, 0, 15, 0, 0, 0, 14];
        tpr.extend_from_slice(b"VERSION 2021.1\0\0");
        assert_eq!(Format::from_content(&tpr), Some(Format::Tpr));
    }
}
