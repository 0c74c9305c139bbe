//! The electrostatic potential of a wavefunction (nuclei plus electron density) on any wgpu device:
//! the lattice field of `Field::QmPotential`, by the compute pass `shaders/qm_esp.wgsl` with code
//! generated here, from the host preparation the CPU and CUDA engines share
//! ([`crate::compute::qm_esp::PreparedQmEsp`]: density matrix, screened Hermite distributions,
//! Boys table).
//!
//! Owns [`shader_source`] (the static pass with, per total angular momentum L, the Boys function
//! and the polynomial of one distribution as straight-line code, generated from [`layouts`] as the
//! CUDA engine generates its own), [`PackedQmEsp`] (the distributions and nuclei as f32 records in
//! the lattice's own coordinates, their coefficients rescaled so that no factor the device
//! multiplies leaves the f32 range; see the shader's header), [`QmEspParams`] (twin of the shader's
//! uniform) and [`QmEspPass`] (the pipelines per largest L and the Boys table, built once per
//! device on first use, and the last packed wavefunction on the device). Called by the wgpu slab
//! engine (`super::engine`) and tests.
//!
//! Precision (f32 on the device; WGSL has no guaranteed f64): each centre and nucleus is given by
//! its lattice coordinates as f32 (hi, lo) pairs of the host's f64 values, so the offset `P - r`
//! from a lattice point is an exact index difference plus the low part, times the steps: its
//! rounding is relative to the offset itself (a few ulp), not to the lattice's extent, which keeps
//! tight distributions (exponents of 1e5) exact near their centres. The Boys function comes from the
//! shared table rounded to f32 (the Taylor step and the stable recursions add a few ulp); each
//! distribution's polynomial is f32 with every factor bounded; the sums run in blocks of 16 with
//! Kahan compensation between blocks. The error at a point is then a few 1e-7 of the sum of the
//! absolute terms there (nuclear and electronic), which near a nucleus is the size of the potential
//! itself and far from the nuclei, where the two parts cancel, can be a large fraction of V (tens of
//! bohr from a neutral molecule). Measured against the CPU engine (f64) in `tests/wgpu_qm_esp.rs`:
//! see the bounds there and in `docs/architecture.md`.

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err, params_bind_group};
use crate::compute::qm_esp::PreparedQmEsp;
use crate::compute::qm_esp::boys::{self, TABLE_MAX_T, TABLE_ORDERS, TABLE_PER_UNIT, TAYLOR_TERMS};
use crate::compute::qm_esp::nuclear_attraction::{PolyLayout, layouts};
use crate::compute::{ComputeError, MIN_DISTANCE_BOHR};
use crate::model::{Lattice, Wavefunction};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use wgpu::util::DeviceExt;

/// The static part of the pass (`shaders/qm_esp.wgsl`).
pub const SHADER_BODY: &str = include_str!("../../../shaders/qm_esp.wgsl");

