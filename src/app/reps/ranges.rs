//! Colour ranges chosen from values: a field's on the surfaces it colours, or any values' 2nd to
//! 98th percentiles, symmetric about zero when they change sign.

/// A colormap range for `grid` on `lobes`: the 2nd..98th percentile of its values at their
/// vertices (made symmetric about zero when the values change sign), or of the whole volume when
/// there is no surface.
pub fn surface_value_range(
    lobes: &[Option<std::sync::Arc<crate::surface::MeshData>>; 2],
    grid: &crate::model::Grid3,
) -> [f32; 2] {
    let values: Vec<f32> = lobes
        .iter()
        .flatten()
        .flat_map(|m| m.positions_angstrom.iter())
        .filter_map(|p| crate::app::values::sample_grid(grid, *p))
        .collect();
    if values.iter().any(|v| v.is_finite()) {
        value_range(values)
    } else {
        value_range(grid.values.clone())
    }
}

/// A colormap range for `values`: their 2nd..98th percentile (made symmetric about zero when they
/// change sign; non-finite values ignored; -1..1 when there are none).
pub fn value_range(mut values: Vec<f32>) -> [f32; 2] {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return [-1.0, 1.0];
    }
    values.sort_by(f32::total_cmp);
    let at = |q: f64| {
        values
            .get(((values.len() - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let (lo, hi) = (at(0.02), at(0.98));
    let range = if lo < 0.0 && hi > 0.0 {
        let m = lo.abs().max(hi.abs());
        [-m, m]
    } else {
        [lo, hi]
    };
    if range[0] == range[1] {
        [range[0] - 1.0, range[1] + 1.0]
    } else {
        range
    }
}
