//! Measurements and atom labels drawn into exported pixels, as the window draws them over its 3-D
//! view (`ui::measure`): each measurement as a dashed line through its atoms with its value (Å or
//! degrees) on a plate beside the bond it is about, each labelled atom's text on a plate just above
//! and right of it. Atoms are placed by the view's camera at the image's size, so they fall on the
//! rendered atoms; sizes scale with the image (`scale`: 2 for an image twice the view's size).
//! Amber on a dark background, a dark amber on a light one; text plates dark or light to match.

use super::legend::{blend_rect, draw_text_rgb, font_and_scale, over, text_width};
use crate::app::measure::{MEASURE_RGB_ON_DARK, MEASURE_RGB_ON_LIGHT};
use crate::app::state::AppState;
use ab_glyph::FontRef;
use glam::Vec3;

const TEXT_PX: f32 = 13.0;
/// Dash and gap of the measurement lines, pixels at scale 1.
const DASH: f32 = 6.0;
const GAP: f32 = 4.0;

/// Draws the measurements and labels of `state` into `img` (the view rendered at `img`'s size).
pub fn draw_annotations(img: &mut image::RgbaImage, state: &AppState, scale: f32) {
    let Some(doc) = state.document() else {
        return;
    };
    let Some((font, s)) = font_and_scale(scale) else {
        return;
    };
    let size = [img.width(), img.height()];
    let camera = &state.view.camera;
    let positions = &doc.frame.positions_angstrom;
    let at = |atom: usize| -> Option<[f32; 2]> {
        let p = positions.get(atom)?;
        camera.project_to_pixel(Vec3::from(*p), size).map(|(px, _)| px)
    };
    // Dark or light as the window decides it, so the image shows the window's colours.
    let (measure_rgb, text_rgb, plate_rgb) = if state.settings.background_is_dark() {
        (MEASURE_RGB_ON_DARK, [255, 255, 255], [0, 0, 0])
    } else {
        (MEASURE_RGB_ON_LIGHT, [0, 0, 0], [255, 255, 255])
    };
    let text_px = TEXT_PX * s;
    let mut placed = Vec::new();
    for &atom in &state.tools.labels.atoms {
        if let Some(p) = at(atom) {
            tag(
                img,
                &font,
                &state.label_text(atom),
                p,
                text_px,
                text_rgb,
                plate_rgb,
                &mut placed,
            );
        }
    }
    for m in state.tools.measure.list.iter().filter(|m| m.spec.is_none()) {
        let points: Option<Vec<[f32; 2]>> = m.atoms.iter().map(|&a| at(a)).collect();
        let (Some(points), Some(kind)) = (points, m.kind()) else {
            continue;
        };
        for pair in points.windows(2) {
            dashed_line(img, pair[0], pair[1], 1.5 * s, DASH * s, GAP * s, measure_rgb);
        }
        let Some(value) = state.measurement_value(m) else {
            continue;
        };
        let mid = |a: [f32; 2], b: [f32; 2]| [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
        let anchor = match points.as_slice() {
            [a, b] => mid(*a, *b),
            [_, b, _] => *b,
            [_, b, c, _] => mid(*b, *c),
            _ => continue,
        };
        tag(
            img,
            &font,
            &kind.format(value),
            anchor,
            text_px,
            measure_rgb,
            plate_rgb,
            &mut placed,
        );
    }
}

/// Tags beyond this many are placed where they fall: a label on every atom of a protein would cost
/// the square of their number at every redraw, and they cover each other anyway.
const MAX_DODGED_TAGS: usize = 256;

/// Where a tag of `size` that would start at `want` goes inside the area from `area_min` to
/// `area_max` (the view's or the image's, in its units), off the tags already `placed` (`[x, y, w,
/// h]`, this one added): moved a line down or up, nearest first, where it would cover one (a
/// distance and an angle that share an atom otherwise print their values on top of each other).
/// Shared by the window's view and exported images.
pub fn place_tag(
    want: [f32; 2],
    size: [f32; 2],
    area_min: [f32; 2],
    area_max: [f32; 2],
    placed: &mut Vec<[f32; 4]>,
) -> [f32; 2] {
    let [w, h] = size;
    let inside = |p: [f32; 2]| {
        [
            p[0].clamp(area_min[0], (area_max[0] - w).max(area_min[0])),
            p[1].clamp(area_min[1], (area_max[1] - h).max(area_min[1])),
        ]
    };
    let covers = |m: [f32; 2]| {
        placed
            .iter()
            .any(|p| m[0] < p[0] + p[2] && p[0] < m[0] + w && m[1] < p[1] + p[3] && p[1] < m[1] + h)
    };
    let first = inside(want);
    let at = if placed.len() >= MAX_DODGED_TAGS {
        first
    } else {
        [0.0f32, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0]
            .iter()
            .map(|&k| inside([want[0], want[1] + k * (h + 1.0)]))
            .find(|&m| !covers(m))
            .unwrap_or(first)
    };
    placed.push([at[0], at[1], w, h]);
    at
}

/// `text` on a translucent plate just above and right of `at`, kept inside the image and off the
/// plates already `placed` ([`place_tag`]).
#[allow(clippy::too_many_arguments)]
fn tag(
    img: &mut image::RgbaImage,
    font: &FontRef,
    text: &str,
    at: [f32; 2],
    text_px: f32,
    rgb: [u8; 3],
    plate: [u8; 3],
    placed: &mut Vec<[f32; 4]>,
) {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let pad = text_px * 0.25;
    let box_w = text_width(font, text, text_px) + 2.0 * pad;
    let box_h = text_px * 1.25;
    let want = [at[0] + text_px * 0.5, at[1] - box_h - text_px * 0.15];
    let [x, y] = place_tag(want, [box_w, box_h], [0.0, 0.0], [w, h], placed);
    blend_rect(
        img,
        [x as u32, y as u32, box_w.ceil() as u32, box_h.ceil() as u32],
        plate,
        0.7,
    );
    draw_text_rgb(img, font, text, [x + pad, y + text_px * 0.05], text_px, rgb);
}

/// A dashed line from `a` to `b` (pixels), `width` wide, dashes `dash` long with `gap` between.
fn dashed_line(img: &mut image::RgbaImage, a: [f32; 2], b: [f32; 2], width: f32, dash: f32, gap: f32, rgb: [u8; 3]) {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let length = (dx * dx + dy * dy).sqrt();
    if !length.is_finite() || length < 0.5 {
        return;
    }
    let period = (dash + gap).max(1.0);
    let radius = (width / 2.0).max(0.5);
    // Discs every half pixel along the dashes, each pixel covered by the nearest disc's edge.
    let steps = (length * 2.0).ceil() as usize;
    let (w, h) = (img.width() as i64, img.height() as i64);
    for k in 0..=steps {
        let t = k as f32 / steps as f32 * length;
        if t % period >= dash {
            continue;
        }
        let c = [a[0] + dx * t / length, a[1] + dy * t / length];
        let r = radius.ceil() as i64 + 1;
        let (cx, cy) = (c[0].floor() as i64, c[1].floor() as i64);
        for py in cy - r..=cy + r {
            for px in cx - r..=cx + r {
                if px < 0 || py < 0 || px >= w || py >= h {
                    continue;
                }
                let d = ((px as f32 + 0.5 - c[0]).powi(2) + (py as f32 + 0.5 - c[1]).powi(2)).sqrt();
                let coverage = (radius + 0.5 - d).clamp(0.0, 1.0);
                if coverage > 0.0 {
                    let p = img.get_pixel_mut(px as u32, py as u32);
                    // Overlapping discs: keep the strongest cover rather than piling them up.
                    if coverage > 0.99 || !same_rgb(p, rgb) {
                        over(p, rgb, coverage);
                    }
                }
            }
        }
    }
}

fn same_rgb(p: &image::Rgba<u8>, rgb: [u8; 3]) -> bool {
    p.0[0] == rgb[0] && p.0[1] == rgb[1] && p.0[2] == rgb[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plates_at_one_anchor_are_stacked_not_overlaid() {
        let (font, _) = super::super::legend::font_and_scale(1.0).unwrap();
        let mut img = image::RgbaImage::new(200, 120);
        let mut placed = Vec::new();
        for text in ["17.70 Å", "49.9°", "GLY12:CA"] {
            tag(
                &mut img,
                &font,
                text,
                [100.0, 60.0],
                13.0,
                [255, 255, 0],
                [0, 0, 0],
                &mut placed,
            );
        }
        assert_eq!(placed.len(), 3);
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                let apart = a[1] + a[3] <= b[1] || b[1] + b[3] <= a[1] || a[0] + a[2] <= b[0] || b[0] + b[2] <= a[0];
                assert!(apart, "{a:?} and {b:?} overlap");
            }
        }
        // Kept inside the image however many there are.
        for _ in 0..20 {
            tag(
                &mut img,
                &font,
                "1.00 Å",
                [190.0, 5.0],
                13.0,
                [255, 255, 0],
                [0, 0, 0],
                &mut placed,
            );
        }
        assert!(
            placed
                .iter()
                .all(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[1] + p[3] <= 120.0 + 1e-3)
        );
    }

    #[test]
    fn tags_past_the_cap_are_placed_where_they_fall() {
        let mut placed = Vec::new();
        let (lo, hi) = ([0.0, 0.0], [2000.0, 2000.0]);
        let first = place_tag([500.0, 500.0], [40.0, 16.0], lo, hi, &mut placed);
        let second = place_tag([500.0, 500.0], [40.0, 16.0], lo, hi, &mut placed);
        assert_eq!(first, [500.0, 500.0]);
        assert_ne!(second, first, "the second is moved off the first");
        while placed.len() < MAX_DODGED_TAGS {
            place_tag([1500.0, 1500.0], [40.0, 16.0], lo, hi, &mut placed);
        }
        let past = place_tag([500.0, 500.0], [40.0, 16.0], lo, hi, &mut placed);
        assert_eq!(past, [500.0, 500.0], "no search past the cap");
    }
}
