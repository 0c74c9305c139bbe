//! The panels by name, as the window lays them out and the tests drive them one by one.

pub use super::browser::browser_window;
pub use super::fields::{fields_ui, slice_ui, surface_color_ui};
pub use super::files::files_ui;
pub use super::jobs::{jobs_ui, progress_ui};
pub use super::orbitals::{level_extents, orbitals_ui};
pub use super::rdf::rdf_ui;
pub use super::reps::{reps_ui, view_options_ui};
pub use super::timeline::timeline_ui;
pub use super::view::{help_ui, status_bar_ui, view_ui};
