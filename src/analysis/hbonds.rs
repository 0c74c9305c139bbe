//! Hydrogen bonds in one frame, by geometry: what VMD's HBonds drawing method, ChimeraX's `hbonds`
//! and MDAnalysis's `HydrogenBondAnalysis` find.
//!
//! Two rules, chosen by the atoms given:
//! - **With hydrogens** (a nitrogen or oxygen of the selection carries a bonded hydrogen of the
//!   selection): donor D (N or O) – hydrogen H – acceptor A (N or O, any but D), with D…A at most
//!   [`HBondCriteria::distance_angstrom`] (3.0 Å) and the angle D-H…A at least
//!   [`HBondCriteria::angle_degrees`] (150°). These are MDAnalysis's defaults and its rule
//!   (`d_a_cutoff`, `d_h_a_angle_cutoff`, donors and acceptors `element N O`); VMD's HBonds method
//!   takes 3.0 Å and 20° off linear (160°).
//! - **Without hydrogens** (a crystal structure): a donor and an acceptor heavy atom at most
//!   [`HBondCriteria::heavy_distance_angstrom`] (3.5 Å) apart, at least four bonds apart along the
//!   covalent bonds (so a residue's own N and O never count), the roles taken from the atom names of
//!   amino acids (backbone N but proline's a donor, O an acceptor, side chains as their groups; see
//!   [`heavy_role`]) and water, every other N or O both. A pair that could bond either way (two
//!   waters) is one bond.
//!
//! Atoms of two different alternate locations (PDB altloc A and B) never bond. Periodic cells are read with the minimum image. The search is a cell list: linear in the atoms.

use crate::model::cell::UnitCell;
use crate::model::select::MinImage;
use crate::model::{Element, Structure};

/// The geometric criteria of a hydrogen bond.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HBondCriteria {
    /// Largest donor–acceptor distance with hydrogens (Å).
    pub distance_angstrom: f32,
    /// Smallest angle donor–hydrogen…acceptor (degrees; 180 is linear).
    pub angle_degrees: f32,
    /// Largest donor–acceptor distance when the atoms have no hydrogens (Å).
    pub heavy_distance_angstrom: f32,
}

impl Default for HBondCriteria {
    fn default() -> Self {
        HBondCriteria {
            distance_angstrom: 3.0,
            angle_degrees: 150.0,
            heavy_distance_angstrom: 3.5,
        }
    }
}

impl HBondCriteria {
    /// The criteria in words, for legends and notes ("D…A ≤ 3.0 Å, D-H…A ≥ 150°").
    pub fn describe(&self, with_hydrogens: bool) -> String {
        if with_hydrogens {
            format!(
                "D…A ≤ {:.1} Å, D-H…A ≥ {:.0}°",
                self.distance_angstrom, self.angle_degrees
            )
        } else {
            format!("no hydrogens: N/O pairs ≤ {:.1} Å", self.heavy_distance_angstrom)
        }
    }

    /// Why the criteria cannot be used, in words (a distance that is not positive and finite, an
    /// angle outside 90..180 degrees).
    pub fn check(&self) -> Result<(), String> {
        for (what, d) in [
            ("distance", self.distance_angstrom),
            ("distance without hydrogens", self.heavy_distance_angstrom),
        ] {
            if !(d.is_finite() && d > 0.0 && d <= 10.0) {
                return Err(format!(
                    "a hydrogen-bond {what} of {d} Å: give one above 0 and at most 10 Å"
                ));
            }
        }
        let a = self.angle_degrees;
        if !(a.is_finite() && (90.0..=180.0).contains(&a)) {
            return Err(format!("a hydrogen-bond angle of {a}°: give one from 90 to 180°"));
        }
        Ok(())
    }
}

/// One hydrogen bond: atom indices into the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HBond {
    pub donor: u32,
    /// The hydrogen, when the rule with hydrogens found the bond.
    pub hydrogen: Option<u32>,
    pub acceptor: u32,
}

/// The hydrogen bonds of one frame among the atoms flagged in `picked`, and whether the rule with
/// hydrogens was used.
pub struct HBondSet {
    /// Sorted by donor, hydrogen, acceptor.
    pub bonds: Vec<HBond>,
    pub with_hydrogens: bool,
}

/// A heavy atom's part in hydrogen bonds when the structure has no hydrogens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Donor,
    Acceptor,
    Both,
}

impl Role {
    fn donates(self) -> bool {
        matches!(self, Role::Donor | Role::Both)
    }
    fn accepts(self) -> bool {
        matches!(self, Role::Acceptor | Role::Both)
    }
}