/// Invocations per workgroup along x and y, and distributions per plainly summed block (`QM_WX`,
/// `QM_WY`, `QM_BLOCK` in the shader).
pub const WX: u32 = 8;
pub const WY: u32 = 8;
pub const BLOCK: u32 = 16;
/// Records per group dispatch (bounds the time of one dispatch on slow devices).
const RECORDS_PER_DISPATCH: usize = 4096;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/qm_esp.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct QmEspParams {
    pub step_x: [f32; 4],
    pub step_y: [f32; 4],
    pub step_z: [f32; 4],
    /// nx, ny, planes of the dispatch, lattice index k of its first plane.
    pub dims: [u32; 4],
    /// Word offset of the first record, records, words per record.
    pub base: u32,
    pub count: u32,
    pub stride: u32,
    pub keep: u32,
    pub min2: f32,
    /// Slab plane of the dispatch's first plane in the accumulator.
    pub out_plane: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// `qm_boys_<L>(t, sg)`: `G_n = c^n F_n(t)` for `n = 0 ..= L` (`c = 1 / sg`, `sg = qm_sigma(t)`: the
/// same rounded `c` scales the monomials, so the scaling cancels whatever its rounding), as
/// straight-line code (constant indices keep the values in registers): below `QM_TABLE_MAX_T` the
/// Taylor series of `F_L` and `exp(-t)` around the nearest table point and the downward recursion,
/// above it `F_0 = sqrt(pi / t) / 2` and `G_(n+1) = ((2n + 1) G_n - exp(-t) c^n) / (2 c)`.
fn boys_source(l: usize, out: &mut String) {
    let _ = writeln!(out, "fn qm_boys_{l}(t: f32, sg: f32) -> array<f32, {}> {{", l + 1);
    let _ = writeln!(out, "    var g: array<f32, {}>;", l + 1);
    out.push_str("    let c = 1.0 / sg;\n    if t < QM_TABLE_MAX_T {\n");
    out.push_str(
        "        let row = u32(t * QM_TABLE_PER_UNIT + 0.5);\n        \
         let x = f32(row) * (1.0 / QM_TABLE_PER_UNIT) - t;\n",
    );
    let _ = writeln!(out, "        let base = row * QM_TABLE_ORDERS + {l}u;");
    let _ = writeln!(out, "        var f = table[base + {}u];", TAYLOR_TERMS - 1);
    out.push_str("        var e = 1.0;\n");
    for k in (1..TAYLOR_TERMS).rev() {
        let _ = writeln!(out, "        let x{k} = x * {:?};", 1.0 / k as f32);
        let _ = writeln!(out, "        f = fma(f, x{k}, table[base + {}u]);", k - 1);
        let _ = writeln!(out, "        e = fma(e, x{k}, 1.0);");
    }
    out.push_str("        e *= expt[row];\n");
    let _ = writeln!(out, "        g[{l}] = f;");
    for n in (1..=l).rev() {
        let _ = writeln!(out, "        f = fma(2.0 * t, f, e) * {:?};", 1.0 / (2 * n - 1) as f32);
        let _ = writeln!(out, "        g[{}] = f;", n - 1);
    }
    if l > 0 {
        out.push_str("        if t > 1.0 {\n            var cn = c;\n");
        for n in 1..=l {
            let _ = writeln!(out, "            g[{n}] *= cn;");
            if n < l {
                out.push_str("            cn *= c;\n");
            }
        }
        out.push_str("        }\n");
    }
    out.push_str("    } else {\n        var f = 0.886226925452758 * sg;\n        g[0] = f;\n");
    if l > 0 {
        out.push_str("        var ec = exp(-t);\n        let h = 0.5 * sg;\n");
        for n in 0..l {
            let _ = writeln!(out, "        f = ({:?} * f - ec) * h;", (2 * n + 1) as f32);
            let _ = writeln!(out, "        g[{}] = f;", n + 1);
            if n + 1 < l {
                out.push_str("        ec *= c;\n");
            }
        }
    }
    out.push_str("    }\n    return g;\n}\n");
}

/// `G_n` of the shader and the polynomial of one L as WGSL: the entry point `qm_esp_group_<L>`.
fn group_source(lay: &PolyLayout, out: &mut String) {
    let l = lay.l;
    let degree = |i: usize| {
        lay.monomials
            .get(i)
            .map_or(0, |m| m.iter().map(|&x| usize::from(x)).sum::<usize>())
    };
    let max_k = lay
        .entries
        .iter()
        .map(|&(n, m)| n - degree(m).min(n))
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "@compute @workgroup_size(QM_WX, QM_WY, 1)");
    let _ = writeln!(
        out,
        "fn qm_esp_group_{l}(@builtin(global_invocation_id) gid: vec3<u32>) {{"
    );
    out.push_str(
        "    let pt = qm_point(gid);\n    if !pt.inside {\n        return;\n    }\n    let a0 = acc[pt.idx];\n    \
         var s = a0.x;\n    var comp = a0.y;\n    \
         for (var i0 = 0u; i0 < params.count; i0 += QM_BLOCK) {\n        \
         let i1 = min(i0 + QM_BLOCK, params.count);\n        var part = 0.0;\n        \
         for (var i = i0; i < i1; i++) {\n            let b = params.base + i * params.stride;\n            \
         let yv = records[b] * qm_offset(pt.f, b + 1u);\n            let t = dot(yv, yv);\n",
    );
    out.push_str("            let sg = qm_sigma(t);\n");
    let _ = writeln!(out, "            let g = qm_boys_{l}(t, sg);");
    out.push_str(
        "            \
         let x = yv.x * sg;\n            let y = yv.y * sg;\n            let z = yv.z * sg;\n            \
         let q = b + 7u;\n",
    );
    for k in 1..=max_k {
        if k == 1 {
            let _ = writeln!(out, "            let g1 = sg;");
        } else {
            let _ = writeln!(out, "            let g{k} = g{} * sg;", k - 1);
        }
    }
    for n in 0..=l {
        let _ = writeln!(out, "            var s{n} = 0.0;");
    }
    let mut uses: Vec<Vec<(usize, usize)>> = vec![Vec::new(); lay.monomials.len()];
    for (e, &(n, m)) in lay.entries.iter().enumerate() {
        if let Some(u) = uses.get_mut(m) {
            u.push((e, n));
        }
    }
    let axis = ["x", "y", "z"];
    for (i, list) in uses.iter().enumerate() {
        if i == 0 {
            let _ = writeln!(out, "            let m0 = 1.0;");
        } else if let Some(&(j, a)) = lay.build.get(i) {
            let _ = writeln!(out, "            let m{i} = m{j} * {};", axis.get(a).unwrap_or(&"x"));
        }
        for &(e, n) in list {
            let k = n - degree(i).min(n);
            if k == 0 {
                let _ = writeln!(out, "            s{n} = fma(records[q + {e}u], m{i}, s{n});");
            } else {
                let _ = writeln!(out, "            s{n} = fma(records[q + {e}u] * g{k}, m{i}, s{n});");
            }
        }
    }
    let _ = writeln!(out, "            var v = g[0] * s0;");
    for n in 1..=l {
        let _ = writeln!(out, "            v = fma(g[{n}], s{n}, v);");
    }
    out.push_str(
        "            part += v;\n        }\n        kahan_add(&s, &comp, part);\n    }\n    \
         acc[pt.idx] = vec2<f32>(s, comp);\n}\n",
    );
}

