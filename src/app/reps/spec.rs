//! Representations as plain, document-independent data ([`RepSpec`]): what the settings keep as
//! defaults, what session files hold, and what `render --rep`/`--field` describe. Fields are
//! written as text (`mo:homo`, `mo:beta:lumo+1`, `mo:17`, `density`, `spin`, `potential`,
//! `potential:mean:4`, `volume:2`) and resolved against a document when a representation is made.
//! Also the defaults a new document gets, chosen by its content.

use super::{FieldStyle, Iso};
use crate::analysis::hbonds::HBondCriteria;
use crate::analysis::polymer::Coloring as CartoonColoring;
use crate::app::atoms::{AtomColoring, AtomStyle};
use crate::app::document::Document;
use crate::app::fields::FieldChoice;
use crate::compute::molsurf::SurfaceModel;
use crate::model::field::{FieldSpec, OrbitalRef};
use crate::model::select::Selection;
use crate::model::{Spin, Structure};
use crate::surface::cartoon::Style as CartoonStyle;

/// A representation as data.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RepSpec {
    #[serde(default = "shown")]
    pub visible: bool,
    pub kind: SpecKind,
}

fn shown() -> bool {
    true
}

fn opaque() -> f32 {
    1.0
}

fn is_default_hbonds(c: &HBondCriteria) -> bool {
    *c == HBondCriteria::default()
}

/// What a [`RepSpec`] shows and how.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SpecKind {
    Atoms {
        selection: String,
        style: AtomStyle,
        #[serde(default)]
        coloring: AtomColoring,
        /// The hydrogen-bond criteria (style `HBonds`).
        #[serde(default, skip_serializing_if = "is_default_hbonds")]
        hbonds: HBondCriteria,
    },
    Field {
        /// The field as text (`mo:homo`, `density`, `potential`, `volume:1`, ...).
        field: String,
        #[serde(default)]
        style: FieldStyle,
        #[serde(default)]
        iso: Iso,
        /// Lobe colours; `None`: the next pair of the palette.
        #[serde(default)]
        colors: Option<[[f32; 3]; 2]>,
        #[serde(default = "opaque")]
        opacity: f32,
        /// Colour the surfaces by this volume (0-based), the range chosen from the values.
        #[serde(default)]
        color_volume: Option<usize>,
        /// Colour the surfaces by this field computed per frame (as text, e.g. `esp`), the range
        /// chosen from the values unless `color_range` gives it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color_by: Option<String>,
        /// The colouring's range (the colormap's ends) in the colouring field's computed units
        /// (hartree/e for a charges' potential, kT/e for Poisson-Boltzmann, file units for a volume).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color_range: Option<[f32; 2]>,
        /// A molecular surface coloured by its atoms in this scheme (each vertex as the atom whose
        /// sphere lies nearest it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color_atoms: Option<AtomColoring>,
    },
    /// The polymer residues a selection picks as cartoon, tube or trace.
    Cartoon {
        selection: String,
        #[serde(default)]
        style: CartoonStyle,
        #[serde(default)]
        coloring: CartoonColoring,
        /// Colour the mesh by this field at its vertices (as text: `esp`, `volume:N`), the range
        /// chosen from the values unless `color_range` gives it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color_by: Option<String>,
        /// The colouring's range in the colouring field's computed units.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color_range: Option<[f32; 2]>,
    },
}

impl RepSpec {
    /// Atoms picked by `selection` in `style`, coloured by element.
    pub fn atoms(selection: &str, style: AtomStyle) -> RepSpec {
        RepSpec {
            visible: true,
            kind: SpecKind::Atoms {
                selection: selection.into(),
                style,
                coloring: AtomColoring::Element,
                hbonds: HBondCriteria::default(),
            },
        }
    }

    /// A field (as text) drawn in `style` with the defaults of its kind (a density's surface half
    /// transparent, `field_opacity`).
    pub fn field(field: &str, style: FieldStyle) -> RepSpec {
        RepSpec {
            visible: true,
            kind: SpecKind::Field {
                field: field.into(),
                style,
                iso: Iso::default(),
                colors: None,
                opacity: field_opacity(field),
                color_volume: None,
                color_by: None,
                color_range: None,
                color_atoms: None,
            },
        }
    }

