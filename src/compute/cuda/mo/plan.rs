//! The kernel specialised for one basis set: atoms grouped into types (same shells, exponents and
//! radial coefficients), the CUDA source generated with exponents and contraction coefficients as
//! literals (one device function per distinct atom type), and its constants per orbital. Used by the
//! MO launches in `super`; the basis packing it starts from is `compute::layout`'s.

use crate::compute::layout::{BasisPlan, PRIM_SKIP_LOG2, ShellPlan, n_monomials};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Constant memory the specialised kernel may use for atoms and coefficients (bytes; 64 KiB minus room).
pub const CONSTANT_BUDGET: usize = 60 * 1024;

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