/// The complete shader for distributions up to total angular momentum `max_l`.
pub fn shader_source(max_l: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by src/compute/wgpu/qm_esp.rs for L <= {max_l}.");
    let _ = writeln!(s, "const QM_MAX_L: u32 = {max_l}u;");
    let _ = writeln!(s, "const QM_TABLE_ORDERS: u32 = {TABLE_ORDERS}u;");
    let _ = writeln!(
        s,
        "const QM_TABLE_PER_UNIT: f32 = {TABLE_PER_UNIT:?};",
        TABLE_PER_UNIT = TABLE_PER_UNIT as f64
    );
    let _ = writeln!(s, "const QM_TABLE_MAX_T: f32 = {TABLE_MAX_T:?};");
    s.push_str(SHADER_BODY);
    for lay in layouts().iter().take(max_l + 1) {
        s.push('\n');
        boys_source(lay.l, &mut s);
        s.push('\n');
        group_source(lay, &mut s);
    }
    s
}

/// One L group's records in [`PackedQmEsp::records`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupRange {
    pub l: usize,
    /// Word offset of the first record.
    pub base: usize,
    pub count: usize,
    /// Words per record: 7 + the layout's coefficients.
    pub stride: usize,
}

/// Words per nucleus in [`PackedQmEsp::nuclei`].
pub const NUCLEUS_WORDS: usize = 8;

/// A prepared wavefunction as the pass reads it, for one lattice's origin and steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PackedQmEsp {
    pub max_l: usize,
    /// Every group's records `[sqrt(p), a_hi, b_hi, c_hi, a_lo, b_lo, c_lo, q'...]`, back to back.
    pub records: Vec<f32>,
    pub groups: Vec<GroupRange>,
    /// Nuclei `[a_hi, b_hi, c_hi, a_lo, b_lo, c_lo, Z, 0]`.
    pub nuclei: Vec<f32>,
    /// Distributions kept after screening.
    pub n_distributions: usize,
    /// The lattice's steps (bohr) the lattice coordinates refer to.
    pub steps_bohr: [[f64; 3]; 3],
}

/// `u . (v x w)`.
fn triple(u: [f64; 3], v: [f64; 3], w: [f64; 3]) -> f64 {
    u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) + u[2] * (v[0] * w[1] - v[1] * w[0])
}

/// The lattice coordinates of `p_bohr` on `lattice` as f32 pairs (hi, lo): `p = origin + sum_a
/// (hi_a + lo_a) steps[a]` to about 1e-14 of the lattice index.
fn lattice_coordinates(lattice: &Lattice, p_bohr: [f64; 3]) -> [[f32; 3]; 2] {
    let s = lattice.steps_bohr;
    let d: [f64; 3] = std::array::from_fn(|a| p_bohr[a] - lattice.origin_bohr[a]);
    let det = triple(s[0], s[1], s[2]);
    let c = [
        triple(d, s[1], s[2]) / det,
        triple(s[0], d, s[2]) / det,
        triple(s[0], s[1], d) / det,
    ];
    let hi = c.map(|x| x as f32);
    let lo: [f32; 3] = std::array::from_fn(|a| (c[a] - f64::from(hi[a])) as f32);
    [hi, lo]
}

