//! Planning the `slice` statement: the plane's normal and position, or its colour range in the
//! field's unit, as the `app::state::Command`s the Field panel's slice controls push.

use super::plan::problem;
use super::verbs::{Parsed, Problem};
use crate::app::slice::{SliceNormal, SlicePlane};
use crate::app::state::{AppState, Command};

/// The commands of a `slice` statement (the slice is shown first when there is none).
pub(super) fn slice(p: &Parsed, state: &AppState) -> Result<Vec<Command>, Problem> {
    if p.sub() == "off" {
        return Ok(vec![Command::SetShowSlice(false)]);
    }
    if let Err(e) = state.slice_field() {
        return Err(problem(p.column, e));
    }
    let mut v = Vec::new();
    if !state.panel_slice_shown() {
        v.push(Command::SetShowSlice(true));
    }
    if p.sub() == "range" {
        v.push(Command::SetSlicePlane(SlicePlane {
            range: range(p, state)?,
            ..state.slice_plane()
        }));
        return Ok(v);
    }
    let normal = match p.text("axis") {
        Some("x") => SliceNormal::X,
        Some("y") => SliceNormal::Y,
        _ => SliceNormal::Z,
    };
    let position = p.number("position").unwrap_or(0.0);
    if !(-0.5..=0.5).contains(&position) {
        return Err(problem(
            p.column_of("position"),
            format!("slice: position {position} is outside -0.5..0.5"),
        ));
    }
    v.push(Command::SetSlicePlane(SlicePlane {
        normal,
        position: position as f32,
        range: state.slice_plane().range,
    }));
    Ok(v)
}

/// `slice range LOW HIGH` (in the slice's field's unit) as computed values; `slice range auto`:
/// `None`, the field's own range.
fn range(p: &Parsed, state: &AppState) -> Result<Option<[f32; 2]>, Problem> {
    let (Some(lo), Some(hi)) = (p.number("low"), p.number("high")) else {
        return Ok(None);
    };
    if !lo.is_finite() || !hi.is_finite() || lo >= hi {
        return Err(problem(
            p.column_of("high"),
            format!("slice range: the high end ({hi}) must be above the low end ({lo})"),
        ));
    }
    let unit = match state.slice_unit() {
        Some(u) => u,
        None => {
            let field = state.slice_field().map_err(|e| problem(p.column, e))?;
            state.field_unit(field)
        }
    };
    Ok(Some([unit.computed(lo), unit.computed(hi)]))
}
