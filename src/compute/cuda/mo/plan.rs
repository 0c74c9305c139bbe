//! Host side of the molecular-orbital kernels: the basis flattened for the device, orbital coefficients
//! contracted with the angular functions, per-shell screening radii, and the generator of the kernel
//! specialised for one basis set (exponents and contraction coefficients as literals, one device
//! function per distinct atom type). Used by the MO launches in `super` and by the bench command.
//!
//! Every shell's contribution to an orbital is `radial(r) * P(x, y, z)` where `P` is a homogeneous
//! polynomial of degree `l` in Cartesian monomials: the orbital's coefficients of the shell's functions
//! times the functions' angular terms (`basis::angular_terms`), summed per monomial on the host. That
//! makes pure and Cartesian shells the same thing on the device. Monomials of degree `l` are ordered
//! `a = l..0, b = (l - a)..0, c = l - a - b` (x^a y^b z^c), in `kernels/mo.cu` as here.

use crate::compute::ComputeError;
use crate::model::basis::{BasisSet, angular_terms};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Highest angular momentum the kernels evaluate (i functions).
pub const MAX_L: u8 = 6;
/// A shell whose bound at the brick's nearest point is below this (bohr^-3/2) is skipped.
pub const SCREEN_EPS: f64 = 1e-9;
/// A primitive with `alpha * log2(e) * d_min^2` above this is skipped for the brick (2^-40 ~ 1e-12
/// times its coefficient; `PRIM_SKIP_LOG2` in `kernels/mo_common.cuh`).
pub const PRIM_SKIP_LOG2: f32 = 40.0;
/// Constant memory the specialised kernel may use for atoms and coefficients (bytes; 64 KiB minus room).
pub const CONSTANT_BUDGET: usize = 60 * 1024;

/// One shell as the general kernel reads it. Twin of `struct ShellRec` in `kernels/mo.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuShell {
    pub center: [f32; 3],
    pub cutoff2: f32,
    pub l: i32,
    pub prim_start: i32,
    pub nprim: i32,
    pub coef_start: i32,
}

// SAFETY: plain `#[repr(C)]` data of 32-bit fields, matching the CUDA struct layout.
unsafe impl cudarc::driver::DeviceRepr for GpuShell {}

/// Lattice geometry of one launch. Twin of `struct LatticeArgs` in `kernels/mo.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LatticeArgs {
    pub steps: [f32; 9],
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub k0: i32,
}

// SAFETY: plain `#[repr(C)]` data of 32-bit fields, matching the CUDA struct layout.
unsafe impl cudarc::driver::DeviceRepr for LatticeArgs {}

/// Number of Cartesian monomials of degree `l`.
pub fn n_monomials(l: u8) -> usize {
    let l = l as usize;
    (l + 1) * (l + 2) / 2
}

/// Index of x^a y^b z^c among the monomials of degree a + b + c.
pub fn monomial_index(a: u8, b: u8, c: u8) -> usize {
    let l = (a + b + c) as usize;
    let (a, b) = (a as usize, b as usize);
    // Rows a = l..a+1 hold (l - a' + 1) monomials each.
    let before: usize = ((a + 1)..=l).map(|ap| l - ap + 1).sum();
    before + (l - a - b)
}

/// A shell prepared for the device, independent of the orbital.
#[derive(Clone, Debug)]
pub struct ShellPlan {
    pub l: u8,
    pub atom: usize,
    pub center_bohr: [f64; 3],
    /// (alpha * log2 e, radial coefficient d_i).
    pub prims: Vec<(f64, f64)>,
    pub first_function: usize,
    /// (function within the shell, monomial, coefficient).
    pub terms: Vec<(usize, usize, f64)>,
}

/// The basis flattened once per wavefunction.
#[derive(Clone, Debug)]
pub struct BasisPlan {
    pub shells: Vec<ShellPlan>,
    pub n_functions: usize,
    /// Offset of each shell's polynomial in the contracted coefficient array.
    pub coef_offsets: Vec<usize>,
    pub n_coefs: usize,
}