impl PackedQmEsp {
    /// Packs `prep` for `lattice`: every centre and nucleus in the lattice's own coordinates (so
    /// the device forms `P - r` from index differences, exact near the centre, times the steps), and
    /// each coefficient `q_(n,m)` (which carries `p^n`) divided by `p^(|m| / 2)` in f64. A lattice
    /// whose steps do not span space is refused (the CPU engine takes it).
    pub fn new(prep: &PreparedQmEsp, lattice: &Lattice) -> Result<PackedQmEsp, ComputeError> {
        let s = lattice.steps_bohr;
        let det = triple(s[0], s[1], s[2]);
        let scale = s
            .iter()
            .map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt())
            .product::<f64>();
        if !(det.abs() > 1e-9 * scale && det.is_finite()) {
            return Err(ComputeError::WrongInput(
                crate::compute::Field::QmPotential,
                "a lattice whose steps span space (the wgpu pass works in lattice coordinates)",
            ));
        }
        let lays = layouts();
        let mut packed = PackedQmEsp {
            max_l: prep.pairs.max_l(),
            n_distributions: prep.pairs.n_kept,
            steps_bohr: s,
            ..PackedQmEsp::default()
        };
        for g in &prep.pairs.groups {
            let Some(lay) = lays.get(g.l) else {
                return Err(ComputeError::Device(format!("no layout for L = {}", g.l)));
            };
            if g.is_empty() {
                continue;
            }
            let nc = lay.n_coefs();
            // X^m = p^(-|m| / 2) Y^m: sqrt(p)^(-|m|) per entry.
            let powers: Vec<i32> = lay
                .entries
                .iter()
                .map(|&(_, m)| {
                    -lay.monomials
                        .get(m)
                        .map_or(0, |x| x.iter().map(|&v| i32::from(v)).sum())
                })
                .collect();
            let base = packed.records.len();
            for ((&p, c), q) in g.exponent.iter().zip(&g.center_bohr).zip(g.coefs.chunks_exact(nc)) {
                let sp = p.sqrt();
                packed.records.push(sp as f32);
                let [hi, lo] = lattice_coordinates(lattice, *c);
                packed.records.extend_from_slice(&hi);
                packed.records.extend_from_slice(&lo);
                for (&qe, &k) in q.iter().zip(&powers) {
                    packed.records.push((qe * sp.powi(k)) as f32);
                }
            }
            packed.groups.push(GroupRange {
                l: g.l,
                base,
                count: g.len(),
                stride: 7 + nc,
            });
        }
        for &(r, z) in &prep.nuclei {
            let [hi, lo] = lattice_coordinates(lattice, r);
            packed.nuclei.extend_from_slice(&hi);
            packed.nuclei.extend_from_slice(&lo);
            packed.nuclei.extend_from_slice(&[z as f32, 0.0]);
        }
        if packed.records.iter().chain(&packed.nuclei).any(|v| !v.is_finite()) {
            return Err(ComputeError::BadInput(
                "the wavefunction's distributions do not fit float32 (a coefficient or centre overflows)".into(),
            ));
        }
        Ok(packed)
    }

    /// `P - r` (bohr) for the point at lattice coordinates `ijk` and the centre at `words` (hi, lo).
    fn offset(&self, words: &[f32], ijk: [f64; 3]) -> [f64; 3] {
        let d: [f64; 3] = std::array::from_fn(|a| f64::from(words[a]) + f64::from(words[a + 3]) - ijk[a]);
        std::array::from_fn(|c| (0..3).map(|a| d[a] * self.steps_bohr[a][c]).sum())
    }

    /// The potential at the point of lattice coordinates `ijk` by the pass's arithmetic in f64: the
    /// scaled form the shader evaluates, held to the CPU engine by the tests.
    pub fn value_at(&self, ijk: [f64; 3]) -> f64 {
        let lays = layouts();
        let mut v = 0.0;
        for nu in self.nuclei.chunks_exact(NUCLEUS_WORDS) {
            let x = self.offset(nu, ijk);
            let d = x.iter().map(|c| c * c).sum::<f64>().sqrt();
            v += f64::from(nu[6]) / d.max(MIN_DISTANCE_BOHR);
        }
        let mut f = [0.0; boys::MAX_ORDER + 1];
        for g in &self.groups {
            let Some(lay) = lays.get(g.l) else { continue };
            let Some(words) = self.records.get(g.base..g.base + g.count * g.stride) else {
                continue;
            };
            for rec in words.chunks_exact(g.stride) {
                let sp = f64::from(rec[0]);
                let yv = self.offset(&rec[1..7], ijk).map(|x| sp * x);
                let t = yv.iter().map(|y| y * y).sum::<f64>();
                boys::boys(g.l, t, &mut f);
                let c = t.sqrt().max(1.0);
                let u = yv.map(|y| y / c);
                for (&(n, m), &q) in lay.entries.iter().zip(&rec[7..]) {
                    let pw = lay.monomials.get(m).copied().unwrap_or([0; 3]);
                    let d = pw.iter().map(|&x| i32::from(x)).sum::<i32>();
                    let mono: f64 = (0..3).map(|a| u[a].powi(i32::from(pw[a]))).product();
                    let k = n as i32 - d;
                    v += f64::from(q) * mono * c.powi(-k) * c.powi(n as i32) * f[n];
                }
            }
        }
        v
    }
}

