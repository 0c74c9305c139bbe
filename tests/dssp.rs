//! Secondary structure (DSSP) against mkdssp 4.2.2 (8 states) and MDAnalysis 2.11 (3 states) on
//! X-ray structures (with alternate locations), NMR ensembles and an MD trajectory. The references
//! were made once by `tests/data/dssp/make_reference.py` (see its header and the README there).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::dssp::{DsspOptions, ProteinBackbone, SecondaryStructure};
use orbitfield::io;
use orbitfield::model::Structure;
use std::collections::HashMap;

#[path = "common/jitter.rs"]
mod jitter;
use jitter::{fresh_seed, jitter};
#[path = "common/dssp_reference.rs"]
mod dssp_reference;
use dssp_reference::{data, load_entry, reference, reference_cases};

/// "chain resid resname" of every protein residue, the chain being the segment where there is no
/// chain label (as the reference script names them).
fn keys(s: &Structure, backbone: &ProteinBackbone) -> Vec<String> {
    let starts = s.residue_starts();
    backbone
        .residues
        .iter()
        .map(|r| {
            let a = starts[r.residue];
            let chain = if s.chains[a].is_empty() {
                s.segids[a]
            } else {
                s.chains[a]
            };
            format!("{} {} {}", chain.as_str(), s.resids[a], s.resnames[a].as_str())
        })
        .collect()
}

/// The PDB writer's rounding (0.001 A), which the mkdssp input of trajectory frames went through.
fn as_written_to_pdb(p: &mut [[f32; 3]]) {
    for x in p.iter_mut().flatten() {
        *x = format!("{:.3}", f64::from(*x)).parse().unwrap();
    }
}

#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    equal: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, same: bool) {
        self.total += 1;
        self.equal += usize::from(same);
    }
    fn percent(&self) -> f64 {
        100.0 * self.equal as f64 / self.total.max(1) as f64
    }
}

struct Comparison {
    name: String,
    residues: usize,
    frames: usize,
    /// Ours against mkdssp, 8 states; and both reduced to 3 states.
    mkdssp8: Tally,
    mkdssp3: Tally,
    /// Ours against MDAnalysis, 3 states.
    mdanalysis3: Tally,
    /// mkdssp against MDAnalysis, 3 states (where both assigned the residue).
    mkdssp_vs_mdanalysis: Tally,
    mismatches: Vec<String>,
}

