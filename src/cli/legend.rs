//! Colour legends drawn into `render`'s images: the colormap as a bar with its title above and the
//! end values with their unit below, on a dark box in the bottom-right corner (the k-th legend
//! stacked above the ones before it), as the viewer draws them over its 3-D view.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use orbitfield::app::values::{Legend, format_number};

const BAR_WIDTH: u32 = 240;
const BAR_HEIGHT: u32 = 14;
const TEXT_PX: f32 = 15.0;
const MARGIN: u32 = 16;
/// Height of one legend box (title, bar, values, padding).
const BOX_HEIGHT: u32 = 64;

/// Draws `legend` as the `index`-th legend of `img` (0: lowest).
pub fn draw_legend(img: &mut image::RgbaImage, legend: &Legend, index: usize) {
    let Ok(font) = FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT) else {
        return;
    };
    let (w, h) = img.dimensions();
    // The box is as wide as the bar, or as the title where that is longer (kept in the image).
    let title_w = text_width(&font, &legend.title);
    let box_w = (BAR_WIDTH + 24).max((title_w.ceil() as u32 + 24).min(w.saturating_sub(2 * MARGIN)));
    let offset = MARGIN + BOX_HEIGHT * index as u32 + 8 * index as u32;
    if w < box_w + MARGIN || h < offset + BOX_HEIGHT {
        return;
    }
    let x0 = w - MARGIN - box_w;
    let y0 = h - offset - BOX_HEIGHT;
    blend_rect(img, x0, y0, box_w, BOX_HEIGHT, [0, 0, 0], 0.6);
    let bar_x = x0 + (box_w - BAR_WIDTH) / 2;
    let bar_y = y0 + 24;
    for dx in 0..BAR_WIDTH {
        let t = (dx as f32 + 0.5) / BAR_WIDTH as f32;
        let [r, g, b, _] = legend.colormap.sample(t);
        for dy in 0..BAR_HEIGHT {
            img.put_pixel(bar_x + dx, bar_y + dy, image::Rgba([r, g, b, 255]));
        }
    }
    let cx = x0 as f32 + (box_w as f32 - title_w).max(0.0) / 2.0;
    draw_text(img, &font, &legend.title, cx, y0 as f32 + 4.0);
    let below = (bar_y + BAR_HEIGHT + 4) as f32;
    draw_text(img, &font, &format_number(legend.range[0]), bar_x as f32, below);
    let hi = format!("{} {}", format_number(legend.range[1]), legend.unit);
    let hi_w = text_width(&font, &hi);
    draw_text(img, &font, &hi, (bar_x + BAR_WIDTH) as f32 - hi_w, below);
}

fn blend_rect(img: &mut image::RgbaImage, x0: u32, y0: u32, w: u32, h: u32, rgb: [u8; 3], alpha: f32) {
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            let p = img.get_pixel_mut(x, y);
            for (v, c) in p.0.iter_mut().zip(rgb) {
                *v = (f32::from(*v) * (1.0 - alpha) + f32::from(c) * alpha).round() as u8;
            }
        }
    }
}

fn text_width(font: &FontRef, text: &str) -> f32 {
    let f = font.as_scaled(PxScale::from(TEXT_PX));
    text.chars().map(|c| f.h_advance(f.glyph_id(c))).sum()
}

/// White text with its top-left corner at (x, y).
fn draw_text(img: &mut image::RgbaImage, font: &FontRef, text: &str, x: f32, y: f32) {
    let scaled = font.as_scaled(PxScale::from(TEXT_PX));
    let (w, h) = img.dimensions();
    let mut caret = x;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        let glyph = id.with_scale_and_position(TEXT_PX, point(caret, y + scaled.ascent()));
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
            let p = img.get_pixel_mut(px as u32, py as u32);
            let a = coverage.clamp(0.0, 1.0);
            for v in &mut p.0[..3] {
                *v = (f32::from(*v) * (1.0 - a) + 255.0 * a).round() as u8;
            }
        });
    }
}