    /// The polymer residues `selection` picks in a cartoon `style`, coloured by secondary structure.
    pub fn cartoon(selection: &str, style: CartoonStyle) -> RepSpec {
        RepSpec {
            visible: true,
            kind: SpecKind::Cartoon {
                selection: selection.into(),
                style,
                coloring: CartoonColoring::SecondaryStructure,
                color_by: None,
                color_range: None,
            },
        }
    }

    pub fn hidden(mut self) -> RepSpec {
        self.visible = false;
        self
    }
}

/// Parses `SELECTION:STYLE[:COLOURING]` (`render --rep`): the style and colouring are the last
/// words after colons, so selections may hold colons themselves (`resid 1:10:licorice`). The
/// cartoon styles (`cartoon`, `tube`, `trace`) make a cartoon representation, coloured by `ss`
/// (the default), `chain`, `residue`, `index`, `beta`, or a field at its vertices: `esp` (the potential of
/// the frame's charges) or `volume:N` (a loaded map, 1-based).
pub fn parse_atom_rep(text: &str) -> Result<RepSpec, String> {
    if let Some(spec) = parse_cartoon_rep(text)? {
        return Ok(spec);
    }
    let parts: Vec<&str> = text.rsplitn(3, ':').collect();
    let (selection, style, coloring) = match parts.as_slice() {
        [last, middle, rest] if AtomColoring::parse(last).is_some() && AtomStyle::parse(middle).is_some() => {
            (rest.to_string(), AtomStyle::parse(middle), AtomColoring::parse(last))
        }
        [last, ..] if AtomStyle::parse(last).is_some() => {
            let sel = text.rsplit_once(':').map(|(s, _)| s.to_string()).unwrap_or_default();
            (sel, AtomStyle::parse(last), Some(AtomColoring::Element))
        }
        _ => {
            return Err(format!(
                "{text:?}: expected SELECTION:STYLE[:COLOURING] with STYLE one of lines, licorice, \
                 ball-and-stick, vdw, cpk (COLOURING one of element, residue, chain, charge, beta) or \
                 cartoon, tube, trace (COLOURING one of ss, chain, residue, index, beta, esp, volume:N)"
            ));
        }
    };
    let (Some(style), Some(coloring)) = (style, coloring) else {
        return Err(format!("{text:?}: unknown style or colouring"));
    };
    let selection = selection.trim();
    if selection.is_empty() {
        return Err(format!("{text:?}: the selection is empty"));
    }
    Selection::parse(selection).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(RepSpec {
        visible: true,
        kind: SpecKind::Atoms {
            selection: selection.to_string(),
            style,
            coloring,
            hbonds: HBondCriteria::default(),
        },
    })
}

/// The field a cartoon colouring word names: `esp` or `potential` (the potential of the frame's
/// charges, in the viewer's electrostatic model), `pb` (Poisson-Boltzmann), `volume` or `volume:N`
/// (a loaded volume, 1-based); `None` for other words.
pub fn cartoon_color_field(word: &str) -> Option<FieldChoice> {
    let w = word.trim().to_ascii_lowercase();
    match w.as_str() {
        "esp" | "potential" => Some(FieldChoice::Potential),
        "pb" => Some(FieldChoice::PotentialPb { revision: 0 }),
        "volume" => Some(FieldChoice::Volume(0)),
        _ => match w.strip_prefix("volume:")?.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Some(FieldChoice::Volume(n - 1)),
            _ => None,
        },
    }
}

