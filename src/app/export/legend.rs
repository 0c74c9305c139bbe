//! Colour legends drawn into exported pixels: the colormap as a bar with its title above and the
//! end values with their unit below, on a dark box in the bottom-right corner (the k-th legend
//! stacked above the ones before it), as the viewer draws them over its 3-D view; an exported
//! image takes the corner where the stack covers the fewest of the molecule's pixels
//! ([`draw_legends`]), and a movie keeps its first frame's corner.
//!
//! Called by the image export and the movie recorder ([`super::capture`], [`super::record`]) and
//! by `orbitfield render` (`cli::legend`). Sizes scale with the image (`scale`: 2 for an image
//! twice the view's size), and the box is composited "over" so a transparent background gets an
//! opaque-enough legend.

use crate::app::values::{Legend, format_number};
use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};

const BAR_WIDTH: f32 = 240.0;
const BAR_HEIGHT: f32 = 14.0;
const TEXT_PX: f32 = 15.0;
const MARGIN: f32 = 16.0;
/// Height of one legend box (title, bar, values, padding).
const BOX_HEIGHT: f32 = 64.0;

/// `title` and its pixel size so that it fits in `room` pixels: at `text_px`, else smaller down to
/// 60 % of it, else cut with an ellipsis at that size.
fn fitted_title(font: &FontRef<'static>, title: &str, text_px: f32, room: f32) -> (String, f32) {
    let full = text_width(font, title, text_px);
    if full <= room || room <= 0.0 {
        return (title.to_string(), text_px);
    }
    let px = (text_px * room / full).max(0.6 * text_px);
    if text_width(font, title, px) <= room {
        return (title.to_string(), px);
    }
    let mut cut: String = title.to_string();
    while !cut.is_empty() && text_width(font, &format!("{cut}…"), px) > room {
        cut.pop();
    }
    (format!("{}…", cut.trim_end()), px)
}

/// The font drawn into exported pixels (egui's default), and `scale` kept within 0.25..16 (1 when
/// not finite); `None` when the font cannot be read.
pub(super) fn font_and_scale(scale: f32) -> Option<(FontRef<'static>, f32)> {
    let font = FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT).ok()?;
    let s = if scale.is_finite() {
        scale.clamp(0.25, 16.0)
    } else {
        1.0
    };
    Some((font, s))
}

/// A corner of the image the legends are stacked in (away from the corner's edges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    BottomRight,
    BottomLeft,
    TopRight,
    TopLeft,
}

/// Draws `legends` stacked in the corner of `img` where they cover the fewest of the molecule's
/// pixels (bottom right unless another corner is emptier), their sizes times `scale`. Returns the
/// corner, for the frames of a movie to keep.
pub fn draw_legends(img: &mut image::RgbaImage, legends: &[Legend], scale: f32) -> Corner {
    let corner = quietest_corner(img, legends, scale);
    for (k, legend) in legends.iter().enumerate() {
        draw_legend_at(img, legend, k, scale, corner);
    }
    corner
}

/// The corner where the stack of `legends` would cover the fewest pixels unlike the background
/// (the commonest colour of the image's border; any opaque pixel on a transparent one). Ties, and
/// an image without legends, keep the bottom right.
pub fn quietest_corner(img: &image::RgbaImage, legends: &[Legend], scale: f32) -> Corner {
    let Some((font, s)) = font_and_scale(scale) else {
        return Corner::BottomRight;
    };
    let (w, h) = img.dimensions();
    if legends.is_empty() || w == 0 || h == 0 {
        return Corner::BottomRight;
    }
    let px = |v: f32| (v * s).round() as u32;
    let stack_w = legends
        .iter()
        .map(|l| box_width(&font, l, w, s))
        .max()
        .unwrap_or(0)
        .min(w);
    let stack_h = ((px(BOX_HEIGHT) + px(8.0)) * legends.len() as u32).min(h);
    let m = px(MARGIN).min(w - stack_w).min(h - stack_h);
    let background = border_colour(img);
    let busy = |x0: u32, y0: u32| {
        let mut n = 0usize;
        for y in y0..(y0 + stack_h).min(h) {
            for x in x0..(x0 + stack_w).min(w) {
                let p = img.get_pixel(x, y).0;
                let differs = match background {
                    None => p[3] > 0,
                    Some(b) => (0..3).any(|k| (i32::from(p[k]) - i32::from(b[k])).abs() > 24),
                };
                n += usize::from(differs);
            }
        }
        n
    };
    let (right, bottom) = (w - m - stack_w, h - m - stack_h);
    [
        (Corner::BottomRight, busy(right, bottom)),
        (Corner::BottomLeft, busy(m, bottom)),
        (Corner::TopRight, busy(right, m)),
        (Corner::TopLeft, busy(m, m)),
    ]
    .into_iter()
    .min_by_key(|&(_, n)| n)
    .map_or(Corner::BottomRight, |(c, _)| c)
}