/// The role of a nitrogen or oxygen by residue and atom name, for structures without hydrogens:
/// amino acids by their groups (backbone N a donor except in proline, whose N is neither; carbonyl and
/// carboxylate oxygens acceptors; hydroxyls, histidine's ring nitrogens and water both; amide, amine
/// and guanidinium nitrogens and tryptophan's NE1 donors); any other N or O both. `None`: the atom
/// takes no part.
pub fn heavy_role(element: Element, resname: &str, name: &str) -> Option<Role> {
    if element != Element(7) && element != Element(8) {
        return None;
    }
    let role = match (resname, name) {
        ("PRO", "N") => return None,
        (_, "N") if is_amino_acid(resname) => Role::Donor,
        (_, "O" | "OXT" | "OT1" | "OT2" | "OC1" | "OC2" | "O1" | "O2") if is_amino_acid(resname) => Role::Acceptor,
        ("ASP" | "ASH", "OD1" | "OD2") | ("GLU" | "GLH", "OE1" | "OE2") => Role::Acceptor,
        ("ASN", "OD1") | ("GLN", "OE1") => Role::Acceptor,
        ("ASN", "ND2") | ("GLN", "NE2") | ("LYS", "NZ") | ("TRP", "NE1") => Role::Donor,
        ("ARG", "NE" | "NH1" | "NH2") => Role::Donor,
        _ => Role::Both,
    };
    Some(role)
}

fn is_amino_acid(resname: &str) -> bool {
    crate::model::select::is_protein_resname(resname)
}

