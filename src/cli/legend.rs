//! Colour legends drawn into `render`'s images: the library's drawing (`app::export::legend`,
//! shared with the viewer's image export and movies) at the image's own scale.

use orbitfield::app::values::Legend;

/// Draws `legend` as the `index`-th legend of `img` (0: lowest).
pub fn draw_legend(img: &mut image::RgbaImage, legend: &Legend, index: usize) {
    orbitfield::app::export::legend::draw_legend(img, legend, index, 1.0);
}
