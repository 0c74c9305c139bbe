//! The one resolver of field requests: a system (structure, frame, wavefunction), a field choice
//! ([`FieldRequest`]) and a lattice choice ([`LatticeChoice`]) become a [`FieldJob`].
//!
//! Owns [`resolve`], [`Resolved::job`] and [`lattice`]: where the lattice of each kind of field
//! is placed (orbitals on a box padded by 4 A, molecular surfaces padded by their Gaussians' reach,
//! per-frame potential maps padded by 8 A or on the periodic box the atoms fill, or spacing and
//! padding as the command line gives them), which input each field takes (the wavefunction, point
//! charges planned for their summation method, atoms with radii), and the errors that name what is
//! missing. The command line (`cli::grid_source`, used by `grid`, `points`, `ions`, `surface`) and
//! the viewer (`app::document`) both call it; where the job then runs is `compute::placement`'s.

use crate::compute::esp::{self, Boundary, DeferredPlan, EspMethod};
use crate::compute::molsurf::{MolSurfAtoms, SurfaceModel};
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges};
use crate::model::field::{FieldSpec, FieldSpecError, LatticeError, LatticeSpec};
use crate::model::units::bohr_from_angstrom3;
use crate::model::{Frame, Lattice, Structure, UnitCell, Wavefunction};
use std::sync::Arc;

/// What a request is resolved against: one frame of one system.
#[derive(Clone, Copy, Debug)]
pub struct SystemView<'a> {
    pub structure: &'a Structure,
    /// The frame's coordinates; `None` when the files hold no coordinates.
    pub frame: Option<&'a Frame>,
    /// The frame's wavefunction, if there is one.
    pub wavefunction: Option<&'a Arc<Wavefunction>>,
    /// The loaders' warnings: a QM log that says why it holds no wavefunction gives that advice as
    /// the error of a wavefunction field.
    pub warnings: &'a [String],
}

/// A field to compute.
#[derive(Clone, Debug)]
pub enum FieldRequest {
    /// A field as users name it (`mo:homo`, `density`, `spin`, `esp`, `molsurf`): `esp` is the
    /// wavefunction's own potential when there is a wavefunction, else the direct sum over the
    /// structure's partial charges; `molsurf` is the surface of every atom.
    Named(FieldSpec),
    /// A wavefunction field already resolved (orbital indices checked).
    Wavefunction(Field),
    /// The potential of `charges` (the frame's, or a mean over frames) summed by `method` with
    /// open boundaries; `deferred`: the plan is built by the first worker that takes the job (the
    /// viewer's thread must not compute long-range lattices).
    Charges {
        charges: Arc<PointCharges>,
        method: EspMethod,
        deferred: bool,
    },
    /// The molecular-surface density of the atoms `selected` picks (all when `None`).
    MolSurf {
        selected: Option<Vec<bool>>,
        model: SurfaceModel,
    },
}