/// The commonest colour of the image's outermost pixels; `None` when most of them are
/// transparent (a transparent background).
fn border_colour(img: &image::RgbaImage) -> Option<[u8; 3]> {
    let (w, h) = img.dimensions();
    let mut counts: std::collections::HashMap<[u8; 4], usize> = std::collections::HashMap::new();
    let mut add = |x: u32, y: u32| *counts.entry(img.get_pixel(x, y).0).or_default() += 1;
    for x in 0..w {
        add(x, 0);
        add(x, h - 1);
    }
    for y in 0..h {
        add(0, y);
        add(w - 1, y);
    }
    let (p, _) = counts.into_iter().max_by_key(|&(p, n)| (n, p))?;
    (p[3] > 0).then_some([p[0], p[1], p[2]])
}

/// The width of `legend`'s box in an image `w` pixels wide at size factor `s`: the bar's, or the
/// title's where that is longer (kept in the image).
fn box_width(font: &FontRef<'static>, legend: &Legend, w: u32, s: f32) -> u32 {
    let px = |v: f32| (v * s).round() as u32;
    let room = w.saturating_sub(2 * px(MARGIN) + px(24.0)) as f32;
    let (title, title_px) = fitted_title(font, &legend.title, TEXT_PX * s, room);
    let title_w = text_width(font, &title, title_px);
    (px(BAR_WIDTH) + px(24.0)).max((title_w.ceil() as u32 + px(24.0)).min(w.saturating_sub(2 * px(MARGIN))))
}