/// `SELECTION:cartoon|tube|trace[:ss|chain|residue|index|beta|esp|volume:N]` as a cartoon
/// representation; `None` when the text names no cartoon style.
fn parse_cartoon_rep(text: &str) -> Result<Option<RepSpec>, String> {
    // `volume:N` holds a colon of its own: split it off first.
    let (body, volume) = match text.rsplit_once(':') {
        Some((head, n)) if n.trim().parse::<usize>().is_ok() => match head.rsplit_once(':') {
            Some((body, v)) if v.trim().eq_ignore_ascii_case("volume") => (body, Some(&text[body.len() + 1..])),
            _ => (text, None),
        },
        _ => (text, None),
    };
    let colouring = |word: &str| -> Result<(CartoonColoring, Option<String>), String> {
        if let Some(c) = CartoonColoring::parse(word) {
            Ok((c, None))
        } else if cartoon_color_field(word).is_some() {
            Ok((
                CartoonColoring::SecondaryStructure,
                Some(word.trim().to_ascii_lowercase()),
            ))
        } else {
            Err(format!(
                "{text:?}: unknown cartoon colouring {word:?} (ss, chain, residue, index, beta, esp, volume:N)"
            ))
        }
    };
    let parts: Vec<&str> = body.rsplitn(3, ':').collect();
    let (selection, style, (coloring, color_by)) = match (parts.as_slice(), volume) {
        ([last, ..], Some(word)) if CartoonStyle::parse(last).is_some() => (
            body.rsplit_once(':').map_or("", |(s, _)| s),
            CartoonStyle::parse(last),
            colouring(word)?,
        ),
        ([last, middle, rest], None) if CartoonStyle::parse(middle).is_some() => {
            (*rest, CartoonStyle::parse(middle), colouring(last)?)
        }
        ([last, ..], None) if CartoonStyle::parse(last).is_some() => (
            text.rsplit_once(':').map_or("", |(s, _)| s),
            CartoonStyle::parse(last),
            (CartoonColoring::SecondaryStructure, None),
        ),
        _ => return Ok(None),
    };
    let (selection, Some(style)) = (selection.trim(), style) else {
        return Ok(None);
    };
    if selection.is_empty() {
        return Err(format!("{text:?}: the selection is empty"));
    }
    Selection::parse(selection).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(Some(RepSpec {
        visible: true,
        kind: SpecKind::Cartoon {
            selection: selection.to_string(),
            style,
            coloring,
            color_by,
            color_range: None,
        },
    }))
}

/// The atom selection of a molecular-surface field text: `molsurf` (all atoms) or `molsurf:SEL`
/// (`surface` for `molsurf`), `ses` or `ses:SEL` for the solvent-excluded surface; `None` for
/// other fields.
pub fn surface_selection_text(text: &str) -> Option<&str> {
    surface_text(text).map(|(sel, _)| sel)
}

/// The atom selection and the kind of surface of a molecular-surface field text
/// ([`surface_selection_text`]).
pub fn surface_text(text: &str) -> Option<(&str, SurfaceModel)> {
    let t = text.trim();
    let (head, rest) = t.split_once(':').unwrap_or((t, ""));
    let model = if head.eq_ignore_ascii_case("molsurf") || head.eq_ignore_ascii_case("surface") {
        SurfaceModel::default()
    } else if head.eq_ignore_ascii_case("ses") {
        SurfaceModel::EXCLUDED
    } else {
        return None;
    };
    let rest = rest.trim();
    Some((if rest.is_empty() { "all" } else { rest }, model))
}

/// Resolves a field text against `doc`: `homo`, `lumo`, the orbital syntax of `grid` (`mo:homo-1`,
/// `mo:beta:lumo`, `mo:17`), `density`, `spin`, `esp` (a wavefunction's own potential; without a
/// wavefunction the charges'), `potential` (of the charges), `potential:mean:N`, `volume` or
/// `volume:N` (1-based).
/// The opacity a field (as text) starts at: a density's envelope encloses everything else drawn,
/// so it starts half transparent (`DENSITY_OPACITY`); the others opaque.
pub fn field_opacity(field: &str) -> f32 {
    match field.trim().to_ascii_lowercase().as_str() {
        "density" | "rho" | "spin" | "spindensity" | "spin-density" => super::DENSITY_OPACITY,
        _ => 1.0,
    }
}