fn compare(entry: &serde_json::Value) -> Comparison {
    let name = entry["name"].as_str().unwrap().to_string();
    let mut system = load_entry(entry);
    let backbone = ProteinBackbone::new(&system.structure);
    let ours = keys(&system.structure, &backbone);
    let theirs: Vec<&str> = entry["residues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    // Residue keys repeated in the reference (insertion codes, which the readers do not keep) are
    // left out; every other reference residue must be one of ours.
    let mut count: HashMap<&str, usize> = HashMap::new();
    for k in &theirs {
        *count.entry(k).or_default() += 1;
    }
    let index: HashMap<&str, usize> = theirs
        .iter()
        .enumerate()
        .filter(|(_, k)| count[*k] == 1)
        .map(|(i, k)| (*k, i))
        .collect();
    let matched: Vec<Option<usize>> = ours.iter().map(|k| index.get(k.as_str()).copied()).collect();
    let found = matched.iter().flatten().count();
    assert!(
        found + 2 * count.values().filter(|&&c| c > 1).count() >= theirs.len(),
        "{name}: only {found} of {} reference residues found among ours",
        theirs.len()
    );
    let frames = entry["frames"].as_u64().unwrap() as usize;
    assert_eq!(system.trajectory.n_frames(), frames, "{name}: frame count");
    let mut out = Comparison {
        name: name.clone(),
        residues: ours.len(),
        frames,
        mkdssp8: Tally::default(),
        mkdssp3: Tally::default(),
        mdanalysis3: Tally::default(),
        mkdssp_vs_mdanalysis: Tally::default(),
        mismatches: Vec::new(),
    };
    let options = DsspOptions::default();
    for f in 0..frames {
        let positions = system.trajectory.frame(f).unwrap().positions_angstrom;
        let mut rounded = positions.clone();
        if name == "adk" {
            as_written_to_pdb(&mut rounded);
        }
        let ss_mk = backbone.assign(&rounded, &options);
        let ss = backbone.assign(&positions, &options);
        let mk: Vec<char> = entry["mkdssp"][f].as_str().unwrap().chars().collect();
        let md: Vec<char> = entry["mdanalysis"][f].as_str().unwrap().chars().collect();
        for (k, m) in matched.iter().enumerate() {
            let Some(r) = *m else { continue };
            if let Some(want) = mk.get(r).copied().filter(|&c| c != '?') {
                let want_ss = SecondaryStructure::from_code(want).unwrap();
                out.mkdssp8.add(ss_mk[k] == want_ss);
                out.mkdssp3.add(ss_mk[k].three_state() == want_ss.three_state());
                if ss_mk[k] != want_ss && out.mismatches.len() < 20 {
                    out.mismatches
                        .push(format!("frame {f} {}: ours {} mkdssp {want}", ours[k], ss_mk[k].code()));
                }
            }
            if let Some(want) = md.get(r).copied().filter(|&c| c != '?') {
                out.mdanalysis3.add(ss[k].three_state() == want);
                if let Some(m) = mk.get(r).copied().filter(|&c| c != '?') {
                    let m = SecondaryStructure::from_code(m).unwrap();
                    out.mkdssp_vs_mdanalysis.add(m.three_state() == want);
                }
            }
        }
    }
    out
}

#[test]
fn dssp_matches_mkdssp_and_mdanalysis() {
    let reference = reference();
    let mut all8 = Tally::default();
    let mut all3 = Tally::default();
    let mut failures = Vec::new();
    for entry in reference["structures"].as_array().unwrap() {
        let c = compare(entry);
        println!(
            "{:16} {:4} residues x {:3} frames: mkdssp 8-state {:7.3} % ({}/{}), 3-state {:7.3} %; MDAnalysis 3-state {:7.3} % ({}/{}; mkdssp vs MDAnalysis {:7.3} %)",
            c.name,
            c.residues,
            c.frames,
            c.mkdssp8.percent(),
            c.mkdssp8.equal,
            c.mkdssp8.total,
            c.mkdssp3.percent(),
            c.mdanalysis3.percent(),
            c.mdanalysis3.equal,
            c.mdanalysis3.total,
            c.mkdssp_vs_mdanalysis.percent()
        );
        for m in &c.mismatches {
            println!("    {m}");
        }
        assert!(
            c.mkdssp8.total > 0 && c.mdanalysis3.total > 0,
            "{}: nothing compared",
            c.name
        );
        if c.mkdssp8.equal != c.mkdssp8.total {
            failures.push(format!(
                "{}: {} residues differ from mkdssp",
                c.name,
                c.mkdssp8.total - c.mkdssp8.equal
            ));
        }
        // MDAnalysis's DSSP simplifies the ladder rules (no bulges), so on a few structures mkdssp
        // itself agrees with it on fewer than 95 % of residues: there, no less than mkdssp does.
        let floor = 95.0f64.min(c.mkdssp_vs_mdanalysis.percent() - 1e-9);
        if c.mdanalysis3.percent() < floor {
            failures.push(format!(
                "{}: {:.2} % agreement with MDAnalysis (mkdssp: {:.2} %)",
                c.name,
                c.mdanalysis3.percent(),
                c.mkdssp_vs_mdanalysis.percent()
            ));
        }
        all8.equal += c.mkdssp8.equal;
        all8.total += c.mkdssp8.total;
        all3.equal += c.mdanalysis3.equal;
        all3.total += c.mdanalysis3.total;
    }
    println!(
        "all: mkdssp 8-state {:.3} % of {} residue-frames, MDAnalysis 3-state {:.3} % of {}",
        all8.percent(),
        all8.total,
        all3.percent(),
        all3.total
    );
    assert!(
        all3.percent() >= 95.0,
        "{:.3} % agreement with MDAnalysis over all",
        all3.percent()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn missing_atoms_and_garbage_positions_do_not_panic() {
    let mut system = io::load(&[data("dssp/4gcnA.pdb.gz")]).unwrap();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let backbone = ProteinBackbone::new(&system.structure);
    let full = backbone.assign(&positions, &DsspOptions::default());
    assert_eq!(full.len(), backbone.len());
    assert!(full.contains(&SecondaryStructure::AlphaHelix));
    // Too few positions, NaN and infinite coordinates, every atom on one point.
    let short = backbone.assign(&positions[..positions.len() / 2], &DsspOptions::default());
    assert_eq!(short.len(), backbone.len());
    let mut broken = positions.clone();
    for (i, p) in broken.iter_mut().enumerate() {
        if i % 7 == 0 {
            *p = [f32::NAN, 0.0, f32::INFINITY];
        }
    }
    assert_eq!(backbone.assign(&broken, &DsspOptions::default()).len(), backbone.len());
    let same = vec![[1.0f32, 2.0, 3.0]; positions.len()];
    let ss = backbone.assign(&same, &DsspOptions::default());
    assert_eq!(ss.len(), backbone.len());
    let far: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x * 1e7)).collect();
    assert!(
        backbone
            .assign(&far, &DsspOptions::default())
            .iter()
            .all(|&s| s == SecondaryStructure::Coil)
    );
    // An empty structure and an empty frame.
    assert!(
        ProteinBackbone::new(&Structure::default())
            .assign(&[], &DsspOptions::default())
            .is_empty()
    );
    assert_eq!(
        backbone.assign(&[], &DsspOptions::default()),
        vec![SecondaryStructure::Coil; backbone.len()]
    );
}

#[test]
fn removing_a_residue_breaks_the_chain_there() {
    // Deleting the CA of one residue mid-helix breaks the chain there: no 4-turn spans the gap, so
    // neither neighbour can be inside a minimal helix (H at j needs turns starting at i-1 and i with
    // i <= j <= i+3, each turn's four residues unbroken).
    let mut system = io::load(&[data("dssp/4gcnA.pdb.gz")]).unwrap();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let backbone = ProteinBackbone::new(&system.structure);
    let full = backbone.assign(&positions, &DsspOptions::default());
    let mid = (4..full.len() - 4)
        .find(|&k| full[k - 4..=k + 4].iter().all(|&s| s == SecondaryStructure::AlphaHelix))
        .expect("a helix of nine residues");
    let mut cut = positions.clone();
    let r = backbone.residues[mid];
    cut[r.ca.unwrap() as usize] = [f32::NAN; 3];
    let ss = backbone.assign(&cut, &DsspOptions::default());
    assert_eq!(ss[mid], SecondaryStructure::Coil);
    assert_ne!(ss[mid - 1], SecondaryStructure::AlphaHelix);
    assert_ne!(ss[mid + 1], SecondaryStructure::AlphaHelix);
}

#[test]
fn cartoon_of_a_helix_rich_and_a_strand_rich_protein() {
    use orbitfield::analysis::polymer::{Coloring, Polymer, secondary_structure_color};
    use orbitfield::surface::cartoon::CartoonParams;
    for (file, main) in [
        ("dssp/4gcnA.pdb.gz", SecondaryStructure::AlphaHelix),
        ("dssp/3aqgA.pdb.gz", SecondaryStructure::Strand),
    ] {
        let mut system = io::load(&[data(file)]).unwrap();
        let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
        let polymer = Polymer::new(&system.structure);
        let (ss, mesh) = polymer.mesh(
            &positions,
            Coloring::SecondaryStructure,
            None,
            &CartoonParams::default(),
        );
        assert_eq!(ss, polymer.protein.assign(&positions, &DsspOptions::default()));
        assert!(!mesh.is_empty(), "{file}");
        assert_eq!(mesh.colors_rgba8.len(), mesh.positions_angstrom.len());
        for (p, n) in mesh.positions_angstrom.iter().zip(&mesh.normals) {
            assert!(p.iter().all(|x| x.is_finite()));
            let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((l - 1.0).abs() < 1e-3, "{file}: normal length {l}");
        }
        // The dominant class is drawn: a good share of the vertices carry its colour.
        let colour = secondary_structure_color(main);
        let share = mesh.colors_rgba8.iter().filter(|&&c| c == colour).count() as f64 / mesh.colors_rgba8.len() as f64;
        assert!(
            share > 0.2,
            "{file}: {:.1} % of vertices in the {main:?} colour",
            100.0 * share
        );
        // Every vertex lies within a few Angstrom of some CA.
        let cas: Vec<[f32; 3]> = polymer
            .protein
            .residues
            .iter()
            .filter_map(|r| r.ca)
            .map(|i| positions[i as usize])
            .collect();
        for p in mesh.positions_angstrom.iter().step_by(97) {
            let d = cas
                .iter()
                .map(|c| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt())
                .fold(f32::INFINITY, f32::min);
            assert!(d < 4.0, "{file}: vertex {p:?} is {d} A from the nearest CA");
        }
    }
}

/// Copies of adk far apart on a grid (each its own segment): every copy gets the codes of adk alone,
/// through a cell list of many cells and the parallel passes.
#[test]
fn copies_on_a_grid_each_get_the_codes_of_one() {
    use orbitfield::analysis::polymer::replicate_on_grid;
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let one = system.trajectory.frame(3).unwrap().positions_angstrom;
    let options = DsspOptions::default();
    let backbone = ProteinBackbone::new(&system.structure);
    let want = backbone.assign(&one, &options);
    assert!(want.contains(&SecondaryStructure::AlphaHelix) && want.contains(&SecondaryStructure::Strand));
    let copies = 30;
    let (big, positions) = replicate_on_grid(&system.structure, &one, copies, 60.0);
    let big_backbone = ProteinBackbone::new(&big);
    let got = big_backbone.assign(&positions, &options);
    assert_eq!(got.len(), want.len() * copies);
    for (k, chunk) in got.chunks(want.len()).enumerate() {
        assert_eq!(
            orbitfield::analysis::dssp::codes(chunk),
            orbitfield::analysis::dssp::codes(&want),
            "copy {k}"
        );
    }
}

/// Jittered copies of adk (each copy its own codes): the codes are the same on one thread, on the
/// global pool and on three threads, with a workspace that held a larger system before, and equal
/// to each copy's codes computed alone.
#[test]
fn codes_do_not_depend_on_threads_chunks_or_reused_buffers() {
    use orbitfield::analysis::dssp::{DsspWorkspace, codes};
    use orbitfield::analysis::polymer::replicate_on_grid;
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let one = system.trajectory.frame(0).unwrap().positions_angstrom;
    let copies = 60;
    let (big, mut positions) = replicate_on_grid(&system.structure, &one, copies, 60.0);
    // Fresh jitter (splitmix64 from the clock), so that the copies differ.
    let seed = fresh_seed(7);
    jitter(&mut positions, 0.6, seed);
    let options = DsspOptions::default();
    let backbone = ProteinBackbone::new(&big);
    let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let serial = pool(1).install(|| backbone.assign(&positions, &options));
    let global = backbone.assign(&positions, &options);
    assert_eq!(
        codes(&serial),
        codes(&global),
        "seed {seed}: 1 thread vs the global pool"
    );
    // A workspace used for a larger system first (then this one twice).
    let mut ws = DsspWorkspace::default();
    let (bigger, bigger_positions) = replicate_on_grid(&system.structure, &one, copies + 17, 55.0);
    let mut out = Vec::new();
    ProteinBackbone::new(&bigger).assign_into(&bigger_positions, &options, &mut ws, &mut out);
    for _ in 0..2 {
        pool(3).install(|| backbone.assign_into(&positions, &options, &mut ws, &mut out));
        assert_eq!(
            codes(&out),
            codes(&serial),
            "seed {seed}: reused workspace on 3 threads"
        );
    }
    assert!(ws.times().hbonds_ms > 0.0 && ws.times().total_ms() >= ws.times().hbonds_ms);
    // Each copy alone.
    let per_copy = serial.len() / copies;
    let atoms = one.len();
    let alone = ProteinBackbone::new(&system.structure);
    let mut differ = 0;
    let first = codes(&serial[..per_copy]);
    for k in 0..copies {
        let got = codes(&serial[k * per_copy..(k + 1) * per_copy]);
        differ += usize::from(got != first);
        let want = codes(&alone.assign(&positions[k * atoms..(k + 1) * atoms], &options));
        assert_eq!(got, want, "seed {seed}: copy {k}");
    }
    assert!(differ > 0, "seed {seed}: the jitter left every copy alike");
}

/// The device path's split (the per-residue flags and bridges the device writes, here computed
/// by the CPU's own passes, then the host's finishing passes) gives the CPU path's codes: on every
/// reference structure's frames whose residues are all usable, and on jittered copies of adk, for
/// the polyproline options; also with every decided bend and polyproline flag turned "unsure", so
/// that the host's own decisions of those are exercised.
#[test]
fn device_split_gives_the_cpu_codes() {
    use orbitfield::analysis::dssp::{DeviceDssp, DsspWorkspace, codes, device_flags};
    use orbitfield::analysis::polymer::replicate_on_grid;
    let mut cases = reference_cases(3);
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let one = system.trajectory.frame(0).unwrap().positions_angstrom;
    let (big, mut positions) = replicate_on_grid(&system.structure, &one, 40, 60.0);
    let seed = fresh_seed(11);
    jitter(&mut positions, 0.8, seed);
    cases.push((format!("adk x 40, jittered (seed {seed})"), big, vec![positions]));
    let mut ws = DsspWorkspace::default();
    let mut out = Vec::new();
    let mut checked = 0;
    for (name, structure, frames) in &cases {
        let backbone = ProteinBackbone::new(structure);
        for (f, positions) in frames.iter().enumerate() {
            let mut source = Vec::new();
            backbone.complete_residues(&mut source);
            let mut columns = vec![0.0f32; 12 * source.len()];
            let gathered = backbone.gather_columns(positions, &source, &mut columns);
            let passes = backbone.device_passes_on_cpu(positions);
            assert_eq!(gathered.is_some(), passes.is_some(), "{name} frame {f}");
            let Some((flags, hits)) = passes else { continue };
            let unsure: Vec<u8> = flags
                .iter()
                .map(|&b| {
                    let mut b = b;
                    if b & device_flags::BEND != 0 {
                        b = (b & !device_flags::BEND) | device_flags::BEND_UNSURE;
                    }
                    if b & device_flags::POLYPROLINE != 0 {
                        b = (b & !device_flags::POLYPROLINE) | device_flags::POLYPROLINE_UNSURE;
                    }
                    b
                })
                .collect();
            for pp in [3, 2, 0] {
                let options = DsspOptions {
                    pp_min_stretch: pp,
                    ..DsspOptions::default()
                };
                let want = codes(&backbone.assign(positions, &options));
                for (what, flags) in [("flags", &flags), ("unsure flags", &unsure)] {
                    let device = DeviceDssp {
                        source: &source,
                        columns: &columns,
                        flags,
                        hits: &hits,
                    };
                    backbone.finish_from_device(&device, &options, &mut ws, &mut out);
                    assert_eq!(codes(&out), want, "{name} frame {f}, pp {pp}, {what}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} frames had every residue usable");
}

/// The selection words `helix`, `sheet`, `turn` and `coil` pick each reference protein's residues
/// by mkdssp's codes (H G I; E B; T; the rest), atom by atom of the residue.
#[test]
fn secondary_structure_selections_follow_mkdssp() {
    use orbitfield::model::select::Selection;
    orbitfield::analysis::dssp::use_for_selections();
    let reference = reference();
    for name in ["4gcnA", "3aqgA", "1ahsA"] {
        let entry = reference["structures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap();
        let mut system = load_entry(entry);
        let frame = system.trajectory.frame(0).unwrap();
        let structure = &system.structure;
        let backbone = ProteinBackbone::new(structure);
        let codes: Vec<char> = entry["mkdssp"][0].as_str().unwrap().chars().collect();
        assert_eq!(codes.len(), backbone.residues.len(), "{name}");
        let starts = structure.residue_starts();
        for (word, class) in [("helix", "HGI"), ("sheet", "EB"), ("turn", "T"), ("coil", "-SP ")] {
            let selected = Selection::parse(word).unwrap().evaluate(structure, Some(&frame));
            let mut want = vec![false; structure.len()];
            for (r, c) in backbone.residues.iter().zip(&codes) {
                if class.contains(*c) {
                    let end = starts.get(r.residue + 1).copied().unwrap_or(structure.len());
                    want[starts[r.residue]..end].iter_mut().for_each(|w| *w = true);
                }
            }
            let differ = selected.iter().zip(&want).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 0, "{name}: '{word}' differs from mkdssp at {differ} atoms");
            let dominant = matches!(
                (name, word),
                ("4gcnA", "helix") | ("3aqgA", "sheet") | ("1ahsA", "sheet")
            );
            assert!(
                !dominant || want.iter().filter(|&&w| w).count() > 100,
                "{name}: few {word}"
            );
        }
        // Without positions, secondary structure selects nothing.
        assert!(
            !Selection::parse("helix")
                .unwrap()
                .evaluate(structure, None)
                .iter()
                .any(|&x| x)
        );
    }
}
