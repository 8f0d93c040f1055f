//! The benchmark floor: an empty Tauri 2 window showing a blank page.
//!
//! It is what Patchbay would cost with no UI and no core. With
//! `PATCHBAY_STARTUP_PROBE=1` it behaves like the app's start-up probe: once
//! the page has loaded, the page invokes `app_info` over IPC, and the first
//! answer prints `patchbay-startup-probe answered_unix_ns=<N>` on stderr.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::sync::Once;
use std::time::{SystemTime, UNIX_EPOCH};

use tauri::webview::PageLoadEvent;

static FIRST_ANSWER: Once = Once::new();

fn probing() -> bool {
    std::env::var_os("PATCHBAY_STARTUP_PROBE").is_some_and(|v| v == "1")
}

/// The floor's only command: a small answer, as `app_info` would give.
#[tauri::command]
fn app_info() -> &'static str {
    if probing() {
        FIRST_ANSWER.call_once(|| {
            let ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            eprintln!("patchbay-startup-probe answered_unix_ns={ns}");
        });
    }
    env!("CARGO_PKG_VERSION")
}

fn main() {
    let result = tauri::Builder::default()
        .on_page_load(|webview, payload| {
            if probing() && payload.event() == PageLoadEvent::Finished && !FIRST_ANSWER.is_completed() {
                let _ = webview.eval("window.__TAURI_INTERNALS__.invoke('app_info')");
            }
        })
        .invoke_handler(tauri::generate_handler![app_info])
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("error: the empty window could not start: {e}");
        std::process::exit(1);
    }
}