/// The pipelines of one largest L, with the Boys table on the device.
struct Pipelines {
    nuclei: wgpu::ComputePipeline,
    groups: Vec<wgpu::ComputePipeline>,
}

/// A wavefunction packed on the device for one lattice origin.
struct OnDevice {
    max_l: usize,
    records: wgpu::Buffer,
    nuclei: wgpu::Buffer,
    groups: Vec<GroupRange>,
    n_nuclei: usize,
}

/// The pass on one device: pipelines per largest L and the Boys table (built on first use), and
/// the last wavefunction packed on the device (the slabs of one job share it).
pub struct QmEspPass {
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    state: Mutex<PassState>,
}

#[derive(Default)]
struct PassState {
    pipelines: HashMap<usize, Arc<Pipelines>>,
    table: Option<Arc<(wgpu::Buffer, wgpu::Buffer)>>,
    /// The last wavefunction uploaded, with the lattice its coordinates refer to.
    last: Option<(Arc<Wavefunction>, Lattice, Arc<OnDevice>)>,
}

fn binding_types() -> [wgpu::BufferBindingType; 5] {
    use wgpu::BufferBindingType as B;
    [
        B::Uniform,
        B::Storage { read_only: true },
        B::Storage { read_only: true },
        B::Storage { read_only: true },
        B::Storage { read_only: false },
    ]
}

fn storage(device: &wgpu::Device, label: &str, words: &[f32]) -> wgpu::Buffer {
    let pad = [0.0f32; 4];
    let contents: &[f32] = if words.is_empty() { &pad } else { words };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(contents),
        usage: wgpu::BufferUsages::STORAGE,
    })
}

