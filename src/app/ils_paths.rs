//! Pathways of a gas probe on a ligand free-energy map (implicit ligand sampling) in the viewer:
//! from the most favoured lattice point near a picked atom to bulk (the map's faces) or to an end
//! marked before, the lowest-barrier path of `analysis::ils_path`, listed with its barrier and
//! length and drawn as a tube coloured by the free energy along it.
//!
//! Owns [`IlsPathView`] (a path as the map keeps it, `IlsMapState::paths`), the start-point rule
//! ([`favoured_point_near`]), the tube ([`path_cylinders`]) and the commands that find, mark and
//! clear paths. Called by `app::apply` (commands), the atom instance rebuild (`app::reps::update`)
//! and the field panel (`ui::ils`).

use crate::app::fields::FieldChoice;
use crate::model::Grid3;
use crate::model::units::BOHR_PER_ANGSTROM;
use std::sync::Arc;

/// A lowest-barrier pathway on a map.
#[derive(Clone, Debug)]
pub struct IlsPathView {
    /// Where it starts: the most favoured lattice point near the picked atom, Angstrom.
    pub from_angstrom: [f64; 3],
    /// Where it ends; `None`: bulk (the map's outer faces).
    pub to_angstrom: Option<[f64; 3]>,
    /// The atom picked to start it (1-based in words).
    pub from_atom: usize,
    pub path: crate::analysis::ils_path::IlsPath,
    /// The frames the map held when it was found.
    pub frames: usize,
    /// Its barrier is the map's cap: no sampled path joins its ends
    /// (`analysis::ils_path::barrier_is_cap`).
    pub capped: bool,
}

impl IlsPathView {
    /// "to bulk: barrier 2.31 kT, 14.2 Å" in `unit`.
    pub fn describe(&self, unit: &crate::app::values::FieldUnit) -> String {
        let to = match self.to_angstrom {
            None => "to bulk".to_string(),
            Some(p) => format!("to ({:.1}, {:.1}, {:.1}) Å", p[0], p[1], p[2]),
        };
        let cap = if self.capped {
            " (the map's cap on blocked points: no sampled path, not a free energy)"
        } else {
            ""
        };
        format!(
            "from atom {} {to}: barrier {}{cap}, length {:.1} Å ({} frames)",
            self.from_atom + 1,
            unit.format(self.path.barrier as f32),
            self.path.length_angstrom,
            self.frames
        )
    }
}

/// Radius around a picked atom in which a path's start (or end) is the most favoured lattice
/// point, Angstrom (an atom's own centre lies under the map's cap).
pub const PICK_RADIUS_ANGSTROM: f64 = 4.0;

/// The lattice point of `grid` within `radius_angstrom` of `p` with the lowest value.
pub fn favoured_point_near(grid: &Grid3, p: [f64; 3], radius_angstrom: f64) -> Option<[f64; 3]> {
    let l = &grid.lattice;
    if !l.is_axis_aligned() {
        return None;
    }
    let h = [0, 1, 2].map(|k| l.steps_bohr[k][k] / BOHR_PER_ANGSTROM);
    let o = l.origin_angstrom();
    let mut best: Option<(f32, [f64; 3])> = None;
    let range = |k: usize| {
        let lo = ((p[k] - radius_angstrom - o[k]) / h[k]).floor().max(0.0) as usize;
        let hi = (((p[k] + radius_angstrom - o[k]) / h[k]).ceil().max(0.0) as usize).min(l.dims[k].saturating_sub(1));
        lo..=hi
    };
    for k in range(2) {
        for j in range(1) {
            for i in range(0) {
                let q = [o[0] + i as f64 * h[0], o[1] + j as f64 * h[1], o[2] + k as f64 * h[2]];
                let d2: f64 = (0..3).map(|a| (q[a] - p[a]).powi(2)).sum();
                if d2 > radius_angstrom * radius_angstrom {
                    continue;
                }
                let Some(&v) = grid.values.get(l.index(i, j, k)) else {
                    continue;
                };
                if best.is_none_or(|(b, _)| v < b) {
                    best = Some((v, q));
                }
            }
        }
    }
    best.map(|(_, q)| q)
}

/// Radius of a pathway's tube, Angstrom.
pub const PATH_RADIUS_ANGSTROM: f32 = 0.35;

impl crate::app::state::AppState {
    /// Atom `atom` (0-based; `None`: the picked atom), its position at the current frame and map
    /// `map`'s grid, or why not.
    fn pick_on_map(&self, map: u16, atom: Option<usize>) -> Result<(usize, [f64; 3], Arc<Grid3>), String> {
        let doc = self.document().ok_or("open a trajectory first")?;
        let m = doc.ils_maps.get(usize::from(map)).ok_or_else(|| {
            format!(
                "no map ils:{} (the document has {})",
                usize::from(map) + 1,
                doc.ils_maps.len()
            )
        })?;
        let grid = m.grid.clone().ok_or("the map has no frame yet")?;
        let atom = match atom {
            Some(a) => a,
            None => self
                .view
                .pick
                .as_ref()
                .map(|p| p.atom)
                .ok_or("pick an atom in the view first (click it)")?,
        };
        let p = doc
            .frame
            .positions_angstrom
            .get(atom)
            .ok_or_else(|| format!("atom {} is not in the frame", atom + 1))?;
        Ok((atom, p.map(f64::from), grid))
    }