/// Why a request cannot be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error(transparent)]
    Spec(#[from] FieldSpecError),
    #[error("{what} needs a wavefunction: {why}")]
    NoWavefunction { what: String, why: String },
    #[error("{what} needs a wavefunction (molden, fchk, wfn or wfx file); none was given")]
    NoWavefunctionFile { what: String },
    #[error("esp needs partial charges: give a file that carries them (pqr, psf, mol2 ...)")]
    NoCharges,
    #[error("{0} needs the coordinates of a frame; the files hold none")]
    NoFrame(String),
    #[error("the structure has {charges} charges but the frame has {atoms} atoms")]
    AtomCount { charges: usize, atoms: usize },
    #[error("molsurf: {0}")]
    MolSurf(String),
    #[error("molsurf: no selected atom has a positive radius")]
    NoRadii,
    #[error(transparent)]
    Lattice(#[from] LatticeError),
    #[error(transparent)]
    Compute(#[from] ComputeError),
}

/// How the lattice of a job is placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LatticeChoice {
    /// As the command line gives it: spacing and padding around the atoms (the padding raised to
    /// what the field needs, e.g. a molecular surface's reach), or an explicit lattice.
    Spec(LatticeSpec),
    /// Exactly this lattice (`--like`, the viewer's potential lattice fixed for a trajectory).
    Fixed(Lattice),
    /// The viewer's orbitals: the atoms' box padded by 4 A, at most this many points along its
    /// longest axis (clamped to 16..=512), at least 0.05 A apart.
    OrbitalPoints(u32),
    /// The viewer's molecular surfaces: the atoms' box padded by the reach of their widest
    /// Gaussian, at most this many points along its longest axis, at least 0.25 A apart.
    SurfacePoints(u32),
    /// The viewer's per-frame potential maps: the atoms' box padded by 8 A at this spacing, or,
    /// when the atoms fill an orthorhombic periodic box (a solvated system), the box itself.
    PotentialMap { spacing_angstrom: f64 },
}

/// A resolved field: its kind and inputs, and the atoms its lattice is placed around.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub field: Field,
    input: Input,
    /// Where the lattice goes: the atoms of the field (Angstrom).
    pub positions_angstrom: Vec<[f64; 3]>,
    /// Padding the field needs around its atoms at least (a molecular surface's reach), Angstrom.
    pub min_padding_angstrom: f64,
}

#[derive(Clone, Debug)]
enum Input {
    Ready(FieldInput),
    Charges {
        charges: Arc<PointCharges>,
        method: EspMethod,
        deferred: bool,
    },
}

impl Resolved {
    /// The input once the lattice is known: potentials other than the plain direct sum are
    /// planned for their lattice.
    pub fn input_on(&self, lattice: &Lattice) -> Result<FieldInput, RequestError> {
        Ok(match &self.input {
            Input::Ready(input) => input.clone(),
            Input::Charges {
                charges,
                method,
                deferred: true,
            } => DeferredPlan::field_input(Arc::clone(charges), *method, Boundary::Open, lattice)?,
            Input::Charges {
                charges,
                method,
                deferred: false,
            } => esp::field_input(Arc::clone(charges), *method, Boundary::Open, lattice)?,
        })
    }

    /// The input as it stands, before any lattice: `None` for potentials that need a plan.
    pub fn input(&self) -> Option<&FieldInput> {
        match &self.input {
            Input::Ready(input) => Some(input),
            Input::Charges { .. } => None,
        }
    }

    /// The job on the lattice `choice` places around the field's atoms.
    pub fn job(&self, choice: &LatticeChoice, cell: Option<&UnitCell>) -> Result<FieldJob, RequestError> {
        let lattice = self.lattice(choice, cell)?;
        Ok(FieldJob {
            field: self.field.clone(),
            input: self.input_on(&lattice)?,
            lattice,
        })
    }

    /// The lattice `choice` places around the field's atoms.
    pub fn lattice(&self, choice: &LatticeChoice, cell: Option<&UnitCell>) -> Result<Lattice, RequestError> {
        let choice = match *choice {
            LatticeChoice::Spec(LatticeSpec::AroundAtoms {
                spacing_angstrom,
                padding_angstrom,
            }) => LatticeChoice::Spec(LatticeSpec::AroundAtoms {
                spacing_angstrom,
                padding_angstrom: padding_angstrom.max(self.min_padding_angstrom),
            }),
            LatticeChoice::SurfacePoints(points) => {
                return surface_lattice(&self.positions_angstrom, self.min_padding_angstrom, points);
            }
            other => other,
        };
        lattice(&choice, &self.positions_angstrom, cell)
    }
}

