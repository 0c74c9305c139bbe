//! egui panels; functions taking `&mut egui::Ui` are named `*_ui`.
