//! `info`'s orbitals of a wavefunction: per spin channel the count, the HOMO and LUMO (numbered
//! from 1, as the `mo:N` and `mo:beta:N` fields count them) with the gap, and a table of the
//! orbitals around the frontier (energy in hartree and eV, occupation, symmetry); `--json` lists
//! every orbital of every channel. A log that printed only a table of orbital energies (ORCA
//! without `! PrintMOs`, Gaussian's eigenvalue lines without `pop=full`) has the same summary and
//! table from it.

use orbitfield::model::units::EV_PER_HARTREE;
use orbitfield::model::{OrbitalLevels, Spin, SpinKind, Wavefunction};

/// Orbitals listed on each side of the HOMO-LUMO gap in the text table.
const FRONTIER_ROWS: usize = 5;

/// The spin channels a wavefunction has, with the name `info` gives them.
fn channels(wf: &Wavefunction) -> Vec<(Spin, &'static str)> {
    match wf.spin {
        SpinKind::Unrestricted => vec![(Spin::Alpha, "alpha"), (Spin::Beta, "beta")],
        _ => vec![(Spin::Alpha, "")],
    }
}

/// The orbital's name relative to the frontier (`HOMO`, `HOMO-2`, `LUMO+1`), 0-based `index`.
fn frontier_name(index: usize, homo: Option<usize>) -> String {
    let Some(h) = homo else {
        return String::new();
    };
    match index.cmp(&h) {
        std::cmp::Ordering::Equal => "HOMO".into(),
        std::cmp::Ordering::Less => format!("HOMO-{}", h - index),
        std::cmp::Ordering::Greater if index == h + 1 => "LUMO".into(),
        std::cmp::Ordering::Greater => format!("LUMO+{}", index - h - 1),
    }
}

/// One spin channel as `info` lists it: a wavefunction's orbitals, or a log's table of orbital
/// energies alone.
struct Channel<'a> {
    name: &'static str,
    energies_hartree: &'a [f64],
    occupations: &'a [f64],
    symmetries: &'a [String],
    homo: Option<usize>,
}

fn wavefunction_channels(wf: &Wavefunction) -> Vec<Channel<'_>> {
    channels(wf)
        .into_iter()
        .filter_map(|(spin, name)| {
            let set = wf.orbitals(spin)?;
            Some(Channel {
                name,
                energies_hartree: &set.energies_hartree,
                occupations: &set.occupations,
                symmetries: &set.symmetries,
                homo: wf.homo(spin),
            })
        })
        .collect()
}

fn level_channels(levels: &OrbitalLevels) -> Vec<Channel<'_>> {
    let spins: &[(Spin, &'static str)] = if levels.beta.is_some() {
        &[(Spin::Alpha, "alpha"), (Spin::Beta, "beta")]
    } else {
        &[(Spin::Alpha, "")]
    };
    spins
        .iter()
        .map(|&(spin, name)| {
            let set = levels.levels(spin);
            Channel {
                name,
                energies_hartree: &set.energies_hartree,
                occupations: &set.occupations,
                symmetries: &set.symmetries,
                homo: levels.homo(spin),
            }
        })
        .collect()
}

/// Prints the orbital summary and the frontier table of every channel.
pub fn print_orbitals(wf: &Wavefunction) {
    print_channels(&wavefunction_channels(wf), "");
}

/// Prints the orbital energies a log listed without printing the orbitals (ORCA without
/// `! PrintMOs`, Gaussian without `pop=full`), as `print_orbitals` prints a wavefunction's.
pub fn print_levels(levels: &OrbitalLevels) {
    print_channels(
        &level_channels(levels),
        "; energies from the log's table, the orbitals themselves not printed",
    );
}