pub fn parse_field(text: &str, doc: &Document) -> Result<FieldChoice, String> {
    let lower = text.trim().to_ascii_lowercase();
    let field = if let Some(n) = lower.strip_prefix("ils:") {
        match n.parse::<u16>() {
            Ok(n) if n >= 1 => FieldChoice::Ils(n - 1),
            _ => return Err(format!("{text}: expected ils:N with N from 1")),
        }
    } else if lower == "volume" {
        FieldChoice::Volume(0)
    } else if let Some(n) = lower.strip_prefix("volume:") {
        match n.parse::<usize>() {
            Ok(n) if n >= 1 => FieldChoice::Volume(n - 1),
            _ => return Err(format!("{text}: expected volume:N with N from 1")),
        }
    } else if let Some((sel, model)) = surface_text(text) {
        FieldChoice::MolSurf {
            selection: doc
                .surface_index(sel, model)
                .ok_or_else(|| format!("{text}: the surface selection is not registered with the document"))?,
        }
    } else if lower == "esp" && doc.has_field(FieldChoice::WavefunctionPotential) {
        // As in `grid`: esp of a wavefunction is its own potential.
        FieldChoice::WavefunctionPotential
    } else if lower == "potential" || lower == "esp" {
        FieldChoice::Potential
    } else if lower == "pb" {
        FieldChoice::PotentialPb { revision: 0 }
    } else if let Some(n) = lower.strip_prefix("potential:mean:") {
        match n.parse::<u16>() {
            Ok(n) if n >= 1 => super::super::potential::potential_choice(n),
            _ => return Err(format!("{text}: expected potential:mean:N with N from 1")),
        }
    } else {
        let text_mo = match lower.as_str() {
            "homo" | "lumo" => format!("mo:{lower}"),
            _ => lower.clone(),
        };
        let spec: FieldSpec = text_mo.parse().map_err(|e| format!("{e}"))?;
        match spec {
            FieldSpec::Density => FieldChoice::Density,
            FieldSpec::SpinDensity => FieldChoice::SpinDensity,
            FieldSpec::Potential => FieldChoice::Potential,
            FieldSpec::MolSurf | FieldSpec::ExcludedSurface => {
                let model = match spec {
                    FieldSpec::ExcludedSurface => SurfaceModel::EXCLUDED,
                    _ => SurfaceModel::default(),
                };
                FieldChoice::MolSurf {
                    selection: doc
                        .surface_index("all", model)
                        .ok_or_else(|| format!("{text}: the surface selection is not registered with the document"))?,
                }
            }
            FieldSpec::Orbital { squared: true, .. } => {
                return Err(format!("{text}: the viewer draws orbitals, not their squares"));
            }
            FieldSpec::Orbital { .. } => {
                let wf = doc
                    .wavefunction()
                    .ok_or_else(|| format!("{text}: these files have no wavefunction"))?;
                match spec.resolve(Some(wf)).map_err(|e| e.to_string())? {
                    crate::compute::Field::Orbital { spin, index } => FieldChoice::Orbital { spin, index },
                    other => return Err(format!("{text}: not an orbital ({other:?})")),
                }
            }
        }
    };
    if doc.has_field(field) {
        Ok(field)
    } else if doc.n_frames == 0 {
        Err(format!(
            "{text}: the files give no coordinates to compute it at (open a trajectory or a coordinate file with them)"
        ))
    } else {
        Err(format!("{text}: {}", why_missing(field, doc)))
    }
}

/// Why `doc` has no `field`, in the words of what its files lack.
fn why_missing(field: FieldChoice, doc: &Document) -> String {
    let none = |what: &str| format!("these files give no {what}");
    match field {
        FieldChoice::Orbital { .. } | FieldChoice::Density | FieldChoice::WavefunctionPotential => {
            match doc.wavefunction() {
                None => none("wavefunction (open a Molden, fchk, wfx or a log with its orbitals)"),
                Some(_) => "the wavefunction has no such orbital".into(),
            }
        }
        FieldChoice::SpinDensity => match doc.wavefunction() {
            None => none("wavefunction"),
            Some(_) => "a closed-shell (restricted) wavefunction has no spin density".into(),
        },
        FieldChoice::Potential | FieldChoice::PotentialMean { .. } | FieldChoice::PotentialPb { .. } => none(
            "partial charges (open a PQR, prmtop, PSF, mol2 or TPR with them, or a wavefunction for its own potential)",
        ),
        FieldChoice::Volume(i) => match doc.grids.len() {
            0 => none("volume (open a cube, DX, CCP4/MRC or other map)"),
            n => format!("volume {} asked for, the files give {n}", i + 1),
        },
        FieldChoice::Ils(i) => format!(
            "implicit ligand sampling map {} asked for, {} computed",
            i + 1,
            doc.ils_maps.len()
        ),
        FieldChoice::MolSurf { .. } => "the surface selection is not registered with the document".into(),
    }
}

