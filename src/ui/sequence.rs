//! The sequence panel under the 3-D view (PyMOL's sequence bar, ChimeraX's sequence viewer): each
//! polymer chain as one-letter codes, tinted by the secondary structure of the frame shown (helix
//! magenta, strand yellow, as the cartoon). A click picks a residue (its CA is highlighted and
//! described, as a click on it in the view), a shift-click extends the pick to a range, a double
//! click centres the view on it; the picked residues can then be shown as licorice, as a cartoon or
//! framed. Rows are painted, and only those in sight, so long sequences cost little.

use super::{send, tokens};
use crate::analysis::dssp::SecondaryStructure;
use crate::app::atoms::AtomStyle;
use crate::app::reps::RepSpec;
use crate::app::sequence::SequencePanel;
use crate::app::state::{AppState, Command};
use egui::{Color32, FontId, RichText, Sense};

/// Whether the panel is shown: a document with polymer residues (found now when the document is
/// new), not closed by the user.
pub fn wanted(state: &mut AppState) -> bool {
    if state.panels.sequence.hidden {
        return false;
    }
    let AppState { doc, panels, .. } = &mut *state;
    let Some(document) = doc.document.as_ref() else {
        return false;
    };
    panels.sequence.refresh(document.id, &document.structure);
    !panels.sequence.chains.is_empty()
}

/// The accessible name of the panel's close button (it shows "×").
pub const HIDE: &str = "Hide the sequence";

/// Width of the chain label and residue-number columns (points).
pub const LABEL_WIDTH: f32 = 64.0;
/// Rows shown before the panel scrolls.
const MAX_ROWS_SHOWN: f32 = 3.5;

/// The tint of a residue's secondary structure (none for coil and turns).
fn tint(ss: SecondaryStructure) -> Option<Color32> {
    use SecondaryStructure as S;
    match ss {
        S::AlphaHelix | S::Helix310 | S::PiHelix | S::Polyproline | S::Strand | S::Bridge => {
            let [r, g, b, _] = crate::analysis::polymer::secondary_structure_color(ss);
            Some(Color32::from_rgba_unmultiplied(r, g, b, 110))
        }
        _ => None,
    }
}

fn ss_name(ss: SecondaryStructure) -> &'static str {
    use SecondaryStructure as S;
    match ss {
        S::AlphaHelix => "alpha helix",
        S::Helix310 => "3-10 helix",
        S::PiHelix => "pi helix",
        S::Polyproline => "polyproline helix",
        S::Strand => "strand",
        S::Bridge => "bridge",
        S::Turn => "turn",
        S::Bend => "bend",
        _ => "coil",
    }
}

/// The panel: a header with the picked residues and their actions, then the sequence rows.
pub fn sequence_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let mut out: Vec<Command> = Vec::new();
    {
        // Disjoint borrows: the document is read while the panel's own state changes.
        let AppState { doc, panels, view, .. } = &mut *state;
        let Some(document) = doc.document.as_ref() else {
            return;
        };
        let seq = &mut panels.sequence;
        seq.refresh(document.id, &document.structure);
        seq.refresh_secondary(
            (document.id, document.frame_index),
            &document.frame.positions_angstrom,
            view.timeline.playing,
        );
        header_ui(ui, seq, &mut out);
        if !seq.chains.is_empty() {
            rows_ui(ui, seq, (&document.frame.positions_angstrom, &view.camera), &mut out);
        }
    }
    for c in out {
        send(state, c);
    }
}

/// The panel's first line: its name, then the picked residues and what can be done with them.
fn header_ui(ui: &mut egui::Ui, seq: &mut SequencePanel, out: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        let close = ui
            .small_button("×")
            .on_hover_text("Hide the sequence (View > Sequence shows it)");
        close.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, HIDE));
        if close.clicked() {
            seq.hidden = true;
        }
        ui.label(RichText::new("Sequence").strong());
        if seq.chains.is_empty() {
            ui.label(RichText::new("no protein or nucleic-acid residues").weak());
            return;
        }
        match seq.picked_selection() {
            None => {
                ui.label(
                    RichText::new("click a residue to pick it, shift-click for a range, double-click to centre on it")
                        .weak()
                        .small(),
                );
            }
            Some(sel) => {
                ui.label(RichText::new(&sel).monospace());
                if ui.small_button("Show as licorice").clicked() {
                    out.push(Command::AddRep(RepSpec::atoms(&sel, AtomStyle::Licorice)));
                }
                if ui.small_button("Cartoon").clicked() {
                    out.push(Command::AddRep(RepSpec::cartoon(
                        &sel,
                        crate::surface::cartoon::Style::Cartoon,
                    )));
                }
                if ui
                    .small_button("Frame")
                    .on_hover_text("Zoom the view to these residues")
                    .clicked()
                {
                    out.push(Command::FitToSelection(sel.clone()));
                }
                if ui.small_button("Clear").clicked() {
                    seq.picked = None;
                }
            }
        }
    });
}

/// One painted row: `count` residues of chain `chain` from `first`.
struct Row {
    chain: usize,
    first: usize,
    count: usize,
}