impl QmEspPass {
    /// The layouts of the pass on `device` (no pipeline is compiled until the first job).
    pub fn new(device: &wgpu::Device) -> QmEspPass {
        // The module here only gives the layouts; pipelines come from the generated sources.
        let (_, layout, pipeline_layout) = compute_layouts(device, "qm esp", &shader_source(0), &binding_types());
        QmEspPass {
            layout,
            pipeline_layout,
            state: Mutex::new(PassState::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PassState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pipelines(&self, device: &wgpu::Device, max_l: usize) -> Arc<Pipelines> {
        if let Some(p) = self.lock().pipelines.get(&max_l) {
            return p.clone();
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("qm esp"),
            source: wgpu::ShaderSource::Wgsl(shader_source(max_l).into()),
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("qm esp"),
                layout: Some(&self.pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let p = Arc::new(Pipelines {
            nuclei: pipeline("qm_esp_nuclei"),
            groups: (0..=max_l).map(|l| pipeline(&format!("qm_esp_group_{l}"))).collect(),
        });
        self.lock().pipelines.insert(max_l, p.clone());
        p
    }

    fn table(&self, device: &wgpu::Device) -> Arc<(wgpu::Buffer, wgpu::Buffer)> {
        if let Some(t) = &self.lock().table {
            return t.clone();
        }
        let tab = boys::table();
        let values: Vec<f32> = tab.values.iter().map(|&v| v as f32).collect();
        let exp_neg: Vec<f32> = tab.exp_neg.iter().map(|&v| v as f32).collect();
        let t = Arc::new((
            storage(device, "qm esp boys table", &values),
            storage(device, "qm esp exp table", &exp_neg),
        ));
        self.lock().table = Some(t.clone());
        t
    }

    fn upload(device: &wgpu::Device, packed: &PackedQmEsp) -> Result<OnDevice, ComputeError> {
        let limits = device.limits();
        let max_bytes = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let bytes = 4 * packed.records.len() as u64;
        if bytes > max_bytes || packed.records.len() > u32::MAX as usize / 2 {
            return Err(ComputeError::Device(format!(
                "wgpu: the wavefunction's {} distributions ({bytes} bytes) exceed this device's storage buffer limit ({max_bytes} bytes)",
                packed.n_distributions
            )));
        }
        Ok(OnDevice {
            max_l: packed.max_l,
            records: storage(device, "qm esp distributions", &packed.records),
            nuclei: storage(device, "qm esp nuclei", &packed.nuclei),
            groups: packed.groups.clone(),
            n_nuclei: packed.nuclei.len() / NUCLEUS_WORDS,
        })
    }

    fn on_device(
        &self,
        device: &wgpu::Device,
        wf: &Arc<Wavefunction>,
        lattice: &Lattice,
    ) -> Result<Arc<OnDevice>, ComputeError> {
        if let Some((last_wf, last_lattice, d)) = &self.lock().last
            && Arc::ptr_eq(last_wf, wf)
            && last_lattice.origin_bohr == lattice.origin_bohr
            && last_lattice.steps_bohr == lattice.steps_bohr
        {
            return Ok(d.clone());
        }
        let prep = PreparedQmEsp::new(wf)?;
        let packed = PackedQmEsp::new(&prep, lattice)?;
        let d = Arc::new(QmEspPass::upload(device, &packed)?);
        self.lock().last = Some((wf.clone(), *lattice, d.clone()));
        Ok(d)
    }

    /// The potential (hartree/e) of `wf` on the planes `z_range` of `lattice` into `out` (x fastest,
    /// exactly the slab's length), computed and read back.
    #[allow(clippy::too_many_arguments)]
    pub fn slab(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        wf: &Arc<Wavefunction>,
        lattice: &Lattice,
        z_range: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ComputeError> {
        let need = crate::compute::slab_len(lattice, &z_range);
        if out.len() != need || z_range.end > lattice.dims[2] {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if need == 0 {
            return Ok(());
        }
        let on = self.on_device(device, wf, lattice)?;
        self.run(device, queue, &on, lattice, z_range, out)
    }

    /// As [`QmEspPass::slab`] from records already packed for `lattice` (uploaded
    /// for this call alone): tests hold the pass to altered inputs with it.
    #[allow(clippy::too_many_arguments)]
    pub fn slab_packed(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        packed: &PackedQmEsp,
        lattice: &Lattice,
        z_range: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ComputeError> {
        let need = crate::compute::slab_len(lattice, &z_range);
        if out.len() != need || z_range.end > lattice.dims[2] {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if need == 0 {
            return Ok(());
        }
        let on = QmEspPass::upload(device, packed)?;
        self.run(device, queue, &on, lattice, z_range, out)
    }

    fn run(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        on: &OnDevice,
        lattice: &Lattice,
        z_range: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ComputeError> {
        let [nx, ny, _] = lattice.dims;
        let need = crate::compute::slab_len(lattice, &z_range);
        let limits = device.limits();
        let per_dim = limits.max_compute_workgroups_per_dimension as usize;
        let acc_bytes = 8 * need as u64;
        let gx = nx.div_ceil(WX as usize);
        let gy = ny.div_ceil(WY as usize);
        if gx > per_dim
            || gy > per_dim
            || acc_bytes > limits.max_storage_buffer_binding_size.min(limits.max_buffer_size)
            || nx > u32::MAX as usize / 4
            || ny > u32::MAX as usize / 4
            || need > u32::MAX as usize / 2
        {
            return Err(ComputeError::Device(format!(
                "wgpu: a {nx} x {ny} lattice slab of {} planes exceeds this device's dispatch limits",
                z_range.len()
            )));
        }
        let pipes = self.pipelines(device, on.max_l);
        let table = self.table(device);
        let acc = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("qm esp accumulator"),
            size: acc_bytes.max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let s = lattice.steps_bohr;
        let v4 = |v: [f64; 3]| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("qm esp") });
        let mut k0 = z_range.start;
        while k0 < z_range.end {
            let planes = (z_range.end - k0).min(per_dim);
            let base = QmEspParams {
                step_x: v4(s[0]),
                step_y: v4(s[1]),
                step_z: v4(s[2]),
                dims: [nx as u32, ny as u32, planes as u32, k0 as u32],
                keep: 1,
                min2: (MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR) as f32,
                out_plane: (k0 - z_range.start) as u32,
                ..QmEspParams::default()
            };
            let mut launch = |pipeline: &wgpu::ComputePipeline, params: QmEspParams, buf: &wgpu::Buffer| {
                let bind_group = params_bind_group(
                    device,
                    &self.layout,
                    "qm esp",
                    &params,
                    &[buf, &table.0, &table.1, &acc],
                );
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("qm esp"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(gx as u32, gy as u32, planes as u32);
            };
            let nuclei = QmEspParams {
                base: 0,
                count: on.n_nuclei as u32,
                stride: NUCLEUS_WORDS as u32,
                ..base
            };
            launch(&pipes.nuclei, nuclei, &on.nuclei);
            for g in &on.groups {
                let Some(pipeline) = pipes.groups.get(g.l) else {
                    return Err(ComputeError::Device(format!("wgpu: no pipeline for L = {}", g.l)));
                };
                let mut first = 0;
                while first < g.count {
                    let count = (g.count - first).min(RECORDS_PER_DISPATCH);
                    let params = QmEspParams {
                        base: (g.base + first * g.stride) as u32,
                        count: count as u32,
                        stride: g.stride as u32,
                        ..base
                    };
                    launch(pipeline, params, &on.records);
                    first += count;
                }
            }
            k0 += planes;
        }
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &acc, acc_bytes).map_err(device_err)?;
        for (o, w) in out.iter_mut().zip(raw.chunks_exact(8)) {
            let s = f32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
            let c = f32::from_ne_bytes([w[4], w[5], w[6], w[7]]);
            *o = (f64::from(s) - f64::from(c)) as f32;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn shader_parses_and_its_layout_matches_the_host() {
        for max_l in [0, 2, 8, crate::compute::qm_esp::nuclear_attraction::MAX_PAIR_L] {
            let src = shader_source(max_l);
            let module = wgpu::naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("L {max_l}: {}", e.emit_to_string(&src)));
            let mut v = wgpu::naga::valid::Validator::new(
                wgpu::naga::valid::ValidationFlags::all(),
                wgpu::naga::valid::Capabilities::empty(),
            );
            v.validate(&module).unwrap_or_else(|e| panic!("L {max_l}: {e:?}"));
            assert_eq!(
                crate::compute::wgpu::wgsl_type_size(&module, "Params"),
                std::mem::size_of::<QmEspParams>()
            );
            for l in 0..=max_l {
                assert!(
                    module
                        .entry_points
                        .iter()
                        .any(|e| e.name == format!("qm_esp_group_{l}"))
                );
            }
        }
        for (name, v) in [("QM_WX", WX), ("QM_WY", WY), ("QM_BLOCK", BLOCK)] {
            assert!(SHADER_BODY.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
    }

    #[test]
    fn generated_polynomials_use_every_coefficient_once() {
        for lay in layouts() {
            let mut s = String::new();
            group_source(lay, &mut s);
            for e in 0..lay.n_coefs() {
                assert_eq!(s.matches(&format!("records[q + {e}u]")).count(), 1, "L {}: {e}", lay.l);
            }
            assert_eq!(s.matches("let m").count(), lay.monomials.len());
        }
    }

    /// Two atoms with s (one very tight), p, d (pure) and f (Cartesian) shells and a random symmetric
    /// density: every L up to 6, exponents up to 1e5.
    fn test_wavefunction() -> Wavefunction {
        use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind};
        let mut shells = Vec::new();
        for (atom, c) in [[0.0, 0.0, 0.0], [1.4, -0.3, 0.8]].into_iter().enumerate() {
            for (l, pure, e) in [
                (0u8, false, vec![1.0e5, 3.0, 0.5]),
                (1, false, vec![0.9]),
                (2, true, vec![0.7]),
                (3, false, vec![1.1]),
            ] {
                shells.push(Shell {
                    l,
                    pure,
                    atom,
                    center_bohr: c,
                    exponents: e.clone(),
                    coefficients: vec![1.0; e.len()],
                });
            }
        }
        let basis = BasisSet { shells };
        let n = basis.n_functions();
        let mut seed = 0x2545_f491u64;
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let v = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                d[i * n + j] = v;
                d[j * n + i] = v;
            }
        }
        Wavefunction {
            atoms: vec![
                QmAtom {
                    element: Element(8),
                    nuclear_charge: 8.0,
                    position_bohr: [0.0; 3],
                },
                QmAtom {
                    element: Element(1),
                    nuclear_charge: 1.0,
                    position_bohr: [1.4, -0.3, 0.8],
                },
            ],
            basis,
            spin: SpinKind::Restricted,
            alpha: OrbitalSet {
                n_basis: n,
                ..OrbitalSet::default()
            },
            beta: None,
            program: None,
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: Some(crate::model::wavefunction::DensityMatrix { n_basis: n, values: d }),
        }
    }

    /// The rescaled records (f32) evaluated in f64 equal the CPU engine's scalar form: the
    /// rescaling is exact algebra, only the records' f32 rounding remains (a few 1e-8 of the sum
    /// of absolute terms).
    #[test]
    fn rescaled_records_equal_the_cpu_form() {
        let prep = PreparedQmEsp::new(&test_wavefunction()).unwrap();
        let lattice = Lattice {
            origin_bohr: [-3.0, -2.5, -4.0],
            steps_bohr: [[0.31, 0.02, -0.01], [0.0, 0.29, 0.03], [0.05, 0.0, 0.33]],
            dims: [30, 30, 30],
        };
        let packed = PackedQmEsp::new(&prep, &lattice).unwrap();
        assert_eq!(packed.max_l, 6);
        assert!(packed.records.iter().all(|v| v.is_finite() && v.abs() < 1e30));
        let mut worst: f64 = 0.0;
        for (k, r) in [0.0, 0.003, 0.05, 0.3, 1.0, 2.5, 7.0, 20.0, 60.0]
            .into_iter()
            .enumerate()
        {
            let dir = [0.6, -0.48, 0.64];
            for centre in [[0.0, 0.0, 0.0], [1.4, -0.3, 0.8], [0.7, -0.15, 0.4]] {
                let p: [f64; 3] = std::array::from_fn(|a| centre[a] + r * dir[a] + 1e-3 * k as f64);
                let want = prep.value_at(p);
                let [hi, lo] = lattice_coordinates(&lattice, p);
                let got = packed.value_at(std::array::from_fn(|a| f64::from(hi[a]) + f64::from(lo[a])));
                let scale = prep.nuclei.iter().map(|(c, z)| {
                    z / (0..3)
                        .map(|a| (c[a] - p[a]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                        .max(MIN_DISTANCE_BOHR)
                });
                let rel = (got - want).abs() / scale.sum::<f64>();
                worst = worst.max(rel);
                assert!(
                    rel < 5e-8,
                    "{p:?}: {got} vs {want} (relative to the nuclear term {rel:.1e})"
                );
            }
        }
        println!("worst difference relative to the nuclear potential {worst:.1e}");
    }

    #[test]
    fn lattice_coordinates_round_trip_and_flat_lattices_are_refused() {
        let lattice = Lattice {
            origin_bohr: [10.0, -20.0, 3.0],
            steps_bohr: [[0.3, 0.01, 0.0], [-0.02, 0.25, 0.05], [0.0, 0.1, 0.4]],
            dims: [4, 4, 4],
        };
        let p = [11.234_567_891, -19.876_543_21, 3.5];
        let [hi, lo] = lattice_coordinates(&lattice, p);
        let c: [f64; 3] = std::array::from_fn(|a| f64::from(hi[a]) + f64::from(lo[a]));
        for (k, want) in p.iter().enumerate() {
            let back = lattice.origin_bohr[k] + (0..3).map(|a| c[a] * lattice.steps_bohr[a][k]).sum::<f64>();
            assert!((back - want).abs() < 1e-12, "{back} vs {want}");
        }
        let prep = PreparedQmEsp::new(&test_wavefunction()).unwrap();
        let mut flat = lattice;
        flat.steps_bohr[2] = [0.6, 0.02, 0.0];
        assert!(matches!(
            PackedQmEsp::new(&prep, &flat),
            Err(ComputeError::WrongInput(..))
        ));
    }
}