/// The text of `field` for `doc`: orbitals near the frontier relative to the HOMO (`mo:homo-1`,
/// `mo:lumo`), others by number (`mo:17`); beta orbitals with `beta:`.
pub fn field_text(field: FieldChoice, doc: Option<&Document>) -> String {
    match field {
        FieldChoice::Orbital { spin, index } => {
            let prefix = if spin == Spin::Beta { "mo:beta:" } else { "mo:" };
            let homo = doc.and_then(|d| d.wavefunction()).and_then(|w| w.homo(spin));
            let orbital = match homo.map(|h| index as i64 - h as i64) {
                Some(d) if (-4..=0).contains(&d) => OrbitalRef::Homo(d),
                Some(d) if (1..=5).contains(&d) => OrbitalRef::Lumo(d - 1),
                _ => OrbitalRef::Number(index + 1),
            };
            format!("{prefix}{orbital}")
        }
        FieldChoice::Density => "density".into(),
        FieldChoice::SpinDensity => "spin".into(),
        FieldChoice::Volume(i) => format!("volume:{}", i + 1),
        FieldChoice::Potential => "potential".into(),
        FieldChoice::PotentialMean { frames } => format!("potential:mean:{frames}"),
        FieldChoice::WavefunctionPotential => "esp".into(),
        FieldChoice::Ils(i) => format!("ils:{}", u32::from(i) + 1),
        FieldChoice::PotentialPb { .. } => "pb".into(),
        FieldChoice::MolSurf { selection } => {
            let head = match doc.map(|d| d.surface_model(selection)) {
                Some(SurfaceModel::Excluded { .. }) => "ses",
                _ => "molsurf",
            };
            match doc.and_then(|d| d.surface_selections.get(usize::from(selection))) {
                Some(sel) if sel != "all" => format!("{head}:{sel}"),
                _ => head.into(),
            }
        }
    }
}

/// Atom selections the defaults use.
const MACROMOLECULE: &str = "protein or nucleic";
const OTHERS: &str = "not (protein or nucleic or water or ion)";
const SOLVENT: &str = "water or ion";

/// Solvent (water and ions) is drawn as lines up to this many atoms in the system, and hidden above.
pub const SOLVENT_SHOWN_UP_TO_ATOMS: usize = 3000;
/// Systems without protein or nucleic acid are drawn in ball-and-stick up to this many atoms, in
/// lines above.
pub const BALL_AND_STICK_UP_TO_ATOMS: usize = 5000;

/// Whether a structure holds a protein or a nucleic acid.
pub fn is_macromolecular(structure: &Structure) -> bool {
    Selection::parse(MACROMOLECULE).is_ok_and(|s| s.evaluate(structure, None).iter().any(|&b| b))
}

/// The atom representations a new document gets, by its content: small molecules in ball-and-stick;
/// proteins and nucleic acids in licorice, other molecules (ligands, lipids) in ball-and-stick, and
/// water and ions as lines up to [`SOLVENT_SHOWN_UP_TO_ATOMS`] atoms, hidden above.
pub fn default_atom_specs(structure: &Structure) -> Vec<RepSpec> {
    let n = structure.len();
    if !is_macromolecular(structure) {
        let style = if n <= BALL_AND_STICK_UP_TO_ATOMS {
            AtomStyle::BallAndStick
        } else {
            AtomStyle::Lines
        };
        return vec![RepSpec::atoms("all", style)];
    }
    let any = |text: &str| Selection::parse(text).is_ok_and(|s| s.evaluate(structure, None).iter().any(|&b| b));
    let mut specs = vec![RepSpec::atoms(MACROMOLECULE, AtomStyle::Licorice)];
    if any(OTHERS) {
        specs.push(RepSpec::atoms(OTHERS, AtomStyle::BallAndStick));
    }
    if any(SOLVENT) {
        let solvent = RepSpec::atoms(SOLVENT, AtomStyle::Lines);
        specs.push(if n <= SOLVENT_SHOWN_UP_TO_ATOMS {
            solvent
        } else {
            solvent.hidden()
        });
    }
    specs
}