    /// Finds the lowest-barrier pathway on map `map` from the most favoured lattice point near
    /// `atom` (0-based; `None`: the picked atom) to bulk, or (`to_end`) to the end marked before.
    pub fn ils_path(&mut self, map: u16, atom: Option<usize>, to_end: bool) {
        let result = (|| -> Result<IlsPathView, String> {
            let (atom, p, grid) = self.pick_on_map(map, atom)?;
            let from = favoured_point_near(&grid, p, PICK_RADIUS_ANGSTROM)
                .ok_or_else(|| format!("atom {} lies outside the map", atom + 1))?;
            let doc = self.document().ok_or("open a trajectory first")?;
            let m = doc.ils_maps.get(usize::from(map)).ok_or("no such map")?;
            let to = if to_end {
                Some(m.path_end_angstrom.ok_or("mark the path's end first")?)
            } else {
                None
            };
            let path = crate::analysis::ils_path::lowest_barrier_path(&grid, from, to).map_err(|e| e.to_string())?;
            let capped = crate::analysis::ils_path::barrier_is_cap(&grid, &path);
            Ok(IlsPathView {
                capped,
                from_angstrom: from,
                to_angstrom: to,
                from_atom: atom,
                path,
                frames: m.frames_done,
            })
        })();
        match result {
            Ok(view) => {
                let unit = crate::app::values::FieldUnit::of(FieldChoice::Ils(map), self.settings.potential_unit);
                self.panels.status = format!("ILS pathway {}", view.describe(&unit));
                if let Some(m) = self
                    .doc
                    .document
                    .as_mut()
                    .and_then(|d| d.ils_maps.get_mut(usize::from(map)))
                {
                    m.paths.push(view);
                }
                self.rebuild_atoms();
            }
            Err(e) => self.error(format!("ILS pathway: {e}")),
        }
    }

    /// Marks the most favoured lattice point near `atom` (0-based; `None`: the picked atom) as the
    /// end of the next path between two points.
    pub fn ils_mark_path_end(&mut self, map: u16, atom: Option<usize>) {
        let result = self.pick_on_map(map, atom).and_then(|(atom, p, grid)| {
            favoured_point_near(&grid, p, PICK_RADIUS_ANGSTROM)
                .ok_or_else(|| format!("atom {} lies outside the map", atom + 1))
        });
        match result {
            Ok(q) => {
                if let Some(m) = self
                    .doc
                    .document
                    .as_mut()
                    .and_then(|d| d.ils_maps.get_mut(usize::from(map)))
                {
                    m.path_end_angstrom = Some(q);
                }
                self.panels.status = format!("ILS pathway end at ({:.1}, {:.1}, {:.1}) Å", q[0], q[1], q[2]);
            }
            Err(e) => self.error(format!("ILS pathway: {e}")),
        }
    }

    /// Removes map `map`'s pathways.
    pub fn ils_clear_paths(&mut self, map: u16) {
        if let Some(m) = self
            .doc
            .document
            .as_mut()
            .and_then(|d| d.ils_maps.get_mut(usize::from(map)))
        {
            m.paths.clear();
            m.path_end_angstrom = None;
        }
        self.rebuild_atoms();
    }

    /// The tubes of the pathways of the maps shown by a visible representation: one cylinder per
    /// step, each end coloured by the free energy there (the colormap over the path's lowest value
    /// to its barrier).
    pub fn ils_path_cylinders(&self) -> Vec<crate::render::gpu::CylinderInstance> {
        let mut out = Vec::new();
        let Some(doc) = self.document() else {
            return out;
        };
        let shown: Vec<u16> = self
            .doc
            .reps
            .list
            .iter()
            .filter(|r| r.visible)
            .filter_map(|r| match &r.kind {
                crate::app::reps::RepKind::Field(f) => match f.field {
                    FieldChoice::Ils(m) => Some(m),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let colormap = self.settings.colormap;
        for (i, m) in doc.ils_maps.iter().enumerate() {
            if !shown.iter().any(|&s| usize::from(s) == i) {
                continue;
            }
            for v in &m.paths {
                out.extend(path_cylinders(&v.path, colormap));
            }
        }
        out
    }
}

/// The tube of `path`: one cylinder per step, each end coloured by `colormap` over the path's
/// lowest value to its barrier.
pub fn path_cylinders(
    path: &crate::analysis::ils_path::IlsPath,
    colormap: crate::render::colormap::Colormap,
) -> Vec<crate::render::gpu::CylinderInstance> {
    let lo = path.values.iter().copied().fold(f64::INFINITY, f64::min);
    let span = (path.barrier - lo).max(1e-6);
    let color = |v: f64| crate::render::gpu::pack_rgba(colormap.sample(((v - lo) / span) as f32));
    path.points_angstrom
        .windows(2)
        .zip(path.values.windows(2))
        .map(|(p, v)| crate::render::gpu::CylinderInstance {
            a_angstrom: p[0].map(|x| x as f32),
            b_angstrom: p[1].map(|x| x as f32),
            radius_angstrom: PATH_RADIUS_ANGSTROM,
            color_a: color(v[0]),
            color_b: color(v[1]),
        })
        .collect()
}