fn rows_ui(
    ui: &mut egui::Ui,
    seq: &mut SequencePanel,
    view: (&[[f32; 3]], &crate::render::camera::Camera),
    out: &mut Vec<Command>,
) {
    let font = FontId::monospace(12.0);
    let char_w = ui.fonts_mut(|f| f.glyph_width(&font, 'M')).max(4.0) + 1.0;
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace).max(14.0) + 2.0;
    let usable = (ui.available_width() - LABEL_WIDTH - 16.0).max(10.0 * char_w);
    // Whole blocks of ten residues per row, with a gap of half a character between blocks.
    let block_w = 10.0 * char_w + 0.5 * char_w;
    let per_row = ((usable / block_w).floor().max(1.0) as usize) * 10;
    let mut rows = Vec::new();
    for (c, chain) in seq.chains.iter().enumerate() {
        let mut first = 0;
        while first < chain.residues.len() {
            let count = per_row.min(chain.residues.len() - first);
            rows.push(Row { chain: c, first, count });
            first += count;
        }
    }
    let shown = (rows.len() as f32).min(MAX_ROWS_SHOWN);
    egui::ScrollArea::vertical()
        .id_salt("sequence_rows")
        .max_height(shown * row_h + 4.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_h, rows.len(), |ui, range| {
            for row in &rows[range] {
                row_ui(ui, seq, view, row, &font, char_w, row_h, out);
            }
        });
}

/// x offset of residue `k` (from the row's first) in a row, after the label columns; a row of `n`
/// residues is `LABEL_WIDTH + offset(n, w) + w` wide for characters `w` wide.
pub fn offset(k: usize, char_w: f32) -> f32 {
    k as f32 * char_w + (k / 10) as f32 * 0.5 * char_w
}

#[allow(clippy::too_many_arguments)]
fn row_ui(
    ui: &mut egui::Ui,
    seq: &mut SequencePanel,
    (positions, camera): (&[[f32; 3]], &crate::render::camera::Camera),
    row: &Row,
    font: &FontId,
    char_w: f32,
    row_h: f32,
    out: &mut Vec<Command>,
) {
    let width = LABEL_WIDTH + offset(row.count, char_w) + char_w;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(width, row_h), Sense::click());
    let Some(chain) = seq.chains.get(row.chain) else {
        return;
    };
    // Named for assistive technology (and tests): "Sequence 4AKE: 130 residues from 1".
    let name = format!(
        "Sequence {}: {} residues from {}",
        chain.label,
        row.count,
        chain.residues.get(row.first).map_or(0, |r| r.resid)
    );
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Group, true, &name));
    let painter = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    // A chain the file names (PDB chain, segment): its name; a file without chain names (PQR, GRO)
    // has none to show, and the residue numbers beside say where each piece starts.
    if row.first == 0 && !chain.label.is_empty() {
        painter.text(
            rect.left_center(),
            egui::Align2::LEFT_CENTER,
            &chain.label,
            font.clone(),
            text,
        );
    }
    if let Some(r) = chain.residues.get(row.first) {
        painter.text(
            egui::pos2(rect.left() + LABEL_WIDTH - 6.0, rect.center().y),
            egui::Align2::RIGHT_CENTER,
            r.resid.to_string(),
            FontId::monospace(10.0),
            weak,
        );
    }
    let secondary = seq.secondary.as_ref().map(|(_, ss)| ss);
    let picked = seq.picked.filter(|(c, _, _)| *c == row.chain);
    let x0 = rect.left() + LABEL_WIDTH;
    for k in 0..row.count {
        let i = row.first + k;
        let Some(r) = chain.residues.get(i) else { break };
        let cell = egui::Rect::from_min_size(
            egui::pos2(x0 + offset(k, char_w), rect.top() + 1.0),
            egui::vec2(char_w, row_h - 2.0),
        );
        let is_picked = picked.is_some_and(|(_, a, b)| (a..=b).contains(&i));
        let ss = r.protein_index.and_then(|p| secondary.and_then(|s| s.get(p)).copied());
        if is_picked {
            painter.rect_filled(cell, 2.0, tokens::SELECTED);
        } else if let Some(t) = ss.and_then(tint) {
            painter.rect_filled(cell, 0.0, t);
        }
        painter.text(
            cell.center(),
            egui::Align2::CENTER_CENTER,
            r.letter,
            font.clone(),
            if is_picked { Color32::BLACK } else { text },
        );
    }
    // Which residue the pointer is over.
    let at = |pos: egui::Pos2| -> Option<usize> {
        let x = pos.x - x0;
        if x < 0.0 {
            return None;
        }
        (0..row.count)
            .find(|&k| {
                let left = offset(k, char_w);
                x >= left && x < left + char_w
            })
            .map(|k| row.first + k)
    };
    if let Some(i) = response.hover_pos().and_then(at)
        && let Some(r) = chain.residues.get(i)
    {
        let ss = r
            .protein_index
            .and_then(|p| secondary.and_then(|s| s.get(p)).copied())
            .map(ss_name);
        let place = if chain.label.is_empty() {
            String::new()
        } else {
            format!(", chain {}", chain.label)
        };
        let what = match ss {
            Some(s) => format!("{} {}{place}: {s}", r.resname, r.resid),
            None => format!("{} {}{place}", r.resname, r.resid),
        };
        response.clone().on_hover_text_at_pointer(what);
    }
    if let Some(i) = response.interact_pointer_pos().and_then(at)
        && let Some(r) = chain.residues.get(i)
    {
        if response.double_clicked() {
            out.push(Command::PickAtom(Some(r.trace_atom as usize)));
            if let Some(q) = positions
                .get(r.trace_atom as usize)
                .filter(|q| q.iter().all(|x| x.is_finite()))
            {
                let mut spec = crate::app::session::CameraSpec::of(camera);
                spec.target_angstrom = *q;
                out.push(Command::SetCamera(spec));
            }
        } else if response.clicked() {
            let shift = ui.input(|inp| inp.modifiers.shift);
            seq.picked = match seq.picked {
                Some((c, a, b)) if shift && c == row.chain => Some((c, a.min(i), b.max(i))),
                _ => Some((row.chain, i, i)),
            };
            out.push(Command::PickAtom(Some(r.trace_atom as usize)));
        }
    }
}