/// Resolves `request` against `view`.
pub fn resolve(view: &SystemView<'_>, request: &FieldRequest) -> Result<Resolved, RequestError> {
    match request {
        FieldRequest::Named(FieldSpec::MolSurf) => resolve(
            view,
            &FieldRequest::MolSurf {
                selected: None,
                model: SurfaceModel::default(),
            },
        ),
        FieldRequest::Named(FieldSpec::ExcludedSurface) => resolve(
            view,
            &FieldRequest::MolSurf {
                selected: None,
                model: SurfaceModel::EXCLUDED,
            },
        ),
        FieldRequest::Named(spec) if spec.needs_charges() && view.wavefunction.is_some() => {
            resolve(view, &FieldRequest::Wavefunction(Field::QmPotential))
        }
        FieldRequest::Named(spec) if spec.needs_charges() => {
            let charges = frame_charges(view)?;
            resolve(
                view,
                &FieldRequest::Charges {
                    charges: Arc::new(charges),
                    method: EspMethod::Direct,
                    deferred: false,
                },
            )
        }
        FieldRequest::Named(spec) => {
            let wf = wavefunction(view, &spec.to_string())?;
            let field = spec.resolve(Some(wf))?;
            resolve(view, &FieldRequest::Wavefunction(field))
        }
        FieldRequest::Wavefunction(field) => {
            let wf = wavefunction(view, &field_name(field))?;
            Ok(Resolved {
                field: field.clone(),
                positions_angstrom: wf
                    .atoms
                    .iter()
                    .map(|a| crate::model::units::angstrom_from_bohr3(a.position_bohr))
                    .collect(),
                input: Input::Ready(FieldInput::Wavefunction(Arc::clone(wf))),
                min_padding_angstrom: 0.0,
            })
        }
        FieldRequest::Charges {
            charges,
            method,
            deferred,
        } => Ok(Resolved {
            field: Field::Potential,
            positions_angstrom: charges
                .positions_bohr
                .iter()
                .map(|&p| crate::model::units::angstrom_from_bohr3(p))
                .collect(),
            input: match (method, deferred) {
                (EspMethod::Direct, _) => Input::Ready(esp::field_input(
                    Arc::clone(charges),
                    EspMethod::Direct,
                    Boundary::Open,
                    &Lattice::axis_aligned([0.0; 3], 1.0, [1, 1, 1]),
                )?),
                _ => Input::Charges {
                    charges: Arc::clone(charges),
                    method: *method,
                    deferred: *deferred,
                },
            },
            min_padding_angstrom: 0.0,
        }),
        FieldRequest::MolSurf { selected, model } => {
            let frame = view.frame.ok_or_else(|| RequestError::NoFrame("molsurf".into()))?;
            let atoms = MolSurfAtoms::from_frame(view.structure, frame, selected.as_deref(), *model)
                .map_err(|e| RequestError::MolSurf(e.to_string()))?;
            if !atoms.has_radii() {
                return Err(RequestError::NoRadii);
            }
            Ok(Resolved {
                field: Field::MolSurf,
                positions_angstrom: atoms.positions_angstrom(),
                min_padding_angstrom: atoms.padding_angstrom(),
                input: Input::Ready(FieldInput::Spheres(Arc::new(atoms))),
            })
        }
    }
}

/// `request` on the lattice `choice` places: [`resolve`] then [`Resolved::job`].
pub fn job(view: &SystemView<'_>, request: &FieldRequest, choice: &LatticeChoice) -> Result<FieldJob, RequestError> {
    resolve(view, request)?.job(choice, view.frame.and_then(|f| f.cell.as_ref()))
}

fn field_name(field: &Field) -> String {
    match field {
        Field::Orbital { .. } | Field::OrbitalSquared { .. } => "an orbital".into(),
        Field::Density => "density".into(),
        Field::SpinDensity => "spin".into(),
        _ => "esp".into(),
    }
}

