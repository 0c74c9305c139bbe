//! Colour legends drawn into `render`'s images: the library's drawing (`app::export::legend`,
//! shared with the viewer's image export and movies) at the image's own scale.

use orbitfield::app::export::legend::{self, Corner};
use orbitfield::app::values::Legend;

/// Draws `legends` stacked in `corner`, chosen first (when `None`) as the corner of `img` where
/// they cover the fewest of the molecule's pixels.
pub fn draw_legends(img: &mut image::RgbaImage, legends: &[Legend], corner: &mut Option<Corner>) {
    let corner = *corner.get_or_insert_with(|| legend::quietest_corner(img, legends, 1.0));
    for (k, l) in legends.iter().enumerate() {
        legend::draw_legend_at(img, l, k, 1.0, corner);
    }
}