/// The field representation a new document gets: the HOMO of a wavefunction, else the first volume
/// read from the files, else none (potential maps are asked for).
pub fn default_field_specs(doc: &Document) -> Vec<RepSpec> {
    if doc.wavefunction().and_then(|w| w.homo(Spin::Alpha)).is_some() {
        vec![RepSpec::field("mo:homo", FieldStyle::Isosurface)]
    } else if !doc.grids.is_empty() {
        vec![RepSpec::field("volume:1", FieldStyle::Isosurface)]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn atom_reps_from_the_command_line() {
        let r = parse_atom_rep("protein:licorice").unwrap();
        assert_eq!(r, RepSpec::atoms("protein", AtomStyle::Licorice));
        let r = parse_atom_rep("resid 1:10:vdw:chain").unwrap();
        assert_eq!(
            r.kind,
            SpecKind::Atoms {
                selection: "resid 1:10".into(),
                style: AtomStyle::Vdw,
                coloring: AtomColoring::Chain,
                hbonds: HBondCriteria::default(),
            }
        );
        let r = parse_atom_rep("resid 1:10:lines").unwrap();
        assert!(
            matches!(r.kind, SpecKind::Atoms { ref selection, style: AtomStyle::Lines, .. } if selection == "resid 1:10")
        );
        assert!(parse_atom_rep("protein").is_err());
        let r = parse_atom_rep("protein:cartoon").unwrap();
        assert_eq!(r, RepSpec::cartoon("protein", CartoonStyle::Cartoon));
        let r = parse_atom_rep("resid 1:50:tube:chain").unwrap();
        assert_eq!(
            r.kind,
            SpecKind::Cartoon {
                selection: "resid 1:50".into(),
                style: CartoonStyle::Tube,
                coloring: CartoonColoring::Chain,
                color_by: None,
                color_range: None,
            }
        );
        // Coloured by a field at the vertices (`volume:N` holds a colon of its own).
        for (text, sel, style, field) in [
            ("protein:cartoon:esp", "protein", CartoonStyle::Cartoon, "esp"),
            ("resid 1:50:tube:volume:2", "resid 1:50", CartoonStyle::Tube, "volume:2"),
            ("protein:trace:volume", "protein", CartoonStyle::Trace, "volume"),
        ] {
            let r = parse_atom_rep(text).unwrap();
            assert_eq!(
                r.kind,
                SpecKind::Cartoon {
                    selection: sel.into(),
                    style,
                    coloring: CartoonColoring::SecondaryStructure,
                    color_by: Some(field.into()),
                    color_range: None,
                },
                "{text}"
            );
        }
        assert_eq!(cartoon_color_field("volume:2"), Some(FieldChoice::Volume(1)));
        assert_eq!(cartoon_color_field("ESP"), Some(FieldChoice::Potential));
        assert!(parse_atom_rep("protein:cartoon:volume:0").is_err());
        assert!(parse_atom_rep("protein:cartoon:density").is_err());
        assert!(parse_atom_rep(":cartoon:esp").is_err());
        assert!(parse_atom_rep("protein:trace:element").is_err());
        assert!(parse_atom_rep(":cartoon").is_err());
        assert!(parse_atom_rep(":licorice").is_err());
        let e = parse_atom_rep("resid 1 to (:cpk").unwrap_err();
        assert!(e.contains("column"), "{e}");
    }

    #[test]
    fn specs_round_trip_through_ron() {
        let specs = vec![
            RepSpec::atoms("protein", AtomStyle::Licorice),
            RepSpec::field("mo:homo", FieldStyle::Slice(Default::default())).hidden(),
            RepSpec::cartoon("protein or nucleic", CartoonStyle::Trace),
        ];
        let text = ron::to_string(&specs).unwrap();
        let back: Vec<RepSpec> = ron::from_str(&text).unwrap();
        assert_eq!(back, specs);
        // Fields left out take their defaults.
        let short: RepSpec = ron::from_str("(kind: Field(field: \"mo:homo\"))").unwrap();
        assert_eq!(short, RepSpec::field("mo:homo", FieldStyle::Isosurface));
        // A density's envelope starts half transparent.
        match RepSpec::field("density", FieldStyle::Isosurface).kind {
            SpecKind::Field { opacity, .. } => assert_eq!(opacity, super::super::DENSITY_OPACITY),
            _ => unreachable!(),
        }
    }
}
