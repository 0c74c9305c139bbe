//! Planning the `color` statement: a representation's colouring (atoms and cartoons by a scheme,
//! surfaces by a field or with two lobe colours) and a field colouring's range in the legend's
//! unit, as the `app::state::Command`s the representation editor and the Field panel push.

use super::plan::{field_choice, problem};
use super::verbs::{Parsed, Problem, parse_color};
use crate::app::atoms::AtomColoring;
use crate::app::fields::FieldChoice;
use crate::app::reps::spec::cartoon_color_field;
use crate::app::reps::{RepEdit, RepId, RepKind};
use crate::app::state::{AppState, Command};

/// The commands of `color REP SCHEME [range LOW HIGH | range auto]` on representation `id`.
pub(super) fn color_edits(
    p: &Parsed,
    state: &AppState,
    id: RepId,
    kind: &RepKind,
    scheme: &str,
    col: usize,
) -> Result<Vec<Command>, Problem> {
    let _ = p;
    // Each word with its column.
    let words: Vec<(&str, usize)> = scheme
        .split_whitespace()
        .map(|w| (w, col + (w.as_ptr() as usize - scheme.as_ptr() as usize)))
        .collect();
    let first = words.first().map_or("", |w| w.0);
    let none = first.eq_ignore_ascii_case("none");
    // A field colouring's `range LOW HIGH` or `range auto` after its source; nothing else follows.
    let rest = words.get(1..).unwrap_or_default();
    let nothing_more = |rest: &[(&str, usize)], what: &str| match rest.first() {
        Some((w, c)) => Err(problem(*c, format!("unexpected '{w}' ({what})"))),
        None => Ok(()),
    };
    let field_coloring = |f: FieldChoice| -> Result<Vec<Command>, Problem> {
        let range = match rest {
            [] => None,
            [(r, _), (a, _)] if r.eq_ignore_ascii_case("range") && a.eq_ignore_ascii_case("auto") => None,
            [(r, _), (lo, c_lo), (hi, c_hi)] if r.eq_ignore_ascii_case("range") => {
                let number = |w: &str, c: usize| {
                    w.parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| problem(c, format!("range: expected a number, found '{w}'")))
                };
                let (lo, hi) = (number(lo, *c_lo)?, number(hi, *c_hi)?);
                if lo >= hi {
                    return Err(problem(
                        *c_lo,
                        format!("range {lo} {hi}: the low end must be below the high end"),
                    ));
                }
                // In the unit of the legend (a Poisson-Boltzmann map's under that model).
                let unit = state.coloring_unit(state.esp_source(f));
                Some([unit.computed(lo), unit.computed(hi)])
            }
            [(w, c), ..] if !w.eq_ignore_ascii_case("range") => {
                return Err(problem(
                    *c,
                    format!("unexpected '{w}' (expected `range LOW HIGH`, `range auto` or nothing more)"),
                ));
            }
            [(_, c), ..] => {
                return Err(problem(
                    *c,
                    "range: expected `range LOW HIGH` (in the legend's unit) or `range auto`".to_string(),
                ));
            }
        };
        Ok(vec![Command::EditRep(id, RepEdit::ColorBy(Some((f, range))))])
    };
    Ok(match kind {
        RepKind::Atoms(_) => {
            let c = AtomColoring::parse(first).ok_or_else(|| {
                problem(
                    col,
                    format!("color '{scheme}': atoms are coloured by element, residue, chain, charge, beta or a colour (a name, #rrggbb or r,g,b)"),
                )
            })?;
            nothing_more(rest, "expected nothing more")?;
            vec![Command::EditRep(id, RepEdit::AtomColoring(c))]
        }
        RepKind::Cartoon(_) => {
            if let Some(c) = crate::analysis::polymer::Coloring::parse(first) {
                nothing_more(rest, "expected nothing more")?;
                vec![Command::EditRep(id, RepEdit::CartoonColoring(c))]
            } else if none {
                nothing_more(rest, "expected nothing more")?;
                vec![Command::EditRep(id, RepEdit::ColorBy(None))]
            } else if let Some(f) = cartoon_color_field(first) {
                field_coloring(f)?
            } else {
                return Err(problem(
                    col,
                    format!(
                        "color '{scheme}': cartoons are coloured by ss, chain, residue, index (rainbow), beta, esp, volume:N or a colour (a name, #rrggbb or r,g,b)"
                    ),
                ));
            }
        }
        RepKind::Field(f) => {
            // A molecular surface by its atoms' scheme (a colour name stays the surface's colour).
            let atom_scheme = AtomColoring::parse(first)
                .filter(|c| !matches!(c, AtomColoring::Solid(_)) && matches!(f.field, FieldChoice::MolSurf { .. }));
            if none {
                nothing_more(rest, "expected nothing more")?;
                vec![Command::EditRep(id, RepEdit::ColorBy(None))]
            } else if let Some(c) = atom_scheme {
                nothing_more(rest, "expected nothing more")?;
                vec![Command::EditRep(id, RepEdit::AtomColoring(c))]
            } else if let Some(c) = parse_color(first) {
                let mut v = vec![Command::EditRep(
                    id,
                    RepEdit::Color {
                        lobe: 0,
                        rgb: c.map(|x| f32::from(x) / 255.0),
                    },
                )];
                if let Some((second, c_second)) = rest.first() {
                    let c2 = parse_color(second).ok_or_else(|| {
                        problem(*c_second, format!("color '{second}': a colour name, #rrggbb or r,g,b"))
                    })?;
                    nothing_more(&rest[1..], "a surface takes two colours")?;
                    v.push(Command::EditRep(
                        id,
                        RepEdit::Color {
                            lobe: 1,
                            rgb: c2.map(|x| f32::from(x) / 255.0),
                        },
                    ));
                }
                v
            } else {
                let word = if first.eq_ignore_ascii_case("esp")
                    && !state
                        .document()
                        .is_some_and(|d| d.has_field(FieldChoice::WavefunctionPotential))
                {
                    "potential"
                } else {
                    first
                };
                field_coloring(field_choice(word, col, state)?)?
            }
        }
    })
}
