//! The application: window, state, commands, documents and settings.
