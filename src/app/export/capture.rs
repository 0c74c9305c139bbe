//! Drawing the 3-D view alone into pixels for export: an [`OffscreenTarget`] of the asked size
//! times the supersampling factor (the offscreen path of `orbitfield render`), one render (two for
//! a transparent background: over black and over white, the alpha recovered from their
//! difference, which keeps antialiased edges, transparent surfaces and depth cue right whatever the
//! pipelines write into alpha), read back and reduced by the box filter of
//! `io::write::movie::downsample_box`.
//!
//! Called by [`super::service`] for images and by [`super::record`] for each movie frame.

use super::ImageRequest;
use crate::app::state::AppState;
use crate::io::write::movie::downsample_box;
use crate::render::target::MAX_SIDE_PX;
use crate::render::{Camera, GpuScene, OffscreenTarget, RenderContext};

/// The largest side the device draws into.
pub fn max_side_px(rc: &RenderContext) -> u32 {
    rc.device.limits().max_texture_dimension_2d.min(MAX_SIDE_PX)
}

/// The supersampling factor used for `size_px` at `asked`: halved until the rendered image fits
/// the device (`None` when even the image itself does not).
pub fn fitting_factor(size_px: [u32; 2], asked: u32, max_side: u32) -> Option<u32> {
    let mut f = asked.max(1);
    while f > 1 && size_px.iter().any(|&s| s.saturating_mul(f) > max_side) {
        f /= 2;
    }
    size_px.iter().all(|&s| (1..=max_side).contains(&s)).then_some(f)
}

/// Renders `scene` from `camera` into `target` and reads it back as RGBA rows.
pub fn render_into(
    rc: &RenderContext,
    scene: &GpuScene,
    target: &OffscreenTarget,
    camera: &Camera,
) -> Result<Vec<u8>, String> {
    crate::render::render_once(rc, scene, target, camera);
    Ok(target.read_rgba(rc).map_err(|e| e.to_string())?.into_raw())
}

/// Alpha from the same picture over black and over white: `a = 1 - (white - black)` (mean of
/// the three channels), the colour `black / a`.
pub fn matte(over_black: &[u8], over_white: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; over_black.len()];
    for ((o, b), w) in out
        .chunks_exact_mut(4)
        .zip(over_black.chunks_exact(4))
        .zip(over_white.chunks_exact(4))
    {
        let diff: f32 = (0..3).map(|c| f32::from(w[c]) - f32::from(b[c])).sum::<f32>() / (3.0 * 255.0);
        let a = (1.0 - diff).clamp(0.0, 1.0);
        if a > 0.0 {
            for c in 0..3 {
                o[c] = (f32::from(b[c]) / a).round().clamp(0.0, 255.0) as u8;
            }
        }
        o[3] = (a * 255.0).round() as u8;
    }
    out
}

/// The view at `size_px` times `factor`, with a transparent background when asked.
pub fn render_view(
    rc: &RenderContext,
    scene: &mut GpuScene,
    camera: &Camera,
    size_px: [u32; 2],
    factor: u32,
    transparent: bool,
) -> Result<(Vec<u8>, [u32; 2]), String> {
    let big = size_px.map(|s| s * factor);
    let target = OffscreenTarget::new(rc, big);
    if target.size_px != big {
        return Err(format!("{}x{} pixels is beyond what the device draws", big[0], big[1]));
    }
    if !transparent {
        return Ok((render_into(rc, scene, &target, camera)?, big));
    }
    let background = scene.style.background;
    scene.style.background = [0.0, 0.0, 0.0];
    let black = render_into(rc, scene, &target, camera);
    scene.style.background = [1.0, 1.0, 1.0];
    let white = render_into(rc, scene, &target, camera);
    scene.style.background = background;
    Ok((matte(&black?, &white?), big))
}

/// Draws the view for `request`, adds the legends when asked and writes the PNG (temporary name,
/// renamed into place). Returns a note for the status line (e.g. a lowered supersampling).
pub fn export_image(
    rc: &RenderContext,
    scene: &mut GpuScene,
    state: &AppState,
    request: &ImageRequest,
) -> Result<String, String> {
    let max_side = max_side_px(rc);
    let factor = fitting_factor(request.size_px, request.supersample, max_side).ok_or_else(|| {
        format!(
            "{}x{} pixels is beyond what the device draws ({max_side} per side)",
            request.size_px[0], request.size_px[1]
        )
    })?;
    let camera = state.view.camera;
    let (rgba, big) = render_view(rc, scene, &camera, request.size_px, factor, request.transparent)?;
    let (small, size) = downsample_box(&rgba, big, factor).ok_or("the rendered image has the wrong size")?;
    drop(rgba);
    let mut img = image::RgbaImage::from_raw(size[0], size[1], small).ok_or("the rendered image has the wrong size")?;
    if request.legend {
        let scale = size[1] as f32 / state.view.size_px[1].max(1) as f32;
        super::legend::draw_legends(&mut img, &state.legends(), scale.max(1.0));
    }
    if request.annotations {
        let scale = size[1] as f32 / state.view.size_px[1].max(1) as f32;
        super::annotations::draw_annotations(&mut img, state, scale.max(1.0));
    }
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| format!("{}: PNG encoding failed: {e}", request.path.display()))?;
    crate::io::write_atomically(&request.path, &png).map_err(|e| format!("{}: {e}", request.path.display()))?;
    Ok(if factor < request.supersample {
        format!(
            " (supersampled {factor}x: {}x would exceed {max_side} pixels per side)",
            request.supersample
        )
    } else if factor > 1 {
        format!(" (supersampled {factor}x)")
    } else {
        String::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matte_recovers_alpha_and_colour() {
        // Opaque red, empty background, and red at half cover.
        let black = [255, 0, 0, 255, 0, 0, 0, 255, 128, 0, 0, 255];
        let white = [255, 0, 0, 255, 255, 255, 255, 255, 255, 127, 127, 255];
        let out = matte(&black, &white);
        assert_eq!(&out[0..4], &[255, 0, 0, 255]);
        assert_eq!(out[7], 0);
        assert!((126..=129).contains(&out[11]), "{out:?}");
        assert!(out[8] >= 250, "{out:?}");
    }

    #[test]
    fn supersampling_is_lowered_to_fit_the_device() {
        assert_eq!(fitting_factor([1000, 800], 4, 8192), Some(4));
        assert_eq!(fitting_factor([3000, 800], 4, 8192), Some(2));
        assert_eq!(fitting_factor([5000, 800], 4, 8192), Some(1));
        assert_eq!(fitting_factor([9000, 800], 1, 8192), None);
    }
}