fn print_channels(chans: &[Channel], note: &str) {
    let counts: Vec<String> = chans
        .iter()
        .map(|c| {
            let n = c.energies_hartree.len();
            if c.name.is_empty() {
                n.to_string()
            } else {
                format!("{n} {}", c.name)
            }
        })
        .collect();
    println!(
        "orbitals:     {} (numbered from 1, as mo:N{} counts them{note})",
        counts.join(" + "),
        if chans.len() > 1 { " and mo:beta:N" } else { "" }
    );
    for c in chans {
        let homo = c.homo;
        let label = if c.name.is_empty() {
            "frontier:".to_string()
        } else {
            format!("{}:", c.name)
        };
        let e = |i: usize| c.energies_hartree.get(i).copied();
        match (homo, homo.and_then(&e), homo.and_then(|h| e(h + 1))) {
            (Some(h), Some(eh), Some(el)) => println!(
                "{label:<14}HOMO {} ({eh:.6} Eh), LUMO {} ({el:.6} Eh), gap {:.4} eV",
                h + 1,
                h + 2,
                (el - eh) * EV_PER_HARTREE
            ),
            (Some(h), Some(eh), None) => println!("{label:<14}HOMO {} ({eh:.6} Eh), no virtual orbital", h + 1),
            _ => println!("{label:<14}no occupied orbital"),
        }
        let n = c.energies_hartree.len();
        let centre = homo.unwrap_or(0);
        let first = centre.saturating_sub(FRONTIER_ROWS - 1);
        let last = (centre + FRONTIER_ROWS).min(n.saturating_sub(1));
        println!(
            "  {:>7}  {:<8} {:>14} {:>11} {:>10}  symmetry",
            "orbital", "name", "energy/Eh", "energy/eV", "occupation"
        );
        for i in first..=last {
            let (Some(en), Some(occ)) = (e(i), c.occupations.get(i)) else {
                continue;
            };
            println!(
                "  {:>7}  {:<8} {:>14.6} {:>11.4} {:>10.4}  {}",
                i + 1,
                frontier_name(i, homo),
                en,
                en * EV_PER_HARTREE,
                occ,
                c.symmetries.get(i).map_or("", |s| s.as_str())
            );
        }
        if first > 0 || last + 1 < n {
            println!("  ({} of {n} shown; info --json lists every orbital)", last + 1 - first);
        }
    }
}

/// Every orbital of every channel, for `--json`: `{"alpha": [{"orbital", "energy_hartree",
/// "occupation", "symmetry"}...], "beta": [...]}` (one list, "alpha", for a restricted wavefunction).
pub fn orbitals_json(wf: &Wavefunction) -> serde_json::Value {
    channels_json(&wavefunction_channels(wf))
}

/// A log's table of orbital energies for `--json`, as [`orbitals_json`] lists a wavefunction's.
pub fn levels_json(levels: &OrbitalLevels) -> serde_json::Value {
    channels_json(&level_channels(levels))
}

fn channels_json(chans: &[Channel]) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    for c in chans {
        let list: Vec<serde_json::Value> = (0..c.energies_hartree.len())
            .map(|i| {
                serde_json::json!({
                    "orbital": i + 1,
                    "energy_hartree": c.energies_hartree.get(i).copied().filter(|x| x.is_finite()),
                    "occupation": c.occupations.get(i).copied().filter(|x| x.is_finite()),
                    "symmetry": c.symmetries.get(i).cloned().unwrap_or_default(),
                })
            })
            .collect();
        obj.insert(
            if c.name.is_empty() {
                "alpha".into()
            } else {
                c.name.into()
            },
            list.into(),
        );
    }
    serde_json::Value::Object(obj)
}

/// The 1-based HOMO of the beta channel of an unrestricted wavefunction.
pub fn beta_homo(wf: &Wavefunction) -> Option<usize> {
    (wf.spin == SpinKind::Unrestricted)
        .then(|| wf.homo(Spin::Beta))
        .flatten()
        .map(|h| h + 1)
}

/// The molecule's charge from its wavefunction: the nuclei less the electrons, to the nearest
/// whole charge (a fractional occupation's sum is rounded).
pub fn wavefunction_charge_e(wf: &Wavefunction) -> f64 {
    let nuclei: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    let q = (nuclei - wf.n_electrons()).round();
    if q == 0.0 { 0.0 } else { q }
}

#[cfg(test)]
mod tests {
    use super::frontier_name;

    #[test]
    fn frontier_names_count_from_the_homo() {
        assert_eq!(frontier_name(4, Some(4)), "HOMO");
        assert_eq!(frontier_name(2, Some(4)), "HOMO-2");
        assert_eq!(frontier_name(5, Some(4)), "LUMO");
        assert_eq!(frontier_name(7, Some(4)), "LUMO+2");
        assert_eq!(frontier_name(7, None), "");
    }
}
