//! A script's images and movies with the view's measurements and labels drawn in (`save image …
//! labels`, `save movie … labels`), as File > Export image and Record movie draw them: a distance's
//! dashed line and value in the measurement colour, present only when asked, and following the
//! atoms from frame to frame of a movie.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::app::measure::MEASURE_RGB_ON_DARK;
use orbitfield::render::context::RenderContext;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn quoted(p: &Path) -> String {
    format!("\"{}\"", p.display())
}

/// Pixels within 30 of the measurement colour on a dark background, with their positions.
fn measure_pixels(img: &image::RgbaImage) -> Vec<[u32; 2]> {
    img.enumerate_pixels()
        .filter(|(_, _, p)| (0..3).all(|k| (i32::from(p.0[k]) - i32::from(MEASURE_RGB_ON_DARK[k])).abs() < 30))
        .map(|(x, y, _)| [x, y])
        .collect()
}

fn frames_in(dir: &Path) -> Vec<image::RgbaImage> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    names.iter().map(|p| image::open(p).unwrap().to_rgba8()).collect()
}

#[test]
fn images_and_movies_carry_measurements_when_asked() {
    if RenderContext::headless(1).is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("labels.ofc");
    // Two C-alpha atoms far apart in adk (LYS 50 in the NMP domain and GLY 150 in the LID, atoms 735 and 2313 of the PSF: 27 A apart at frame 0, 43 A at frame 80), the
    // C-alpha atoms drawn as lines (never the measurement's amber) so the render is quick.
    std::fs::write(
        &script,
        format!(
            "open {} {}\nrep delete all\nrep add lines \"name CA\"\n\
             measure distance 735 2313\n\
             save image plain.png size 480x360\nsave image labelled.png size 480x360 labels\n\
             save movie plain_frames frames 0:3 size 480x360\n\
             save movie labelled_frames frames 0:98:40 size 480x360 labels\n",
            quoted(&data("md/adk.psf")),
            quoted(&data("md/adk_dims.dcd")),
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .current_dir(dir.path())
        .args(["run", "--headless"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let plain = image::open(dir.path().join("plain.png")).unwrap().to_rgba8();
    let labelled = image::open(dir.path().join("labelled.png")).unwrap().to_rgba8();
    assert!(measure_pixels(&plain).is_empty(), "no measurement drawn unless asked");
    let drawn = measure_pixels(&labelled);
    assert!(
        drawn.len() > 40,
        "the dashed line and its value: {} pixels",
        drawn.len()
    );
    for f in frames_in(&dir.path().join("plain_frames")) {
        assert!(measure_pixels(&f).is_empty(), "no measurement in a plain movie's frame");
    }
    let frames = frames_in(&dir.path().join("labelled_frames"));
    assert_eq!(frames.len(), 3, "frames 0, 40 and 80");
    let centroid = |img: &image::RgbaImage| {
        let p = measure_pixels(img);
        assert!(
            p.len() > 40,
            "a labelled movie frame shows the measurement: {} pixels",
            p.len()
        );
        let n = p.len() as f64;
        [
            p.iter().map(|q| f64::from(q[0])).sum::<f64>() / n,
            p.iter().map(|q| f64::from(q[1])).sum::<f64>() / n,
        ]
    };
    let c: Vec<[f64; 2]> = frames.iter().map(centroid).collect();
    // adk closes its LID and NMP domains over the trajectory: the two atoms move and the line with them.
    let moved = ((c[0][0] - c[2][0]).powi(2) + (c[0][1] - c[2][1]).powi(2)).sqrt();
    assert!(
        moved > 3.0,
        "the measurement follows the frames: its pixels moved {moved:.1} px"
    );
}
