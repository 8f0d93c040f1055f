//! Helpers for end-to-end tests of the real Patchbay window.
//!
//! [`webdriver`] is a small W3C WebDriver client; [`App`] starts
//! `tauri-driver` (which starts WebKitWebDriver, which starts the built app)
//! with a temporary data directory and hands back a live session.

pub mod app;
pub mod webdriver;

pub use app::{App, AppOptions, Spawned};
pub use webdriver::Session;
