//! The Lennard-Jones parameters of a loaded system's atoms, for implicit ligand sampling.
//!
//! Owns [`system_lj`]: where each atom's eps and rmin/2 come from, in this order: CHARMM parameter
//! files given with `--params` (by the atom types of a PSF or CHAMBER/AMBER topology); an AMBER prmtop
//! among the files (its A/B coefficients, `amber::prmtop::read_lennard_jones`); a GROMACS TPR among
//! them (the c6/c12 of each atom type with itself, `tpr::read_lennard_jones`); the element table
//! (`model::lj::element_lj`, UFF) for files that carry no force field at all (PDB, GRO, XYZ, ...),
//! said once in [`SystemLj::note`]. A topology that names force-field types but holds no parameters
//! (a PSF) without `--params` is an error that says what to give. Called by the `grid ils` command
//! and the tests.

use super::ReadError;
use crate::model::Structure;
use crate::model::lj::{LjParams, element_lj};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Parameters for every atom of a system, and where they came from.
#[derive(Clone, Debug)]
pub struct SystemLj {
    pub params: Vec<LjParams>,
    /// "AMBER prmtop tz2.parm7 (A/B coefficients)", "CHARMM parameters par.prm by atom type", ...
    pub source: String,
    /// Set when the element table was used (to be said once).
    pub note: Option<String>,
}

/// Why the parameters could not be found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LjParamsError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(
        "{file}: the topology names force-field atom types but holds no Lennard-Jones parameters; give the force field's parameter file with --params FILE.prm|.str (CHARMM), or --lj-elements for the element table"
    )]
    NoParameters { file: String },
    #[error("--params {files}: no Lennard-Jones parameters for atom type '{atom_type}' (atom {atom}, {name})")]
    MissingType {
        files: String,
        atom_type: String,
        atom: usize,
        name: String,
    },
    #[error(
        "{file}: the run input's nonbonded interactions are not Lennard-Jones (Buckingham); give --params FILE.prm|.str for its atom types, or --lj-elements for the element table"
    )]
    TprNotLennardJones { file: String },
    #[error("--params needs atom types, and {file} has none (a PSF or prmtop names them)")]
    NoTypes { file: String },
    #[error(
        "the element table has no Lennard-Jones parameters for {element} (atom {atom}, {name}); leave such atoms out with --sel (e.g. --sel \"not name {name}\"), or give a topology that carries Lennard-Jones parameters (prmtop, TPR, or a PSF with --params)"
    )]
    MissingElement { element: String, atom: usize, name: String },
    #[error("{file}: Lennard-Jones parameters for {found} atoms, the system has {expected}")]
    Count {
        file: String,
        expected: usize,
        found: usize,
    },
}

/// The parameters of `structure`'s atoms, loaded from `files` (see the module docs). With
/// `elements_only` the element table is used whatever the files hold. Atoms outside `used` (a mask
/// over the atoms; `None`: all are used) may lack parameters (they get zeros: massless virtual
/// sites such as TIP4P's MW have none).
pub fn system_lj(
    files: &[PathBuf],
    structure: &Structure,
    params_files: &[PathBuf],
    elements_only: bool,
    used: Option<&[bool]>,
) -> Result<SystemLj, LjParamsError> {
    let used = |i: usize| used.is_none_or(|u| u.get(i).copied().unwrap_or(false));
    let first = files
        .first()
        .map_or_else(|| "<none>".to_string(), |p| p.display().to_string());
    if elements_only {
        return by_element(structure, &first, &used);
    }
    if !params_files.is_empty() {
        let mut table = BTreeMap::new();
        for p in params_files {
            let bytes = super::read_bytes(p)?;
            let text = String::from_utf8_lossy(&bytes);
            super::charmm_prm::read_nonbonded(p, &text, &mut table)?;
        }
        let names = params_files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if structure.types.len() != structure.len() || structure.is_empty() {
            return Err(LjParamsError::NoTypes { file: first });
        }
        let mut params = Vec::with_capacity(structure.len());
        for (i, t) in structure.types.iter().enumerate() {
            let key = t.to_string().to_ascii_uppercase();
            if !used(i) {
                params.push(table.get(&key).copied().unwrap_or_default());
                continue;
            }
            let p = table.get(&key).copied().ok_or_else(|| LjParamsError::MissingType {
                files: names.clone(),
                atom_type: key.clone(),
                atom: i + 1,
                name: structure.names.get(i).map(|n| n.to_string()).unwrap_or_default(),
            })?;
            params.push(p);
        }
        return Ok(SystemLj {
            params,
            source: format!("CHARMM parameters {names} by atom type"),
            note: None,
        });
    }
    for f in files {
        let format = detect(f)?;
        if format == Some(super::Format::Prmtop) {
            let bytes = super::read_bytes(f)?;
            if let Some(params) = super::amber::prmtop::read_lennard_jones(f, &bytes)? {
                if params.len() != structure.len() {
                    return Err(LjParamsError::Count {
                        file: f.display().to_string(),
                        expected: structure.len(),
                        found: params.len(),
                    });
                }
                return Ok(SystemLj {
                    params,
                    source: format!("AMBER prmtop {} (A/B coefficients)", f.display()),
                    note: None,
                });
            }
            return Err(LjParamsError::NoParameters {
                file: f.display().to_string(),
            });
        }
        if format == Some(super::Format::Tpr) {
            let bytes = super::read_bytes(f)?;
            let Some(params) = super::tpr::read_lennard_jones(f, &bytes)? else {
                return Err(LjParamsError::TprNotLennardJones {
                    file: f.display().to_string(),
                });
            };
            if params.len() != structure.len() {
                return Err(LjParamsError::Count {
                    file: f.display().to_string(),
                    expected: structure.len(),
                    found: params.len(),
                });
            }
            return Ok(SystemLj {
                params,
                source: format!("GROMACS TPR {} (c6/c12 of each atom type)", f.display()),
                note: None,
            });
        }
        if format == Some(super::Format::Psf) {
            return Err(LjParamsError::NoParameters {
                file: f.display().to_string(),
            });
        }
    }
    by_element(structure, &first, &used)
}

fn by_element(structure: &Structure, first: &str, used: &dyn Fn(usize) -> bool) -> Result<SystemLj, LjParamsError> {
    let mut params = Vec::with_capacity(structure.len());
    for (i, e) in structure.elements.iter().enumerate() {
        if !used(i) {
            params.push(element_lj(*e).unwrap_or_default());
            continue;
        }
        let p = element_lj(*e).ok_or_else(|| LjParamsError::MissingElement {
            element: if e.number() == 0 {
                "an unknown element (a virtual site or coarse-grained bead?)".to_string()
            } else {
                e.symbol().to_string()
            },
            atom: i + 1,
            name: structure.names.get(i).map(|n| n.to_string()).unwrap_or_default(),
        })?;
        params.push(p);
    }
    Ok(SystemLj {
        params,
        source: "the element table (UFF)".to_string(),
        note: Some(format!(
            "{first}: no Lennard-Jones parameters in the files; every atom takes its element's from the UFF table"
        )),
    })
}

/// The format of `path` by name, else by its first bytes.
fn detect(path: &Path) -> Result<Option<super::Format>, ReadError> {
    let name = super::uncompressed_name(path);
    let ext = name.rsplit('.').next().unwrap_or("");
    if let Some(f) = super::Format::from_extension(ext) {
        return Ok(Some(f));
    }
    let bytes = super::read_bytes(path)?;
    let head = bytes.get(..bytes.len().min(4096)).unwrap_or(&[]);
    Ok(super::Format::detect(path, head))
}