impl BasisPlan {
    pub fn new(basis: &BasisSet) -> Result<BasisPlan, ComputeError> {
        let offsets = basis.shell_offsets();
        let mut shells = Vec::with_capacity(basis.shells.len());
        let mut coef_offsets = Vec::with_capacity(basis.shells.len());
        let mut n_coefs = 0usize;
        for (shell, &first) in basis.shells.iter().zip(&offsets) {
            if shell.l > MAX_L {
                return Err(ComputeError::Device(format!(
                    "shells above l = {MAX_L} are not supported on the GPU"
                )));
            }
            let radial = shell.radial_coefficients();
            if radial.len() != shell.exponents.len() {
                return Err(ComputeError::Device(
                    "shell with mismatched exponents and coefficients".into(),
                ));
            }
            let prims = shell
                .exponents
                .iter()
                .zip(&radial)
                .map(|(&a, &d)| (a * std::f64::consts::LOG2_E, d))
                .collect();
            let mut terms = Vec::new();
            for (f, poly) in angular_terms(shell.l, shell.pure).iter().enumerate() {
                for &(c, [a, b, z]) in poly {
                    if a as u32 + b as u32 + z as u32 != shell.l as u32 {
                        return Err(ComputeError::Device("angular term of the wrong degree".into()));
                    }
                    terms.push((f, monomial_index(a, b, z), c));
                }
            }
            coef_offsets.push(n_coefs);
            n_coefs += n_monomials(shell.l);
            shells.push(ShellPlan {
                l: shell.l,
                atom: shell.atom,
                center_bohr: shell.center_bohr,
                prims,
                first_function: first,
                terms,
            });
        }
        Ok(BasisPlan {
            shells,
            n_functions: basis.n_functions(),
            coef_offsets,
            n_coefs,
        })
    }

    /// The orbital's coefficients contracted per shell into monomial coefficients (f64).
    pub fn contract(&self, orbital: &[f64]) -> Result<Vec<f64>, ComputeError> {
        if orbital.len() != self.n_functions {
            return Err(ComputeError::Device(format!(
                "orbital has {} coefficients, the basis {} functions",
                orbital.len(),
                self.n_functions
            )));
        }
        let mut out = vec![0.0; self.n_coefs];
        for (shell, &off) in self.shells.iter().zip(&self.coef_offsets) {
            for &(f, m, c) in &shell.terms {
                let coef = orbital.get(shell.first_function + f).copied().unwrap_or(0.0);
                if let Some(slot) = out.get_mut(off + m) {
                    *slot += coef * c;
                }
            }
        }
        Ok(out)
    }

    /// Squared screening radius of each shell for contracted coefficients `poly` (bohr^2).
    pub fn cutoffs2(&self, poly: &[f64]) -> Vec<f64> {
        self.shells
            .iter()
            .zip(&self.coef_offsets)
            .map(|(shell, &off)| {
                let n = n_monomials(shell.l);
                let amp: f64 = poly
                    .get(off..off + n)
                    .map(|s| s.iter().map(|c| c.abs()).sum())
                    .unwrap_or(0.0);
                shell_cutoff2(shell, amp)
            })
            .collect()
    }
}

impl BasisPlan {
    /// Every shell's primitives as `[alpha * log2 e, coefficient]` pairs (f32), and each shell's
    /// (first primitive, primitive count) in that list: the primitives array of the general CUDA kernel
    /// and of the WGSL orbital pass.
    pub fn packed_prims(&self) -> (Vec<[f32; 2]>, Vec<(i32, i32)>) {
        let mut prims = Vec::new();
        let mut shell_base = Vec::with_capacity(self.shells.len());
        for s in &self.shells {
            let start = prims.len();
            prims.extend(s.prims.iter().map(|&(a2, d)| [a2 as f32, d as f32]));
            shell_base.push((start as i32, s.prims.len() as i32));
        }
        (prims, shell_base)
    }

