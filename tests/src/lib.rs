//! Helpers for end-to-end tests of the real Patchbay window.
//!
//! [`webdriver`] is a small W3C WebDriver client; [`App`] starts
//! `tauri-driver` (which starts WebKitWebDriver, which starts the built app)
//! with a temporary data directory and hands back a live session;
//! [`RecordingOpener`] stands in for the browser and file manager.

pub mod app;
pub mod opener;
pub mod webdriver;

pub use app::{App, AppOptions, Spawned};
pub use opener::RecordingOpener;
pub use webdriver::Session;