fn wavefunction<'a>(view: &SystemView<'a>, what: &str) -> Result<&'a Arc<Wavefunction>, RequestError> {
    if let Some(wf) = view.wavefunction {
        return Ok(wf);
    }
    // A QM log that says why it holds no wavefunction (orbitals printed without the basis, or no
    // orbitals at all) gives its advice, naming the keyword to add, as the error.
    if let Some(why) = view
        .warnings
        .iter()
        .find(|w| w.contains("no wavefunction can be built") || w.contains("no molecular orbitals in this log"))
    {
        return Err(RequestError::NoWavefunction {
            what: what.to_string(),
            why: why.clone(),
        });
    }
    Err(RequestError::NoWavefunctionFile { what: what.to_string() })
}

/// The structure's partial charges at the frame's positions.
pub fn frame_charges(view: &SystemView<'_>) -> Result<PointCharges, RequestError> {
    let charges = view.structure.charges_e.as_ref().ok_or(RequestError::NoCharges)?;
    let positions: &[[f32; 3]] = view.frame.map_or(&[], |f| f.positions_angstrom.as_slice());
    if positions.len() != charges.len() {
        return Err(RequestError::AtomCount {
            charges: charges.len(),
            atoms: positions.len(),
        });
    }
    Ok(PointCharges {
        positions_bohr: positions
            .iter()
            .map(|p| bohr_from_angstrom3(p.map(f64::from)))
            .collect(),
        charges_e: charges.iter().map(|&q| f64::from(q)).collect(),
    })
}

/// The box of the finite positions, `None` without one.
fn bounds(positions_angstrom: &[[f64; 3]]) -> Option<([f64; 3], [f64; 3])> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in positions_angstrom.iter().filter(|p| p.iter().all(|x| x.is_finite())) {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    lo[0].is_finite().then_some((lo, hi))
}

/// The lattice `choice` places around atoms at `positions_angstrom` (`cell`: the frame's periodic
/// box, for [`LatticeChoice::PotentialMap`]).
pub fn lattice(
    choice: &LatticeChoice,
    positions_angstrom: &[[f64; 3]],
    cell: Option<&UnitCell>,
) -> Result<Lattice, RequestError> {
    match *choice {
        LatticeChoice::Spec(spec) => Ok(spec.build(positions_angstrom)?),
        LatticeChoice::Fixed(l) => Ok(l),
        LatticeChoice::OrbitalPoints(points) => {
            let (lo, hi) = bounds(positions_angstrom).ok_or(LatticeError::NoAtoms)?;
            // In f32 as the viewer's coordinates are.
            let (lo, hi) = (lo.map(|x| x as f32), hi.map(|x| x as f32));
            let span = (0..3).map(|k| hi[k] - lo[k] + 8.0).fold(0.0f32, f32::max);
            let points = points.clamp(16, 512) as f32;
            let spacing = (span / (points - 1.0)).max(0.05);
            Ok(Lattice::around_box(
                lo.map(f64::from),
                hi.map(f64::from),
                4.0,
                f64::from(spacing),
            ))
        }
        LatticeChoice::SurfacePoints(points) => surface_lattice(positions_angstrom, 0.0, points),
        LatticeChoice::PotentialMap { spacing_angstrom } => {
            let (lo, hi) = bounds(positions_angstrom).ok_or(LatticeError::NoAtoms)?;
            let fills_box = cell
                .filter(|c| c.is_valid() && c.is_orthorhombic())
                .is_some_and(|c| (0..3).all(|k| f64::from(hi[k] as f32 - lo[k] as f32) >= 0.8 * c.lengths_angstrom[k]));
            let pad = if fills_box { 0.0 } else { 8.0 };
            Ok(Lattice::around_box(lo, hi, pad, spacing_angstrom))
        }
    }
}