    /// The shells as the general kernels read them: centres relative to the lattice origin
    /// `origin_bohr`, squared screening radii `cut2` ([`Self::cutoffs2`]), primitives as laid out by
    /// [`Self::packed_prims`] (`shell_base`).
    pub fn packed_shells(&self, shell_base: &[(i32, i32)], cut2: &[f64], origin_bohr: [f64; 3]) -> Vec<GpuShell> {
        let o = origin_bohr;
        self.shells
            .iter()
            .zip(&self.coef_offsets)
            .zip(shell_base.iter().zip(cut2))
            .map(|((s, &off), (&(ps, np), &c2))| GpuShell {
                center: [
                    (s.center_bohr[0] - o[0]) as f32,
                    (s.center_bohr[1] - o[1]) as f32,
                    (s.center_bohr[2] - o[2]) as f32,
                ],
                cutoff2: c2 as f32,
                l: s.l as i32,
                prim_start: ps,
                nprim: np,
                coef_start: off as i32,
            })
            .collect()
    }
}

/// Squared radius beyond which `amp * r^l * sum |d_i| exp(-alpha_i r^2)` stays below [`SCREEN_EPS`].
fn shell_cutoff2(shell: &ShellPlan, amp: f64) -> f64 {
    if amp == 0.0 || !amp.is_finite() {
        return -1.0;
    }
    let bound = |r: f64| {
        let radial: f64 = shell.prims.iter().map(|&(a2, d)| d.abs() * (-a2 * r * r).exp2()).sum();
        amp * r.powi(shell.l as i32).max(if shell.l == 0 { 1.0 } else { 0.0 }) * radial
    };
    // Scan outward in 0.25 bohr steps up to 200 bohr for the last point above the threshold. Each
    // term r^l exp(-alpha r^2) decreases beyond its maximum at r^2 = l / (2 alpha) (alpha = a2 ln 2),
    // so once past every term's maximum the first point below the threshold ends the scan: the
    // same answer as scanning all the way, at a few dozen evaluations instead of 800 per shell.
    // (A primitive that does not decay, which no valid basis has, keeps the full scan.)
    let past_maxima = shell
        .prims
        .iter()
        .map(|&(a2, _)| {
            if a2 > 0.0 {
                (f64::from(shell.l) / (2.0 * a2 * std::f64::consts::LN_2)).sqrt()
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0f64, f64::max);
    let mut last_above = 0.0;
    let mut r = 0.0;
    while r <= 200.0 {
        if bound(r) >= SCREEN_EPS {
            last_above = r;
        } else if r > past_maxima {
            break;
        }
        r += 0.25;
    }
    let rc = last_above + 0.25;
    rc * rc
}

/// A distinct atom type of the specialised kernel: atoms whose shells have the same l, exponents and
/// radial coefficients, in the same order.
#[derive(Clone, Debug)]
pub struct AtomType {
    /// Shell indices (into `BasisPlan::shells`) of the first atom of this type, in order.
    pub template_shells: Vec<usize>,
}

/// The atoms and their types, for the specialised kernel.
#[derive(Clone, Debug)]
pub struct SpecialisedPlan {
    pub types: Vec<AtomType>,
    /// Per atom with shells: (atom index, type, shells of this atom in order).
    pub atoms: Vec<(usize, usize, Vec<usize>)>,
    pub source: String,
}

fn shell_signature(s: &ShellPlan) -> String {
    let mut sig = format!("l{}:", s.l);
    for &(a, d) in &s.prims {
        let _ = write!(sig, "{:x},{:x};", (a as f32).to_bits(), (d as f32).to_bits());
    }
    sig
}

fn lit(x: f64) -> String {
    let v = x as f32;
    if v == 0.0 { "0.0f".into() } else { format!("{v:e}f") }
}

impl SpecialisedPlan {
    /// Groups atoms into types and generates the kernel source; `None` when the basis does not fit
    /// the specialised form (constant memory, number of types).
    pub fn new(plan: &BasisPlan, header: &str) -> Option<SpecialisedPlan> {
        // Shells per atom, in basis order (an atom's shells need not be contiguous).
        let mut per_atom: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, s) in plan.shells.iter().enumerate() {
            per_atom.entry(s.atom).or_default().push(i);
        }
        let mut type_of_sig: BTreeMap<String, usize> = BTreeMap::new();
        let mut types: Vec<AtomType> = Vec::new();
        let mut atoms = Vec::new();
        for (&atom, shells) in &per_atom {
            let sig: String = shells
                .iter()
                .filter_map(|&i| plan.shells.get(i))
                .map(shell_signature)
                .collect();
            let t = match type_of_sig.get(&sig) {
                Some(&t) => t,
                None => {
                    types.push(AtomType {
                        template_shells: shells.clone(),
                    });
                    type_of_sig.insert(sig, types.len() - 1);
                    types.len() - 1
                }
            };
            atoms.push((atom, t, shells.clone()));
        }
        let bytes = atoms.len() * 24 + plan.n_coefs * 4 + plan.shells.len() * 4;
        if atoms.is_empty() || types.len() > 64 || bytes > CONSTANT_BUDGET || atoms.len() > 1024 {
            return None;
        }
        let source = generate(plan, &types, atoms.len(), plan.n_coefs, plan.shells.len(), header);
        Some(SpecialisedPlan { types, atoms, source })
    }

    /// Constant data for one orbital: per atom (x, y, z relative to the origin, cutoff^2), (type |
    /// coefficient offset << 8) and its first shell; the coefficients and the shells' cutoff^2, in atom
    /// order.
    pub fn constants(&self, plan: &BasisPlan, poly: &[f64], origin_bohr: [f64; 3]) -> SpecConstants {
        let cut2 = plan.cutoffs2(poly);
        let mut k = SpecConstants::default();
        for (_, t, shells) in &self.atoms {
            let first = shells.first().and_then(|&i| plan.shells.get(i));
            let c = first.map(|s| s.center_bohr).unwrap_or([0.0; 3]);
            let cutoff2 = shells
                .iter()
                .filter_map(|&i| cut2.get(i))
                .fold(-1.0f64, |a, &b| a.max(b));
            k.atoms.push([
                (c[0] - origin_bohr[0]) as f32,
                (c[1] - origin_bohr[1]) as f32,
                (c[2] - origin_bohr[2]) as f32,
                cutoff2 as f32,
            ]);
            k.info.push((*t as i32) | ((k.coefs.len() as i32) << 8));
            k.shell0.push(k.shell_cut2.len() as i32);
            for &i in shells {
                if let (Some(s), Some(&off)) = (plan.shells.get(i), plan.coef_offsets.get(i)) {
                    let n = n_monomials(s.l);
                    k.coefs
                        .extend(poly.get(off..off + n).unwrap_or(&[]).iter().map(|&v| v as f32));
                    k.shell_cut2.push(cut2.get(i).copied().unwrap_or(-1.0) as f32);
                }
            }
        }
        k
    }
}

/// Constant-memory contents of the specialised kernel for one orbital (`spec_*` in the generated source).
#[derive(Clone, Debug, Default)]
pub struct SpecConstants {
    pub atoms: Vec<[f32; 4]>,
    pub info: Vec<i32>,
    pub shell0: Vec<i32>,
    pub coefs: Vec<f32>,
    pub shell_cut2: Vec<f32>,
}

fn poly_code(l: u8, base: usize) -> String {
    if l == 0 {
        return format!("c[{base}]");
    }
    let mut terms = Vec::new();
    let mut m = base;
    for a in (0..=l).rev() {
        for b in (0..=(l - a)).rev() {
            let z = l - a - b;
            let mut factors = vec![format!("c[{m}]")];
            for (var, p) in [("x", a), ("y", b), ("z", z)] {
                for _ in 0..p {
                    factors.push(var.to_string());
                }
            }
            terms.push(factors.join("*"));
            m += 1;
        }
    }
    format!("({})", terms.join(" + "))
}

fn generate(
    plan: &BasisPlan,
    types: &[AtomType],
    n_atoms: usize,
    n_coefs: usize,
    n_shells: usize,
    header: &str,
) -> String {
    let mut src = String::new();
    let _ = writeln!(
        src,
        "// Generated by src/compute/cuda/mo.rs for one basis set: do not edit."
    );
    src.push_str(header);
    let _ = writeln!(src, "#define SPEC_NATOMS {n_atoms}");
    let _ = writeln!(src, "__constant__ float4 spec_atoms[{n_atoms}];");
    let _ = writeln!(src, "__constant__ int spec_info[{n_atoms}];");
    let _ = writeln!(src, "__constant__ int spec_shell0[{n_atoms}];");
    let _ = writeln!(src, "__constant__ float spec_coefs[{}];", n_coefs.max(1));
    let _ = writeln!(src, "__constant__ float spec_shell_cut2[{}];", n_shells.max(1));
    for (t, ty) in types.iter().enumerate() {
        let _ = writeln!(
            src,
            "__device__ __forceinline__ float atom_type_{t}(float x, float y, float z, float r2, float dmin2, const float* c, const float* sc) {{"
        );
        // Distinct exponents of this type, each evaluated once, and only when a shell using it reaches
        // the brick and the primitive is not negligible over it (block-uniform conditions).
        let mut exps: Vec<u32> = Vec::new();
        let mut users: Vec<Vec<usize>> = Vec::new();
        for (k, &si) in ty.template_shells.iter().enumerate() {
            if let Some(s) = plan.shells.get(si) {
                for &(a2, _) in &s.prims {
                    let bits = (a2 as f32).to_bits();
                    match exps.iter().position(|&b| b == bits) {
                        Some(e) => {
                            if let Some(u) = users.get_mut(e)
                                && !u.contains(&k)
                            {
                                u.push(k);
                            }
                        }
                        None => {
                            exps.push(bits);
                            users.push(vec![k]);
                        }
                    }
                }
            }
        }
        for (e, bits) in exps.iter().enumerate() {
            let a2 = f32::from_bits(*bits) as f64;
            let reach = users
                .get(e)
                .map(|u| {
                    u.iter()
                        .map(|k| format!("dmin2 <= sc[{k}]"))
                        .collect::<Vec<_>>()
                        .join(" || ")
                })
                .unwrap_or_else(|| "false".into());
            let _ = writeln!(
                src,
                "    float e{e} = ({a} * dmin2 < {skip:.1}f && ({reach})) ? ex2_ftz(-{a} * r2) : 0.0f;",
                a = lit(a2),
                skip = PRIM_SKIP_LOG2
            );
        }
        let _ = writeln!(src, "    float acc = 0.0f;");
        let mut off = 0usize;
        for (k, &si) in ty.template_shells.iter().enumerate() {
            let Some(s) = plan.shells.get(si) else { continue };
            let radial: Vec<String> = s
                .prims
                .iter()
                .map(|&(a2, d)| {
                    let e = exps.iter().position(|&b| b == (a2 as f32).to_bits()).unwrap_or(0);
                    format!("{}*e{e}", lit(d))
                })
                .collect();
            let _ = writeln!(
                src,
                "    if (dmin2 <= sc[{k}]) acc = fmaf({}, {}, acc);",
                if radial.is_empty() {
                    "0.0f".to_string()
                } else {
                    radial.join(" + ")
                },
                poly_code(s.l, off)
            );
            off += n_monomials(s.l);
        }
        let _ = writeln!(src, "    return acc;\n}}");
    }
    let _ = writeln!(
        src,
        r#"extern "C" __global__ void __launch_bounds__(NTHREADS)
mo_specialised(float* __restrict__ out, const LatticeArgs g, int mode, float w) {{
    __shared__ int list[SPEC_NATOMS];
    __shared__ float dmin2s[SPEC_NATOMS];
    __shared__ int warp_counts[NTHREADS / 32];
    int idx;
    float px, py, pz, bcx, bcy, bcz, brad;
    bool inside = brick_point(g, &idx, &px, &py, &pz, &bcx, &bcy, &bcz, &brad);
    int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    int n = 0;
    for (int a0 = 0; a0 < SPEC_NATOMS; a0 += NTHREADS) {{
        int a = a0 + tid;
        bool keep = false;
        float dmin2 = 0.0f;
        if (a < SPEC_NATOMS) {{
            float4 at = spec_atoms[a];
            float dx = at.x - bcx, dy = at.y - bcy, dz = at.z - bcz;
            float d = fmaxf(sqrtf(dx * dx + dy * dy + dz * dz) - brad, 0.0f);
            dmin2 = d * d;
            keep = dmin2 <= at.w;
        }}
        n += compact_ordered(keep, a, dmin2, list + n, dmin2s + n, warp_counts);
    }}
    float psi = 0.0f;
    for (int t = 0; t < n; ++t) {{
        int a = list[t];
        float dmin2 = dmin2s[t];
        float4 at = spec_atoms[a];
        int info = spec_info[a];
        const float* c = spec_coefs + (info >> 8);
        const float* sc = spec_shell_cut2 + spec_shell0[a];
        float dx = px - at.x, dy = py - at.y, dz = pz - at.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        switch (info & 0xff) {{"#
    );
    for t in 0..types.len() {
        let _ = writeln!(
            src,
            "            case {t}: psi += atom_type_{t}(dx, dy, dz, r2, dmin2, c, sc); break;"
        );
    }
    let _ = writeln!(
        src,
        r#"            default: psi = __int_as_float(0x7fc00000); break;
        }}
    }}
    if (inside) store_value(out, idx, psi, mode, w);
}}"#
    );
    src
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_cutoff_scan_that_stops_early_equals_the_full_scan() {
        // The full scan as first written: every 0.25 bohr up to 200 bohr.
        let full = |shell: &ShellPlan, amp: f64| {
            let bound = |r: f64| {
                let radial: f64 = shell.prims.iter().map(|&(a2, d)| d.abs() * (-a2 * r * r).exp2()).sum();
                amp * r.powi(shell.l as i32).max(if shell.l == 0 { 1.0 } else { 0.0 }) * radial
            };
            let mut last_above = 0.0;
            let mut r = 0.0;
            while r <= 200.0 {
                if bound(r) >= SCREEN_EPS {
                    last_above = r;
                }
                r += 0.25;
            }
            (last_above + 0.25) * (last_above + 0.25)
        };
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(3, |d| d.as_nanos() as u64)
            | 1;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..2000 {
            let l = (next() * 5.0) as u8;
            let nprim = 1 + (next() * 4.0) as usize;
            // Exponents from very diffuse (1e-3) to tight (1e4); coefficients of either sign.
            let prims = (0..nprim)
                .map(|_| {
                    let alpha = 10f64.powf(next() * 7.0 - 3.0);
                    (alpha * std::f64::consts::LOG2_E, next() * 4.0 - 2.0)
                })
                .collect();
            let shell = ShellPlan {
                l,
                atom: 0,
                center_bohr: [0.0; 3],
                prims,
                first_function: 0,
                terms: Vec::new(),
            };
            let amp = 10f64.powf(next() * 8.0 - 6.0);
            assert_eq!(shell_cutoff2(&shell, amp), full(&shell, amp), "{shell:?} amp {amp}");
        }
    }

    #[test]
    fn monomial_indices_follow_the_kernel_order() {
        for l in 0..=MAX_L {
            let mut m = 0;
            for a in (0..=l).rev() {
                for b in (0..=(l - a)).rev() {
                    assert_eq!(monomial_index(a, b, l - a - b), m);
                    m += 1;
                }
            }
            assert_eq!(m, n_monomials(l));
        }
    }
}
