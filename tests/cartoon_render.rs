//! `render --rep "protein:cartoon"` end to end (Mesa lavapipe in CI): a helix-rich and a
//! strand-rich real protein drawn as cartoons show the helix colour and the strand colour of the
//! secondary-structure scheme in proportion to what DSSP finds, while the same selection drawn as
//! lines shows neither; the strand-rich protein's strand arrows (2 Angstrom wide) cover more of the
//! image than its tube (1 Angstrom) does along the same residues; a cartoon or atoms given one
//! colour show that colour and no other scheme's. Skipped (with a message) where no graphics adapter exists.

#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dssp").join(name)
}

fn adapter_present() -> bool {
    match orbitfield::render::RenderContext::headless(1) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipping: {e}");
            false
        }
    }
}

/// `orbitfield render FILE --rep REP` into a 320x240 PNG on a black background, zoomed in (the
/// crystal waters widen the default framing).
fn render(file: &Path, rep: &str, dir: &Path) -> image::RgbaImage {
    let out = dir.join(format!("{}.png", rep.replace([':', ' '], "_")));
    let run = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(file)
        .args(["--rep", rep, "--size", "320x240", "--zoom", "0.5", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "render --rep {rep:?} failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    image::open(&out).unwrap().to_rgba8()
}

/// Pixels of the helix colour (magenta: red and blue well above green) and of the strand colour
/// (yellow: red and green well above blue), and all pixels not background, in `img`.
fn census(img: &image::RgbaImage) -> (usize, usize, usize) {
    let (mut helix, mut strand, mut drawn) = (0, 0, 0);
    for p in img.pixels() {
        let [r, g, b, _] = p.0.map(i32::from);
        if r + g + b > 30 {
            drawn += 1;
        }
        if r > 60 && r > g + 60 && b > g + 25 {
            helix += 1;
        }
        if r > 60 && g > 60 && r > b + 80 && g > b + 80 {
            strand += 1;
        }
    }
    (helix, strand, drawn)
}

#[test]
fn helix_and_strand_colours_show_in_cartoons_and_not_in_lines() {
    if !adapter_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 4gcnA: helix-rich; 1ahsA: strand-rich (tests/data/dssp/README.md).
    let helical = data("4gcnA.pdb.gz");
    let stranded = data("1ahsA.pdb.gz");

    let (h_helix, h_strand, h_drawn) = census(&render(&helical, "protein:cartoon", dir.path()));
    let (s_helix, s_strand, s_drawn) = census(&render(&stranded, "protein:cartoon", dir.path()));
    eprintln!("4gcnA cartoon: helix {h_helix}, strand {h_strand}, drawn {h_drawn}");
    eprintln!("1ahsA cartoon: helix {s_helix}, strand {s_strand}, drawn {s_drawn}");
    assert!(
        h_drawn > 2000 && s_drawn > 2000,
        "the cartoons cover too little of the image"
    );
    assert!(
        h_helix > h_drawn / 5,
        "helix-rich protein: {h_helix} helix pixels of {h_drawn}"
    );
    assert!(
        h_helix > 4 * h_strand,
        "helix-rich protein: helix {h_helix} vs strand {h_strand}"
    );
    assert!(
        s_strand > s_drawn / 5,
        "strand-rich protein: {s_strand} strand pixels of {s_drawn}"
    );
    assert!(
        s_strand > 4 * s_helix,
        "strand-rich protein: strand {s_strand} vs helix {s_helix}"
    );

    // Atoms drawn as lines, coloured by element, have neither colour (sulfur's few bonds aside).
    let (l_helix, l_strand, l_drawn) = census(&render(&helical, "protein:lines", dir.path()));
    eprintln!("4gcnA lines: helix {l_helix}, strand {l_strand}, drawn {l_drawn}");
    assert!(l_drawn > 1000, "the lines cover too little of the image");
    assert!(
        l_helix + l_strand < h_helix / 20,
        "lines show cartoon colours: helix {l_helix}, strand {l_strand}"
    );

    // Strand arrows are wider than the tube through the same residues.
    let (_, t_strand, t_drawn) = census(&render(&stranded, "protein:tube", dir.path()));
    eprintln!("1ahsA tube: strand {t_strand}, drawn {t_drawn}");
    assert!(t_strand > s_drawn / 10, "the tube keeps the strand colour: {t_strand}");
    assert!(
        s_strand as f64 > 1.3 * t_strand as f64,
        "strand arrows {s_strand} pixels vs tube {t_strand}"
    );

    // By chain: one chain, one hue, neither the helix nor the strand colour dominates by accident.
    let (c_helix, c_strand, c_drawn) = census(&render(&helical, "protein:cartoon:chain", dir.path()));
    eprintln!("4gcnA by chain: helix {c_helix}, strand {c_strand}, drawn {c_drawn}");
    assert!(c_drawn > 2000);
    assert!(c_helix < h_helix / 2, "colouring by chain still shows the helix colour");

    // One colour: an orange cartoon shows no helix colour, and orange where the helices were.
    let orange = |img: &image::RgbaImage| {
        img.pixels()
            .filter(|p| {
                let [r, g, b, _] = p.0.map(i32::from);
                // Orange lit and shaded: red above green above blue, blue well below both.
                r > 60 && r > g + 15 && g > b + 20 && r > b + 80
            })
            .count()
    };
    let solid = render(&helical, "protein:cartoon:orange", dir.path());
    let (o_helix, _, o_drawn) = census(&solid);
    let o_orange = orange(&solid);
    eprintln!("4gcnA orange: helix {o_helix}, orange {o_orange}, drawn {o_drawn}");
    assert!(o_drawn > 2000);
    assert!(o_helix < h_helix / 20, "an orange cartoon shows the helix colour");
    assert!(o_orange > o_drawn / 2, "orange {o_orange} of {o_drawn} pixels");
    let by_ss = render(&helical, "protein:cartoon", dir.path());
    assert!(
        orange(&by_ss) < o_orange / 10,
        "the secondary-structure cartoon is orange already"
    );

    // Atoms in one colour (#2040ff): blue dominates, element colours are gone.
    let blue = render(&helical, "protein:vdw:#2040ff", dir.path());
    let (mut bluish, mut drawn) = (0, 0);
    for p in blue.pixels() {
        let [r, g, b, _] = p.0.map(i32::from);
        if r + g + b > 30 {
            drawn += 1;
            if b > r + 40 && b > g + 20 {
                bluish += 1;
            }
        }
    }
    eprintln!("4gcnA vdw #2040ff: blue {bluish} of {drawn}");
    assert!(drawn > 2000 && bluish > drawn * 9 / 10, "blue {bluish} of {drawn}");
}
