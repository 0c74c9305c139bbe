//! Design tokens: the colours and spacing every panel uses, in one place.

use egui::Color32;

/// Positive orbital phase in lists and plots.
pub const POSITIVE: Color32 = Color32::from_rgb(217, 51, 51);
/// Negative orbital phase.
pub const NEGATIVE: Color32 = Color32::from_rgb(51, 89, 230);
/// Occupied levels in the energy diagram.
pub const OCCUPIED: Color32 = Color32::from_rgb(60, 170, 90);
/// Virtual levels in the energy diagram.
pub const VIRTUAL: Color32 = Color32::from_rgb(150, 150, 150);
/// The selected orbital.
pub const SELECTED: Color32 = Color32::from_rgb(255, 190, 40);
/// Error text.
pub const ERROR: Color32 = Color32::from_rgb(230, 80, 80);
/// Default width of the side panels in points.
pub const SIDE_PANEL_WIDTH: f32 = 250.0;
/// The narrowest a side panel gets.
pub const SIDE_PANEL_MIN_WIDTH: f32 = 170.0;
/// Width of text fields in the side panels.
pub const TEXT_FIELD_WIDTH: f32 = 150.0;
/// Vertical gap between sections.
pub const SECTION_GAP: f32 = 6.0;