/// A molecular surface's lattice: the box padded by `pad_angstrom`, at most `points` points along
/// its longest axis, at least 0.25 A apart.
fn surface_lattice(positions_angstrom: &[[f64; 3]], pad_angstrom: f64, points: u32) -> Result<Lattice, RequestError> {
    // The positions pass through f32 as the viewer's coordinates do.
    let (lo, hi) = bounds(positions_angstrom).ok_or(LatticeError::NoAtoms)?;
    let (lo, hi) = (lo.map(|x| f64::from(x as f32)), hi.map(|x| f64::from(x as f32)));
    let span = (0..3)
        .map(|k| hi[k] - lo[k] + 2.0 * pad_angstrom)
        .fold(0.0f64, f64::max);
    let points = f64::from(points.clamp(16, 512));
    let spacing = (span / (points - 1.0)).max(0.25);
    Ok(Lattice::around_box(lo, hi, pad_angstrom, spacing))
}

/// Positions in f32 (the viewer's frames) as the resolver takes them.
pub fn positions_f64(positions_angstrom: &[[f32; 3]]) -> Vec<[f64; 3]> {
    positions_angstrom.iter().map(|p| p.map(f64::from)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Element;

    fn view_of<'a>(s: &'a Structure, frame: &'a Frame) -> SystemView<'a> {
        SystemView {
            structure: s,
            frame: Some(frame),
            wavefunction: None,
            warnings: &[],
        }
    }

    fn two_ions() -> (Structure, Frame) {
        let s = Structure {
            elements: vec![Element::from_number(11).unwrap(), Element::from_number(17).unwrap()],
            charges_e: Some(vec![1.0, -1.0]),
            ..Structure::default()
        };
        let frame = Frame {
            positions_angstrom: vec![[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]],
            ..Frame::default()
        };
        (s, frame)
    }

    #[test]
    fn esp_without_a_wavefunction_is_the_direct_sum_of_the_charges() {
        let (s, frame) = two_ions();
        let view = view_of(&s, &frame);
        let spec = LatticeSpec::AroundAtoms {
            spacing_angstrom: 0.5,
            padding_angstrom: 2.0,
        };
        let job = job(
            &view,
            &FieldRequest::Named("esp".parse().unwrap()),
            &LatticeChoice::Spec(spec),
        )
        .unwrap();
        assert_eq!(job.field, Field::Potential);
        let FieldInput::Charges(q) = &job.input else {
            panic!("{:?}", job.input)
        };
        assert_eq!(q.charges_e, vec![1.0, -1.0]);
        // 3 A + 2 x 2 A padding at 0.5 A: 15 points along x, 9 along y and z.
        assert_eq!(job.lattice.dims, [15, 9, 9]);
        // The potential at the midpoint is zero by symmetry (an independent check of the input).
        let v = crate::compute::cpu::evaluate_points(&job.field, &job.input, &[bohr_from_angstrom3([1.5, 0.0, 0.0])])
            .unwrap();
        assert!(v[0].abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn missing_inputs_are_named() {
        let (s, frame) = two_ions();
        let view = view_of(&s, &frame);
        let e = resolve(&view, &FieldRequest::Named("mo:homo".parse().unwrap())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mo:homo needs a wavefunction (molden, fchk, wfn or wfx file); none was given"
        );
        let mut s = s.clone();
        s.charges_e = None;
        let view = view_of(&s, &frame);
        let e = resolve(&view, &FieldRequest::Named("esp".parse().unwrap())).unwrap_err();
        assert_eq!(e, RequestError::NoCharges);
    }

    #[test]
    fn potential_maps_take_the_box_the_atoms_fill() {
        let positions = [[0.0, 0.0, 0.0], [9.5, 9.5, 9.5]];
        let cell = UnitCell::orthorhombic([10.0; 3]);
        let filled = lattice(
            &LatticeChoice::PotentialMap { spacing_angstrom: 1.0 },
            &positions,
            Some(&cell),
        )
        .unwrap();
        let open = lattice(&LatticeChoice::PotentialMap { spacing_angstrom: 1.0 }, &positions, None).unwrap();
        // 9.5 A at 1 A: 11 points; with 8 A on each side: 27.
        assert_eq!(filled.dims[0], 11);
        assert_eq!(open.dims[0], 27);
    }
}
