//! Unit tests of `marching_cubes`.

use super::*;

#[test]
fn shader_validates_with_naga() {
    let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
    let mut validator = wgpu::naga::valid::Validator::new(
        wgpu::naga::valid::ValidationFlags::all(),
        wgpu::naga::valid::Capabilities::empty(),
    );
    validator.validate(&module).unwrap();
    for entry in ["make_vertices", "make_triangles", "finish"] {
        assert!(module.entry_points.iter().any(|e| e.name == entry), "{entry}");
    }
}

#[test]
fn params_match_the_wgsl_struct_size() {
    assert_eq!(std::mem::size_of::<McParams>(), 160);
    let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
    let ty = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("Params"))
        .unwrap()
        .1;
    assert_eq!(ty.inner.size(module.to_ctx()), 160);
}

#[test]
fn column_length_is_the_shaders() {
    assert!(SHADER_SOURCE.contains(&format!("const COLUMN: u32 = {COLUMN}u;")));
    // A lattice whose z extent is not a multiple of the column still gets a thread per point.
    assert_eq!(point_columns([3, 2, 5]), 3 * 2 * 2);
    // 2 x 1 cells in a column of 4 (z: 4 cells).
    assert_eq!(cell_columns([3, 2, 5]), 2);
    assert_eq!(cell_columns([1, 2, 5]), 0);
}

#[test]
fn case_words_layout() {
    let w = case_table_words();
    assert_eq!(w.len(), 256 + 256 * MAX_TRIANGLES * 3);
    assert_eq!(w[1], 1);
    assert!(w[256..].iter().all(|&e| e < 12));
}

#[test]
fn lobe_counts_carry_over_to_a_lattice_a_plane_larger_or_smaller() {
    assert!(counts_carry_over([256, 256, 256], [256, 256, 256]));
    assert!(counts_carry_over([256, 255, 256], [256, 256, 257]));
    assert!(counts_carry_over([257, 256, 256], [256, 255, 255]));
    // Another lattice altogether (the setting changed): the first guess again.
    assert!(!counts_carry_over([128, 128, 128], [256, 256, 256]));
    assert!(!counts_carry_over([100, 100, 100], [100, 100, 126]));
    assert!(!counts_carry_over([0, 10, 10], [0, 10, 10]));
    assert_eq!(with_headroom(800), 912);
    assert!(with_headroom(4 * 256 * 256 * 257) >= 4 * 258 * 258 * 258);
}

#[test]
fn dispatch_covers_all_threads() {
    for n in [1u32, 63, 64, 65, 4_194_304, 300_000_000] {
        let (x, y) = dispatch_shape(n);
        assert!(x <= MAX_GROUPS_PER_DIM && y <= MAX_GROUPS_PER_DIM);
        assert!(u64::from(x) * u64::from(y) * u64::from(WORKGROUP) >= u64::from(n));
    }
}
