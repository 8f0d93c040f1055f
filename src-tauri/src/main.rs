//! Patchbay desktop entry point.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    patchbay_desktop_lib::run();
}
