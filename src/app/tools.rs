//! The tools of the viewer beside the representations: measurements ([`super::measure`]), atom
//! labels ([`super::labels`]) and the undo history ([`super::history`]), kept together in
//! [`Tools`] on the `AppState`. They belong to the open document and are cleared when another
//! opens or it closes (`app::apply`).

/// Measurements, labels and the undo history of the open document.
#[derive(Clone, Debug, Default)]
pub struct Tools {
    pub measure: super::measure::Measurements,
    pub labels: super::labels::Labels,
    pub history: super::history::History,
}

impl Tools {
    /// Forgets everything that belonged to the document that was open.
    pub fn reset_for_document(&mut self) {
        let format = self.labels.format;
        *self = Tools::default();
        self.labels.format = format;
    }
}

impl super::state::AppState {
    /// Carries out the tool commands (called by `apply` for them).
    pub(crate) fn apply_tool(&mut self, c: super::state::Command) {
        use super::state::Command as C;
        match c {
            C::SetClickMode(mode) => self.set_click_mode(mode),
            C::AddMeasurement(atoms) => self.add_measurement(atoms),
            C::AddRmsdMeasurement {
                selection,
                reference,
                fit,
            } => self.add_rmsd_measurement(&selection, reference, fit),
            C::AddSelectionMeasurement { kind, selection } => self.add_selection_measurement(kind, &selection),
            C::DeleteMeasurement(id) => self.delete_measurement(id),
            C::ClearMeasurements => {
                let ids: Vec<u64> = self.tools.measure.list.iter().map(|m| m.id).collect();
                for id in ids {
                    self.delete_measurement(id);
                }
            }
            C::PlotMeasurement(id) => self.plot_measurement(id),
            C::ExportMeasurementCsv(id, path) => self.export_measurement_csv(id, &path),
            C::ToggleLabel(atom) if self.document().is_some_and(|d| atom < d.structure.len()) => {
                self.toggle_label(atom)
            }
            C::LabelSelection(text) => self.label_selection(&text),
            C::ClearLabels => self.tools.labels.atoms.clear(),
            C::SetLabelFormat(f) => self.tools.labels.format = f,
            C::Undo => self.undo(),
            C::Redo => self.redo(),
            // Closing the open entry is the recorder's (`apply_recorded`); nothing else to do.
            C::SettleHistory => {}
            C::PickAtom(atom) => self.pick_atom(atom),
            C::SetBackgroundColor(rgb) => {
                self.settings.background_rgb = Some(rgb);
                self.settings.dark_background = u32::from(rgb[0]) + u32::from(rgb[1]) + u32::from(rgb[2]) < 3 * 128;
                self.view.dirty.style = true;
            }
            _ => {}
        }
    }
}