/// Draws `legend` as the `index`-th legend of the stack in `corner` (0: nearest the corner's
/// horizontal edge), its sizes times `scale`.
pub fn draw_legend_at(img: &mut image::RgbaImage, legend: &Legend, index: usize, scale: f32, corner: Corner) {
    let Some((font, s)) = font_and_scale(scale) else {
        return;
    };
    let px = |v: f32| (v * s).round() as u32;
    let text_px = TEXT_PX * s;
    let (w, h) = img.dimensions();
    // The box is as wide as the bar, or as the title where that is longer (kept in the image): a
    // title wider than the image is drawn smaller (down to 60 %), then cut with an ellipsis.
    let room = w.saturating_sub(2 * px(MARGIN) + px(24.0)) as f32;
    let (title, title_px) = fitted_title(&font, &legend.title, text_px, room);
    let title_w = text_width(&font, &title, title_px);
    let bar_w = px(BAR_WIDTH);
    let box_w = box_width(&font, legend, w, s);
    let box_h = px(BOX_HEIGHT);
    let offset = px(MARGIN) + (box_h + px(8.0)) * index as u32;
    if w < box_w + px(MARGIN) || h < offset + box_h {
        return;
    }
    let x0 = match corner {
        Corner::BottomRight | Corner::TopRight => w - px(MARGIN) - box_w,
        Corner::BottomLeft | Corner::TopLeft => px(MARGIN),
    };
    let y0 = match corner {
        Corner::BottomRight | Corner::BottomLeft => h - offset - box_h,
        Corner::TopRight | Corner::TopLeft => offset,
    };
    // Nearly opaque: atoms or markers behind the box would read as marks on the scale.
    blend_rect(img, [x0, y0, box_w, box_h], [0, 0, 0], 0.85);
    let bar_x = x0 + (box_w - bar_w) / 2;
    let bar_y = y0 + px(24.0);
    for dx in 0..bar_w {
        let t = (dx as f32 + 0.5) / bar_w as f32;
        let [r, g, b] = legend.bar_rgb(t);
        for dy in 0..px(BAR_HEIGHT) {
            if bar_x + dx < w && bar_y + dy < h {
                img.put_pixel(bar_x + dx, bar_y + dy, image::Rgba([r, g, b, 255]));
            }
        }
    }
    let cx = x0 as f32 + (box_w as f32 - title_w).max(0.0) / 2.0;
    draw_text(
        img,
        &font,
        &title,
        cx,
        y0 as f32 + 4.0 * s + (text_px - title_px),
        title_px,
    );
    let below = (bar_y + px(BAR_HEIGHT) + px(4.0)) as f32;
    if legend.solid_rgb.is_none() {
        draw_text(
            img,
            &font,
            &format_number(legend.range[0]),
            bar_x as f32,
            below,
            text_px,
        );
    }
    let hi = format!("{} {}", format_number(legend.range[1]), legend.unit);
    let hi_w = text_width(&font, &hi, text_px);
    draw_text(img, &font, &hi, (bar_x + bar_w) as f32 - hi_w, below, text_px);
    // Zero marked on the bar's lower half, as in the window (`ui::legend`).
    if let Some(t) = legend.zero_at() {
        let x = bar_x + ((t * bar_w as f32) as u32).min(bar_w.saturating_sub(1));
        for dy in px(BAR_HEIGHT) / 2..px(BAR_HEIGHT) + px(2.0) {
            for dx in 0..px(1.5).max(1) {
                if x + dx < w && bar_y + dy < h {
                    img.put_pixel(x + dx, bar_y + dy, image::Rgba([0, 0, 0, 255]));
                }
            }
        }
        let lo_w = text_width(&font, &format_number(legend.range[0]), text_px);
        let half = text_width(&font, "0", text_px) / 2.0;
        let xf = x as f32;
        if xf - half > bar_x as f32 + lo_w + 4.0 * s && xf + half < (bar_x + bar_w) as f32 - hi_w - 4.0 * s {
            draw_text(img, &font, "0", xf - half, below, text_px);
        }
    }
}

/// `rgb` at `alpha` over the rectangle `[x, y, w, h]` (alpha composited too).
pub(super) fn blend_rect(img: &mut image::RgbaImage, rect: [u32; 4], rgb: [u8; 3], alpha: f32) {
    let [x0, y0, w, h] = rect;
    let (iw, ih) = img.dimensions();
    for y in y0..(y0 + h).min(ih) {
        for x in x0..(x0 + w).min(iw) {
            over(img.get_pixel_mut(x, y), rgb, alpha);
        }
    }
}

/// Composites `rgb` at coverage `a` over the pixel (straight alpha).
pub(super) fn over(p: &mut image::Rgba<u8>, rgb: [u8; 3], a: f32) {
    let dst_a = f32::from(p.0[3]) / 255.0;
    let out_a = a + dst_a * (1.0 - a);
    if out_a <= 0.0 {
        return;
    }
    for (v, c) in p.0.iter_mut().zip(rgb) {
        let mixed = (f32::from(c) * a + f32::from(*v) * dst_a * (1.0 - a)) / out_a;
        *v = mixed.round().clamp(0.0, 255.0) as u8;
    }
    p.0[3] = (out_a * 255.0).round().clamp(0.0, 255.0) as u8;
}

pub(super) fn text_width(font: &FontRef, text: &str, text_px: f32) -> f32 {
    let f = font.as_scaled(PxScale::from(text_px));
    text.chars().map(|c| f.h_advance(f.glyph_id(c))).sum()
}

/// White text with its top-left corner at (x, y).
fn draw_text(img: &mut image::RgbaImage, font: &FontRef, text: &str, x: f32, y: f32, text_px: f32) {
    draw_text_rgb(img, font, text, [x, y], text_px, [255, 255, 255]);
}