/// The hydrogen bonds among the atoms flagged in `picked` (both partners picked), at `positions`,
/// with the minimum image when `cell` is a valid periodic cell. `bonds` are the structure's covalent
/// bonds (smaller index first).
pub fn find(
    s: &Structure,
    positions: &[[f32; 3]],
    picked: &[bool],
    bonds: &[[u32; 2]],
    cell: Option<&UnitCell>,
    criteria: &HBondCriteria,
) -> HBondSet {
    let n = s.len().min(positions.len()).min(picked.len());
    let is = |i: usize, z: u8| s.elements[i] == Element(z);
    let polar = |i: usize| is(i, 7) || is(i, 8);
    let finite = |i: usize| positions[i].iter().all(|x| x.is_finite());
    // Hydrogens bonded to picked N/O atoms, both picked.
    let mut donor_h: Vec<(u32, u32)> = Vec::new();
    for b in bonds {
        let (a, c) = (b[0] as usize, b[1] as usize);
        if a >= n || c >= n || !picked[a] || !picked[c] {
            continue;
        }
        if is(a, 1) && polar(c) {
            donor_h.push((c as u32, a as u32));
        } else if is(c, 1) && polar(a) {
            donor_h.push((a as u32, c as u32));
        }
    }
    donor_h.retain(|&(d, h)| finite(d as usize) && finite(h as usize));
    let with_hydrogens = !donor_h.is_empty();
    let reach = f64::from(criteria.distance_angstrom.max(criteria.heavy_distance_angstrom));
    let pbc = cell.filter(|c| c.is_valid()).map(|c| Pbc::new(c, reach));
    let p64 = |i: usize| positions[i].map(f64::from);
    // Atoms of two different alternate locations never meet.
    let apart = |i: usize, j: usize| {
        s.altlocs.as_ref().is_some_and(|alt| {
            let (x, y) = (alt.get(i).copied().unwrap_or(b' '), alt.get(j).copied().unwrap_or(b' '));
            x != b' ' && y != b' ' && x != y
        })
    };
    let mut out = Vec::new();
    if with_hydrogens {
        let acceptors: Vec<u32> = (0..n)
            .filter(|&i| picked[i] && polar(i) && finite(i))
            .map(|i| i as u32)
            .collect();
        let cutoff = f64::from(criteria.distance_angstrom);
        let cos_max = f64::from(criteria.angle_degrees).to_radians().cos();
        let grid = Neighbours::new(&acceptors, positions, cutoff, pbc.as_ref().map(|p| &p.mi));
        for &(d, h) in &donor_h {
            let (pd, ph) = (p64(d as usize), p64(h as usize));
            grid.for_each_near(pd, |a| {
                if a == d || apart(d as usize, a as usize) || apart(h as usize, a as usize) {
                    return;
                }
                let pa = p64(a as usize);
                let da = delta(pbc.as_ref(), pa, pd);
                let da2 = dot(da, da);
                if da2 > cutoff * cutoff {
                    return;
                }
                // The angle at the hydrogen, between H->D and H->A.
                let hd = delta(pbc.as_ref(), pd, ph);
                let ha = delta(pbc.as_ref(), pa, ph);
                let norm = (dot(hd, hd) * dot(ha, ha)).sqrt();
                if norm > 0.0 && dot(hd, ha) / norm <= cos_max {
                    out.push(HBond {
                        donor: d,
                        hydrogen: Some(h),
                        acceptor: a,
                    });
                }
            });
        }
    } else {
        let roles: Vec<Option<Role>> = (0..n)
            .map(|i| {
                if picked[i] && finite(i) {
                    heavy_role(s.elements[i], s.resnames[i].as_str(), s.names[i].as_str())
                } else {
                    None
                }
            })
            .collect();
        let acceptors: Vec<u32> = (0..n)
            .filter(|&i| roles[i].is_some_and(Role::accepts))
            .map(|i| i as u32)
            .collect();
        let cutoff = f64::from(criteria.heavy_distance_angstrom);
        let grid = Neighbours::new(&acceptors, positions, cutoff, pbc.as_ref().map(|p| &p.mi));
        let near = BondGraph::new(n, bonds);
        for (d, role) in roles.iter().enumerate() {
            if !role.is_some_and(Role::donates) {
                continue;
            }
            let pd = p64(d);
            grid.for_each_near(pd, |a| {
                let ai = a as usize;
                // A pair that could bond either way is one bond, kept once (donor the smaller index).
                let mutual = role.is_some_and(Role::accepts) && roles[ai].is_some_and(Role::donates);
                if ai == d || (mutual && ai < d) || apart(d, ai) || near.within_three(d, ai) {
                    return;
                }
                let v = delta(pbc.as_ref(), p64(a as usize), pd);
                if dot(v, v) <= cutoff * cutoff {
                    out.push(HBond {
                        donor: d as u32,
                        hydrogen: None,
                        acceptor: a,
                    });
                }
            });
        }
    }
    out.sort_unstable();
    out.dedup();
    HBondSet {
        bonds: out,
        with_hydrogens,
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `p - q`, by the minimum image in a periodic cell.
fn delta(pbc: Option<&Pbc>, p: [f64; 3], q: [f64; 3]) -> [f64; 3] {
    match pbc {
        Some(Pbc { mi, short: true }) => mi.delta_rounded(p, q),
        Some(Pbc { mi, short: false }) => mi.delta(p, q),
        None => [p[0] - q[0], p[1] - q[1], p[2] - q[2]],
    }
}

/// A periodic cell, and whether every vector the search measures (donor, hydrogen and acceptor
/// within the cutoff plus a bond of 1.5 Å) is shorter than half its smallest width, so that the
/// rounded image is the nearest ([`MinImage::delta_rounded`]).
struct Pbc {
    mi: MinImage,
    short: bool,
}

impl Pbc {
    fn new(cell: &UnitCell, cutoff_angstrom: f64) -> Pbc {
        let mi = MinImage::new(cell);
        let half = 0.5 * mi.widths().into_iter().fold(f64::INFINITY, f64::min);
        Pbc {
            short: cutoff_angstrom + 1.5 < half,
            mi,
        }
    }
}

/// Covalent neighbours, to leave out pairs fewer than four bonds apart.
struct BondGraph {
    adjacent: Vec<Vec<u32>>,
}

impl BondGraph {
    fn new(n: usize, bonds: &[[u32; 2]]) -> BondGraph {
        let mut adjacent = vec![Vec::new(); n];
        for b in bonds {
            let (a, c) = (b[0] as usize, b[1] as usize);
            if a < n && c < n && a != c {
                adjacent[a].push(c as u32);
                adjacent[c].push(a as u32);
            }
        }
        BondGraph { adjacent }
    }

    /// Whether `b` is one, two or three bonds from `a`.
    fn within_three(&self, a: usize, b: usize) -> bool {
        let mut frontier = vec![a as u32];
        let mut seen = vec![a as u32];
        for _ in 0..3 {
            let mut next = Vec::new();
            for &x in &frontier {
                for &y in &self.adjacent[x as usize] {
                    if y as usize == b {
                        return true;
                    }
                    if !seen.contains(&y) {
                        seen.push(y);
                        next.push(y);
                    }
                }
            }
            frontier = next;
        }
        false
    }
}

/// The most bins a cell list takes.
const MAX_BINS: f64 = (1u64 << 24) as f64;

/// A cell list over some atoms: the candidates within a cutoff of a point (a superset; callers
/// test the distance). Periodic cells are binned in fractional coordinates, wrapping around, when
/// each width holds at least three bins; otherwise every atom is a candidate.
struct Neighbours {
    atoms: Vec<u32>,
    /// Bin of each point: start offsets into `sorted`, per bin (len bins + 1).
    starts: Vec<u32>,
    sorted: Vec<u32>,
    dims: [i64; 3],
    map: BinMap,
}

enum BinMap {
    /// Every atom is a candidate.
    All,
    Open {
        lo: [f64; 3],
        size: f64,
    },
    Periodic {
        mi: MinImage,
    },
}

impl Neighbours {
    fn new(atoms: &[u32], positions: &[[f32; 3]], cutoff: f64, pbc: Option<&MinImage>) -> Neighbours {
        let cutoff = cutoff.max(0.5);
        let p = |i: u32| positions[i as usize].map(f64::from);
        let (dims, map) = match pbc {
            Some(mi) => {
                // Counted in f64 first: a huge box must not overflow the product.
                let w = mi.widths().map(|x| (x / cutoff).floor());
                if w.iter().all(|&d| d >= 3.0) && w.iter().product::<f64>() <= MAX_BINS {
                    (w.map(|d| d as i64), BinMap::Periodic { mi: mi.clone() })
                } else {
                    ([1, 1, 1], BinMap::All)
                }
            }
            None => {
                let mut lo = [f64::INFINITY; 3];
                let mut hi = [f64::NEG_INFINITY; 3];
                for &i in atoms {
                    let q = p(i);
                    for k in 0..3 {
                        lo[k] = lo[k].min(q[k]);
                        hi[k] = hi[k].max(q[k]);
                    }
                }
                let span_ok = (0..3).all(|k| (hi[k] - lo[k]).is_finite());
                if atoms.is_empty() || !span_ok {
                    ([1, 1, 1], BinMap::All)
                } else {
                    // At most about 2^24 bins: larger bins for sparse, far-flung atoms (counted in
                    // f64, so that far-flung coordinates cannot overflow the product).
                    let mut size = cutoff;
                    let count = |size: f64| -> [f64; 3] { [0, 1, 2].map(|k| ((hi[k] - lo[k]) / size).floor() + 1.0) };
                    while count(size).iter().product::<f64>() > MAX_BINS {
                        size *= 2.0;
                    }
                    (count(size).map(|c| c as i64), BinMap::Open { lo, size })
                }
            }
        };
        let mut g = Neighbours {
            atoms: atoms.to_vec(),
            starts: Vec::new(),
            sorted: Vec::new(),
            dims,
            map,
        };
        let nbins = (dims[0] * dims[1] * dims[2]) as usize;
        let bins: Vec<usize> = atoms.iter().map(|&i| g.bin_index(g.bin(p(i)))).collect();
        let mut counts = vec![0u32; nbins + 1];
        for &b in &bins {
            counts[b + 1] += 1;
        }
        for b in 0..nbins {
            counts[b + 1] += counts[b];
        }
        let mut fill = counts.clone();
        let mut sorted = vec![0u32; atoms.len()];
        for (k, &b) in bins.iter().enumerate() {
            sorted[fill[b] as usize] = atoms[k];
            fill[b] += 1;
        }
        g.starts = counts;
        g.sorted = sorted;
        g
    }

    fn bin(&self, q: [f64; 3]) -> [i64; 3] {
        match &self.map {
            BinMap::All => [0, 0, 0],
            BinMap::Open { lo, size } => {
                [0, 1, 2].map(|k| (((q[k] - lo[k]) / size).floor() as i64).clamp(0, self.dims[k] - 1))
            }
            BinMap::Periodic { mi } => {
                let f = mi.fractional(q);
                [0, 1, 2].map(|k| {
                    let w = f[k] - f[k].floor();
                    ((w * self.dims[k] as f64).floor() as i64).clamp(0, self.dims[k] - 1)
                })
            }
        }
    }

    fn bin_index(&self, b: [i64; 3]) -> usize {
        (b[0] + self.dims[0] * (b[1] + self.dims[1] * b[2])) as usize
    }

    /// Calls `f` with every atom of the bins around `q`'s (each once).
    fn for_each_near(&self, q: [f64; 3], mut f: impl FnMut(u32)) {
        if let BinMap::All = self.map {
            self.atoms.iter().for_each(|&a| f(a));
            return;
        }
        let periodic = matches!(self.map, BinMap::Periodic { .. });
        let b = self.bin(q);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let mut c = [b[0] + dx, b[1] + dy, b[2] + dz];
                    let mut outside = false;
                    for (ck, &dim) in c.iter_mut().zip(&self.dims) {
                        if periodic {
                            *ck = ck.rem_euclid(dim);
                        } else if *ck < 0 || *ck >= dim {
                            outside = true;
                        }
                    }
                    if outside {
                        continue;
                    }
                    let i = self.bin_index(c);
                    let (s, e) = (self.starts[i] as usize, self.starts[i + 1] as usize);
                    self.sorted[s..e].iter().for_each(|&a| f(a));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
