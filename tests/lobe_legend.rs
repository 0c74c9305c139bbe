//! Which colour is which sign: a signed field's isosurfaces (an orbital, a spin density, an
//! orbital's cube file) get a legend whose bar shows the negative lobe's colour beside the positive
//! one's, its ends at -iso and +iso in the field's unit (a.u., or a cube's file units); a density (one sign) and a surface coloured
//! by another field get none. Checked on water's HOMO (Molden, computed by the CPU engine), O2's
//! UHF spin density, and PySCF's cube files of the same water HOMO and density.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::FieldChoice;
use orbitfield::app::state::{AppState, Command};

#[path = "common/journey.rs"]
mod journey;

fn settle(state: &mut AppState) {
    for _ in 0..200 {
        state.update_reps();
        if state.reps().fields().all(|(_, f)| f.pipeline.shown.is_some()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn byte(c: [f32; 3]) -> [u8; 3] {
    c.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8)
}

/// The lobe legends of `state`, each checked against its representation's colours and isovalue.
fn check(state: &AppState, what: &str) -> usize {
    let legends: Vec<_> = state.legends().into_iter().filter(|l| l.lobes.is_some()).collect();
    for l in &legends {
        let f = state
            .reps()
            .fields()
            .map(|(_, f)| f)
            .find(|f| l.title.starts_with(&state.describe_field(f.field)))
            .unwrap_or_else(|| panic!("{what}: a representation for '{}'", l.title));
        let [neg, pos] = l.lobes.unwrap();
        assert_eq!(pos, byte(f.colors[0]), "{what}: the + lobe's colour on the right");
        assert_eq!(neg, byte(f.colors[1]), "{what}: the - lobe's colour on the left");
        // The colours are the lobes': the first lobe's vertices lie where the field is +iso, the
        // second's where it is -iso.
        let (_, grid) = f.pipeline.shown.as_ref().expect("a grid shown");
        for (lobe, sign) in f.pipeline.lobes.iter().zip([1.0f32, -1.0]) {
            let mesh = lobe.as_ref().expect("both lobes");
            let values: Vec<f32> = mesh
                .positions_angstrom
                .iter()
                .filter_map(|p| grid.trilinear_at_angstrom(*p, false))
                .collect();
            assert!(!values.is_empty());
            let mean = values.iter().sum::<f32>() / values.len() as f32;
            assert!(
                mean * sign > 0.0,
                "{what}: the lobe of sign {sign} has mean value {mean}"
            );
        }
        let iso = f64::from(f.pipeline.shown_iso.abs());
        assert!(
            (l.range[1] - iso).abs() < 1e-6 && (l.range[0] + iso).abs() < 1e-6,
            "{what}: {:?}",
            l.range
        );
        assert_eq!(l.unit, state.field_unit(f.field).label, "{what}: in the field's unit");
    }
    legends.len()
}

#[test]
fn signed_surfaces_say_which_colour_is_which_sign() {
    let mut state = journey::opened(&["engine/water_hf_631gs_sph.molden"], true);
    settle(&mut state);
    assert_eq!(check(&state, "water HOMO"), 1);
    // A density beside it has one sign: no second legend.
    state.apply(Command::AddFieldRep(FieldChoice::Density));
    settle(&mut state);
    assert_eq!(check(&state, "water HOMO and density"), 1);

    let mut state = journey::opened(&["engine/o2_uhf_ccpvtz_sph.molden"], true);
    state.apply(Command::AddFieldRep(FieldChoice::SpinDensity));
    settle(&mut state);
    assert_eq!(check(&state, "O2 HOMO and spin density"), 2);

    let mut state = journey::opened(&["engine/water_homo_24.cube"], false);
    settle(&mut state);
    assert_eq!(check(&state, "HOMO cube"), 1);
    let mut state = journey::opened(&["engine/water_density_24.cube"], false);
    settle(&mut state);
    assert_eq!(check(&state, "density cube"), 0);
}