/// Text in `rgb` with its top-left corner at `at` (pixels).
pub(super) fn draw_text_rgb(
    img: &mut image::RgbaImage,
    font: &FontRef,
    text: &str,
    at: [f32; 2],
    text_px: f32,
    rgb: [u8; 3],
) {
    let [x, y] = at;
    let scaled = font.as_scaled(PxScale::from(text_px));
    let (w, h) = img.dimensions();
    let mut caret = x;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        let glyph = id.with_scale_and_position(text_px, point(caret, y + scaled.ascent()));
        caret += scaled.h_advance(id);
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            let px = bounds.min.x as i64 + i64::from(gx);
            let py = bounds.min.y as i64 + i64::from(gy);
            if px < 0 || py < 0 || px >= i64::from(w) || py >= i64::from(h) {
                return;
            }
            over(img.get_pixel_mut(px as u32, py as u32), rgb, coverage.clamp(0.0, 1.0));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::colormap::Colormap;

    /// A title longer than the image is drawn inside it (smaller, then cut with an ellipsis): no
    /// text pixel lands in the right margin, where it would be cut off at the image's edge.
    #[test]
    fn a_long_title_stays_inside_the_image() {
        let title = "potential (Coulomb sum of 220 charges (the water and ions left out), Debye-Hueckel, \
                     0.15 M, eps 78.54, 298.15 K (Debye length 7.86 A))";
        let legend = Legend {
            title: title.into(),
            range: [-5.0, 5.0],
            unit: "kT/e".into(),
            colormap: Colormap::RedWhiteBlue,
            solid_rgb: None,
            lobes: None,
        };
        let (w, h) = (400, 300);
        let mut img = image::RgbaImage::from_pixel(w, h, image::Rgba([0, 0, 0, 255]));
        draw_legend_at(&mut img, &legend, 0, 1.0, Corner::BottomRight);
        let margin = MARGIN as u32;
        let in_margin = (w - margin..w).any(|x| (0..h).any(|y| img.get_pixel(x, y)[0] > 0));
        assert!(!in_margin, "nothing drawn in the right margin");
        let (font, _) = font_and_scale(1.0).unwrap();
        let room = (w - 2 * margin - 24) as f32;
        let (cut, px) = fitted_title(&font, title, TEXT_PX, room);
        assert!(
            cut.ends_with('…') && px < TEXT_PX && text_width(&font, &cut, px) <= room,
            "{cut} at {px}"
        );
        // A short title is kept whole at full size.
        assert_eq!(
            fitted_title(&font, "density", TEXT_PX, room),
            ("density".to_string(), TEXT_PX)
        );
    }

    /// The legends go to the corner the molecule leaves empty, and leave its pixels alone; on a
    /// transparent image the same; an empty image keeps the bottom right.
    #[test]
    fn legends_avoid_the_molecule() {
        let legend = |title: &str| Legend {
            title: title.into(),
            range: [-5.0, 5.0],
            unit: "kT/e".into(),
            colormap: Colormap::RedWhiteBlue,
            solid_rgb: None,
            lobes: None,
        };
        let legends = [legend("potential"), legend("density")];
        let (w, h) = (640u32, 480u32);
        for (bg, mark) in [
            ([20u8, 20, 30, 255], [200u8, 180, 40, 255]),
            ([0, 0, 0, 0], [90, 90, 90, 255]),
        ] {
            let empty = image::RgbaImage::from_pixel(w, h, image::Rgba(bg));
            assert_eq!(quietest_corner(&empty, &legends, 1.0), Corner::BottomRight);
            // A molecule over the right half and the bottom half, short of the image's edges:
            // only the top left is free.
            let molecule = |x: u32, y: u32| {
                let inside = (4..w - 4).contains(&x) && (4..h - 4).contains(&y);
                inside && (x >= w / 2 || y >= h / 2)
            };
            let mut img = empty.clone();
            for (x, y, p) in img.enumerate_pixels_mut() {
                if molecule(x, y) {
                    *p = image::Rgba(mark);
                }
            }
            let before = img.clone();
            assert_eq!(draw_legends(&mut img, &legends, 1.0), Corner::TopLeft);
            let changed_elsewhere = img
                .enumerate_pixels()
                .any(|(x, y, p)| molecule(x, y) && p != before.get_pixel(x, y));
            assert!(!changed_elsewhere, "a legend was drawn over the molecule");
            let drawn = img.pixels().zip(before.pixels()).filter(|(a, b)| a != b).count();
            assert!(drawn > 2 * 200 * 40, "both legends were drawn: {drawn} pixels");
        }
    }
}
